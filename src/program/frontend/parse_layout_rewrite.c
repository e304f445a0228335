/* Layouts other than row-major, rewritten into transposes: kcall computes
 * on logical values, so only where bytes are reinterpreted (a bitcast,
 * and the buffers a custom call sees) does a layout add instructions that
 * bring values to and from the order of their bytes. */
#include <stdio.h>

#include "program/frontend/parse_internal.h"

/* The dimensions from major to minor of a layout. */
static void kc__major_to_minor(const int8_t* m2m, int32_t rank, int64_t* out) {
  for (int32_t k = 0; k < rank; ++k) out[k] = m2m[rank - 1 - k];
}

static kc_status* kc__add_transpose(kc_program_builder* b, int32_t x, const kc_shape* from,
                                    const int64_t* perm, kc_string_view name, int32_t* out_id) {
  int32_t rank = kc_shape_get_rank(from);
  int64_t dims[KC_TENSOR_MAX_NDIM];
  for (int32_t k = 0; k < rank; ++k) dims[k] = kc_shape_get_dims(from)[perm[k]];
  kc_shape* shape = NULL;
  KC_RETURN_IF_ERROR(kc_shape_create_array(kc_shape_get_dtype(from), dims, rank, &shape));
  kc_attr a = {
      .name = KC_SV_LIT("dimensions"),
      .type = KC_ATTR_ARRAY,
      .elem_type = KC_ATTR_I64,
      .v.array = {.data = perm, .count = (size_t)rank},
  };
  kc_attr_dict attrs = {.count = 1, .entries = &a};
  kc_instruction_desc d = {
      .struct_size = sizeof d,
      .op = KC_OP_TRANSPOSE,
      .result_shape = shape,
      .operands = &x,
      .num_operands = 1,
      .attrs = &attrs,
  };
  kc_status* st = kc_program_builder_add_instruction(b, &d, name, out_id);
  kc_shape_destroy(shape);
  return st;
}

/* "NAME/suffix" in `arena`, for the instructions a conversion adds. */
static kc_string_view kc__suffix_in(kc__arena* arena, kc_string_view name, const char* suffix) {
  size_t n = strlen(suffix);
  char* s = kc__arena_alloc(arena, name.size + n + 2);
  if (!s) return (kc_string_view){NULL, 0};
  memcpy(s, name.data, name.size);
  s[name.size] = '/';
  memcpy(s + name.size + 1, suffix, n);
  return (kc_string_view){s, name.size + 1 + n};
}

/* The same in the parser's scratch. */
static kc_string_view kc__suffixed_name(kc__hlo_parser* p, kc_string_view name,
                                        const char* suffix) {
  return kc__suffix_in(&p->tmp, name, suffix);
}

kc_status* kc__layout_to_physical(kc_program_builder* b, kc__arena* names, int32_t x,
                                  const kc_shape* shape, const int8_t* m2m,
                                  kc_string_view name, int32_t* out_id) {
  int64_t perm[KC_TENSOR_MAX_NDIM];
  kc__major_to_minor(m2m, kc_shape_get_rank(shape), perm);
  int32_t t = -1;
  kc_string_view n1 = kc__suffix_in(names, name, "to_layout");
  kc_string_view n2 = kc__suffix_in(names, name, "as_laid_out");
  if (!n1.data || !n2.data) return kc__parse_oom();
  KC_RETURN_IF_ERROR(kc__add_transpose(b, x, shape, perm, n1, &t));
  int32_t ops[1] = {t};
  return kc_program_builder_add_op(b, KC_OP_RESHAPE, shape, ops, 1, n2, out_id);
}

kc_status* kc__layout_from_physical(kc_program_builder* b, kc__arena* names, int32_t x,
                                    const kc_shape* shape, const int8_t* m2m,
                                    kc_string_view name, int32_t* out_id) {
  int32_t rank = kc_shape_get_rank(shape);
  int64_t perm[KC_TENSOR_MAX_NDIM], inverse[KC_TENSOR_MAX_NDIM], dims[KC_TENSOR_MAX_NDIM];
  kc__major_to_minor(m2m, rank, perm);
  for (int32_t k = 0; k < rank; ++k) {
    dims[k] = kc_shape_get_dims(shape)[perm[k]];
    inverse[perm[k]] = k;
  }
  kc_shape* physical = NULL;
  KC_RETURN_IF_ERROR(kc_shape_create_array(kc_shape_get_dtype(shape), dims, rank, &physical));
  kc_string_view n1 = kc__suffix_in(names, name, "in_layout_order");
  int32_t r = -1;
  int32_t ops[1] = {x};
  kc_status* st = n1.data ? kc_program_builder_add_op(b, KC_OP_RESHAPE, physical, ops, 1,
                                                      n1, &r)
                          : kc__parse_oom();
  if (!st) st = kc__add_transpose(b, r, physical, inverse, name, out_id);
  kc_shape_destroy(physical);
  return st;
}

/* bitcast reinterprets bytes: with both layouts row-major it is a reshape;
 * otherwise the operand's elements in its physical order, reshaped to the
 * result's physical dims, then brought to the result's logical order. */
kc_status* kc__build_bitcast(kc__hlo_parser* p, kc__hlo_instr* ins, kc_string_view name,
                             int32_t* out_id) {
  const kc__hlo_value* v = kc__operand_value(p, 0);
  int32_t x = v->id;
  bool arrays = !kc_shape_is_tuple(v->shape) && !kc_shape_is_tuple(ins->shape);
  if (arrays && !kc_dtype_equal(kc_shape_get_dtype(v->shape), kc_shape_get_dtype(ins->shape))) {
    /* Another element type of the same width: its bits, reinterpreted
     * (bitcast-convert), then reshaped. */
    DLDataType from = kc_shape_get_dtype(v->shape), to = kc_shape_get_dtype(ins->shape);
    if ((size_t)from.bits * from.lanes != (size_t)to.bits * to.lanes) {
      return kc__lex_fail(&p->lx, &ins->opcode_tok,
                          "bitcast %s: expected an element type of the operand's width "
                          "(%u bits), got one of %u bits",
                          KC__Q(ins->name_tok.text), (unsigned)(from.bits * from.lanes),
                          (unsigned)(to.bits * to.lanes));
    }
    if (v->nondefault || ins->layouts.first_nondefault) {
      return kc__lex_fail(&p->lx, &ins->opcode_tok,
                          "bitcast %s: another element type and a layout other than the "
                          "row-major one together are not supported",
                          KC__Q(ins->name_tok.text));
    }
    kc_shape* cast_shape = NULL;
    KC_RETURN_IF_ERROR(kc_shape_create_array(to, kc_shape_get_dims(v->shape),
                                             kc_shape_get_rank(v->shape), &cast_shape));
    bool same_dims = kc_shape_equal(cast_shape, ins->shape);
    kc_string_view n = same_dims ? name : kc__suffixed_name(p, name, "bits");
    kc_status* st = n.data ? NULL : kc__parse_oom();
    kc_instruction_desc d = {
        .struct_size = sizeof d,
        .op = KC_OP_BITCAST_CONVERT,
        .result_shape = cast_shape,
        .operands = &x,
        .num_operands = 1,
    };
    int32_t cast = -1;
    if (!st) st = kc_program_builder_add_instruction(p->b, &d, n, same_dims ? out_id : &cast);
    kc_shape_destroy(cast_shape);
    if (st || same_dims) return st;
    return kc_program_builder_add_op(p->b, KC_OP_RESHAPE, ins->shape, &cast, 1, name, out_id);
  }
  if (!v->nondefault && !ins->layouts.first_nondefault) {
    return kc_program_builder_add_op(p->b, KC_OP_RESHAPE, ins->shape, &x, 1, name, out_id);
  }
  if (kc_shape_is_tuple(v->shape) || kc_shape_is_tuple(ins->shape)) {
    return kc__lex_fail(&p->lx, &ins->opcode_tok, "bitcast %s: expected arrays",
                        KC__Q(ins->name_tok.text));
  }
  int32_t phys = x;
  if (v->nondefault) {
    int64_t perm[KC_TENSOR_MAX_NDIM];
    kc__major_to_minor(v->m2m, kc_shape_get_rank(v->shape), perm);
    kc_string_view n = kc__suffixed_name(p, name, "operand_in_layout_order");
    if (!n.data) return kc__parse_oom();
    KC_RETURN_IF_ERROR(kc__add_transpose(p->b, x, v->shape, perm, n, &phys));
  }
  if (!ins->layouts.first_nondefault) {
    return kc_program_builder_add_op(p->b, KC_OP_RESHAPE, ins->shape, &phys, 1, name, out_id);
  }
  return kc__layout_from_physical(p->b, &p->tmp, phys, ins->shape, ins->layouts.first, name,
                                  out_id);
}

/* A custom call whose result is a tuple of arrays, some laid out other
 * than row-major (the LAPACK calls JAX emits: column-major matrices beside
 * row-major vectors): the call, then a tuple of its elements, each read
 * back from its layout. */
static kc_status* kc__build_tuple_call(kc__hlo_parser* p, kc__hlo_instr* ins,
                                       const kc_custom_call_desc* desc, kc_string_view name,
                                       int32_t* out_id) {
  const kc_shape* s = ins->shape;
  size_t n = kc_shape_get_tuple_size(s);
  size_t recorded = 0;
  for (size_t i = 0; i < n && i < KC__LAYOUT_LEAVES; ++i) {
    recorded += ins->layouts.leaf_nondefault[i];
  }
  bool flat = n <= KC__LAYOUT_LEAVES && recorded == ins->layouts.nondefault;
  for (size_t i = 0; flat && i < n; ++i) flat = !kc_shape_is_tuple(kc_shape_get_element(s, i));
  if (!flat) {
    return kc__lex_fail(&p->lx, &ins->shape_tok,
                        "custom-call %s: non-default layouts in a tuple result are supported "
                        "only for a tuple of at most %d arrays of rank %d or less",
                        KC__Q(ins->name_tok.text), KC__LAYOUT_LEAVES, KC__LAYOUT_RANK);
  }
  kc_string_view call = kc__suffixed_name(p, name, "laid_out");
  int32_t* elems = kc__arena_alloc(&p->tmp, (n + 1) * sizeof *elems);
  if (!call.data || !elems) return kc__parse_oom();
  int32_t r = -1;
  KC_RETURN_IF_ERROR(kc_program_builder_add_custom_call(p->b, desc, call, &r));
  for (size_t i = 0; i < n; ++i) {
    char suffix[32];
    snprintf(suffix, sizeof suffix, "element%zu", i);
    kc_string_view en = kc__suffixed_name(p, name, suffix);
    if (!en.data) return kc__parse_oom();
    KC_RETURN_IF_ERROR(
        kc_program_builder_add_get_tuple_element(p->b, r, (int64_t)i, en, &elems[i]));
    if (!ins->layouts.leaf_nondefault[i]) continue;
    kc_string_view ln = kc__suffixed_name(p, en, "logical");
    if (!ln.data) return kc__parse_oom();
    KC_RETURN_IF_ERROR(kc__layout_from_physical(p->b, &p->tmp, elems[i],
                                                kc_shape_get_element(s, i),
                                                ins->layouts.leaf[i], ln, &elems[i]));
  }
  return kc_program_builder_add_tuple(p->b, elems, n, name, out_id);
}

/* A custom call sees the bytes of its operands' and result's layouts: an
 * operand whose layout (its operand_layout_constraints entry, else its
 * own) is not row-major is handed over in that layout, and a result laid
 * out otherwise is read back from it. */
kc_status* kc__build_custom_call(kc__hlo_parser* p, kc__hlo_instr* ins,
                                 const kc_custom_call_desc* given, kc_string_view name,
                                 int32_t* out_id) {
  kc_custom_call_desc copy = *given;
  kc_custom_call_desc* desc = &copy;
  size_t n = desc->num_operands;
  int32_t* ops = kc__arena_alloc(&p->tmp, (n + 1) * sizeof *ops);
  if (!ops) return kc__parse_oom();
  size_t constraints = ins->constraints.size / sizeof(kc__hlo_constraint);
  if (constraints && constraints != n) {
    return kc__lex_fail(&p->lx, &ins->opcode_tok,
                        "custom-call %s: operand_layout_constraints: expected %zu shapes (one "
                        "per operand), got %zu",
                        KC__Q(ins->name_tok.text), n, constraints);
  }
  /* Operands: each in its constrained (else its own) layout. */
  for (size_t i = 0; i < n; ++i) {
    const kc__hlo_value* v = kc__operand_value(p, i);
    ops[i] = v->id;
    const kc__hlo_constraint* written = (const kc__hlo_constraint*)(const void*)ins->constraints.data;
    bool constrained = i < ins->constraints.size / sizeof *written;
    bool nondefault = constrained ? written[i].nondefault : v->nondefault;
    if (!nondefault) continue;
    if (kc_shape_is_tuple(v->shape)) {
      return kc__lex_fail(&p->lx, &ins->opcode_tok,
                          "custom-call %s: operand %zu: a tuple with non-default layouts "
                          "is not supported",
                          KC__Q(ins->name_tok.text), i);
    }
    char suffix[32];
    snprintf(suffix, sizeof suffix, "operand%zu", i);
    kc_string_view n1 = kc__suffixed_name(p, name, suffix);
    if (!n1.data) return kc__parse_oom();
    KC_RETURN_IF_ERROR(kc__layout_to_physical(p->b, &p->tmp, v->id, v->shape,
                                              constrained ? written[i].m2m : v->m2m, n1,
                                              &ops[i]));
  }
  /* The call, and its result read back from its layout. */
  desc->operands = ops;
  if (ins->layouts.nondefault == 0) {
    return kc_program_builder_add_custom_call(p->b, desc, name, out_id);
  }
  if (kc_shape_is_tuple(ins->shape)) return kc__build_tuple_call(p, ins, desc, name, out_id);
  kc_string_view call = kc__suffixed_name(p, name, "laid_out");
  if (!call.data) return kc__parse_oom();
  int32_t r = -1;
  KC_RETURN_IF_ERROR(kc_program_builder_add_custom_call(p->b, desc, call, &r));
  return kc__layout_from_physical(p->b, &p->tmp, r, ins->shape, ins->layouts.first, name,
                                  out_id);
}
