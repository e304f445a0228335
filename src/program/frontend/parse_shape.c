/* The HLO shape parser: element types, dims, tuples and the layouts
 * written after them; kc_shape_parse. */
#include <stdio.h>

#include "program/frontend/float8.h"
#include "program/frontend/parse_internal.h"
#include "program/shape_internal.h"

#define KC__ELEMENT_TYPES_LIST "pred, s8..s64, u8..u64, f16, bf16, f32, f64, c64, c128"
#define KC__ELEMENT_TYPES_TEXT "an element type (" KC__ELEMENT_TYPES_LIST ")"

/* XLA's integer types narrower than a byte (s1, s2, s4, u1, u2, u4),
 * which kcall's HLO programs do not hold. */
static bool kc__xla_subbyte_type(kc_string_view t) {
  return t.size == 2 && (t.data[0] == 's' || t.data[0] == 'u') &&
         (t.data[1] == '1' || t.data[1] == '2' || t.data[1] == '4');
}

/* "expected ..., got X" for the layout that starts at `open`. */
static kc_status* kc__layout_error(const kc__lexer* lx, const kc__token* open,
                                   const kc__token* at, int32_t rank, const char* why) {
  kc__token got = *open;
  got.kind = KC__TOK_IDENT;
  got.text.size = (size_t)(at->text.data + at->text.size - open->text.data);
  char what[160];
  snprintf(what, sizeof what, "a layout: a permutation of 0 to %d, minor to major (%s)",
           rank - 1, why);
  return kc__lex_expected(lx, &got, what);
}

/* A layout "{1,0}" after an array's dims: any permutation, recorded in
 * `layouts` (NULL: only the row-major one is accepted). Tiling and memory
 * spaces ("{1,0:T(8,128)}") are refused. */
static kc_status* kc__parse_layout(kc__lexer* lx, int32_t rank, kc__layouts* layouts) {
  kc__token open = lx->tok;
  kc__lex_next(lx);
  int8_t m2m[KC_TENSOR_MAX_NDIM];
  bool seen[KC_TENSOR_MAX_NDIM] = {false};
  bool row_major = true;
  int32_t count = 0;
  for (bool more = !kc__tok_is_punct(&lx->tok, '}'); more;) {
    bool negative;
    uint64_t v;
    const kc__token* t = &lx->tok;
    if (t->kind != KC__TOK_NUMBER || !kc__number_to_int(t->text, &negative, &v) ||
        negative || count >= rank || v >= (uint64_t)rank || seen[v]) {
      return kc__layout_error(lx, &open, t, rank, "each dimension once");
    }
    seen[v] = true;
    m2m[count] = (int8_t)v;
    row_major = row_major && v == (uint64_t)(rank - 1 - count);
    count++;
    kc__lex_next(lx);
    if (!kc__tok_is_punct(&lx->tok, ',')) break;
    kc__lex_next(lx);
  }
  if (kc__tok_is_punct(&lx->tok, ':')) {
    return kc__layout_error(lx, &open, &lx->tok, rank,
                            "tiling and memory spaces are not supported");
  }
  if (!kc__tok_is_punct(&lx->tok, '}') || (count != rank && count != 0)) {
    return kc__layout_error(lx, &open, &lx->tok, rank, "each dimension once");
  }
  if (count == 0) row_major = true; /* "{}" on a rank-0 or unlaid-out array */
  if (!row_major && !layouts) {
    return kc__layout_error(lx, &open, &lx->tok, rank,
                            "only the row-major one is accepted here");
  }
  if (layouts) {
    if (layouts->leaves == 0) {
      layouts->first_nondefault = !row_major;
      memcpy(layouts->first, m2m, (size_t)count);
    }
    if (!row_major) layouts->nondefault++;
    if (layouts->leaves < KC__LAYOUT_LEAVES && rank <= KC__LAYOUT_RANK) {
      layouts->leaf_nondefault[layouts->leaves] = !row_major;
      memcpy(layouts->leaf[layouts->leaves], m2m, (size_t)count);
    }
  }
  kc__lex_next(lx);
  return NULL;
}


kc_status* kc__parse_array_text(kc__lexer* lx, kc__layouts* layouts,
                                kc__array_text* out) {
  out->start = lx->tok;
  out->narrow = 0;
  out->f8 = 0;
  kc_string_view type = out->start.text;
  bool narrow =
      out->start.kind == KC__TOK_IDENT && kc__xla_subbyte_type(type) && type.data[1] != '1';
  if (narrow && layouts) {
    /* s2, s4, u2, u4 in a program: one to a byte (parse_narrow.c) */
    out->narrow = (uint8_t)(type.data[1] - '0');
    out->dtype = kc_dtype_make(type.data[0] == 's' ? kDLInt : kDLUInt, 8, 1);
    if (layouts->leaves == 0) layouts->first_narrow = out->narrow;
    layouts->any_narrow = true;
  } else if (layouts && out->start.kind == KC__TOK_IDENT && kc__f8_find_hlo(type)) {
    /* f8e4m3fn, ... in a program: their bits in u8 (parse_float8.c) */
    out->f8 = (uint8_t)(kc__f8_index(kc__f8_find_hlo(type)) + 1);
    out->dtype = kc_dtype_make(kDLUInt, 8, 1);
    if (layouts->leaves == 0) layouts->first_f8 = out->f8;
    layouts->any_f8 = true;
  } else if (out->start.kind != KC__TOK_IDENT ||
      !kc__hlo_dtype_parse(out->start.text, &out->dtype)) {
    if (out->start.kind == KC__TOK_IDENT && kc__xla_subbyte_type(out->start.text)) {
      return kc__lex_fail(lx, &out->start, "element type %s is not supported (%s)",
                          KC__Q(out->start.text), KC__ELEMENT_TYPES_LIST);
    }
    return kc__lex_expected(lx, &out->start, KC__ELEMENT_TYPES_TEXT " or '('");
  }
  kc__lex_next(lx);
  KC_RETURN_IF_ERROR(kc__lex_expect(lx, '['));
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
    KC_RETURN_IF_ERROR(kc__lex_int(lx, "a dimension size", 0, INT64_MAX, &out->dims[out->rank]));
    out->rank++;
    KC_RETURN_IF_ERROR(kc__lex_list_next(lx, ']', &more));
  }
  if (kc__tok_is_punct(&lx->tok, '{')) KC_RETURN_IF_ERROR(kc__parse_layout(lx, out->rank, layouts));
  if (layouts) layouts->leaves++;
  return NULL;
}

kc_status* kc__array_text_create(const kc__lexer* lx, const kc__array_text* a,
                                 kc_shape** out) {
  kc_status* st = kc_shape_create_array(a->dtype, a->dims, a->rank, out);
  if (st && lx->column_only) {
    return kc_status_add_context(st, "column %d", a->start.column);
  }
  return kc_status_add_context(st, "line %d, column %d", a->start.line, a->start.column);
}

bool kc__array_text_equal(const kc__array_text* a, const kc_shape* s) {
  return !kc_shape_is_tuple(s) && kc_dtype_equal(a->dtype, kc_shape_get_dtype(s)) &&
         a->rank == kc_shape_get_rank(s) &&
         (a->rank == 0 ||
          memcmp(a->dims, kc_shape_get_dims(s), (size_t)a->rank * sizeof(int64_t)) == 0);
}

static kc_status* kc__parse_array_shape(kc__lexer* lx, kc__layouts* layouts, kc_shape** out) {
  kc__array_text a;
  KC_RETURN_IF_ERROR(kc__parse_array_text(lx, layouts, &a));
  return kc__array_text_create(lx, &a, out);
}

static void kc__destroy_shapes(kc__buf* elems) {
  kc_shape** list = (kc_shape**)(void*)elems->data;
  for (size_t i = 0; i < elems->size / sizeof *list; ++i) kc_shape_destroy(list[i]);
  kc__buf_free(elems);
}

static kc_status* kc__parse_tuple_shape(kc__lexer* lx, int depth, kc__layouts* layouts,
                                        kc_shape** out) {
  kc__token open = lx->tok;
  kc__lex_next(lx);
  kc__buf elems = {0};
  kc_status* st = NULL;
  for (bool more = kc__lex_list_begin(lx, ')'); more;) {
    kc_shape* e = NULL;
    st = kc__parse_shape(lx, depth + 1, layouts, &e);
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

kc_status* kc__parse_shape(kc__lexer* lx, int depth, kc__layouts* layouts,
                           kc_shape** out) {
  *out = NULL;
  if (!kc__tok_is_punct(&lx->tok, '(')) return kc__parse_array_shape(lx, layouts, out);
  if (depth >= KC__PARSE_MAX_DEPTH) {
    return kc__lex_fail(lx, &lx->tok, "tuples nested deeper than %d",
                        KC__PARSE_MAX_DEPTH);
  }
  return kc__parse_tuple_shape(lx, depth, layouts, out);
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
  kc_status* st = kc__parse_shape(&lx, 0, NULL, &shape);
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
