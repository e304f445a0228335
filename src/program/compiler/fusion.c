/*
 * Fusion: chains of element-wise instructions run as one pass over memory.
 *
 * A group is a graph of instructions under a root: the root is an
 * element-wise instruction (add .. convert, or a table entry with a tile
 * function: compare, select, clamp, the math family); its members are the
 * operands, recursively, that are element-wise themselves, broadcasts of a
 * value outside the group, or reshapes of a member, of the root's element
 * count and read by members only (one or several: a threefry round reads
 * each sum three times). XLA's own fusion computations arrive here inlined
 * by the parser, so this one rule covers them and the chains of lowered
 * modules alike.
 *
 * The group becomes one step that runs its members in program order a tile
 * of a few hundred to a thousand elements at a time, each member's tile in
 * a small buffer on the stack (slots, reused once their last reader has
 * run), the root's straight into its result; large arrays are split
 * across the thread pool. Each member runs the same loop its own step
 * would, on a piece of the arrays: the results are bit for bit the
 * unfused ones.
 */
#include <stdlib.h>

#include "internal/common.h"
#include "program/compiler/compile_internal.h"
#include "program/instr/instr.h"
#include "kernels/split.h"

/* Groups stop growing at this many members, so that the slots fit the
 * stack budget below with tiles of 16 or more elements. */
#define KC__FUSION_MAX_MEMBERS 64
/* Bytes of slots a tile may use (on the stack of whoever runs it). */
#define KC__FUSION_STACK 32768
#define KC__FUSION_TILE 1024

enum { KC__FK_NONE, KC__FK_COMPUTE, KC__FK_BROADCAST, KC__FK_RESHAPE };

/* Where an operand or result of a fused op is, while planning. */
enum {
  KC__FR_SLOT = 1, /* tile buffer `index` */
  KC__FR_EXT,      /* external array `index`, at the tile's offset */
  KC__FR_SCALAR,   /* external array `index`, element 0 (select, clamp) */
  KC__FR_OUT       /* the result, at the tile's offset */
};

typedef struct kc__fusion_ref {
  int32_t kind;
  int32_t index;
  size_t esize;
} kc__fusion_ref;

/* Where an operand or result of a fused op is, at run time: for the tile
 * that starts at element b, base[at.base] + at.offset + b * at.step, where
 * base[0] is the slots, base[1 + e] external array e and base[1 +
 * num_ext] the result (kc__fusion_range). A slot's step is 0 and its
 * offset its place among the slots, an array's step its element size, a
 * scalar's step 0: one sum for every kind, with no branch to mispredict
 * from one op to the next. */
typedef struct kc__fusion_at {
  uint32_t base;
  uint32_t offset;
  size_t step;
} kc__fusion_at;

enum {
  KC__FOP_LOOP = 1, /* the member's typed loop (kc__instr_def.tile_loop) */
  KC__FOP_TILE,     /* its tile */
  KC__FOP_BROADCAST
};

/* A broadcast's result dims and, for each, the operand's stride (0 for a
 * broadcast dimension): rank entries each. */
typedef struct kc__fusion_bcast {
  int32_t rank;
  size_t esize;
  int64_t src_count;
  int64_t* dims;
  int64_t* stride;
} kc__fusion_bcast;

/* An op of a group: what a tile runs, kept small (about 100 bytes) since
 * a tile walks every op of its group, and a loop body's groups run again
 * on every iteration. An op of fewer than 3 operands has the rest at
 * base 0 (never read). */
typedef struct kc__fusion_op {
  int32_t kind;
  kc__instr_loop_fn loop;
  kc__instr_tile_fn tile;
  const void* data;
  kc__fusion_at args[3];
  kc__fusion_at result;
  double (*tile_cost)(const void* data);
  const kc__fusion_bcast* bcast; /* KC__FOP_BROADCAST */
} kc__fusion_op;

/* External arrays a group reads, at most: 3 operands a member. */
#define KC__FUSION_MAX_EXT (3 * (KC__FUSION_MAX_MEMBERS + 1))

typedef struct kc__fusion {
  kc__fusion_op* ops;
  int32_t num_ops;
  int32_t num_slots;
  int32_t num_ext;
  size_t slot_bytes; /* tile * the largest element */
  int64_t tile;
  int64_t count; /* elements of the root */
  double cost; /* nanoseconds an element, all ops */
} kc__fusion;

/* ---- finding the groups ------------------------------------------------------ */

bool kc__fusion_enabled(void) {
  const char* v = getenv("KCALL_FUSION");
  return !(v && v[0] == '0' && v[1] == '\0');
}

static bool kc__fusion_dtype(const kc_shape* s) {
  return !s->is_tuple && s->dtype.lanes == 1 && s->dtype.bits > 0 && s->dtype.bits % 8 == 0;
}

static int kc__fusion_kind(const kc_program* p, int32_t id) {
  const kc__instr* in = &p->instrs[id];
  if (!kc__fusion_dtype(in->shape)) return KC__FK_NONE;
  int64_t n = kc__shape_elements(in->shape);
  bool same = true; /* every operand of the result's element count */
  for (size_t i = 0; i < in->num_operands; ++i) {
    const kc_shape* o = p->instrs[in->operands[i]].shape;
    if (!kc__fusion_dtype(o)) return KC__FK_NONE;
    int64_t k = kc__shape_elements(o);
    /* A scalar operand of select and clamp is read at [0]. */
    bool scalar = k == 1 && (in->op == KC_OP_SELECT || in->op == KC_OP_CLAMP);
    same = same && (k == n || scalar);
  }
  switch (in->def->kind) {
    case KC__INSTR_ELEMENTWISE:
    case KC__INSTR_KERNEL:
      return in->def->tile && same ? KC__FK_COMPUTE : KC__FK_NONE;
    case KC__INSTR_BROADCAST:
      return KC__FK_BROADCAST;
    case KC__INSTR_RESHAPE:
      return KC__FK_RESHAPE;
    default:
      return KC__FK_NONE;
  }
}

/* The member whose tile holds `id`'s value: through reshapes. */
static int32_t kc__fusion_value(const kc_program* p, int32_t id) {
  while (p->instrs[id].def->kind == KC__INSTR_RESHAPE) id = p->instrs[id].operands[0];
  return id;
}

typedef struct kc__grouping {
  const kc_program* p;
  int32_t* group_of;
  const int32_t* users;
  int32_t* member_users; /* per instruction: its users in the group being built */
  /* Operands of members: [0, num_open) not yet decided, then the decided
   * ones up to num_cand. At most 3 a member (KC__FUSION_MAX_EXT). */
  int32_t* cand;
  int32_t num_open, num_cand;
  int32_t* list; /* members of the group being built */
  int32_t num;
} kc__grouping;

/* Whether `id`, read only by members, may join a group of `n` elements. */
static bool kc__fusion_joins(const kc__grouping* g, int32_t id, int64_t n) {
  const kc_program* p = g->p;
  if (g->num >= KC__FUSION_MAX_MEMBERS || g->group_of[id] >= 0) return false;
  if (g->member_users[id] != g->users[id]) return false;
  if (kc__shape_elements(p->instrs[id].shape) != n) return false;
  return kc__fusion_kind(p, id) != KC__FK_NONE;
}

/* `id` joins the group of `root`; its operands (but a broadcast's, which
 * is read as it is) become candidates. */
static void kc__fusion_absorb(kc__grouping* g, int32_t id, int32_t root) {
  const kc_program* p = g->p;
  g->group_of[id] = root;
  g->list[g->num++] = id;
  if (kc__fusion_kind(p, id) == KC__FK_BROADCAST) return;
  const kc__instr* in = &p->instrs[id];
  for (size_t i = 0; i < in->num_operands; ++i) {
    int32_t o = in->operands[i];
    bool seen = false;
    for (size_t j = 0; j < i && !seen; ++j) seen = in->operands[j] == o;
    if (seen) continue; /* read twice by one user */
    if (g->member_users[o]++ > 0) continue;
    /* Open candidates first: the first decided one moves to the end. */
    if (g->num_open < g->num_cand) g->cand[g->num_cand] = g->cand[g->num_open];
    g->num_cand++;
    g->cand[g->num_open++] = o;
  }
}

/* The group of `root`, `n` elements: its operands join, then theirs, and
 * so on, while every user of the one that would join is a member. They
 * are decided from the last in program order down, so that when one is,
 * all its users (which come after it) have been. A member may so be read
 * by several members (a value used twice in a chain): its tile is kept
 * until its last reader has run. */
static void kc__fusion_grow(kc__grouping* g, int32_t root, int64_t n) {
  g->num = 0;
  g->num_open = g->num_cand = 0;
  kc__fusion_absorb(g, root, root);
  while (g->num_open > 0) {
    int32_t best = 0;
    for (int32_t k = 1; k < g->num_open; ++k) {
      if (g->cand[k] > g->cand[best]) best = k;
    }
    int32_t id = g->cand[best];
    g->cand[best] = g->cand[--g->num_open];
    g->cand[g->num_open] = id;
    if (kc__fusion_joins(g, id, n)) kc__fusion_absorb(g, id, root);
  }
  /* A reshape stays only over a member: what a member reshapes must have
   * its tile in the group. One over an operand that did not join leaves
   * (its users in the group read it as an external array). */
  int32_t kept = 0;
  for (int32_t k = 0; k < g->num; ++k) {
    int32_t id = g->list[k];
    if (kc__fusion_kind(g->p, id) == KC__FK_RESHAPE &&
        g->group_of[kc__fusion_value(g->p, id)] != root) {
      g->group_of[id] = -1;
    } else {
      g->list[kept++] = id;
    }
  }
  g->num = kept;
  /* Every candidate's count back to zero for the next group. */
  for (int32_t k = 0; k < g->num_cand; ++k) g->member_users[g->cand[k]] = 0;
}

static int kc__int32_order(const void* a, const void* b) {
  int32_t x = *(const int32_t*)a, y = *(const int32_t*)b;
  return (x > y) - (x < y);
}

kc_status* kc__fusion_find(kc__compiler* c) {
  const kc_program* p = c->p;
  kc_executable* exe = c->exe;
  c->group_of = kc__malloc((p->count + 1) * sizeof *c->group_of);
  c->group_first = kc__malloc((p->count + 1) * sizeof *c->group_first);
  c->group_members = kc__malloc((p->count + 1) * sizeof *c->group_members);
  int32_t* users = kc__calloc(2 * (p->count + 1), sizeof *users);
  if (!c->group_of || !c->group_first || !c->group_members || !users) {
    kc__free(users);
    return kc__oom();
  }
  int32_t cand[KC__FUSION_MAX_EXT];
  for (size_t i = 0; i < p->count; ++i) c->group_of[i] = -1;
  /* Distinct users among the live instructions; the root's value is read
   * by the caller. */
  for (size_t k = 0; k < exe->num_live; ++k) {
    const kc__instr* in = &p->instrs[exe->live_instr[k]];
    for (size_t i = 0; i < in->num_operands; ++i) {
      bool seen = false;
      for (size_t j = 0; j < i && !seen; ++j) seen = in->operands[j] == in->operands[i];
      if (!seen) ++users[in->operands[i]];
    }
  }
  users[p->root] += 2;
  kc__grouping g = {.p = p,
                    .group_of = c->group_of,
                    .users = users,
                    .member_users = users + p->count + 1,
                    .cand = cand};
  size_t used = 0;
  /* Users before operands: an instruction joins its user's group. */
  for (size_t k = exe->num_live; k-- > 0;) {
    int32_t id = exe->live_instr[k];
    if (c->group_of[id] >= 0 || kc__fusion_kind(p, id) != KC__FK_COMPUTE) continue;
    int64_t n = kc__shape_elements(p->instrs[id].shape);
    if (n == 0) continue;
    g.list = c->group_members + used;
    kc__fusion_grow(&g, id, n);
    if (g.num < 2) {
      c->group_of[id] = -1;
      continue;
    }
    qsort(g.list, (size_t)g.num, sizeof *g.list, kc__int32_order);
    c->group_first[id] = (int32_t)used;
    used += (size_t)g.num;
  }
  kc__free(users);
  return NULL;
}

/* ---- planning a group ---------------------------------------------------------- */

/* Where `r` is at run time (kc__fusion_at). */
static kc__fusion_at kc__fusion_at_of(const kc__fusion* f, const kc__fusion_ref* r) {
  kc__fusion_at at = {0, 0, 0};
  switch (r->kind) {
    case KC__FR_SLOT:
      at.offset = (uint32_t)((size_t)r->index * f->slot_bytes);
      break;
    case KC__FR_EXT:
      at.base = 1 + (uint32_t)r->index;
      at.step = r->esize;
      break;
    case KC__FR_SCALAR:
      at.base = 1 + (uint32_t)r->index;
      break;
    default: /* KC__FR_OUT */
      at.base = 1 + (uint32_t)f->num_ext;
      at.step = r->esize;
      break;
  }
  return at;
}

static double kc__fusion_op_cost(const kc__fusion_op* o) {
  if (o->kind != KC__FOP_BROADCAST && o->tile_cost) return o->tile_cost(o->data);
  return o->kind == KC__FOP_BROADCAST ? 0.25 : 1.0;
}

kc_status* kc__plan_fusion(kc__compiler* c, int32_t root, int32_t pos) {
  const kc_program* p = c->p;
  kc_executable* exe = c->exe;
  const int32_t* members = c->group_members + c->group_first[root];
  int32_t num = 0;
  while (members[num] != root) ++num;
  ++num; /* the root is the last, in program order */
  int64_t n = kc__shape_elements(p->instrs[root].shape);
  KC_RETURN_IF_ERROR(kc__temp_leaves(c, root, pos));
  kc__fusion* f = kc__arena_alloc(&exe->arena, sizeof *f);
  kc__fusion_op* ops = kc__arena_alloc(&exe->arena, (size_t)num * sizeof *ops);
  /* Per member (by position in `members`): its op, reads left of its tile
   * and slot. External operands: their instructions, in table order. */
  int32_t op_of[KC__FUSION_MAX_MEMBERS + 1];
  int32_t reads[KC__FUSION_MAX_MEMBERS + 1];
  int32_t ext[KC__FUSION_MAX_EXT];
  int32_t slot_readers[KC__FUSION_MAX_MEMBERS + 1];
  /* Per op: where its operands (0..2) and its result (3) are. */
  kc__fusion_ref refs[KC__FUSION_MAX_MEMBERS + 1][4];
  int32_t nargs[KC__FUSION_MAX_MEMBERS + 1];
  int32_t num_ext = 0, num_ops = 0, num_slots = 0;
  if (!f || !ops) return kc__oom();
  size_t max_es = 1;
  for (int32_t m = 0; m < num; ++m) {
    op_of[m] = -1;
    reads[m] = 0;
  }
  /* The position of a member, or -1. */
#define KC__MEMBER_POS(id, out)                                      \
  do {                                                               \
    (out) = -1;                                                      \
    for (int32_t q_ = 0; q_ < num; ++q_) {                           \
      if (members[q_] == (id)) (out) = q_;                           \
    }                                                                \
  } while (0)
  /* Reads of each member's tile. */
  for (int32_t m = 0; m < num; ++m) {
    const kc__instr* in = &p->instrs[members[m]];
    int kind = kc__fusion_kind(p, members[m]);
    if (kind != KC__FK_COMPUTE) continue;
    for (size_t i = 0; i < in->num_operands; ++i) {
      int32_t direct, at = -1;
      KC__MEMBER_POS(in->operands[i], direct);
      if (direct >= 0) KC__MEMBER_POS(kc__fusion_value(p, in->operands[i]), at);
      if (at >= 0) ++reads[at];
    }
  }
  for (int32_t m = 0; m < num; ++m) {
    int32_t id = members[m];
    const kc__instr* in = &p->instrs[id];
    int kind = kc__fusion_kind(p, id);
    if (kind == KC__FK_RESHAPE) continue;
    kc__fusion_op* o = &ops[num_ops];
    kc__fusion_ref* op_refs = refs[num_ops];
    size_t es = kc_dtype_get_size(in->shape->dtype);
    if (es > max_es) max_es = es;
    op_refs[3].esize = es;
    nargs[num_ops] = (int32_t)in->num_operands;
    for (size_t i = 0; i < in->num_operands; ++i) {
      int32_t x = in->operands[i];
      const kc_shape* xs = p->instrs[x].shape;
      kc__fusion_ref* r = &op_refs[i];
      r->esize = kc_dtype_get_size(xs->dtype);
      int32_t at = -1;
      if (kind == KC__FK_COMPUTE) {
        int32_t direct;
        KC__MEMBER_POS(x, direct);
        if (direct >= 0) KC__MEMBER_POS(kc__fusion_value(p, x), at);
      }
      if (at >= 0) {
        r->kind = KC__FR_SLOT;
        r->index = op_of[at]; /* resolved to a slot below */
        continue;
      }
      int32_t e = 0;
      while (e < num_ext && ext[e] != x) ++e;
      if (e == num_ext) ext[num_ext++] = x;
      r->kind = kind == KC__FK_COMPUTE && kc__shape_elements(xs) == n ? KC__FR_EXT : KC__FR_SCALAR;
      r->index = e;
    }
    if (kind == KC__FK_BROADCAST) {
      const kc_shape* src = p->instrs[in->operands[0]].shape;
      int32_t rank = in->shape->rank;
      kc__fusion_bcast* bc = kc__arena_alloc(&exe->arena, sizeof *bc);
      int64_t* dims = kc__arena_alloc(&exe->arena, 2 * (size_t)rank * sizeof *dims + 1);
      if (!bc || !dims) return kc__oom();
      o->kind = KC__FOP_BROADCAST;
      bc->rank = rank;
      bc->esize = es;
      bc->dims = dims;
      bc->stride = dims + rank;
      /* The arena's memory is zeroed: a broadcast dimension's stride is 0. */
      for (int32_t d = 0; d < rank; ++d) bc->dims[d] = in->shape->dims[d];
      int64_t running = 1;
      for (int32_t d = src->rank - 1; d >= 0; --d) {
        bc->stride[in->dims[d]] = running;
        running *= src->dims[d];
      }
      bc->src_count = running;
      o->bcast = bc;
    } else {
      o->kind = KC__FOP_TILE;
      o->tile = in->def->tile;
      o->tile_cost = in->def->tile_cost;
      if (in->def->prepare) {
        kc__prepare_ctx ctx = {.arena = &exe->arena, .platform = exe->platform,
                               .pool = exe->pool, .exe = exe};
        KC_RETURN_IF_ERROR(in->def->prepare(p, in, &ctx, &o->data));
      }
      if (in->def->tile_loop) o->loop = in->def->tile_loop(o->data);
      if (o->loop) o->kind = KC__FOP_LOOP;
    }
    op_of[m] = num_ops++;
  }
  /* Slots: the result's taken before the operands' are given back, so an
   * op never writes over what it reads (a widening convert could). */
  int32_t slot_of_op[KC__FUSION_MAX_MEMBERS + 1];
  int32_t reads_of_op[KC__FUSION_MAX_MEMBERS + 1];
  for (int32_t m = 0; m < num; ++m) {
    if (op_of[m] >= 0) reads_of_op[op_of[m]] = reads[m];
  }
  for (int32_t k = 0; k < num_ops; ++k) {
    kc__fusion_ref* op_refs = refs[k];
    if (k == num_ops - 1) {
      op_refs[3].kind = KC__FR_OUT;
    } else {
      int32_t s = 0;
      while (s < num_slots && slot_readers[s] > 0) ++s;
      if (s == num_slots) ++num_slots;
      slot_readers[s] = reads_of_op[k];
      slot_of_op[k] = s;
      op_refs[3].kind = KC__FR_SLOT;
      op_refs[3].index = s;
    }
    for (int32_t i = 0; i < nargs[k]; ++i) {
      if (op_refs[i].kind != KC__FR_SLOT) continue;
      int32_t s = slot_of_op[op_refs[i].index];
      op_refs[i].index = s;
      --slot_readers[s];
    }
  }
#undef KC__MEMBER_POS
  /* Tiles as long as the stack budget allows. */
  int64_t tile = KC__FUSION_TILE;
  while (tile > 16 && (size_t)num_slots * (size_t)tile * max_es > KC__FUSION_STACK) tile /= 2;
  f->ops = ops;
  f->num_ops = num_ops;
  f->num_slots = num_slots;
  f->num_ext = num_ext;
  f->tile = tile;
  f->slot_bytes = (size_t)tile * max_es;
  f->count = n;
  for (int32_t k = 0; k < num_ops; ++k) {
    for (int32_t i = 0; i < nargs[k]; ++i) ops[k].args[i] = kc__fusion_at_of(f, &refs[k][i]);
    ops[k].result = kc__fusion_at_of(f, &refs[k][3]);
  }
  f->cost = 0;
  for (int32_t k = 0; k < num_ops; ++k) f->cost += kc__fusion_op_cost(&ops[k]);
  /* The step: the external arrays' addresses and the result's in the
   * block, filled as a kernel's are. */
  kc__step* s = kc__new_step(c, KC__STEP_FUSION, kc__step_fusion, root);
  if (!s) return kc__oom();
  s->data = f;
  size_t ins = kc__block_reserve(c, ((size_t)num_ext + 1) * sizeof(void*));
  size_t out = kc__block_reserve(c, sizeof(void*));
  if (ins == SIZE_MAX || out == SIZE_MAX) return kc__oom();
  s = &c->steps[c->num_steps - 1];
  s->ins_offset = ins;
  s->out_offset = out;
  for (int32_t e = 0; e < num_ext; ++e) {
    int32_t b = kc__leaves_of(c, ext[e])[0];
    if (!kc__add_fill(c, ins + (size_t)e * sizeof(void*), b, 0)) return kc__oom();
    if (c->bufs[b].last < pos) c->bufs[b].last = pos;
  }
  if (!kc__add_fill(c, out, kc__leaves_of(c, root)[0], 0)) return kc__oom();
  /* Members have no buffers of their own. */
  for (int32_t m = 0; m + 1 < num; ++m) c->leaf_buf[c->leaf_base[members[m]]] = -1;
  return NULL;
}

/* ---- running ------------------------------------------------------------------- */

static void kc__fusion_fill(char* dst, const char* src, int64_t m, size_t es) {
  switch (es) {
#define KC__FILL(T)                                     \
  {                                                     \
    T v;                                                \
    memcpy(&v, src, sizeof v);                          \
    T* d = (T*)(void*)dst;                              \
    for (int64_t i = 0; i < m; ++i) d[i] = v;           \
    return;                                             \
  }
    case 1: memset(dst, (unsigned char)src[0], (size_t)m); return;
    case 2: KC__FILL(uint16_t)
    case 4: KC__FILL(uint32_t)
    case 8: KC__FILL(uint64_t)
#undef KC__FILL
    default:
      for (int64_t i = 0; i < m; ++i) memcpy(dst + (size_t)i * es, src, es);
      return;
  }
}

/* Elements [begin, begin + m) of a broadcast, row-major, in runs of the
 * innermost dimension. Broadcast dimensions increase (verify.c), so the
 * innermost one is the operand's innermost (stride 1) or a new one (0). */
static void kc__fusion_broadcast(const kc__fusion_op* o, const char* src, char* dst,
                                 int64_t begin, int64_t m) {
  const kc__fusion_bcast* bc = o->bcast;
  size_t es = bc->esize;
  if (bc->src_count == 1 || bc->rank == 0) {
    kc__fusion_fill(dst, src, m, es);
    return;
  }
  int32_t r = bc->rank;
  int64_t idx[KC_TENSOR_MAX_NDIM];
  int64_t at = 0, rem = begin;
  for (int32_t d = r - 1; d >= 0; --d) {
    idx[d] = rem % bc->dims[d];
    rem /= bc->dims[d];
    at += idx[d] * bc->stride[d];
  }
  int64_t inner = bc->dims[r - 1], step = bc->stride[r - 1];
  while (m > 0) {
    int64_t len = inner - idx[r - 1];
    if (len > m) len = m;
    if (step) {
      memcpy(dst, src + (size_t)at * es, (size_t)len * es);
    } else {
      kc__fusion_fill(dst, src + (size_t)at * es, len, es);
    }
    dst += (size_t)len * es;
    m -= len;
    idx[r - 1] += len;
    at += len * step;
    if (idx[r - 1] < inner) break; /* m is 0 */
    at -= inner * step;
    idx[r - 1] = 0;
    for (int32_t d = r - 2; d >= 0; --d) {
      at += bc->stride[d];
      if (++idx[d] < bc->dims[d]) break;
      at -= bc->stride[d] * bc->dims[d];
      idx[d] = 0;
    }
  }
}

typedef struct kc__fusion_job {
  const kc__fusion* f;
  const char* const* ext;
  char* out;
} kc__fusion_job;

static void kc__fusion_range(void* p, int64_t begin, int64_t end) {
  const kc__fusion_job* job = p;
  const kc__fusion* f = job->f;
  _Alignas(64) char slots[KC__FUSION_STACK];
  char* base[KC__FUSION_MAX_EXT + 2];
  base[0] = slots;
  for (int32_t e = 0; e < f->num_ext; ++e) base[1 + e] = (char*)(uintptr_t)job->ext[e];
  base[1 + f->num_ext] = job->out;
  const kc__fusion_op* ops_end = f->ops + f->num_ops;
  for (int64_t b = begin; b < end; b += f->tile) {
    int64_t m = end - b < f->tile ? end - b : f->tile;
    size_t at = (size_t)b;
    for (const kc__fusion_op* o = f->ops; o < ops_end; ++o) {
      const void* args[3];
      for (int32_t i = 0; i < 3; ++i) {
        args[i] = base[o->args[i].base] + o->args[i].offset + at * o->args[i].step;
      }
      char* res = base[o->result.base] + o->result.offset + at * o->result.step;
      if (KC__LIKELY(o->kind == KC__FOP_LOOP)) {
        o->loop(args[0], args[1], res, m);
      } else if (o->kind == KC__FOP_TILE) {
        o->tile(o->data, res, args, m);
      } else {
        kc__fusion_broadcast(o, args[0], res, b, m);
      }
    }
  }
}

kc_status* kc__step_fusion(const kc__step* s, kc__run* run) {
  const kc__fusion* f = s->data;
  kc__fusion_job job;
  job.f = f;
  job.ext = (const char* const*)(const void*)(run->block + s->ins_offset);
  memcpy(&job.out, run->block + s->out_offset, sizeof job.out);
  kc__split_run(run->exe->pool, f->count, f->cost, kc__fusion_range, &job);
  return NULL;
}
