/* Verification of instructions: what the host can run, checked once at
 * compile (shapes, operand counts, attributes, custom-call targets). */
#include <stdio.h>
#include <stdlib.h>

#include "internal/grow.h"
#include "program/compiler/compile_internal.h"
#include "program/instr/elementwise.h"

/* ---- verification ------------------------------------------------------------ */

const kc_shape* kc__operand_shape(const kc_program* p,
                                  const kc__instr* in, size_t i) {
  return p->instrs[in->operands[i]].shape;
}
static kc_status* kc__expect_array(const kc_program* p, const kc__instr* in,
                                   size_t i, const kc_shape* want) {
  const kc_shape* got = kc__operand_shape(p, in, i);
  if (kc_shape_equal(got, want)) return NULL;
  KC__SHAPE_TEXT(w, want);
  KC__SHAPE_TEXT(g, got);
  return kc__instr_error(in, KC_INVALID_ARGUMENT, "operand %zu: expected %s, got %s", i, w, g);
}

kc_status* kc__verify_elementwise(const kc_program* p, const kc__instr* in) {
  const kc_shape* r = in->shape;
  if (kc_shape_is_tuple(r)) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT, "expected an array result, got a tuple");
  }
  for (size_t i = 0; i < in->num_operands; ++i) {
    const kc_shape* o = kc__operand_shape(p, in, i);
    if (kc_shape_is_tuple(o)) {
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                             "operand %zu: expected an array, got a tuple", i);
    }
    if (in->def->kind == KC__INSTR_RESHAPE) {
      int64_t n = 1;
      for (int32_t d = 0; d < o->rank; ++d) n *= o->dims[d];
      int64_t m = 1;
      for (int32_t d = 0; d < r->rank; ++d) m *= r->dims[d];
      if (n != m || !kc_dtype_equal(o->dtype, r->dtype)) {
        KC__SHAPE_TEXT(g, o);
        KC__SHAPE_TEXT(w, r);
        return kc__instr_error(in, KC_INVALID_ARGUMENT,
                               "reshape of %s to %s: expected the same dtype and "
                               "element count",
                               g, w);
      }
      return NULL;
    }
    if (in->def->elementwise_types & KC__ELEMENTWISE_CONVERT) {
      if (o->rank != r->rank ||
          (r->rank && memcmp(o->dims, r->dims, (size_t)r->rank * sizeof(int64_t)))) {
        KC__SHAPE_TEXT(g, o);
        KC__SHAPE_TEXT(w, r);
        return kc__instr_error(in, KC_INVALID_ARGUMENT,
                               "operand 0: expected the dims of %s, got %s", w, g);
      }
    } else {
      KC_RETURN_IF_ERROR(kc__expect_array(p, in, i, r));
    }
  }
  DLDataType from = kc__operand_shape(p, in, 0)->dtype;
  if (!kc__elementwise_supported(in->def, from, r->dtype)) {
    char a[32], b[32];
    kc_dtype_format(from, a, sizeof a);
    kc_dtype_format(r->dtype, b, sizeof b);
    return kc__instr_error(in, KC_UNIMPLEMENTED,
                           "%s is not implemented for %s -> %s (supported: the float, "
                           "complex and integer types; exponential and log: float and complex; "
                           "maximum and minimum: not complex; convert: not complex to real)",
                           kc__instr_name(in->op), a, b);
  }
  return NULL;
}

kc_status* kc__verify_broadcast(const kc_program* p, const kc__instr* in) {
  const kc_shape* o = kc__operand_shape(p, in, 0);
  const kc_shape* r = in->shape;
  if (kc_shape_is_tuple(o) || kc_shape_is_tuple(r) ||
      !kc_dtype_equal(o->dtype, r->dtype) || (size_t)o->rank != in->num_dims) {
    KC__SHAPE_TEXT(g, o);
    KC__SHAPE_TEXT(w, r);
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "broadcast of %s to %s with %zu dimensions: expected "
                           "arrays of one dtype and one dimension per operand dim",
                           g, w, in->num_dims);
  }
  for (size_t i = 0; i < in->num_dims; ++i) {
    int64_t d = in->dims[i];
    if (d < 0 || d >= r->rank || (i > 0 && d <= in->dims[i - 1]) ||
        r->dims[d] != o->dims[i]) {
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                             "dimensions[%zu] = %lld: expected an increasing result "
                             "dimension whose size equals operand dimension %zu",
                             i, (long long)d, i);
    }
  }
  return NULL;
}

/* The sub-shape at `path` of `shape`, or NULL. */
const kc_shape* kc__subshape(const kc_shape* shape, const int64_t* path,
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

kc_status* kc__verify_aliases(const kc_program* p, const kc__instr* in) {
  for (size_t i = 0; i < in->num_aliases; ++i) {
    const kc__alias* a = &in->aliases[i];
    size_t unused;
    const kc_shape* out = kc__subshape(in->shape, a->output_index,
                                       a->output_index_size, &unused);
    if (a->operand < 0 || (size_t)a->operand >= in->num_operands) {
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                             "output_to_operand_aliasing %zu: operand %d: expected "
                             "0 to %zu",
                             i, a->operand, in->num_operands - 1);
    }
    const kc_shape* src = kc__subshape(kc__operand_shape(p, in, (size_t)a->operand),
                                       a->operand_index, a->operand_index_size, &unused);
    if (!out || !src || kc_shape_is_tuple(out) || !kc_shape_equal(out, src)) {
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                             "output_to_operand_aliasing %zu: expected an output index "
                             "and an operand index naming arrays of the same shape",
                             i);
    }
    for (size_t j = 0; j < i; ++j) {
      const kc__alias* b = &in->aliases[j];
      if (b->output_index_size == a->output_index_size &&
          !memcmp(b->output_index, a->output_index,
                  a->output_index_size * sizeof(int64_t))) {
        return kc__instr_error(in, KC_INVALID_ARGUMENT,
                               "output_to_operand_aliasing %zu: that output is "
                               "already aliased by entry %zu",
                               i, j);
      }
    }
  }
  return NULL;
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
  if (!KC__GROW(exe->targets, exe->cap_targets, exe->num_targets + 1)) {
    kc_object_release(KC_OBJECT(t));
    return false;
  }
  exe->targets[exe->num_targets++] = KC_OBJECT(t);
  return true;
}

/* `shape` (an array) as a DLTensor without data, for kc_op_infer. */
static bool kc__shape_as_dltensor(const kc_shape* shape, DLTensor* out) {
  if (kc_shape_is_tuple(shape)) return false;
  *out = (DLTensor){.device = {kDLCPU, 0},
                    .ndim = kc_shape_get_rank(shape),
                    .dtype = kc_shape_get_dtype(shape),
                    .shape = (int64_t*)(uintptr_t)kc_shape_get_dims(shape)};
  return true;
}

/* A custom call of "kcall.OP" checked against the op when the program is
 * compiled (kc__xcall_check_op_call): its attributes, operands and the
 * results it declares, rather than at the first run. */
static kc_status* kc__verify_op_call(const kc_program* p, const kc__instr* in) {
  DLTensor operands[KC_OP_MAX_ARGS], results[KC_OP_MAX_ARGS];
  const DLTensor* operand_ptrs[KC_OP_MAX_ARGS];
  const DLTensor* result_ptrs[KC_OP_MAX_ARGS];
  size_t num_results = kc_shape_get_leaf_count(in->shape);
  if (in->num_operands > KC_OP_MAX_ARGS || num_results > KC_OP_MAX_ARGS) return NULL;
  for (size_t i = 0; i < in->num_operands; ++i) {
    if (!kc__shape_as_dltensor(kc__operand_shape(p, in, i), &operands[i])) return NULL;
    operand_ptrs[i] = &operands[i];
  }
  for (size_t i = 0; i < num_results; ++i) {
    kc__shape_as_dltensor(kc_shape_get_leaf(in->shape, i), &results[i]);
    result_ptrs[i] = &results[i];
  }
  kc_status* st = kc__xcall_check_op_call(kc_sv(in->target), &in->attrs, operand_ptrs,
                                          in->num_operands, result_ptrs, num_results);
  if (!st) return NULL;
  if (in->line > 0) {
    return kc_status_add_context(st, "custom call %s (instruction %s, line %d)",
                                 KC__QS(in->target), KC__QS(in->name), in->line);
  }
  return kc_status_add_context(st, "custom call %s (instruction %s)", KC__QS(in->target),
                               KC__QS(in->name));
}

/* Finds and checks the target of a custom call; on success the executable
 * holds it, so *out_target lives as long as the executable. */
kc_status* kc__verify_custom_call(const kc_program* p, const kc__instr* in,
                                  kc_executable* exe,
                                  const kc__xcall_target** out_target) {
  kc_platform platform = exe->platform;
  kc__xcall_target* t = NULL;
  kc_status* st = kc__xcall_get_for_program(kc_sv(in->target), platform, &t);
  if (st) {
    return kc_status_add_context(st, "custom call %s (instruction %s)",
                                 KC__QS(in->target), KC__QS(in->name));
  }
  if (!kc__hold_target(exe, t)) return kc__oom();
  if (!t->graph_safe) exe->graph_capable = false;
  if ((int32_t)t->api != in->api_version) {
    return kc__instr_error(in, KC_FAILED_PRECONDITION,
                           "custom call %s: the program calls it with API %s, but "
                           "it is registered for %s on %s",
                           KC__QS(in->target), kc_xcall_api_name((kc_xcall_api)in->api_version),
                           kc_xcall_api_name(t->api), kc_platform_name(platform));
  }
  if (t->api != KC_XCALL_API_TYPED && in->attrs.count) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "custom call %s: typed attributes need API TYPED", KC__QS(in->target));
  }
  KC_RETURN_IF_ERROR(kc__verify_aliases(p, in));
  if (t->api == KC_XCALL_API_TYPED) KC_RETURN_IF_ERROR(kc__verify_op_call(p, in));
  *out_target = t;
  return NULL;
}

/* A KC__INSTR_KERNEL instruction: its operand and computation counts and
 * attribute names, then its own checks. */
static kc_status* kc__verify_op(const kc_program* p, const kc__instr* in,
                                const kc__instr_def* def) {
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
    return kc__instr_error(in, KC_INVALID_ARGUMENT, "%s: expected %s operands, got %zu", def->name,
                           want, n);
  }
  size_t k = in->num_computations;
  if (def->num_computations >= 0 ? k != (size_t)def->num_computations : k == 0) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "%s: expected %s%d called computation%s, got %zu", def->name,
                           def->num_computations < 0 ? "at least " : "",
                           def->num_computations < 0 ? 1 : def->num_computations,
                           def->num_computations == 1 || def->num_computations < 0 ? "" : "s", k);
  }
  for (size_t i = 0; i < in->attrs.count; ++i) {
    kc_string_view name = in->attrs.entries[i].name;
    bool known = false;
    for (const char* const* a = def->attrs; *a && !known; ++a) known = kc_sv_equal(name, kc_sv(*a));
    if (!known) {
      return kc__instr_error(in, KC_INVALID_ARGUMENT, "%s: attribute %s is not one it reads",
                             def->name, KC__Q(name));
    }
  }
  return def->verify(p, in);
}

kc_status* kc__verify_instr(const kc_program* p, const kc__instr* in) {
  const kc__instr_def* def = in->def;
  if (def->kind == KC__INSTR_KERNEL) return kc__verify_op(p, in, def);
  return def->verify ? def->verify(p, in) : NULL;
}
