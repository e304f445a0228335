/* HLO's f8, f6 and f4 floats (f8e4m3fn, f8e5m2, ... f4e2m1fn) in
 * programs: held as their bits in u8, as the StableHLO reader holds them
 * (stablehlo/float8.c) and ml_dtypes and XLA store them. Constants are
 * encoded from their literals (round to nearest, ties to even, each
 * format's overflow rule). What moves values without reading them runs on
 * the bits as they are (reshape, transpose, slice, concatenate, pad,
 * gather, select, control flow, a bitcast-convert to the same width), and
 * so do the instructions that call a computation (reduce, sort, scatter,
 * ...), whose computations read their f8 parameters as any instruction
 * does. Any other instruction computes in f32: its operands of these
 * types are decoded (a lookup in the format's table), and a result of one
 * is computed in f32 and rounded once to it (float8.h). Custom calls,
 * rng-bit-generator, fft, triangular-solve and topk of these types are
 * refused. */
#include <stdio.h>

#include "program/frontend/float8.h"
#include "program/frontend/parse_internal.h"

static const kc__f8_format* kc__format(uint8_t f8) { return f8 ? kc__f8_at(f8 - 1) : NULL; }

kc_status* kc__f8_constant(kc__hlo_parser* p, kc__hlo_instr* ins, void** data, size_t* size) {
  const kc__f8_format* f = kc__format(ins->layouts.first_f8);
  kc_shape* bits = ins->shape;
  kc_shape* wide = NULL;
  /* the literal read as f64, then each value encoded */
  KC_RETURN_IF_ERROR(kc_shape_create_array(kc_dtype_make(kDLFloat, 64, 1), kc_shape_get_dims(bits),
                                           kc_shape_get_rank(bits), &wide));
  ins->shape = wide;
  void* values = NULL;
  size_t values_size = 0;
  kc_status* st = kc__parse_constant(p, ins, &values, &values_size);
  ins->shape = bits;
  if (st) {
    st = kc_status_add_context(st, "a constant of %s, read as f64 values and rounded",
                               kc__f8_name(f));
  }
  size_t n = values_size / sizeof(double);
  unsigned char* out = st ? NULL : kc__arena_alloc(&p->tmp, n ? n : 1);
  if (!st && !out) st = kc__parse_oom();
  for (size_t i = 0; !st && i < n; ++i) {
    double v;
    memcpy(&v, (const char*)values + i * sizeof v, sizeof v);
    unsigned b;
    if (!kc__f8_encode(f, v, &b)) {
      st = kc__lex_fail(&p->lx, &ins->name_tok, "constant %s: element %zu is NaN, which %s has not",
                        KC__Q(ins->name_tok.text), i, kc__f8_name(f));
    }
    if (!st) out[i] = (unsigned char)b;
  }
  kc_shape_destroy(wide);
  if (st) return st;
  *data = out;
  *size = n;
  return NULL;
}

/* Whether ins only moves values (or calls computations that read them):
 * it runs on the bits. */
static bool kc__moves_bits(const kc__hlo_instr* ins) {
  switch (ins->op->kind) {
    case KC__INSTR_PARAMETER:
    case KC__INSTR_CONSTANT:
    case KC__INSTR_TUPLE:
    case KC__INSTR_GET_TUPLE_ELEMENT:
    case KC__INSTR_RESHAPE:
    case KC__INSTR_BROADCAST:
    case KC__INSTR_CALL:
    case KC__INSTR_COPY:
    case KC__INSTR_BITCAST:
      return true;
    case KC__INSTR_EXPANDED: /* map and scan: their computations */
      return !strcmp(ins->op->name, "map") || !strcmp(ins->op->name, "scan");
    default:
      break;
  }
  static const int32_t ops[] = {
      KC_OP_TRANSPOSE,   KC_OP_SLICE,       KC_OP_DYNAMIC_SLICE,  KC_OP_DYNAMIC_UPDATE_SLICE,
      KC_OP_CONCATENATE, KC_OP_REVERSE,     KC_OP_PAD,            KC_OP_GATHER,
      KC_OP_SELECT,      KC_OP_WHILE,       KC_OP_CONDITIONAL,    KC_OP_BITCAST_CONVERT,
      KC_OP_REDUCE,      KC_OP_REDUCE_WINDOW, KC_OP_SELECT_AND_SCATTER, KC_OP_SORT,
      KC_OP_SCATTER};
  for (size_t i = 0; i < KC__ARRAY_SIZE(ops); ++i) {
    if (ins->op->op == ops[i]) return true;
  }
  return false;
}

kc_status* kc__f8_prepare(kc__hlo_parser* p, kc__hlo_instr* ins, kc_shape** saved) {
  *saved = NULL;
  size_t n = kc__num_operands(p);
  const kc__f8_format* any = kc__format(ins->layouts.first_f8);
  bool some = ins->layouts.any_f8;
  for (size_t i = 0; i < n && !some; ++i) some = kc__operand_value(p, i)->f8 != 0;
  for (size_t i = 0; i < n && !any; ++i) any = kc__format(kc__operand_value(p, i)->f8);
  if (!some) return NULL;
  int32_t op = ins->op->op;
  bool moves = kc__moves_bits(ins);
  /* what reads the bits as integers, and a tuple computed from them */
  bool refused = ins->op->kind == KC__INSTR_CUSTOM_CALL || op == KC_OP_RNG_BIT_GENERATOR ||
                 op == KC_OP_FFT || op == KC_OP_TRIANGULAR_SOLVE || op == KC_OP_TOPK ||
                 (ins->op->kind == KC__INSTR_EXPANDED && !moves) ||
                 (!moves && kc_shape_is_tuple(ins->shape));
  if (!refused && (op == KC_OP_BITCAST_CONVERT || ins->op->kind == KC__INSTR_BITCAST)) {
    /* the same width only: the bits are the value */
    refused = n != 1 || kc_shape_is_tuple(ins->shape) ||
              kc_shape_get_dtype(kc__operand_value(p, 0)->shape).bits !=
                  kc_shape_get_dtype(ins->shape).bits;
  }
  if (refused) {
    const char* name = any ? kc__f8_name(any) : "an f8 type";
    return kc__lex_fail(&p->lx, &ins->opcode_tok,
                        "%s %s of %s is not supported (kcall holds %s values as their bits, "
                        "which it would read as integers)",
                        ins->op->name, KC__Q(ins->name_tok.text), name, name);
  }
  if (moves) return NULL;
  kc_string_view name = ins->name_tok.text;
  KC_RETURN_IF_ERROR(kc__scoped_name(p, &name));
  int32_t* ids = (int32_t*)(void*)p->operands.data;
  kc__expr e = {.b = p->b, .prefix = name, .what = "f8_decode"};
  for (size_t i = 0; i < n; ++i) {
    const kc__hlo_value* v = kc__operand_value(p, i);
    if (v->f8) ids[i] = kc__e_f8_decode(&e, ids[i], v->shape, kc__format(v->f8));
  }
  KC_RETURN_IF_ERROR(e.st);
  if (!ins->layouts.first_f8 || kc_shape_is_tuple(ins->shape)) return NULL;
  /* The result computed in f32 (kc__f8_finish encodes it). */
  kc_shape* f32 = NULL;
  KC_RETURN_IF_ERROR(kc_shape_create_array(kc_dtype_make(kDLFloat, 32, 1),
                                           kc_shape_get_dims(ins->shape),
                                           kc_shape_get_rank(ins->shape), &f32));
  *saved = ins->shape;
  ins->shape = f32;
  return NULL;
}

kc_status* kc__f8_finish(kc__hlo_parser* p, kc__hlo_instr* ins, kc_shape* saved, int32_t* id) {
  kc_shape_destroy(ins->shape);
  ins->shape = saved;
  if (!id) return NULL;
  kc_string_view name = ins->name_tok.text;
  KC_RETURN_IF_ERROR(kc__scoped_name(p, &name));
  kc__expr e = {.b = p->b, .prefix = name, .what = "f8_encode"};
  int32_t y = kc__e_f8_encode(&e, *id, saved, kc__format(ins->layouts.first_f8));
  if (!e.st) *id = y;
  return e.st;
}
