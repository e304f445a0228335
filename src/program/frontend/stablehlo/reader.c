/* The StableHLO text reader: types, values, and one operation in either
 * of MLIR's forms (stablehlo_internal.h); reader_module.c reads the
 * scopes around them. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "program/shape_internal.h"
#include "program/frontend/stablehlo/stablehlo_internal.h"

/* ---- small helpers -------------------------------------------------------- */

kc_status* kc__shlo_fail(const kc__token* at, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  kc_status* st = kc__status_create_prefixed_v(KC_INVALID_ARGUMENT, fmt, args,
                                               "line %d, column %d", at->line, at->column);
  va_end(args);
  return st;
}

static bool kc__is_word(const kc__token* t, const char* w) { return kc__tok_is_word(t, w); }

bool kc__shlo_is_arrow(const kc__lexer* lx) {
  if (!kc__tok_is_punct(&lx->tok, '-')) return false;
  kc__token next = kc__lex_peek(lx);
  return kc__tok_is_punct(&next, '>');
}

kc_status* kc__shlo_expect_arrow(kc__lexer* lx) {
  if (!kc__shlo_is_arrow(lx)) return kc__lex_expected(lx, &lx->tok, "'->'");
  kc__lex_next(lx);
  kc__lex_next(lx);
  return NULL;
}

/* Skips `loc(...)` when it is the current token. */
kc_status* kc__shlo_skip_loc(kc__lexer* lx) {
  if (!kc__is_word(&lx->tok, "loc")) return NULL;
  kc__lex_next(lx);
  if (!kc__tok_is_punct(&lx->tok, '(')) return kc__lex_expected(lx, &lx->tok, "'(' after loc");
  return kc__lex_skip_group(lx, NULL);
}

static bool kc__next_is(const kc__lexer* lx, char c) {
  kc__token next = kc__lex_peek(lx);
  return kc__tok_is_punct(&next, c);
}

kc_status* kc__shlo_append(kc__buf* b, const void* data, size_t n) {
  return kc__buf_append(b, data, n) ? NULL : kc__parse_oom();
}

/* ---- types ---------------------------------------------------------------- */

/* MLIR's element types and HLO's names for them. The narrow integers
 * (i4, ui4, i2, ui2) are held one to a byte, in s8 or u8 (as NumPy's
 * ml_dtypes holds them), and kept in their range (narrow.c): `narrow` is
 * their width. */
static const struct {
  const char* mlir;
  const char* hlo;
  uint8_t narrow;
} kc__element_types[] = {
    {"i1", "pred", 0},   {"i8", "s8", 0},     {"i16", "s16", 0},   {"i32", "s32", 0},
    {"i64", "s64", 0},   {"si8", "s8", 0},    {"si16", "s16", 0},  {"si32", "s32", 0},
    {"si64", "s64", 0},  {"ui8", "u8", 0},    {"ui16", "u16", 0},  {"ui32", "u32", 0},
    {"ui64", "u64", 0},  {"f16", "f16", 0},   {"bf16", "bf16", 0}, {"f32", "f32", 0},
    {"f64", "f64", 0},   {"complex<f32>", "c64", 0}, {"complex<f64>", "c128", 0},
    {"i4", "s8", 4},     {"si4", "s8", 4},    {"ui4", "u8", 4},    {"i2", "s8", 2},
    {"si2", "s8", 2},    {"ui2", "u8", 2},
};

#define KC__SHLO_TYPES_TEXT                                                               \
  "i1, i2, i4, i8..i64, ui2, ui4, ui8..ui64, f16, bf16, f32, f64, complex<f32>, "       \
  "complex<f64>, the f8, f6 and f4 floats, and !quant.uniform<...>"

/* "4x8xf32", "f32", "0x3xcomplex<f32>" (the text between tensor< and >). */
static kc_status* kc__tensor_text(kc__shlo_module* m, const kc__lexer* lx, const kc__token* at,
                                  kc_string_view text, const kc_shape** out) {
  int32_t seen = m->tensor_types.slots ? kc__strmap_get(&m->tensor_types, text) : -1;
  if (seen >= 0) {
    *out = ((const kc_shape* const*)(const void*)m->shapes.data)[seen];
    return NULL;
  }
  int64_t dims[KC_TENSOR_MAX_NDIM];
  int32_t rank = 0;
  uint32_t dynamic = 0;
  size_t i = 0;
  for (;;) {
    size_t start = i;
    if (i + 1 < text.size && text.data[i] == '?' && text.data[i + 1] == 'x') {
      /* A dynamic dimension: its size comes from the parameters' shapes
       * (kc__shlo_refine); 0 until then. */
      if (rank == KC_TENSOR_MAX_NDIM) break;
      dynamic |= 1u << rank;
      dims[rank++] = 0;
      i += 2;
      continue;
    }
    int64_t v = 0;
    while (i < text.size && text.data[i] >= '0' && text.data[i] <= '9') {
      if (v > (INT64_MAX - 9) / 10) return kc__lex_fail(lx, at, "tensor dimension too large");
      v = v * 10 + (text.data[i++] - '0');
    }
    if (i == start || i >= text.size || text.data[i] != 'x') {
      i = start;
      break;
    }
    if (rank == KC_TENSOR_MAX_NDIM) {
      return kc__lex_fail(lx, at, "tensor<%.*s>: more than %d dimensions", (int)text.size,
                          text.data, KC_TENSOR_MAX_NDIM);
    }
    dims[rank++] = v;
    i++;
  }
  kc_string_view word = {text.data + i, text.size - i};
  const char* hlo = NULL;
  unsigned narrow = 0;
  for (size_t k = 0; k < KC__ARRAY_SIZE(kc__element_types) && !hlo; ++k) {
    if (kc_sv_equal(word, kc_sv(kc__element_types[k].mlir))) {
      hlo = kc__element_types[k].hlo;
      narrow = kc__element_types[k].narrow;
    }
  }
  const kc__f8_format* f8 = hlo ? NULL : kc__f8_find(word);
  if (f8) hlo = "u8"; /* held as their bits (float8.c) */
  kc__shlo_quant quant;
  bool quantized = !hlo && word.size > 15 && memcmp(word.data, "!quant.uniform<", 15) == 0;
  DLDataType dtype;
  if (quantized) { /* held as the storage integers (quant.c) */
    KC_RETURN_IF_ERROR(kc__shlo_quant_parse(m, lx, at, word, &quant));
    dtype = quant.storage;
    hlo = "";
  }
  if (!hlo) {
    bool encoded = memchr(word.data, ',', word.size) != NULL;
    return kc__lex_fail(lx, at, "tensor<%.*s>: %s %s is not supported (element types: %s)",
                        (int)text.size, text.data,
                        encoded ? "a tensor encoding, as in" : "element type",
                        KC__Q(word), KC__SHLO_TYPES_TEXT);
  }
  if (!quantized) kc__hlo_dtype_parse(kc_sv(hlo), &dtype);
  kc_shape* shape = NULL;
  KC_RETURN_IF_ERROR(kc_shape_create_array(dtype, dims, rank, &shape));
  if (!kc__buf_append(&m->shapes, &shape, sizeof shape)) {
    kc_shape_destroy(shape);
    return kc__parse_oom();
  }
  *out = shape;
  if (dynamic) KC_RETURN_IF_ERROR(kc__shlo_mark_dynamic(m, shape, dynamic));
  if (narrow) KC_RETURN_IF_ERROR(kc__shlo_mark_narrow(m, shape, narrow));
  if (f8) KC_RETURN_IF_ERROR(kc__shlo_mark_float8(m, shape, f8));
  if (quantized) {
    kc_status* st = kc__shlo_mark_quant(m, shape, &quant);
    if (st) return kc_status_add_context(st, "line %d, column %d", at->line, at->column);
  }
  char* key = kc__arena_dup(&m->arena, text.data, text.size + 1);
  int32_t index = (int32_t)(m->shapes.size / sizeof shape - 1);
  if (!key || !kc__strmap_put(&m->tensor_types, (kc_string_view){key, text.size}, index)) {
    return kc__parse_oom();
  }
  return NULL;
}

/* A map keyed by a type's address (the key is the pointer's own bytes,
 * kept in the arena): what the module records of a type beside its
 * kc_shape (its dynamic dimensions, its narrow width). */
kc_status* kc__shlo_shape_map_put(kc__shlo_module* m, kc__strmap* map, const kc_shape* shape,
                                  int32_t value) {
  void* key = kc__arena_dup(&m->arena, &shape, sizeof shape);
  if (!key) return kc__parse_oom();
  return kc__strmap_put(map, (kc_string_view){key, sizeof shape}, value) ? NULL
                                                                         : kc__parse_oom();
}

int32_t kc__shlo_shape_map_get(const kc__strmap* map, const kc_shape* shape) {
  if (!map->slots) return -1;
  return kc__strmap_get(map, (kc_string_view){(const char*)&shape, sizeof shape});
}

kc_status* kc__shlo_module_shape(kc__shlo_module* m, DLDataType dt, const int64_t* dims,
                                 int32_t rank, const kc_shape** out) {
  kc_shape* shape = NULL;
  KC_RETURN_IF_ERROR(kc_shape_create_array(dt, dims, rank, &shape));
  if (!kc__buf_append(&m->shapes, &shape, sizeof shape)) {
    kc_shape_destroy(shape);
    return kc__parse_oom();
  }
  *out = shape;
  return NULL;
}

kc_status* kc__shlo_mark_dynamic(kc__shlo_module* m, const kc_shape* shape, uint32_t mask) {
  return kc__shlo_shape_map_put(m, &m->dynamic, shape, (int32_t)mask);
}

uint32_t kc__shlo_dynamic(const kc__shlo_module* m, const kc_shape* shape) {
  int32_t mask = kc__shlo_shape_map_get(&m->dynamic, shape);
  return mask < 0 ? 0 : (uint32_t)mask;
}

size_t kc__shlo_format_type(const kc__shlo_module* m, const kc_shape* type, char* buf, size_t cap) {
  uint32_t dynamic = kc__shlo_dynamic(m, type);
  if (!dynamic || kc_shape_is_tuple(type)) return kc_shape_format(type, buf, cap);
  char dt[32];
  kc_shape* scalar = NULL;
  kc_status* st = kc_shape_create_array(kc_shape_get_dtype(type), NULL, 0, &scalar);
  if (st) {
    kc_status_destroy(st);
    snprintf(dt, sizeof dt, "?");
  } else {
    kc_shape_format(scalar, dt, sizeof dt);
    kc_shape_destroy(scalar);
    char* bracket = strchr(dt, '[');
    if (bracket) *bracket = 0;
  }
  size_t len = 0;
  kc__appendf(buf, cap, &len, "%s[", dt);
  for (int32_t d = 0; d < kc_shape_get_rank(type); ++d) {
    if (dynamic >> d & 1) {
      kc__appendf(buf, cap, &len, "%s?", d ? "," : "");
    } else {
      kc__appendf(buf, cap, &len, "%s%lld", d ? "," : "", (long long)kc_shape_get_dims(type)[d]);
    }
  }
  kc__appendf(buf, cap, &len, "]");
  return len;
}

bool kc__shlo_type_matches(const kc__shlo_module* m, const kc_shape* type, const kc_shape* value) {
  uint32_t dynamic = kc__shlo_dynamic(m, type);
  if (!dynamic) return kc_shape_equal(type, value);
  if (kc_shape_is_tuple(value) || !kc_dtype_equal(kc_shape_get_dtype(type), kc_shape_get_dtype(value)) ||
      kc_shape_get_rank(type) != kc_shape_get_rank(value)) {
    return false;
  }
  for (int32_t d = 0; d < kc_shape_get_rank(type); ++d) {
    if (!(dynamic >> d & 1) && kc_shape_get_dims(type)[d] != kc_shape_get_dims(value)[d]) return false;
  }
  return true;
}

/* The text up to the '>' that closes the '<' just consumed (the current
 * token follows it), nested <> counted; then moves past that '>'. */
static kc_status* kc__angle_text(kc__lexer* lx, const kc__token* open, kc_string_view* out) {
  const char* start = lx->tok.text.data;
  size_t p = (size_t)(start - lx->text);
  int depth = 1;
  for (; p < lx->size; ++p) {
    char c = lx->text[p];
    if (c == '\n') break;
    if (c == '<') depth++;
    if (c == '>' && --depth == 0) break;
  }
  if (p >= lx->size || lx->text[p] != '>') {
    return kc__lex_fail(lx, open, "expected '>' closing '<' on the same line");
  }
  out->data = start;
  out->size = (size_t)(lx->text + p - start);
  /* Resume after the '>': a token at it, then the next. */
  lx->pos = p;
  kc__lex_next(lx);
  kc__lex_next(lx);
  return NULL;
}

kc_status* kc__shlo_type(kc__shlo_module* m, kc__lexer* lx, const kc_shape** out) {
  kc__token at = lx->tok;
  if (kc__is_word(&at, "tensor")) {
    kc__lex_next(lx);
    kc__token open = lx->tok;
    KC_RETURN_IF_ERROR(kc__lex_expect(lx, '<'));
    kc_string_view text = {NULL, 0};
    KC_RETURN_IF_ERROR(kc__angle_text(lx, &open, &text));
    return kc__tensor_text(m, lx, &at, text, out);
  }
  if (kc__is_word(&at, "tuple")) {
    kc__lex_next(lx);
    KC_RETURN_IF_ERROR(kc__lex_expect(lx, '<'));
    kc__buf elems = {0};
    kc_status* st = NULL;
    for (bool more = kc__lex_list_begin(lx, '>'); more && !st;) {
      const kc_shape* e = NULL;
      st = kc__shlo_type(m, lx, &e);
      if (!st) st = kc__shlo_append(&elems, &e, sizeof e);
      if (!st) st = kc__lex_list_next(lx, '>', &more);
    }
    kc_shape* tuple = NULL;
    if (!st) {
      st = kc_shape_create_tuple((const kc_shape* const*)(const void*)elems.data,
                                 elems.size / sizeof(kc_shape*), &tuple);
    }
    kc__buf_free(&elems);
    if (!st && !kc__buf_append(&m->shapes, &tuple, sizeof tuple)) {
      kc_shape_destroy(tuple);
      st = kc__parse_oom();
    }
    if (!st) *out = tuple;
    return st;
  }
  if (kc__tok_is_punct(&at, '!')) {
    kc__token word = kc__lex_peek(lx);
    return kc__lex_fail(lx, &at, "type !%.*s is not supported (tokens and effects are not yet)",
                        (int)word.text.size, word.text.data);
  }
  return kc__lex_expected(lx, &at, "a type (tensor<...> or tuple<...>)");
}

/* ---- values --------------------------------------------------------------- */

kc_status* kc__shlo_bind_value(kc__shlo_scope* s, kc_string_view name, const kc__shlo_value* v) {
  if (kc__shlo_dynamic(s->m, v->shape)) {
    /* Every value's shape is concrete: kc__shlo_refine makes it so. */
    return kc_status_create(KC_INTERNAL, "value %%%.*s: its shape was not refined",
                            (int)name.size, name.data);
  }
  kc__shlo_value copy = *v;
  copy.name = name;
  int32_t index = (int32_t)(s->values.size / sizeof copy);
  KC_RETURN_IF_ERROR(kc__shlo_append(&s->values, &copy, sizeof copy));
  return kc__strmap_put(&s->names, name, index) ? NULL : kc__parse_oom();
}

kc_status* kc__shlo_bind(kc__shlo_scope* s, kc_string_view name, int32_t id,
                         const kc_shape* shape) {
  kc__shlo_value v = {.name = name, .id = id, .shape = shape, .known = NULL, .constant = NULL};
  return kc__shlo_bind_value(s, name, &v);
}

kc__shlo_value* kc__shlo_lookup(kc__shlo_scope* s, kc_string_view name) {
  int32_t i = kc__strmap_get(&s->names, name);
  return i < 0 ? NULL : (kc__shlo_value*)(void*)s->values.data + i;
}

/* "%0#1": the name of result 1 of %0, in the module's arena. */
kc_status* kc__shlo_result_key(kc__shlo_module* m, kc_string_view base, int64_t k,
                                 kc_string_view* out) {
  char buf[32];
  int n = snprintf(buf, sizeof buf, "#%lld", (long long)k);
  char* s = kc__arena_alloc(&m->arena, base.size + (size_t)n + 1);
  if (!s) return kc__parse_oom();
  memcpy(s, base.data, base.size);
  memcpy(s + base.size, buf, (size_t)n + 1);
  *out = (kc_string_view){s, base.size + (size_t)n};
  return NULL;
}

bool kc__shlo_is_result(const kc__shlo_op* op, kc_string_view name) {
  if (op->result.kind == KC__TOK_END) return false;
  const kc__token* names = (const kc__token*)(const void*)op->result_names.data;
  for (size_t k = 0; k < op->result_names.size / sizeof *names; ++k) {
    if (kc_sv_equal(name, names[k].text)) return true;
  }
  kc_string_view base = op->result.text;
  return kc_sv_equal(name, base) || (name.size > base.size && name.data[base.size] == '#' &&
                                     memcmp(name.data, base.data, base.size) == 0);
}

kc_status* kc__shlo_bind_results(kc__shlo_scope* s, const kc__shlo_op* op, int32_t id,
                                 bool tuple) {
  if (op->result.kind == KC__TOK_END) return NULL;
  size_t n = kc__shlo_num_result_types(op);
  if (!tuple) return kc__shlo_bind(s, op->result.text, id, kc__shlo_result_type(op, 0));
  const kc__token* names = (const kc__token*)(const void*)op->result_names.data;
  for (size_t k = 0; k < n; ++k) {
    kc_string_view key = op->result.text, name;
    if (op->result_names.size) {
      key = names[k].text;
    } else if (op->num_results > 1) {
      KC_RETURN_IF_ERROR(kc__shlo_result_key(s->m, op->result.text, (int64_t)k, &key));
    }
    KC_RETURN_IF_ERROR(kc__shlo_instr_name(s, op, NULL, &name));
    char* named = kc__arena_alloc(&s->m->arena, name.size + 24);
    if (!named) return kc__parse_oom();
    int len = snprintf(named, name.size + 24, "%.*s.%zu", (int)name.size, name.data, k);
    int32_t gte;
    KC_RETURN_IF_ERROR(kc_program_builder_add_get_tuple_element(
        s->b, id, (int64_t)k, (kc_string_view){named, (size_t)len}, &gte));
    KC_RETURN_IF_ERROR(kc__shlo_bind(s, key, gte, kc__shlo_result_type(op, k)));
  }
  return NULL;
}

kc_status* kc__shlo_instr_name(kc__shlo_scope* s, const kc__shlo_op* op, const char* suffix,
                               kc_string_view* out) {
  char serial[32];
  kc_string_view base = op->result.text;
  if (op->result.kind == KC__TOK_END || suffix) {
    snprintf(serial, sizeof serial, "%s.%lld", suffix ? suffix : "op", (long long)++s->m->serial);
    base = kc_sv(serial);
    if (op->result.kind != KC__TOK_END) {
      /* "0.convert.3": a helper instruction of %0's */
      char* t = kc__arena_alloc(&s->m->arena, op->result.text.size + strlen(serial) + 2);
      if (!t) return kc__parse_oom();
      sprintf(t, "%.*s.%s", (int)op->result.text.size, op->result.text.data, serial);
      base = kc_sv(t);
    } else {
      base.data = kc__arena_strdup(&s->m->arena, base);
      if (!base.data) return kc__parse_oom();
    }
  }
  if (s->prefix.size == 0) {
    *out = base;
    return NULL;
  }
  char* t = kc__arena_alloc(&s->m->arena, s->prefix.size + base.size + 1);
  if (!t) return kc__parse_oom();
  memcpy(t, s->prefix.data, s->prefix.size);
  memcpy(t + s->prefix.size, base.data, base.size);
  t[s->prefix.size + base.size] = 0;
  *out = (kc_string_view){t, s->prefix.size + base.size};
  return NULL;
}

/* A value a region uses from outside it: a constant there (what JAX's
 * exports hoist out of sort and reduce regions) is made again in the
 * region's program. */
static kc_status* kc__outer_constant(kc__shlo_scope* s, const kc__lexer* lx, const kc__token* at,
                                     kc_string_view key, int32_t* out) {
  const kc__shlo_value* v = NULL;
  for (kc__shlo_scope* o = s->outer; o && !v; o = o->outer) v = kc__shlo_lookup(o, key);
  if (!v) {
    return kc__lex_fail(lx, at, "value %%%.*s is not defined before its use here",
                        (int)key.size, key.data);
  }
  if (!v->constant) {
    return kc__lex_fail(lx, at,
                        "value %%%.*s is defined outside this region, which may use only its "
                        "arguments and constants from outside",
                        (int)key.size, key.data);
  }
  int32_t id;
  KC_RETURN_IF_ERROR(kc_program_builder_add_constant(s->b, v->shape, v->constant,
                                                     kc_shape_get_byte_size(v->shape), key, &id));
  kc__shlo_value copy = *v;
  copy.id = id;
  KC_RETURN_IF_ERROR(kc__shlo_bind_value(s, key, &copy));
  *out = (int32_t)(s->values.size / sizeof copy) - 1;
  return NULL;
}

/* The value the current token names (%x, %x#1), consumed. */
static kc_status* kc__operand(kc__shlo_scope* s, kc__lexer* lx, int32_t* out) {
  kc__token at = lx->tok;
  if (at.kind != KC__TOK_NAME) return kc__lex_expected(lx, &at, "a value (%name)");
  kc__lex_next(lx);
  kc_string_view key = at.text;
  if (kc__tok_is_punct(&lx->tok, '#')) {
    kc__lex_next(lx);
    int64_t k;
    KC_RETURN_IF_ERROR(kc__lex_int(lx, "a result number", 0, INT32_MAX, &k));
    KC_RETURN_IF_ERROR(kc__shlo_result_key(s->m, at.text, k, &key));
  }
  int32_t index = kc__strmap_get(&s->names, key);
  if (index < 0) return kc__outer_constant(s, lx, &at, key, out);
  *out = index;
  return NULL;
}

/* ---- one operation -------------------------------------------------------- */

static void kc__op_free(kc__shlo_op* op) {
  kc__buf_free(&op->result_names);
  kc__buf_free(&op->operands);
  kc__buf_free(&op->iter_names);
  kc__buf_free(&op->attrs);
  kc__buf_free(&op->words);
  kc__buf_free(&op->regions);
  kc__buf_free(&op->region_args);
  kc__buf_free(&op->operand_types);
  kc__buf_free(&op->result_types);
}

static kc_status* kc__add_item(kc__buf* list, kc_string_view key, const kc__lexer* at) {
  kc__shlo_item item = {.key = key, .at = *at};
  return kc__shlo_append(list, &item, sizeof item);
}

/* "key = value" (the key is the current token) or a unit attribute. */
static kc_status* kc__read_attr(kc__lexer* lx, kc__shlo_op* op, bool typed) {
  kc_string_view key = lx->tok.text;
  kc__lex_next(lx);
  if (!kc__tok_is_punct(&lx->tok, '=')) {
    /* A unit attribute: present, no value. */
    return kc__add_item(&op->attrs, key, lx);
  }
  kc__lex_next(lx);
  KC_RETURN_IF_ERROR(kc__add_item(&op->attrs, key, lx));
  KC_RETURN_IF_ERROR(kc__shlo_skip_value(lx, typed));
  /* Pretty forms join lists: "[1] x [0]", "[b, 0, f]x[0, i, o]->[b, 0, f]". */
  while (!typed && (kc__is_word(&lx->tok, "x") || kc__shlo_is_arrow(lx))) {
    if (kc__shlo_is_arrow(lx)) kc__lex_next(lx);
    kc__lex_next(lx);
    KC_RETURN_IF_ERROR(kc__shlo_skip_value(lx, false));
  }
  return NULL;
}

/* The entries of an attribute dictionary, after its '{', to its '}'. */
static kc_status* kc__read_attr_dict(kc__lexer* lx, kc__shlo_op* op) {
  for (bool more = kc__lex_list_begin(lx, '}'); more;) {
    if (lx->tok.kind != KC__TOK_IDENT && lx->tok.kind != KC__TOK_STRING) {
      return kc__lex_expected(lx, &lx->tok, "an attribute name");
    }
    KC_RETURN_IF_ERROR(kc__read_attr(lx, op, true));
    KC_RETURN_IF_ERROR(kc__lex_list_next(lx, '}', &more));
  }
  return NULL;
}

/* Whether the '{' at the current token opens a region rather than an
 * attribute dictionary. */
bool kc__shlo_opens_region(const kc__lexer* lx) {
  kc__lexer copy = *lx;
  kc__lex_next(&copy);
  if (kc__tok_is_punct(&copy.tok, '}')) return false;
  if (copy.tok.kind != KC__TOK_IDENT && copy.tok.kind != KC__TOK_STRING) return true;
  kc__lex_next(&copy);
  return !(kc__tok_is_punct(&copy.tok, '=') || kc__tok_is_punct(&copy.tok, ',') ||
           kc__tok_is_punct(&copy.tok, '}'));
}

/* Records the region at the current '{' and skips it. */
static kc_status* kc__read_region(kc__lexer* lx, kc__shlo_op* op) {
  KC_RETURN_IF_ERROR(kc__shlo_append(&op->regions, lx, sizeof *lx));
  return kc__lex_skip_group(lx, NULL);
}

/* "(%a: type loc(..), ...)": arguments, into `out` (kc__shlo_arg). */
/* Whether `needle` occurs in `hay`. */
static bool kc__span_has(kc_string_view hay, const char* needle) {
  size_t n = strlen(needle);
  for (size_t i = 0; n <= hay.size && i <= hay.size - n; ++i) {
    if (memcmp(hay.data + i, needle, n) == 0) return true;
  }
  return false;
}

kc_status* kc__shlo_read_args(kc__shlo_module* m, kc__lexer* lx, kc__buf* out) {
  KC_RETURN_IF_ERROR(kc__lex_expect(lx, '('));
  for (bool more = kc__lex_list_begin(lx, ')'); more;) {
    kc__shlo_arg a = {.name = lx->tok};
    if (a.name.kind != KC__TOK_NAME) return kc__lex_expected(lx, &a.name, "an argument (%name)");
    kc__lex_next(lx);
    KC_RETURN_IF_ERROR(kc__lex_expect(lx, ':'));
    KC_RETURN_IF_ERROR(kc__shlo_type(m, lx, &a.shape));
    if (kc__tok_is_punct(&lx->tok, '{')) {
      /* Only jax.export's platform index matters among an argument's
       * attributes: {jax.global_constant = "_platform_index"}. */
      const char* start = lx->tok.text.data;
      kc__token close;
      KC_RETURN_IF_ERROR(kc__lex_skip_group(lx, &close));
      kc_string_view attrs = {start, (size_t)(close.text.data + close.text.size - start)};
      a.platform_index = kc__span_has(attrs, "jax.global_constant") &&
                         kc__span_has(attrs, "\"_platform_index\"");
    }
    KC_RETURN_IF_ERROR(kc__shlo_skip_loc(lx));
    KC_RETURN_IF_ERROR(kc__shlo_append(out, &a, sizeof a));
    KC_RETURN_IF_ERROR(kc__lex_list_next(lx, ')', &more));
  }
  return NULL;
}

/* A type list "t1, t2" or "(t1, t2)", into `out`. */
static kc_status* kc__read_types(kc__shlo_module* m, kc__lexer* lx, kc__buf* out) {
  if (kc__tok_is_punct(&lx->tok, '(')) {
    kc__lex_next(lx);
    for (bool more = kc__lex_list_begin(lx, ')'); more;) {
      const kc_shape* t = NULL;
      KC_RETURN_IF_ERROR(kc__shlo_type(m, lx, &t));
      KC_RETURN_IF_ERROR(kc__shlo_append(out, &t, sizeof t));
      KC_RETURN_IF_ERROR(kc__lex_list_next(lx, ')', &more));
    }
    return NULL;
  }
  for (;;) {
    const kc_shape* t = NULL;
    KC_RETURN_IF_ERROR(kc__shlo_type(m, lx, &t));
    KC_RETURN_IF_ERROR(kc__shlo_append(out, &t, sizeof t));
    if (!kc__tok_is_punct(&lx->tok, ',')) return NULL;
    kc__lex_next(lx);
  }
}

/* ": signature" after an op: "(t, t) -> t", "(t) -> (t, t)", "t" or "t, t". */
static kc_status* kc__read_signature(kc__shlo_module* m, kc__lexer* lx, kc__shlo_op* op) {
  kc__buf first = {0};
  kc_status* st = kc__read_types(m, lx, &first);
  if (!st && kc__shlo_is_arrow(lx)) {
    op->functional = true;
    st = kc__shlo_expect_arrow(lx);
    if (!st) st = kc__read_types(m, lx, &op->result_types);
    if (!st) {
      kc__buf_free(&op->operand_types);
      op->operand_types = first;
      return NULL;
    }
  } else if (!st) {
    size_t n = first.size / sizeof(const kc_shape*);
    const kc_shape* const* t = (const kc_shape* const*)(const void*)first.data;
    if ((int64_t)n == op->num_results || n == 0) {
      st = kc__shlo_append(&op->result_types, t, first.size);
    } else {
      st = kc__shlo_append(&op->result_types, &t[n - 1], sizeof t[0]);
    }
    if (!st) {
      kc__buf_free(&op->operand_types);
      op->operand_types = first;
      return NULL;
    }
  }
  kc__buf_free(&first);
  return st;
}

/* Whether the token that begins a new line goes on with the op read so
 * far, rather than beginning the next statement. MLIR is free-form:
 * attributes and the signature may each take lines of their own. */
static bool kc__continues(const kc__lexer* lx, const kc__shlo_op* op) {
  const kc__token* t = &lx->tok;
  if (kc__is_word(t, "reducer") || kc__is_word(t, "cond") || kc__is_word(t, "do") ||
      (kc__is_word(t, "loc") && kc__next_is(lx, '('))) {
    return true;
  }
  if (op->has_signature) return false;
  /* A line that ends in ',' has more to come. */
  if (lx->pos > 0 && t->text.data > lx->text) {
    const char* c = t->text.data - 1;
    while (c > lx->text && (*c == ' ' || *c == '\t' || *c == '\n' || *c == '\r')) c--;
    if (*c == ',') return true;
  }
  if (t->kind == KC__TOK_IDENT) return kc__next_is(lx, '=');
  return t->kind == KC__TOK_PUNCT && strchr(":{([<-", t->text.data[0]) != NULL;
}

/* The items of an op up to the end of its line (or of the group `close`
 * closes): operands, attributes, positional items, regions, callee and
 * signature. */
static kc_status* kc__read_items(kc__shlo_scope* s, kc__lexer* lx, kc__shlo_op* op, char close,
                                 kc__buf* inits) {
  for (;;) {
    kc__token t = lx->tok;
    if (t.kind == KC__TOK_ERROR) return kc__lex_expected(lx, &t, "an operand or attribute");
    if (close) {
      if (kc__tok_is_punct(&t, close)) {
        kc__lex_next(lx);
        return NULL;
      }
      if (t.kind == KC__TOK_END) return kc__lex_expected(lx, &t, "')'");
    } else if (t.kind == KC__TOK_END || kc__tok_is_punct(&t, '}') ||
               (t.line != lx->prev_line && !kc__continues(lx, op))) {
      return NULL;
    }
    if (t.kind == KC__TOK_NAME) {
      kc__token next = kc__lex_peek(lx);
      if (close && kc__tok_is_punct(&next, '=')) {
        /* while's "%iterArg = %init" */
        KC_RETURN_IF_ERROR(kc__shlo_append(&op->iter_names, &t, sizeof t));
        kc__lex_next(lx);
        kc__lex_next(lx);
      }
      int32_t v;
      KC_RETURN_IF_ERROR(kc__operand(s, lx, &v));
      KC_RETURN_IF_ERROR(kc__shlo_append(&op->operands, &v, sizeof v));
      if (close && kc__is_word(&lx->tok, "init")) {
        /* reduce's "(%x init: %c)" */
        kc__lex_next(lx);
        KC_RETURN_IF_ERROR(kc__lex_expect(lx, ':'));
        KC_RETURN_IF_ERROR(kc__operand(s, lx, &v));
        KC_RETURN_IF_ERROR(kc__shlo_append(inits, &v, sizeof v));
      }
    } else if (kc__is_word(&t, "loc") && kc__next_is(lx, '(')) {
      KC_RETURN_IF_ERROR(kc__shlo_skip_loc(lx));
    } else if (t.kind == KC__TOK_IDENT && kc__is_word(&t, "reducer")) {
      kc__lex_next(lx);
      while (kc__tok_is_punct(&lx->tok, '(')) {
        size_t before = op->region_args.size;
        KC_RETURN_IF_ERROR(kc__shlo_read_args(s->m, lx, &op->region_args));
        op->arg_group = (int32_t)((op->region_args.size - before) / sizeof(kc__shlo_arg));
      }
      if (!kc__tok_is_punct(&lx->tok, '{')) return kc__lex_expected(lx, &lx->tok, "'{'");
      KC_RETURN_IF_ERROR(kc__read_region(lx, op));
    } else if (t.kind == KC__TOK_IDENT && kc__is_word(&t, "inits") && kc__next_is(lx, '(')) {
      /* chlo.scan's "inits(%a, %b)": operands, as the inits, last */
      kc__lex_next(lx);
      kc__lex_next(lx);
      while (!kc__tok_is_punct(&lx->tok, ')')) {
        int32_t v;
        KC_RETURN_IF_ERROR(kc__operand(s, lx, &v));
        KC_RETURN_IF_ERROR(kc__shlo_append(inits, &v, sizeof v));
        if (kc__tok_is_punct(&lx->tok, ',')) {
          kc__lex_next(lx);
        } else if (!kc__tok_is_punct(&lx->tok, ')')) {
          return kc__lex_expected(lx, &lx->tok, "',' or ')'");
        }
      }
      kc__lex_next(lx);
    } else if (t.kind == KC__TOK_IDENT && (kc__is_word(&t, "cond") || kc__is_word(&t, "do"))) {
      kc__lex_next(lx);
      if (!kc__tok_is_punct(&lx->tok, '{')) return kc__lex_expected(lx, &lx->tok, "'{'");
      KC_RETURN_IF_ERROR(kc__read_region(lx, op));
    } else if (t.kind == KC__TOK_IDENT) {
      kc__token next = kc__lex_peek(lx);
      if (kc__tok_is_punct(&next, '=')) {
        KC_RETURN_IF_ERROR(kc__read_attr(lx, op, false));
      } else {
        KC_RETURN_IF_ERROR(kc__add_item(&op->words, (kc_string_view){NULL, 0}, lx));
        if (kc__tok_is_punct(&next, '<')) {
          KC_RETURN_IF_ERROR(kc__shlo_skip_value(lx, false)); /* dense<...> */
        } else {
          kc__lex_next(lx);
        }
      }
    } else if (t.kind == KC__TOK_STRING || t.kind == KC__TOK_NUMBER) {
      KC_RETURN_IF_ERROR(kc__add_item(&op->words, (kc_string_view){NULL, 0}, lx));
      kc__lex_next(lx);
    } else if (kc__tok_is_punct(&t, '@')) {
      kc__lex_next(lx);
      if (lx->tok.kind != KC__TOK_IDENT && lx->tok.kind != KC__TOK_STRING) {
        return kc__lex_expected(lx, &lx->tok, "a symbol name after '@'");
      }
      op->callee = lx->tok;
      kc__lex_next(lx);
    } else if (kc__tok_is_punct(&t, '(')) {
      kc__lex_next(lx);
      if (kc__tok_is_punct(&lx->tok, '{')) {
        /* "({...}, {...})": the regions of the generic form */
        for (bool more = true; more;) {
          if (!kc__tok_is_punct(&lx->tok, '{')) return kc__lex_expected(lx, &lx->tok, "'{'");
          KC_RETURN_IF_ERROR(kc__read_region(lx, op));
          KC_RETURN_IF_ERROR(kc__lex_list_next(lx, ')', &more));
        }
      } else {
        KC_RETURN_IF_ERROR(kc__read_items(s, lx, op, ')', inits));
      }
    } else if (kc__tok_is_punct(&t, '[')) {
      KC_RETURN_IF_ERROR(kc__add_item(&op->words, (kc_string_view){NULL, 0}, lx));
      KC_RETURN_IF_ERROR(kc__lex_skip_group(lx, NULL));
    } else if (kc__tok_is_punct(&t, '<')) {
      /* "<{...}>": the properties of the generic form */
      kc__lex_next(lx);
      KC_RETURN_IF_ERROR(kc__lex_expect(lx, '{'));
      KC_RETURN_IF_ERROR(kc__read_attr_dict(lx, op));
      KC_RETURN_IF_ERROR(kc__lex_expect(lx, '>'));
    } else if (kc__tok_is_punct(&t, '{')) {
      if (kc__shlo_opens_region(lx)) {
        KC_RETURN_IF_ERROR(kc__read_region(lx, op));
      } else {
        kc__lex_next(lx);
        KC_RETURN_IF_ERROR(kc__read_attr_dict(lx, op));
      }
    } else if (kc__tok_is_punct(&t, ':') && !close) {
      kc__lex_next(lx);
      KC_RETURN_IF_ERROR(kc__read_signature(s->m, lx, op));
      op->has_signature = true;
    } else if (kc__tok_is_punct(&t, ',')) {
      kc__lex_next(lx);
    } else {
      return kc__lex_expected(lx, &t, "an operand, attribute, region or ':' and the types");
    }
  }
}

/* One operation, at its first token, into *op (which the caller frees
 * with kc__op_free). */
static kc_status* kc__read_op(kc__shlo_scope* s, kc__lexer* lx, kc__shlo_op* op) {
  memset(op, 0, sizeof *op);
  op->result.kind = KC__TOK_END;
  op->callee.kind = KC__TOK_END;
  if (lx->tok.kind == KC__TOK_NAME) {
    op->result = lx->tok;
    op->num_results = 1;
    kc__lex_next(lx);
    while (kc__tok_is_punct(&lx->tok, ',')) {
      /* "%values, %indices = ": a name per result */
      if (op->num_results == 1) KC_RETURN_IF_ERROR(kc__shlo_append(&op->result_names, &op->result, sizeof op->result));
      kc__lex_next(lx);
      if (lx->tok.kind != KC__TOK_NAME) return kc__lex_expected(lx, &lx->tok, "a result name");
      KC_RETURN_IF_ERROR(kc__shlo_append(&op->result_names, &lx->tok, sizeof lx->tok));
      op->num_results++;
      kc__lex_next(lx);
    }
    if (op->num_results == 1 && kc__tok_is_punct(&lx->tok, ':')) {
      kc__lex_next(lx);
      KC_RETURN_IF_ERROR(kc__lex_int(lx, "a result count", 1, 4096, &op->num_results));
    }
    KC_RETURN_IF_ERROR(kc__lex_expect(lx, '='));
  }
  op->at = lx->tok;
  if (op->at.kind != KC__TOK_IDENT && op->at.kind != KC__TOK_STRING) {
    return kc__lex_expected(lx, &op->at, "an operation name");
  }
  op->name = op->at.text;
  kc__lex_next(lx);
  kc__buf inits = {0};
  kc_status* st = kc__read_items(s, lx, op, 0, &inits);
  if (!st && inits.size) {
    op->num_inits = (int32_t)(inits.size / sizeof(int32_t));
    st = kc__shlo_append(&op->operands, inits.data, inits.size);
  }
  kc__buf_free(&inits);
  return st;
}

static bool kc__is_terminator(kc_string_view name) {
  return kc_sv_equal(name, KC_SV_LIT("stablehlo.return")) ||
         kc_sv_equal(name, KC_SV_LIT("func.return")) || kc_sv_equal(name, KC_SV_LIT("return")) ||
         kc_sv_equal(name, KC_SV_LIT("mhlo.return"));
}

/* The operations of a block up to its '}' (consumed). */
kc_status* kc__shlo_read_block(kc__shlo_scope* s, kc__lexer* lx) {
  while (!kc__tok_is_punct(&lx->tok, '}')) {
    if (lx->tok.kind == KC__TOK_END) return kc__lex_expected(lx, &lx->tok, "'}'");
    if (s->has_return) return kc__lex_expected(lx, &lx->tok, "'}' after the return");
    kc__shlo_op op;
    kc_status* st = kc__read_op(s, lx, &op);
    if (!st && kc__is_terminator(op.name)) {
      s->has_return = true;
      st = kc__shlo_append(&s->returned, op.operands.data, op.operands.size);
    } else if (!st) {
      st = kc__shlo_lower(s, &op);
      if (st && !strstr(kc_status_get_message(st), "line ")) {
        st = kc_status_add_context(st, "line %d, column %d: %.*s", op.at.line, op.at.column,
                                   (int)op.name.size, op.name.data);
      }
    }
    kc__op_free(&op);
    if (st) return st;
  }
  kc__lex_next(lx);
  if (!s->has_return) return kc__lex_fail(lx, &lx->tok, "a block without a return");
  return NULL;
}

void kc__shlo_scope_free(kc__shlo_scope* s) {
  kc__strmap_free(&s->names);
  kc__buf_free(&s->values);
  kc__buf_free(&s->returned);
}

/* The returned values of a scope. */
const int32_t* kc__shlo_returned(const kc__shlo_scope* s, size_t* n) {
  *n = s->returned.size / sizeof(int32_t);
  return (const int32_t*)(const void*)s->returned.data;
}
