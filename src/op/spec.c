/*
 * Spec strings: the grammar of docs/ops.md, parsed by hand. A small lexer
 * turns a spec into tokens that remember their byte offsets, so that every
 * error can name the column it found and what it expected there.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal/grow.h"
#include "internal/cnum.h"
#include "op/op_internal.h"

/* ======================================================================== */
/* Lexer                                                                    */
/* ======================================================================== */

typedef enum kc__tok_kind {
  KC__TOK_END,
  KC__TOK_IDENT,
  KC__TOK_NUMBER,
  KC__TOK_STRING,
  KC__TOK_PUNCT
} kc__tok_kind;

typedef struct kc__tok {
  kc__tok_kind kind;
  size_t start, end; /* byte offsets into the spec */
  char punct[3];
} kc__tok;

typedef struct kc__lexer {
  const char* what; /* "attr spec", "input spec", ... */
  const char* text;
  size_t len;
  size_t pos;
  kc__tok tok;
} kc__lexer;

static bool kc__is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}
static bool kc__is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool kc__is_digit(char c) { return c >= '0' && c <= '9'; }

/* An error at byte `at`: "attr spec 'x: itn': column 4: <message>". */
static kc_status* kc__spec_error(const kc__lexer* lx, size_t at,
                                 const char* fmt, ...) KC_PRINTF(3, 4);
static kc_status* kc__spec_error(const kc__lexer* lx, size_t at,
                                 const char* fmt, ...) {
  kc_string_view spec = {lx->text, lx->len};
  va_list args;
  va_start(args, fmt);
  kc_status* st = kc__status_create_prefixed_v(KC_INVALID_ARGUMENT, fmt, args,
                                               "%s %s: column %zu", lx->what,
                                               KC__Q(spec), at + 1);
  va_end(args);
  return st;
}

/* "expected X, got 'tok'" at the current token. */
static kc_status* kc__expected(const kc__lexer* lx, const char* what) {
  const kc__tok* t = &lx->tok;
  if (t->kind == KC__TOK_END) {
    return kc__spec_error(lx, t->start, "expected %s, got the end of the spec",
                          what);
  }
  kc_string_view text = {lx->text + t->start, t->end - t->start};
  return kc__spec_error(lx, t->start, "expected %s, got %s", what,
                        KC__Q(text));
}

static kc_status* kc__lex_next(kc__lexer* lx) {
  const char* s = lx->text;
  while (lx->pos < lx->len && kc__is_space(s[lx->pos])) lx->pos++;
  kc__tok* t = &lx->tok;
  t->start = lx->pos;
  t->punct[0] = '\0';
  if (lx->pos >= lx->len) {
    t->kind = KC__TOK_END;
    t->end = lx->pos;
    return NULL;
  }
  char c = s[lx->pos];
  if (kc__is_alpha(c)) {
    while (lx->pos < lx->len &&
           (kc__is_alpha(s[lx->pos]) || kc__is_digit(s[lx->pos]))) {
      lx->pos++;
    }
    t->kind = KC__TOK_IDENT;
  } else if (kc__is_digit(c) || (c == '.' && lx->pos + 1 < lx->len &&
                                 kc__is_digit(s[lx->pos + 1]))) {
    while (lx->pos < lx->len && kc__is_digit(s[lx->pos])) lx->pos++;
    if (lx->pos < lx->len && s[lx->pos] == '.') {
      lx->pos++;
      while (lx->pos < lx->len && kc__is_digit(s[lx->pos])) lx->pos++;
    }
    if (lx->pos < lx->len && (s[lx->pos] == 'e' || s[lx->pos] == 'E')) {
      size_t p = lx->pos + 1;
      if (p < lx->len && (s[p] == '+' || s[p] == '-')) p++;
      if (p < lx->len && kc__is_digit(s[p])) {
        while (p < lx->len && kc__is_digit(s[p])) p++;
        lx->pos = p;
      }
    }
    t->kind = KC__TOK_NUMBER;
  } else if (c == '\'' || c == '"') {
    size_t p = lx->pos + 1;
    while (p < lx->len && s[p] != c)
      p += s[p] == '\\' && p + 1 < lx->len ? 2 : 1;
    if (p >= lx->len) {
      return kc__spec_error(lx, lx->pos, "unterminated string (no closing %c)",
                            c);
    }
    lx->pos = p + 1;
    t->kind = KC__TOK_STRING;
  } else {
    t->kind = KC__TOK_PUNCT;
    t->punct[0] = c;
    lx->pos++;
    if ((c == '>' || c == '<') && lx->pos < lx->len && s[lx->pos] == '=') {
      t->punct[1] = '=';
      t->punct[2] = '\0';
      lx->pos++;
    } else {
      t->punct[1] = '\0';
    }
  }
  t->end = lx->pos;
  return NULL;
}

static bool kc__tok_is(const kc__lexer* lx, const char* punct) {
  return lx->tok.kind == KC__TOK_PUNCT && strcmp(lx->tok.punct, punct) == 0;
}

static bool kc__tok_word(const kc__lexer* lx, const char* word) {
  size_t n = lx->tok.end - lx->tok.start;
  return lx->tok.kind == KC__TOK_IDENT && strlen(word) == n &&
         memcmp(lx->text + lx->tok.start, word, n) == 0;
}

static kc_string_view kc__tok_text(const kc__lexer* lx) {
  kc_string_view v = {lx->text + lx->tok.start, lx->tok.end - lx->tok.start};
  return v;
}

/* Consumes punctuation `punct` or fails with "expected `what`". */
static kc_status* kc__expect(kc__lexer* lx, const char* punct,
                             const char* what) {
  if (!kc__tok_is(lx, punct)) return kc__expected(lx, what);
  return kc__lex_next(lx);
}

/* The spec with its ends trimmed and each run of blanks made one space. */
static char* kc__normalise(const char* spec) {
  size_t n = strlen(spec);
  char* out = kc__malloc(n + 1);
  if (!out) return NULL;
  size_t k = 0;
  bool blank = false;
  for (size_t i = 0; i < n; ++i) {
    if (kc__is_space(spec[i])) {
      blank = k > 0;
      continue;
    }
    if (blank) out[k++] = ' ';
    blank = false;
    out[k++] = spec[i];
  }
  out[k] = '\0';
  return out;
}

static kc_status* kc__oom(const char* what) {
  return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory parsing %s",
                          what);
}

/* ======================================================================== */
/* Values                                                                   */
/* ======================================================================== */

/* [+-] digits, in int64. */
static kc_status* kc__parse_int(kc__lexer* lx, int64_t* out) {
  size_t at = lx->tok.start;
  bool negative = false;
  if (kc__tok_is(lx, "-") || kc__tok_is(lx, "+")) {
    negative = kc__tok_is(lx, "-");
    KC_RETURN_IF_ERROR(kc__lex_next(lx));
  }
  kc_string_view t = kc__tok_text(lx);
  if (lx->tok.kind != KC__TOK_NUMBER || t.size == 0) {
    return kc__expected(lx, "an integer");
  }
  uint64_t v = 0;
  for (size_t i = 0; i < t.size; ++i) {
    if (!kc__is_digit(t.data[i])) return kc__expected(lx, "an integer");
    unsigned d = (unsigned)(t.data[i] - '0');
    if (v > (UINT64_MAX - d) / 10)
      v = UINT64_MAX;
    else
      v = v * 10 + d;
  }
  uint64_t limit = negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
  if (v > limit) {
    return kc__spec_error(lx, at, "integer out of the range of int64");
  }
  *out = negative ? (v == limit ? INT64_MIN : -(int64_t)v) : (int64_t)v;
  return kc__lex_next(lx);
}

static kc_status* kc__parse_float(kc__lexer* lx, double* out) {
  bool negative = false;
  if (kc__tok_is(lx, "-") || kc__tok_is(lx, "+")) {
    negative = kc__tok_is(lx, "-");
    KC_RETURN_IF_ERROR(kc__lex_next(lx));
  }
  double v;
  if (kc__tok_word(lx, "inf")) {
    v = INFINITY;
  } else if (kc__tok_word(lx, "nan")) {
    v = NAN;
  } else if (lx->tok.kind == KC__TOK_NUMBER) {
    char buf[64];
    kc_string_view t = kc__tok_text(lx);
    if (t.size >= sizeof buf) return kc__expected(lx, "a shorter number");
    memcpy(buf, t.data, t.size);
    buf[t.size] = '\0';
    v = kc__strtod_c(buf, NULL);
  } else {
    return kc__expected(lx, "a number");
  }
  *out = negative ? -v : v;
  return kc__lex_next(lx);
}

/* The text of the current string token, unescaped, as an owned value. */
static kc_status* kc__string_value(kc__lexer* lx, kc_any* out) {
  kc_string_view t = kc__tok_text(lx);
  char* buf = kc__malloc(t.size);
  if (!buf) return kc__oom(lx->what);
  size_t n = 0;
  for (size_t i = 1; i + 1 < t.size; ++i) {
    char c = t.data[i];
    if (c == '\\' && i + 2 < t.size) {
      c = t.data[++i];
      if (c == 'n') c = '\n';
      if (c == 't') c = '\t';
    }
    buf[n++] = c;
  }
  kc_string_view v = {buf, n};
  kc_status* st = kc_any_from_string(NULL, v, out);
  kc__free(buf);
  return st;
}

/* A refused type word at the current token, or NULL. */
static kc_status* kc__check_type_word(const kc__lexer* lx) {
  char why[320];
  if (lx->tok.kind != KC__TOK_IDENT ||
      !kc__type_word_refusal(kc__tok_text(lx), why, sizeof why)) {
    return NULL;
  }
  return kc__spec_error(lx, lx->tok.start, "%s", why);
}

static kc_status* kc__parse_dtype(kc__lexer* lx, DLDataType* out) {
  KC_RETURN_IF_ERROR(kc__check_type_word(lx));
  if (lx->tok.kind != KC__TOK_IDENT ||
      !kc__type_word_dtype(kc__tok_text(lx), out)) {
    return kc__expected(lx, "a dtype (f32, i64, bool, ...)");
  }
  return kc__lex_next(lx);
}

static kc_status* kc__parse_shape_value(kc__lexer* lx, kc_any* out) {
  int64_t dims[KC_TENSOR_MAX_NDIM];
  int32_t rank = 0;
  KC_RETURN_IF_ERROR(kc__expect(lx, "[", "'[' starting a shape"));
  while (!kc__tok_is(lx, "]")) {
    if (rank > 0) {
      KC_RETURN_IF_ERROR(kc__expect(lx, ",", "',' or ']'"));
    }
    if (rank == KC_TENSOR_MAX_NDIM) {
      return kc__spec_error(lx, lx->tok.start, "a shape has at most %d dims",
                            KC_TENSOR_MAX_NDIM);
    }
    if (kc__tok_is(lx, "?")) {
      dims[rank++] = KC_DIM_UNKNOWN;
      KC_RETURN_IF_ERROR(kc__lex_next(lx));
      continue;
    }
    size_t at = lx->tok.start;
    int64_t d = 0;
    if (lx->tok.kind != KC__TOK_NUMBER) {
      return kc__expected(lx, "a dimension (an integer >= 0, or ?)");
    }
    KC_RETURN_IF_ERROR(kc__parse_int(lx, &d));
    if (d < 0) return kc__spec_error(lx, at, "a dimension must be >= 0");
    dims[rank++] = d;
  }
  KC_RETURN_IF_ERROR(kc__lex_next(lx));
  kc_any items[KC_TENSOR_MAX_NDIM];
  for (int32_t i = 0; i < rank; ++i) items[i] = kc_any_int(dims[i]);
  kc_array* array = NULL;
  KC_RETURN_IF_ERROR(kc_array_create(NULL, items, (size_t)rank, &array));
  *out = kc_any_object(KC_OBJECT(array));
  return NULL;
}

/* One value of attr's kind, ignoring is_list. */
static kc_status* kc__parse_scalar(kc__lexer* lx, const kc__attr_def* attr,
                                   kc_any* out) {
  switch (attr->kind) {
    case KC__ATTR_INT: {
      int64_t v = 0;
      KC_RETURN_IF_ERROR(kc__parse_int(lx, &v));
      *out = kc_any_int(v);
      return NULL;
    }
    case KC__ATTR_FLOAT: {
      double v = 0;
      KC_RETURN_IF_ERROR(kc__parse_float(lx, &v));
      *out = kc_any_float(v);
      return NULL;
    }
    case KC__ATTR_BOOL:
      if (kc__tok_word(lx, "true") || kc__tok_word(lx, "false")) {
        *out = kc_any_bool(kc__tok_word(lx, "true"));
        return kc__lex_next(lx);
      }
      return kc__expected(lx, "true or false");
    case KC__ATTR_STRING: {
      if (lx->tok.kind != KC__TOK_STRING) {
        return kc__expected(lx, "a quoted string");
      }
      KC_RETURN_IF_ERROR(kc__string_value(lx, out));
      kc_status* st = kc__lex_next(lx);
      if (st) kc_any_release(out); /* the value is not the caller's then */
      return st;
    }
    case KC__ATTR_TYPE: {
      DLDataType t;
      KC_RETURN_IF_ERROR(kc__parse_dtype(lx, &t));
      *out = kc_any_dtype(t);
      return NULL;
    }
    case KC__ATTR_SHAPE:
      return kc__parse_shape_value(lx, out);
  }
  return kc__expected(lx, "a value");
}

/* A value of attr's kind: a list is [item, ...]. */
static kc_status* kc__parse_value(kc__lexer* lx, const kc__attr_def* attr,
                                  kc_any* out) {
  *out = kc_any_none();
  if (!attr->is_list) return kc__parse_scalar(lx, attr, out);
  KC_RETURN_IF_ERROR(kc__expect(lx, "[", "'[' starting a list"));
  kc_any* items = NULL;
  size_t count = 0, cap = 0;
  kc_status* st = NULL;
  while (!st && !kc__tok_is(lx, "]")) {
    if (count > 0) st = kc__expect(lx, ",", "',' or ']'");
    if (st) break;
    if (!KC__GROW(items, cap, count + 1)) {
      st = kc__oom(lx->what);
      break;
    }
    st = kc__parse_scalar(lx, attr, &items[count]);
    if (!st) count++;
  }
  if (!st) st = kc__lex_next(lx);
  kc_array* array = NULL;
  if (!st) st = kc_array_create(NULL, items, count, &array);
  for (size_t i = 0; i < count; ++i) kc_any_release(&items[i]);
  kc__free(items);
  if (!st) *out = kc_any_object(KC_OBJECT(array));
  return st;
}

kc_status* kc__parse_attr_value(const kc__attr_def* attr, kc_string_view text,
                                kc_any* out_value) {
  *out_value = kc_any_none();
  size_t i = 0;
  while (i < text.size && kc__is_space(text.data[i])) ++i;
  /* An unquoted string: the text as it is (from a command line). */
  if (attr->kind == KC__ATTR_STRING && !attr->is_list &&
      (i == text.size || (text.data[i] != '\'' && text.data[i] != '"'))) {
    return kc_any_from_string(NULL, text, out_value);
  }
  char* copy = kc__strndup(text.data ? text.data : "", text.size);
  if (!copy) return kc__oom("an attr value");
  kc__lexer lx = {
      .what = "value",
      .text = copy,
      .len = text.size,
      .pos = 0,
      .tok = {.kind = KC__TOK_END, .start = 0, .end = 0, .punct = {0}},
  };
  kc_status* st = kc__lex_next(&lx);
  if (!st) st = kc__parse_value(&lx, attr, out_value);
  if (!st && lx.tok.kind != KC__TOK_END) {
    st = kc__expected(&lx, "the end of the value");
  }
  if (st) kc_any_release(out_value);
  kc__free(copy);
  return kc_status_add_context(st, "attr %s (%s)", KC__QS(attr->name),
                               kc__attr_kind_name(attr));
}

/* ======================================================================== */
/* Attr specs                                                               */
/* ======================================================================== */

static kc_status* kc__parse_name(kc__lexer* lx, const char* what, char** out) {
  if (lx->tok.kind != KC__TOK_IDENT) return kc__expected(lx, what);
  kc_string_view t = kc__tok_text(lx);
  *out = kc__strndup(t.data, t.size);
  if (!*out) return kc__oom(lx->what);
  return kc__lex_next(lx);
}

/* When the token is a type class word, sets *out to its dtypes. */
static bool kc__find_class(const kc__lexer* lx, kc__type_set* out) {
  return lx->tok.kind == KC__TOK_IDENT &&
         kc__type_class_find(kc__tok_text(lx), out);
}

/* {'a', 'b'}: the allowed values of a string attr. */
static kc_status* kc__parse_string_set(kc__lexer* lx, kc__attr_def* a) {
  a->kind = KC__ATTR_STRING;
  for (;;) {
    if (lx->tok.kind != KC__TOK_STRING)
      return kc__expected(lx, "a quoted string");
    kc_any v;
    KC_RETURN_IF_ERROR(kc__string_value(lx, &v));
    kc_string_view text;
    kc_any_get_string(&v, &text);
    bool grown = KC__GROW(a->strings, a->cap_strings, (size_t)a->num_strings + 1);
    char* copy = grown ? kc__strndup(text.data, text.size) : NULL;
    kc_any_release(&v);
    if (!copy) return kc__oom(lx->what);
    a->strings[a->num_strings++] = copy;
    KC_RETURN_IF_ERROR(kc__lex_next(lx));
    if (kc__tok_is(lx, "}")) return kc__lex_next(lx);
    KC_RETURN_IF_ERROR(kc__expect(lx, ",", "',' or '}'"));
  }
}

/* {f32, numeric, ...}: the allowed dtypes of a type attr. */
static kc_status* kc__parse_type_set(kc__lexer* lx, kc__attr_def* a) {
  a->kind = KC__ATTR_TYPE;
  a->types.any = false;
  a->types.mask = 0;
  for (;;) {
    KC_RETURN_IF_ERROR(kc__check_type_word(lx));
    kc__type_set cls;
    if (kc__find_class(lx, &cls)) {
      a->types.any |= cls.any;
      a->types.mask |= cls.mask;
      KC_RETURN_IF_ERROR(kc__lex_next(lx));
    } else {
      size_t at = lx->tok.start;
      DLDataType t;
      if (lx->tok.kind != KC__TOK_IDENT ||
          !kc__type_word_dtype(kc__tok_text(lx), &t)) {
        return kc__expected(lx,
                            "a dtype or a type class (numeric, integer, "
                            "signed, unsigned, floating, complex, any)");
      }
      int slot = kc__dtype_slot(t);
      if (slot < 0) {
        return kc__spec_error(lx, at,
                              "%s cannot be in a type set (only "
                              "scalar dtypes can)",
                              KC__Q(kc__tok_text(lx)));
      }
      a->types.mask |= UINT64_C(1) << slot;
      KC_RETURN_IF_ERROR(kc__lex_next(lx));
    }
    if (kc__tok_is(lx, "}")) return kc__lex_next(lx);
    KC_RETURN_IF_ERROR(kc__expect(lx, ",", "',' or '}'"));
  }
}

/* int | float | bool | string | type | shape | {set} | class. */
static kc_status* kc__parse_kind(kc__lexer* lx, kc__attr_def* a, bool in_list) {
  static const struct {
    const char* word;
    kc__attr_kind kind;
  } kinds[] = {{"int", KC__ATTR_INT},   {"float", KC__ATTR_FLOAT},
               {"bool", KC__ATTR_BOOL}, {"string", KC__ATTR_STRING},
               {"type", KC__ATTR_TYPE}, {"shape", KC__ATTR_SHAPE}};
  a->types.any = true;
  for (size_t i = 0; i < KC__ARRAY_SIZE(kinds); ++i) {
    if (kc__tok_word(lx, kinds[i].word)) {
      a->kind = kinds[i].kind;
      return kc__lex_next(lx);
    }
  }
  if (kc__tok_is(lx, "{")) {
    KC_RETURN_IF_ERROR(kc__lex_next(lx));
    if (lx->tok.kind == KC__TOK_STRING) return kc__parse_string_set(lx, a);
    return kc__parse_type_set(lx, a);
  }
  kc__type_set cls;
  if (kc__find_class(lx, &cls)) {
    a->kind = KC__ATTR_TYPE;
    a->types.any = cls.any;
    a->types.mask = cls.mask;
    return kc__lex_next(lx);
  }
  if (!in_list && kc__tok_word(lx, "list")) {
    a->is_list = true;
    KC_RETURN_IF_ERROR(kc__lex_next(lx));
    KC_RETURN_IF_ERROR(kc__expect(lx, "(", "'(' after list"));
    KC_RETURN_IF_ERROR(kc__parse_kind(lx, a, true));
    return kc__expect(lx, ")", "')' closing list(");
  }
  /* TensorFlow's quantizedtype is a class too, of dtypes kcall lacks. */
  if (kc__tok_word(lx, "quantizedtype")) return kc__check_type_word(lx);
  return kc__expected(lx, in_list ? "an item kind (int, float, bool, string, "
                                    "type, shape, {...} or a type class)"
                                  : "a kind (int, float, bool, string, type, "
                                    "shape, list(...), {...} or a type class)");
}

/* ">= n" and "<= n", at most one of each. */
static kc_status* kc__parse_bounds(kc__lexer* lx, kc__attr_def* a) {
  while (kc__tok_is(lx, ">=") || kc__tok_is(lx, "<=")) {
    size_t at = lx->tok.start;
    bool is_min = kc__tok_is(lx, ">=");
    if (a->kind != KC__ATTR_INT && !a->is_list) {
      return kc__spec_error(lx, at,
                            "bounds apply only to int and list "
                            "attrs, not to %s",
                            kc__attr_kind_name(a));
    }
    if (is_min ? a->has_min : a->has_max) {
      return kc__spec_error(lx, at, "a second %s bound", KC__QS(lx->tok.punct));
    }
    KC_RETURN_IF_ERROR(kc__lex_next(lx));
    int64_t v = 0;
    KC_RETURN_IF_ERROR(kc__parse_int(lx, &v));
    if (a->is_list && v < 0) {
      return kc__spec_error(lx, at, "a list length bound must be >= 0");
    }
    if (is_min) {
      a->has_min = true;
      a->min = v;
    } else {
      a->has_max = true;
      a->max = v;
    }
  }
  if (a->has_min && a->has_max && a->min > a->max) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "%s %s: the bounds leave no value (%lld > "
                            "%lld)",
                            lx->what, KC__Q(((kc_string_view){lx->text, lx->len})),
                            (long long)a->min,
                            (long long)a->max);
  }
  return NULL;
}

kc_status* kc__parse_attr_spec(const char* spec, kc__attr_def* out) {
  memset(out, 0, sizeof *out);
  kc__lexer lx = {
      .what = "attr spec",
      .text = spec,
      .len = strlen(spec),
      .pos = 0,
      .tok = {.kind = KC__TOK_END, .start = 0, .end = 0, .punct = {0}},
  };
  kc_status* st = kc__lex_next(&lx);
  if (!st) st = kc__parse_name(&lx, "an attr name", &out->name);
  if (!st) st = kc__expect(&lx, ":", "':' after the name");
  if (!st) st = kc__parse_kind(&lx, out, false);
  if (!st) st = kc__parse_bounds(&lx, out);
  if (!st && kc__tok_is(&lx, "=")) {
    st = kc__lex_next(&lx);
    if (!st) st = kc__parse_value(&lx, out, &out->default_value);
    if (!st) {
      out->has_default = true;
      kc_any checked;
      st = kc_status_add_context(
          kc__check_attr_value(out, &out->default_value, &checked),
          "%s %s: the default", lx.what, KC__QS(spec));
      /* A default of another spelling (an int for a float) is stored as
       * what the attr holds. */
      if (!st && !kc_any_is_object(&checked)) out->default_value = checked;
    }
  }
  if (!st && lx.tok.kind != KC__TOK_END) {
    st = kc__expected(&lx, out->has_default ? "the end of the spec"
                                            : "'=', '>=', '<=' or the end "
                                              "of the spec");
  }
  if (!st) {
    out->spec = kc__normalise(spec);
    if (!out->spec) st = kc__oom(lx.what);
  }
  if (st) kc__attr_def_clear(out);
  return st;
}

/* ======================================================================== */
/* Input and output specs                                                   */
/* ======================================================================== */

kc_status* kc__parse_arg_spec(const char* what, const char* spec,
                              kc__arg_def* out) {
  memset(out, 0, sizeof *out);
  out->type_attr = out->number_attr = -1;
  kc__lexer lx = {
      .what = what,
      .text = spec,
      .len = strlen(spec),
      .pos = 0,
      .tok = {.kind = KC__TOK_END, .start = 0, .end = 0, .punct = {0}},
  };
  kc_status* st = kc__lex_next(&lx);
  if (!st) st = kc__parse_name(&lx, "an arg name", &out->name);
  if (!st) st = kc__expect(&lx, ":", "':' after the name");
  if (!st) {
    st = kc__parse_name(&lx,
                        "a type (a type attr, a dtype, N * T or a "
                        "list(type) attr)",
                        &out->type_word);
  }
  if (!st && kc__tok_is(&lx, "*")) {
    out->form = KC__ARG_REPEATED;
    out->number_word = out->type_word;
    out->type_word = NULL;
    st = kc__lex_next(&lx);
    if (!st)
      st = kc__parse_name(&lx, "a type (a type attr or a dtype)",
                          &out->type_word);
  }
  if (!st && lx.tok.kind != KC__TOK_END) {
    st = kc__expected(&lx, out->form == KC__ARG_REPEATED
                               ? "the end of the spec"
                               : "'*' or the end of the spec");
  }
  if (!st) {
    out->spec = kc__normalise(spec);
    if (!out->spec) st = kc__oom(lx.what);
  }
  if (st) kc__arg_def_clear(out);
  return st;
}

/* ======================================================================== */
/* Freeing                                                                  */
/* ======================================================================== */

void kc__attr_def_clear(kc__attr_def* a) {
  kc__free(a->name);
  kc__free(a->spec);
  for (int32_t i = 0; i < a->num_strings; ++i) kc__free(a->strings[i]);
  kc__free(a->strings);
  kc_any_release(&a->default_value);
  memset(a, 0, sizeof *a);
}

void kc__arg_def_clear(kc__arg_def* a) {
  kc__free(a->name);
  kc__free(a->spec);
  kc__free(a->type_word);
  kc__free(a->number_word);
  memset(a, 0, sizeof *a);
}

void kc__op_schema_clear(kc__op_schema* def) {
  for (int32_t i = 0; i < def->num_inputs; ++i)
    kc__arg_def_clear(&def->inputs[i]);
  for (int32_t i = 0; i < def->num_outputs; ++i) {
    kc__arg_def_clear(&def->outputs[i]);
  }
  for (int32_t i = 0; i < def->num_attrs; ++i)
    kc__attr_def_clear(&def->attrs[i]);
  kc__free(def->inputs);
  kc__free(def->outputs);
  kc__free(def->attrs);
  kc__free(def->name);
  kc__free(def->doc);
  kc__op_gradient_destroy(def->gradient);
  kc__op_gradient_destroy(def->jvp);
  if (def->shape_data_deleter) def->shape_data_deleter(def->shape_data);
  memset(def, 0, sizeof *def);
}
