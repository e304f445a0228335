/* HLO's integer types narrower than a byte (s2, s4, u2, u4) in programs:
 * held one to a byte of s8 or u8, as the StableHLO reader holds i2 and i4
 * (stablehlo/narrow.c) and ml_dtypes holds int4, each value kept in its
 * type's range. The result of an instruction that computes one is wrapped
 * to its low bits (sign-extended for s2 and s4): the narrow type's own
 * arithmetic, since a byte's wraps modulo 2^8 and the narrow type's modulo
 * 2^bits, which divides it. A parameter is read by its low bits. The
 * instructions that read the bits above the narrow ones get their operand
 * masked first (shift-right-logical, popcnt, count-leading-zeros), and a
 * float converted to one is clamped to its range first, as the conversion
 * saturates. What a byte cannot stand for is refused: a custom call (its
 * target would read another type), a bitcast between widths, an
 * rng-bit-generator. */
#include <stdio.h>

#include "program/frontend/expr.h"
#include "program/frontend/parse_internal.h"

/* "s4", "u2": the type's HLO name, for messages. */
static const char* kc__narrow_name(bool is_signed, unsigned bits) {
  static const char* const names[2][2] = {{"u2", "u4"}, {"s2", "s4"}};
  return names[is_signed][bits == 4];
}

/* The narrow bits of operand i (0: not narrow). */
static unsigned kc__operand_narrow(const kc__hlo_parser* p, size_t i) {
  return kc__operand_value(p, i)->narrow;
}

kc_status* kc__narrow_constant(kc__hlo_parser* p, const kc__hlo_instr* ins, const void* literal,
                               size_t size) {
  unsigned bits = ins->layouts.first_narrow;
  if (!bits || kc_shape_is_tuple(ins->shape)) return NULL;
  bool is_signed = kc_shape_get_dtype(ins->shape).code == kDLInt;
  int lo = is_signed ? -(1 << (bits - 1)) : 0, hi = is_signed ? (1 << (bits - 1)) - 1 : (1 << bits) - 1;
  const unsigned char* b = literal;
  for (size_t i = 0; i < size; ++i) {
    int v = is_signed ? (int)(signed char)b[i] : (int)b[i];
    if (v < lo || v > hi) {
      return kc__lex_fail(&p->lx, &ins->name_tok,
                          "constant %s: element %zu, %d, is out of the range of %s (%d to %d)",
                          KC__Q(ins->name_tok.text), i, v, kc__narrow_name(is_signed, bits), lo,
                          hi);
    }
  }
  return NULL;
}

kc_status* kc__narrow_prepare(kc__hlo_parser* p, kc__hlo_instr* ins) {
  size_t n = kc__num_operands(p);
  bool any = ins->layouts.any_narrow;
  for (size_t i = 0; i < n && !any; ++i) any = kc__operand_narrow(p, i) != 0;
  if (!any) return NULL;
  const char* what = NULL;
  int32_t op = ins->op->op;
  unsigned out = kc_shape_is_tuple(ins->shape) ? 0 : ins->layouts.first_narrow;
  unsigned in = n ? kc__operand_narrow(p, 0) : 0;
  if (ins->op->kind == KC__INSTR_CUSTOM_CALL) {
    what = "a custom call's operands and results (its target would read them as another type)";
  } else if (op == KC_OP_RNG_BIT_GENERATOR) {
    what = "rng-bit-generator's bits";
  } else if ((op == KC_OP_BITCAST_CONVERT || ins->op->kind == KC__INSTR_BITCAST) && n == 1) {
    unsigned from = in ? in : kc_shape_get_dtype(kc__operand_value(p, 0)->shape).bits;
    unsigned to = out ? out : kc_shape_get_dtype(ins->shape).bits;
    if (from != to) what = "a bitcast between types of different widths (their bits are not packed)";
  }
  if (what) {
    return kc__lex_fail(&p->lx, &ins->opcode_tok,
                        "%s %s: s2, s4, u2 and u4 are held one to a byte, so kcall does not "
                        "support them in %s",
                        ins->op->name, KC__Q(ins->name_tok.text), what);
  }
  kc_string_view name = ins->name_tok.text;
  KC_RETURN_IF_ERROR(kc__scoped_name(p, &name));
  int32_t* ids = (int32_t*)(void*)p->operands.data;
  kc__expr e = {.b = p->b, .prefix = name, .what = "narrow_in"};
  const kc_shape* x = n ? kc__operand_value(p, 0)->shape : NULL;
  if (op == KC_OP_CONVERT && out && n == 1 && !kc_shape_is_tuple(x)) {
    DLDataType dt = kc_shape_get_dtype(x);
    if (dt.code == kDLFloat || dt.code == kDLBfloat) {
      ids[0] = kc__e_narrow_clamp(&e, ids[0], x, kc_shape_get_dtype(ins->shape).code == kDLInt,
                                  out);
    }
  }
  bool reads_upper = op == KC_OP_SHIFT_RIGHT_LOGICAL || op == KC_OP_POPCNT ||
                     op == KC_OP_COUNT_LEADING_ZEROS;
  if (reads_upper && in) {
    e.shape = x;
    ids[0] = kc__e_op(&e, KC_OP_AND, ids[0], kc__e_const_int(&e, (1u << in) - 1));
  }
  return e.st;
}

kc_status* kc__narrow_finish(kc__hlo_parser* p, kc__hlo_instr* ins, int32_t* id) {
  unsigned bits = kc_shape_is_tuple(ins->shape) ? 0 : ins->layouts.first_narrow;
  kc__instr_kind kind = ins->op->kind;
  /* What computes no new values: a constant (checked), a tuple's element,
   * data reshaped or broadcast. */
  if (!bits || kind == KC__INSTR_CONSTANT || kind == KC__INSTR_GET_TUPLE_ELEMENT ||
      kind == KC__INSTR_RESHAPE || kind == KC__INSTR_BROADCAST || kind == KC__INSTR_TUPLE) {
    return NULL;
  }
  kc_string_view name = ins->name_tok.text;
  KC_RETURN_IF_ERROR(kc__scoped_name(p, &name));
  kc__expr e = {.b = p->b, .prefix = name, .what = "narrow", .shape = ins->shape};
  int32_t y = *id;
  /* count-leading-zeros of the masked byte counts 8 - bits more */
  if (ins->op->op == KC_OP_COUNT_LEADING_ZEROS) {
    y = kc__e_op(&e, KC_OP_SUBTRACT, y, kc__e_const_int(&e, 8 - bits));
  }
  y = kc__e_narrow_wrap(&e, y, bits);
  if (!e.st) *id = y;
  return e.st;
}
