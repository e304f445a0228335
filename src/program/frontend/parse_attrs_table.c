/* The attributes of kernel instructions (program/instr/instr.h) in the syntax
 * HLO writes them: integer lists, words, booleans, slices, paddings,
 * windows and called computations, turned into the kc_attr entries the table reads. */
#include <stdio.h>

#include "program/frontend/parse_internal.h"

/* How the attributes of kernel instructions are written. */
typedef enum kc__attr_syntax {
  KC__SYNTAX_INTS, /* {1, 2}: an I64 array */
  KC__SYNTAX_INT,  /* 3 */
  KC__SYNTAX_WORD, /* LT: a string */
  KC__SYNTAX_BOOL, /* true or false */
  KC__SYNTAX_SLICE,   /* {[0:2], [1:5:2]}: start_indices, limit_indices, strides */
  KC__SYNTAX_PADDING, /* 0_1x2_3_1: edge_padding_low, _high, interior_padding */
  KC__SYNTAX_WINDOW,  /* {size=2x2 stride=1x1 pad=0_1x0_1 lhs_dilate=.. rhs_dilate=..} */
  KC__SYNTAX_LABELS   /* b01f_01io->b01f: a string */
} kc__attr_syntax;

/* The computations an attribute of kc__instr_def.computation_attrs names:
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
    kc__hlo_callee callee = {.attr = key->text, .name = lx->tok, .program = NULL};
    KC_RETURN_IF_ERROR(kc__computation_program(p, ins, &lx->tok, &callee.program));
    if (!kc__buf_append(&ins->callees, &callee, sizeof callee)) return kc__parse_oom();
    kc__lex_next(lx);
    if (!list) break;
    KC_RETURN_IF_ERROR(kc__lex_list_next(lx, '}', &more));
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
    {"lhs_ragged_dims", KC__SYNTAX_INTS},
    {"rhs_group_dims", KC__SYNTAX_INTS},
    {"num_carries", KC__SYNTAX_INT},
    {"is_reverse", KC__SYNTAX_BOOL},
    {"is_associative", KC__SYNTAX_BOOL},
    {"is_stable", KC__SYNTAX_BOOL},
    {"k", KC__SYNTAX_INT},
    {"largest", KC__SYNTAX_BOOL},
    {"exponent_bits", KC__SYNTAX_INT},
    {"mantissa_bits", KC__SYNTAX_INT},
    {"offset_dims", KC__SYNTAX_INTS},
    {"collapsed_slice_dims", KC__SYNTAX_INTS},
    {"start_index_map", KC__SYNTAX_INTS},
    {"operand_batching_dims", KC__SYNTAX_INTS},
    {"start_indices_batching_dims", KC__SYNTAX_INTS},
    {"slice_sizes", KC__SYNTAX_INTS},
    {"update_window_dims", KC__SYNTAX_INTS},
    {"inserted_window_dims", KC__SYNTAX_INTS},
    {"scatter_dims_to_operand_dims", KC__SYNTAX_INTS},
    {"input_batching_dims", KC__SYNTAX_INTS},
    {"scatter_indices_batching_dims", KC__SYNTAX_INTS},
    {"index_vector_dim", KC__SYNTAX_INT},
    {"indices_are_sorted", KC__SYNTAX_BOOL},
    {"unique_indices", KC__SYNTAX_BOOL},
    {"dim_labels", KC__SYNTAX_LABELS},
    {"feature_group_count", KC__SYNTAX_INT},
    {"batch_group_count", KC__SYNTAX_INT},
    {"fft_type", KC__SYNTAX_WORD},
    {"fft_length", KC__SYNTAX_INTS},
    {"algorithm", KC__SYNTAX_WORD},
    {"left_side", KC__SYNTAX_BOOL},
    {"lower", KC__SYNTAX_BOOL},
    {"unit_diagonal", KC__SYNTAX_BOOL},
    {"transpose_a", KC__SYNTAX_WORD},
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
  KC_RETURN_IF_ERROR(kc__lex_expect(lx, '{'));
  for (bool more = kc__lex_list_begin(lx, '}'); more;) {
    if (rank == KC_TENSOR_MAX_NDIM) return kc__lex_fail(lx, &lx->tok, "too many dimensions");
    KC_RETURN_IF_ERROR(kc__lex_expect(lx, '['));
    KC_RETURN_IF_ERROR(kc__lex_int(lx, "a start index", INT64_MIN, INT64_MAX, &parts[0][rank]));
    KC_RETURN_IF_ERROR(kc__lex_expect(lx, ':'));
    KC_RETURN_IF_ERROR(kc__lex_int(lx, "a limit index", INT64_MIN, INT64_MAX, &parts[1][rank]));
    parts[2][rank] = 1;
    if (kc__tok_is_punct(&lx->tok, ':')) {
      kc__lex_next(lx);
      KC_RETURN_IF_ERROR(kc__lex_int(lx, "a stride", INT64_MIN, INT64_MAX, &parts[2][rank]));
    }
    KC_RETURN_IF_ERROR(kc__lex_expect(lx, ']'));
    rank++;
    KC_RETURN_IF_ERROR(kc__lex_list_next(lx, '}', &more));
  }
  for (int k = 0; k < 3; ++k) KC_RETURN_IF_ERROR(kc__add_ints_attr(p, ins, kc__slice_names[k], parts[k], rank));
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
  KC_RETURN_IF_ERROR(kc__lex_expect(lx, '{'));
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
    KC_RETURN_IF_ERROR(kc__lex_expect(lx, '='));
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
    KC_RETURN_IF_ERROR(kc__add_ints_attr(p, ins, fields[f].attr, a, n));
    if (per == 2) KC_RETURN_IF_ERROR(kc__add_ints_attr(p, ins, fields[f].attr2, b, n));
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
  for (k = 0; k < 3; ++k) KC_RETURN_IF_ERROR(kc__add_ints_attr(p, ins, kc__padding_names[k], parts[k], rank));
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
  kc_attr a = {
      .name = kc_sv(name),
      .type = KC_ATTR_ARRAY,
      .elem_type = KC_ATTR_I64,
      .v.array = {.data = kc__arena_dup(&p->tmp, v, n * sizeof *v), .count = n},
  };
  if (!a.v.array.data) return kc__parse_oom();
  return kc__add_table_attr(p, ins, &a);
}

/* An attribute of a kernel instruction: those its entry reads, in the
 * syntax HLO writes them; the others are left to be skipped. */
kc_status* kc__parse_table_attr(kc__hlo_parser* p, kc__hlo_instr* ins,
                                const kc__token* key, bool* out_handled) {
  kc__lexer* lx = &p->lx;
  *out_handled = false;
  /* Whether the entry reads it: an attribute, or called computations.
   * slice= and padding= give attributes of other names. */
  bool reads = false;
  const char* given = kc_sv_equal(key->text, KC_SV_LIT("slice"))     ? kc__slice_names[0]
                      : kc_sv_equal(key->text, KC_SV_LIT("padding")) ? kc__padding_names[0]
                      : kc_sv_equal(key->text, KC_SV_LIT("window"))  ? "window_dimensions"
                                                                     : NULL;
  for (const char* const* a = ins->op->attrs; *a && !reads; ++a) {
    reads = given ? strcmp(given, *a) == 0 : kc_sv_equal(key->text, kc_sv(*a));
  }
  for (const char* const* a = ins->op->computation_attrs; a && *a && !reads; ++a) {
    if (kc_sv_equal(key->text, kc_sv(*a))) {
      *out_handled = true;
      return kc__parse_callees(p, ins, key);
    }
  }
  if (!reads) return NULL;
  /* Its value, in the syntax HLO writes it in. */
  for (size_t i = 0; i < KC__ARRAY_SIZE(kc__attr_syntaxes); ++i) {
    if (!kc_sv_equal(key->text, kc_sv(kc__attr_syntaxes[i].name))) continue;
    kc_attr a;
    memset(&a, 0, sizeof a);
    a.name = key->text;
    switch (kc__attr_syntaxes[i].syntax) {
      case KC__SYNTAX_INTS: {
        const int64_t* v;
        size_t n;
        KC_RETURN_IF_ERROR(kc__parse_int_list(p, kc__attr_syntaxes[i].name, &v, &n));
        a.type = KC_ATTR_ARRAY;
        a.elem_type = KC_ATTR_I64;
        a.v.array.data = v;
        a.v.array.count = n;
        break;
      }
      case KC__SYNTAX_INT:
      {
        char what[96];
        snprintf(what, sizeof what, "an integer for attribute %s", kc__attr_syntaxes[i].name);
        a.type = KC_ATTR_I64;
        KC_RETURN_IF_ERROR(kc__lex_int(lx, what, INT64_MIN, INT64_MAX, &a.v.i64));
        break;
      }
      case KC__SYNTAX_WORD:
        if (lx->tok.kind != KC__TOK_IDENT) return kc__lex_expected(lx, &lx->tok, "a word");
        a.type = KC_ATTR_STRING;
        a.v.str = lx->tok.text;
        kc__lex_next(lx);
        break;
      case KC__SYNTAX_BOOL: {
        bool t = kc__tok_is_word(&lx->tok, "true");
        if (!t && !kc__tok_is_word(&lx->tok, "false")) {
          return kc__lex_fail(lx, &lx->tok, "attribute %s: expected true or false, got %s",
                              kc__attr_syntaxes[i].name, KC__Q(lx->tok.text));
        }
        a.type = KC_ATTR_BOOL;
        a.v.b = t;
        kc__lex_next(lx);
        break;
      }
      case KC__SYNTAX_SLICE:
        *out_handled = true;
        return kc__parse_slice(p, ins);
      case KC__SYNTAX_PADDING:
        *out_handled = true;
        return kc__parse_padding(p, ins);
      case KC__SYNTAX_WINDOW:
        *out_handled = true;
        return kc__parse_window(p, ins);
      case KC__SYNTAX_LABELS: {
        kc__token at = lx->tok;
        a.type = KC_ATTR_STRING;
        a.v.str = kc__lex_raw_span(lx, "0123456789abcdefghijklmnopqrstuvwxyz_->");
        if (a.v.str.size == 0) {
          return kc__lex_expected(lx, &at, "dimension labels such as b01f_01io->b01f");
        }
        break;
      }
    }
    *out_handled = true;
    return kc__add_table_attr(p, ins, &a);
  }
  return NULL;
}
