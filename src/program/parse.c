/* The HLO-text parser: kc_program_parse and kc_shape_parse.
 *
 * Programs are made only through the public builder (program.h), so this
 * file does not depend on how a program is represented. Names map to
 * instructions through a hash map keyed by views into the text, and every
 * instruction's temporaries live in one arena emptied after it is added,
 * so parsing takes time and memory linear in the text. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal/strmap.h"
#include "program/parse_internal.h"
#include "program/shape_internal.h"

/* ======================================================================== */
/* Shapes                                                                   */
/* ======================================================================== */

#define KC__ELEMENT_TYPES_TEXT \
  "an element type (pred, s8..s64, u8..u64, f16, bf16, f32, f64, c64, c128)"

static kc_status* kc__parse_shape(kc__lexer* lx, int depth, kc_shape** out);

/* "expected the row-major layout {2,1,0} (...), got X" at `at`. */
static kc_status* kc__layout_error(const kc__lexer* lx, const kc__token* at,
                                   int32_t rank) {
  char what[256];
  size_t len = (size_t)snprintf(what, sizeof what, "the row-major layout {");
  for (int32_t i = rank - 1; i >= 0 && len < sizeof what; --i) {
    len += (size_t)snprintf(what + len, sizeof what - len, i == rank - 1 ? "%d" : ",%d", i);
  }
  if (len < sizeof what) {
    snprintf(what + len, sizeof what - len, "} (non-default layouts are not supported)");
  }
  return kc__lex_expected(lx, at, what);
}

/* A layout "{...}" after an array's dims; only the row-major one. */
static kc_status* kc__parse_layout(kc__lexer* lx, int32_t rank) {
  kc__token open = lx->tok;
  kc__lex_next(lx);
  bool row_major = true;
  int32_t count = 0;
  /* Items separated by commas, none after the last: this and every list
   * below. */
  for (bool more = !kc__tok_is_punct(&lx->tok, '}'); more;) {
    bool negative;
    uint64_t v;
    const kc__token* t = &lx->tok;
    if (t->kind != KC__TOK_NUMBER || !kc__number_to_int(t->text, &negative, &v)) {
      return kc__layout_error(lx, t, rank);
    }
    if (count >= rank || negative || v != (uint64_t)(rank - 1 - count)) {
      row_major = false;
    }
    count++;
    kc__lex_next(lx);
    if (!kc__tok_is_punct(&lx->tok, ',')) break;
    kc__lex_next(lx);
  }
  if (!kc__tok_is_punct(&lx->tok, '}')) return kc__layout_error(lx, &lx->tok, rank);
  if (!row_major || count != rank) {
    kc__token got = open;
    got.kind = KC__TOK_IDENT;
    got.text.size = (size_t)(lx->tok.text.data + 1 - open.text.data);
    return kc__layout_error(lx, &got, rank);
  }
  kc__lex_next(lx);
  return NULL;
}

/* An array shape as written, before it becomes a kc_shape: operands
 * repeat the shapes of their instructions, and comparing those needs no
 * allocation. */
typedef struct kc__array_text {
  kc__token start;
  DLDataType dtype;
  int32_t rank;
  int64_t dims[KC_TENSOR_MAX_NDIM];
} kc__array_text;

static kc_status* kc__parse_array_text(kc__lexer* lx, kc__array_text* out) {
  out->start = lx->tok;
  if (out->start.kind != KC__TOK_IDENT ||
      !kc__hlo_dtype_parse(out->start.text, &out->dtype)) {
    return kc__lex_expected(lx, &out->start, KC__ELEMENT_TYPES_TEXT " or '('");
  }
  kc__lex_next(lx);
  KC__TRY(kc__lex_expect(lx, '['));
  out->rank = 0;
  for (bool more = kc__lex_list_begin(lx, ']'); more;) {
    const kc__token* t = &lx->tok;
    if (kc__tok_is_punct(t, '<') || kc__tok_is_punct(t, '?')) {
      return kc__lex_fail(lx, t, "expected a dimension size, got '%c': dynamic "
                          "dimensions are not supported", t->text.data[0]);
    }
    if (out->rank == KC_TENSOR_MAX_NDIM) {
      return kc__lex_fail(lx, t, "a shape of more than %d dimensions",
                          KC_TENSOR_MAX_NDIM);
    }
    KC__TRY(kc__lex_int(lx, "a dimension size", 0, INT64_MAX, &out->dims[out->rank]));
    out->rank++;
    KC__TRY(kc__lex_list_next(lx, ']', &more));
  }
  if (kc__tok_is_punct(&lx->tok, '{')) KC__TRY(kc__parse_layout(lx, out->rank));
  return NULL;
}

static kc_status* kc__array_text_create(const kc__lexer* lx, const kc__array_text* a,
                                        kc_shape** out) {
  kc_status* st = kc_shape_create_array(a->dtype, a->dims, a->rank, out);
  if (st && lx->column_only) {
    return kc_status_add_context(st, "column %d", a->start.column);
  }
  return kc_status_add_context(st, "line %d, column %d", a->start.line, a->start.column);
}

static bool kc__array_text_equal(const kc__array_text* a, const kc_shape* s) {
  return !kc_shape_is_tuple(s) && kc_dtype_equal(a->dtype, kc_shape_get_dtype(s)) &&
         a->rank == kc_shape_get_rank(s) &&
         (a->rank == 0 ||
          memcmp(a->dims, kc_shape_get_dims(s), (size_t)a->rank * sizeof(int64_t)) == 0);
}

static kc_status* kc__parse_array_shape(kc__lexer* lx, kc_shape** out) {
  kc__array_text a;
  KC__TRY(kc__parse_array_text(lx, &a));
  return kc__array_text_create(lx, &a, out);
}

static void kc__destroy_shapes(kc__buf* elems) {
  kc_shape** list = (kc_shape**)(void*)elems->data;
  for (size_t i = 0; i < elems->size / sizeof *list; ++i) kc_shape_destroy(list[i]);
  kc__buf_free(elems);
}

static kc_status* kc__parse_tuple_shape(kc__lexer* lx, int depth,
                                        kc_shape** out) {
  kc__token open = lx->tok;
  kc__lex_next(lx);
  kc__buf elems = {0};
  kc_status* st = NULL;
  for (bool more = kc__lex_list_begin(lx, ')'); more;) {
    kc_shape* e = NULL;
    st = kc__parse_shape(lx, depth + 1, &e);
    if (st) break;
    if (!kc__buf_append(&elems, &e, sizeof e)) {
      kc_shape_destroy(e);
      st = kc__parse_oom();
      break;
    }
    st = kc__lex_list_next(lx, ')', &more);
    if (st) break;
  }
  if (!st) {
    st = kc_shape_create_tuple((const kc_shape* const*)(const void*)elems.data,
                               elems.size / sizeof(kc_shape*), out);
    if (st) st = kc_status_add_context(st, "line %d, column %d", open.line, open.column);
  }
  kc__destroy_shapes(&elems);
  return st;
}

static kc_status* kc__parse_shape(kc__lexer* lx, int depth, kc_shape** out) {
  *out = NULL;
  if (!kc__tok_is_punct(&lx->tok, '(')) return kc__parse_array_shape(lx, out);
  if (depth >= KC__PARSE_MAX_DEPTH) {
    return kc__lex_fail(lx, &lx->tok, "tuples nested deeper than %d",
                        KC__PARSE_MAX_DEPTH);
  }
  return kc__parse_tuple_shape(lx, depth, out);
}

kc_status* kc_shape_parse(kc_string_view text, kc_shape** out_shape) {
  if (!out_shape || (!text.data && text.size)) {
    return kc_status_create(KC_INVALID_ARGUMENT, "kc_shape_parse: %s is NULL",
                            out_shape ? "text" : "out_shape");
  }
  *out_shape = NULL;
  kc__lexer lx;
  kc__lexer_init(&lx, text, 1, 1);
  lx.column_only = true;
  kc_shape* shape = NULL;
  kc_status* st = kc__parse_shape(&lx, 0, &shape);
  if (!st && lx.tok.kind != KC__TOK_END) {
    st = kc__lex_expected(&lx, &lx.tok, "the end of the shape");
  }
  if (st) {
    kc_shape_destroy(shape);
    return kc_status_add_context(st, "parsing shape %s", KC__Q(text));
  }
  *out_shape = shape;
  return NULL;
}

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
  KC__HLO_UNARY
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
};
#undef KC__OPCODE

#define KC__SUPPORTED_OPCODES_TEXT                                             \
  "parameter, constant, tuple, get-tuple-element, custom-call, add, "         \
  "subtract, multiply, divide, maximum, minimum, negate, exponential, log, " \
  "convert, broadcast, reshape"

/* What the parser remembers of an instruction once it is built. */
typedef struct kc__hlo_value {
  kc_string_view name;
  kc_shape* shape; /* owned: the shape the text gives it */
  int32_t id;
  int32_t line;
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
} kc__hlo_instr;

enum {
  KC__SEEN_INDEX = 1u << 0,
  KC__SEEN_DIMENSIONS = 1u << 1,
  KC__SEEN_TARGET = 1u << 2,
  KC__SEEN_API = 1u << 3,
  KC__SEEN_CONFIG = 1u << 4,
  KC__SEEN_SIDE_EFFECT = 1u << 5,
  KC__SEEN_ALIASING = 1u << 6,
  KC__SEEN_SCHEDULE = 1u << 7
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
    KC__TRY(kc__parse_shape(lx, 0, &tuple));
  } else if (shape_tok.kind == KC__TOK_IDENT) {
    kc__token next = kc__lex_peek(lx);
    if (kc__tok_is_punct(&next, '[')) {
      KC__TRY(kc__parse_array_text(lx, &array));
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
    case kDLFloat: return t.bits == 32 || t.bits == 64;
    default: return false;
  }
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
  if (lit->dtype.code == kDLFloat) {
    bool minus = kc__tok_is_punct(&t, '-');
    kc__token w = minus ? kc__lex_peek(lx) : t;
    double d;
    if (kc__tok_is_word(&w, "inf") || kc__tok_is_word(&w, "nan")) {
      d = kc__tok_is_word(&w, "inf") ? (double)INFINITY : (double)NAN;
      if (minus) {
        d = -d;
        kc__lex_next(lx);
      }
    } else if (t.kind != KC__TOK_NUMBER || !kc__number_to_double(t.text, &d)) {
      return kc__scalar_error(lx, &t, lit);
    }
    if (lit->dtype.bits == 32) {
      float f = (float)d;
      memcpy(dst, &f, sizeof f);
    } else {
      memcpy(dst, &d, sizeof d);
    }
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
                        "type of pred, s8..s64, u8..u64, f32 or f64, got %s",
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
    if (!st && !handled) st = kc__lex_skip_value(lx);
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

/* Hands a parsed instruction to the builder. */
static kc_status* kc__build(kc__hlo_parser* p, kc__hlo_instr* ins,
                            int64_t number, const void* literal,
                            size_t literal_size, const kc_custom_call_desc* desc,
                            int32_t* out_id) {
  kc_program_builder* b = p->b;
  kc_string_view name = ins->name_tok.text;
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
      return kc_program_builder_add_custom_call(b, desc, name, out_id);
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
  size_t count = p->values.size / sizeof v;
  if (count >= INT32_MAX || !kc__buf_append(&p->values, &v, sizeof v)) {
    return kc__parse_oom();
  }
  ins->shape = NULL;
  *out_index = (int32_t)count;
  return kc__strmap_put(&p->names, v.name, (int32_t)count) ? NULL : kc__parse_oom();
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
  KC__TRY(kc__parse_shape(lx, 0, &ins->shape));
  ins->opcode_tok = lx->tok;
  if (ins->opcode_tok.kind != KC__TOK_IDENT) {
    return kc__lex_expected(lx, &ins->opcode_tok, "an opcode");
  }
  ins->op = kc__find_opcode(ins->opcode_tok.text);
  if (!ins->op) {
    return kc__lex_fail(lx, &ins->opcode_tok,
                        "instruction %s: opcode %s is not supported "
                        "(supported: " KC__SUPPORTED_OPCODES_TEXT ")",
                        KC__Q(ins->name_tok.text),
                        KC__Q(ins->opcode_tok.text));
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

static kc_status* kc__skip_computation(kc__lexer* lx) {
  kc__lex_next(lx); /* the name */
  KC__TRY(kc__skip_signature(lx));
  if (!kc__tok_is_punct(&lx->tok, '{')) return kc__lex_expected(lx, &lx->tok, "'{'");
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
  KC__TRY(kc__lex_expect(lx, '{'));
  if (kc__tok_is_punct(&lx->tok, '}')) {
    return kc__lex_expected(lx, &lx->tok, "an instruction");
  }
  while (!kc__tok_is_punct(&lx->tok, '}')) {
    KC__TRY(kc__parse_instruction(p));
  }
  kc__lex_next(lx);
  return kc__skip_attrs(lx);
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
  bool have_entry = false;
  while (lx->tok.kind != KC__TOK_END) {
    kc__token t = lx->tok;
    if (kc__tok_is_word(&t, "ENTRY")) {
      if (have_entry) {
        return kc__lex_fail(lx, &t, "expected one ENTRY computation, got a second");
      }
      have_entry = true;
      KC__TRY(kc__parse_entry(p));
    } else if (t.kind == KC__TOK_IDENT || t.kind == KC__TOK_NAME) {
      KC__TRY(kc__skip_computation(lx));
    } else {
      return kc__lex_expected(lx, &t, "a computation");
    }
  }
  if (!have_entry) return kc__lex_expected(lx, &lx->tok, "an ENTRY computation");
  if (p->root >= 0) {
    KC__TRY(kc_program_builder_set_root(p->b, kc__value(p, p->root)->id));
  }
  kc_program_builder* b = p->b;
  p->b = NULL; /* finish consumes it, whether or not it succeeds */
  return kc_program_builder_finish(b, out);
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
  kc__lexer_init(&p.lx, text, 1, 1);
  kc_status* st = kc__parse_module(&p, out_program);
  kc_program_builder_destroy(p.b);
  kc__hlo_value* values = (kc__hlo_value*)(void*)p.values.data;
  for (size_t i = 0; i < p.values.size / sizeof *values; ++i) {
    kc_shape_destroy(values[i].shape);
  }
  kc__buf_free(&p.values);
  kc__buf_free(&p.operands);
  kc__buf_free(&p.operand_values);
  kc__buf_free(&p.path);
  kc__buf_free(&p.literal);
  kc__strmap_free(&p.names);
  kc__arena_free(&p.tmp);
  return st;
}
