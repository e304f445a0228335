/* map: its computation's scalar instructions added again on whole arrays
 * (map.h). */
#include <stdio.h>
#include <stdlib.h>

#include "internal/common.h"
#include "program/frontend/map.h"
#include "program/instr/instr.h"

/* Whether `in`'s result element i depends only on its operands' elements
 * i: what can be added again on arrays of any dims. */
static bool kc__maps_elementwise(const kc__instr* in) {
  const kc__instr_def* d = in->def;
  if (!d) return false;
  if (d->kind == KC__INSTR_ELEMENTWISE || d->tile) return true;
  return d->kind == KC__INSTR_KERNEL &&
         (in->op == KC_OP_COMPLEX || in->op == KC_OP_REAL || in->op == KC_OP_IMAG);
}

static bool kc__is_scalar(const kc_shape* s) {
  return s && !kc_shape_is_tuple(s) && kc_shape_get_rank(s) == 0;
}

/* A list of integers as "{0,1}". */
static void kc__format_ints(const int64_t* v, size_t n, char* buf, size_t cap) {
  size_t len = (size_t)snprintf(buf, cap, "{");
  for (size_t i = 0; i < n && len < cap; ++i) {
    len += (size_t)snprintf(buf + len, cap - len, "%s%lld", i ? "," : "", (long long)v[i]);
  }
  if (len < cap) snprintf(buf + len, cap - len, "}");
}

/* The operands against the result and the computation's parameters. */
static kc_status* kc__check_map(const kc_program* f, const kc_shape* const* shapes, size_t n,
                                const kc_shape* result, const int64_t* dims, size_t nd) {
  char want[256], got[256];
  if (kc_shape_is_tuple(result)) {
    kc_shape_format(result, got, sizeof got);
    return kc_status_create(KC_INVALID_ARGUMENT, "expected an array result, got %s", got);
  }
  int32_t rank = kc_shape_get_rank(result);
  bool in_order = nd == (size_t)rank;
  for (size_t i = 0; in_order && i < nd; ++i) in_order = dims[i] == (int64_t)i;
  if (!in_order) {
    kc__format_ints(dims, nd, got, sizeof got);
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "dimensions: expected every dimension of the rank-%d result in "
                            "order, got %s",
                            rank, got);
  }
  if (f->num_params != n) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "its computation %s takes %zu parameters, but map has %zu operands",
                            KC__QS(f->name), f->num_params, n);
  }
  for (size_t i = 0; i < n; ++i) {
    const kc_shape* param = f->instrs[f->params[i]].shape;
    const kc_shape* s = shapes[i];
    bool dims_match = !kc_shape_is_tuple(s) && kc_shape_get_rank(s) == rank &&
                      !memcmp(kc_shape_get_dims(s), kc_shape_get_dims(result),
                              (size_t)rank * sizeof(int64_t));
    bool type_match = kc__is_scalar(param) && !kc_shape_is_tuple(s) &&
                      kc_shape_get_dtype(param).code == kc_shape_get_dtype(s).code &&
                      kc_shape_get_dtype(param).bits == kc_shape_get_dtype(s).bits;
    if (!dims_match || !type_match) {
      kc_shape_format(s, got, sizeof got);
      kc_shape_format(param, want, sizeof want);
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "operand %zu: expected the result's dimensions and the element "
                              "type of parameter %zu of its computation (%s), got %s",
                              i, i, want, got);
    }
  }
  const kc_shape* root = f->instrs[f->root].shape;
  if (!kc__is_scalar(root) || kc_shape_get_dtype(root).code != kc_shape_get_dtype(result).code ||
      kc_shape_get_dtype(root).bits != kc_shape_get_dtype(result).bits) {
    kc_shape_format(root, got, sizeof got);
    kc_shape_format(result, want, sizeof want);
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "its computation returns %s, which is not an element of %s", got,
                            want);
  }
  return NULL;
}

/* Instruction `in` of the computation, added on arrays of `dims`; ids maps
 * the computation's ids to the program's. */
static kc_status* kc__map_one(kc_program_builder* b, const kc_program* f, const kc__instr* in,
                              const int32_t* operands, const int32_t* ids,
                              const kc_shape* result, kc_string_view name, int32_t* out_id) {
  if (!kc__is_scalar(in->shape)) {
    char got[256];
    kc_shape_format(in->shape, got, sizeof got);
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "%s %s of its computation %s has shape %s: kcall maps computations "
                            "of scalar instructions only",
                            kc__instr_name(in->op), KC__QS(in->name), KC__QS(f->name), got);
  }
  int kind = in->def ? (int)in->def->kind : -1;
  if (kind == KC__INSTR_PARAMETER) {
    *out_id = operands[in->number];
    return NULL;
  }
  if (kind == KC__INSTR_RESHAPE || kind == KC__INSTR_BROADCAST) { /* scalar to scalar */
    *out_id = ids[in->operands[0]];
    return NULL;
  }
  char full_name[512];
  snprintf(full_name, sizeof full_name, "%.*s/%s", (int)name.size, name.data, in->name);
  kc_shape* shape = NULL;
  KC_RETURN_IF_ERROR(kc_shape_create_array(kc_shape_get_dtype(in->shape),
                                           kc_shape_get_dims(result),
                                           kc_shape_get_rank(result), &shape));
  int32_t* args = kc__calloc(in->num_operands + 1, sizeof *args);
  kc_status* st = args ? NULL : kc__status_oom();
  for (size_t i = 0; !st && i < in->num_operands; ++i) args[i] = ids[in->operands[i]];
  if (st) {
  } else if (kind == KC__INSTR_CONSTANT) {
    int32_t c = -1;
    char scalar_name[520];
    snprintf(scalar_name, sizeof scalar_name, "%s.scalar", full_name);
    st = kc_program_builder_add_constant(b, in->shape, in->literal, in->literal_size,
                                         kc_sv(scalar_name), &c);
    if (!st) st = kc_program_builder_add_broadcast(b, shape, c, NULL, 0, kc_sv(full_name), out_id);
  } else if (kind == KC__INSTR_ELEMENTWISE) {
    st = kc_program_builder_add_op(b, (kc_opcode)in->op, shape, args, in->num_operands,
                                   kc_sv(full_name), out_id);
  } else if (kc__maps_elementwise(in)) {
    kc_instruction_desc d = {.struct_size = sizeof d,
                             .op = in->op,
                             .result_shape = shape,
                             .operands = args,
                             .num_operands = in->num_operands,
                             .attrs = in->attrs.count ? &in->attrs : NULL,
                             .computations = in->computations,
                             .num_computations = in->num_computations};
    st = kc_program_builder_add_instruction(b, &d, kc_sv(full_name), out_id);
  } else {
    st = kc_status_create(KC_INVALID_ARGUMENT,
                          "%s %s of its computation %s is not element-wise: kcall maps "
                          "computations of element-wise instructions only",
                          kc__instr_name(in->op), KC__QS(in->name), KC__QS(f->name));
  }
  if (!st && in->line > 0) st = kc_program_builder_set_location(b, *out_id, in->line, in->column);
  kc__free(args);
  kc_shape_destroy(shape);
  return st;
}

kc_status* kc__build_map(kc_program_builder* b, const kc_program* f, const int32_t* operands,
                         const kc_shape* const* operand_shapes, size_t n,
                         const kc_shape* result, const int64_t* dimensions,
                         size_t num_dimensions, kc_string_view name, int32_t* out_id) {
  kc_status* st = kc__check_map(f, operand_shapes, n, result, dimensions, num_dimensions);
  int32_t* ids = st ? NULL : kc__malloc((f->count ? f->count : 1) * sizeof *ids);
  if (!st && !ids) st = kc__status_oom();
  for (size_t i = 0; ids && !st && i < f->count; ++i) {
    st = kc__map_one(b, f, &f->instrs[i], operands, ids, result, name, &ids[i]);
  }
  if (!st) *out_id = ids[f->root];
  kc__free(ids);
  return st ? kc_status_add_context(st, "map") : NULL;
}
