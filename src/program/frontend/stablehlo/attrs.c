/* Attribute values of StableHLO operations, decoded from where the reader
 * recorded them (stablehlo_internal.h). */
#include <math.h>

#include "kernels/half.h"
#include "program/frontend/parse_internal.h"
#include "program/frontend/stablehlo/stablehlo_internal.h"

static bool kc__word(const kc__token* t, const char* w) { return kc__tok_is_word(t, w); }

static bool kc__next_is(const kc__lexer* lx, char c) {
  kc__token next = kc__lex_peek(lx);
  return kc__tok_is_punct(&next, c);
}

const kc__shlo_item* kc__shlo_attr(const kc__shlo_op* op, const char* key) {
  /* The items are the op's own (a kc__buf it owns): marking one read
   * changes no value a caller holds. */
  kc__shlo_item* items = (kc__shlo_item*)(void*)op->attrs.data;
  for (size_t i = 0; i < op->attrs.size / sizeof *items; ++i) {
    if (kc_sv_equal(items[i].key, kc_sv(key))) {
      items[i].read = true;
      return &items[i];
    }
  }
  return NULL;
}

const kc__shlo_item* kc__shlo_word(const kc__shlo_op* op, size_t i) {
  const kc__shlo_item* items = (const kc__shlo_item*)(const void*)op->words.data;
  return i < op->words.size / sizeof *items ? &items[i] : NULL;
}

kc__lexer kc__shlo_resolve(kc__shlo_module* m, const kc__lexer* at) {
  if (!kc__tok_is_punct(&at->tok, '#')) return *at;
  kc__token name = kc__lex_peek(at);
  if (name.kind != KC__TOK_IDENT) return *at;
  kc_string_view key = {at->tok.text.data,
                        (size_t)(name.text.data + name.text.size - at->tok.text.data)};
  int32_t i = kc__strmap_get(&m->aliases, key);
  return i < 0 ? *at : ((const kc__lexer*)(const void*)m->alias_list.data)[i];
}

/* Skips "<...>" at the current '<', nested angles counted ("->" inside
 * a convolution's dimension numbers is not a closer). */
static kc_status* kc__skip_angle(kc__lexer* lx) {
  kc__token open = lx->tok;
  int depth = 0;
  do {
    const kc__token* t = &lx->tok;
    if (t->kind == KC__TOK_END || t->kind == KC__TOK_ERROR) {
      return kc__lex_fail(lx, &open, "'<' is not closed");
    }
    if (kc__tok_is_punct(t, '-') && kc__next_is(lx, '>')) {
      kc__lex_next(lx);
    } else if (kc__tok_is_punct(t, '<')) {
      depth++;
    } else if (kc__tok_is_punct(t, '>')) {
      depth--;
    }
    kc__lex_next(lx);
  } while (depth > 0);
  return NULL;
}

kc_status* kc__shlo_skip_value(kc__lexer* lx, bool typed) {
  const kc__token* t = &lx->tok;
  if (kc__tok_is_punct(t, '[') || kc__tok_is_punct(t, '(') || kc__tok_is_punct(t, '{')) {
    KC_RETURN_IF_ERROR(kc__lex_skip_group(lx, NULL));
  } else if (kc__tok_is_punct(t, '#')) {
    kc__lex_next(lx);
    if (lx->tok.kind != KC__TOK_IDENT) return kc__lex_expected(lx, &lx->tok, "an attribute name");
    kc__lex_next(lx);
    if (kc__tok_is_punct(&lx->tok, '<')) KC_RETURN_IF_ERROR(kc__skip_angle(lx));
  } else if (kc__tok_is_punct(t, '<')) {
    KC_RETURN_IF_ERROR(kc__skip_angle(lx)); /* algorithm = <...> */
  } else if (kc__tok_is_punct(t, '@')) {
    kc__lex_next(lx);
    kc__lex_next(lx);
  } else if (t->kind == KC__TOK_IDENT && kc__next_is(lx, '<')) {
    kc__lex_next(lx);
    KC_RETURN_IF_ERROR(kc__skip_angle(lx));
  } else if (t->kind == KC__TOK_IDENT || t->kind == KC__TOK_NUMBER ||
             t->kind == KC__TOK_STRING) {
    kc__lex_next(lx);
  } else {
    return kc__lex_expected(lx, t, "an attribute value");
  }
  if (typed && kc__tok_is_punct(&lx->tok, ':')) {
    /* ": i64", ": tensor<2xi64>" */
    kc__lex_next(lx);
    if (lx->tok.kind != KC__TOK_IDENT) return kc__lex_expected(lx, &lx->tok, "a type");
    kc__lex_next(lx);
    if (kc__tok_is_punct(&lx->tok, '<')) KC_RETURN_IF_ERROR(kc__skip_angle(lx));
  }
  return NULL;
}

/* ---- integers ------------------------------------------------------------- */

typedef struct kc__ints {
  int64_t* out;
  size_t cap, count;
  const char* what;
} kc__ints;

static kc_status* kc__ints_push(const kc__lexer* lx, kc__ints* v, int64_t x) {
  if (v->count == v->cap) {
    return kc__lex_fail(lx, &lx->tok, "%s: more than %zu values", v->what, v->cap);
  }
  v->out[v->count++] = x;
  return NULL;
}

/* A number or true/false at the current token, consumed. */
static kc_status* kc__int_token(kc__lexer* lx, kc__ints* v) {
  const kc__token* t = &lx->tok;
  if (kc__word(t, "true") || kc__word(t, "false")) {
    KC_RETURN_IF_ERROR(kc__ints_push(lx, v, kc__word(t, "true")));
    kc__lex_next(lx);
    return NULL;
  }
  char what[96];
  snprintf(what, sizeof what, "an integer of %s", v->what);
  int64_t x;
  KC_RETURN_IF_ERROR(kc__lex_int(lx, what, INT64_MIN, INT64_MAX, &x));
  return kc__ints_push(lx, v, x);
}

/* Nested [...] lists of integers, flattened. */
static kc_status* kc__int_lists(kc__lexer* lx, kc__ints* v) {
  int depth = 0;
  do {
    if (kc__tok_is_punct(&lx->tok, '[')) {
      if (++depth > KC__PARSE_MAX_DEPTH) return kc__lex_fail(lx, &lx->tok, "lists nested too deep");
      kc__lex_next(lx);
    } else if (kc__tok_is_punct(&lx->tok, ']')) {
      depth--;
      kc__lex_next(lx);
    } else if (kc__tok_is_punct(&lx->tok, ',')) {
      kc__lex_next(lx);
    } else {
      KC_RETURN_IF_ERROR(kc__int_token(lx, v));
    }
  } while (depth > 0);
  return NULL;
}

kc_status* kc__shlo_ints(kc__shlo_module* m, const kc__lexer* at, const char* what,
                         int64_t* out, size_t cap, size_t* out_count) {
  kc__lexer lx = kc__shlo_resolve(m, at);
  kc__ints v = {.out = out, .cap = cap, .count = 0, .what = what};
  const kc__token* t = &lx.tok;
  if (kc__tok_is_punct(t, '[')) {
    KC_RETURN_IF_ERROR(kc__int_lists(&lx, &v));
  } else if (kc__word(t, "array")) {
    /* array<i64: 1, 2> or array<i64> */
    kc__lex_next(&lx);
    KC_RETURN_IF_ERROR(kc__lex_expect(&lx, '<'));
    if (lx.tok.kind != KC__TOK_IDENT) return kc__lex_expected(&lx, &lx.tok, "an element type");
    kc__lex_next(&lx);
    if (kc__tok_is_punct(&lx.tok, ':')) {
      kc__lex_next(&lx);
      for (;;) {
        KC_RETURN_IF_ERROR(kc__int_token(&lx, &v));
        if (!kc__tok_is_punct(&lx.tok, ',')) break;
        kc__lex_next(&lx);
      }
    }
    KC_RETURN_IF_ERROR(kc__lex_expect(&lx, '>'));
  } else if (kc__word(t, "dense")) {
    kc__lex_next(&lx);
    KC_RETURN_IF_ERROR(kc__lex_expect(&lx, '<'));
    bool list = kc__tok_is_punct(&lx.tok, '[');
    if (list) {
      KC_RETURN_IF_ERROR(kc__int_lists(&lx, &v));
    } else if (!kc__tok_is_punct(&lx.tok, '>')) {
      KC_RETURN_IF_ERROR(kc__int_token(&lx, &v));
    }
    KC_RETURN_IF_ERROR(kc__lex_expect(&lx, '>'));
    KC_RETURN_IF_ERROR(kc__lex_expect(&lx, ':'));
    /* tensor<2x2xi64>, tensor<2xindex>: only the element count matters */
    if (!kc__word(&lx.tok, "tensor")) return kc__lex_expected(&lx, &lx.tok, "tensor<...>");
    kc__lex_next(&lx);
    kc__token open = lx.tok;
    kc_string_view text;
    if (!kc__tok_is_punct(&open, '<') || !kc__lex_raw_until(&lx, '>', &text)) {
      return kc__lex_expected(&lx, &open, "'<' and the tensor type's dims");
    }
    int64_t n = 1;
    for (size_t i = 0; i < text.size;) {
      int64_t d = 0;
      size_t start = i;
      while (i < text.size && text.data[i] >= '0' && text.data[i] <= '9' && d < INT32_MAX) {
        d = d * 10 + (text.data[i++] - '0');
      }
      if (i == start || i >= text.size || text.data[i] != 'x') break;
      n *= d;
      i++;
      if (n > (int64_t)cap) break;
    }
    if (!list && v.count == 1) {
      while ((int64_t)v.count < n) KC_RETURN_IF_ERROR(kc__ints_push(&lx, &v, out[0]));
    }
    if ((int64_t)v.count != n) {
      return kc__lex_fail(&lx, &at->tok, "%s: %zu values for %lld elements", what, v.count,
                          (long long)n);
    }
  } else {
    KC_RETURN_IF_ERROR(kc__int_token(&lx, &v));
  }
  *out_count = v.count;
  return NULL;
}

kc_status* kc__shlo_int(kc__shlo_module* m, const kc__lexer* at, const char* what,
                        int64_t* out) {
  size_t n = 0;
  KC_RETURN_IF_ERROR(kc__shlo_ints(m, at, what, out, 1, &n));
  if (n != 1) return kc__lex_fail(at, &at->tok, "%s: expected one integer", what);
  return NULL;
}

kc_status* kc__shlo_bool(kc__shlo_module* m, const kc__lexer* at, const char* what, bool* out) {
  kc__lexer lx = kc__shlo_resolve(m, at);
  if (kc__word(&lx.tok, "true") || kc__word(&lx.tok, "false")) {
    *out = kc__word(&lx.tok, "true");
    return NULL;
  }
  return kc__lex_fail(&lx, &lx.tok, "%s: expected true or false", what);
}

kc_status* kc__shlo_enum(kc__shlo_module* m, const kc__lexer* at, const char* what,
                         kc_string_view* out) {
  kc__lexer lx = kc__shlo_resolve(m, at);
  if (kc__tok_is_punct(&lx.tok, '#')) {
    /* #stablehlo<comparison_direction LT> */
    kc__lex_next(&lx);
    kc__lex_next(&lx);
    KC_RETURN_IF_ERROR(kc__lex_expect(&lx, '<'));
    kc__lex_next(&lx);
  }
  if (lx.tok.kind != KC__TOK_IDENT) {
    char w[96];
    snprintf(w, sizeof w, "a word for %s", what);
    return kc__lex_expected(&lx, &lx.tok, w);
  }
  *out = lx.tok.text;
  return NULL;
}

kc_status* kc__shlo_string(kc__shlo_module* m, const kc__lexer* at, const char* what,
                           kc_string_view* out) {
  kc__lexer lx = kc__shlo_resolve(m, at);
  if (lx.tok.kind != KC__TOK_STRING) {
    char w[96];
    snprintf(w, sizeof w, "a string for %s", what);
    return kc__lex_expected(&lx, &lx.tok, w);
  }
  return kc__lex_string(&lx, &lx.tok, KC__ESCAPES_MLIR, &m->arena, out);
}

kc_status* kc__shlo_field(kc__shlo_module* m, const kc__lexer* at, const char* field,
                          kc__lexer* out, bool* out_found) {
  kc__lexer lx = kc__shlo_resolve(m, at);
  *out_found = false;
  if (!kc__tok_is_punct(&lx.tok, '<')) { /* the pretty form's bare <...> has no name */
    KC_RETURN_IF_ERROR(kc__lex_expect(&lx, '#'));
    kc__lex_next(&lx);
  }
  KC_RETURN_IF_ERROR(kc__lex_expect(&lx, '<'));
  for (bool more = kc__lex_list_begin(&lx, '>'); more;) {
    if (lx.tok.kind != KC__TOK_IDENT) return kc__lex_expected(&lx, &lx.tok, "a field name");
    bool mine = kc_sv_equal(lx.tok.text, kc_sv(field));
    kc__lex_next(&lx);
    KC_RETURN_IF_ERROR(kc__lex_expect(&lx, '='));
    if (mine) {
      *out = lx;
      *out_found = true;
      return NULL;
    }
    KC_RETURN_IF_ERROR(kc__shlo_skip_value(&lx, false));
    KC_RETURN_IF_ERROR(kc__lex_list_next(&lx, '>', &more));
  }
  return NULL;
}

/* ---- dense literals ------------------------------------------------------- */

/* One element of a dense literal at the current token, appended at the
 * element type's width. */
static kc_status* kc__dense_element(kc__lexer* lx, DLDataType dt, const kc__f8_format* f8,
                                    kc__buf* out);

static kc_status* kc__dense_float(kc__lexer* lx, int bits, int code, kc__buf* out) {
  const kc__token* t = &lx->tok;
  bool negative = false;
  uint64_t raw = 0;
  double v;
  bool hex = t->kind == KC__TOK_NUMBER && t->text.size > 2 && t->text.data[0] == '0' &&
             (t->text.data[1] == 'x' || t->text.data[1] == 'X');
  if (hex) {
    /* the bits as stored */
    if (!kc__number_to_int(t->text, &negative, &raw) || negative ||
        (bits < 64 && raw >> bits)) {
      return kc__lex_expected(lx, t, "a float's bits in hex that fit its width");
    }
  } else if (t->kind == KC__TOK_NUMBER && kc__number_to_double(t->text, &v)) {
    if (bits == 64) {
      memcpy(&raw, &v, 8);
    } else if (bits == 32) {
      float f = (float)v;
      uint32_t u;
      memcpy(&u, &f, 4);
      raw = u;
    } else {
      raw = code == kDLBfloat ? kc__f64_to_small(v, 8, 7) : kc__f64_to_small(v, 5, 10);
    }
  } else {
    return kc__lex_expected(lx, t, "a float");
  }
  kc__lex_next(lx);
  return kc__buf_append(out, &raw, (size_t)bits / 8) ? NULL : kc__parse_oom();
}

/* An element of an f8, f6 or f4 type: a float rounded to it, or its bits
 * in hex. */
static kc_status* kc__dense_float8(kc__lexer* lx, const kc__f8_format* f, kc__buf* out) {
  const kc__token* t = &lx->tok;
  bool negative = false;
  uint64_t raw = 0;
  double v;
  unsigned bits = 0;
  if (t->kind == KC__TOK_NUMBER && t->text.size > 2 && t->text.data[0] == '0' &&
      (t->text.data[1] == 'x' || t->text.data[1] == 'X')) {
    if (!kc__number_to_int(t->text, &negative, &raw) || negative || raw > 0xFF) {
      return kc__lex_expected(lx, t, "the bits in hex of an 8-bit float");
    }
    bits = (unsigned)raw;
  } else if (t->kind == KC__TOK_NUMBER && kc__number_to_double(t->text, &v)) {
    if (!kc__f8_encode(f, v, &bits)) {
      return kc__lex_fail(lx, t, "%.*s is not a value of %s", (int)t->text.size, t->text.data,
                          kc__f8_name(f));
    }
  } else {
    return kc__lex_expected(lx, t, "a float or its bits in hex");
  }
  kc__lex_next(lx);
  uint8_t b = (uint8_t)bits;
  return kc__buf_append(out, &b, 1) ? NULL : kc__parse_oom();
}

static kc_status* kc__dense_element(kc__lexer* lx, DLDataType dt, const kc__f8_format* f8,
                                    kc__buf* out) {
  if (f8) return kc__dense_float8(lx, f8, out);
  const kc__token* t = &lx->tok;
  if (dt.code == kDLBool || (dt.code == kDLUInt && dt.bits == 1)) {
    uint8_t b;
    if (kc__word(t, "true") || kc__word(t, "false")) {
      b = kc__word(t, "true");
    } else {
      int64_t x;
      KC_RETURN_IF_ERROR(kc__lex_int(lx, "true, false, 0 or 1", 0, 1, &x));
      return kc__buf_append(out, &(uint8_t){(uint8_t)x}, 1) ? NULL : kc__parse_oom();
    }
    kc__lex_next(lx);
    return kc__buf_append(out, &b, 1) ? NULL : kc__parse_oom();
  }
  if (dt.code == kDLInt || dt.code == kDLUInt) {
    bool negative;
    uint64_t mag;
    if (t->kind != KC__TOK_NUMBER || !kc__number_to_int(t->text, &negative, &mag)) {
      return kc__lex_expected(lx, t, "an integer");
    }
    uint64_t bits = negative ? (uint64_t)0 - mag : mag;
    kc__lex_next(lx);
    return kc__buf_append(out, &bits, dt.bits / 8u) ? NULL : kc__parse_oom();
  }
  if (dt.code == kDLComplex) {
    KC_RETURN_IF_ERROR(kc__lex_expect(lx, '('));
    KC_RETURN_IF_ERROR(kc__dense_float(lx, dt.bits / 2, kDLFloat, out));
    KC_RETURN_IF_ERROR(kc__lex_expect(lx, ','));
    KC_RETURN_IF_ERROR(kc__dense_float(lx, dt.bits / 2, kDLFloat, out));
    return kc__lex_expect(lx, ')');
  }
  return kc__dense_float(lx, dt.bits, dt.code, out);
}

static int kc__hex_digit(char c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* dense_resource<KEY>: the blob the module's builtin resources hold
 * under KEY, "0x" and the hex of a 4-byte alignment then the elements'
 * bytes (little-endian, as MLIR writes them). */
static kc_status* kc__dense_resource(kc__shlo_module* m, kc__lexer* lx, const kc_shape* shape,
                                     void** out_data, size_t* out_size) {
  kc__token start = lx->tok;
  kc__lex_next(lx);
  KC_RETURN_IF_ERROR(kc__lex_expect(lx, '<'));
  kc__token key = lx->tok;
  kc_string_view name = key.text;
  if (key.kind != KC__TOK_STRING && key.kind != KC__TOK_IDENT) {
    return kc__lex_expected(lx, &key, "a resource's name");
  }
  kc__lex_next(lx);
  KC_RETURN_IF_ERROR(kc__lex_expect(lx, '>'));
  if (kc_shape_is_tuple(shape)) return kc__lex_fail(lx, &start, "a tuple constant");
  if (kc_sv_equal(name, KC_SV_LIT("__elided__"))) {
    return kc__lex_fail(lx, &key, "dense_resource<__elided__>: the constant's bytes were left "
                                  "out when the module was printed (print it with large "
                                  "constants kept)");
  }
  const kc__token* blob = kc__shlo_resource(m, name);
  if (!blob) {
    return kc__lex_fail(lx, &key, "dense_resource<%.*s>: the module's dialect_resources hold no "
                                  "builtin blob of that name",
                        (int)name.size, name.data);
  }
  kc_string_view hex = blob->text; /* 0x... */
  size_t want = kc_shape_get_byte_size(shape);
  if (hex.size < 2 + 8 || hex.data[0] != '0' || (hex.data[1] != 'x' && hex.data[1] != 'X') ||
      (hex.size - 2) % 2 != 0 || (hex.size - 2 - 8) / 2 != want) {
    return kc__lex_fail(lx, &key, "dense_resource<%.*s>: expected a blob of \"0x\", a 4-byte "
                                  "alignment and %zu bytes, got %zu hex digits",
                        (int)name.size, name.data, want, hex.size >= 2 ? hex.size - 2 : 0);
  }
  uint8_t* bytes = kc__arena_alloc(&m->arena, want + 1);
  if (!bytes) return kc__parse_oom();
  const char* d = hex.data + 2 + 8;
  for (size_t i = 0; i < want; ++i) {
    int hi = kc__hex_digit(d[2 * i]), lo = kc__hex_digit(d[2 * i + 1]);
    if (hi < 0 || lo < 0) {
      return kc__lex_fail(lx, &key, "dense_resource<%.*s>: the blob holds a byte that is not "
                                    "hex (digit %zu)",
                          (int)name.size, name.data, 8 + 2 * i + (hi < 0 ? 0 : 1));
    }
    bytes[i] = (uint8_t)(hi << 4 | lo);
  }
  *out_data = bytes;
  *out_size = want;
  return NULL;
}

kc_status* kc__shlo_dense(kc__shlo_module* m, const kc__lexer* at, const kc_shape* shape,
                          void** out_data, size_t* out_size) {
  kc__lexer lx = kc__shlo_resolve(m, at);
  kc__token start = lx.tok;
  if (kc__word(&start, "dense_resource")) {
    return kc__dense_resource(m, &lx, shape, out_data, out_size);
  }
  if (!kc__word(&start, "dense")) return kc__lex_expected(&lx, &start, "dense<...>");
  if (kc_shape_is_tuple(shape)) return kc__lex_fail(&lx, &start, "a tuple constant");
  kc__lex_next(&lx);
  KC_RETURN_IF_ERROR(kc__lex_expect(&lx, '<'));
  DLDataType dt = kc_shape_get_dtype(shape);
  const kc__f8_format* f8 = kc__shlo_float8(m, shape);
  size_t width = dt.code == kDLBool ? 1 : (size_t)dt.bits / 8;
  size_t count = kc_shape_get_byte_size(shape) / width;
  kc__buf bytes = {0};
  kc_status* st = NULL;
  bool list = kc__tok_is_punct(&lx.tok, '[');
  size_t n = 0;
  if (lx.tok.kind == KC__TOK_STRING) {
    st = kc__dense_hex(&lx, &lx.tok, width, count, &bytes);
    if (!st) kc__lex_next(&lx);
    n = count;
  } else if (list) {
    int depth = 0;
    do {
      if (kc__tok_is_punct(&lx.tok, '[')) {
        if (++depth > KC__PARSE_MAX_DEPTH) st = kc__lex_fail(&lx, &lx.tok, "lists nested too deep");
        kc__lex_next(&lx);
      } else if (kc__tok_is_punct(&lx.tok, ']')) {
        depth--;
        kc__lex_next(&lx);
      } else if (kc__tok_is_punct(&lx.tok, ',')) {
        kc__lex_next(&lx);
      } else {
        st = kc__dense_element(&lx, dt, f8, &bytes);
        n++;
      }
    } while (!st && depth > 0);
  } else if (!kc__tok_is_punct(&lx.tok, '>')) {
    st = kc__dense_element(&lx, dt, f8, &bytes);
    if (!st && count != 1 && !kc__buf_repeat(&bytes, width, count)) st = kc__parse_oom();
    n = count;
  }
  if (!st && n != count) {
    st = kc__lex_fail(&lx, &start, "dense literal: %zu elements for a type of %zu", n, count);
  }
  if (!st) st = kc__lex_expect(&lx, '>');
  if (!st) {
    *out_size = bytes.size;
    *out_data = kc__arena_dup(&m->arena, bytes.data, bytes.size);
    if (!*out_data) st = kc__parse_oom();
  }
  kc__buf_free(&bytes);
  return st;
}
