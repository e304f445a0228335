/* Buffers of a compiled program: liveness, a buffer per value leaf, alias
 * merging, the outputs and inputs, and the arena that temporaries share by
 * liveness. */
#include <stdlib.h>

#include "internal/grow.h"
#include "program/compiler/compile_internal.h"

/* Arena offsets and sizes are kept multiples of this. */
#define KC__ALIGN 64

/* ---- liveness and buffers --------------------------------------------------- */

kc_status* kc__mark_live(kc__compiler* c, bool* live) {
  const kc_program* p = c->p;
  live[p->root] = true;
  for (size_t i = 0; i < p->count; ++i) {
    if (p->instrs[i].op == KC__OP_CUSTOM_CALL && p->instrs[i].has_side_effect) {
      live[i] = true;
    }
  }
  for (size_t i = p->count; i-- > 0;) {
    if (!live[i]) continue;
    for (size_t j = 0; j < p->instrs[i].num_operands; ++j) {
      int32_t o = p->instrs[i].operands[j];
      if ((size_t)o >= i) {
        return kc__instr_error(&p->instrs[i], KC_INVALID_ARGUMENT,
                               "operand %zu is defined after its use", j);
      }
      live[o] = true;
    }
  }
  return NULL;
}

/* A fresh TEMP buffer for each leaf of `in`'s result, defined at `pos`. */
kc_status* kc__temp_leaves(kc__compiler* c, int32_t id, int32_t pos) {
  const kc__instr* in = &c->p->instrs[id];
  size_t n = 0;
  const kc_shape** shapes = kc__malloc(in->shape->leaf_count * sizeof *shapes + 1);
  if (!shapes) return kc__oom();
  kc__shape_leaves(in->shape, shapes, &n);
  for (size_t i = 0; i < n; ++i) {
    int32_t b = kc__new_buffer(c, KC__BUF_TEMP, shapes[i]->byte_size, pos, shapes[i]);
    if (b < 0) {
      kc__free(shapes);
      return kc__oom();
    }
    c->leaf_buf[c->leaf_base[id] + i] = b;
  }
  kc__free(shapes);
  return NULL;
}

/* Records copy-ins for the call's aliases (made in place later where the
 * operand dies at the call). */
kc_status* kc__plan_aliases(kc__compiler* c, int32_t id, int32_t pos) {
  const kc__instr* in = &c->p->instrs[id];
  for (size_t i = 0; i < in->num_aliases; ++i) {
    const kc__alias* a = &in->aliases[i];
    size_t out_leaf = 0, src_leaf = 0;
    kc__subshape(in->shape, a->output_index, a->output_index_size, &out_leaf);
    int32_t operand = in->operands[a->operand];
    kc__subshape(c->p->instrs[operand].shape, a->operand_index,
                 a->operand_index_size, &src_leaf);
    int32_t from = kc__leaves_of(c, operand)[src_leaf];
    int32_t to = kc__leaves_of(c, id)[out_leaf];
    kc__step* s = kc__new_step(c, KC__STEP_COPY, kc__step_copy, id);
    if (!s || !KC__GROW(c->aliases, c->cap_aliases, c->num_aliases + 1)) {
      return kc__oom();
    }
    s->in[0] = from;
    s->out = to;
    s->bytes = c->bufs[to].size;
    c->aliases[c->num_aliases++] = (struct kc__alias_plan){
        .pos = pos, .from = from, .to = to, .copy_step = c->num_steps - 1};
  }
  return NULL;
}

/* Extends last uses: every operand read at `pos`. */
void kc__note_uses(kc__compiler* c, int32_t id, int32_t pos) {
  const kc__instr* in = &c->p->instrs[id];
  for (size_t i = 0; i < in->num_operands; ++i) {
    int32_t o = in->operands[i];
    const int32_t* leaves = kc__leaves_of(c, o);
    for (size_t k = 0; k < c->p->instrs[o].shape->leaf_count; ++k) {
      kc__buffer* b = &c->bufs[leaves[k]];
      if (b->last < pos) b->last = pos;
    }
  }
}

/* Replaces buffer `from` by `to` in every leaf and step. */
static void kc__merge_buffer(kc__compiler* c, int32_t from, int32_t to) {
  for (size_t i = 0; i < c->num_leaves; ++i) {
    if (c->leaf_buf[i] == from) c->leaf_buf[i] = to;
  }
  for (size_t i = 0; i < c->num_fills; ++i) {
    if (c->fills[i].buffer == from) c->fills[i].buffer = to;
  }
  for (size_t i = 0; i < c->num_table_fills; ++i) {
    if (c->table_fills[i].buffer == from) c->table_fills[i].buffer = to;
  }
  for (size_t i = 0; i < c->num_steps; ++i) {
    kc__step* s = &c->steps[i];
    if (s->in[0] == from) s->in[0] = to;
    if (s->in[1] == from) s->in[1] = to;
    if (s->in[2] == from) s->in[2] = to;
    if (s->out == from) s->out = to;
  }
  kc__buffer* a = &c->bufs[from];
  kc__buffer* b = &c->bufs[to];
  if (a->last > b->last) b->last = a->last;
  a->kind = 0; /* unused from now on */
}

/* Makes aliases in place where the operand's buffer is a temporary that
 * nothing reads after the call; the copy-in steps of those become no-ops. */
void kc__merge_aliases(kc__compiler* c) {
  for (size_t i = 0; i < c->num_aliases; ++i) {
    struct kc__alias_plan* a = &c->aliases[i];
    kc__buffer* from = &c->bufs[a->from];
    if (from->kind == KC__BUF_TEMP && from->last == a->pos &&
        c->bufs[a->to].kind == KC__BUF_TEMP) {
      c->steps[a->copy_step].run = NULL; /* dropped below */
      kc__merge_buffer(c, a->to, a->from);
    }
  }
  size_t n = 0;
  for (size_t i = 0; i < c->num_steps; ++i) {
    if (c->steps[i].run) c->steps[n++] = c->steps[i];
  }
  c->num_steps = n;
}

/* Root leaves become outputs: a temporary computed by the program is
 * written straight into its output tensor; anything else is copied. */
kc_status* kc__plan_outputs(kc__compiler* c, int32_t end) {
  kc_executable* exe = c->exe;
  const kc__instr* root = &c->p->instrs[c->p->root];
  size_t n = root->shape->leaf_count;
  exe->num_outputs = n;
  exe->output_shapes = kc__calloc(n + 1, sizeof *exe->output_shapes);
  exe->output_buffers = kc__calloc(n + 1, sizeof *exe->output_buffers);
  if (!exe->output_shapes || !exe->output_buffers) return kc__oom();
  size_t k = 0;
  kc__shape_leaves(root->shape, exe->output_shapes, &k);
  const int32_t* leaves = kc__leaves_of(c, c->p->root);
  for (size_t i = 0; i < n; ++i) {
    int32_t b = leaves[i];
    if (c->bufs[b].kind == KC__BUF_TEMP) {
      c->bufs[b].kind = KC__BUF_OUTPUT;
      c->bufs[b].index = (int32_t)i;
      exe->output_buffers[i] = b;
      continue;
    }
    int32_t o = kc__new_buffer(c, KC__BUF_OUTPUT, c->bufs[b].size, end, exe->output_shapes[i]);
    kc__step* s = o < 0 ? NULL : kc__new_step(c, KC__STEP_COPY, kc__step_copy, -1);
    if (!s) return kc__oom();
    c->bufs[o].index = (int32_t)i;
    s->in[0] = b;
    s->out = o;
    s->bytes = c->bufs[b].size;
    if (c->bufs[b].last < end) c->bufs[b].last = end;
    exe->output_buffers[i] = o;
  }
  for (size_t i = 0; i < n; ++i) exe->output_bytes += c->bufs[exe->output_buffers[i]].size;
  return NULL;
}

/* ---- arena planning --------------------------------------------------------- */

typedef struct kc__arena_hole {
  size_t offset, size;
} kc__arena_hole;

static int kc__buffer_by_def(const void* a, const void* b, void* ctx) {
  const kc__buffer* bufs = ctx;
  const kc__buffer* x = &bufs[*(const int32_t*)a];
  const kc__buffer* y = &bufs[*(const int32_t*)b];
  if (x->def != y->def) return x->def < y->def ? -1 : 1;
  return (*(const int32_t*)a > *(const int32_t*)b) - (*(const int32_t*)a < *(const int32_t*)b);
}

/* The aligned arena bytes of buffer `b` (at least KC__ALIGN). */
static size_t kc__arena_size(const kc__buffer* b) {
  size_t size = (b->size + KC__ALIGN - 1) & ~(size_t)(KC__ALIGN - 1);
  return size == 0 ? KC__ALIGN : size;
}

/* Returns [off, off + size) to the holes (sorted by offset), merging it
 * with its neighbours. */
static void kc__arena_free_range(kc__arena_hole* holes, size_t* num_holes_io, size_t off,
                                 size_t size) {
  size_t num_holes = *num_holes_io;
  size_t h = 0;
  while (h < num_holes && holes[h].offset < off) ++h;
  memmove(&holes[h + 1], &holes[h], (num_holes - h) * sizeof *holes);
  holes[h].offset = off;
  holes[h].size = size;
  num_holes++;
  if (h + 1 < num_holes && holes[h].offset + holes[h].size == holes[h + 1].offset) {
    holes[h].size += holes[h + 1].size;
    memmove(&holes[h + 1], &holes[h + 2], (num_holes - h - 2) * sizeof *holes);
    num_holes--;
  }
  if (h > 0 && holes[h - 1].offset + holes[h - 1].size == holes[h].offset) {
    holes[h - 1].size += holes[h].size;
    memmove(&holes[h], &holes[h + 1], (num_holes - h - 1) * sizeof *holes);
    num_holes--;
  }
  *num_holes_io = num_holes;
}

/* Gives each temporary an arena offset; buffers whose live ranges do not
 * overlap share memory. Best fit over free holes, else the arena grows. */
kc_status* kc__plan_arena(kc__compiler* c) {
  size_t n = 0;
  int32_t* order = kc__malloc((c->num_bufs + 1) * sizeof *order);
  kc__arena_hole* holes = kc__malloc((c->num_bufs + 1) * sizeof *holes);
  int32_t* active = kc__malloc((c->num_bufs + 1) * sizeof *active);
  if (!order || !holes || !active) {
    kc__free(order);
    kc__free(holes);
    kc__free(active);
    return kc__oom();
  }
  /* The temporaries in order of definition. */
  for (size_t i = 0; i < c->num_bufs; ++i) {
    int32_t k = c->bufs[i].kind;
    if (k == KC__BUF_TEMP || k == KC__BUF_SCRATCH) order[n++] = (int32_t)i;
  }
  qsort_r(order, n, sizeof *order, kc__buffer_by_def, c->bufs);
  size_t num_holes = 0, num_active = 0, end = 0, unshared = 0;
  for (size_t i = 0; i < n; ++i) {
    kc__buffer* b = &c->bufs[order[i]];
    /* Free what died before this definition, merging neighbouring holes. */
    for (size_t a = 0; a < num_active;) {
      kc__buffer* d = &c->bufs[active[a]];
      if (d->last >= b->def) {
        ++a;
        continue;
      }
      kc__arena_free_range(holes, &num_holes, d->offset, kc__arena_size(d));
      active[a] = active[--num_active];
    }
    /* Then the best-fitting hole, the last hole extended, or the end. */
    size_t size = kc__arena_size(b);
    unshared += size;
    size_t best = SIZE_MAX;
    for (size_t h = 0; h < num_holes; ++h) {
      if (holes[h].size >= size && (best == SIZE_MAX || holes[h].size < holes[best].size)) {
        best = h;
      }
    }
    if (best != SIZE_MAX) {
      b->offset = holes[best].offset;
      holes[best].offset += size;
      holes[best].size -= size;
      if (holes[best].size == 0) {
        memmove(&holes[best], &holes[best + 1], (num_holes - best - 1) * sizeof *holes);
        num_holes--;
      }
    } else if (num_holes && holes[num_holes - 1].offset + holes[num_holes - 1].size == end) {
      /* Extend the last hole when it touches the end of the arena. */
      b->offset = holes[num_holes - 1].offset;
      end = b->offset + size;
      num_holes--;
    } else {
      b->offset = end;
      end += size;
    }
    active[num_active++] = order[i];
  }
  c->exe->arena_bytes = end;
  c->exe->arena_unshared = unshared;
  kc__free(order);
  kc__free(holes);
  kc__free(active);
  return NULL;
}

/* ---- inputs ------------------------------------------------------------------ */

kc_status* kc__plan_inputs(kc__compiler* c) {
  kc_executable* exe = c->exe;
  const kc_program* p = c->p;
  size_t n = 0;
  for (size_t k = 0; k < p->num_params; ++k) n += p->instrs[p->params[k]].shape->leaf_count;
  exe->num_inputs = n;
  exe->input_shapes = kc__calloc(n + 1, sizeof *exe->input_shapes);
  if (!exe->input_shapes) return kc__oom();
  size_t m = 0;
  for (size_t k = 0; k < p->num_params; ++k) {
    kc__shape_leaves(p->instrs[p->params[k]].shape, exe->input_shapes, &m);
  }
  return NULL;
}
