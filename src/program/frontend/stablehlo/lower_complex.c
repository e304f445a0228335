/* StableHLO's complex forms of ops whose HLO instruction takes reals
 * only, built from instructions that take complex values (lower.c's
 * table names these rules):
 *   maximum, minimum  lexicographic in (real, imaginary)
 *   atan2             -i log((x + i y) / sqrt(x^2 + y^2)), the
 *                     specification's formula
 *   cbrt              the principal cube root: |z|^(1/3) at a third of
 *                     z's argument
 *   logistic          1 / (1 + exp(-z)), as XLA expands it
 * Real operands go to the HLO instruction. The decompositions themselves
 * are the front ends' (../expr.c), so HLO text gets them too. */
#include "program/frontend/stablehlo/lower_internal.h"
#include "program/program_internal.h"

/* maximum and minimum: of complex operands, expr.h's kc__e_complex;
 * otherwise the HLO instruction, which refuses complex ones as XLA's does. */
kc_status* kc__shlo_lower_max_min(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r) {
  return kc__shlo_lower_complex_math(s, op, r);
}

kc_status* kc__shlo_lower_complex_math(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r) {
  size_t n = r->opcode == KC_OP_ATAN2 || r->opcode == KC_OP_MAXIMUM || r->opcode == KC_OP_MINIMUM
                 ? 2
                 : 1;
  const kc__shlo_value* a = kc__shlo_operand(s, op, 0);
  const kc_shape* c = a->shape;
  if (kc_shape_is_tuple(c) || !kc__e_is_complex_form(r->opcode, kc_shape_get_dtype(c)) ||
      kc__shlo_num_operands(op) != n || kc__shlo_num_result_types(op) != 1 ||
      (n == 2 && !kc_shape_equal(c, kc__shlo_operand(s, op, 1)->shape))) {
    return kc__shlo_lower_plain(s, op, r);
  }
  int32_t ids[2] = {a->id, n == 2 ? kc__shlo_operand(s, op, 1)->id : -1};
  kc__expr e = KC__SHLO_EXPR(s, op, kc__instr_name(r->opcode));
  int32_t y = kc__e_complex(&e, r->opcode, ids, c);
  KC_RETURN_IF_ERROR(e.st);
  kc__shlo_value v = {.id = y, .shape = kc__shlo_result_type(op, 0)};
  return kc__shlo_bind_values(s, op, &v, 1);
}
