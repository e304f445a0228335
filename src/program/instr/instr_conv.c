/* convolution, as XLA defines it: dim_labels name the batch, feature and
 * spatial dimensions of the input, kernel and result in any order and for
 * any number of spatial dimensions; the window gives strides, padding and
 * input (lhs) and kernel (rhs) dilation; feature_group_count and
 * batch_group_count split the features and the batch into groups.
 *
 * f16 and bf16 operands are computed in f32 (f64 when any of the three
 * is f64) and the result rounded once. Integer operands (8 to 64 bits,
 * signed or not: JAX's int8 convolutions with preferred_element_type
 * int32) are converted to the result's type and multiplied and summed in
 * it, wrapping as XLA's do (computed modulo 2^64, then truncated); they
 * do not mix with floats. PyTorch's layout (bf01_oi01->bf01) in f32
 * with a width stride of 1 and no input dilation runs kernels/conv.h's
 * direct convolution (with groups too) where the processor has AVX2 and
 * FMA. Otherwise, without groups, f32 runs as an im2col product
 * (kernels/conv.c's rows) on the blocked GEMM of gemm_f32.c (which
 * splits large products across the thread pool); everything else runs a
 * direct loop over the result's positions (all output features at once),
 * split across the pool. */
#include <stdio.h>
#include <stdlib.h>

#include "internal/common.h"
#include "kernels/conv.h"
#include "kernels/half.h"
#include "kernels/gemm_f32.h"
#include "program/instr/instr.h"

#define KC__CONV_MAX_SP (KC_TENSOR_MAX_NDIM - 2)

enum { KC__CT_F16, KC__CT_BF16, KC__CT_F32, KC__CT_F64, KC__CT_INT, KC__CT_NONE };

typedef struct kc__conv_plan {
  /* The window over the input's spatial dimensions, the input's strides
   * and its features per group (the kernel's input features). */
  kc__conv_geom g;
  int64_t batch, out_batch;          /* N, N / batch_group_count */
  int64_t in_feat, rhs_in, out_feat; /* C, the kernel's input features, O */
  int64_t groups, batch_groups;
  /* Row-major element strides of each labelled dimension (the input's
   * are g's). */
  int64_t rhs_o, rhs_i, rhs_s[KC__CONV_MAX_SP];
  int64_t out_b, out_f, out_s[KC__CONV_MAX_SP];
  int64_t lhs_count, rhs_count, out_count;
  int lhs_type, rhs_type, out_type;
  DLDataType lhs_dt, rhs_dt, out_dt;
  bool f64;        /* computed in double, else in float */
  bool integer;    /* computed in uint64_t (KC__CT_INT operands and result) */
  bool gemm;       /* the im2col + GEMM path */
  bool direct2d;   /* kernels/conv.h's direct NCHW convolution (plan_direct2d) */
  bool rhs_packed; /* the kernel is already the GEMM's [window, i] x o matrix */
  bool out_packed; /* the result is already the GEMM's [b, spatial] x o matrix */
  bool lhs_direct; /* 1x1, unit stride, no padding, b..f input: im2col is the input */
  const kc__gemm_f32_kernel* kernel;
  /* The direct loop's taps: for spatial dimension d, output position o
   * and window position w, taps[tap_base[d] + o * g.win.size[d] + w] is
   * the input's element offset along d (index times stride), or -1 in
   * padding or a dilation hole (kc__window_taps). NULL: computed as it
   * goes (a table that would be too large). */
  int64_t* taps;
  int64_t tap_base[KC__CONV_MAX_SP];
} kc__conv_plan;

static int kc__conv_type(DLDataType t) {
  if (t.code == kDLFloat && t.lanes == 1) {
    if (t.bits == 16) return KC__CT_F16;
    if (t.bits == 32) return KC__CT_F32;
    if (t.bits == 64) return KC__CT_F64;
  }
  if (t.code == kDLBfloat && t.bits == 16 && t.lanes == 1) return KC__CT_BF16;
  if ((t.code == kDLInt || t.code == kDLUInt) && t.lanes == 1 &&
      (t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64)) {
    return KC__CT_INT;
  }
  return KC__CT_NONE;
}

/* ---- dim_labels -------------------------------------------------------------------- */

typedef struct kc__conv_labels {
  int32_t nsp;
  /* Per part (lhs, rhs, out): the positions of its two letters and of
   * each spatial dimension. */
  int32_t a[3], b[3], sp[3][KC__CONV_MAX_SP];
} kc__conv_labels;

static kc_status* kc__labels_error(const kc__instr* in, kc_string_view text, const char* why) {
  return kc__instr_error(in, KC_INVALID_ARGUMENT,
                         "attribute dim_labels: expected INPUT_KERNEL->OUTPUT such as "
                         "b01f_01io->b01f (input and output: b, f and the spatial digits; "
                         "kernel: i, o and the same digits; each once), got %s: %s",
                         KC__Q(text), why);
}

static kc_status* kc__labels_read(const kc__instr* in, kc__conv_labels* l) {
  kc_string_view text;
  KC_RETURN_IF_ERROR(kc__instr_attr_string(in, "dim_labels", false, &text));
  const char* s = text.data;
  const char* end = s + text.size;
  const char* parts[3][2];
  const char* us = memchr(s, '_', text.size);
  const char* arrow = NULL;
  for (const char* c = s; c + 1 < end; ++c) {
    if (c[0] == '-' && c[1] == '>') {
      arrow = c;
      break;
    }
  }
  if (!us || !arrow || us > arrow) return kc__labels_error(in, text, "no '_' before '->'");
  parts[0][0] = s;
  parts[0][1] = us;
  parts[1][0] = us + 1;
  parts[1][1] = arrow;
  parts[2][0] = arrow + 2;
  parts[2][1] = end;
  static const char letters[3][3] = {"bf", "oi", "bf"};
  static const char* const names[3] = {"the input's", "the kernel's", "the output's"};
  for (int k = 0; k < 3; ++k) {
    int32_t len = (int32_t)(parts[k][1] - parts[k][0]);
    int32_t nsp = len - 2;
    if (nsp < 0 || nsp > KC__CONV_MAX_SP) {
      char why[96];
      snprintf(why, sizeof why, "%s labels have %d letters", names[k], len);
      return kc__labels_error(in, text, why);
    }
    if (k == 0) l->nsp = nsp;
    if (nsp != l->nsp) {
      char why[96];
      snprintf(why, sizeof why, "%s labels name %d spatial dimensions, the input's %d",
               names[k], nsp, l->nsp);
      return kc__labels_error(in, text, why);
    }
    l->a[k] = l->b[k] = -1;
    for (int32_t d = 0; d < nsp; ++d) l->sp[k][d] = -1;
    for (int32_t pos = 0; pos < len; ++pos) {
      char c = parts[k][0][pos];
      int32_t* slot = NULL;
      if (c == letters[k][0]) {
        slot = &l->a[k];
      } else if (c == letters[k][1]) {
        slot = &l->b[k];
      } else if (c >= '0' && c <= '9' && c - '0' < nsp) {
        slot = &l->sp[k][c - '0'];
      }
      if (!slot || *slot >= 0) {
        char why[96];
        snprintf(why, sizeof why, "%s labels: '%c' is %s", names[k], c,
                 slot ? "named twice" : "not one of its letters");
        return kc__labels_error(in, text, why);
      }
      *slot = pos;
    }
  }
  return NULL;
}

/* ---- checking ---------------------------------------------------------------------- */

/* The optional window attribute `name`: nsp entries, else `fill` each. */
static kc_status* kc__conv_window(const kc__instr* in, const char* name, const char* key,
                                  int32_t nsp, int64_t fill, int64_t min, int64_t* out) {
  const int64_t* v;
  size_t n;
  KC_RETURN_IF_ERROR(kc__instr_attr_ints(in, name, true, &v, &n));
  if (n != 0 && n != (size_t)nsp) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "window %s: expected %d entries (one per spatial dimension of "
                           "dim_labels), got %zu",
                           key, nsp, n);
  }
  for (int32_t d = 0; d < nsp; ++d) {
    out[d] = n ? v[d] : fill;
    if (out[d] < min) {
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                             "window %s: entry %d: expected at least %lld, got %lld", key, d,
                             (long long)min, (long long)out[d]);
    }
  }
  return NULL;
}

static kc_status* kc__conv_count(const kc__instr* in, const char* name, int64_t* out) {
  *out = 1;
  if (!kc__instr_attr(in, name)) return NULL;
  KC_RETURN_IF_ERROR(kc__instr_attr_int(in, name, out));
  if (*out < 1) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT, "attribute %s: expected at least 1, got %lld",
                           name, (long long)*out);
  }
  return NULL;
}

static void kc__conv_strides(const kc_shape* s, const int32_t* pos, int32_t nsp, int64_t* a,
                             int64_t* b, int64_t* sp) {
  int64_t st[KC_TENSOR_MAX_NDIM];
  kc__instr_strides(s, st);
  *a = st[pos[0]];
  *b = st[pos[1]];
  for (int32_t d = 0; d < nsp; ++d) sp[d] = st[pos[2 + d]];
}

static int64_t kc__conv_elems(const kc_shape* s) {
  int64_t n = 1;
  for (int32_t d = 0; d < kc_shape_get_rank(s); ++d) n *= kc_shape_get_dims(s)[d];
  return n;
}

/* Group grp of a plan with bf01_oi01->bf01 labels as kernels/conv.h's
 * direct convolution sees it. */
static kc__conv2d kc__conv_direct2d(const kc__conv_plan* plan, const float* x, const float* w,
                                    float* y, int64_t grp) {
  const kc__window* win = &plan->g.win;
  int64_t og = plan->out_feat / plan->groups, positions = win->out[0] * win->out[1];
  return (kc__conv2d){.x = x ? x + grp * plan->rhs_in * plan->g.x_f : NULL,
                      .x_n = plan->g.x_b,
                      .x_c = plan->g.x_f,
                      .w = w ? w + grp * og * plan->rhs_o : NULL,
                      .y = y ? y + grp * og * positions : NULL,
                      .y_n = plan->out_b,
                      .y_c = plan->out_f,
                      .n = plan->batch,
                      .c = plan->rhs_in,
                      .height = win->in[0],
                      .width = win->in[1],
                      .o = og,
                      .kh = win->size[0],
                      .kw = win->size[1],
                      .oh = win->out[0],
                      .ow = win->out[1],
                      .sh = win->stride[0],
                      .dh = win->rhs_dil[0],
                      .dw = win->rhs_dil[1],
                      .pt = win->low[0],
                      .pl = win->low[1]};
}

static kc_status* kc__conv_read(const kc_program* p, const kc__instr* in, kc__conv_plan* plan) {
  const kc_shape* lhs = kc__instr_operand(p, in, 0);
  const kc_shape* rhs = kc__instr_operand(p, in, 1);
  KC_RETURN_IF_ERROR(kc__instr_expect_array(in, lhs, "operand 0 (the input)"));
  KC_RETURN_IF_ERROR(kc__instr_expect_array(in, rhs, "operand 1 (the kernel)"));
  KC_RETURN_IF_ERROR(kc__instr_expect_array(in, in->shape, "the result"));
  char t0[32], t1[32], t2[32];
  DLDataType lt = kc_shape_get_dtype(lhs), rt = kc_shape_get_dtype(rhs),
             ot = kc_shape_get_dtype(in->shape);
  plan->lhs_type = kc__conv_type(lt);
  plan->rhs_type = kc__conv_type(rt);
  plan->out_type = kc__conv_type(ot);
  if (plan->lhs_type == KC__CT_NONE || plan->rhs_type == KC__CT_NONE ||
      plan->out_type == KC__CT_NONE) {
    return kc__instr_error(in, KC_UNIMPLEMENTED,
                           "convolution of %s and %s giving %s: only f16, bf16, f32, f64 and "
                           "the integer types are supported",
                           kc__instr_dtype_text(lt, t0, sizeof t0),
                           kc__instr_dtype_text(rt, t1, sizeof t1),
                           kc__instr_dtype_text(ot, t2, sizeof t2));
  }
  int ints = (plan->lhs_type == KC__CT_INT) + (plan->rhs_type == KC__CT_INT) +
             (plan->out_type == KC__CT_INT);
  if (ints != 0 && ints != 3) {
    return kc__instr_error(in, KC_UNIMPLEMENTED,
                           "convolution of %s and %s giving %s: integer and float types do not "
                           "mix (convert the operands first)",
                           kc__instr_dtype_text(lt, t0, sizeof t0),
                           kc__instr_dtype_text(rt, t1, sizeof t1),
                           kc__instr_dtype_text(ot, t2, sizeof t2));
  }
  plan->integer = ints == 3;
  plan->lhs_dt = lt;
  plan->rhs_dt = rt;
  plan->out_dt = ot;
  plan->f64 =
      plan->lhs_type == KC__CT_F64 || plan->rhs_type == KC__CT_F64 || plan->out_type == KC__CT_F64;
  kc__conv_labels l;
  KC_RETURN_IF_ERROR(kc__labels_read(in, &l));
  int32_t nsp = plan->g.win.dims = l.nsp;
  kc__window* win = &plan->g.win;
  const kc_shape* shapes[2] = {lhs, rhs};
  static const char* const what[2] = {"operand 0 (the input)", "operand 1 (the kernel)"};
  for (int k = 0; k < 2; ++k) {
    if (kc_shape_get_rank(shapes[k]) != nsp + 2) {
      char g[256];
      kc_shape_format(shapes[k], g, sizeof g);
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                             "%s: expected rank %d (dim_labels name %d spatial dimensions), "
                             "got %s",
                             what[k], nsp + 2, nsp, g);
    }
  }
  const int64_t* ld = kc_shape_get_dims(lhs);
  const int64_t* rd = kc_shape_get_dims(rhs);
  plan->batch = ld[l.a[0]];
  plan->in_feat = ld[l.b[0]];
  plan->out_feat = rd[l.a[1]];
  plan->rhs_in = rd[l.b[1]];
  KC_RETURN_IF_ERROR(kc__conv_count(in, "feature_group_count", &plan->groups));
  KC_RETURN_IF_ERROR(kc__conv_count(in, "batch_group_count", &plan->batch_groups));
  int64_t g = plan->groups, bg = plan->batch_groups;
  if (g > 1 && bg > 1) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "feature_group_count %lld and batch_group_count %lld: expected "
                           "at most one of them above 1",
                           (long long)g, (long long)bg);
  }
  if (plan->in_feat != plan->rhs_in * g) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "input features: expected %lld (the kernel's %lld input features "
                           "times feature_group_count %lld), got %lld",
                           (long long)(plan->rhs_in * g), (long long)plan->rhs_in, (long long)g,
                           (long long)plan->in_feat);
  }
  if (plan->out_feat % g != 0 || plan->out_feat % bg != 0) {
    int64_t by = plan->out_feat % g != 0 ? g : bg;
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "kernel output features: expected a multiple of %s %lld, got %lld",
                           by == g && g > 1 ? "feature_group_count" : "batch_group_count",
                           (long long)by, (long long)plan->out_feat);
  }
  if (plan->batch % bg != 0) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "input batch: expected a multiple of batch_group_count %lld, got "
                           "%lld",
                           (long long)bg, (long long)plan->batch);
  }
  plan->out_batch = plan->batch / bg;
  int64_t high[KC__CONV_MAX_SP], size[KC__CONV_MAX_SP];
  for (int32_t d = 0; d < nsp; ++d) {
    win->in[d] = ld[l.sp[0][d]];
    win->size[d] = rd[l.sp[1][d]];
  }
  KC_RETURN_IF_ERROR(kc__conv_window(in, "window_dimensions", "size", nsp, 0, 0, size));
  if (kc__instr_attr(in, "window_dimensions")) {
    for (int32_t d = 0; d < nsp; ++d) {
      if (size[d] != win->size[d]) {
        return kc__instr_error(in, KC_INVALID_ARGUMENT,
                               "window size: entry %d: expected %lld (the kernel's spatial "
                               "dimension %d), got %lld",
                               d, (long long)win->size[d], d, (long long)size[d]);
      }
    }
  }
  KC_RETURN_IF_ERROR(kc__conv_window(in, "window_strides", "stride", nsp, 1, 1, win->stride));
  KC_RETURN_IF_ERROR(kc__conv_window(in, "padding_low", "pad", nsp, 0, INT64_MIN, win->low));
  KC_RETURN_IF_ERROR(kc__conv_window(in, "padding_high", "pad", nsp, 0, INT64_MIN, high));
  KC_RETURN_IF_ERROR(kc__conv_window(in, "base_dilations", "lhs_dilate", nsp, 1, 1, win->lhs_dil));
  KC_RETURN_IF_ERROR(
      kc__conv_window(in, "window_dilations", "rhs_dilate", nsp, 1, 1, win->rhs_dil));
  int64_t want[KC_TENSOR_MAX_NDIM];
  want[l.a[2]] = plan->out_batch;
  want[l.b[2]] = plan->out_feat;
  plan->g.positions = plan->g.taps = 1;
  for (int32_t d = 0; d < nsp; ++d) {
    if (!kc__window_positions(win->in[d], win->low[d], high[d], win->lhs_dil[d], win->size[d],
                              win->rhs_dil[d], win->stride[d], &win->out[d])) {
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                             "spatial dimension %d: the window, padding and dilations "
                             "overflow 64 bits",
                             d);
    }
    want[l.sp[2][d]] = win->out[d];
    if (__builtin_mul_overflow(plan->g.positions, win->out[d], &plan->g.positions) ||
        __builtin_mul_overflow(plan->g.taps, win->size[d], &plan->g.taps)) {
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                             "the windows or the result count past 64 bits");
    }
  }
  const kc_shape* r = in->shape;
  bool ok = kc_shape_get_rank(r) == nsp + 2 &&
            memcmp(kc_shape_get_dims(r), want, (size_t)(nsp + 2) * sizeof(int64_t)) == 0;
  if (!ok) {
    kc_shape* w = NULL;
    KC_RETURN_IF_ERROR(kc_shape_create_array(ot, want, nsp + 2, &w));
    char ws[256], gs[256];
    kc_shape_format(w, ws, sizeof ws);
    kc_shape_format(r, gs, sizeof gs);
    kc_shape_destroy(w);
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "expected a result of %s (dim_labels %s, the window and the "
                           "group counts), got %s",
                           ws, KC__Q(kc__instr_attr(in, "dim_labels")->v.str), gs);
  }
  int32_t pos[KC_TENSOR_MAX_NDIM];
  for (int k = 0; k < 3; ++k) {
    pos[0] = l.a[k];
    pos[1] = l.b[k];
    for (int32_t d = 0; d < nsp; ++d) pos[2 + d] = l.sp[k][d];
    if (k == 0) kc__conv_strides(lhs, pos, nsp, &plan->g.x_b, &plan->g.x_f, plan->g.x_s);
    if (k == 1) kc__conv_strides(rhs, pos, nsp, &plan->rhs_o, &plan->rhs_i, plan->rhs_s);
    if (k == 2) kc__conv_strides(r, pos, nsp, &plan->out_b, &plan->out_f, plan->out_s);
  }
  plan->g.features = plan->rhs_in;
  kc__conv_geom_finish(&plan->g);
  plan->lhs_count = kc__conv_elems(lhs);
  plan->rhs_count = kc__conv_elems(rhs);
  plan->out_count = kc__conv_elems(r);
  /* The GEMM path: f32 without groups. */
  plan->gemm = !plan->f64 && !plan->integer && g == 1 && bg == 1;
  /* Kernel [spatial..., i, o] and result [b, spatial..., o]. */
  bool rhs_packed = l.a[1] == nsp + 1 && l.b[1] == nsp;
  bool out_packed = l.a[2] == 0 && l.b[2] == nsp + 1;
  bool lhs_bxf = l.a[0] == 0 && l.b[0] == nsp + 1;
  for (int32_t d = 0; d < nsp; ++d) {
    rhs_packed = rhs_packed && l.sp[1][d] == d;
    out_packed = out_packed && l.sp[2][d] == d + 1;
    lhs_bxf = lhs_bxf && l.sp[0][d] == d + 1;
  }
  plan->rhs_packed = rhs_packed;
  plan->out_packed = out_packed;
  bool unit = plan->g.taps == 1;
  for (int32_t d = 0; d < nsp; ++d) {
    unit = unit && win->stride[d] == 1 && win->low[d] == 0 && high[d] == 0 && win->lhs_dil[d] == 1;
  }
  plan->lhs_direct = unit && lhs_bxf;
  /* bf01_oi01->bf01 (PyTorch's layout), f32, a width stride of 1, no
   * input dilation: the direct NCHW convolution, groups or not. */
  bool nchw = nsp == 2 && !plan->f64 && !plan->integer && bg == 1 && win->stride[1] == 1 &&
              win->lhs_dil[0] == 1 && win->lhs_dil[1] == 1;
  for (int k = 0; nchw && k < 3; ++k) {
    nchw = l.a[k] == 0 && l.b[k] == 1 && l.sp[k][0] == 2 && l.sp[k][1] == 3;
  }
  if (nchw) {
    kc__conv2d d = kc__conv_direct2d(plan, NULL, NULL, NULL, 0);
    plan->direct2d = kc__conv2d_direct_runs(&d);
  }
  return NULL;
}

static kc_status* kc__conv_verify(const kc_program* p, const kc__instr* in) {
  kc__conv_plan plan;
  memset(&plan, 0, sizeof plan);
  return kc__conv_read(p, in, &plan);
}

static kc_status* kc__conv_prepare(const kc_program* p, const kc__instr* in,
                                   const kc__prepare_ctx* ctx, const void** out) {
  kc__conv_plan* plan = kc__arena_alloc(ctx->arena, sizeof *plan);
  if (!plan) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  memset(plan, 0, sizeof *plan);
  KC_RETURN_IF_ERROR(kc__conv_read(p, in, plan));
  if (plan->gemm) {
    /* KCALL_DOT_KERNEL picks the GEMM's kernel here too, as for dot. */
    const char* want = getenv("KCALL_DOT_KERNEL");
    plan->kernel = kc__gemm_f32_kernel_best();
    if (want && *want) {
      plan->kernel = kc__gemm_f32_kernel_lookup(want);
      if (!plan->kernel) {
        return kc__instr_error(in, KC_INVALID_ARGUMENT,
                               "KCALL_DOT_KERNEL: expected avx512, avx2 or plain, got %s",
                               KC__QS(want));
      }
      if (!kc__gemm_f32_kernel_supported(plan->kernel)) {
        return kc__instr_error(in, KC_FAILED_PRECONDITION,
                               "KCALL_DOT_KERNEL: this CPU cannot run the %s kernel", want);
      }
    }
  }
  if (!plan->gemm) {
    int64_t total = 0;
    for (int32_t d = 0; d < plan->g.win.dims; ++d) {
      plan->tap_base[d] = total;
      total += plan->g.win.out[d] * plan->g.win.size[d];
    }
    plan->taps = total <= ((int64_t)1 << 22)
                     ? kc__arena_alloc(ctx->arena, (size_t)total * sizeof(int64_t) + 1)
                     : NULL;
    for (int32_t d = 0; plan->taps && d < plan->g.win.dims; ++d) {
      kc__window_taps(&plan->g.win, d, plan->g.x_s[d], plan->taps + plan->tap_base[d]);
    }
  }
  *out = plan;
  return NULL;
}

/* ---- element types ------------------------------------------------------------------- */

/* `n` elements of type `type` as float (or double, `f64`) into dst. */
static void kc__conv_load(int type, const void* src, int64_t n, bool f64, void* dst) {
  for (int64_t i = 0; i < n; ++i) {
    double v;
    switch (type) {
      case KC__CT_F16: v = kc__f16_to_f32(((const uint16_t*)src)[i]); break;
      case KC__CT_BF16: v = kc__bf16_to_f32(((const uint16_t*)src)[i]); break;
      case KC__CT_F32: v = ((const float*)src)[i]; break;
      default: v = ((const double*)src)[i]; break;
    }
    if (f64) {
      ((double*)dst)[i] = v;
    } else {
      ((float*)dst)[i] = (float)v;
    }
  }
}

static void kc__conv_store(int type, const void* src, int64_t n, bool f64, void* dst) {
  for (int64_t i = 0; i < n; ++i) {
    double v = f64 ? ((const double*)src)[i] : (double)((const float*)src)[i];
    switch (type) {
      case KC__CT_F16: ((uint16_t*)dst)[i] = kc__f64_to_f16(v); break;
      case KC__CT_BF16: ((uint16_t*)dst)[i] = kc__f64_to_bf16(v); break;
      case KC__CT_F32: ((float*)dst)[i] = (float)v; break;
      default: ((double*)dst)[i] = v; break;
    }
  }
}

/* `n` integers of type `t` into dst, sign- or zero-extended to 64 bits. */
static void kc__conv_load_int(DLDataType t, const void* src, int64_t n, uint64_t* dst) {
  bool s = t.code == kDLInt;
  for (int64_t i = 0; i < n; ++i) {
    switch (t.bits) {
      case 8: dst[i] = s ? (uint64_t)((const int8_t*)src)[i] : ((const uint8_t*)src)[i]; break;
      case 16: dst[i] = s ? (uint64_t)((const int16_t*)src)[i] : ((const uint16_t*)src)[i]; break;
      case 32: dst[i] = s ? (uint64_t)((const int32_t*)src)[i] : ((const uint32_t*)src)[i]; break;
      default: dst[i] = ((const uint64_t*)src)[i]; break;
    }
  }
}

/* `n` 64-bit sums into integers of type `t`: their low bits. */
static void kc__conv_store_int(DLDataType t, const uint64_t* src, int64_t n, void* dst) {
  for (int64_t i = 0; i < n; ++i) {
    switch (t.bits) {
      case 8: ((uint8_t*)dst)[i] = (uint8_t)src[i]; break;
      case 16: ((uint16_t*)dst)[i] = (uint16_t)src[i]; break;
      case 32: ((uint32_t*)dst)[i] = (uint32_t)src[i]; break;
      default: ((uint64_t*)dst)[i] = src[i]; break;
    }
  }
}

/* ---- the direct loop ------------------------------------------------------------------ */

typedef struct kc__conv_run {
  const kc__conv_plan* plan;
  const void* lhs;
  const void* rhs;
  void* out;
  void* scratch; /* the direct loop's sums: out_feat per participant */
} kc__conv_run;

/* Positions [begin, end) of the result (a batch element and a spatial
 * position each, all output features at once): per window tap inside the
 * input, every output feature takes its group's input features, so the
 * tap's offsets are found once per position rather than once per output
 * element. */
#define KC__CONV_DIRECT(T)                                                                       \
  static void kc__conv_direct_##T(void* vctx, int64_t begin, int64_t end, int32_t worker) {      \
    const kc__conv_run* run = vctx;                                                              \
    const kc__conv_plan* plan = run->plan;                                                       \
    const kc__conv_geom* geo = &plan->g;                                                         \
    const kc__window* win = &geo->win;                                                           \
    const T* x = run->lhs;                                                                       \
    const T* w = run->rhs;                                                                       \
    T* y = run->out;                                                                             \
    int32_t nsp = win->dims;                                                                     \
    int64_t ci = plan->rhs_in, nf = plan->out_feat;                                              \
    int64_t ngroups = plan->groups > plan->batch_groups ? plan->groups : plan->batch_groups;     \
    int64_t per = nf / ngroups;                                                                  \
    bool depthwise = plan->groups == nf && ci == 1 && geo->x_f == 1 && plan->rhs_o == 1;         \
    T* acc = (T*)run->scratch + (size_t)worker * (size_t)nf;                                     \
    for (int64_t pos_i = begin; pos_i < end; ++pos_i) {                                          \
      int64_t ob = pos_i / geo->positions, rest = pos_i % geo->positions;                        \
      int64_t osp[KC__CONV_MAX_SP], yoff = ob * plan->out_b;                                     \
      for (int32_t d = nsp - 1; d >= 0; --d) {                                                   \
        osp[d] = rest % win->out[d];                                                             \
        rest /= win->out[d];                                                                     \
        yoff += osp[d] * plan->out_s[d];                                                         \
      }                                                                                          \
      for (int64_t f = 0; f < nf; ++f) acc[f] = 0;                                               \
      int64_t wi[KC__CONV_MAX_SP];                                                               \
      for (int32_t d = 0; d < nsp; ++d) wi[d] = 0;                                               \
      for (int64_t k = 0; k < geo->taps; ++k) {                                                  \
        int64_t xoff = 0, woff = 0;                                                              \
        bool inside = true;                                                                      \
        for (int32_t d = 0; d < nsp && inside; ++d) {                                            \
          int64_t at;                                                                            \
          if (plan->taps) {                                                                      \
            at = plan->taps[plan->tap_base[d] + osp[d] * win->size[d] + wi[d]];                  \
          } else {                                                                               \
            int64_t i = kc__window_index(win, d, osp[d], wi[d]);                                 \
            at = i < 0 ? -1 : i * geo->x_s[d];                                                   \
          }                                                                                      \
          inside = at >= 0;                                                                      \
          xoff += at;                                                                            \
          woff += wi[d] * plan->rhs_s[d];                                                        \
        }                                                                                        \
        if (inside && depthwise) {                                                               \
          /* One input feature per output feature, both contiguous. */                           \
          const T* restrict xp = x + ob * geo->x_b + xoff;                                       \
          const T* restrict wp = w + woff;                                                       \
          T* restrict a = acc;                                                                   \
          for (int64_t f = 0; f < nf; ++f) a[f] += xp[f] * wp[f];                                \
          inside = false;                                                                        \
        }                                                                                        \
        for (int64_t g = 0; inside && g < ngroups; ++g) {                                        \
          /* Feature groups read their slice of the input features; batch                        \
           * groups their slice of the batch. */                                                 \
          int64_t lb = plan->batch_groups > 1 ? g * plan->out_batch + ob : ob;                   \
          int64_t fb = plan->groups > 1 ? g * ci : 0;                                            \
          const T* xp = x + lb * geo->x_b + fb * geo->x_f + xoff;                                \
          for (int64_t fo = g * per; fo < (g + 1) * per; ++fo) {                                 \
            const T* wp = w + woff + fo * plan->rhs_o;                                           \
            T sum = 0;                                                                           \
            for (int64_t ch = 0; ch < ci; ++ch) sum += xp[ch * geo->x_f] * wp[ch * plan->rhs_i]; \
            acc[fo] += sum;                                                                      \
          }                                                                                      \
        }                                                                                        \
        for (int32_t d = nsp - 1; d >= 0; --d) {                                                 \
          if (++wi[d] < win->size[d]) break;                                                     \
          wi[d] = 0;                                                                             \
        }                                                                                        \
      }                                                                                          \
      for (int64_t f = 0; f < nf; ++f) y[yoff + f * plan->out_f] = acc[f];                       \
    }                                                                                            \
  }
KC__CONV_DIRECT(float)
KC__CONV_DIRECT(double)
KC__CONV_DIRECT(uint64_t)
#undef KC__CONV_DIRECT

/* ---- im2col + GEMM ----------------------------------------------------------------------- */

/* The im2col matrix is built in chunks of rows of at most this many
 * floats (16 MiB), each multiplied before the next is built. */
#define KC__CONV_CHUNK_FLOATS ((int64_t)4 << 20)

static kc_status* kc__conv_gemm(const kc__conv_plan* plan, const float* x, const float* w,
                                float* y, kc_thread_pool* pool) {
  int64_t k = plan->g.taps * plan->rhs_in;
  int64_t m = plan->out_batch * plan->g.positions;
  int64_t n = plan->out_feat;
  float* wpack = NULL;
  float* ypack = NULL;
  float* cols = NULL;
  kc_status* st = NULL;
  if (!plan->rhs_packed) {
    wpack = kc__malloc((size_t)(k * n) * sizeof *wpack + 1);
    if (!wpack) goto oom;
    int64_t wi[KC__CONV_MAX_SP] = {0};
    for (int64_t s = 0; s < plan->g.taps; ++s) {
      int64_t off = 0;
      for (int32_t d = 0; d < plan->g.win.dims; ++d) off += wi[d] * plan->rhs_s[d];
      for (int64_t c = 0; c < plan->rhs_in; ++c) {
        float* row = wpack + (s * plan->rhs_in + c) * n;
        for (int64_t o = 0; o < n; ++o) row[o] = w[off + c * plan->rhs_i + o * plan->rhs_o];
      }
      for (int32_t d = plan->g.win.dims - 1; d >= 0; --d) {
        if (++wi[d] < plan->g.win.size[d]) break;
        wi[d] = 0;
      }
    }
    w = wpack;
  }
  float* c = y;
  if (!plan->out_packed) {
    ypack = kc__malloc((size_t)(m * n) * sizeof *ypack + 1);
    if (!ypack) goto oom;
    c = ypack;
  }
  if (plan->lhs_direct) {
    st = kc__gemm_f32(plan->kernel, x, w, c, m, n, k, pool);
  } else {
    int64_t rows = k > 0 ? KC__CONV_CHUNK_FLOATS / k : m;
    if (rows < 1) rows = 1;
    if (rows > m) rows = m;
    cols = kc__malloc((size_t)(rows * k) * sizeof *cols + 1);
    if (!cols) goto oom;
    for (int64_t r0 = 0; r0 < m && !st; r0 += rows) {
      int64_t count = m - r0 < rows ? m - r0 : rows;
      kc__conv_unfold_rows(&plan->g, sizeof(float), x, r0, count, cols, pool);
      st = kc__gemm_f32(plan->kernel, cols, w, c + r0 * n, count, n, k, pool);
    }
  }
  if (!st && ypack) {
    /* [b, spatial, o] into the result's order. */
    kc__box box;
    memset(&box, 0, sizeof box);
    box.rank = plan->g.win.dims + 2;
    box.dims[0] = plan->out_batch;
    box.src_stride[0] = plan->g.positions * n;
    box.dst_stride[0] = plan->out_b;
    int64_t s = n;
    for (int32_t d = plan->g.win.dims - 1; d >= 0; --d) {
      box.dims[1 + d] = plan->g.win.out[d];
      box.src_stride[1 + d] = s;
      box.dst_stride[1 + d] = plan->out_s[d];
      s *= plan->g.win.out[d];
    }
    box.dims[plan->g.win.dims + 1] = n;
    box.src_stride[plan->g.win.dims + 1] = 1;
    box.dst_stride[plan->g.win.dims + 1] = plan->out_f;
    kc__box_copy(&box, (const char*)ypack, (char*)y, sizeof(float));
  }
  kc__free(wpack);
  kc__free(ypack);
  kc__free(cols);
  return st;
oom:
  kc__free(wpack);
  kc__free(ypack);
  kc__free(cols);
  return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory in a convolution");
}

static kc_status* kc__conv_kernel(const kc__instr_kernel_ctx* ctx, void* out,
                                  const void* const* ins) {
  const kc__conv_plan* plan = ctx->data;
  int ct = plan->f64 ? KC__CT_F64 : KC__CT_F32;
  size_t es = plan->f64 || plan->integer ? 8 : sizeof(float);
  const void* x = ins[0];
  const void* w = ins[1];
  void* y = out;
  void* xs = NULL;
  void* ws = NULL;
  void* ys = NULL;
  if (plan->integer) {
    /* In 64 bits: operands widened, unless they are 64-bit already. */
    if (plan->lhs_dt.bits != 64) {
      xs = kc__malloc((size_t)plan->lhs_count * es + 1);
      if (xs) kc__conv_load_int(plan->lhs_dt, x, plan->lhs_count, xs);
      x = xs;
    }
    if (plan->rhs_dt.bits != 64) {
      ws = kc__malloc((size_t)plan->rhs_count * es + 1);
      if (ws) kc__conv_load_int(plan->rhs_dt, w, plan->rhs_count, ws);
      w = ws;
    }
    if (plan->out_dt.bits != 64) {
      ys = kc__malloc((size_t)plan->out_count * es + 1);
      y = ys;
    }
  } else if (plan->lhs_type != ct) {
    xs = kc__malloc((size_t)plan->lhs_count * es + 1);
    if (xs) kc__conv_load(plan->lhs_type, x, plan->lhs_count, plan->f64, xs);
    x = xs;
  }
  if (!plan->integer && plan->rhs_type != ct) {
    ws = kc__malloc((size_t)plan->rhs_count * es + 1);
    if (ws) kc__conv_load(plan->rhs_type, w, plan->rhs_count, plan->f64, ws);
    w = ws;
  }
  if (!plan->integer && plan->out_type != ct) {
    ys = kc__malloc((size_t)plan->out_count * es + 1);
    y = ys;
  }
  kc_status* st = NULL;
  if (!x || !w || !y) {
    st = kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory in a convolution");
  } else if (plan->out_count == 0) {
    /* nothing to compute */
  } else if (plan->direct2d) {
    int32_t threads = ctx->pool ? kc_thread_pool_get_size(ctx->pool) : 1;
    kc__conv2d d = kc__conv_direct2d(plan, NULL, NULL, NULL, 0);
    void* scratch = kc__malloc(kc__conv2d_direct_scratch(&d, threads) + 8);
    if (!scratch) {
      st = kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory in a convolution");
    }
    for (int64_t grp = 0; scratch && grp < plan->groups; ++grp) {
      d = kc__conv_direct2d(plan, x, w, y, grp);
      kc__conv2d_direct_f32(&d, scratch, ctx->pool);
    }
    kc__free(scratch);
  } else if (plan->gemm) {
    st = kc__conv_gemm(plan, x, w, y, ctx->pool);
  } else {
    /* One row of sums per participant of the pool's loop. */
    int32_t threads = ctx->pool ? kc_thread_pool_get_size(ctx->pool) : 1;
    void* scratch = kc__malloc((size_t)threads * (size_t)plan->out_feat * es + 1);
    if (!scratch) {
      st = kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory in a convolution");
    } else {
      kc__conv_run run = {.plan = plan, .lhs = x, .rhs = w, .out = y, .scratch = scratch};
      int64_t cost = plan->g.taps * plan->rhs_in * plan->out_feat + 1;
      int64_t positions = plan->out_batch * plan->g.positions;
      kc_range_worker_fn fn = plan->integer ? kc__conv_direct_uint64_t
                              : plan->f64   ? kc__conv_direct_double
                                            : kc__conv_direct_float;
      if (ctx->pool) {
        kc_thread_pool_parallel_for_with_worker_id(ctx->pool, positions, cost, fn, &run);
      } else {
        fn(&run, 0, positions, 0);
      }
      kc__free(scratch);
    }
  }
  if (!st && ys && plan->integer) kc__conv_store_int(plan->out_dt, ys, plan->out_count, out);
  else if (!st && ys) kc__conv_store(plan->out_type, ys, plan->out_count, plan->f64, out);
  kc__free(xs);
  kc__free(ws);
  kc__free(ys);
  return st;
}

static const char* const kc__conv_attrs[] = {
    "window_dimensions", "window_strides",      "padding_low",       "padding_high",
    "base_dilations",    "window_dilations",    "dim_labels",        "feature_group_count",
    "batch_group_count", NULL};

const kc__instr_def kc__instr_conv[] = {
    {.op = KC_OP_CONVOLUTION, .name = "convolution", .min_operands = 2, .max_operands = 2,
     .num_computations = 0, .attrs = kc__conv_attrs, .computation_attrs = NULL,
     .verify = kc__conv_verify, .prepare = kc__conv_prepare, .kernel = kc__conv_kernel},
};
const size_t kc__instr_conv_count = KC__ARRAY_SIZE(kc__instr_conv);
