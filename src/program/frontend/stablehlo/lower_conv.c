/* stablehlo.convolution: HLO's dim_labels from its dimension numbers, its
 * window in either form, and its result refined where the type leaves
 * dimensions open (lower_internal.h). */
#include <stdio.h>

#include "program/instr/instr.h"
#include "program/frontend/stablehlo/lower_internal.h"

/* One side of a convolution's dimension numbers, "[b, 0, 1, f]", as
 * HLO's labels "b01f", appended to buf at *len. */
static kc_status* kc__conv_side(kc__lexer* lx, char* buf, size_t cap, size_t* len) {
  KC_RETURN_IF_ERROR(kc__lex_expect(lx, '['));
  for (bool more = kc__lex_list_begin(lx, ']'); more;) {
    kc_string_view t = lx->tok.text;
    if ((lx->tok.kind != KC__TOK_IDENT && lx->tok.kind != KC__TOK_NUMBER) || t.size != 1 ||
        *len + 4 >= cap) {
      return kc__lex_expected(lx, &lx->tok, "a dimension label (b, f, i, o, 0, 1, ...)");
    }
    buf[(*len)++] = t.data[0];
    kc__lex_next(lx);
    KC_RETURN_IF_ERROR(kc__lex_list_next(lx, ']', &more));
  }
  return NULL;
}

/* Field `field` of the pretty form's "window = {stride = [1, 1], ...}". */
static kc_status* kc__window_field(const kc__lexer* window, const char* field, kc__lexer* out,
                                   bool* found) {
  kc__lexer lx = *window;
  *found = false;
  KC_RETURN_IF_ERROR(kc__lex_expect(&lx, '{'));
  for (bool more = kc__lex_list_begin(&lx, '}'); more;) {
    bool mine = kc__tok_is_word(&lx.tok, field);
    kc__lex_next(&lx);
    KC_RETURN_IF_ERROR(kc__lex_expect(&lx, '='));
    if (mine) {
      *out = lx;
      *found = true;
      return NULL;
    }
    KC_RETURN_IF_ERROR(kc__shlo_skip_value(&lx, false));
    KC_RETURN_IF_ERROR(kc__lex_list_next(&lx, '}', &more));
  }
  return NULL;
}

/* A window field, from the pretty form's window = {...} or the generic
 * form's own attribute. */
static kc_status* kc__conv_field(const kc__shlo_op* op, const char* pretty, const char* generic,
                                 kc__lexer* out, bool* found) {
  const kc__shlo_item* window = kc__shlo_attr(op, "window");
  if (window) return kc__window_field(&window->at, pretty, out, found);
  const kc__shlo_item* it = kc__shlo_attr(op, generic);
  *found = it != NULL;
  if (it) *out = it->at;
  return NULL;
}

/* The I64 array attribute `name` of at, or NULL. */
static const int64_t* kc__shlo_attrs_get(const kc__shlo_attrs* at, const char* name, size_t* n) {
  for (size_t i = 0; i < at->n; ++i) {
    if (kc_sv_equal(at->a[i].name, kc_sv(name))) {
      *n = at->a[i].type == KC_ATTR_ARRAY ? at->a[i].v.array.count : 1;
      return at->a[i].type == KC_ATTR_ARRAY ? at->a[i].v.array.data : &at->a[i].v.i64;
    }
  }
  return NULL;
}

/* A convolution's result type refined where it leaves dimensions open:
 * batch from the input's (over batch_group_count), features from the
 * kernel's output features, each spatial dimension as its window slides
 * over the padded, dilated input. `labels` are HLO's dim_labels, the
 * kernel's at [kernel_at, kernel_end); `at` the attributes built. */
static kc_status* kc__refine_convolution(kc__shlo_scope* s, kc__shlo_op* op, const char* labels,
                                         size_t kernel_at, size_t kernel_end,
                                         const kc__shlo_attrs* at) {
  if (!kc__shlo_dynamic(s->m, kc__shlo_result_type(op, 0))) return NULL;
  const kc_shape* x = kc__shlo_operand(s, op, 0)->shape;
  const kc_shape* k = kc__shlo_operand(s, op, 1)->shape;
  const char* in = labels;
  const char* kern = labels + kernel_at;
  const char* out = labels + kernel_end + 2;
  size_t n_in = kernel_at - 1, n_out = strlen(out);
  size_t n;
  const int64_t* groups = kc__shlo_attrs_get(at, "batch_group_count", &n);
  const int64_t* str = kc__shlo_attrs_get(at, "window_strides", &n);
  const int64_t* lo = kc__shlo_attrs_get(at, "padding_low", &n);
  const int64_t* hi = kc__shlo_attrs_get(at, "padding_high", &n);
  const int64_t* bd = kc__shlo_attrs_get(at, "base_dilations", &n);
  const int64_t* wd = kc__shlo_attrs_get(at, "window_dilations", &n);
  int64_t dims[KC_TENSOR_MAX_NDIM];
  if (n_out > KC_TENSOR_MAX_NDIM) return kc__shlo_fail(&op->at, "convolution: labels");
  for (size_t d = 0; d < n_out; ++d) {
    char c = out[d];
    const char* pi = memchr(in, c == 'f' ? 'f' : c, n_in);
    const char* pk = memchr(kern, c == 'f' ? 'o' : c, kernel_end - kernel_at);
    if (c == 'b' && pi) {
      dims[d] = kc_shape_get_dims(x)[pi - in] / (groups && *groups > 0 ? *groups : 1);
    } else if (c == 'f' && pk) {
      dims[d] = kc_shape_get_dims(k)[pk - kern];
    } else if (c >= '0' && c <= '9' && pi && pk) {
      size_t i = (size_t)(c - '0');
      if (!kc__window_positions(kc_shape_get_dims(x)[pi - in], lo ? lo[i] : 0, hi ? hi[i] : 0,
                                bd ? bd[i] : 1, kc_shape_get_dims(k)[pk - kern],
                                wd ? wd[i] : 1, str ? str[i] : 1, &dims[d])) {
        return kc__shlo_fail(&op->at, "convolution: spatial dimension %zu: the window, padding "
                                      "and dilations overflow 64 bits", i);
      }
    } else {
      return kc__shlo_fail(&op->at, "convolution: dimension labels %s", labels);
    }
  }
  return kc__shlo_refine_result(s, op, 0, dims, (int32_t)n_out);
}

kc_status* kc__shlo_lower_convolution(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r) {
  const kc__shlo_item* dn = kc__shlo_either(op, "dim_numbers", "dimension_numbers");
  if (!dn) return kc__shlo_missing(op, "dim_numbers");
  /* dynamic_conv: a third operand, [spatial, 2] of (low, high), holds the
   * padding, known when the module is read (from the inputs' shapes in a
   * shape-polymorphic one); it becomes the window's padding. */
  bool dynamic = !strcmp(r->name, "dynamic_conv");
  if (kc__shlo_num_operands(op) != (dynamic ? 3u : 2u)) {
    return kc__shlo_fail(&op->at, "%s: expected %s operands", dynamic ? "dynamic_conv" : "convolution",
                         dynamic ? "three" : "two");
  }
  int64_t pads[2 * KC_TENSOR_MAX_NDIM];
  size_t npads = 0;
  if (dynamic) {
    KC_RETURN_IF_ERROR(kc__shlo_known_ints(s, op, 2, pads, KC__ARRAY_SIZE(pads), &npads));
    if (npads % 2 || kc__shlo_attr(op, "padding")) {
      return kc__shlo_fail(&op->at, "dynamic_conv: expected the padding as [low, high] pairs in "
                                    "its third operand alone");
    }
  }
  kc__lexer lx = kc__shlo_resolve(s->m, &dn->at);
  if (kc__tok_is_punct(&lx.tok, '#')) {
    /* #stablehlo.conv<[b, 0, 1, f]x[...]->[...]> */
    kc__lex_next(&lx);
    kc__lex_next(&lx);
    KC_RETURN_IF_ERROR(kc__lex_expect(&lx, '<'));
  }
  char labels[64];
  size_t len = 0;
  KC_RETURN_IF_ERROR(kc__conv_side(&lx, labels, sizeof labels, &len));
  labels[len++] = '_';
  size_t kernel_at = len;
  if (!kc__tok_is_word(&lx.tok, "x")) return kc__lex_expected(&lx, &lx.tok, "'x'");
  kc__lex_next(&lx);
  KC_RETURN_IF_ERROR(kc__conv_side(&lx, labels, sizeof labels, &len));
  size_t kernel_end = len;
  KC_RETURN_IF_ERROR(kc__lex_expect(&lx, '-'));
  KC_RETURN_IF_ERROR(kc__lex_expect(&lx, '>'));
  labels[len++] = '-';
  labels[len++] = '>';
  KC_RETURN_IF_ERROR(kc__conv_side(&lx, labels, sizeof labels, &len));
  kc__shlo_attrs at = {.n = 0};
  char* text = kc__arena_strdup(&s->m->arena, (kc_string_view){labels, len});
  if (!text) return kc__parse_oom();
  kc__shlo_attrs_str(&at, "dim_labels", (kc_string_view){text, len});
  /* The window's size: the kernel's spatial dims, in spatial order. */
  const kc_shape* kernel = kc__shlo_operand(s, op, 1)->shape;
  int64_t size[KC_TENSOR_MAX_NDIM];
  size_t spatial = 0;
  for (char d = '0'; d <= '9'; ++d) {
    const char* p = memchr(labels + kernel_at, d, kernel_end - kernel_at);
    if (!p || (int32_t)(p - (labels + kernel_at)) >= kc_shape_get_rank(kernel)) break;
    size[spatial++] = kc_shape_get_dims(kernel)[p - (labels + kernel_at)];
  }
  if (spatial) KC_RETURN_IF_ERROR(kc__shlo_attrs_ints(s, &at, "window_dimensions", size, spatial));
  static const char* const pretty[] = {"stride", "lhs_dilate", "rhs_dilate"};
  static const char* const generic[] = {"window_strides", "lhs_dilation", "rhs_dilation"};
  static const char* const hlo[] = {"window_strides", "base_dilations", "window_dilations"};
  kc__lexer f;
  bool found;
  for (int k = 0; k < 3; ++k) {
    KC_RETURN_IF_ERROR(kc__conv_field(op, pretty[k], generic[k], &f, &found));
    if (!found) continue;
    int64_t v[KC_TENSOR_MAX_NDIM];
    size_t n;
    KC_RETURN_IF_ERROR(kc__shlo_ints(s->m, &f, hlo[k], v, KC_TENSOR_MAX_NDIM, &n));
    KC_RETURN_IF_ERROR(kc__shlo_attrs_ints(s, &at, hlo[k], v, n));
  }
  KC_RETURN_IF_ERROR(kc__conv_field(op, "pad", "padding", &f, &found));
  if (found) KC_RETURN_IF_ERROR(kc__shlo_window_padding(s, &f, &at));
  if (dynamic) {
    int64_t lo[KC_TENSOR_MAX_NDIM], hi[KC_TENSOR_MAX_NDIM];
    for (size_t i = 0; i < npads / 2; ++i) {
      lo[i] = pads[2 * i];
      hi[i] = pads[2 * i + 1];
    }
    KC_RETURN_IF_ERROR(kc__shlo_attrs_ints(s, &at, "padding_low", lo, npads / 2));
    KC_RETURN_IF_ERROR(kc__shlo_attrs_ints(s, &at, "padding_high", hi, npads / 2));
  }
  /* window_reversal: the kernel's flagged spatial dimensions reversed
   * first (what XLA's rhs_reversal means). */
  int64_t flip[KC_TENSOR_MAX_NDIM];
  size_t nflip = 0;
  KC_RETURN_IF_ERROR(kc__conv_field(op, "reverse", "window_reversal", &f, &found));
  if (found) {
    int64_t v[KC_TENSOR_MAX_NDIM];
    size_t n;
    KC_RETURN_IF_ERROR(kc__shlo_ints(s->m, &f, "reverse", v, KC_TENSOR_MAX_NDIM, &n));
    if (n != spatial) {
      return kc__shlo_fail(&op->at, "convolution: window_reversal has %zu entries for %zu "
                                    "spatial dimensions", n, spatial);
    }
    for (size_t i = 0; i < n; ++i) {
      if (!v[i]) continue;
      const char* p = memchr(labels + kernel_at, (int)('0' + i), kernel_end - kernel_at);
      flip[nflip++] = p - (labels + kernel_at);
    }
  }
  static const char* const counts[] = {"feature_group_count", "batch_group_count"};
  for (int k = 0; k < 2; ++k) {
    const kc__shlo_item* it = kc__shlo_attr(op, counts[k]);
    int64_t v = 1;
    if (it) KC_RETURN_IF_ERROR(kc__shlo_int(s->m, &it->at, counts[k], &v));
    kc__shlo_attrs_int(&at, counts[k], v);
  }
  KC_RETURN_IF_ERROR(kc__refine_convolution(s, op, text, kernel_at, kernel_end, &at));
  if (!nflip) return kc__shlo_lower_with_n(s, op, r, 2, &at, NULL, 0);
  kc_attr dims;
  memset(&dims, 0, sizeof dims);
  dims.name = KC_SV_LIT("dimensions");
  dims.type = KC_ATTR_ARRAY;
  dims.elem_type = KC_ATTR_I64;
  dims.v.array.data = flip;
  dims.v.array.count = nflip;
  kc_attr_dict dict = {.count = 1, .entries = &dims};
  kc__buf buf = {0};
  kc_status* st = kc__shlo_operand_ids(s, op, 0, 2, &buf);
  int32_t* ids = (int32_t*)(void*)buf.data;
  kc_string_view name;
  if (!st) st = kc__shlo_instr_name(s, op, "reverse", &name);
  if (!st) {
    kc_instruction_desc d = {.struct_size = sizeof d, .op = KC_OP_REVERSE, .result_shape = kernel,
                             .operands = &ids[1], .num_operands = 1, .attrs = &dict};
    int32_t reversed = -1;
    st = kc_program_builder_add_instruction(s->b, &d, name, &reversed);
    ids[1] = reversed;
  }
  if (!st) st = kc__shlo_emit(s, op, r->opcode, &buf, &at, NULL, 0);
  kc__buf_free(&buf);
  return st;
}
