/*
 * Compiling a program: verify every instruction once, drop dead ones, give
 * every array value a buffer, plan temporaries by liveness into one arena,
 * and lay out the per-run block (pointer tables for tuples, typed frames).
 */
#include <stdio.h>
#include <stdlib.h>

#include "internal/common.h"
#include "program/elementwise.h"
#include "kcall/runtime.h"
#include "program/executable_internal.h"
#include "program/ops.h"
#include "runtime/device_internal.h"
#include "xcall/xla_ffi_internal.h"

/* Arena offsets and sizes are kept multiples of this. */
#define KC__ALIGN 64

typedef struct kc__compiler {
  const kc_program* p;
  kc_executable* exe;
  int32_t* pos_of;    /* plan position of each instruction; -1 when dead */
  size_t* leaf_base;  /* first leaf of each instruction */
  int32_t* leaf_buf;  /* buffer of each leaf */
  size_t num_leaves;
  kc__buffer* bufs;
  size_t num_bufs, cap_bufs;
  kc__step* steps;
  size_t num_steps, cap_steps;
  char* block;        /* the run-block template, growing */
  size_t block_size, block_cap;
  kc__fill* fills;    /* targets fed from buffers or block offsets */
  size_t num_fills, cap_fills;
  /* CUDA: device pointer tables, filled from buffers (offsets in the
   * tables area). */
  kc__fill* table_fills;
  size_t num_table_fills, cap_table_fills;
  size_t tables_size;
  /* Output-operand aliases that may become in-place: the call's position,
   * the operand's buffer, the result's buffer and the copy step. */
  struct kc__alias_plan {
    int32_t pos;
    int32_t from;
    int32_t to;
    size_t copy_step;
  }* aliases;
  size_t num_aliases, cap_aliases;
} kc__compiler;

/* ---- small growable arrays ------------------------------------------------ */

static bool kc__grow(void** items, size_t* cap, size_t need, size_t size) {
  if (need <= *cap) return true;
  size_t n = *cap ? *cap * 2 : 16;
  while (n < need) n *= 2;
  void* grown = realloc(*items, n * size);
  if (!grown) return false;
  memset((char*)grown + *cap * size, 0, (n - *cap) * size);
  *items = grown;
  *cap = n;
  return true;
}

static kc_status* kc__oom(void) {
  return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory compiling");
}

static int32_t kc__new_buffer(kc__compiler* c, int32_t kind, size_t size,
                              int32_t def, const kc_shape* shape) {
  if (!kc__grow((void**)&c->bufs, &c->cap_bufs, c->num_bufs + 1, sizeof *c->bufs)) {
    return -1;
  }
  kc__buffer* b = &c->bufs[c->num_bufs];
  b->kind = kind;
  b->index = -1;
  b->size = size;
  b->def = def;
  b->last = def;
  b->shape = shape;
  return (int32_t)c->num_bufs++;
}

static kc__step* kc__new_step(kc__compiler* c, int32_t kind, kc__step_fn fn,
                              int32_t instr) {
  if (!kc__grow((void**)&c->steps, &c->cap_steps, c->num_steps + 1, sizeof *c->steps)) {
    return NULL;
  }
  kc__step* s = &c->steps[c->num_steps++];
  memset(s, 0, sizeof *s);
  s->kind = kind;
  s->run = fn;
  s->instr = instr;
  s->in[0] = s->in[1] = s->in[2] = s->out = -1;
  return s;
}

/* Reserves `size` bytes of the run block (zeroed, 16-aligned); returns
 * its offset, or SIZE_MAX when out of memory. */
static size_t kc__reserve(kc__compiler* c, size_t size) {
  size_t off = (c->block_size + 15) & ~(size_t)15;
  if (!kc__grow((void**)&c->block, &c->block_cap, off + size + 1, 1)) return SIZE_MAX;
  c->block_size = off + size;
  return off;
}

static bool kc__add_fill(kc__compiler* c, size_t target, int32_t buffer,
                         size_t block_offset) {
  if (!kc__grow((void**)&c->fills, &c->cap_fills, c->num_fills + 1, sizeof *c->fills)) {
    return false;
  }
  c->fills[c->num_fills].target = target;
  c->fills[c->num_fills].buffer = buffer;
  c->fills[c->num_fills].block_offset = block_offset;
  c->num_fills++;
  return true;
}

/* ---- messages -------------------------------------------------------------- */

static kc_status* kc__bad(const kc__instr* in, kc_status_code code,
                          const char* fmt, ...) KC_PRINTF(3, 4);
static kc_status* kc__bad(const kc__instr* in, kc_status_code code,
                          const char* fmt, ...) {
  char where[320];
  kc__instr_where(in, where, sizeof where);
  va_list args;
  va_start(args, fmt);
  kc_status* st = kc_status_create_v(code, fmt, args);
  va_end(args);
  return kc_status_add_context(st, "%s", where);
}

#define KC__SHAPE_TEXT(var, shape) \
  char var[256];                   \
  kc_shape_format((shape), var, sizeof var)

/* ---- verification ------------------------------------------------------------ */

static const kc_shape* kc__operand_shape(const kc_program* p,
                                         const kc__instr* in, size_t i) {
  return p->instrs[in->operands[i]].shape;
}

static kc_status* kc__expect_array(const kc_program* p, const kc__instr* in,
                                   size_t i, const kc_shape* want) {
  const kc_shape* got = kc__operand_shape(p, in, i);
  if (kc_shape_equal(got, want)) return NULL;
  KC__SHAPE_TEXT(w, want);
  KC__SHAPE_TEXT(g, got);
  return kc__bad(in, KC_INVALID_ARGUMENT, "operand %zu: expected %s, got %s", i, w, g);
}

static kc_status* kc__verify_elementwise(const kc_program* p, const kc__instr* in) {
  const kc_shape* r = in->shape;
  if (kc_shape_is_tuple(r)) {
    return kc__bad(in, KC_INVALID_ARGUMENT, "expected an array result, got a tuple");
  }
  for (size_t i = 0; i < in->num_operands; ++i) {
    const kc_shape* o = kc__operand_shape(p, in, i);
    if (kc_shape_is_tuple(o)) {
      return kc__bad(in, KC_INVALID_ARGUMENT, "operand %zu: expected an array, got a tuple", i);
    }
    if (in->op == KC_OP_RESHAPE) {
      int64_t n = 1;
      for (int32_t d = 0; d < o->rank; ++d) n *= o->dims[d];
      int64_t m = 1;
      for (int32_t d = 0; d < r->rank; ++d) m *= r->dims[d];
      if (n != m || !kc_dtype_equal(o->dtype, r->dtype)) {
        KC__SHAPE_TEXT(g, o);
        KC__SHAPE_TEXT(w, r);
        return kc__bad(in, KC_INVALID_ARGUMENT,
                       "reshape of %s to %s: expected the same dtype and "
                       "element count",
                       g, w);
      }
      return NULL;
    }
    if (in->op == KC_OP_CONVERT) {
      if (o->rank != r->rank ||
          (r->rank && memcmp(o->dims, r->dims, (size_t)r->rank * sizeof(int64_t)))) {
        KC__SHAPE_TEXT(g, o);
        KC__SHAPE_TEXT(w, r);
        return kc__bad(in, KC_INVALID_ARGUMENT,
                       "operand 0: expected the dims of %s, got %s", w, g);
      }
    } else {
      KC__TRY(kc__expect_array(p, in, i, r));
    }
  }
  DLDataType from = kc__operand_shape(p, in, 0)->dtype;
  if (!kc__elementwise_supported(in->op, from, r->dtype)) {
    char a[32], b[32];
    kc_dtype_format(from, a, sizeof a);
    kc_dtype_format(r->dtype, b, sizeof b);
    return kc__bad(in, KC_UNIMPLEMENTED,
                   "%s is not implemented for %s -> %s (supported: the float, "
                   "complex and integer types; exponential and log: float and complex; "
                   "maximum and minimum: not complex; convert: not complex to real)",
                   kc__op_name(in->op), a, b);
  }
  return NULL;
}

static kc_status* kc__verify_broadcast(const kc_program* p, const kc__instr* in) {
  const kc_shape* o = kc__operand_shape(p, in, 0);
  const kc_shape* r = in->shape;
  if (kc_shape_is_tuple(o) || kc_shape_is_tuple(r) ||
      !kc_dtype_equal(o->dtype, r->dtype) || (size_t)o->rank != in->num_dims) {
    KC__SHAPE_TEXT(g, o);
    KC__SHAPE_TEXT(w, r);
    return kc__bad(in, KC_INVALID_ARGUMENT,
                   "broadcast of %s to %s with %zu dimensions: expected "
                   "arrays of one dtype and one dimension per operand dim",
                   g, w, in->num_dims);
  }
  for (size_t i = 0; i < in->num_dims; ++i) {
    int64_t d = in->dims[i];
    if (d < 0 || d >= r->rank || (i > 0 && d <= in->dims[i - 1]) ||
        r->dims[d] != o->dims[i]) {
      return kc__bad(in, KC_INVALID_ARGUMENT,
                     "dimensions[%zu] = %lld: expected an increasing result "
                     "dimension whose size equals operand dimension %zu",
                     i, (long long)d, i);
    }
  }
  return NULL;
}

/* The sub-shape at `path` of `shape`, or NULL. */
static const kc_shape* kc__subshape(const kc_shape* shape, const int64_t* path,
                                    size_t n, size_t* out_leaf_offset) {
  size_t leaf = 0;
  for (size_t i = 0; i < n && shape; ++i) {
    if (!kc_shape_is_tuple(shape) || path[i] < 0 ||
        (size_t)path[i] >= shape->count) {
      return NULL;
    }
    for (int64_t j = 0; j < path[i]; ++j) leaf += shape->elements[j]->leaf_count;
    shape = shape->elements[path[i]];
  }
  *out_leaf_offset = leaf;
  return shape;
}

static kc_status* kc__verify_aliases(const kc_program* p, const kc__instr* in) {
  for (size_t i = 0; i < in->num_aliases; ++i) {
    const kc__alias* a = &in->aliases[i];
    size_t unused;
    const kc_shape* out = kc__subshape(in->shape, a->output_index,
                                       a->output_index_size, &unused);
    if (a->operand < 0 || (size_t)a->operand >= in->num_operands) {
      return kc__bad(in, KC_INVALID_ARGUMENT,
                     "output_to_operand_aliasing %zu: operand %d: expected "
                     "0 to %zu",
                     i, a->operand, in->num_operands - 1);
    }
    const kc_shape* src = kc__subshape(kc__operand_shape(p, in, (size_t)a->operand),
                                       a->operand_index, a->operand_index_size, &unused);
    if (!out || !src || kc_shape_is_tuple(out) || !kc_shape_equal(out, src)) {
      return kc__bad(in, KC_INVALID_ARGUMENT,
                     "output_to_operand_aliasing %zu: expected an output index "
                     "and an operand index naming arrays of the same shape",
                     i);
    }
    for (size_t j = 0; j < i; ++j) {
      const kc__alias* b = &in->aliases[j];
      if (b->output_index_size == a->output_index_size &&
          !memcmp(b->output_index, a->output_index,
                  a->output_index_size * sizeof(int64_t))) {
        return kc__bad(in, KC_INVALID_ARGUMENT,
                       "output_to_operand_aliasing %zu: that output is "
                       "already aliased by entry %zu",
                       i, j);
      }
    }
  }
  return NULL;
}

static kc_status* kc__check_leaves(const kc__instr* in, const char* what,
                                   const kc_shape* const* leaves, size_t n,
                                   const kc_xcall_buffer_spec* specs,
                                   int32_t num_specs) {
  if ((size_t)num_specs != n) {
    return kc__bad(in, KC_INVALID_ARGUMENT,
                   "custom call %s: expected %d %s buffer%s, got %zu",
                   KC__QS(in->target), num_specs, what, num_specs == 1 ? "" : "s", n);
  }
  for (size_t i = 0; i < n; ++i) {
    if (!kc__xcall_buffer_spec_accepts(&specs[i], leaves[i]->dtype, leaves[i]->rank)) {
      char want[64];
      kc__xcall_buffer_spec_describe(&specs[i], kc__hlo_dtype_name(specs[i].dtype), want,
                                     sizeof want);
      KC__SHAPE_TEXT(got, leaves[i]);
      return kc__bad(in, KC_INVALID_ARGUMENT, "custom call %s: %s %zu: expected %s, got %s",
                     KC__QS(in->target), what, i, want, got);
    }
  }
  return NULL;
}

/* "f32", or "array of f64" for an array with a known element type. */
static const char* kc__attr_type_text(int32_t type, int32_t elem, char* buf,
                                      size_t cap) {
  if (type != KC_ATTR_ARRAY || !elem) return kc_attr_type_name(type);
  snprintf(buf, cap, "array of %s", kc_attr_type_name(elem));
  return buf;
}

/* Orders the instruction's attributes as the signature declares them, into
 * `out` (num_attrs entries). */
static kc_status* kc__match_attrs(const kc__instr* in,
                                  const kc_xcall_signature* sig, kc_attr* out) {
  for (int32_t i = 0; i < sig->num_attrs; ++i) {
    const kc_xcall_attr_spec* spec = &sig->attrs[i];
    const kc_attr* a = kc_attr_dict_lookup(&in->attrs, kc_sv(spec->name));
    if (!a && sig->attr_defaults && sig->attr_defaults[i].type) a = &sig->attr_defaults[i];
    char want[48], got[48];
    if (!a || a->type != spec->type ||
        (spec->type == KC_ATTR_ARRAY && spec->elem_type && a->elem_type != spec->elem_type)) {
      return kc__bad(in, KC_INVALID_ARGUMENT,
                     "custom call %s: attribute %s: expected %s, got %s",
                     KC__QS(in->target), KC__QS(spec->name),
                     kc__attr_type_text(spec->type, spec->elem_type, want, sizeof want),
                     a ? kc__attr_type_text(a->type, a->elem_type, got, sizeof got)
                       : "none");
    }
    out[i] = *a;
  }
  return NULL;
}

static int kc__attr_by_name(const void* pa, const void* pb) {
  const kc_attr* a = pa;
  const kc_attr* b = pb;
  size_t n = a->name.size < b->name.size ? a->name.size : b->name.size;
  int cmp = n ? memcmp(a->name.data, b->name.data, n) : 0;
  if (cmp) return cmp;
  return (a->name.size > b->name.size) - (a->name.size < b->name.size);
}

/* Every attribute of `dict`, sorted by name (bytewise), nested
 * dictionaries too, into the arena: what an open signature receives. */
static kc_attr* kc__sorted_attrs(kc__arena* arena, const kc_attr_dict* dict) {
  kc_attr* out = kc__arena_alloc(arena, (dict->count + 1) * sizeof *out);
  if (!out) return NULL;
  if (dict->count) memcpy(out, dict->entries, dict->count * sizeof *out);
  qsort(out, dict->count, sizeof *out, kc__attr_by_name);
  for (size_t i = 0; i < dict->count; ++i) {
    if (out[i].type != KC_ATTR_DICT) continue;
    kc_attr* nested = kc__sorted_attrs(arena, &out[i].v.dict);
    if (!nested) return NULL;
    out[i].v.dict.entries = nested;
  }
  return out;
}

/* The executable's reference to target `t` (retained by the caller, and
 * handed over): one per distinct target. False when out of memory (the
 * reference is dropped). */
static bool kc__hold_target(kc_executable* exe, kc__xcall_target* t) {
  for (size_t i = 0; i < exe->num_targets; ++i) {
    if (exe->targets[i] == KC_OBJECT(t)) {
      kc_object_release(KC_OBJECT(t));
      return true;
    }
  }
  kc_object** grown = realloc(exe->targets, (exe->num_targets + 1) * sizeof *grown);
  if (!grown) {
    kc_object_release(KC_OBJECT(t));
    return false;
  }
  exe->targets = grown;
  exe->targets[exe->num_targets++] = KC_OBJECT(t);
  return true;
}

/* Finds and checks the target of a custom call; on success the executable
 * holds it, so *out_target lives as long as the executable. */
static kc_status* kc__verify_custom_call(const kc_program* p, const kc__instr* in,
                                         kc_executable* exe,
                                         const kc__xcall_target** out_target) {
  kc_platform platform = exe->platform;
  kc__xcall_target* t = kc__xcall_get(kc_sv(in->target), platform);
  if (!t) {
    return kc_status_add_context(kc__xcall_not_found(kc_sv(in->target), platform),
                                 "custom call %s (instruction %s)",
                                 KC__QS(in->target), KC__QS(in->name));
  }
  if (!kc__hold_target(exe, t)) return kc__oom();
  if (!t->graph_safe) exe->graph_capable = false;
  if ((int32_t)t->api != in->api_version) {
    return kc__bad(in, KC_FAILED_PRECONDITION,
                   "custom call %s: the program calls it with API %s, but "
                   "it is registered for %s on %s",
                   KC__QS(in->target), kc_xcall_api_name((kc_xcall_api)in->api_version),
                   kc_xcall_api_name(t->api), kc_platform_name(platform));
  }
  if (t->api != KC_XCALL_API_TYPED && in->attrs.count) {
    return kc__bad(in, KC_INVALID_ARGUMENT,
                   "custom call %s: typed attributes need API TYPED", KC__QS(in->target));
  }
  KC__TRY(kc__verify_aliases(p, in));
  *out_target = t;
  return NULL;
}

/* An instruction of the op table: its operand and computation counts and
 * attribute names, then its own checks. */
static kc_status* kc__verify_op(const kc_program* p, const kc__instr* in,
                                const kc__op_def* def) {
  size_t n = in->num_operands;
  if (n < (size_t)def->min_operands ||
      (def->max_operands >= 0 && n > (size_t)def->max_operands)) {
    char want[48];
    if (def->max_operands == def->min_operands) {
      snprintf(want, sizeof want, "%d", def->min_operands);
    } else if (def->max_operands < 0) {
      snprintf(want, sizeof want, "at least %d", def->min_operands);
    } else {
      snprintf(want, sizeof want, "%d to %d", def->min_operands, def->max_operands);
    }
    return kc__bad(in, KC_INVALID_ARGUMENT, "%s: expected %s operands, got %zu", def->name,
                   want, n);
  }
  size_t k = in->num_computations;
  if (def->num_computations >= 0 ? k != (size_t)def->num_computations : k == 0) {
    return kc__bad(in, KC_INVALID_ARGUMENT, "%s: expected %s%d called computation%s, got %zu",
                   def->name, def->num_computations < 0 ? "at least " : "",
                   def->num_computations < 0 ? 1 : def->num_computations,
                   def->num_computations == 1 || def->num_computations < 0 ? "" : "s", k);
  }
  for (size_t i = 0; i < in->attrs.count; ++i) {
    kc_string_view name = in->attrs.entries[i].name;
    bool known = false;
    for (const char* const* a = def->attrs; *a && !known; ++a) known = kc_sv_equal(name, kc_sv(*a));
    if (!known) {
      return kc__bad(in, KC_INVALID_ARGUMENT, "%s: attribute %s is not one it reads",
                     def->name, KC__Q(name));
    }
  }
  return def->verify(p, in);
}

static kc_status* kc__verify(const kc_program* p, const kc__instr* in) {
  switch (in->op) {
    case KC__OP_PARAMETER:
    case KC__OP_CONSTANT:
    case KC__OP_TUPLE:
    case KC__OP_GET_TUPLE_ELEMENT:
    case KC__OP_CUSTOM_CALL:
      return NULL; /* shapes are made consistent by the builder */
    case KC__OP_BROADCAST:
      return kc__verify_broadcast(p, in);
    default: {
      const kc__op_def* def = kc__op_def_find(in->op);
      return def ? kc__verify_op(p, in, def) : kc__verify_elementwise(p, in);
    }
  }
}

/* ---- liveness and buffers --------------------------------------------------- */

static kc_status* kc__mark_live(kc__compiler* c, bool* live) {
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
        return kc__bad(&p->instrs[i], KC_INVALID_ARGUMENT,
                       "operand %zu is defined after its use", j);
      }
      live[o] = true;
    }
  }
  return NULL;
}

static const int32_t* kc__leaves_of(const kc__compiler* c, int32_t instr) {
  return &c->leaf_buf[c->leaf_base[instr]];
}

/* A fresh TEMP buffer for each leaf of `in`'s result, defined at `pos`. */
static kc_status* kc__temp_leaves(kc__compiler* c, int32_t id, int32_t pos) {
  const kc__instr* in = &c->p->instrs[id];
  size_t n = 0;
  const kc_shape** shapes = malloc(in->shape->leaf_count * sizeof *shapes + 1);
  if (!shapes) return kc__oom();
  kc__shape_leaves(in->shape, shapes, &n);
  for (size_t i = 0; i < n; ++i) {
    int32_t b = kc__new_buffer(c, KC__BUF_TEMP, shapes[i]->byte_size, pos, shapes[i]);
    if (b < 0) {
      free(shapes);
      return kc__oom();
    }
    c->leaf_buf[c->leaf_base[id] + i] = b;
  }
  free(shapes);
  return NULL;
}

/* Pointer table for a tuple value whose leaves are `leaves`: reserves
 * shape->count pointers in the block, nested tables for nested tuples,
 * and fills for leaf addresses. Returns the table's block offset. */
static size_t kc__table(kc__compiler* c, const kc_shape* s, const int32_t* leaves) {
  size_t table = kc__reserve(c, s->count * sizeof(void*));
  if (table == SIZE_MAX) return SIZE_MAX;
  size_t leaf = 0;
  for (size_t i = 0; i < s->count; ++i) {
    const kc_shape* e = s->elements[i];
    size_t target = table + i * sizeof(void*);
    bool ok;
    if (e->is_tuple) {
      size_t sub = kc__table(c, e, leaves + leaf);
      ok = sub != SIZE_MAX && kc__add_fill(c, target, -1, sub);
    } else {
      ok = kc__add_fill(c, target, leaves[leaf], 0);
    }
    if (!ok) return SIZE_MAX;
    leaf += e->leaf_count;
  }
  return table;
}

/* Fills the pointer at block offset `target` with the address of a value
 * of shape `s` held in `leaves`: its buffer for an array, its table for a
 * tuple. */
static bool kc__point_at_leaves(kc__compiler* c, size_t target, const kc_shape* s,
                                const int32_t* leaves) {
  if (!s->is_tuple) return kc__add_fill(c, target, leaves[0], 0);
  size_t table = kc__table(c, s, leaves);
  return table != SIZE_MAX && kc__add_fill(c, target, -1, table);
}

static bool kc__point_at(kc__compiler* c, size_t target, int32_t id) {
  return kc__point_at_leaves(c, target, c->p->instrs[id].shape, kc__leaves_of(c, id));
}

/* The leaves a call sees for operand `i`, in `leaves`: the operand's, but
 * where a result aliases one of them the result's buffer, into which it
 * was copied. As in XLA, operand and result are then one buffer for the
 * handler, whatever the operand is (a parameter, a constant, a value
 * read later). */
static void kc__call_operand_leaves(kc__compiler* c, int32_t id, size_t i, int32_t* leaves) {
  const kc__instr* in = &c->p->instrs[id];
  int32_t o = in->operands[i];
  memcpy(leaves, kc__leaves_of(c, o), c->p->instrs[o].shape->leaf_count * sizeof *leaves);
  for (size_t k = 0; k < in->num_aliases; ++k) {
    const kc__alias* a = &in->aliases[k];
    if ((size_t)a->operand != i) continue;
    size_t out_leaf = 0, src_leaf = 0;
    kc__subshape(in->shape, a->output_index, a->output_index_size, &out_leaf);
    kc__subshape(c->p->instrs[o].shape, a->operand_index, a->operand_index_size, &src_leaf);
    leaves[src_leaf] = kc__leaves_of(c, id)[out_leaf];
  }
}

/* Records copy-ins for the call's aliases (made in place later where the
 * operand dies at the call). */
static kc_status* kc__plan_aliases(kc__compiler* c, int32_t id, int32_t pos) {
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
    if (!s || !kc__grow((void**)&c->aliases, &c->cap_aliases, c->num_aliases + 1,
                        sizeof *c->aliases)) {
      return kc__oom();
    }
    s->in[0] = from;
    s->out = to;
    s->bytes = c->bufs[to].size;
    c->aliases[c->num_aliases].pos = pos;
    c->aliases[c->num_aliases].from = from;
    c->aliases[c->num_aliases].to = to;
    c->aliases[c->num_aliases].copy_step = c->num_steps - 1;
    c->num_aliases++;
  }
  return NULL;
}

static kc_status* kc__plan_legacy_call(kc__compiler* c, int32_t id,
                                       const kc__xcall_target* t) {
  const kc__instr* in = &c->p->instrs[id];
  kc__step* s = kc__new_step(c, KC__STEP_LEGACY_CALL, kc__step_legacy_call, id);
  if (!s) return kc__oom();
  s->target = t;
  s->fn = t->fn;
  s->api = (int32_t)t->api;
  s->opaque = in->opaque;
  s->opaque_size = in->opaque_size;
  /* The result slot, then the operand table: the run loop finds both
   * from one offset (kc__hot_step). */
  size_t out = kc__reserve(c, (in->num_operands + 2) * sizeof(void*));
  if (out == SIZE_MAX) return kc__oom();
  size_t ins = out + sizeof(void*);
  c->steps[c->num_steps - 1].ins_offset = ins;
  c->steps[c->num_steps - 1].out_offset = out;
  for (size_t i = 0; i < in->num_operands; ++i) {
    const kc_shape* shape = c->p->instrs[in->operands[i]].shape;
    int32_t* leaves = malloc((shape->leaf_count + 1) * sizeof *leaves);
    if (!leaves) return kc__oom();
    kc__call_operand_leaves(c, id, i, leaves);
    bool ok = kc__point_at_leaves(c, ins + i * sizeof(void*), shape, leaves);
    free(leaves);
    if (!ok) return kc__oom();
  }
  if (!kc__point_at(c, out, id)) return kc__oom();
  return NULL;
}

/* Hands per-instance state to the executable, which deletes it when it is
 * destroyed. When that fails (out of memory), the state is deleted now and
 * false is returned. */
static bool kc__own_state(kc_executable* exe, void* state, void (*deleter)(void*)) {
  struct kc__state* grown = realloc(exe->states, (exe->num_states + 1) * sizeof *grown);
  if (!grown) {
    deleter(state);
    return false;
  }
  exe->states = grown;
  exe->states[exe->num_states].state = state;
  exe->states[exe->num_states].deleter = deleter;
  exe->num_states++;
  return true;
}

/* The leaves a call sees: its operands' (flattened in pre-order), then its
 * result's, as shapes and buffers; the caller frees both arrays. */
static kc_status* kc__call_leaves(kc__compiler* c, int32_t id, const kc_shape*** out_shapes,
                                  int32_t** out_bufs, size_t* out_nargs, size_t* out_nres) {
  const kc__instr* in = &c->p->instrs[id];
  size_t nargs = 0;
  for (size_t i = 0; i < in->num_operands; ++i) {
    nargs += c->p->instrs[in->operands[i]].shape->leaf_count;
  }
  size_t nres = in->shape->leaf_count;
  const kc_shape** shapes = malloc((nargs + nres + 1) * sizeof *shapes);
  int32_t* bufs = malloc((nargs + nres + 1) * sizeof *bufs);
  if (!shapes || !bufs) {
    free(shapes);
    free(bufs);
    return kc__oom();
  }
  size_t n = 0;
  for (size_t i = 0; i < in->num_operands; ++i) {
    kc__call_operand_leaves(c, id, i, bufs + n);
    kc__shape_leaves(c->p->instrs[in->operands[i]].shape, shapes, &n);
  }
  kc__shape_leaves(in->shape, shapes, &n);
  memcpy(bufs + nargs, kc__leaves_of(c, id), nres * sizeof *bufs);
  *out_shapes = shapes;
  *out_bufs = bufs;
  *out_nargs = nargs;
  *out_nres = nres;
  return NULL;
}

/* Lays out a typed call's frame and DLTensors in the block, and
 * instantiates the handler. */
static kc_status* kc__plan_typed_call(kc__compiler* c, int32_t id, int32_t pos,
                                      const kc__xcall_target* t) {
  const kc__instr* in = &c->p->instrs[id];
  const kc_xcall_signature* sig = &t->signature;
  kc_executable* exe = c->exe;
  const kc_shape** shapes = NULL;
  int32_t* bufs = NULL;
  size_t nargs = 0, nres = 0;
  KC__TRY(kc__call_leaves(c, id, &shapes, &bufs, &nargs, &nres));
  kc_status* st = NULL;
  bool open = (sig->flags & KC_XCALL_SIG_OPEN) != 0;
  if (!open) st = kc__check_leaves(in, "argument", shapes, nargs, sig->args, sig->num_args);
  if (!st && !open) {
    st = kc__check_leaves(in, "result", shapes + nargs, nres, sig->results,
                          sig->num_results);
  }
  kc_attr* attrs = NULL;
  /* An open signature receives every attribute, sorted by name. */
  size_t num_attrs = open ? in->attrs.count : (size_t)sig->num_attrs;
  if (!st && open) {
    attrs = kc__sorted_attrs(&exe->arena, &in->attrs);
    if (!attrs) st = kc__oom();
  } else if (!st) {
    attrs = kc__arena_alloc(&exe->arena, (num_attrs + 1) * sizeof *attrs);
    st = attrs ? kc__match_attrs(in, sig, attrs) : kc__oom();
  }
  /* The frame and its DLTensors, first as a local copy for INSTANTIATE. */
  DLTensor* tensors = st ? NULL : calloc(nargs + nres + 1, sizeof *tensors);
  if (!st && !tensors) st = kc__oom();
  for (size_t i = 0; !st && i < nargs + nres; ++i) {
    tensors[i].device = exe->backend ? exe->device : kc_device_cpu();
    tensors[i].ndim = shapes[i]->rank;
    tensors[i].dtype = shapes[i]->dtype;
    tensors[i].shape = (int64_t*)(uintptr_t)shapes[i]->dims;
  }
  kc_xcall_frame frame;
  memset(&frame, 0, sizeof frame);
  frame.struct_size = sizeof frame;
  frame.stage = KC_XCALL_STAGE_INSTANTIATE;
  frame.num_args = (int32_t)nargs;
  frame.num_results = (int32_t)nres;
  frame.num_attrs = (int32_t)num_attrs;
  frame.args = tensors;
  frame.results = tensors ? tensors + nargs : NULL;
  frame.attrs = attrs;
  /* Handlers always get a pool on the host; the default one is started
   * only when a program has a typed call. */
  if (!exe->pool) exe->pool = kc_thread_pool_get_default();
  frame.thread_pool = exe->pool;
  frame.user = t->user;
  frame.instruction_name = in->name;
  /* KC_XCALL_SIG_NO_INSTANTIATE: the handler has nothing to do there. */
  if (!st && !(sig->flags & KC_XCALL_SIG_NO_INSTANTIATE)) {
    st = t->handler(&frame);
    if (frame.state && frame.state_deleter && !kc__own_state(exe, frame.state, frame.state_deleter) &&
        !st) {
      st = kc__oom();
    }
    if (st) {
      st = kc_status_add_context(st, "instantiating custom call %s (instruction %s)",
                                 KC__QS(in->target), KC__QS(in->name));
    }
  }
  /* Into the block: frame, then the DLTensors; pointers become fills. */
  size_t frame_off = SIZE_MAX, tensors_off = SIZE_MAX;
  /* Frame, DLTensors and ordered attributes sit together, in the order
   * a handler reads them. */
  size_t attrs_off = SIZE_MAX;
  if (!st) {
    frame_off = kc__reserve(c, sizeof frame);
    tensors_off = kc__reserve(c, (nargs + nres) * sizeof *tensors);
    attrs_off = kc__reserve(c, num_attrs * sizeof *attrs);
    if (frame_off == SIZE_MAX || tensors_off == SIZE_MAX || attrs_off == SIZE_MAX) {
      st = kc__oom();
    }
  }
  if (!st) {
    frame.stage = KC_XCALL_STAGE_EXECUTE;
    frame.args = NULL;
    frame.results = NULL;
    frame.attrs = NULL;
    memcpy(c->block + frame_off, &frame, sizeof frame);
    memcpy(c->block + tensors_off, tensors, (nargs + nres) * sizeof *tensors);
    memcpy(c->block + attrs_off, attrs, num_attrs * sizeof *attrs);
    bool ok = kc__add_fill(c, frame_off + offsetof(kc_xcall_frame, args), -1, tensors_off) &&
              kc__add_fill(c, frame_off + offsetof(kc_xcall_frame, results), -1,
                           tensors_off + nargs * sizeof *tensors) &&
              kc__add_fill(c, frame_off + offsetof(kc_xcall_frame, attrs), -1, attrs_off);
    for (size_t i = 0; ok && i < nargs + nres; ++i) {
      ok = kc__add_fill(c, tensors_off + i * sizeof *tensors + offsetof(DLTensor, data),
                        bufs[i], 0);
    }
    if (ok && frame.scratch_bytes) {
      int32_t b = kc__new_buffer(c, KC__BUF_SCRATCH, frame.scratch_bytes, pos, NULL);
      ok = b >= 0 && kc__add_fill(c, frame_off + offsetof(kc_xcall_frame, scratch), b, 0);
    }
    if (ok && exe->backend) {
      size_t slot = frame_off + offsetof(kc_xcall_frame, stream);
      size_t* grown = realloc(exe->stream_slots, (exe->num_stream_slots + 1) * sizeof *grown);
      ok = grown != NULL;
      if (ok) {
        exe->stream_slots = grown;
        exe->stream_slots[exe->num_stream_slots++] = slot;
      }
    }
    kc__step* s = ok ? kc__new_step(c, KC__STEP_TYPED_CALL, kc__step_typed_call, id) : NULL;
    if (!s) {
      st = kc__oom();
    } else {
      s->target = t;
      s->handler = t->handler;
      s->frame_offset = frame_off;
    }
  }
  free(tensors);
  free(shapes);
  free(bufs);
  return st;
}

/* ---- XLA FFI calls ------------------------------------------------------------------ */

/* Where the parts of one XLA call frame lie, from the frame's start: the
 * frame, its execution context, the argument and result pointer arrays,
 * and the XLA_FFI_Buffers they point at. */
typedef struct kc__xla_layout {
  size_t ctx, ptrs, bufs, total;
} kc__xla_layout;

static kc__xla_layout kc__xla_layout_of(size_t n) {
  kc__xla_layout l;
  l.ctx = (sizeof(XLA_FFI_CallFrame) + 15) & ~(size_t)15;
  l.ptrs = l.ctx + ((sizeof(XLA_FFI_ExecutionContext) + 15) & ~(size_t)15);
  l.bufs = l.ptrs + ((n * sizeof(void*) + 15) & ~(size_t)15);
  l.total = l.bufs + n * sizeof(XLA_FFI_Buffer);
  return l;
}

/* Writes a frame at `at` with absolute pointers (the compile-time copy;
 * the block copy's pointers are replaced by fills), buffers without data. */
static void kc__xla_frame_write(char* at, const kc__xla_layout* l, size_t nargs, size_t nres,
                                const kc_shape* const* shapes, XLA_FFI_ArgType* arg_types,
                                XLA_FFI_RetType* ret_types, const XLA_FFI_Attrs* attrs,
                                const XLA_FFI_ExecutionContext* ctx) {
  XLA_FFI_CallFrame* f = (XLA_FFI_CallFrame*)(void*)at;
  XLA_FFI_ExecutionContext* x = (XLA_FFI_ExecutionContext*)(void*)(at + l->ctx);
  void** ptrs = (void**)(void*)(at + l->ptrs);
  XLA_FFI_Buffer* bufs = (XLA_FFI_Buffer*)(void*)(at + l->bufs);
  *x = *ctx;
  memset(f, 0, sizeof *f);
  f->struct_size = KC__XLA_CALL_FRAME_SIZE;
  f->api = kc__xla_api();
  f->ctx = x;
  f->stage = (XLA_FFI_ExecutionStage)ctx->stage;
  f->args.struct_size = KC__XLA_ARGS_SIZE;
  f->args.size = (int64_t)nargs;
  f->args.types = arg_types;
  f->args.args = ptrs;
  f->rets.struct_size = KC__XLA_RETS_SIZE;
  f->rets.size = (int64_t)nres;
  f->rets.types = ret_types;
  f->rets.rets = ptrs + nargs;
  f->attrs = *attrs;
  for (size_t i = 0; i < nargs + nres; ++i) {
    memset(&bufs[i], 0, sizeof bufs[i]);
    bufs[i].struct_size = KC__XLA_BUFFER_SIZE;
    bufs[i].dtype = kc__xla_dtype_from_dl(shapes[i]->dtype);
    bufs[i].rank = shapes[i]->rank;
    bufs[i].dims = (int64_t*)(uintptr_t)shapes[i]->dims;
    ptrs[i] = &bufs[i];
  }
}

/* Runs the stages XLA runs before the first execution, in XLA's order,
 * with the compile-time frame. */
static kc_status* kc__xla_run_stages(const kc__xcall_target* t, XLA_FFI_CallFrame* f) {
  kc_xla_ffi_handler_fn stages[3] = {t->xla.instantiate, t->xla.prepare, t->xla.initialize};
  for (int32_t k = 0; k < 3; ++k) {
    if (!stages[k]) continue;
    f->stage = (XLA_FFI_ExecutionStage)k;
    f->ctx->stage = k;
    XLA_FFI_Error* err = ((XLA_FFI_Handler*)(void (*)(void))stages[k])(f);
    KC__TRY(kc__xla_call_finish(f, err));
  }
  return NULL;
}

/* Lays out an XLA FFI call's frame in the block (what a run needs is
 * then a few buffer addresses), and runs its compile-time stages. */
static kc_status* kc__plan_xla_call(kc__compiler* c, int32_t id, const kc__xcall_target* t) {
  const kc__instr* in = &c->p->instrs[id];
  kc_executable* exe = c->exe;
  const kc_shape** shapes = NULL;
  int32_t* bufs = NULL;
  size_t nargs = 0, nres = 0;
  KC__TRY(kc__call_leaves(c, id, &shapes, &bufs, &nargs, &nres));
  size_t n = nargs + nres;
  kc_status* st = NULL;
  for (size_t i = 0; !st && i < n; ++i) {
    if (kc__xla_dtype_from_dl(shapes[i]->dtype) == XLA_FFI_DataType_INVALID) {
      char dt[32];
      kc_dtype_format(shapes[i]->dtype, dt, sizeof dt);
      st = kc__bad(in, KC_UNIMPLEMENTED, "custom call %s: %s %zu: XLA has no element type for %s",
                   KC__QS(in->target), i < nargs ? "operand leaf" : "result leaf",
                   i < nargs ? i : i - nargs, dt);
    }
  }
  /* What never changes lives in the executable: the types, the attributes
   * and the call site's state. */
  XLA_FFI_ArgType* arg_types = st ? NULL : kc__arena_alloc(&exe->arena, (n + 1) * sizeof *arg_types);
  XLA_FFI_RetType* ret_types = st ? NULL : kc__arena_alloc(&exe->arena, (n + 1) * sizeof *ret_types);
  kc__xla_instance* inst = st ? NULL : kc__arena_alloc(&exe->arena, sizeof *inst);
  if (!st && (!arg_types || !ret_types || !inst)) st = kc__oom();
  for (size_t i = 0; !st && i < n; ++i) {
    arg_types[i] = XLA_FFI_ArgType_BUFFER;
    ret_types[i] = XLA_FFI_RetType_BUFFER;
  }
  XLA_FFI_Attrs attrs;
  memset(&attrs, 0, sizeof attrs);
  if (!st) {
    st = kc__xla_attrs_build(&exe->arena, &in->attrs, &attrs);
    if (st) {
      st = kc_status_add_context(st, "custom call %s (instruction %s)", KC__QS(in->target),
                                 KC__QS(in->name));
    }
  }
  if (!exe->pool) exe->pool = kc_thread_pool_get_default();
  XLA_FFI_ExecutionContext ctx = {XLA_FFI_ExecutionStage_INSTANTIATE, inst, exe->pool, NULL};
  kc__xla_layout l = kc__xla_layout_of(n);
  char* local = st ? NULL : calloc(1, l.total);
  if (!st && !local) st = kc__oom();
  if (!st) {
    kc__xla_frame_write(local, &l, nargs, nres, shapes, arg_types, ret_types, &attrs, &ctx);
    st = kc__xla_run_stages(t, (XLA_FFI_CallFrame*)(void*)local);
    /* State set by any stage is the executable's now, even on failure. */
    for (size_t k = 0; inst && k < KC__ARRAY_SIZE(inst->states); ++k) {
      struct kc__xla_state* s = &inst->states[k];
      if (s->type_id && s->deleter && !kc__own_state(exe, s->state, s->deleter) && !st) st = kc__oom();
    }
    if (st) {
      st = kc_status_add_context(st, "instantiating custom call %s (instruction %s)",
                                 KC__QS(in->target), KC__QS(in->name));
    }
  }
  if (!st && !exe->has_xla) {
    size_t run_off = kc__reserve(c, sizeof(kc__xla_run_info));
    if (run_off == SIZE_MAX) st = kc__oom();
    exe->has_xla = true;
    exe->xla_run_offset = run_off;
  }
  size_t off = st ? 0 : kc__reserve(c, l.total);
  if (!st && off == SIZE_MAX) st = kc__oom();
  if (!st) {
    ctx.stage = XLA_FFI_ExecutionStage_EXECUTE;
    kc__xla_frame_write(c->block + off, &l, nargs, nres, shapes, arg_types, ret_types, &attrs, &ctx);
    bool ok = kc__add_fill(c, off + offsetof(XLA_FFI_CallFrame, ctx), -1, off + l.ctx) &&
              kc__add_fill(c, off + offsetof(XLA_FFI_CallFrame, args.args), -1, off + l.ptrs) &&
              kc__add_fill(c, off + offsetof(XLA_FFI_CallFrame, rets.rets), -1,
                           off + l.ptrs + nargs * sizeof(void*)) &&
              kc__add_fill(c, off + l.ctx + offsetof(XLA_FFI_ExecutionContext, run), -1,
                           exe->xla_run_offset);
    for (size_t i = 0; ok && i < n; ++i) {
      size_t buf = off + l.bufs + i * sizeof(XLA_FFI_Buffer);
      ok = kc__add_fill(c, off + l.ptrs + i * sizeof(void*), -1, buf) &&
           kc__add_fill(c, buf + offsetof(XLA_FFI_Buffer, data), bufs[i], 0);
    }
    kc__step* s = ok ? kc__new_step(c, KC__STEP_XLA_CALL, kc__step_xla_call, id) : NULL;
    if (!s) {
      st = kc__oom();
    } else {
      s->target = t;
      s->fn = (void (*)(void))t->xla.execute;
      s->frame_offset = off;
    }
  }
  free(local);
  free(shapes);
  free(bufs);
  return st;
}

/* Assigns buffers to instruction `id` at plan position `pos` and emits its
 * step, if it computes anything. */
kc_status* kc__prepare_own(const kc__prepare_ctx* ctx, void* thing, void (*deleter)(void*)) {
  return kc__own_state(ctx->exe, thing, deleter) ? NULL : kc__oom();
}

/* An instruction of the op table: one step calling its kernel with the
 * operands' and the result's addresses, laid out in the run block. */
static kc_status* kc__plan_kernel(kc__compiler* c, int32_t id, int32_t pos,
                                  const kc__op_def* def) {
  const kc__instr* in = &c->p->instrs[id];
  KC__TRY(kc__temp_leaves(c, id, pos));
  const void* data = NULL;
  if (def->prepare) {
    kc__prepare_ctx ctx = {&c->exe->arena, c->exe->platform, c->exe->pool, c->exe};
    KC__TRY(def->prepare(c->p, in, &ctx, &data));
  }
  kc__step* s = kc__new_step(c, KC__STEP_KERNEL, kc__step_kernel, id);
  if (!s) return kc__oom();
  s->def = def;
  s->data = data;
  size_t ins = kc__reserve(c, (in->num_operands + 1) * sizeof(void*));
  size_t out = kc__reserve(c, sizeof(void*));
  if (ins == SIZE_MAX || out == SIZE_MAX) return kc__oom();
  c->steps[c->num_steps - 1].ins_offset = ins;
  c->steps[c->num_steps - 1].out_offset = out;
  for (size_t i = 0; i < in->num_operands; ++i) {
    if (!kc__point_at(c, ins + i * sizeof(void*), in->operands[i])) return kc__oom();
  }
  return kc__point_at(c, out, id) ? NULL : kc__oom();
}

/* ---- CUDA ----------------------------------------------------------------------- */

/* How many operands an element-wise op of the CUDA backend takes; 0 for an
 * op that is not element-wise. */
static int32_t kc__device_arity(int32_t op) {
  if (op >= KC_OP_ADD && op <= KC_OP_MINIMUM) return 2;
  if (op >= KC_OP_NEGATE && op <= KC_OP_CONVERT) return 1;
  if (op >= KC_OP_ABS && op <= KC_OP_BITCAST_CONVERT) return 1;
  if (op >= KC_OP_POWER && op <= KC_OP_COMPARE) return 2;
  if (op == KC_OP_SELECT || op == KC_OP_CLAMP) return 3;
  return 0;
}

static kc_status* kc__not_on_cuda(const kc__instr* in, const char* why) {
  return kc__bad(in, KC_UNIMPLEMENTED, "%s is not available on CUDA%s", kc__op_name(in->op),
                 why);
}

static bool kc__same_dims(const kc_shape* a, const kc_shape* b) {
  return !kc_shape_is_tuple(a) && !kc_shape_is_tuple(b) && a->rank == b->rank &&
         (a->rank == 0 || !memcmp(a->dims, b->dims, (size_t)a->rank * sizeof(int64_t)));
}

/* KC__CMP_* of a compare instruction, or an error. */
static kc_status* kc__device_direction(const kc_program* p, const kc__instr* in,
                                      int32_t* out) {
  static const char* const names[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
  kc_string_view dir;
  KC__TRY(kc__op_attr_string(in, "direction", false, &dir));
  *out = 0;
  for (int32_t i = 0; i < 6; ++i) {
    if (kc_sv_equal(dir, kc_sv(names[i]))) *out = KC__CMP_EQ + i;
  }
  kc_string_view type = {NULL, 0};
  KC__TRY(kc__op_attr_string(in, "type", true, &type));
  if (!*out) {
    return kc__bad(in, KC_INVALID_ARGUMENT,
                   "attribute direction: expected EQ, NE, LT, LE, GT or GE");
  }
  if (type.size && kc_sv_equal(type, kc_sv("TOTALORDER"))) {
    DLDataType t = kc__operand_shape(p, in, 0)->dtype;
    if (t.code != kDLFloat || (t.bits != 32 && t.bits != 64) || t.lanes != 1) {
      return kc__not_on_cuda(in, " with type=TOTALORDER except for f32 and f64");
    }
    *out |= KC__CMP_TOTAL_ORDER;
  }
  return NULL;
}

/* What the CUDA backend can run, on top of the host's checks (kc__verify):
 * anything else is refused rather than run on the host with device
 * pointers. */
static kc_status* kc__verify_device(kc__compiler* c, const kc__instr* in) {
  const kc__backend* be = c->exe->backend;
  const kc_program* p = c->p;
  switch (in->op) {
    case KC__OP_PARAMETER:
    case KC__OP_CONSTANT:
    case KC__OP_TUPLE:
    case KC__OP_GET_TUPLE_ELEMENT:
    case KC__OP_CUSTOM_CALL:
    case KC_OP_RESHAPE:
      return NULL;
    case KC__OP_BROADCAST: {
      size_t esize = kc_dtype_get_size(in->shape->dtype);
      if (in->shape->rank > 32 || (esize != 1 && esize != 2 && esize != 4 && esize != 8 &&
                                   esize != 16)) {
        return kc__not_on_cuda(in, " for this dtype or rank (elements of 1, 2, 4, 8 or 16 "
                                   "bytes, rank at most 32)");
      }
      return NULL;
    }
    case KC_OP_IOTA:
      if (in->shape->rank > 32) return kc__not_on_cuda(in, " above rank 32");
      return NULL;
    default:
      break;
  }
  int32_t arity = kc__device_arity(in->op);
  if (!arity || (size_t)arity != in->num_operands) return kc__not_on_cuda(in, "");
  for (size_t i = 0; i < in->num_operands; ++i) {
    if (!kc__same_dims(kc__operand_shape(p, in, i), in->shape)) {
      return kc__not_on_cuda(in, " unless every operand has the result's dims (no scalar "
                                 "operands)");
    }
  }
  DLDataType from = kc__operand_shape(p, in, in->op == KC_OP_SELECT ? 1 : 0)->dtype;
  if (!be->elementwise_supported(in->op, from, in->shape->dtype)) {
    char a[32], b[32], why[96];
    snprintf(why, sizeof why, " for %s -> %s", kc__op_dtype_text(from, a, sizeof a),
             kc__op_dtype_text(in->shape->dtype, b, sizeof b));
    return kc__not_on_cuda(in, why);
  }
  if (in->op == KC_OP_COMPARE) {
    int32_t dir;
    KC__TRY(kc__device_direction(p, in, &dir));
  }
  return NULL;
}

/* A pointer table on the device for a tuple node of `bytes` bytes. */
static int32_t kc__new_table(kc__compiler* c, size_t bytes) {
  if (bytes == 0) bytes = sizeof(void*);
  int32_t b = kc__new_buffer(c, KC__BUF_TABLE, bytes, -1, NULL);
  if (b < 0) return -1;
  c->bufs[b].offset = c->tables_size;
  c->tables_size += (bytes + 15) & ~(size_t)15;
  return b;
}

static bool kc__add_table_fill(kc__compiler* c, size_t target, int32_t buffer) {
  if (!kc__grow((void**)&c->table_fills, &c->cap_table_fills, c->num_table_fills + 1,
                sizeof *c->table_fills)) {
    return false;
  }
  c->table_fills[c->num_table_fills].target = target;
  c->table_fills[c->num_table_fills].buffer = buffer;
  c->table_fills[c->num_table_fills].block_offset = 0;
  c->num_table_fills++;
  return true;
}

/* Entries of a GPU call's `buffers` for a value of shape `s` in `leaves`,
 * in pre-order from entry *k of the array at block offset `arr`: an array
 * is its buffer; a tuple is a device table, filled with its elements'
 * addresses for an operand, left to the callee for a result. Returns the
 * node's buffer, -1 when out of memory. */
static int32_t kc__gpu_entries(kc__compiler* c, const kc_shape* s, const int32_t* leaves,
                               size_t arr, size_t* k, bool operand) {
  size_t slot = arr + (*k)++ * sizeof(void*);
  if (!s->is_tuple) return kc__add_fill(c, slot, leaves[0], 0) ? leaves[0] : -1;
  int32_t table = kc__new_table(c, s->count * sizeof(void*));
  if (table < 0 || !kc__add_fill(c, slot, table, 0)) return -1;
  size_t leaf = 0;
  for (size_t i = 0; i < s->count; ++i) {
    const kc_shape* e = s->elements[i];
    int32_t child = kc__gpu_entries(c, e, leaves + leaf, arr, k, operand);
    if (child < 0) return -1;
    if (operand && !kc__add_table_fill(c, c->bufs[table].offset + i * sizeof(void*), child)) {
      return -1;
    }
    leaf += e->leaf_count;
  }
  return table;
}

static size_t kc__node_count(const kc_shape* s) {
  size_t n = 1;
  for (size_t i = 0; s->is_tuple && i < s->count; ++i) n += kc__node_count(s->elements[i]);
  return n;
}

/* A call with XLA's GPU convention: `buffers` (a host array in the block)
 * holds the operands then the result, each flattened in pre-order of its
 * shape, tuple nodes included (XLA's "Tuples in GPU custom-calls"). */
static kc_status* kc__plan_gpu_call(kc__compiler* c, int32_t id, const kc__xcall_target* t) {
  const kc__instr* in = &c->p->instrs[id];
  size_t n = kc__node_count(in->shape);
  for (size_t i = 0; i < in->num_operands; ++i) {
    n += kc__node_count(c->p->instrs[in->operands[i]].shape);
  }
  size_t arr = kc__reserve(c, (n + 1) * sizeof(void*));
  if (arr == SIZE_MAX) return kc__oom();
  size_t k = 0;
  for (size_t i = 0; i < in->num_operands; ++i) {
    const kc_shape* shape = c->p->instrs[in->operands[i]].shape;
    int32_t* leaves = malloc((shape->leaf_count + 1) * sizeof *leaves);
    if (!leaves) return kc__oom();
    kc__call_operand_leaves(c, id, i, leaves);
    int32_t b = kc__gpu_entries(c, shape, leaves, arr, &k, true);
    free(leaves);
    if (b < 0) return kc__oom();
  }
  if (kc__gpu_entries(c, in->shape, kc__leaves_of(c, id), arr, &k, false) < 0) return kc__oom();
  kc__step* s = kc__new_step(c, KC__STEP_GPU_CALL, kc__step_gpu_call, id);
  if (!s) return kc__oom();
  s->target = t;
  s->fn = t->fn;
  s->api = (int32_t)t->api;
  s->opaque = in->opaque;
  s->opaque_size = in->opaque_size;
  s->ins_offset = arr;
  return NULL;
}

/* A built-in instruction on CUDA (kc__verify_device let it through):
 * iota or an element-wise op, as a backend kernel. */
static kc_status* kc__plan_device_instr(kc__compiler* c, int32_t id, int32_t pos) {
  const kc__instr* in = &c->p->instrs[id];
  KC__TRY(kc__temp_leaves(c, id, pos));
  int32_t out = kc__leaves_of(c, id)[0];
  if (in->op == KC_OP_IOTA) {
    int64_t dim = 0;
    KC__TRY(kc__op_attr_int(in, "iota_dimension", &dim));
    kc__step* s = kc__new_step(c, KC__STEP_IOTA, kc__step_iota_device, id);
    if (!s) return kc__oom();
    s->out = out;
    s->out_dtype = in->shape->dtype;
    s->out_rank = in->shape->rank;
    s->out_dims = in->shape->dims;
    s->in_rank = (int32_t)dim; /* the iota dimension */
    return NULL;
  }
  int32_t direction = 0;
  if (in->op == KC_OP_COMPARE) KC__TRY(kc__device_direction(c->p, in, &direction));
  kc__step* s = kc__new_step(c, KC__STEP_ELEMENTWISE, kc__step_elementwise_device, id);
  if (!s) return kc__oom();
  s->op = in->op;
  s->arity = (int32_t)in->num_operands;
  s->direction = direction;
  for (size_t i = 0; i < in->num_operands && i < 3; ++i) {
    s->in[i] = kc__leaves_of(c, in->operands[i])[0];
  }
  s->out = out;
  s->in_dtype = c->p->instrs[in->operands[in->op == KC_OP_SELECT ? 1 : 0]].shape->dtype;
  s->out_dtype = in->shape->dtype;
  int64_t count = 1;
  for (int32_t d = 0; d < in->shape->rank; ++d) count *= in->shape->dims[d];
  s->count = count;
  return NULL;
}

/* The CUDA part of kc__finish: device step functions, the tables, the
 * staging layout of host inputs, the constants on the device. */
static kc_status* kc__finish_device(kc__compiler* c) {
  kc_executable* exe = c->exe;
  for (size_t i = 0; i < exe->num_steps; ++i) {
    kc__step* s = &exe->steps[i];
    if (s->kind == KC__STEP_BROADCAST) s->run = kc__step_broadcast_device;
    if (s->kind == KC__STEP_COPY) s->run = kc__step_copy_device;
  }
  exe->tables_bytes = c->tables_size;
  exe->table_fills = c->table_fills;
  exe->num_table_fills = c->num_table_fills;
  c->table_fills = NULL;
  exe->input_staging = calloc(exe->num_inputs + 1, sizeof *exe->input_staging);
  if (!exe->input_staging) return kc__oom();
  size_t off = 0;
  for (size_t i = 0; i < exe->num_inputs; ++i) {
    exe->input_staging[i] = off;
    off += (exe->input_shapes[i]->byte_size + 255) & ~(size_t)255;
  }
  exe->staging_bytes = off;
  return kc__device_upload_constants(exe);
}

static kc_status* kc__plan_instr(kc__compiler* c, int32_t id, int32_t pos) {
  const kc_program* p = c->p;
  const kc__instr* in = &p->instrs[id];
  int32_t* leaves = &c->leaf_buf[c->leaf_base[id]];
  switch (in->op) {
    case KC__OP_PARAMETER: {
      size_t first = 0;
      for (int64_t k = 0; k < in->number; ++k) {
        first += p->instrs[p->params[k]].shape->leaf_count;
      }
      size_t n = 0;
      const kc_shape** shapes = malloc(in->shape->leaf_count * sizeof *shapes + 1);
      if (!shapes) return kc__oom();
      kc__shape_leaves(in->shape, shapes, &n);
      for (size_t i = 0; i < n; ++i) {
        int32_t b = kc__new_buffer(c, KC__BUF_INPUT, shapes[i]->byte_size, -1, shapes[i]);
        if (b < 0) {
          free(shapes);
          return kc__oom();
        }
        c->bufs[b].index = (int32_t)(first + i);
        leaves[i] = b;
      }
      free(shapes);
      return NULL;
    }
    case KC__OP_CONSTANT: {
      int32_t b = kc__new_buffer(c, KC__BUF_CONST, in->literal_size, -1, in->shape);
      if (b < 0) return kc__oom();
      c->bufs[b].data = in->literal;
      leaves[0] = b;
      return NULL;
    }
    case KC__OP_TUPLE: {
      size_t n = 0;
      for (size_t i = 0; i < in->num_operands; ++i) {
        int32_t o = in->operands[i];
        size_t k = p->instrs[o].shape->leaf_count;
        memcpy(leaves + n, kc__leaves_of(c, o), k * sizeof *leaves);
        n += k;
      }
      return NULL;
    }
    case KC__OP_GET_TUPLE_ELEMENT: {
      size_t offset = 0;
      const kc_shape* t = p->instrs[in->operands[0]].shape;
      kc__subshape(t, &in->number, 1, &offset);
      memcpy(leaves, kc__leaves_of(c, in->operands[0]) + offset,
             in->shape->leaf_count * sizeof *leaves);
      return NULL;
    }
    case KC_OP_RESHAPE:
      /* Row-major bytes do not move: the result is the operand's buffer. */
      leaves[0] = kc__leaves_of(c, in->operands[0])[0];
      return NULL;
    case KC__OP_BROADCAST: {
      KC__TRY(kc__temp_leaves(c, id, pos));
      kc__step* s = kc__new_step(c, KC__STEP_BROADCAST, kc__step_broadcast, id);
      if (!s) return kc__oom();
      const kc_shape* o = p->instrs[in->operands[0]].shape;
      s->in[0] = kc__leaves_of(c, in->operands[0])[0];
      s->out = leaves[0];
      s->in_rank = o->rank;
      s->in_dims = o->dims;
      s->out_rank = in->shape->rank;
      s->out_dims = in->shape->dims;
      s->map = in->dims;
      s->bytes = kc_dtype_get_size(o->dtype);
      return NULL;
    }
    case KC__OP_CUSTOM_CALL: {
      const kc__xcall_target* t = NULL;
      KC__TRY(kc__verify_custom_call(p, in, c->exe, &t));
      KC__TRY(kc__temp_leaves(c, id, pos));
      KC__TRY(kc__plan_aliases(c, id, pos));
      if (t->xla.execute) return kc__plan_xla_call(c, id, t);
      if (t->api == KC_XCALL_API_TYPED) return kc__plan_typed_call(c, id, pos, t);
      if (c->exe->backend) return kc__plan_gpu_call(c, id, t);
      return kc__plan_legacy_call(c, id, t);
    }
    default: {
      if (c->exe->backend) return kc__plan_device_instr(c, id, pos);
      const kc__op_def* def = kc__op_def_find(in->op);
      if (def) return kc__plan_kernel(c, id, pos, def);
      KC__TRY(kc__temp_leaves(c, id, pos));
      kc__step* s = kc__new_step(c, KC__STEP_ELEMENTWISE, kc__step_elementwise, id);
      if (!s) return kc__oom();
      const kc_shape* o = p->instrs[in->operands[0]].shape;
      s->op = in->op;
      s->in[0] = kc__leaves_of(c, in->operands[0])[0];
      if (in->num_operands > 1) s->in[1] = kc__leaves_of(c, in->operands[1])[0];
      s->out = leaves[0];
      s->in_dtype = o->dtype;
      s->out_dtype = in->shape->dtype;
      int64_t count = 1;
      for (int32_t d = 0; d < in->shape->rank; ++d) count *= in->shape->dims[d];
      s->count = count;
      return NULL;
    }
  }
}

/* Extends last uses: every operand read at `pos`. */
static void kc__note_uses(kc__compiler* c, int32_t id, int32_t pos) {
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
static void kc__merge_aliases(kc__compiler* c) {
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
static kc_status* kc__plan_outputs(kc__compiler* c, int32_t end) {
  kc_executable* exe = c->exe;
  const kc__instr* root = &c->p->instrs[c->p->root];
  size_t n = root->shape->leaf_count;
  exe->num_outputs = n;
  exe->output_shapes = calloc(n + 1, sizeof *exe->output_shapes);
  exe->output_buffers = calloc(n + 1, sizeof *exe->output_buffers);
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

typedef struct kc__hole {
  size_t offset, size;
} kc__hole;

static int kc__by_def(const void* a, const void* b, void* ctx) {
  const kc__buffer* bufs = ctx;
  const kc__buffer* x = &bufs[*(const int32_t*)a];
  const kc__buffer* y = &bufs[*(const int32_t*)b];
  if (x->def != y->def) return x->def < y->def ? -1 : 1;
  return (*(const int32_t*)a > *(const int32_t*)b) - (*(const int32_t*)a < *(const int32_t*)b);
}

/* Gives each temporary an arena offset; buffers whose live ranges do not
 * overlap share memory. Best fit over free holes, else the arena grows. */
static kc_status* kc__plan_arena(kc__compiler* c) {
  size_t n = 0;
  int32_t* order = malloc((c->num_bufs + 1) * sizeof *order);
  kc__hole* holes = malloc((c->num_bufs + 1) * sizeof *holes);
  int32_t* active = malloc((c->num_bufs + 1) * sizeof *active);
  if (!order || !holes || !active) {
    free(order);
    free(holes);
    free(active);
    return kc__oom();
  }
  for (size_t i = 0; i < c->num_bufs; ++i) {
    int32_t k = c->bufs[i].kind;
    if (k == KC__BUF_TEMP || k == KC__BUF_SCRATCH) order[n++] = (int32_t)i;
  }
  qsort_r(order, n, sizeof *order, kc__by_def, c->bufs);
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
      size_t off = d->offset, size = (d->size + KC__ALIGN - 1) & ~(size_t)(KC__ALIGN - 1);
      if (size == 0) size = KC__ALIGN;
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
      active[a] = active[--num_active];
    }
    size_t size = (b->size + KC__ALIGN - 1) & ~(size_t)(KC__ALIGN - 1);
    if (size == 0) size = KC__ALIGN;
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
  free(order);
  free(holes);
  free(active);
  return NULL;
}

/* ---- the whole compile ------------------------------------------------------- */

static kc_status* kc__plan_inputs(kc__compiler* c) {
  kc_executable* exe = c->exe;
  const kc_program* p = c->p;
  size_t n = 0;
  for (size_t k = 0; k < p->num_params; ++k) n += p->instrs[p->params[k]].shape->leaf_count;
  exe->num_inputs = n;
  exe->input_shapes = calloc(n + 1, sizeof *exe->input_shapes);
  if (!exe->input_shapes) return kc__oom();
  size_t m = 0;
  for (size_t k = 0; k < p->num_params; ++k) {
    kc__shape_leaves(p->instrs[p->params[k]].shape, exe->input_shapes, &m);
  }
  return NULL;
}

static kc_status* kc__compile(kc__compiler* c) {
  const kc_program* p = c->p;
  kc_executable* exe = c->exe;
  bool* live = calloc(p->count, sizeof *live);
  c->pos_of = malloc(p->count * sizeof *c->pos_of);
  c->leaf_base = malloc(p->count * sizeof *c->leaf_base);
  exe->live_instr = malloc(p->count * sizeof *exe->live_instr);
  if (!live || !c->pos_of || !c->leaf_base || !exe->live_instr) {
    free(live);
    return kc__oom();
  }
  kc_status* st = kc__mark_live(c, live);
  for (size_t i = 0; !st && i < p->count; ++i) {
    c->pos_of[i] = -1;
    c->leaf_base[i] = c->num_leaves;
    if (!live[i]) continue;
    st = kc__verify(p, &p->instrs[i]);
    if (!st && exe->backend) st = kc__verify_device(c, &p->instrs[i]);
    c->pos_of[i] = (int32_t)exe->num_live;
    exe->live_instr[exe->num_live++] = (int32_t)i;
    c->num_leaves += p->instrs[i].shape->leaf_count;
  }
  free(live);
  if (st) return st;
  c->leaf_buf = malloc((c->num_leaves + 1) * sizeof *c->leaf_buf);
  if (!c->leaf_buf) return kc__oom();
  KC__TRY(kc__plan_inputs(c));
  for (size_t k = 0; k < exe->num_live; ++k) {
    int32_t id = exe->live_instr[k];
    KC__TRY(kc__plan_instr(c, id, (int32_t)k));
    kc__note_uses(c, id, (int32_t)k);
  }
  int32_t end = (int32_t)exe->num_live;
  const int32_t* root_leaves = kc__leaves_of(c, p->root);
  for (size_t i = 0; i < p->instrs[p->root].shape->leaf_count; ++i) {
    if (c->bufs[root_leaves[i]].last < end) c->bufs[root_leaves[i]].last = end;
  }
  kc__merge_aliases(c);
  KC__TRY(kc__plan_outputs(c, end));
  return kc__plan_arena(c);
}

static bool kc__is_dynamic(const kc_executable* exe, int32_t buffer) {
  int32_t kind = buffer >= 0 ? exe->buffers[buffer].kind : 0;
  return kind == KC__BUF_INPUT || kind == KC__BUF_OUTPUT;
}

static int kc__fill_order(const void* a, const void* b) {
  const kc__fill* x = a;
  const kc__fill* y = b;
  if (x->buffer != y->buffer) return x->buffer < y->buffer ? -1 : 1;
  return x->target < y->target ? -1 : x->target > y->target;
}

/* Lists the input and output buffers with the block offsets that hold
 * their address (the `n` dynamic fills, sorted here by buffer, then by
 * offset so that a group is written front to back): a run visits only
 * them, and rewrites only what moved. */
static kc_status* kc__group_dynamic_fills(kc_executable* exe, kc__fill* fills, size_t n) {
  if (n > 1) qsort(fills, n, sizeof *fills, kc__fill_order); /* fills: NULL when n is 0 */
  size_t num = 0;
  for (size_t i = 0; i < exe->num_buffers; ++i) num += kc__is_dynamic(exe, (int32_t)i);
  exe->dynamics = calloc(num + 1, sizeof *exe->dynamics);
  exe->dynamic_targets = malloc((n + 1) * sizeof *exe->dynamic_targets);
  if (!exe->dynamics || !exe->dynamic_targets) return kc__oom();
  for (size_t f = 0; f < n; ++f) exe->dynamic_targets[f] = fills[f].target;
  size_t f = 0;
  for (size_t i = 0; i < exe->num_buffers; ++i) {
    if (!kc__is_dynamic(exe, (int32_t)i)) continue;
    kc__dynamic* d = &exe->dynamics[exe->num_dynamics++];
    d->buffer = (int32_t)i;
    d->kind = exe->buffers[i].kind;
    d->index = exe->buffers[i].index;
    d->first = f;
    while (f < n && fills[f].buffer == (int32_t)i) ++f;
    if (f - d->first > UINT32_MAX) return kc__oom();
    d->count = (uint32_t)(f - d->first);
  }
  return NULL;
}

/* The run loop's view of the steps (kc__hot_step). */
static kc_status* kc__make_hot_steps(kc_executable* exe) {
  exe->hot_steps = calloc(exe->num_steps + 1, sizeof *exe->hot_steps);
  if (!exe->hot_steps || exe->num_steps > UINT32_MAX) return kc__oom();
  for (size_t i = 0; i < exe->num_steps; ++i) {
    const kc__step* s = &exe->steps[i];
    kc__hot_step* h = &exe->hot_steps[i];
    h->kind = KC__HOT_STEP;
    h->offset = (uint32_t)i;
    size_t off = 0;
    if (s->kind == KC__STEP_TYPED_CALL) {
      h->kind = KC__HOT_TYPED;
      h->fn = (void (*)(void))s->handler;
      off = s->frame_offset;
    } else if (s->kind == KC__STEP_XLA_CALL) {
      h->kind = KC__HOT_XLA;
      h->fn = s->fn;
      off = s->frame_offset;
    } else if (s->kind == KC__STEP_LEGACY_CALL && s->api == KC_XCALL_API_ORIGINAL &&
               s->ins_offset == s->out_offset + sizeof(void*)) {
      h->kind = KC__HOT_LEGACY;
      h->fn = s->fn;
      off = s->out_offset;
    }
    /* A block past 4 GiB: those steps go the long way. */
    if (off > UINT32_MAX) {
      h->kind = KC__HOT_STEP;
      h->fn = NULL;
    } else if (h->kind != KC__HOT_STEP) {
      h->offset = (uint32_t)off;
    }
  }
  return NULL;
}

/* Moves the compiler's results into the executable: buffers, steps, the
 * block template with the address table at its end, and the fills split
 * into those fixed per run (static) and those that change (dynamic). */
static kc_status* kc__finish(kc__compiler* c) {
  kc_executable* exe = c->exe;
  size_t addr = kc__reserve(c, (c->num_bufs + 1) * sizeof(void*));
  if (addr == SIZE_MAX) return kc__oom();
  exe->addr_offset = addr;
  exe->block_bytes = c->block_size;
  exe->block_template = c->block;
  c->block = NULL;
  exe->buffers = c->bufs;
  exe->num_buffers = c->num_bufs;
  c->bufs = NULL;
  exe->steps = c->steps;
  exe->num_steps = c->num_steps;
  c->steps = NULL;
  KC__TRY(kc__make_hot_steps(exe));
  exe->static_fills = malloc((c->num_fills + 1) * sizeof *exe->static_fills);
  if (!exe->static_fills) return kc__oom();
  /* The dynamic fills move to the front of the compiler's array. */
  size_t num_dynamic = 0;
  for (size_t i = 0; i < c->num_fills; ++i) {
    const kc__fill* f = &c->fills[i];
    if (kc__is_dynamic(exe, f->buffer)) {
      c->fills[num_dynamic++] = *f;
    } else {
      exe->static_fills[exe->num_static_fills++] = *f;
    }
  }
  KC__TRY(kc__group_dynamic_fills(exe, c->fills, num_dynamic));
  if (exe->backend) return kc__finish_device(c);
  return NULL;
}

kc_status* kc_program_compile(const kc_program* program,
                              const kc_compile_options* options,
                              kc_executable** out_executable) {
  if (!program || !out_executable) {
    return kc_status_create(KC_INVALID_ARGUMENT, "kc_program_compile: %s is NULL",
                            program ? "out_executable" : "program");
  }
  *out_executable = NULL;
  kc_platform platform = KC_PLATFORM_HOST;
  kc_thread_pool* pool = NULL;
  int32_t device_id = 0;
  uint32_t flags = 0;
  if (options) {
    if (KC_STRUCT_HAS(options, kc_compile_options, platform) && options->platform) {
      platform = options->platform;
    }
    if (KC_STRUCT_HAS(options, kc_compile_options, thread_pool)) pool = options->thread_pool;
    if (KC_STRUCT_HAS(options, kc_compile_options, device_id)) device_id = options->device_id;
    if (KC_STRUCT_HAS(options, kc_compile_options, flags)) flags = options->flags;
  }
  if (flags & ~(uint32_t)KC_COMPILE_NO_CUDA_GRAPH) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "compiling %s: unknown compile flags 0x%x (expected "
                            "KC_COMPILE_NO_CUDA_GRAPH or none)",
                            KC__QS(program->name), flags & ~(uint32_t)KC_COMPILE_NO_CUDA_GRAPH);
  }
  const kc__backend* backend = NULL;
  DLDevice device = kc_device_cpu();
  if (platform == KC_PLATFORM_CUDA) {
    device.device_type = kDLCUDA;
    device.device_id = device_id;
    KC_RETURN_IF_ERROR(kc__device_backend(device, &backend), "compiling %s for CUDA device %d",
                       KC__QS(program->name), device_id);
  } else if (platform != KC_PLATFORM_HOST) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "compiling %s: unknown platform %d (expected "
                            "KC_PLATFORM_HOST or KC_PLATFORM_CUDA)",
                            KC__QS(program->name), (int)platform);
  }
  kc_executable* exe = calloc(1, sizeof *exe);
  if (!exe) return kc__oom();
  pthread_mutex_init(&exe->runs_mu, NULL);
  exe->program = (kc_program*)(uintptr_t)program;
  kc__program_retain(exe->program);
  exe->platform = platform;
  exe->pool = pool;
  exe->backend = backend;
  exe->device = device;
  exe->flags = flags;
  exe->graph_capable = backend && !(flags & KC_COMPILE_NO_CUDA_GRAPH);
  kc__compiler c;
  memset(&c, 0, sizeof c);
  c.p = program;
  c.exe = exe;
  kc_status* st = kc__compile(&c);
  if (!st) st = kc__finish(&c);
  exe->pos_of = c.pos_of;
  exe->leaf_base = c.leaf_base;
  exe->leaf_buf = c.leaf_buf;
  free(c.bufs);
  free(c.steps);
  free(c.block);
  free(c.fills);
  free(c.table_fills);
  free(c.aliases);
  if (st) {
    kc_executable_destroy(exe);
    return kc_status_add_context(st, "compiling %s", KC__QS(program->name));
  }
  *out_executable = exe;
  return NULL;
}

void kc_executable_query(const kc_executable* exe, kc_executable_info* out) {
  if (!exe || !out) return;
  kc_executable_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = out->struct_size;
  info.num_instructions = exe->program->count;
  info.num_live_instructions = exe->num_live;
  info.num_inputs = exe->num_inputs;
  info.num_outputs = exe->num_outputs;
  for (size_t i = 0; i < exe->num_buffers; ++i) {
    int32_t k = exe->buffers[i].kind;
    info.num_buffers += k == KC__BUF_TEMP || k == KC__BUF_SCRATCH;
  }
  info.temp_bytes = exe->arena_bytes;
  info.temp_bytes_unshared = exe->arena_unshared;
  info.output_bytes = exe->output_bytes;
  info.peak_bytes = exe->arena_bytes + exe->output_bytes;
  info.cuda_graph_captures = atomic_load(&exe->graph_captures);
  info.cuda_graph_launches = atomic_load(&exe->graph_launches);
  memcpy(out, &info, out->struct_size < sizeof info ? out->struct_size : sizeof info);
}

const kc_shape* kc_executable_get_input_shape(const kc_executable* exe, size_t index) {
  return exe && index < exe->num_inputs ? exe->input_shapes[index] : NULL;
}

const kc_shape* kc_executable_get_output_shape(const kc_executable* exe, size_t index) {
  return exe && index < exe->num_outputs ? exe->output_shapes[index] : NULL;
}

const kc_program* kc_executable_get_program(const kc_executable* exe) {
  return exe ? exe->program : NULL;
}

const char* kc_executable_get_instruction_name(const kc_executable* exe,
                                               size_t index) {
  if (!exe || index >= exe->num_live) return NULL;
  return exe->program->instrs[exe->live_instr[index]].name;
}
