/* Typed custom-call attributes in MLIR's attribute-dictionary syntax, as
 * XLA prints the backend_config of a typed FFI call. */
#include <stdio.h>
#include <stdlib.h>

#include "program/frontend/parse_internal.h"
#include "xcall/xcall_internal.h"

typedef struct kc__attr_type_word {
  const char* word;
  int32_t type;
} kc__attr_type_word;

/* Signless (iN) and signed (siN) integers are both read as signed, the
 * way MLIR prints signless ones. `index` is MLIR's pointer-sized integer. */
static const kc__attr_type_word kc__attr_type_words[] = {
    {"i1", KC_ATTR_BOOL},  {"i8", KC_ATTR_I8},    {"i16", KC_ATTR_I16},
    {"i32", KC_ATTR_I32},  {"i64", KC_ATTR_I64},  {"si8", KC_ATTR_I8},
    {"si16", KC_ATTR_I16}, {"si32", KC_ATTR_I32}, {"si64", KC_ATTR_I64},
    {"ui8", KC_ATTR_U8},   {"ui16", KC_ATTR_U16}, {"ui32", KC_ATTR_U32},
    {"ui64", KC_ATTR_U64}, {"f32", KC_ATTR_F32},  {"f64", KC_ATTR_F64},
    {"index", KC_ATTR_I64},
};

#define KC__ATTR_TYPES_TEXT \
  "an attribute type (i1, i8, i16, i32, i64, si8..si64, ui8..ui64, f32, f64)"

/* One decoded number, before it is stored widened or packed. */
typedef union kc__attr_scalar {
  bool b;
  int64_t i;
  uint64_t u;
  float f32;
  double f64;
} kc__attr_scalar;

/* The attribute type a type word names; false for anything else. */
static bool kc__attr_type_of(kc_string_view word, int32_t* out) {
  for (size_t i = 0; i < KC__ARRAY_SIZE(kc__attr_type_words); ++i) {
    if (kc_sv_equal(word, kc_sv(kc__attr_type_words[i].word))) {
      *out = kc__attr_type_words[i].type;
      return true;
    }
  }
  return false;
}

/* Half-precision words, which name types attributes cannot have (XLA's
 * FFI has no 16-bit float scalars or arrays either). */
static bool kc__is_half_word(kc_string_view word) {
  return kc_sv_equal(word, KC_SV_LIT("f16")) || kc_sv_equal(word, KC_SV_LIT("bf16"));
}

/* Consumes a type word after ':' or in array<...>. */
static kc_status* kc__attr_type(kc__lexer* lx, int32_t* out) {
  const kc__token* t = &lx->tok;
  if (t->kind == KC__TOK_IDENT) {
    if (kc__attr_type_of(t->text, out)) {
      kc__lex_next(lx);
      return NULL;
    }
    if (kc__is_half_word(t->text)) {
      return kc__lex_fail(lx, t, "%.*s attributes are not supported (use f32)",
                          (int)t->text.size, t->text.data);
    }
  }
  return kc__lex_expected(lx, t, KC__ATTR_TYPES_TEXT);
}

/* The number token `t` (or true/false for i1) as a value of `type`. */
static kc_status* kc__attr_number(const kc__lexer* lx, const kc__token* t,
                                  int32_t type, kc__attr_scalar* out) {
  if (type == KC_ATTR_BOOL && t->kind == KC__TOK_IDENT) {
    if (kc__tok_is_word(t, "true") || kc__tok_is_word(t, "false")) {
      out->b = kc__tok_is_word(t, "true");
      return NULL;
    }
  }
  bool negative = false;
  uint64_t magnitude = 0;
  bool is_int = t->kind == KC__TOK_NUMBER && kc__number_is_int(t->text) &&
                kc__number_to_int(t->text, &negative, &magnitude);
  switch (type) {
    case KC_ATTR_BOOL:
      if (!is_int || negative || magnitude > 1) {
        return kc__lex_expected(lx, t, "an i1 value (true, false, 0 or 1)");
      }
      out->b = magnitude == 1;
      return NULL;
    case KC_ATTR_I8: case KC_ATTR_I16: case KC_ATTR_I32: case KC_ATTR_I64: {
      unsigned bits = (unsigned)kc__attr_width(type) * 8;
      uint64_t max = (UINT64_C(1) << (bits - 1)) - 1;
      if (!is_int || magnitude > max + (negative ? 1 : 0)) {
        char what[64];
        snprintf(what, sizeof what, "an i%u integer", bits);
        return kc__lex_expected(lx, t, what);
      }
      out->i = negative ? (int64_t)(0 - magnitude) : (int64_t)magnitude;
      return NULL;
    }
    case KC_ATTR_U8: case KC_ATTR_U16: case KC_ATTR_U32: case KC_ATTR_U64: {
      unsigned bits = (unsigned)kc__attr_width(type) * 8;
      uint64_t max = bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
      if (!is_int || (negative && magnitude) || magnitude > max) {
        char what[64];
        snprintf(what, sizeof what, "a ui%u integer", bits);
        return kc__lex_expected(lx, t, what);
      }
      out->u = magnitude;
      return NULL;
    }
    default: {
      bool f32 = type == KC_ATTR_F32;
      bool hex = t->kind == KC__TOK_NUMBER && t->text.size > 2 &&
                 (t->text.data[1] == 'x' || t->text.data[1] == 'X');
      if (hex) {
        /* MLIR prints infinities and NaNs as their bit patterns. */
        if (!is_int || negative || (f32 && magnitude > UINT32_MAX)) {
          return kc__lex_expected(lx, t, f32 ? "an f32 bit pattern" : "an f64 bit pattern");
        }
        if (f32) {
          uint32_t bits = (uint32_t)magnitude;
          memcpy(&out->f32, &bits, sizeof bits);
        } else {
          memcpy(&out->f64, &magnitude, sizeof magnitude);
        }
        return NULL;
      }
      double d;
      if (t->kind != KC__TOK_NUMBER || !kc__number_to_double(t->text, &d)) {
        return kc__lex_expected(lx, t, f32 ? "an f32 number" : "an f64 number");
      }
      if (f32) {
        out->f32 = (float)d;
      } else {
        out->f64 = d;
      }
      return NULL;
    }
  }
}

/* Stores `v` of `type` in an attribute, integers widened. */
static void kc__attr_store(kc_attr* a, int32_t type, kc__attr_scalar v) {
  a->type = type;
  switch (type) {
    case KC_ATTR_BOOL: a->v.b = v.b; break;
    case KC_ATTR_I8: case KC_ATTR_I16: case KC_ATTR_I32: case KC_ATTR_I64:
      a->v.i64 = v.i;
      break;
    case KC_ATTR_U8: case KC_ATTR_U16: case KC_ATTR_U32: case KC_ATTR_U64:
      a->v.u64 = v.u;
      break;
    case KC_ATTR_F32: a->v.f32 = v.f32; break;
    default: a->v.f64 = v.f64; break;
  }
}

/* Appends `v` of `type` to `buf` at the type's width. */
static bool kc__attr_pack(kc__buf* buf, int32_t type, kc__attr_scalar v) {
  switch (type) {
    case KC_ATTR_BOOL: { uint8_t x = v.b ? 1 : 0; return kc__buf_append(buf, &x, 1); }
    case KC_ATTR_I8: { int8_t x = (int8_t)v.i; return kc__buf_append(buf, &x, 1); }
    case KC_ATTR_I16: { int16_t x = (int16_t)v.i; return kc__buf_append(buf, &x, 2); }
    case KC_ATTR_I32: { int32_t x = (int32_t)v.i; return kc__buf_append(buf, &x, 4); }
    case KC_ATTR_I64: return kc__buf_append(buf, &v.i, 8);
    case KC_ATTR_U8: { uint8_t x = (uint8_t)v.u; return kc__buf_append(buf, &x, 1); }
    case KC_ATTR_U16: { uint16_t x = (uint16_t)v.u; return kc__buf_append(buf, &x, 2); }
    case KC_ATTR_U32: { uint32_t x = (uint32_t)v.u; return kc__buf_append(buf, &x, 4); }
    case KC_ATTR_U64: return kc__buf_append(buf, &v.u, 8);
    case KC_ATTR_F32: return kc__buf_append(buf, &v.f32, 4);
    default: return kc__buf_append(buf, &v.f64, 8);
  }
}

/* array<T> or array<T: v, v, ...>; the current token is "array". */
static kc_status* kc__attr_array(kc__lexer* lx, kc__arena* arena,
                                 kc_attr* out) {
  kc__lex_next(lx);
  kc_status* st = kc__lex_expect(lx, '<');
  int32_t type = 0;
  if (!st) st = kc__attr_type(lx, &type);
  if (st) return st;
  kc__buf packed = {0};
  size_t count = 0;
  if (kc__tok_is_punct(&lx->tok, ':')) {
    kc__lex_next(lx);
    for (;;) {
      kc__attr_scalar v;
      st = kc__attr_number(lx, &lx->tok, type, &v);
      if (st) break;
      if (!kc__attr_pack(&packed, type, v)) {
        st = kc__parse_oom();
        break;
      }
      count++;
      kc__lex_next(lx);
      if (!kc__tok_is_punct(&lx->tok, ',')) break;
      kc__lex_next(lx);
    }
  }
  if (!st && !kc__tok_is_punct(&lx->tok, '>')) {
    st = kc__lex_expected(lx, &lx->tok, count ? "',' or '>'" : "':' or '>'");
  }
  if (!st) {
    kc__lex_next(lx);
    out->type = KC_ATTR_ARRAY;
    out->elem_type = type;
    out->v.array.count = count;
    out->v.array.data = kc__arena_dup(arena, packed.data, packed.size);
    if (!out->v.array.data) st = kc__parse_oom();
  }
  kc__buf_free(&packed);
  return st;
}

/* ---- dense<...> : tensor<...> ------------------------------------------------ */

/* Most bytes one dense attribute may hold once flattened. A splat of a
 * few bytes of text stands for all of its elements, so without a bound a
 * short program could ask for any amount of memory. */
#define KC__DENSE_MAX_BYTES ((size_t)64 << 20)

static kc_status* kc__dense_too_big(const kc__lexer* lx, const kc__token* at,
                                    kc_string_view text) {
  return kc__lex_fail(lx, at,
                      "tensor type %s: more than a dense attribute may hold (%zu MiB)",
                      KC__Q(text), KC__DENSE_MAX_BYTES >> 20);
}

/* The element type and element count of a tensor type's text, "3xi64",
 * "2x2xf32", "0xf32" or "i32" (rank 0: one element), within
 * KC__DENSE_MAX_BYTES. `at` is the '<' before it, for messages. */
static kc_status* kc__tensor_type(const kc__lexer* lx, const kc__token* at,
                                  kc_string_view text, int32_t* out_type,
                                  size_t* out_count) {
  size_t i = 0, count = 1;
  while (i < text.size && text.data[i] >= '0' && text.data[i] <= '9') {
    size_t dim = 0;
    while (i < text.size && text.data[i] >= '0' && text.data[i] <= '9') {
      size_t digit = (size_t)(text.data[i++] - '0');
      if (dim > (SIZE_MAX - digit) / 10) dim = SIZE_MAX;
      else dim = dim * 10 + digit;
    }
    if (i >= text.size || text.data[i] != 'x') break;
    i++;
    /* Every element takes a byte at least. */
    if (dim && count > KC__DENSE_MAX_BYTES / dim) return kc__dense_too_big(lx, at, text);
    count *= dim;
  }
  kc_string_view word = {text.data + i, text.size - i};
  if (kc__attr_type_of(word, out_type)) {
    if (count > KC__DENSE_MAX_BYTES / kc__attr_width(*out_type)) {
      return kc__dense_too_big(lx, at, text);
    }
    *out_count = count;
    return NULL;
  }
  if (kc__is_half_word(word)) {
    return kc__lex_fail(lx, at, "tensor type %s: %.*s attributes are not supported (use f32)",
                        KC__Q(text), (int)word.size, word.data);
  }
  return kc__lex_fail(lx, at,
                      "tensor type %s: expected static dims and an element type, as "
                      "in tensor<3xi64> (element types: i1, i8..i64, si8..si64, "
                      "ui8..ui64, f32, f64)",
                      KC__Q(text));
}

/* The elements of dense<...> as tokens, flattened in row-major order:
 * nested [...] lists, or one value (a splat). The current token follows
 * '<'; stops at '>'. */
static kc_status* kc__dense_tokens(kc__lexer* lx, kc__buf* toks, bool* out_list) {
  *out_list = kc__tok_is_punct(&lx->tok, '[');
  int depth = 0;
  for (;;) {
    kc__token t = lx->tok;
    if (kc__tok_is_punct(&t, '[')) {
      if (++depth > KC__PARSE_MAX_DEPTH) {
        return kc__lex_fail(lx, &t, "dense lists nested deeper than %d", KC__PARSE_MAX_DEPTH);
      }
      kc__lex_next(lx);
      continue;
    }
    if (kc__tok_is_punct(&t, ']')) {
      if (depth == 0) return kc__lex_expected(lx, &t, "'>'");
      depth--;
      kc__lex_next(lx);
    } else if (t.kind == KC__TOK_NUMBER || t.kind == KC__TOK_IDENT) {
      if (!kc__buf_append(toks, &t, sizeof t)) return kc__parse_oom();
      kc__lex_next(lx);
    } else {
      return kc__lex_expected(lx, &t, "a dense element (a number, true or false)");
    }
    if (depth == 0) return NULL;
    if (kc__tok_is_punct(&lx->tok, ',')) {
      kc__lex_next(lx);
      if (kc__tok_is_punct(&lx->tok, ']')) {
        return kc__lex_expected(lx, &lx->tok, "a dense element (a number, true or false)");
      }
    } else if (!kc__tok_is_punct(&lx->tok, ']')) {
      return kc__lex_expected(lx, &lx->tok, "',' or ']'");
    }
  }
}

kc_status* kc__dense_hex(const kc__lexer* lx, const kc__token* t, size_t width,
                         size_t count, kc__buf* packed) {
  kc_string_view s = t->text;
  if (s.size < 2 || s.data[0] != '0' || (s.data[1] != 'x' && s.data[1] != 'X') ||
      s.size % 2) {
    return kc__lex_expected(lx, t, "a dense hex string (\"0x...\")");
  }
  size_t bytes = (s.size - 2) / 2;
  if (bytes != width * count && bytes != width) {
    return kc__lex_fail(lx, t, "dense hex string: %zu bytes for %zu element%s of %zu byte%s",
                        bytes, count, count == 1 ? "" : "s", width, width == 1 ? "" : "s");
  }
  /* The room once, then the bytes written in place. */
  size_t at = packed->size;
  if (!kc__buf_append(packed, NULL, bytes)) return kc__parse_oom();
  for (size_t i = 0; i < bytes; ++i) {
    int v = 0;
    for (size_t k = 0; k < 2; ++k) {
      char c = s.data[2 + 2 * i + k];
      int d = c >= '0' && c <= '9'   ? c - '0'
              : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                     : -1;
      if (d < 0) {
        packed->size = at;
        return kc__lex_expected(lx, t, "a dense hex string (\"0x...\")");
      }
      v = v * 16 + d;
    }
    packed->data[at + i] = (unsigned char)v;
  }
  /* One element stands for all of them (a splat). */
  if (bytes == width && !kc__buf_repeat(packed, width, count)) return kc__parse_oom();
  return NULL;
}

/* dense<...> : tensor<...>, as MLIR prints NumPy arrays: a flat array of
 * the tensor's element type, in row-major order; the current token is
 * "dense". */
static kc_status* kc__attr_dense(kc__lexer* lx, kc__arena* arena, kc_attr* out) {
  kc__lex_next(lx);
  KC_RETURN_IF_ERROR(kc__lex_expect(lx, '<'));
  kc__buf toks = {0}, packed = {0};
  kc__token hex = {0};
  bool list = false, is_hex = false;
  kc_status* st = NULL;
  /* The elements: a hex string, or values (nested lists or a splat). */
  if (lx->tok.kind == KC__TOK_STRING) {
    hex = lx->tok;
    is_hex = true;
    kc__lex_next(lx);
  } else if (!kc__tok_is_punct(&lx->tok, '>')) {
    st = kc__dense_tokens(lx, &toks, &list);
  }
  /* "> : tensor<TYPE>", the type read raw: "2x0xf32" would lex as a
   * hex number. */
  if (!st) st = kc__lex_expect(lx, '>');
  if (!st) st = kc__lex_expect(lx, ':');
  if (!st && !kc__tok_is_word(&lx->tok, "tensor")) {
    st = kc__lex_expected(lx, &lx->tok, "'tensor' (the type of a dense attribute)");
  }
  kc__token open = {0};
  kc_string_view type_text = {NULL, 0};
  if (!st) {
    kc__lex_next(lx);
    open = lx->tok;
    if (!kc__tok_is_punct(&open, '<')) {
      st = kc__lex_expected(lx, &open, "'<'");
    } else if (!kc__lex_raw_until(lx, '>', &type_text)) {
      st = kc__lex_fail(lx, &open, "tensor<...: expected '>' on the same line");
    }
  }
  /* The elements packed at the type's width, as many as it holds. */
  int32_t type = 0;
  size_t count = 0;
  if (!st) st = kc__tensor_type(lx, &open, type_text, &type, &count);
  size_t n = toks.size / sizeof(kc__token);
  const kc__token* items = (const kc__token*)(const void*)toks.data;
  if (!st && is_hex) {
    if (type == KC_ATTR_BOOL) {
      st = kc__lex_fail(lx, &hex, "dense hex strings of i1 are not supported");
    } else {
      st = kc__dense_hex(lx, &hex, kc__attr_width(type), count, &packed);
    }
  } else if (!st && ((list || n == 0) ? n != count : count == 0)) {
    st = kc__lex_fail(lx, &open,
                      "dense attribute: %zu element%s for tensor type %s, which holds %zu",
                      n, n == 1 ? "" : "s", KC__Q(type_text), count);
  } else if (!st) {
    /* A list gives every element; a single value outside brackets is a
     * splat of all of them. */
    for (size_t i = 0; !st && i < (list ? count : n); ++i) {
      kc__attr_scalar v;
      st = kc__attr_number(lx, &items[i], type, &v);
      if (!st && !kc__attr_pack(&packed, type, v)) st = kc__parse_oom();
    }
    if (!st && !list && n == 1 && !kc__buf_repeat(&packed, kc__attr_width(type), count)) {
      st = kc__parse_oom();
    }
  }
  if (!st) {
    out->type = KC_ATTR_ARRAY;
    out->elem_type = type;
    out->v.array.count = count;
    out->v.array.data = kc__arena_dup(arena, packed.data, packed.size);
    if (!out->v.array.data) st = kc__parse_oom();
  }
  kc__buf_free(&toks);
  kc__buf_free(&packed);
  return st;
}

static kc_status* kc__attr_dict(kc__lexer* lx, kc__arena* arena, int depth,
                                     kc_attr_dict* out);

static kc_status* kc__attr_value(kc__lexer* lx, kc__arena* arena, int depth,
                                 kc_attr* out) {
  kc__token t = lx->tok;
  if (kc__tok_is_punct(&t, '{')) {
    out->type = KC_ATTR_DICT;
    return kc__attr_dict(lx, arena, depth + 1, &out->v.dict);
  }
  if (t.kind == KC__TOK_STRING) {
    out->type = KC_ATTR_STRING;
    KC_RETURN_IF_ERROR(kc__lex_string(lx, &t, KC__ESCAPES_MLIR, arena, &out->v.str));
    kc__lex_next(lx);
    return NULL;
  }
  if (kc__tok_is_word(&t, "array")) return kc__attr_array(lx, arena, out);
  if (kc__tok_is_word(&t, "dense")) return kc__attr_dense(lx, arena, out);
  bool is_bool = kc__tok_is_word(&t, "true") || kc__tok_is_word(&t, "false");
  if (t.kind != KC__TOK_NUMBER && !is_bool) {
    return kc__lex_expected(
        lx, &t,
        "an attribute value (a number, true, false, a string, array<...>, "
        "dense<...> or {...})");
  }
  kc__lex_next(lx);
  int32_t type;
  if (kc__tok_is_punct(&lx->tok, ':')) {
    kc__lex_next(lx);
    KC_RETURN_IF_ERROR(kc__attr_type(lx, &type));
  } else if (is_bool) {
    type = KC_ATTR_BOOL;
  } else {
    type = kc__number_is_int(t.text) ? KC_ATTR_I64 : KC_ATTR_F64;
  }
  kc__attr_scalar v;
  kc_status* st = kc__attr_number(lx, &t, type, &v);
  if (st) return st;
  kc__attr_store(out, type, v);
  return NULL;
}

static int kc__attr_name_cmp(const void* a, const void* b) {
  const kc_attr* x = *(const kc_attr* const*)a;
  const kc_attr* y = *(const kc_attr* const*)b;
  size_t n = x->name.size < y->name.size ? x->name.size : y->name.size;
  int c = n ? memcmp(x->name.data, y->name.data, n) : 0;
  if (c) return c;
  return x->name.size < y->name.size ? -1 : x->name.size > y->name.size;
}

/* The first attribute whose name an earlier one already has, or NULL.
 * Sorting keeps a large dictionary from costing n^2 comparisons. */
static const kc_attr* kc__attr_duplicate(const kc_attr* entries, size_t n,
                                         bool* out_oom) {
  *out_oom = false;
  if (n <= 16) {
    for (size_t i = 1; i < n; ++i) {
      for (size_t j = 0; j < i; ++j) {
        if (kc_sv_equal(entries[i].name, entries[j].name)) return &entries[i];
      }
    }
    return NULL;
  }
  const kc_attr** sorted = kc__malloc(n * sizeof *sorted);
  if (!sorted) {
    *out_oom = true;
    return NULL;
  }
  for (size_t i = 0; i < n; ++i) sorted[i] = &entries[i];
  qsort(sorted, n, sizeof *sorted, kc__attr_name_cmp);
  const kc_attr* dup = NULL;
  for (size_t i = 1; i < n; ++i) {
    if (kc_sv_equal(sorted[i]->name, sorted[i - 1]->name)) {
      const kc_attr* later = sorted[i] > sorted[i - 1] ? sorted[i] : sorted[i - 1];
      if (!dup || later < dup) dup = later;
    }
  }
  kc__free(sorted);
  return dup;
}

/* Entries collect in `entries` (and their name tokens, for messages, in
 * `names`) until the closing brace, then move to the arena in one piece. */
static kc_status* kc__attr_entries(kc__lexer* lx, kc__arena* arena, int depth,
                                   kc__buf* entries, kc__buf* names) {
  if (kc__tok_is_punct(&lx->tok, '}')) return NULL;
  for (;;) {
    kc_attr a;
    memset(&a, 0, sizeof a);
    kc__token name = lx->tok;
    if (name.kind == KC__TOK_IDENT) {
      a.name = name.text;
    } else if (name.kind == KC__TOK_STRING) {
      KC_RETURN_IF_ERROR(kc__lex_string(lx, &name, KC__ESCAPES_MLIR, arena, &a.name));
    } else {
      return kc__lex_expected(lx, &name, "an attribute name");
    }
    kc__lex_next(lx);
    KC_RETURN_IF_ERROR(kc__lex_expect(lx, '='));
    KC_RETURN_IF_ERROR(kc__attr_value(lx, arena, depth, &a), "in attribute %s",
                       KC__Q(a.name));
    if (!kc__buf_append(entries, &a, sizeof a) ||
        !kc__buf_append(names, &name, sizeof name)) {
      return kc__parse_oom();
    }
    if (!kc__tok_is_punct(&lx->tok, ',')) return NULL;
    kc__lex_next(lx);
  }
}

static kc_status* kc__attr_dict(kc__lexer* lx, kc__arena* arena, int depth,
                                     kc_attr_dict* out) {
  if (depth > KC__PARSE_MAX_DEPTH) {
    return kc__lex_fail(lx, &lx->tok, "dictionaries nested deeper than %d",
                        KC__PARSE_MAX_DEPTH);
  }
  KC_RETURN_IF_ERROR(kc__lex_expect(lx, '{'));
  kc__buf entries = {0};
  kc__buf names = {0};
  kc_status* st = kc__attr_entries(lx, arena, depth, &entries, &names);
  if (!st && !kc__tok_is_punct(&lx->tok, '}')) {
    st = kc__lex_expected(lx, &lx->tok, "',' or '}'");
  }
  size_t n = entries.size / sizeof(kc_attr);
  const kc_attr* list = (const kc_attr*)(const void*)entries.data;
  if (!st) {
    bool oom;
    const kc_attr* dup = kc__attr_duplicate(list, n, &oom);
    if (oom) {
      st = kc__parse_oom();
    } else if (dup) {
      const kc__token* where = (const kc__token*)(const void*)names.data + (dup - list);
      st = kc__lex_fail(lx, where, "attribute %s is given twice",
                        KC__Q(dup->name));
    }
  }
  if (!st) {
    kc__lex_next(lx);
    out->count = n;
    out->entries = kc__arena_dup(arena, entries.data, entries.size);
    if (!out->entries) st = kc__parse_oom();
  }
  kc__buf_free(&entries);
  kc__buf_free(&names);
  return st;
}

kc_status* kc__parse_typed_attr_dict(kc__lexer* lx, kc__arena* arena,
                                     kc_attr_dict* out) {
  out->count = 0;
  out->entries = NULL;
  return kc__attr_dict(lx, arena, 0, out);
}
