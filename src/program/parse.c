/* The HLO-text parser: kc_program_parse.
 *
 * Programs are made only through the public builder (program.h), so this
 * file does not depend on how a program is represented. Names map to
 * instructions through a hash map keyed by views into the text, and every
 * instruction's temporaries live in one arena emptied after it is added,
 * so parsing takes time and memory linear in the text. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal/half.h"
#include "internal/strmap.h"
#include "program/ops.h"
#include "program/parse_internal.h"
#include "program/shape_internal.h"

/* ======================================================================== */
/* Modules                                                                  */
/* ======================================================================== */

typedef enum kc__hlo_kind {
  KC__HLO_PARAMETER,
  KC__HLO_CONSTANT,
  KC__HLO_TUPLE,
  KC__HLO_GET_TUPLE_ELEMENT,
  KC__HLO_CUSTOM_CALL,
  KC__HLO_BROADCAST,
  KC__HLO_BINARY,
  KC__HLO_UNARY,
  KC__HLO_CALL, /* fusion and call: the called computation, inlined */
  KC__HLO_COPY, /* its operand's value: layouts are all row-major */
  KC__HLO_TABLE, /* an instruction of the op table (program/ops.h) */
  KC__HLO_BITCAST /* a reshape, through the physical order where layouts differ */
} kc__hlo_kind;

typedef struct kc__hlo_opcode {
  const char* name;
  size_t size; /* strlen(name) */
  kc__hlo_kind kind;
  kc_opcode op; /* for BINARY and UNARY */
} kc__hlo_opcode;

#define KC__OPCODE(name, kind, op) {name, sizeof(name) - 1, kind, op}
static const kc__hlo_opcode kc__hlo_opcodes[] = {
    KC__OPCODE("parameter", KC__HLO_PARAMETER, 0),
    KC__OPCODE("constant", KC__HLO_CONSTANT, 0),
    KC__OPCODE("tuple", KC__HLO_TUPLE, 0),
    KC__OPCODE("get-tuple-element", KC__HLO_GET_TUPLE_ELEMENT, 0),
    KC__OPCODE("custom-call", KC__HLO_CUSTOM_CALL, 0),
    KC__OPCODE("add", KC__HLO_BINARY, KC_OP_ADD),
    KC__OPCODE("subtract", KC__HLO_BINARY, KC_OP_SUBTRACT),
    KC__OPCODE("multiply", KC__HLO_BINARY, KC_OP_MULTIPLY),
    KC__OPCODE("divide", KC__HLO_BINARY, KC_OP_DIVIDE),
    KC__OPCODE("maximum", KC__HLO_BINARY, KC_OP_MAXIMUM),
    KC__OPCODE("minimum", KC__HLO_BINARY, KC_OP_MINIMUM),
    KC__OPCODE("negate", KC__HLO_UNARY, KC_OP_NEGATE),
    KC__OPCODE("exponential", KC__HLO_UNARY, KC_OP_EXPONENTIAL),
    KC__OPCODE("exp", KC__HLO_UNARY, KC_OP_EXPONENTIAL),
    KC__OPCODE("log", KC__HLO_UNARY, KC_OP_LOG),
    KC__OPCODE("convert", KC__HLO_UNARY, KC_OP_CONVERT),
    KC__OPCODE("reshape", KC__HLO_UNARY, KC_OP_RESHAPE),
    KC__OPCODE("broadcast", KC__HLO_BROADCAST, 0),
    KC__OPCODE("fusion", KC__HLO_CALL, 0),
    KC__OPCODE("call", KC__HLO_CALL, 0),
    KC__OPCODE("copy", KC__HLO_COPY, 0),
    KC__OPCODE("bitcast", KC__HLO_BITCAST, KC_OP_RESHAPE),
};
#undef KC__OPCODE

/* A computation other than the entry: where its body starts, so that each
 * fusion or call that names it parses it again, inlined (its parameters
 * are the caller's operands). */
typedef struct kc__hlo_computation {
  kc_string_view name;
  kc__lexer at; /* at the body's '{' */
  bool active;  /* being parsed now: a computation cannot call itself */
  /* As a program of its own, for the instructions that call it (reduce,
   * while, conditional); made on first use, released with the module. */
  kc_program* program;
} kc__hlo_computation;

/* The computations of a module, shared by the parsers of its scopes. */
typedef struct kc__hlo_module {
  kc_program_builder* top; /* the entry's: where skipped attributes are counted */
  kc__strmap names; /* name -> index into `computations` */
  kc__buf computations; /* kc__hlo_computation */
} kc__hlo_module;

/* What the parser remembers of an instruction once it is built. */
typedef struct kc__hlo_value {
  kc_string_view name;
  kc_shape* shape; /* owned: the shape the text gives it */
  int32_t id;
  int32_t line;
  /* Its layout as written: minor_to_major for an array; for a tuple only
   * whether a leaf has a non-default one. */
  int8_t m2m[KC_TENSOR_MAX_NDIM];
  bool nondefault;
} kc__hlo_value;

typedef struct kc__hlo_parser {
  kc__lexer lx;
  kc_program_builder* b;
  kc__strmap names; /* name -> index into `values` */
  kc__buf values;   /* kc__hlo_value */
  kc__buf operands; /* int32_t ids of the instruction being parsed */
  kc__buf operand_values; /* int32_t, the same operands as `values` indices */
  kc__buf path;     /* int64_t, a list being parsed */
  kc__buf literal;  /* a constant's bytes */
  kc__arena tmp;    /* what one instruction needs until it is added */
  int32_t root;     /* index into `values`; -1 until a ROOT */
  kc__hlo_module* module;
  /* An inlined computation's scope: its parameters are these instructions
   * (with these shapes), and the names of what it builds are prefixed
   * with the calling instruction's ("fusion.1/add.0"). */
  const int32_t* args;
  kc_shape* const* arg_shapes;
  size_t num_args;
  kc_string_view prefix;
  bool inlined; /* parameters are bound to args, not added */
  int depth;
} kc__hlo_parser;

static kc__hlo_value* kc__value(kc__hlo_parser* p, int32_t index) {
  return (kc__hlo_value*)(void*)p->values.data + index;
}

/* Where the backend_config of a custom call was. */
typedef enum kc__config_kind {
  KC__CONFIG_NONE,
  KC__CONFIG_STRING, /* "...": decoded into tmp */
  KC__CONFIG_BRACES  /* {...}: the text as written */
} kc__config_kind;

/* One instruction while it is parsed. */
typedef struct kc__hlo_instr {
  kc__token name_tok;
  kc__token shape_tok;
  kc__token opcode_tok;
  const kc__hlo_opcode* op;
  kc_shape* shape; /* owned until it moves into a kc__hlo_value */
  uint32_t seen;   /* attributes already given, by bit */
  int64_t index;   /* get-tuple-element */
  const int64_t* dims; /* broadcast */
  size_t num_dims;
  /* custom-call */
  kc_string_view target;
  int32_t api_version;
  int32_t schedule;
  bool has_side_effect;
  kc__config_kind config_kind;
  kc__token config_tok;
  kc_string_view config;
  const kc_output_operand_alias* aliases;
  size_t num_aliases;
  /* fusion (calls=) and call (to_apply=) */
  kc__token callee;
  /* an instruction of the op table: its entry, and the attributes read */
  const kc__op_def* def;
  kc__hlo_opcode table_op; /* what `op` points at for such instructions */
  kc__buf attrs;           /* kc_attr, their values in the parser's tmp */
  kc__layouts layouts; /* of its result shape */
  /* operand_layout_constraints of a custom call: kc__hlo_constraint, one
   * per operand written */
  kc__buf constraints;
  /* Its called computations: kc__hlo_callee, by the attribute naming each. */
  kc__buf callees;
} kc__hlo_instr;

typedef struct kc__hlo_constraint {
  int8_t m2m[KC_TENSOR_MAX_NDIM];
  bool nondefault;
} kc__hlo_constraint;

typedef struct kc__hlo_callee {
  kc_string_view attr;
  kc_program* program; /* the computation's, borrowed */
} kc__hlo_callee;

enum {
  KC__SEEN_INDEX = 1u << 0,
  KC__SEEN_DIMENSIONS = 1u << 1,
  KC__SEEN_TARGET = 1u << 2,
  KC__SEEN_API = 1u << 3,
  KC__SEEN_CONFIG = 1u << 4,
  KC__SEEN_SIDE_EFFECT = 1u << 5,
  KC__SEEN_ALIASING = 1u << 6,
  KC__SEEN_SCHEDULE = 1u << 7,
  KC__SEEN_CALLEE = 1u << 8,
  KC__SEEN_CONSTRAINTS = 1u << 9
};

/* ------------------------------------------------------------------------ */
/* Operands                                                                  */
/* ------------------------------------------------------------------------ */

static kc_status* kc__operand_mismatch(kc__hlo_parser* p, const kc__token* at,
                                       const kc__token* name, const kc__hlo_value* v,
                                       const kc_shape* written) {
  char want[256], got[256];
  kc_shape_format(v->shape, want, sizeof want);
  kc_shape_format(written, got, sizeof got);
  return kc__lex_fail(&p->lx, at, "operand %s: expected %s (its shape at line %d), got %s",
                      KC__Q(name->text), want, v->line, got);
}

/* One operand: a name, or a shape and a name; checks the shape. */
static kc_status* kc__parse_operand(kc__hlo_parser* p, int32_t* out_index) {
  kc__lexer* lx = &p->lx;
  kc__token shape_tok = lx->tok;
  kc_shape* tuple = NULL; /* a tuple shape written before the name */
  kc__array_text array;   /* an array shape written before the name */
  bool has_array = false;
  if (kc__tok_is_punct(&shape_tok, '(')) {
    kc__layouts ignored;
    memset(&ignored, 0, sizeof ignored);
    KC__TRY(kc__parse_shape(lx, 0, &ignored, &tuple));
  } else if (shape_tok.kind == KC__TOK_IDENT) {
    kc__token next = kc__lex_peek(lx);
    if (kc__tok_is_punct(&next, '[')) {
      kc__layouts ignored;
      memset(&ignored, 0, sizeof ignored);
      KC__TRY(kc__parse_array_text(lx, &ignored, &array));
      has_array = true;
    }
  }
  kc__token name = lx->tok;
  kc_status* st = NULL;
  int32_t index = -1;
  if (name.kind != KC__TOK_NAME && name.kind != KC__TOK_IDENT) {
    st = kc__lex_expected(lx, &name,
                          tuple || has_array ? "an operand name"
                                             : "an operand (a name, or a shape and a name)");
  } else if ((index = kc__strmap_get(&p->names, name.text)) < 0) {
    st = kc__lex_expected(lx, &name, "the name of an instruction defined earlier");
  } else {
    const kc__hlo_value* v = kc__value(p, index);
    if (tuple && !kc_shape_equal(tuple, v->shape)) {
      st = kc__operand_mismatch(p, &shape_tok, &name, v, tuple);
    } else if (has_array && !kc__array_text_equal(&array, v->shape)) {
      st = kc__array_text_create(lx, &array, &tuple);
      if (!st) st = kc__operand_mismatch(p, &shape_tok, &name, v, tuple);
    }
  }
  kc_shape_destroy(tuple);
  if (st) return st;
  kc__lex_next(lx);
  *out_index = index;
  return NULL;
}

/* "(a, b, ...)" into p->operands (instruction ids) and p->operand_values. */
static kc_status* kc__parse_operands(kc__hlo_parser* p) {
  kc__lexer* lx = &p->lx;
  p->operands.size = 0;
  p->operand_values.size = 0;
  KC__TRY(kc__lex_expect(lx, '('));
  for (bool more = kc__lex_list_begin(lx, ')'); more;) {
    int32_t index;
    kc_status* st = kc__parse_operand(p, &index);
    if (st) return st;
    int32_t id = kc__value(p, index)->id;
    if (!kc__buf_append(&p->operands, &id, sizeof id) ||
        !kc__buf_append(&p->operand_values, &index, sizeof index)) {
      return kc__parse_oom();
    }
    KC__TRY(kc__lex_list_next(lx, ')', &more));
  }
  return NULL;
}

static size_t kc__num_operands(const kc__hlo_parser* p) {
  return p->operands.size / sizeof(int32_t);
}
static const int32_t* kc__operand_ids(const kc__hlo_parser* p) {
  return (const int32_t*)(const void*)p->operands.data;
}

/* ------------------------------------------------------------------------ */
/* Constants                                                                 */
/* ------------------------------------------------------------------------ */

typedef struct kc__literal {
  DLDataType dtype;
  /* Grows with the values read rather than being sized from the shape,
   * so a huge shape with a short literal costs nothing. */
  kc__buf* data;
  size_t count; /* elements the shape holds */
  size_t n;     /* elements read so far */
  const char* shape_text;
} kc__literal;

static bool kc__constant_dtype_ok(DLDataType t) {
  if (t.lanes != 1) return false;
  switch (t.code) {
    case kDLBool: return t.bits == 8;
    case kDLInt: case kDLUInt:
      return t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64;
    case kDLFloat: return t.bits == 16 || t.bits == 32 || t.bits == 64;
    case kDLBfloat: return t.bits == 16;
    case kDLComplex: return t.bits == 64 || t.bits == 128;
    default: return false;
  }
}

/* A float literal value: a number, inf, nan, -inf, -nan (consumed). */
static bool kc__parse_float_value(kc__lexer* lx, double* out) {
  kc__token t = lx->tok;
  bool minus = kc__tok_is_punct(&t, '-');
  kc__token w = minus ? kc__lex_peek(lx) : t;
  if (kc__tok_is_word(&w, "inf") || kc__tok_is_word(&w, "nan")) {
    double d = kc__tok_is_word(&w, "inf") ? (double)INFINITY : (double)NAN;
    *out = minus ? -d : d;
    if (minus) kc__lex_next(lx);
    kc__lex_next(lx);
    return true;
  }
  if (t.kind != KC__TOK_NUMBER || !kc__number_to_double(t.text, out)) return false;
  kc__lex_next(lx);
  return true;
}

static kc_status* kc__scalar_error(const kc__lexer* lx, const kc__token* t,
                                   const kc__literal* lit) {
  char what[64];
  snprintf(what, sizeof what, "a value of type %s", kc__hlo_dtype_name(lit->dtype));
  return kc__lex_expected(lx, t, what);
}

/* One scalar of the literal at the current token, stored at lit->n. */
static kc_status* kc__parse_scalar(kc__lexer* lx, kc__literal* lit) {
  kc__token t = lx->tok;
  if (lit->n == lit->count) {
    char many[128];
    snprintf(many, sizeof many, "'}' or ')' after the %zu value%s of %s", lit->count,
             lit->count == 1 ? "" : "s", lit->shape_text);
    return kc__lex_expected(lx, &t, many);
  }
  if (kc__tok_is_punct(&t, '.')) {
    return kc__lex_fail(lx, &t, "expected the constant's values, got '...': the "
                        "dump left out a large constant; dump it with large "
                        "constants printed");
  }
  size_t width = lit->dtype.bits / 8;
  if (!kc__buf_append(lit->data, NULL, width)) return kc__parse_oom();
  unsigned char* dst = lit->data->data + lit->n * width;
  if (lit->dtype.code == kDLComplex) {
    /* (re, im), each part a float of half the width. */
    double part[2];
    if (!kc__tok_is_punct(&t, '(')) return kc__scalar_error(lx, &t, lit);
    kc__lex_next(lx);
    for (int k = 0; k < 2; ++k) {
      kc__token at = lx->tok;
      if (!kc__parse_float_value(lx, &part[k])) return kc__scalar_error(lx, &at, lit);
      if (k == 0) KC__TRY(kc__lex_expect(lx, ','));
    }
    if (!kc__tok_is_punct(&lx->tok, ')')) return kc__lex_expected(lx, &lx->tok, "')'");
    for (int k = 0; k < 2; ++k) {
      if (width == 8) {
        float f = (float)part[k];
        memcpy(dst + 4 * k, &f, sizeof f);
      } else {
        memcpy(dst + 8 * k, &part[k], sizeof part[k]);
      }
    }
  } else if (lit->dtype.code == kDLFloat || lit->dtype.code == kDLBfloat) {
    double d;
    if (!kc__parse_float_value(lx, &d)) return kc__scalar_error(lx, &t, lit);
    lit->n++;
    if (lit->dtype.code == kDLBfloat || lit->dtype.bits == 16) {
      uint16_t h = lit->dtype.code == kDLBfloat ? kc__f64_to_bf16(d) : kc__f64_to_f16(d);
      memcpy(dst, &h, sizeof h);
    } else if (lit->dtype.bits == 32) {
      float f = (float)d;
      memcpy(dst, &f, sizeof f);
    } else {
      memcpy(dst, &d, sizeof d);
    }
    return NULL; /* kc__parse_float_value moved past it */
  } else if (lit->dtype.code == kDLBool) {
    bool negative;
    uint64_t v = 2;
    if (kc__tok_is_word(&t, "true") || kc__tok_is_word(&t, "false")) {
      v = kc__tok_is_word(&t, "true");
    } else if (t.kind != KC__TOK_NUMBER || !kc__number_is_int(t.text) ||
               !kc__number_to_int(t.text, &negative, &v) || negative) {
      v = 2;
    }
    if (v > 1) return kc__lex_expected(lx, &t, "a value of type pred (true or false)");
    *dst = (unsigned char)v;
  } else {
    bool negative;
    uint64_t v;
    bool is_signed = lit->dtype.code == kDLInt;
    unsigned bits = lit->dtype.bits;
    uint64_t max = bits == 64 ? (is_signed ? (uint64_t)INT64_MAX : UINT64_MAX)
                              : (UINT64_C(1) << (is_signed ? bits - 1 : bits)) - 1;
    if (t.kind != KC__TOK_NUMBER || !kc__number_is_int(t.text) ||
        !kc__number_to_int(t.text, &negative, &v) ||
        (negative && !is_signed && v) || v > max + (negative ? 1u : 0u)) {
      return kc__scalar_error(lx, &t, lit);
    }
    uint64_t bits_value = negative ? 0 - v : v;
    /* Two's complement: the low bytes of the 64-bit value, little-endian
     * hosts being the only ones kcall runs on. */
    memcpy(dst, &bits_value, width);
  }
  lit->n++;
  kc__lex_next(lx);
  return NULL;
}

/* A literal: a scalar or braces nested to any depth (as XLA writes
 * {{1,2},{3,4}}); only the count of values is checked against the shape. */
static kc_status* kc__parse_literal(kc__lexer* lx, kc__literal* lit, int depth) {
  if (!kc__tok_is_punct(&lx->tok, '{')) return kc__parse_scalar(lx, lit);
  if (depth >= KC__PARSE_MAX_DEPTH) {
    return kc__lex_fail(lx, &lx->tok, "literal braces nested deeper than %d",
                        KC__PARSE_MAX_DEPTH);
  }
  kc__lex_next(lx);
  for (bool more = kc__lex_list_begin(lx, '}'); more;) {
    kc_status* st = kc__parse_literal(lx, lit, depth + 1);
    if (st) return st;
    KC__TRY(kc__lex_list_next(lx, '}', &more));
  }
  return NULL;
}

/* "(LITERAL)" of a constant of shape ins->shape, into p->literal. */
static kc_status* kc__parse_constant(kc__hlo_parser* p, kc__hlo_instr* ins,
                                     void** out_data, size_t* out_size) {
  kc__lexer* lx = &p->lx;
  char shape_text[256];
  kc_shape_format(ins->shape, shape_text, sizeof shape_text);
  if (kc_shape_is_tuple(ins->shape)) {
    return kc__lex_fail(lx, &ins->shape_tok, "constant %s: tuple constants "
                        "are not supported, got %s", KC__Q(ins->name_tok.text), shape_text);
  }
  DLDataType dtype = kc_shape_get_dtype(ins->shape);
  if (!kc__constant_dtype_ok(dtype)) {
    return kc__lex_fail(lx, &ins->shape_tok, "constant %s: expected an element "
                        "type of pred, s8..s64, u8..u64, f16, bf16, f32, f64, c64 or c128, got %s",
                        KC__Q(ins->name_tok.text),
                        shape_text);
  }
  kc__literal lit;
  lit.dtype = dtype;
  lit.shape_text = shape_text;
  *out_size = kc_shape_get_byte_size(ins->shape);
  lit.count = *out_size / (dtype.bits / 8);
  lit.n = 0;
  lit.data = &p->literal;
  p->literal.size = 0;
  KC__TRY(kc__lex_expect(lx, '('));
  kc__token first = lx->tok;
  kc_status* st = kc__parse_literal(lx, &lit, 0);
  if (st) return st;
  if (lit.n != lit.count) {
    return kc__lex_fail(lx, &first, "expected %zu value%s for %s, got %zu",
                        lit.count, lit.count == 1 ? "" : "s", shape_text, lit.n);
  }
  KC__TRY(kc__lex_expect(lx, ')'));
  *out_data = p->literal.data;
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Attributes                                                                */
/* ------------------------------------------------------------------------ */

/* "{1, 2}" into p->path, then copied into tmp; `what` names the list
 * ("an output index") in messages. */
static kc_status* kc__parse_int_list(kc__hlo_parser* p, const char* what,
                                     const int64_t** out, size_t* out_count) {
  kc__lexer* lx = &p->lx;
  p->path.size = 0;
  if (!kc__tok_is_punct(&lx->tok, '{')) {
    char text[96];
    snprintf(text, sizeof text, "'{' starting %s", what);
    return kc__lex_expected(lx, &lx->tok, text);
  }
  kc__lex_next(lx);
  for (bool more = kc__lex_list_begin(lx, '}'); more;) {
    int64_t v;
    KC__TRY(kc__lex_int(lx, "a non-negative integer", 0, INT64_MAX, &v));
    if (!kc__buf_append(&p->path, &v, sizeof v)) return kc__parse_oom();
    KC__TRY(kc__lex_list_next(lx, '}', &more));
  }
  *out_count = p->path.size / sizeof(int64_t);
  *out = kc__arena_dup(&p->tmp, p->path.data, p->path.size);
  return *out ? NULL : kc__parse_oom();
}

/* output_to_operand_aliasing={{}: (0, {}), {1}: (2, {0})} */
static kc_status* kc__parse_aliasing(kc__hlo_parser* p, kc__hlo_instr* ins) {
  kc__lexer* lx = &p->lx;
  kc__buf list = {0};
  kc_status* st = kc__lex_expect(lx, '{');
  for (bool more = !st && kc__lex_list_begin(lx, '}'); more;) {
    kc_output_operand_alias a;
    memset(&a, 0, sizeof a);
    int64_t operand = 0;
    st = kc__parse_int_list(p, "an output index", &a.output_index, &a.output_index_size);
    if (!st) st = kc__lex_expect(lx, ':');
    if (!st) st = kc__lex_expect(lx, '(');
    if (!st) st = kc__lex_int(lx, "an operand number", 0, INT32_MAX, &operand);
    if (!st) st = kc__lex_expect(lx, ',');
    if (!st) {
      st = kc__parse_int_list(p, "an operand index", &a.operand_index,
                              &a.operand_index_size);
    }
    if (!st) st = kc__lex_expect(lx, ')');
    if (st) break;
    a.operand = (int32_t)operand;
    if (!kc__buf_append(&list, &a, sizeof a)) {
      st = kc__parse_oom();
      break;
    }
    st = kc__lex_list_next(lx, '}', &more);
    if (st) break;
  }
  if (!st) {
    ins->num_aliases = list.size / sizeof(kc_output_operand_alias);
    ins->aliases = kc__arena_dup(&p->tmp, list.data, list.size);
    if (!ins->aliases) st = kc__parse_oom();
  }
  kc__buf_free(&list);
  return st;
}

typedef struct kc__word_value {
  const char* word;
  int32_t value;
} kc__word_value;

static const kc__word_value kc__api_words[] = {
    {"API_VERSION_ORIGINAL", KC_XCALL_API_ORIGINAL},
    {"API_VERSION_STATUS_RETURNING", KC_XCALL_API_STATUS_RETURNING},
    {"API_VERSION_STATUS_RETURNING_UNIFIED", KC_XCALL_API_STATUS_RETURNING_UNIFIED},
    {"API_VERSION_TYPED_FFI", KC_XCALL_API_TYPED},
};
static const kc__word_value kc__schedule_words[] = {
    {"SCHEDULE_NONE", KC_SCHEDULE_NONE},
    {"SCHEDULE_LATEST", KC_SCHEDULE_LATEST},
    {"SCHEDULE_EARLIEST", KC_SCHEDULE_EARLIEST},
};
static const kc__word_value kc__bool_words[] = {{"false", 0}, {"true", 1}};

static kc_status* kc__parse_word(kc__lexer* lx, const kc__word_value* words,
                                 size_t count, const char* what, int32_t* out) {
  for (size_t i = 0; i < count; ++i) {
    if (kc__tok_is_word(&lx->tok, words[i].word)) {
      *out = words[i].value;
      kc__lex_next(lx);
      return NULL;
    }
  }
  return kc__lex_expected(lx, &lx->tok, what);
}

static kc_status* kc__parse_backend_config(kc__hlo_parser* p, kc__hlo_instr* ins) {
  kc__lexer* lx = &p->lx;
  ins->config_tok = lx->tok;
  if (lx->tok.kind == KC__TOK_STRING) {
    ins->config_kind = KC__CONFIG_STRING;
    KC__TRY(kc__lex_string(lx, &lx->tok, KC__ESCAPES_HLO, &p->tmp, &ins->config));
    kc__lex_next(lx);
    return NULL;
  }
  if (!kc__tok_is_punct(&lx->tok, '{')) {
    return kc__lex_expected(lx, &lx->tok, "a string or '{'");
  }
  /* Kept as written: whether it is typed attributes or opaque bytes
   * depends on api_version, which may come later. */
  const char* start = lx->tok.text.data;
  kc__token close;
  KC__TRY(kc__lex_skip_group(lx, &close));
  ins->config_kind = KC__CONFIG_BRACES;
  ins->config.data = start;
  ins->config.size = (size_t)(close.text.data + 1 - start);
  return NULL;
}

/* Marks attribute `bit` as given; the second time is an error. */
static kc_status* kc__attr_once(kc__hlo_parser* p, kc__hlo_instr* ins,
                                const kc__token* key, uint32_t bit) {
  if (ins->seen & bit) {
    return kc__lex_fail(&p->lx, key, "attribute %s is given twice",
                        KC__Q(key->text));
  }
  ins->seen |= bit;
  return NULL;
}

/* How the attributes of op-table instructions are written. */
typedef enum kc__attr_syntax {
  KC__SYNTAX_INTS, /* {1, 2}: an I64 array */
  KC__SYNTAX_INT,  /* 3 */
  KC__SYNTAX_WORD, /* LT: a string */
  KC__SYNTAX_SLICE,   /* {[0:2], [1:5:2]}: start_indices, limit_indices, strides */
  KC__SYNTAX_PADDING, /* 0_1x2_3_1: edge_padding_low, _high, interior_padding */
  KC__SYNTAX_WINDOW   /* {size=2x2 stride=1x1 pad=0_1x0_1 lhs_dilate=.. rhs_dilate=..} */
} kc__attr_syntax;

static kc_status* kc__computation_program(kc__hlo_parser* p, const kc__hlo_instr* ins,
                                          const kc__token* name, kc_program** out);

/* The computations an attribute of kc__op_def.computation_attrs names:
 * %c, or {%a, %b} for a list. */
static kc_status* kc__parse_callees(kc__hlo_parser* p, kc__hlo_instr* ins,
                                    const kc__token* key) {
  kc__lexer* lx = &p->lx;
  bool list = kc__tok_is_punct(&lx->tok, '{');
  if (list) kc__lex_next(lx);
  for (bool more = !list || kc__lex_list_begin(lx, '}'); more;) {
    if (lx->tok.kind != KC__TOK_NAME && lx->tok.kind != KC__TOK_IDENT) {
      return kc__lex_expected(lx, &lx->tok, "a computation name");
    }
    kc__hlo_callee callee = {key->text, NULL};
    KC__TRY(kc__computation_program(p, ins, &lx->tok, &callee.program));
    if (!kc__buf_append(&ins->callees, &callee, sizeof callee)) return kc__parse_oom();
    kc__lex_next(lx);
    if (!list) break;
    KC__TRY(kc__lex_list_next(lx, '}', &more));
  }
  return NULL;
}

static const struct {
  const char* name;
  kc__attr_syntax syntax;
} kc__attr_syntaxes[] = {
    {"dimensions", KC__SYNTAX_INTS},
    {"iota_dimension", KC__SYNTAX_INT},
    {"direction", KC__SYNTAX_WORD},
    {"type", KC__SYNTAX_WORD},
    {"slice", KC__SYNTAX_SLICE},
    {"padding", KC__SYNTAX_PADDING},
    {"window", KC__SYNTAX_WINDOW},
    {"dynamic_slice_sizes", KC__SYNTAX_INTS},
    {"lhs_batch_dims", KC__SYNTAX_INTS},
    {"rhs_batch_dims", KC__SYNTAX_INTS},
    {"lhs_contracting_dims", KC__SYNTAX_INTS},
    {"rhs_contracting_dims", KC__SYNTAX_INTS},
};

/* The attributes a syntax gives (the name as written, or these). */
static const char* const kc__slice_names[] = {"start_indices", "limit_indices", "strides"};
static const char* const kc__padding_names[] = {"edge_padding_low", "edge_padding_high",
                                                "interior_padding"};

/* Appends the I64 array attribute `name` holding `v[0..n)` (copied). */
static kc_status* kc__add_ints_attr(kc__hlo_parser* p, kc__hlo_instr* ins, const char* name,
                                    const int64_t* v, size_t n);

/* {[start:limit(:stride)], ...} into three arrays. */
static kc_status* kc__parse_slice(kc__hlo_parser* p, kc__hlo_instr* ins) {
  kc__lexer* lx = &p->lx;
  int64_t parts[3][KC_TENSOR_MAX_NDIM];
  size_t rank = 0;
  KC__TRY(kc__lex_expect(lx, '{'));
  for (bool more = kc__lex_list_begin(lx, '}'); more;) {
    if (rank == KC_TENSOR_MAX_NDIM) return kc__lex_fail(lx, &lx->tok, "too many dimensions");
    KC__TRY(kc__lex_expect(lx, '['));
    KC__TRY(kc__lex_int(lx, "a start index", INT64_MIN, INT64_MAX, &parts[0][rank]));
    KC__TRY(kc__lex_expect(lx, ':'));
    KC__TRY(kc__lex_int(lx, "a limit index", INT64_MIN, INT64_MAX, &parts[1][rank]));
    parts[2][rank] = 1;
    if (kc__tok_is_punct(&lx->tok, ':')) {
      kc__lex_next(lx);
      KC__TRY(kc__lex_int(lx, "a stride", INT64_MIN, INT64_MAX, &parts[2][rank]));
    }
    KC__TRY(kc__lex_expect(lx, ']'));
    rank++;
    KC__TRY(kc__lex_list_next(lx, '}', &more));
  }
  for (int k = 0; k < 3; ++k) KC__TRY(kc__add_ints_attr(p, ins, kc__slice_names[k], parts[k], rank));
  return NULL;
}

/* Numbers joined by 'x' ("2x3") or, with pairs, "1_1x0_2": the raw span
 * from the current token, into out (up to KC_TENSOR_MAX_NDIM groups of
 * `per` numbers, flattened). False when malformed. */
static bool kc__parse_x_list(kc_string_view text, size_t per, int64_t* out, size_t* out_groups) {
  const char* c = text.data;
  const char* end = text.data + text.size;
  size_t groups = 0, k = 0;
  while (c < end) {
    if (groups == KC_TENSOR_MAX_NDIM) return false;
    bool negative = *c == '-';
    if (negative) ++c;
    if (c == end || *c < '0' || *c > '9') return false;
    int64_t v = 0;
    while (c < end && *c >= '0' && *c <= '9') {
      if (v > (INT64_MAX - 9) / 10) return false;
      v = v * 10 + (*c++ - '0');
    }
    out[groups * per + k++] = negative ? -v : v;
    if (k < per) {
      if (c == end || *c != '_') return false;
      ++c;
      continue;
    }
    groups++;
    k = 0;
    if (c < end) {
      if (*c != 'x') return false;
      if (++c == end) return false;
    }
  }
  *out_groups = groups;
  return k == 0 && groups > 0;
}

/* window={size=2x2 stride=2x1 pad=0_1x1_1 lhs_dilate=1x1 rhs_dilate=1x1}
 * into window_dimensions, window_strides, padding_low, padding_high,
 * base_dilations and window_dilations. */
static kc_status* kc__parse_window(kc__hlo_parser* p, kc__hlo_instr* ins) {
  kc__lexer* lx = &p->lx;
  static const struct {
    const char* key;
    const char* attr; /* and, for pad, the second */
    const char* attr2;
  } fields[] = {{"size", "window_dimensions", NULL},
                {"stride", "window_strides", NULL},
                {"pad", "padding_low", "padding_high"},
                {"lhs_dilate", "base_dilations", NULL},
                {"rhs_dilate", "window_dilations", NULL}};
  KC__TRY(kc__lex_expect(lx, '{'));
  while (!kc__tok_is_punct(&lx->tok, '}')) {
    kc__token key = lx->tok;
    size_t f = KC__ARRAY_SIZE(fields);
    for (size_t i = 0; key.kind == KC__TOK_IDENT && i < KC__ARRAY_SIZE(fields); ++i) {
      if (kc_sv_equal(key.text, kc_sv(fields[i].key))) f = i;
    }
    if (f == KC__ARRAY_SIZE(fields)) {
      return kc__lex_expected(lx, &key,
                              "size=, stride=, pad=, lhs_dilate= or rhs_dilate= (other window "
                              "fields, such as rhs_reversal, are not supported)");
    }
    kc__lex_next(lx);
    KC__TRY(kc__lex_expect(lx, '='));
    kc__token at = lx->tok;
    kc_string_view text = kc__lex_raw_span(lx, "0123456789-_x");
    size_t per = fields[f].attr2 ? 2 : 1;
    int64_t v[2 * KC_TENSOR_MAX_NDIM], a[KC_TENSOR_MAX_NDIM], b[KC_TENSOR_MAX_NDIM];
    size_t n = 0;
    if (!kc__parse_x_list(text, per, v, &n)) {
      return kc__lex_fail(lx, &at, "window %s: expected %s, got %s", fields[f].key,
                          per == 2 ? "low_high pairs joined by 'x' (0_1x1_1)"
                                   : "numbers joined by 'x' (2x2)",
                          KC__Q(text));
    }
    for (size_t i = 0; i < n; ++i) {
      a[i] = v[i * per];
      if (per == 2) b[i] = v[i * per + 1];
    }
    KC__TRY(kc__add_ints_attr(p, ins, fields[f].attr, a, n));
    if (per == 2) KC__TRY(kc__add_ints_attr(p, ins, fields[f].attr2, b, n));
  }
  kc__lex_next(lx);
  return NULL;
}

/* L_H(_I) per dimension, joined by 'x'. */
static kc_status* kc__parse_padding(kc__hlo_parser* p, kc__hlo_instr* ins) {
  kc__lexer* lx = &p->lx;
  kc__token at = lx->tok;
  kc_string_view text = kc__lex_raw_span(lx, "0123456789-_x");
  int64_t parts[3][KC_TENSOR_MAX_NDIM];
  size_t rank = 0, k = 0;
  const char* c = text.data;
  const char* end = text.data + text.size;
  while (c < end) {
    if (rank == KC_TENSOR_MAX_NDIM || k == 3) break;
    bool negative = *c == '-';
    if (negative) ++c;
    if (c == end || *c < '0' || *c > '9') break;
    int64_t v = 0;
    while (c < end && *c >= '0' && *c <= '9' && v < INT64_MAX / 10) v = v * 10 + (*c++ - '0');
    parts[k++][rank] = negative ? -v : v;
    if (c < end && *c == '_') {
      ++c;
    } else if (c == end || *c == 'x') {
      if (k < 2) break;
      if (k == 2) parts[2][rank] = 0;
      rank++;
      k = 0;
      if (c < end) ++c;
    } else {
      break;
    }
  }
  if (c != end || k != 0 || text.size == 0) {
    return kc__lex_fail(lx, &at,
                        "expected a padding such as 0_1x2_3 (low_high or low_high_interior "
                        "per dimension), got %s",
                        KC__Q(text));
  }
  for (k = 0; k < 3; ++k) KC__TRY(kc__add_ints_attr(p, ins, kc__padding_names[k], parts[k], rank));
  return NULL;
}

static kc_status* kc__add_table_attr(kc__hlo_parser* p, kc__hlo_instr* ins, const kc_attr* a) {
  for (size_t i = 0; i < ins->attrs.size / sizeof *a; ++i) {
    const kc_attr* seen = (const kc_attr*)(const void*)ins->attrs.data + i;
    if (kc_sv_equal(seen->name, a->name)) {
      return kc__lex_fail(&p->lx, &p->lx.tok, "attribute %s is given twice",
                          KC__Q(a->name));
    }
  }
  return kc__buf_append(&ins->attrs, a, sizeof *a) ? NULL : kc__parse_oom();
}

static kc_status* kc__add_ints_attr(kc__hlo_parser* p, kc__hlo_instr* ins, const char* name,
                                    const int64_t* v, size_t n) {
  kc_attr a;
  memset(&a, 0, sizeof a);
  a.name = kc_sv(name);
  a.type = KC_ATTR_ARRAY;
  a.elem_type = KC_ATTR_I64;
  a.v.array.data = kc__arena_dup(&p->tmp, v, n * sizeof *v);
  a.v.array.count = n;
  if (!a.v.array.data) return kc__parse_oom();
  return kc__add_table_attr(p, ins, &a);
}

/* An attribute of an op-table instruction: those its entry reads, in the
 * syntax HLO writes them; the others are left to be skipped. */
static kc_status* kc__parse_table_attr(kc__hlo_parser* p, kc__hlo_instr* ins,
                                       const kc__token* key, bool* out_handled) {
  kc__lexer* lx = &p->lx;
  *out_handled = false;
  bool reads = false;
  /* slice= and padding= give attributes of other names. */
  const char* given = kc_sv_equal(key->text, KC_SV_LIT("slice"))     ? kc__slice_names[0]
                      : kc_sv_equal(key->text, KC_SV_LIT("padding")) ? kc__padding_names[0]
                      : kc_sv_equal(key->text, KC_SV_LIT("window"))  ? "window_dimensions"
                                                                     : NULL;
  for (const char* const* a = ins->def->attrs; *a && !reads; ++a) {
    reads = given ? strcmp(given, *a) == 0 : kc_sv_equal(key->text, kc_sv(*a));
  }
  for (const char* const* a = ins->def->computation_attrs; a && *a && !reads; ++a) {
    if (kc_sv_equal(key->text, kc_sv(*a))) {
      *out_handled = true;
      return kc__parse_callees(p, ins, key);
    }
  }
  if (!reads) return NULL;
  for (size_t i = 0; i < KC__ARRAY_SIZE(kc__attr_syntaxes); ++i) {
    if (!kc_sv_equal(key->text, kc_sv(kc__attr_syntaxes[i].name))) continue;
    kc_attr a;
    memset(&a, 0, sizeof a);
    a.name = key->text;
    switch (kc__attr_syntaxes[i].syntax) {
      case KC__SYNTAX_INTS: {
        const int64_t* v;
        size_t n;
        KC__TRY(kc__parse_int_list(p, kc__attr_syntaxes[i].name, &v, &n));
        a.type = KC_ATTR_ARRAY;
        a.elem_type = KC_ATTR_I64;
        a.v.array.data = v;
        a.v.array.count = n;
        break;
      }
      case KC__SYNTAX_INT:
        a.type = KC_ATTR_I64;
        KC__TRY(kc__lex_int(lx, "an integer", INT64_MIN, INT64_MAX, &a.v.i64));
        break;
      case KC__SYNTAX_WORD:
        if (lx->tok.kind != KC__TOK_IDENT) return kc__lex_expected(lx, &lx->tok, "a word");
        a.type = KC_ATTR_STRING;
        a.v.str = lx->tok.text;
        kc__lex_next(lx);
        break;
      case KC__SYNTAX_SLICE:
        *out_handled = true;
        return kc__parse_slice(p, ins);
      case KC__SYNTAX_PADDING:
        *out_handled = true;
        return kc__parse_padding(p, ins);
      case KC__SYNTAX_WINDOW:
        *out_handled = true;
        return kc__parse_window(p, ins);
    }
    *out_handled = true;
    return kc__add_table_attr(p, ins, &a);
  }
  return NULL;
}

/* operand_layout_constraints={f32[3,4]{0,1}, ...}: the layout each
 * operand is handed over in. */
static kc_status* kc__parse_constraints(kc__hlo_parser* p, kc__hlo_instr* ins) {
  kc__lexer* lx = &p->lx;
  KC__TRY(kc__lex_expect(lx, '{'));
  for (bool more = kc__lex_list_begin(lx, '}'); more;) {
    size_t i = ins->constraints.size / sizeof(kc__hlo_constraint);
    kc__layouts layouts;
    memset(&layouts, 0, sizeof layouts);
    kc_shape* shape = NULL;
    KC__TRY(kc__parse_shape(lx, 0, &layouts, &shape));
    kc_shape_destroy(shape);
    if (layouts.nondefault && layouts.leaves > 1) {
      return kc__lex_fail(lx, &lx->tok,
                          "operand %zu: a tuple constraint with non-default layouts is not "
                          "supported",
                          i);
    }
    kc__hlo_constraint c;
    memcpy(c.m2m, layouts.first, sizeof c.m2m);
    c.nondefault = layouts.nondefault > 0;
    if (!kc__buf_append(&ins->constraints, &c, sizeof c)) return kc__parse_oom();
    KC__TRY(kc__lex_list_next(lx, '}', &more));
  }
  return NULL;
}

/* The attribute naming the computation a fusion or call runs. */
static const char* kc__callee_attr(const kc__hlo_opcode* op) {
  return strcmp(op->name, "fusion") == 0 ? "calls" : "to_apply";
}

/* The value of attribute `key` if this kind of instruction reads it;
 * *out_handled false leaves it for the caller to skip. */
static kc_status* kc__parse_known_attr(kc__hlo_parser* p, kc__hlo_instr* ins,
                                       const kc__token* key, bool* out_handled) {
  kc__lexer* lx = &p->lx;
  kc__hlo_kind kind = ins->op->kind;
  kc_string_view k = key->text;
  *out_handled = true;
  if (kind == KC__HLO_GET_TUPLE_ELEMENT && kc_sv_equal(k, KC_SV_LIT("index"))) {
    KC__TRY(kc__attr_once(p, ins, key, KC__SEEN_INDEX));
    return kc__lex_int(lx, "a tuple index", 0, INT64_MAX, &ins->index);
  }
  if (kind == KC__HLO_BROADCAST && kc_sv_equal(k, KC_SV_LIT("dimensions"))) {
    KC__TRY(kc__attr_once(p, ins, key, KC__SEEN_DIMENSIONS));
    return kc__parse_int_list(p, "the dimensions", &ins->dims, &ins->num_dims);
  }
  if (kind == KC__HLO_CALL &&
      kc_sv_equal(k, kc_sv(kc__callee_attr(ins->op)))) {
    KC__TRY(kc__attr_once(p, ins, key, KC__SEEN_CALLEE));
    if (lx->tok.kind != KC__TOK_NAME && lx->tok.kind != KC__TOK_IDENT) {
      return kc__lex_expected(lx, &lx->tok, "a computation name");
    }
    ins->callee = lx->tok;
    kc__lex_next(lx);
    return NULL;
  }
  if (kind == KC__HLO_TABLE) return kc__parse_table_attr(p, ins, key, out_handled);
  if (kind != KC__HLO_CUSTOM_CALL) {
    *out_handled = false;
    return NULL;
  }
  kc_status* st = NULL;
  int32_t v = 0;
  if (kc_sv_equal(k, KC_SV_LIT("custom_call_target"))) {
    st = kc__attr_once(p, ins, key, KC__SEEN_TARGET);
    if (!st) st = kc__lex_string(lx, &lx->tok, KC__ESCAPES_HLO, &p->tmp, &ins->target);
    if (!st) kc__lex_next(lx);
  } else if (kc_sv_equal(k, KC_SV_LIT("api_version"))) {
    st = kc__attr_once(p, ins, key, KC__SEEN_API);
    if (!st) {
      st = kc__parse_word(lx, kc__api_words, KC__ARRAY_SIZE(kc__api_words),
                          "an API version (API_VERSION_ORIGINAL, "
                          "API_VERSION_STATUS_RETURNING, "
                          "API_VERSION_STATUS_RETURNING_UNIFIED or "
                          "API_VERSION_TYPED_FFI)",
                          &ins->api_version);
    }
  } else if (kc_sv_equal(k, KC_SV_LIT("backend_config"))) {
    st = kc__attr_once(p, ins, key, KC__SEEN_CONFIG);
    if (!st) st = kc__parse_backend_config(p, ins);
  } else if (kc_sv_equal(k, KC_SV_LIT("custom_call_has_side_effect"))) {
    st = kc__attr_once(p, ins, key, KC__SEEN_SIDE_EFFECT);
    if (!st) {
      st = kc__parse_word(lx, kc__bool_words, 2, "true or false", &v);
      ins->has_side_effect = v != 0;
    }
  } else if (kc_sv_equal(k, KC_SV_LIT("operand_layout_constraints"))) {
    st = kc__attr_once(p, ins, key, KC__SEEN_CONSTRAINTS);
    if (!st) st = kc__parse_constraints(p, ins);
  } else if (kc_sv_equal(k, KC_SV_LIT("output_to_operand_aliasing"))) {
    st = kc__attr_once(p, ins, key, KC__SEEN_ALIASING);
    if (!st) st = kc__parse_aliasing(p, ins);
  } else if (kc_sv_equal(k, KC_SV_LIT("schedule")) ||
             kc_sv_equal(k, KC_SV_LIT("custom_call_schedule"))) {
    st = kc__attr_once(p, ins, key, KC__SEEN_SCHEDULE);
    if (!st) {
      st = kc__parse_word(lx, kc__schedule_words, KC__ARRAY_SIZE(kc__schedule_words),
                          "SCHEDULE_NONE, SCHEDULE_LATEST or SCHEDULE_EARLIEST",
                          &ins->schedule);
    }
  } else {
    *out_handled = false;
  }
  return st;
}

/* Attributes that change what an instruction computes, which kcall would
 * rather refuse than skip where the instruction does not read them (a
 * dot's algorithm, an accuracy asked of a transcendental function, the
 * layout of a sub-byte or tiled type). Others are skipped and counted
 * (kc_program_get_skipped_attribute). */
static bool kc__changes_meaning(kc_string_view name) {
  static const char* const words[] = {"algorithm", "result_accuracy", "exponent_bits",
                                      "mantissa_bits", "feature_group_count",
                                      "batch_group_count", "dim_labels", "is_stable",
                                      "indices_are_sorted", "unique_indices"};
  for (size_t i = 0; i < KC__ARRAY_SIZE(words); ++i) {
    if (kc_sv_equal(name, kc_sv(words[i]))) return true;
  }
  return false;
}

/* ", key=value" pairs up to the end of the instruction. */
static kc_status* kc__parse_attrs(kc__hlo_parser* p, kc__hlo_instr* ins) {
  kc__lexer* lx = &p->lx;
  while (kc__tok_is_punct(&lx->tok, ',')) {
    kc__lex_next(lx);
    kc__token key = lx->tok;
    if (key.kind != KC__TOK_IDENT) return kc__lex_expected(lx, &key, "an attribute name");
    kc__lex_next(lx);
    KC__TRY(kc__lex_expect(lx, '='));
    bool handled = false;
    kc_status* st = kc__parse_known_attr(p, ins, &key, &handled);
    if (!st && !handled && kc__changes_meaning(key.text)) {
      st = kc__lex_fail(lx, &key,
                        "%s %s: attribute %s changes what it computes, and kcall "
                        "does not honour it",
                        ins->op->name, KC__Q(ins->name_tok.text),
                        KC__Q(key.text));
    }
    if (!st && !handled) st = kc__lex_skip_value(lx);
    if (!st && !handled) st = kc__builder_note_skipped(p->module->top, key.text);
    if (st) {
      return kc_status_add_context(st, "in attribute %s", KC__Q(key.text));
    }
  }
  const kc__token* t = &lx->tok;
  if (t->kind != KC__TOK_END && !kc__tok_is_punct(t, '}') && t->line == lx->prev_line) {
    return kc__lex_expected(lx, t, "',' or the end of the line");
  }
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Instructions                                                              */
/* ------------------------------------------------------------------------ */

static kc_status* kc__missing_attr(kc__hlo_parser* p, const kc__hlo_instr* ins,
                                   const char* attr) {
  return kc__lex_fail(&p->lx, &ins->opcode_tok,
                      "%s %s: expected attribute %s, got none", ins->op->name,
                      KC__Q(ins->name_tok.text), attr);
}

static kc_status* kc__operand_count(kc__hlo_parser* p, const kc__hlo_instr* ins,
                                    size_t want) {
  size_t got = kc__num_operands(p);
  if (got == want) return NULL;
  return kc__lex_fail(&p->lx, &ins->opcode_tok, "%s %s: expected %zu operand%s, got %zu",
                      ins->op->name, KC__Q(ins->name_tok.text), want, want == 1 ? "" : "s", got);
}

/* The shape a tuple or get-tuple-element takes from its operands must be
 * the one the text gives it. */
static kc_status* kc__check_shape(kc__hlo_parser* p, const kc__hlo_instr* ins,
                                  const kc_shape* derived, const char* how) {
  if (derived && kc_shape_equal(derived, ins->shape)) return NULL;
  char want[256] = "no shape", got[256];
  if (derived) kc_shape_format(derived, want, sizeof want);
  kc_shape_format(ins->shape, got, sizeof got);
  return kc__lex_fail(&p->lx, &ins->shape_tok, "%s %s: expected %s (%s), got %s",
                      ins->op->name, KC__Q(ins->name_tok.text), want, how, got);
}

static const kc_shape* kc__operand_shape(kc__hlo_parser* p, size_t i) {
  return kc__value(p, ((const int32_t*)(const void*)p->operand_values.data)[i])->shape;
}

static kc_status* kc__check_tuple(kc__hlo_parser* p, const kc__hlo_instr* ins) {
  size_t n = kc__num_operands(p);
  bool ok = kc_shape_is_tuple(ins->shape) && kc_shape_get_tuple_size(ins->shape) == n;
  for (size_t i = 0; ok && i < n; ++i) {
    ok = kc_shape_equal(kc_shape_get_element(ins->shape, i), kc__operand_shape(p, i));
  }
  if (ok) return NULL;
  kc_shape* derived = NULL;
  const kc_shape** elems = calloc(n + 1, sizeof *elems);
  if (!elems) return kc__parse_oom();
  for (size_t i = 0; i < n; ++i) elems[i] = kc__operand_shape(p, i);
  kc_status* st = kc_shape_create_tuple(elems, n, &derived);
  free(elems);
  if (st) return st;
  st = kc__check_shape(p, ins, derived, "the tuple of its operands");
  kc_shape_destroy(derived);
  return st;
}

/* Typed attributes from a backend_config, for API_VERSION_TYPED_FFI. */
static kc_status* kc__typed_attrs(kc__hlo_parser* p, const kc__hlo_instr* ins,
                                  kc_attr_dict* out) {
  /* A string holds the dictionary XLA would otherwise print bare; its
   * positions are only approximate when it has escapes. */
  int32_t column = ins->config_tok.column +
                   (ins->config_kind == KC__CONFIG_STRING ? 1 : 0);
  kc__lexer sub;
  kc__lexer_init(&sub, ins->config, ins->config_tok.line, column);
  kc_status* st = kc__attrs_parse_dict(&sub, &p->tmp, out);
  if (!st && sub.tok.kind != KC__TOK_END) {
    st = kc__lex_expected(&sub, &sub.tok, "the end of backend_config");
  }
  return kc_status_add_context(st, "in backend_config");
}

static bool kc__looks_like_dict(kc_string_view s) {
  for (size_t i = 0; i < s.size; ++i) {
    char c = s.data[i];
    if (c == '{') return true;
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return false;
  }
  return false;
}

/* Fills `desc` for the builder; typed attributes, when the call has
 * them, go to *attrs. */
static kc_status* kc__prepare_custom_call(kc__hlo_parser* p,
                                          const kc__hlo_instr* ins,
                                          kc_custom_call_desc* desc,
                                          kc_attr_dict* attrs) {
  if (!(ins->seen & KC__SEEN_TARGET)) {
    return kc__missing_attr(p, ins, "custom_call_target=\"...\"");
  }
  memset(desc, 0, sizeof *desc);
  desc->struct_size = sizeof *desc;
  desc->target = ins->target;
  desc->operands = kc__operand_ids(p);
  desc->num_operands = kc__num_operands(p);
  desc->result_shape = ins->shape;
  desc->has_side_effect = ins->has_side_effect;
  desc->aliases = ins->aliases;
  desc->num_aliases = ins->num_aliases;
  desc->schedule = ins->schedule;
  desc->api_version = ins->api_version;
  bool typed = ins->api_version == KC_XCALL_API_TYPED;
  if (typed && (ins->config_kind == KC__CONFIG_BRACES ||
                (ins->config_kind == KC__CONFIG_STRING &&
                 kc__looks_like_dict(ins->config)))) {
    KC__TRY(kc__typed_attrs(p, ins, attrs));
    desc->attrs = attrs;
  } else if (ins->config_kind != KC__CONFIG_NONE) {
    /* The legacy conventions take the text as it is; a typed call whose
     * config is not a dictionary gets it as opaque bytes too, and the
     * compiler decides what to make of that. */
    desc->opaque = ins->config.data;
    desc->opaque_size = ins->config.size;
  }
  return NULL;
}

/* The name an instruction of an inlined computation gets in the program:
 * "caller/name", so that two inlinings of one computation do not clash. */
static kc_status* kc__scoped_name(kc__hlo_parser* p, kc_string_view* name) {
  if (!p->prefix.size) return NULL;
  size_t size = p->prefix.size + 1 + name->size;
  char* full = kc__arena_alloc(&p->tmp, size + 1);
  if (!full) return kc__parse_oom();
  memcpy(full, p->prefix.data, p->prefix.size);
  full[p->prefix.size] = '/';
  memcpy(full + p->prefix.size + 1, name->data, name->size);
  *name = (kc_string_view){full, size};
  return NULL;
}

/* ---- layouts: converting between logical values and physical bytes ---- */

/* The dimensions from major to minor of a layout. */
static void kc__major_to_minor(const int8_t* m2m, int32_t rank, int64_t* out) {
  for (int32_t k = 0; k < rank; ++k) out[k] = m2m[rank - 1 - k];
}

static kc_status* kc__add_transpose(kc__hlo_parser* p, int32_t x, const kc_shape* from,
                                    const int64_t* perm, kc_string_view name, int32_t* out_id) {
  int32_t rank = kc_shape_get_rank(from);
  int64_t dims[KC_TENSOR_MAX_NDIM];
  for (int32_t k = 0; k < rank; ++k) dims[k] = kc_shape_get_dims(from)[perm[k]];
  kc_shape* shape = NULL;
  KC__TRY(kc_shape_create_array(kc_shape_get_dtype(from), dims, rank, &shape));
  kc_attr a;
  memset(&a, 0, sizeof a);
  a.name = KC_SV_LIT("dimensions");
  a.type = KC_ATTR_ARRAY;
  a.elem_type = KC_ATTR_I64;
  a.v.array.data = perm;
  a.v.array.count = (size_t)rank;
  kc_attr_dict attrs = {1, &a};
  kc_instruction_desc d;
  memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.op = KC_OP_TRANSPOSE;
  d.result_shape = shape;
  d.operands = &x;
  d.num_operands = 1;
  d.attrs = &attrs;
  kc_status* st = kc_program_builder_add_instruction(p->b, &d, name, out_id);
  kc_shape_destroy(shape);
  return st;
}

/* "NAME/suffix" in the parser's scratch, for the instructions a
 * conversion adds. */
static kc_string_view kc__suffixed(kc__hlo_parser* p, kc_string_view name, const char* suffix) {
  size_t n = strlen(suffix);
  char* s = kc__arena_alloc(&p->tmp, name.size + n + 2);
  if (!s) return (kc_string_view){NULL, 0};
  memcpy(s, name.data, name.size);
  s[name.size] = '/';
  memcpy(s + name.size + 1, suffix, n);
  return (kc_string_view){s, name.size + 1 + n};
}

/* x (logical, of `shape`) as the bytes of layout m2m: its elements in
 * physical order, reshaped back to the logical dims. */
static kc_status* kc__to_physical(kc__hlo_parser* p, int32_t x, const kc_shape* shape,
                                  const int8_t* m2m, kc_string_view name, int32_t* out_id) {
  int64_t perm[KC_TENSOR_MAX_NDIM];
  kc__major_to_minor(m2m, kc_shape_get_rank(shape), perm);
  int32_t t = -1;
  kc_string_view n1 = kc__suffixed(p, name, "to_layout");
  kc_string_view n2 = kc__suffixed(p, name, "as_laid_out");
  if (!n1.data || !n2.data) return kc__parse_oom();
  KC__TRY(kc__add_transpose(p, x, shape, perm, n1, &t));
  int32_t ops[1] = {t};
  return kc_program_builder_add_op(p->b, KC_OP_RESHAPE, shape, ops, 1, n2, out_id);
}

/* The inverse: bytes of layout m2m (held as a row-major `shape`) as the
 * logical value, named `name`. */
static kc_status* kc__from_physical(kc__hlo_parser* p, int32_t x, const kc_shape* shape,
                                    const int8_t* m2m, kc_string_view name, int32_t* out_id) {
  int32_t rank = kc_shape_get_rank(shape);
  int64_t perm[KC_TENSOR_MAX_NDIM], inverse[KC_TENSOR_MAX_NDIM], dims[KC_TENSOR_MAX_NDIM];
  kc__major_to_minor(m2m, rank, perm);
  for (int32_t k = 0; k < rank; ++k) {
    dims[k] = kc_shape_get_dims(shape)[perm[k]];
    inverse[perm[k]] = k;
  }
  kc_shape* physical = NULL;
  KC__TRY(kc_shape_create_array(kc_shape_get_dtype(shape), dims, rank, &physical));
  kc_string_view n1 = kc__suffixed(p, name, "in_layout_order");
  int32_t r = -1;
  int32_t ops[1] = {x};
  kc_status* st = n1.data ? kc_program_builder_add_op(p->b, KC_OP_RESHAPE, physical, ops, 1,
                                                      n1, &r)
                          : kc__parse_oom();
  if (!st) st = kc__add_transpose(p, r, physical, inverse, name, out_id);
  kc_shape_destroy(physical);
  return st;
}

/* bitcast reinterprets bytes: with both layouts row-major it is a reshape;
 * otherwise the operand's elements in its physical order, reshaped to the
 * result's physical dims, then brought to the result's logical order. */
static kc_status* kc__build_bitcast(kc__hlo_parser* p, kc__hlo_instr* ins, kc_string_view name,
                                    int32_t* out_id) {
  const kc__hlo_value* v = kc__value(p, ((const int32_t*)(const void*)p->operand_values.data)[0]);
  int32_t x = v->id;
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
    kc_string_view n = kc__suffixed(p, name, "operand_in_layout_order");
    if (!n.data) return kc__parse_oom();
    KC__TRY(kc__add_transpose(p, x, v->shape, perm, n, &phys));
  }
  if (!ins->layouts.first_nondefault) {
    return kc_program_builder_add_op(p->b, KC_OP_RESHAPE, ins->shape, &phys, 1, name, out_id);
  }
  return kc__from_physical(p, phys, ins->shape, ins->layouts.first, name, out_id);
}

/* A custom call sees the bytes of its operands' and result's layouts: an
 * operand whose layout (its operand_layout_constraints entry, else its
 * own) is not row-major is handed over in that layout, and a result laid
 * out otherwise is read back from it. */
static kc_status* kc__build_custom_call(kc__hlo_parser* p, kc__hlo_instr* ins,
                                        const kc_custom_call_desc* given, kc_string_view name,
                                        int32_t* out_id) {
  kc_custom_call_desc copy = *given;
  kc_custom_call_desc* desc = &copy;
  size_t n = desc->num_operands;
  const int32_t* values = (const int32_t*)(const void*)p->operand_values.data;
  int32_t* ops = kc__arena_alloc(&p->tmp, (n + 1) * sizeof *ops);
  if (!ops) return kc__parse_oom();
  size_t constraints = ins->constraints.size / sizeof(kc__hlo_constraint);
  if (constraints && constraints != n) {
    return kc__lex_fail(&p->lx, &ins->opcode_tok,
                        "custom-call %s: operand_layout_constraints: expected %zu shapes (one "
                        "per operand), got %zu",
                        KC__Q(ins->name_tok.text), n, constraints);
  }
  for (size_t i = 0; i < n; ++i) {
    const kc__hlo_value* v = kc__value(p, values[i]);
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
    kc_string_view n1 = kc__suffixed(p, name, suffix);
    if (!n1.data) return kc__parse_oom();
    KC__TRY(kc__to_physical(p, v->id, v->shape,
                            constrained ? written[i].m2m : v->m2m, n1, &ops[i]));
  }
  desc->operands = ops;
  if (ins->layouts.nondefault == 0) {
    return kc_program_builder_add_custom_call(p->b, desc, name, out_id);
  }
  if (kc_shape_is_tuple(ins->shape)) {
    return kc__lex_fail(&p->lx, &ins->shape_tok,
                        "custom-call %s: a tuple result with non-default layouts is not "
                        "supported",
                        KC__Q(ins->name_tok.text));
  }
  kc_string_view call = kc__suffixed(p, name, "laid_out");
  if (!call.data) return kc__parse_oom();
  int32_t r = -1;
  KC__TRY(kc_program_builder_add_custom_call(p->b, desc, call, &r));
  return kc__from_physical(p, r, ins->shape, ins->layouts.first, name, out_id);
}

/* Hands a parsed instruction to the builder. */
static kc_status* kc__build(kc__hlo_parser* p, kc__hlo_instr* ins,
                            int64_t number, const void* literal,
                            size_t literal_size, const kc_custom_call_desc* desc,
                            int32_t* out_id) {
  kc_program_builder* b = p->b;
  kc_string_view name = ins->name_tok.text;
  KC__TRY(kc__scoped_name(p, &name));
  const int32_t* ids = kc__operand_ids(p);
  switch (ins->op->kind) {
    case KC__HLO_PARAMETER:
      return kc_program_builder_add_parameter(b, number, ins->shape, name, out_id);
    case KC__HLO_CONSTANT:
      return kc_program_builder_add_constant(b, ins->shape, literal, literal_size,
                                             name, out_id);
    case KC__HLO_TUPLE:
      return kc_program_builder_add_tuple(b, ids, kc__num_operands(p), name, out_id);
    case KC__HLO_GET_TUPLE_ELEMENT:
      return kc_program_builder_add_get_tuple_element(b, ids[0], ins->index, name,
                                                      out_id);
    case KC__HLO_BROADCAST:
      return kc_program_builder_add_broadcast(b, ins->shape, ids[0], ins->dims,
                                              ins->num_dims, name, out_id);
    case KC__HLO_CUSTOM_CALL:
      return kc__build_custom_call(p, ins, desc, name, out_id);
    case KC__HLO_BITCAST:
      return kc__build_bitcast(p, ins, name, out_id);
    case KC__HLO_TABLE: {
      kc_attr_dict attrs = {ins->attrs.size / sizeof(kc_attr),
                            (const kc_attr*)(const void*)ins->attrs.data};
      kc_instruction_desc d;
      memset(&d, 0, sizeof d);
      d.struct_size = sizeof d;
      d.op = ins->def->op;
      d.result_shape = ins->shape;
      d.operands = ids;
      d.num_operands = kc__num_operands(p);
      d.attrs = &attrs;
      /* Called computations in the order the entry lists their attributes. */
      const kc__hlo_callee* callees = (const kc__hlo_callee*)(const void*)ins->callees.data;
      size_t count = ins->callees.size / sizeof *callees, n = 0;
      kc_program** called = kc__arena_alloc(&p->tmp, (count + 1) * sizeof *called);
      if (!called) return kc__parse_oom();
      for (const char* const* a = ins->def->computation_attrs; a && *a; ++a) {
        for (size_t k = 0; k < count; ++k) {
          if (kc_sv_equal(callees[k].attr, kc_sv(*a))) called[n++] = callees[k].program;
        }
      }
      d.computations = called;
      d.num_computations = n;
      return kc_program_builder_add_instruction(b, &d, name, out_id);
    }
    default:
      return kc_program_builder_add_op(b, ins->op->op, ins->shape, ids,
                                       kc__num_operands(p), name, out_id);
  }
}

/* The element of its operand that a get-tuple-element names. */
static kc_status* kc__check_get_tuple_element(kc__hlo_parser* p,
                                              const kc__hlo_instr* ins) {
  const kc_shape* tuple = kc__operand_shape(p, 0);
  const kc_shape* elem =
      ins->index >= 0 ? kc_shape_get_element(tuple, (size_t)ins->index) : NULL;
  if (!elem) {
    char text[256];
    kc_shape_format(tuple, text, sizeof text);
    return kc__lex_fail(&p->lx, &ins->opcode_tok,
                        "get-tuple-element %s: index %lld is not an element "
                        "of its operand's shape %s",
                        KC__Q(ins->name_tok.text),
                        (long long)ins->index, text);
  }
  char how[64];
  snprintf(how, sizeof how, "element %lld of its operand", (long long)ins->index);
  return kc__check_shape(p, ins, elem, how);
}

/* A parameter of an inlined computation: the caller's operand `number`,
 * which must have the parameter's shape. */
static kc_status* kc__bind_parameter(kc__hlo_parser* p, const kc__hlo_instr* ins,
                                     int64_t number, int32_t* out_id) {
  if ((uint64_t)number >= p->num_args) {
    return kc__lex_fail(&p->lx, &ins->opcode_tok,
                        "parameter %s: number %lld, but the caller passes %zu "
                        "operand%s",
                        KC__Q(ins->name_tok.text),
                        (long long)number, p->num_args, p->num_args == 1 ? "" : "s");
  }
  char how[64];
  snprintf(how, sizeof how, "operand %lld of the caller", (long long)number);
  KC__TRY(kc__check_shape(p, ins, p->arg_shapes[number], how));
  *out_id = p->args[number];
  return NULL;
}

/* A copy: since every layout kcall accepts is the row-major one, a copy
 * is its operand's value, and the program refers to the operand. (Where a
 * custom call updates an operand in place, compile copies it first.) */
static kc_status* kc__bind_copy(kc__hlo_parser* p, const kc__hlo_instr* ins,
                                int32_t* out_id) {
  KC__TRY(kc__operand_count(p, ins, 1));
  KC__TRY(kc__check_shape(p, ins, kc__operand_shape(p, 0), "the shape of its operand"));
  *out_id = kc__operand_ids(p)[0];
  return NULL;
}

/* The custom calls that only annotate how a value is sharded across
 * devices (JAX prints them around results and parameters): on one device
 * each is its operand. */
static bool kc__is_sharding_annotation(const kc__hlo_instr* ins) {
  static const char* const targets[] = {"Sharding", "xla.sdy.FuncResultSharding",
                                        "xla.sdy.FuncArgSharding"};
  for (size_t i = 0; i < KC__ARRAY_SIZE(targets); ++i) {
    if (kc_sv_equal(ins->target, kc_sv(targets[i]))) return true;
  }
  return false;
}

static kc_status* kc__parse_scope(kc__hlo_parser* p);
static void kc__parser_free(kc__hlo_parser* p);

/* The computation `name` that instruction `ins` calls, which must be
 * defined before it and not be being parsed already (it would call
 * itself). */
static kc_status* kc__find_computation(kc__hlo_parser* p, const kc__hlo_instr* ins,
                                       const kc__token* name, kc__hlo_computation** out) {
  kc__hlo_module* m = p->module;
  int32_t index = kc__strmap_get(&m->names, name->text);
  kc__hlo_computation* c =
      index < 0 ? NULL : (kc__hlo_computation*)(void*)m->computations.data + index;
  if (c && !c->active && p->depth < KC__PARSE_MAX_DEPTH) {
    *out = c;
    return NULL;
  }
  return kc__lex_fail(&p->lx, name, "%s %s: computation %s %s", ins->op->name,
                      KC__Q(ins->name_tok.text),
                      KC__Q(name->text),
                      !c          ? "is not defined before it"
                      : c->active ? "calls itself"
                                  : "is nested too deeply");
}

/* A fusion or call: the called computation parsed again in a scope of its
 * own, its parameters bound to the operands; the instruction is its ROOT.
 * Inlining costs nothing at run time, and the fused instructions run as
 * if written in place. */
static kc_status* kc__inline_call(kc__hlo_parser* p, kc__hlo_instr* ins,
                                  int32_t* out_id) {
  kc__lexer* lx = &p->lx;
  if (!(ins->seen & KC__SEEN_CALLEE)) {
    char attr[32];
    snprintf(attr, sizeof attr, "%s=COMPUTATION", kc__callee_attr(ins->op));
    return kc__missing_attr(p, ins, attr);
  }
  kc__hlo_module* m = p->module;
  kc__hlo_computation* c = NULL;
  KC__TRY(kc__find_computation(p, ins, &ins->callee, &c));
  size_t n = kc__num_operands(p);
  kc_shape** shapes = kc__arena_alloc(&p->tmp, (n ? n : 1) * sizeof *shapes);
  if (!shapes) return kc__parse_oom();
  const int32_t* values = (const int32_t*)(const void*)p->operand_values.data;
  for (size_t i = 0; i < n; ++i) shapes[i] = kc__value(p, values[i])->shape;

  kc__hlo_parser sub;
  memset(&sub, 0, sizeof sub);
  sub.lx = c->at;
  sub.b = p->b;
  sub.root = -1;
  sub.module = m;
  sub.args = kc__operand_ids(p);
  sub.arg_shapes = shapes;
  sub.num_args = n;
  sub.depth = p->depth + 1;
  sub.inlined = true;
  kc_string_view name = ins->name_tok.text;
  KC__TRY(kc__scoped_name(p, &name));
  sub.prefix = name;
  c->active = true;
  kc_status* st = kc__parse_scope(&sub);
  c->active = false;
  int32_t id = -1;
  if (!st) {
    const kc__hlo_value* root = kc__value(&sub, sub.root);
    if (!kc_shape_equal(root->shape, ins->shape)) {
      char want[256], got[256];
      kc_shape_format(ins->shape, want, sizeof want);
      kc_shape_format(root->shape, got, sizeof got);
      st = kc__lex_fail(lx, &ins->shape_tok,
                        "%s %s: expected the shape of computation %s "
                        "(%s, its ROOT %s at line %d), got %s",
                        ins->op->name, KC__Q(ins->name_tok.text), KC__Q(c->name),
                        got, KC__Q(root->name), root->line, want);
    }
    id = root->id;
  }
  kc__parser_free(&sub);
  if (st) {
    return kc_status_add_context(st, "in computation %s, called by %s %s at line %d",
                                 KC__Q(c->name), ins->op->name,
                                 KC__Q(ins->name_tok.text),
                                 ins->name_tok.line);
  }
  *out_id = id;
  return NULL;
}

/* The computation `name` as a program of its own: its parameters are the
 * program's, its ROOT the result. Made once per module. */
static kc_status* kc__computation_program(kc__hlo_parser* p, const kc__hlo_instr* ins,
                                          const kc__token* name, kc_program** out) {
  kc__hlo_module* m = p->module;
  kc__hlo_computation* c = NULL;
  KC__TRY(kc__find_computation(p, ins, name, &c));
  if (c->program) {
    *out = c->program;
    return NULL;
  }
  kc__hlo_parser sub;
  memset(&sub, 0, sizeof sub);
  sub.lx = c->at;
  sub.root = -1;
  sub.module = m;
  sub.depth = p->depth + 1;
  kc_status* st = kc_program_builder_create(c->name, &sub.b);
  c->active = true;
  if (!st) st = kc__parse_scope(&sub);
  c->active = false;
  if (!st) st = kc_program_builder_set_root(sub.b, kc__value(&sub, sub.root)->id);
  if (!st) {
    kc_program_builder* b = sub.b;
    sub.b = NULL; /* finish consumes it */
    st = kc_program_builder_finish(b, &c->program);
  }
  kc_program_builder_destroy(sub.b);
  kc__parser_free(&sub);
  if (st) {
    return kc_status_add_context(st, "in computation %s, called at line %d",
                                 KC__Q(c->name), name->line);
  }
  *out = c->program;
  return NULL;
}

/* Everything after the opcode; hands the instruction to the builder. */
static kc_status* kc__parse_body(kc__hlo_parser* p, kc__hlo_instr* ins,
                                 int32_t* out_id) {
  kc__lexer* lx = &p->lx;
  int64_t number = 0;
  void* literal = NULL;
  size_t literal_size = 0;
  kc_custom_call_desc desc;
  kc_attr_dict attrs;
  p->operands.size = 0;
  p->operand_values.size = 0;
  kc__hlo_kind kind = ins->op->kind;
  if (kind == KC__HLO_PARAMETER) {
    KC__TRY(kc__lex_expect(lx, '('));
    KC__TRY(kc__lex_int(lx, "a parameter number", 0, INT64_MAX, &number));
    KC__TRY(kc__lex_expect(lx, ')'));
  } else if (kind == KC__HLO_CONSTANT) {
    KC__TRY(kc__parse_constant(p, ins, &literal, &literal_size));
  } else {
    KC__TRY(kc__parse_operands(p));
  }
  KC__TRY(kc__parse_attrs(p, ins));
  if (kind == KC__HLO_PARAMETER && p->inlined) return kc__bind_parameter(p, ins, number, out_id);
  if (kind == KC__HLO_CALL) return kc__inline_call(p, ins, out_id);
  if (kind == KC__HLO_COPY) return kc__bind_copy(p, ins, out_id);
  if (kind == KC__HLO_CUSTOM_CALL && kc__is_sharding_annotation(ins)) {
    return kc__bind_copy(p, ins, out_id);
  }
  kc_status* st = NULL;
  switch (kind) {
    case KC__HLO_TUPLE:
      st = kc__check_tuple(p, ins);
      break;
    case KC__HLO_GET_TUPLE_ELEMENT:
      st = kc__operand_count(p, ins, 1);
      if (!st && !(ins->seen & KC__SEEN_INDEX)) st = kc__missing_attr(p, ins, "index=N");
      if (!st) st = kc__check_get_tuple_element(p, ins);
      break;
    case KC__HLO_BROADCAST:
      st = kc__operand_count(p, ins, 1);
      if (!st && !(ins->seen & KC__SEEN_DIMENSIONS)) {
        st = kc__missing_attr(p, ins, "dimensions={...}");
      }
      break;
    case KC__HLO_BINARY:
      st = kc__operand_count(p, ins, 2);
      break;
    case KC__HLO_UNARY:
    case KC__HLO_BITCAST:
      st = kc__operand_count(p, ins, 1);
      break;
    case KC__HLO_CUSTOM_CALL:
      st = kc__prepare_custom_call(p, ins, &desc, &attrs);
      break;
    default:
      break;
  }
  if (st) return st;
  st = kc__build(p, ins, number, literal, literal_size, &desc, out_id);
  if (st) {
    return kc_status_add_context(st, "line %d, column %d: instruction %s",
                                 ins->name_tok.line, ins->name_tok.column,
                                 KC__Q(ins->name_tok.text));
  }
  return kc_program_builder_set_location(p->b, *out_id, ins->name_tok.line,
                                         ins->name_tok.column);
}

/* Remembers a built instruction under its name; takes its shape. */
static kc_status* kc__remember(kc__hlo_parser* p, kc__hlo_instr* ins, int32_t id,
                               int32_t* out_index) {
  kc__hlo_value v;
  v.name = ins->name_tok.text;
  v.shape = ins->shape;
  v.id = id;
  v.line = ins->name_tok.line;
  memcpy(v.m2m, ins->layouts.first, sizeof v.m2m);
  v.nondefault = ins->layouts.nondefault > 0;
  size_t count = p->values.size / sizeof v;
  if (count >= INT32_MAX || !kc__buf_append(&p->values, &v, sizeof v)) {
    return kc__parse_oom();
  }
  ins->shape = NULL;
  *out_index = (int32_t)count;
  return kc__strmap_put(&p->names, v.name, (int32_t)count) ? NULL : kc__parse_oom();
}

/* "parameter, constant, ..., compare, ...": every opcode the parser
 * reads, for messages. */
static void kc__supported_opcodes(char* buf, size_t cap) {
  size_t len = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < KC__ARRAY_SIZE(kc__hlo_opcodes); ++i) {
    if (strcmp(kc__hlo_opcodes[i].name, "exp") == 0) continue; /* a second spelling */
    kc__appendf(buf, cap, &len, "%s%s", i ? ", " : "", kc__hlo_opcodes[i].name);
  }
  const kc__op_def* d;
  for (size_t i = 0; (d = kc__op_def_at(i)) != NULL; ++i) {
    kc__appendf(buf, cap, &len, ", %s", d->name);
  }
}

static const kc__hlo_opcode* kc__find_opcode(kc_string_view word) {
  for (size_t i = 0; i < KC__ARRAY_SIZE(kc__hlo_opcodes); ++i) {
    const kc__hlo_opcode* op = &kc__hlo_opcodes[i];
    if (word.size == op->size && memcmp(word.data, op->name, op->size) == 0) return op;
  }
  return NULL;
}

/* The head of an instruction: [ROOT] name = SHAPE opcode. */
static kc_status* kc__parse_head(kc__hlo_parser* p, kc__hlo_instr* ins,
                                 bool* out_root) {
  kc__lexer* lx = &p->lx;
  kc__token root_tok = lx->tok;
  *out_root = false;
  if (kc__tok_is_word(&root_tok, "ROOT")) {
    kc__token next = kc__lex_peek(lx);
    if (!kc__tok_is_punct(&next, '=')) {
      if (p->root >= 0) {
        const kc__hlo_value* first = kc__value(p, p->root);
        return kc__lex_fail(lx, &root_tok,
                            "expected one ROOT instruction, got a second (the "
                            "first is %s at line %d)",
                            KC__Q(first->name), first->line);
      }
      *out_root = true;
      kc__lex_next(lx);
    }
  }
  ins->name_tok = lx->tok;
  if (ins->name_tok.kind != KC__TOK_NAME && ins->name_tok.kind != KC__TOK_IDENT) {
    return kc__lex_expected(lx, &ins->name_tok, "an instruction or '}'");
  }
  int32_t earlier = kc__strmap_get(&p->names, ins->name_tok.text);
  if (earlier >= 0) {
    return kc__lex_fail(lx, &ins->name_tok,
                        "instruction %s is defined twice (first at line %d)",
                        KC__Q(ins->name_tok.text),
                        kc__value(p, earlier)->line);
  }
  kc__lex_next(lx);
  KC__TRY(kc__lex_expect(lx, '='));
  ins->shape_tok = lx->tok;
  KC__TRY(kc__parse_shape(lx, 0, &ins->layouts, &ins->shape));
  ins->opcode_tok = lx->tok;
  if (ins->opcode_tok.kind != KC__TOK_IDENT) {
    return kc__lex_expected(lx, &ins->opcode_tok, "an opcode");
  }
  ins->op = kc__find_opcode(ins->opcode_tok.text);
  if (!ins->op && (ins->def = kc__op_def_find_name(ins->opcode_tok.text)) != NULL) {
    ins->table_op.name = ins->def->name;
    ins->table_op.size = strlen(ins->def->name);
    ins->table_op.kind = KC__HLO_TABLE;
    ins->table_op.op = (kc_opcode)ins->def->op;
    ins->op = &ins->table_op;
  }
  if (!ins->op) {
    char supported[1024];
    kc__supported_opcodes(supported, sizeof supported);
    return kc__lex_fail(lx, &ins->opcode_tok,
                        "instruction %s: opcode %s is not supported "
                        "(supported: %s)",
                        KC__Q(ins->name_tok.text), KC__Q(ins->opcode_tok.text), supported);
  }
  kc__lex_next(lx);
  return NULL;
}

static kc_status* kc__parse_instruction(kc__hlo_parser* p) {
  kc__hlo_instr ins;
  memset(&ins, 0, sizeof ins);
  bool is_root = false;
  int32_t id = -1, index = -1;
  kc_status* st = kc__parse_head(p, &ins, &is_root);
  if (!st) st = kc__parse_body(p, &ins, &id);
  if (!st) st = kc__remember(p, &ins, id, &index);
  if (!st && is_root) p->root = index;
  kc_shape_destroy(ins.shape);
  kc__buf_free(&ins.attrs);
  kc__buf_free(&ins.constraints);
  kc__buf_free(&ins.callees);
  kc__arena_free(&p->tmp);
  return st;
}

/* ------------------------------------------------------------------------ */
/* Computations                                                              */
/* ------------------------------------------------------------------------ */

/* ", key=value" pairs nobody reads (module and computation headers). */
static kc_status* kc__skip_attrs(kc__lexer* lx) {
  while (kc__tok_is_punct(&lx->tok, ',')) {
    kc__lex_next(lx);
    if (lx->tok.kind != KC__TOK_IDENT) {
      return kc__lex_expected(lx, &lx->tok, "an attribute name");
    }
    kc__lex_next(lx);
    KC__TRY(kc__lex_expect(lx, '='));
    KC__TRY(kc__lex_skip_value(lx));
  }
  return NULL;
}

/* An optional signature "(params) -> shape" before a computation's '{'. */
static kc_status* kc__skip_signature(kc__lexer* lx) {
  if (kc__tok_is_punct(&lx->tok, '(')) {
    KC__TRY(kc__lex_skip_group(lx, NULL));
  }
  if (!kc__tok_is_punct(&lx->tok, '-')) return NULL;
  kc__lex_next(lx);
  KC__TRY(kc__lex_expect(lx, '>'));
  for (;;) {
    const kc__token* t = &lx->tok;
    if (t->kind == KC__TOK_END || t->kind == KC__TOK_ERROR) {
      return kc__lex_expected(lx, t, "'{'");
    }
    if (kc__tok_is_punct(t, '{')) {
      /* A layout of the result shape holds numbers; the body does not. */
      kc__token next = kc__lex_peek(lx);
      if (next.kind != KC__TOK_NUMBER) return NULL;
    }
    if (kc__tok_is_punct(t, '{') || kc__tok_is_punct(t, '(') || kc__tok_is_punct(t, '[')) {
      KC__TRY(kc__lex_skip_group(lx, NULL));
    } else {
      kc__lex_next(lx);
    }
  }
}

/* "{ instructions }": the body of a computation, at its '{'. Without a
 * ROOT the last instruction is the result, as in XLA. */
static kc_status* kc__parse_scope(kc__hlo_parser* p) {
  kc__lexer* lx = &p->lx;
  KC__TRY(kc__lex_expect(lx, '{'));
  if (kc__tok_is_punct(&lx->tok, '}')) {
    return kc__lex_expected(lx, &lx->tok, "an instruction");
  }
  while (!kc__tok_is_punct(&lx->tok, '}')) {
    KC__TRY(kc__parse_instruction(p));
  }
  kc__lex_next(lx);
  if (p->root < 0) p->root = (int32_t)(p->values.size / sizeof(kc__hlo_value)) - 1;
  return NULL;
}

/* A computation other than the entry: remembered, and parsed where a
 * fusion or call names it. */
static kc_status* kc__record_computation(kc__hlo_parser* p) {
  kc__lexer* lx = &p->lx;
  kc__token name = lx->tok;
  kc__hlo_module* m = p->module;
  if (kc__strmap_get(&m->names, name.text) >= 0) {
    return kc__lex_fail(lx, &name, "computation %s is defined twice",
                        KC__Q(name.text));
  }
  kc__lex_next(lx);
  KC__TRY(kc__skip_signature(lx));
  if (!kc__tok_is_punct(&lx->tok, '{')) return kc__lex_expected(lx, &lx->tok, "'{'");
  kc__hlo_computation c;
  memset(&c, 0, sizeof c);
  c.name = name.text;
  c.at = *lx;
  size_t count = m->computations.size / sizeof c;
  if (count >= INT32_MAX || !kc__buf_append(&m->computations, &c, sizeof c) ||
      !kc__strmap_put(&m->names, name.text, (int32_t)count)) {
    return kc__parse_oom();
  }
  KC__TRY(kc__lex_skip_group(lx, NULL));
  return kc__skip_attrs(lx);
}

static kc_status* kc__parse_entry(kc__hlo_parser* p) {
  kc__lexer* lx = &p->lx;
  kc__lex_next(lx); /* ENTRY */
  if (lx->tok.kind != KC__TOK_NAME && lx->tok.kind != KC__TOK_IDENT) {
    return kc__lex_expected(lx, &lx->tok, "a computation name");
  }
  kc__lex_next(lx);
  KC__TRY(kc__skip_signature(lx));
  KC__TRY(kc__parse_scope(p));
  return kc__skip_attrs(lx);
}

/* The debug tables JAX prints after the module's header (FileNames,
 * FunctionNames, FileLocations, StackFrames): rows of "N value" that only
 * metadata refers to, which kcall does not read. */
static bool kc__is_debug_table(const kc__token* t) {
  static const char* const tables[] = {"FileNames", "FunctionNames",
                                       "FileLocations", "StackFrames"};
  for (size_t i = 0; i < KC__ARRAY_SIZE(tables); ++i) {
    if (kc__tok_is_word(t, tables[i])) return true;
  }
  return false;
}

static kc_status* kc__skip_debug_table(kc__lexer* lx) {
  kc__token table = lx->tok;
  kc__lex_next(lx);
  while (lx->tok.kind == KC__TOK_NUMBER) {
    kc__lex_next(lx);
    const kc__token* t = &lx->tok;
    if (t->kind == KC__TOK_STRING) {
      kc__lex_next(lx);
    } else if (kc__tok_is_punct(t, '{')) {
      KC__TRY(kc__lex_skip_group(lx, NULL));
    } else {
      return kc_status_add_context(
          kc__lex_expected(lx, t, "a string or '{...}' after the row number"),
          "in debug table %s", KC__Q(table.text));
    }
  }
  return NULL;
}

static kc_status* kc__parse_module(kc__hlo_parser* p, kc_program** out) {
  kc__lexer* lx = &p->lx;
  if (!kc__tok_is_word(&lx->tok, "HloModule")) {
    return kc__lex_expected(lx, &lx->tok, "'HloModule'");
  }
  kc__lex_next(lx);
  kc__token name = lx->tok;
  if (name.kind != KC__TOK_IDENT && name.kind != KC__TOK_NAME) {
    return kc__lex_expected(lx, &name, "a module name");
  }
  kc__lex_next(lx);
  KC__TRY(kc__skip_attrs(lx));
  KC__TRY(kc_program_builder_create(name.text, &p->b));
  p->module->top = p->b;
  bool have_entry = false;
  while (lx->tok.kind != KC__TOK_END) {
    kc__token t = lx->tok;
    if (kc__tok_is_word(&t, "ENTRY")) {
      if (have_entry) {
        return kc__lex_fail(lx, &t, "expected one ENTRY computation, got a second");
      }
      have_entry = true;
      KC__TRY(kc__parse_entry(p));
    } else if (kc__is_debug_table(&t) && kc__lex_peek(lx).kind == KC__TOK_NUMBER) {
      KC__TRY(kc__skip_debug_table(lx));
    } else if (t.kind == KC__TOK_IDENT || t.kind == KC__TOK_NAME) {
      KC__TRY(kc__record_computation(p));
    } else {
      return kc__lex_expected(lx, &t, "a computation");
    }
  }
  if (!have_entry) return kc__lex_expected(lx, &lx->tok, "an ENTRY computation");
  KC__TRY(kc_program_builder_set_root(p->b, kc__value(p, p->root)->id));
  kc_program_builder* b = p->b;
  p->b = NULL; /* finish consumes it, whether or not it succeeds */
  return kc_program_builder_finish(b, out);
}

/* Frees what a parser of one scope holds (not the builder). */
static void kc__parser_free(kc__hlo_parser* p) {
  kc__hlo_value* values = (kc__hlo_value*)(void*)p->values.data;
  for (size_t i = 0; i < p->values.size / sizeof *values; ++i) {
    kc_shape_destroy(values[i].shape);
  }
  kc__buf_free(&p->values);
  kc__buf_free(&p->operands);
  kc__buf_free(&p->operand_values);
  kc__buf_free(&p->path);
  kc__buf_free(&p->literal);
  kc__strmap_free(&p->names);
  kc__arena_free(&p->tmp);
}

kc_status* kc_program_parse(kc_string_view text, kc_program** out_program) {
  if (!out_program || (!text.data && text.size)) {
    return kc_status_create(KC_INVALID_ARGUMENT, "kc_program_parse: %s is NULL",
                            out_program ? "text" : "out_program");
  }
  *out_program = NULL;
  kc__hlo_parser p;
  memset(&p, 0, sizeof p);
  p.root = -1;
  /* A byte-order mark, as some editors write, is not part of the text. */
  if (text.size >= 3 && memcmp(text.data, "\xEF\xBB\xBF", 3) == 0) {
    text.data += 3;
    text.size -= 3;
  }
  kc__hlo_module module;
  memset(&module, 0, sizeof module);
  p.module = &module;
  kc__lexer_init(&p.lx, text, 1, 1);
  kc_status* st = kc__parse_module(&p, out_program);
  kc_program_builder_destroy(p.b);
  kc__parser_free(&p);
  kc__hlo_computation* comps = (kc__hlo_computation*)(void*)module.computations.data;
  for (size_t i = 0; i < module.computations.size / sizeof *comps; ++i) {
    kc_program_destroy(comps[i].program);
  }
  kc__strmap_free(&module.names);
  kc__buf_free(&module.computations);
  return st;
}
