/* convolution and select-and-scatter (src/program/instr/instr_conv.c,
 * instr_select_scatter.c) against references computed here: strides,
 * padding (negative too), input and kernel dilation, feature groups
 * (depthwise), batch groups, dim_labels in several orders, 1-D, 2-D and
 * 3-D, f32, f64 and bf16 operands; select-and-scatter over overlapping
 * windows with ties and padding, by the native path and by called
 * computations; and the refusals of malformed attributes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kcall/kcall.h"
#include "kt_hlo.h"

#define KT_MAX_SP 3

typedef struct kt_conv {
  int nsp;
  int64_t n, c, o;            /* input batch and features, kernel output features */
  int64_t groups, bgroups;    /* feature_group_count, batch_group_count */
  int64_t in[KT_MAX_SP], k[KT_MAX_SP];
  int64_t stride[KT_MAX_SP], lo[KT_MAX_SP], hi[KT_MAX_SP];
  int64_t ldil[KT_MAX_SP], rdil[KT_MAX_SP];
  const char* labels; /* e.g. "b01f_01io->b01f" */
  const char* type;   /* the operands' HLO type: f32, f64 or bf16 */
  const char* out_type;
} kt_conv;

/* Where each position of a labels part takes its dimension from, in the
 * canonical order (b/o = 0, f/i = 1, spatial d = 2 + d). */
static void kt_label_map(const char* part, size_t len, int* map) {
  for (size_t i = 0; i < len; ++i) {
    char ch = part[i];
    map[i] = (ch == 'b' || ch == 'o') ? 0 : (ch == 'f' || ch == 'i') ? 1 : 2 + (ch - '0');
  }
}

/* The three label parts of `labels`. */
static void kt_label_parts(const char* labels, const char** part, size_t* len) {
  const char* us = strchr(labels, '_');
  const char* arrow = strstr(labels, "->");
  part[0] = labels;
  len[0] = (size_t)(us - labels);
  part[1] = us + 1;
  len[1] = (size_t)(arrow - us - 1);
  part[2] = arrow + 2;
  len[2] = strlen(arrow + 2);
}

static int64_t kt_count(const int64_t* dims, int rank) {
  int64_t n = 1;
  for (int i = 0; i < rank; ++i) n *= dims[i];
  return n;
}

/* The row-major offset, in the labelled order, of canonical index `idx`. */
static int64_t kt_offset(const int* map, const int64_t* cdims, const int64_t* idx, int rank) {
  int64_t off = 0;
  for (int p = 0; p < rank; ++p) off = off * cdims[map[p]] + idx[map[p]];
  return off;
}

static void kt_next_index(int64_t* idx, const int64_t* dims, int rank) {
  for (int d = rank - 1; d >= 0; --d) {
    if (++idx[d] < dims[d]) return;
    idx[d] = 0;
  }
}

static void kt_shape_text(const char* type, const int* map, const int64_t* cdims, int rank,
                          char* buf, size_t cap) {
  size_t n = (size_t)snprintf(buf, cap, "%s[", type);
  for (int p = 0; p < rank; ++p) {
    n += (size_t)snprintf(buf + n, cap - n, "%s%lld", p ? "," : "", (long long)cdims[map[p]]);
  }
  snprintf(buf + n, cap - n, "]");
}

static void kt_x_list(const int64_t* a, const int64_t* b, int n, char* buf, size_t cap) {
  size_t k = 0;
  buf[0] = 0;
  for (int d = 0; d < n; ++d) {
    if (b) {
      k += (size_t)snprintf(buf + k, cap - k, "%s%lld_%lld", d ? "x" : "", (long long)a[d],
                            (long long)b[d]);
    } else {
      k += (size_t)snprintf(buf + k, cap - k, "%s%lld", d ? "x" : "", (long long)a[d]);
    }
  }
}

static uint16_t kt_to_bf16(float v) {
  uint32_t bits;
  memcpy(&bits, &v, sizeof bits);
  return (uint16_t)(bits >> 16); /* exact for the values used (few significant bits) */
}

static double kt_from_bf16(uint16_t h) {
  uint32_t bits = (uint32_t)h << 16;
  float v;
  memcpy(&v, &bits, sizeof v);
  return v;
}

/* Builds the convolution of `c`, runs it on values with few significant
 * bits (exact in bf16) and checks every element against the sum computed
 * here in double, in the canonical order. */
static void kt_conv_check(const kt_conv* c) {
  int nsp = c->nsp, rank = nsp + 2;
  const char* part[3];
  size_t len[3];
  kt_label_parts(c->labels, part, len);
  int map[3][KT_MAX_SP + 2];
  for (int k = 0; k < 3; ++k) {
    KC_CHECK_INT((int64_t)len[k], rank);
    kt_label_map(part[k], len[k], map[k]);
  }
  int64_t xd[KT_MAX_SP + 2] = {c->n, c->c}, wd[KT_MAX_SP + 2] = {c->o, c->c / c->groups},
          yd[KT_MAX_SP + 2] = {c->n / c->bgroups, c->o};
  for (int d = 0; d < nsp; ++d) {
    xd[2 + d] = c->in[d];
    wd[2 + d] = c->k[d];
    int64_t padded = (c->in[d] - 1) * c->ldil[d] + 1 + c->lo[d] + c->hi[d];
    int64_t extent = (c->k[d] - 1) * c->rdil[d] + 1;
    yd[2 + d] = padded < extent ? 0 : (padded - extent) / c->stride[d] + 1;
  }
  const char* type = c->type ? c->type : "f32";
  const char* out_type = c->out_type ? c->out_type : type;
  char xs[128], ws[128], ys[128], window[512] = "", sz[96], st[96], pd[96], ld[96], rd[96];
  kt_shape_text(type, map[0], xd, rank, xs, sizeof xs);
  kt_shape_text(type, map[1], wd, rank, ws, sizeof ws);
  kt_shape_text(out_type, map[2], yd, rank, ys, sizeof ys);
  if (nsp > 0) {
    kt_x_list(c->k, NULL, nsp, sz, sizeof sz);
    kt_x_list(c->stride, NULL, nsp, st, sizeof st);
    kt_x_list(c->lo, c->hi, nsp, pd, sizeof pd);
    kt_x_list(c->ldil, NULL, nsp, ld, sizeof ld);
    kt_x_list(c->rdil, NULL, nsp, rd, sizeof rd);
    snprintf(window, sizeof window,
             "window={size=%s stride=%s pad=%s lhs_dilate=%s rhs_dilate=%s}, ", sz, st, pd, ld,
             rd);
  }
  char text[2048];
  snprintf(text, sizeof text,
           "HloModule m\nENTRY e {\n x = %s parameter(0)\n w = %s parameter(1)\n"
           " ROOT y = %s convolution(x, w), %sdim_labels=%s, feature_group_count=%lld, "
           "batch_group_count=%lld\n}\n",
           xs, ws, ys, window, c->labels, (long long)c->groups, (long long)c->bgroups);
  int64_t nx = kt_count(xd, rank), nw = kt_count(wd, rank), ny = kt_count(yd, rank);
  double* cx = malloc((size_t)nx * sizeof *cx + 8);
  double* cw = malloc((size_t)nw * sizeof *cw + 8);
  double* want = calloc((size_t)ny + 1, sizeof *want);
  double* mag = calloc((size_t)ny + 1, sizeof *mag);
  size_t es = strcmp(type, "f64") == 0 ? 8 : strcmp(type, "bf16") == 0 ? 2 : 4;
  char* bx = malloc((size_t)nx * es + 8);
  char* bw = malloc((size_t)nw * es + 8);
  KC_CHECK(cx && cw && want && mag && bx && bw);
  /* Values k/8 for k in -12..12: exact in every type here. */
  for (int64_t i = 0; i < nx; ++i) cx[i] = (double)((i * 7 + 3) % 25 - 12) / 8.0;
  for (int64_t i = 0; i < nw; ++i) cw[i] = (double)((i * 11 + 5) % 25 - 12) / 8.0;
  /* Canonical to labelled order, in the operand type. */
  int64_t idx[KT_MAX_SP + 2];
  for (int k = 0; k < 2; ++k) {
    const int64_t* dims = k ? wd : xd;
    const double* src = k ? cw : cx;
    char* dst = k ? bw : bx;
    memset(idx, 0, sizeof idx);
    for (int64_t i = 0, n = k ? nw : nx; i < n; ++i) {
      int64_t off = kt_offset(map[k], dims, idx, rank);
      if (es == 8) {
        ((double*)(void*)dst)[off] = src[i];
      } else if (es == 4) {
        ((float*)(void*)dst)[off] = (float)src[i];
      } else {
        ((uint16_t*)(void*)dst)[off] = kt_to_bf16((float)src[i]);
      }
      kt_next_index(idx, dims, rank);
    }
  }
  /* The reference, from XLA's definition. */
  int64_t ci = c->c / c->groups, per_g = c->o / c->groups, per_bg = c->o / c->bgroups;
  int64_t ywin = 1;
  for (int d = 0; d < nsp; ++d) ywin *= c->k[d];
  memset(idx, 0, sizeof idx);
  for (int64_t i = 0; i < ny; ++i) {
    int64_t ob = idx[0], of = idx[1];
    int64_t lb = (of / per_bg) * yd[0] + ob;
    double sum = 0, m = 0;
    int64_t wi[KT_MAX_SP] = {0};
    for (int64_t q = 0; q < ywin; ++q) {
      bool inside = true;
      int64_t xi[KT_MAX_SP + 2], wj[KT_MAX_SP + 2];
      for (int d = 0; d < nsp; ++d) {
        int64_t pos = idx[2 + d] * c->stride[d] + wi[d] * c->rdil[d] - c->lo[d];
        if (pos < 0 || pos % c->ldil[d] != 0 || pos / c->ldil[d] >= c->in[d]) inside = false;
        xi[2 + d] = pos / c->ldil[d];
        wj[2 + d] = wi[d];
      }
      for (int64_t ch = 0; ch < ci && inside; ++ch) {
        xi[0] = lb;
        xi[1] = (of / per_g) * ci + ch;
        wj[0] = of;
        wj[1] = ch;
        int64_t xo = 0, wo = 0;
        for (int d = 0; d < rank; ++d) {
          xo = xo * xd[d] + xi[d];
          wo = wo * wd[d] + wj[d];
        }
        sum += cx[xo] * cw[wo];
        m += fabs(cx[xo] * cw[wo]);
      }
      for (int d = nsp - 1; d >= 0; --d) {
        if (++wi[d] < c->k[d]) break;
        wi[d] = 0;
      }
    }
    int64_t off = kt_offset(map[2], yd, idx, rank);
    want[off] = sum;
    mag[off] = m;
    kt_next_index(idx, yd, rank);
  }
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_parse(kc_sv(text), &p));
  kc_executable* exe = NULL;
  KC_CHECK_OK(kc_program_compile(p, NULL, &exe));
  DLTensor tx, tw;
  memset(&tx, 0, sizeof tx);
  memset(&tw, 0, sizeof tw);
  int64_t xsh[KT_MAX_SP + 2], wsh[KT_MAX_SP + 2];
  for (int q = 0; q < rank; ++q) {
    xsh[q] = xd[map[0][q]];
    wsh[q] = wd[map[1][q]];
  }
  DLDataType dt = es == 8   ? (DLDataType){kDLFloat, 64, 1}
                  : es == 4 ? (DLDataType){kDLFloat, 32, 1}
                            : (DLDataType){kDLBfloat, 16, 1};
  tx.device.device_type = tw.device.device_type = kDLCPU;
  tx.dtype = tw.dtype = dt;
  tx.ndim = tw.ndim = rank;
  tx.shape = xsh;
  tw.shape = wsh;
  tx.data = bx;
  tw.data = bw;
  const DLTensor* ins[2] = {&tx, &tw};
  kc_tensor* out = NULL;
  KC_CHECK_OK(kc_executable_execute(exe, ins, 2, NULL, &out));
  const void* got = kc_tensor_get_dltensor(out)->data;
  int failures = 0;
  for (int64_t i = 0; i < ny && failures < 5; ++i) {
    double have, tol;
    if (strcmp(out_type, "f64") == 0) {
      have = ((const double*)got)[i];
      tol = 1e-12 * (mag[i] + 1);
    } else if (strcmp(out_type, "f32") == 0) {
      have = ((const float*)got)[i];
      tol = 1e-5 * (mag[i] + 1);
    } else {
      have = kt_from_bf16(((const uint16_t*)got)[i]);
      tol = fabs(want[i]) / 128 + 1e-5 * (mag[i] + 1);
    }
    if (!(fabs(have - want[i]) <= tol)) {
      fprintf(stderr, "%s: element %lld: expected %.9g, got %.9g\n", c->labels, (long long)i,
              want[i], have);
      ++failures;
    }
  }
  KC_CHECK(failures == 0);
  kc_object_release(KC_OBJECT(out));
  kc_executable_destroy(exe);
  kc_program_destroy(p);
  free(cx);
  free(cw);
  free(want);
  free(mag);
  free(bx);
  free(bw);
}

#define KT_ONES {1, 1, 1}
#define KT_ZEROS {0, 0, 0}

KC_TEST(hlo_conv_nhwc_same_padding) {
  kt_conv c = {2, 2, 3, 4, 1, 1, {5, 6}, {3, 3}, KT_ONES, {1, 1}, {1, 1}, KT_ONES, KT_ONES,
               "b01f_01io->b01f", NULL, NULL};
  kt_conv_check(&c);
  c.type = "f64";
  kt_conv_check(&c);
}

KC_TEST(hlo_conv_nchw_strided_asymmetric_padding) {
  kt_conv c = {2, 2, 3, 5, 1, 1, {7, 6}, {3, 2}, {2, 3}, {0, 2}, {1, 0}, KT_ONES, KT_ONES,
               "bf01_oi01->bf01", NULL, NULL};
  kt_conv_check(&c);
  c.type = "f64";
  kt_conv_check(&c);
}

KC_TEST(hlo_conv_nchw_direct) {
  /* PyTorch's layout in f32 with a width stride of 1: kernels/conv.h's
   * direct convolution, with a height stride, padding on every side and
   * a width dilation; with groups; in bf16; and, wider than its 16-column
   * tile, with more features than its 6-feature one. */
  kt_conv c = {2, 2, 3, 5, 1, 1, {9, 20}, {3, 3}, {2, 1}, {1, 0}, {1, 2}, KT_ONES, {1, 2},
               "bf01_oi01->bf01", NULL, NULL};
  kt_conv_check(&c);
  c.type = "bf16";
  kt_conv_check(&c);
  kt_conv g = {2, 2, 6, 4, 2, 1, {6, 18}, {3, 3}, KT_ONES, {1, 1}, {1, 1}, KT_ONES, {2, 1},
               "bf01_oi01->bf01", NULL, NULL};
  kt_conv_check(&g);
  kt_conv w = {2, 3, 4, 13, 1, 1, {11, 37}, {3, 3}, KT_ONES, {1, 1}, {1, 1}, KT_ONES, KT_ONES,
               "bf01_oi01->bf01", NULL, NULL};
  kt_conv_check(&w);
}

KC_TEST(hlo_conv_lhs_and_rhs_dilation) {
  /* lhs_dilate: the convolution of a transposed convolution's gradient. */
  kt_conv c = {2, 1, 2, 3, 1, 1, {4, 5}, {3, 3}, KT_ONES, {2, 1}, {2, 2}, {2, 2}, {1, 2},
               "b01f_01io->b01f", NULL, NULL};
  kt_conv_check(&c);
  c.type = "f64";
  kt_conv_check(&c);
  kt_conv d = {2, 2, 3, 2, 1, 1, {6, 7}, {2, 3}, {2, 1}, {1, 0}, {0, 1}, {3, 1}, {2, 3},
               "fb01_io01->01bf", NULL, NULL};
  kt_conv_check(&d);
}

KC_TEST(hlo_conv_negative_padding) {
  kt_conv c = {2, 1, 2, 2, 1, 1, {6, 6}, {2, 2}, KT_ONES, {-1, 0}, {0, -2}, KT_ONES, KT_ONES,
               "b01f_01io->b01f", NULL, NULL};
  kt_conv_check(&c);
}

KC_TEST(hlo_conv_depthwise_and_feature_groups) {
  /* Depthwise: one input feature per group, two outputs each. */
  kt_conv c = {2, 2, 4, 8, 4, 1, {5, 5}, {3, 3}, KT_ONES, {1, 1}, {1, 1}, KT_ONES, KT_ONES,
               "b01f_01io->b01f", NULL, NULL};
  kt_conv_check(&c);
  /* Multiplier 1 in NHWC/HWIO (features contiguous): its own loop. */
  kt_conv m = {2, 2, 6, 6, 6, 1, {7, 6}, {3, 3}, {2, 1}, {1, 0}, {1, 2}, KT_ONES, {1, 2},
               "b01f_01io->b01f", NULL, NULL};
  kt_conv_check(&m);
  m.type = "f64";
  kt_conv_check(&m);
  kt_conv g = {2, 1, 6, 4, 2, 1, {4, 5}, {2, 3}, {1, 2}, {0, 1}, {1, 1}, KT_ONES, KT_ONES,
               "bf01_oi01->bf01", "f64", NULL};
  kt_conv_check(&g);
}

KC_TEST(hlo_conv_batch_groups) {
  /* The weight gradient of a depthwise convolution is this form. */
  kt_conv c = {2, 4, 3, 4, 1, 4, {4, 4}, {2, 2}, KT_ONES, KT_ZEROS, KT_ZEROS, KT_ONES, KT_ONES,
               "f01b_i01o->01bf", NULL, NULL};
  kt_conv_check(&c);
  kt_conv d = {2, 6, 2, 6, 1, 3, {3, 4}, {2, 2}, KT_ONES, {1, 0}, {0, 1}, KT_ONES, KT_ONES,
               "b01f_01io->b01f", "f64", NULL};
  kt_conv_check(&d);
}

KC_TEST(hlo_conv_1d_3d_and_1x1) {
  kt_conv one = {1, 2, 3, 4, 1, 1, {9}, {3}, {2}, {1}, {2}, KT_ONES, {2},
                 "b0f_0io->b0f", NULL, NULL};
  kt_conv_check(&one);
  kt_conv ncw = {1, 1, 2, 3, 1, 1, {8}, {4}, KT_ONES, {0}, {0}, KT_ONES, KT_ONES,
                 "bf0_oi0->bf0", "f64", NULL};
  kt_conv_check(&ncw);
  kt_conv three = {3, 1, 2, 3, 1, 1, {4, 3, 5}, {2, 2, 3}, {1, 1, 2}, {1, 0, 1}, {0, 1, 1},
                   KT_ONES, KT_ONES, "b012f_012io->b012f", NULL, NULL};
  kt_conv_check(&three);
  /* 1x1, unit stride, no padding: the input is the GEMM's left operand. */
  kt_conv pw = {2, 2, 5, 7, 1, 1, {3, 4}, {1, 1}, KT_ONES, KT_ZEROS, KT_ZEROS, KT_ONES, KT_ONES,
                "b01f_01io->b01f", NULL, NULL};
  kt_conv_check(&pw);
  /* No spatial dimensions: a product of features. */
  kt_conv none = {0, 3, 4, 5, 1, 1, {0}, {0}, {0}, {0}, {0}, {0}, {0}, "bf_io->bf", NULL, NULL};
  kt_conv_check(&none);
}

KC_TEST(hlo_conv_bf16_operands) {
  /* bf16 operands computed in f32: an f32 result (preferred_element_type)
   * is exact for these values; a bf16 result is rounded once. */
  kt_conv c = {2, 1, 3, 4, 1, 1, {5, 5}, {3, 3}, KT_ONES, {1, 1}, {1, 1}, KT_ONES, KT_ONES,
               "b01f_01io->b01f", "bf16", "f32"};
  kt_conv_check(&c);
  c.out_type = "bf16";
  kt_conv_check(&c);
  kt_conv d = {2, 1, 4, 4, 4, 1, {4, 4}, {3, 3}, KT_ONES, {1, 1}, {1, 1}, KT_ONES, KT_ONES,
               "b01f_01io->b01f", "bf16", "bf16"};
  kt_conv_check(&d);
}

/* Integer convolutions (JAX's int8 ones with preferred_element_type
 * int32) multiply and sum in the result's type, wrapping: x = {-128, 127,
 * 5, -3}, w = {127, -128}: -32512, 15489, 1019 in s32; in s8 their low
 * bytes 0, -127, -5. Unsigned operands zero-extend. Grouped and dilated
 * windows take the direct loop too, so the pool splits them. */
KC_TEST(hlo_conv_integer_types_wrap_in_the_result_type) {
  kc_tensor* outs[3];
  kt_run_text("HloModule m\nENTRY e {\n"
              " x = s8[1,4,1] constant({{{-128}, {127}, {5}, {-3}}})\n"
              " w = s8[2,1,1] constant({{{127}}, {{-128}}})\n"
              " a = s32[1,3,1] convolution(x, w), window={size=2}, dim_labels=b0f_0io->b0f\n"
              " b = s8[1,3,1] convolution(x, w), window={size=2}, dim_labels=b0f_0io->b0f\n"
              " u = u8[1,4,1] constant({{{200}, {100}, {3}, {255}}})\n"
              " v = u8[2,1,1] constant({{{2}}, {{255}}})\n"
              " c = u32[1,3,1] convolution(u, v), window={size=2}, dim_labels=b0f_0io->b0f\n"
              " ROOT t = (s32[1,3,1], s8[1,3,1], u32[1,3,1]) tuple(a, b, c)\n}\n",
              outs, 3);
  const int32_t* a = kt_data(outs[0]);
  const int8_t* b = kt_data(outs[1]);
  const uint32_t* c = kt_data(outs[2]);
  KC_CHECK(a[0] == -32512 && a[1] == 15489 && a[2] == 1019);
  KC_CHECK(b[0] == 0 && b[1] == -127 && b[2] == -5);
  KC_CHECK(c[0] == 25900 && c[1] == 965 && c[2] == 65031);
  kt_release(outs, 3);
  /* s64 with feature groups and padding against the f64 path on the same
   * (exactly representable) values. */
  static const char* const types[2] = {"s64", "f64"};
  kc_tensor* r[2];
  for (int k = 0; k < 2; ++k) {
    char text[1024];
    snprintf(text, sizeof text,
             "HloModule m\nENTRY e {\n"
             " i = %s[1,5,5,4] iota(), iota_dimension=1\n"
             " j = %s[1,5,5,4] iota(), iota_dimension=3\n"
             " x = %s[1,5,5,4] subtract(i, j)\n"
             " k = %s[3,3,2,6] iota(), iota_dimension=3\n"
             " ROOT y = %s[1,5,5,6] convolution(x, k), window={size=3x3 pad=1_1x1_1 "
             "rhs_dilate=1x1}, dim_labels=b01f_01io->b01f, feature_group_count=2\n}\n",
             types[k], types[k], types[k], types[k], types[k]);
    kt_run_text(text, &r[k], 1);
  }
  const int64_t* yi = kt_data(r[0]);
  const double* yf = kt_data(r[1]);
  for (int e = 0; e < 5 * 5 * 6; ++e) {
    if ((double)yi[e] != yf[e]) {
      kt__fail(__FILE__, __LINE__, "s64 element %d is %lld, f64's %g", e, (long long)yi[e],
               yf[e]);
    }
  }
  kt_release(r, 2);
}

/* ---- refusals ------------------------------------------------------------------------ */

#define KT_CONV_HLO(xs, ws, ys, attrs)                                               \
  "HloModule m\nENTRY e {\n x = " xs " parameter(0)\n w = " ws " parameter(1)\n"    \
  " ROOT y = " ys " convolution(x, w), " attrs "\n}\n"


KC_TEST(hlo_conv_refuses_malformed_attributes) {
  /* Paddings and dilations whose window arithmetic overflows 64 bits. */
  KT_COMPILE_FAILS(KT_CONV_HLO("f32[1,5,5,2]", "f32[3,3,2,4]", "f32[1,5,5,4]",
                               "window={size=3x3 pad=4611686018427387904_4611686018427387904x1_1}, "
                               "dim_labels=b01f_01io->b01f"),
                   KC_INVALID_ARGUMENT, "spatial dimension 0: the window, padding and dilations "
                   "overflow 64 bits");
  KT_COMPILE_FAILS(KT_CONV_HLO("f32[1,5,5,2]", "f32[3,3,2,4]", "f32[1,5,5,4]",
                               "window={size=3x3 pad=1_1x1_1 rhs_dilate=1x4611686018427387904}, "
                               "dim_labels=b01f_01io->b01f"),
                   KC_INVALID_ARGUMENT, "spatial dimension 1: the window, padding and dilations "
                   "overflow 64 bits");
  KT_COMPILE_FAILS(KT_CONV_HLO("f32[1,5,5,2]", "f32[3,3,2,4]", "f32[1,5,5,4]",
                               "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b0f"),
                   KC_INVALID_ARGUMENT, "attribute dim_labels", "expected INPUT_KERNEL->OUTPUT",
                   "b01f_01io->b0f", "the output's labels name 1 spatial dimensions");
  KT_COMPILE_FAILS(KT_CONV_HLO("f32[1,5,5,2]", "f32[3,3,2,4]", "f32[1,5,5,4]",
                               "window={size=3x3 pad=1_1x1_1}, dim_labels=b01x_01io->b01f"),
                   KC_INVALID_ARGUMENT, "attribute dim_labels", "'x' is not one of its letters");
  KT_COMPILE_FAILS(KT_CONV_HLO("f32[1,5,5,2]", "f32[3,3,2,4]", "f32[1,5,5,4]",
                               "window={size=3x3 pad=1_1x1_1}, dim_labels=b00f_01io->b01f"),
                   KC_INVALID_ARGUMENT, "'0' is named twice");
  KT_COMPILE_FAILS(KT_CONV_HLO("f32[1,5,5,2]", "f32[3,3,2,4]", "f32[1,5,5,4]",
                               "window={size=2x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"),
                   KC_INVALID_ARGUMENT, "window size: entry 0: expected 3",
                   "kernel's spatial dimension 0", "got 2");
  KT_COMPILE_FAILS(KT_CONV_HLO("f32[1,5,5,2]", "f32[3,3,2,4]", "f32[1,5,5,4]",
                               "window={size=3x3x3}, dim_labels=b01f_01io->b01f"),
                   KC_INVALID_ARGUMENT, "window size: expected 2 entries", "got 3");
  KT_COMPILE_FAILS(KT_CONV_HLO("f32[1,5,5,2]", "f32[3,3,2,4]", "f32[1,4,4,4]",
                               "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"),
                   KC_INVALID_ARGUMENT, "expected a result of f32[1,5,5,4]",
                   "got f32[1,4,4,4]");
  KT_COMPILE_FAILS(KT_CONV_HLO("f32[1,5,5,4]", "f32[3,3,2,4]", "f32[1,5,5,4]",
                               "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, "
                               "feature_group_count=3"),
                   KC_INVALID_ARGUMENT, "input features: expected 6",
                   "feature_group_count 3", "got 4");
  KT_COMPILE_FAILS(KT_CONV_HLO("f32[1,5,5,4]", "f32[3,3,2,3]", "f32[1,5,5,3]",
                               "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, "
                               "feature_group_count=2"),
                   KC_INVALID_ARGUMENT,
                   "kernel output features: expected a multiple of feature_group_count 2",
                   "got 3");
  KT_COMPILE_FAILS(KT_CONV_HLO("f32[3,5,5,2]", "f32[3,3,2,4]", "f32[1,5,5,4]",
                               "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, "
                               "batch_group_count=2"),
                   KC_INVALID_ARGUMENT, "input batch: expected a multiple of batch_group_count 2",
                   "got 3");
  KT_COMPILE_FAILS(KT_CONV_HLO("f32[1,5,5,2]", "f32[3,3,2,4]", "f32[1,5,5,4]",
                               "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, "
                               "feature_group_count=0"),
                   KC_INVALID_ARGUMENT, "attribute feature_group_count: expected at least 1",
                   "got 0");
  KT_COMPILE_FAILS(KT_CONV_HLO("f32[1,5,5,2]", "f32[3,3,2,4]", "f32[1,5,5,4]",
                               "window={size=3x3 stride=0x1 pad=1_1x1_1}, "
                               "dim_labels=b01f_01io->b01f"),
                   KC_INVALID_ARGUMENT, "window stride: entry 0: expected at least 1", "got 0");
  KT_COMPILE_FAILS(KT_CONV_HLO("f32[1,5,5,2]", "f32[3,3,2,4]", "f32[1,5,5,4]",
                               "window={size=3x3 pad=1_1x1_1}"),
                   KC_INVALID_ARGUMENT, "expected attribute dim_labels=WORD, got none");
  KT_COMPILE_FAILS(KT_CONV_HLO("s8[1,5,5,2]", "s8[3,3,2,4]", "f32[1,5,5,4]",
                               "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"),
                   KC_UNIMPLEMENTED, "convolution of s8 and s8 giving f32",
                   "integer and float types do not mix");
  KT_COMPILE_FAILS(KT_CONV_HLO("pred[1,5,5,2]", "pred[3,3,2,4]", "pred[1,5,5,4]",
                               "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"),
                   KC_UNIMPLEMENTED, "convolution of pred and pred giving pred",
                   "only f16, bf16, f32, f64 and the integer types");
  /* Parsing refuses a window field it does not read. */
  kc_program* p = NULL;
  KC_CHECK_CODE(kc_program_parse(kc_sv(KT_CONV_HLO("f32[1,5,5,2]", "f32[3,3,2,4]",
                                                   "f32[1,5,5,4]",
                                                   "window={size=3x3 pad=1_1x1_1 "
                                                   "rhs_reversal=1x1}, "
                                                   "dim_labels=b01f_01io->b01f")),
                                 &p),
                KC_INVALID_ARGUMENT, "rhs_reversal", "are not supported");
  KC_CHECK(p == NULL);
}

/* ---- select-and-scatter ------------------------------------------------------------------ */

/* The operand 4x5, the source one element per window of 3x3 windows at
 * stride 1x2 with padding 1_1x1_1 (so windows overlap and some hang over
 * the edge); ties resolve to the first element in window order. */
static const float kt_sas_x[20] = {1, 5, 5, 2, 0, 3, 9, 9, 1, 4, 7, 2, 6, 6, 8, 0, 8, 3, 8, 2};

/* The reference: argmax-first per window (GE keeps the current on ties),
 * the source added there. */
static void kt_sas_reference(float* want) {
  for (int i = 0; i < 20; ++i) want[i] = 0.5f;
  int src = 0;
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 3; ++c, ++src) {
      int best = -1;
      for (int dr = 0; dr < 3; ++dr) {
        for (int dc = 0; dc < 3; ++dc) {
          int y = r - 1 + dr, x = c * 2 - 1 + dc;
          if (y < 0 || y >= 4 || x < 0 || x >= 5) continue;
          if (best < 0 || !(kt_sas_x[best] >= kt_sas_x[y * 5 + x])) best = y * 5 + x;
        }
      }
      want[best] += (float)(src + 1);
    }
  }
}

static void kt_sas_run(const char* select, const char* scatter) {
  char text[2048];
  snprintf(text, sizeof text,
           "HloModule m\n"
           "sel {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n %s\n}\n"
           "sca {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n %s\n}\n"
           "ENTRY e {\n"
           " x = f32[4,5] constant({{1, 5, 5, 2, 0}, {3, 9, 9, 1, 4}, {7, 2, 6, 6, 8}, "
           "{0, 8, 3, 8, 2}})\n"
           " s = f32[4,3] constant({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}, {10, 11, 12}})\n"
           " i = f32[] constant(0.5)\n"
           " ROOT r = f32[4,5] select-and-scatter(x, s, i), window={size=3x3 stride=1x2 "
           "pad=1_1x1_1}, select=sel, scatter=sca\n}\n",
           select, scatter);
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_parse(kc_sv(text), &p));
  kc_executable* exe = NULL;
  KC_CHECK_OK(kc_program_compile(p, NULL, &exe));
  kc_tensor* out = NULL;
  KC_CHECK_OK(kc_executable_execute(exe, NULL, 0, NULL, &out));
  float want[20];
  kt_sas_reference(want);
  const float* got = kc_tensor_get_dltensor(out)->data;
  for (int i = 0; i < 20; ++i) {
    if (got[i] != want[i]) fprintf(stderr, "element %d: expected %g, got %g\n", i, want[i], got[i]);
    KC_CHECK(got[i] == want[i]);
  }
  kc_object_release(KC_OBJECT(out));
  kc_executable_destroy(exe);
  kc_program_destroy(p);
}

KC_TEST(hlo_select_and_scatter_overlapping_windows) {
  /* The native path: compare GE and add, as JAX writes max pooling's
   * gradient (also with TOTALORDER). */
  kt_sas_run("ROOT c = pred[] compare(a, b), direction=GE",
             "ROOT s = f32[] add(a, b)");
  kt_sas_run("ROOT c = pred[] compare(a, b), direction=GE, type=TOTALORDER",
             "ROOT s = f32[] add(a, b)");
  /* The same computations written so that they run per element. */
  kt_sas_run("ROOT c = pred[] compare(b, a), direction=LE",
             "ROOT s = f32[] add(b, a)");
  kt_sas_run("n = f32[] negate(b)\n m = f32[] negate(a)\n ROOT c = pred[] compare(m, n), "
             "direction=LE",
             "ROOT s = f32[] add(a, b)");
}

KC_TEST(hlo_select_and_scatter_f64_min_and_padding_only_windows) {
  /* LE picks the first minimum; a window wholly in the padding scatters
   * nothing; multiply as the scatter. */
  kc_tensor* out = NULL;
  kc_program* p = NULL;
  const char* text =
      "HloModule m\n"
      "sel {\n a = f64[] parameter(0)\n b = f64[] parameter(1)\n"
      " ROOT c = pred[] compare(a, b), direction=LE\n}\n"
      "sca {\n a = f64[] parameter(0)\n b = f64[] parameter(1)\n ROOT s = f64[] multiply(a, b)\n}\n"
      "ENTRY e {\n x = f64[5] constant({3, 1, 4, 1, 5})\n"
      " s = f64[4] constant({2, 3, 5, 7})\n i = f64[] constant(1)\n"
      " ROOT r = f64[5] select-and-scatter(x, s, i), window={size=2 stride=2 pad=0_3}, "
      "select=sel, scatter=sca\n}\n";
  KC_CHECK_OK(kc_program_parse(kc_sv(text), &p));
  kc_executable* exe = NULL;
  KC_CHECK_OK(kc_program_compile(p, NULL, &exe));
  KC_CHECK_OK(kc_executable_execute(exe, NULL, 0, NULL, &out));
  const double* got = kc_tensor_get_dltensor(out)->data;
  /* windows [0,1] -> 1 (x=1), [2,3] -> 3 (x=1), [4,pad] -> 4, [pad,pad] -> none. */
  const double want[5] = {1, 2, 1, 3, 5};
  for (int i = 0; i < 5; ++i) KC_CHECK(got[i] == want[i]);
  kc_object_release(KC_OBJECT(out));
  kc_executable_destroy(exe);
  kc_program_destroy(p);
}

KC_TEST(hlo_select_and_scatter_scatter_argument_order) {
  /* T is called as T(source, current): with subtract, 10 - 0 then
   * 20 - 10 at element 1, 30 - 0 at element 2. */
  kc_tensor* out = NULL;
  kc_program* p = NULL;
  const char* text =
      "HloModule m\n"
      "sel {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
      " ROOT c = pred[] compare(a, b), direction=GE\n}\n"
      "sca {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
      " ROOT s = f32[] subtract(a, b)\n}\n"
      "ENTRY e {\n x = f32[4] constant({1, 3, 2, 0})\n"
      " s = f32[3] constant({10, 20, 30})\n i = f32[] constant(0)\n"
      " ROOT r = f32[4] select-and-scatter(x, s, i), window={size=2 stride=1}, "
      "select=sel, scatter=sca\n}\n";
  KC_CHECK_OK(kc_program_parse(kc_sv(text), &p));
  kc_executable* exe = NULL;
  KC_CHECK_OK(kc_program_compile(p, NULL, &exe));
  KC_CHECK_OK(kc_executable_execute(exe, NULL, 0, NULL, &out));
  const float* got = kc_tensor_get_dltensor(out)->data;
  KC_CHECK(got[0] == 0 && got[1] == 10 && got[2] == 30 && got[3] == 0);
  kc_object_release(KC_OBJECT(out));
  kc_executable_destroy(exe);
  kc_program_destroy(p);
}

#define KT_SAS_HLO(src, window, select_root)                                              \
  "HloModule m\nsel {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n " select_root   \
  "\n}\nsca {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, " \
  "b)\n}\nENTRY e {\n x = f32[4,4] parameter(0)\n s = " src " parameter(1)\n"             \
  " i = f32[] constant(0)\n ROOT r = f32[4,4] select-and-scatter(x, s, i), " window      \
  ", select=sel, scatter=sca\n}\n"

KC_TEST(hlo_select_and_scatter_refusals) {
  KT_COMPILE_FAILS(KT_SAS_HLO("f32[3,3]", "window={size=2x2 stride=2x2}",
                              "ROOT c = pred[] compare(a, b), direction=GE"),
                   KC_INVALID_ARGUMENT, "operand 1 (the source): expected f32[2,2]",
                   "got f32[3,3]");
  KT_COMPILE_FAILS(KT_SAS_HLO("f32[2,2]", "window={size=2x2 stride=2x2}",
                              "ROOT c = f32[] add(a, b)"),
                   KC_INVALID_ARGUMENT, "select 'sel': expected two f32[] parameters and a "
                   "pred[] result", "got a result of f32[]");
  KT_COMPILE_FAILS(KT_SAS_HLO("f32[2,2]", "window={size=2x2 stride=2x2 lhs_dilate=2x1}",
                              "ROOT c = pred[] compare(a, b), direction=GE"),
                   KC_INVALID_ARGUMENT, "window lhs_dilate: entry 0: expected 1",
                   "has no dilation", "got 2");
  KT_COMPILE_FAILS(KT_SAS_HLO("f32[2,2]", "window={size=2x2x2 stride=2x2}",
                              "ROOT c = pred[] compare(a, b), direction=GE"),
                   KC_INVALID_ARGUMENT, "window size: expected 2 entries", "got 3");
  KT_COMPILE_FAILS(KT_SAS_HLO("f32[2,2]", "window={size=2x2 stride=2x2 pad=-1_0x0_0}",
                              "ROOT c = pred[] compare(a, b), direction=GE"),
                   KC_INVALID_ARGUMENT, "window pad: entry 0: expected at least 0", "got -1");
}

/* The builder gives the same instruction with kc_attr values. */
KC_TEST(hlo_conv_built_with_add_instruction) {
  kc_program_builder* b = NULL;
  KC_CHECK_OK(kc_program_builder_create(kc_sv("conv"), &b));
  int64_t xd[3] = {1, 4, 1}, wd[3] = {2, 1, 1}, yd[3] = {1, 3, 1};
  kc_shape *xs = NULL, *ws = NULL, *ys = NULL;
  DLDataType f32 = {kDLFloat, 32, 1};
  KC_CHECK_OK(kc_shape_create_array(f32, xd, 3, &xs));
  KC_CHECK_OK(kc_shape_create_array(f32, wd, 3, &ws));
  KC_CHECK_OK(kc_shape_create_array(f32, yd, 3, &ys));
  int32_t x = -1, w = -1, y = -1;
  KC_CHECK_OK(kc_program_builder_add_parameter(b, 0, xs, kc_sv("x"), &x));
  KC_CHECK_OK(kc_program_builder_add_parameter(b, 1, ws, kc_sv("w"), &w));
  int64_t size[1] = {2};
  kc_attr attrs[2];
  memset(attrs, 0, sizeof attrs);
  attrs[0].name = kc_sv("dim_labels");
  attrs[0].type = KC_ATTR_STRING;
  attrs[0].v.str = kc_sv("b0f_0io->b0f");
  attrs[1].name = kc_sv("window_dimensions");
  attrs[1].type = KC_ATTR_ARRAY;
  attrs[1].elem_type = KC_ATTR_I64;
  attrs[1].v.array.data = size;
  attrs[1].v.array.count = 1;
  kc_attr_dict dict = {.entries = attrs, .count = 2};
  int32_t ops[2] = {x, w};
  kc_instruction_desc d;
  memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.op = KC_OP_CONVOLUTION;
  d.result_shape = ys;
  d.operands = ops;
  d.num_operands = 2;
  d.attrs = &dict;
  KC_CHECK_OK(kc_program_builder_add_instruction(b, &d, kc_sv("y"), &y));
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_builder_finish(b, &p));
  kc_executable* exe = NULL;
  KC_CHECK_OK(kc_program_compile(p, NULL, &exe));
  float xv[4] = {1, 2, 3, 4}, wv[2] = {10, 1};
  DLTensor tx, tw;
  memset(&tx, 0, sizeof tx);
  memset(&tw, 0, sizeof tw);
  tx.device.device_type = tw.device.device_type = kDLCPU;
  tx.dtype = tw.dtype = f32;
  tx.ndim = tw.ndim = 3;
  tx.shape = xd;
  tw.shape = wd;
  tx.data = xv;
  tw.data = wv;
  const DLTensor* ins[2] = {&tx, &tw};
  kc_tensor* out = NULL;
  KC_CHECK_OK(kc_executable_execute(exe, ins, 2, NULL, &out));
  const float* got = kc_tensor_get_dltensor(out)->data;
  KC_CHECK(got[0] == 12 && got[1] == 23 && got[2] == 34);
  kc_object_release(KC_OBJECT(out));
  kc_executable_destroy(exe);
  kc_program_destroy(p);
  kc_shape_destroy(xs);
  kc_shape_destroy(ws);
  kc_shape_destroy(ys);
}

/* The GEMM path with the portable kernel (KCALL_DOT_KERNEL applies to
 * convolutions too), and a name it does not know refused. */
KC_TEST(hlo_conv_gemm_kernel_choice) {
  setenv("KCALL_DOT_KERNEL", "plain", 1);
  kt_conv c = {2, 2, 5, 9, 1, 1, {6, 5}, {3, 2}, {1, 2}, {1, 0}, {1, 1}, KT_ONES, KT_ONES,
               "b01f_01io->b01f", NULL, NULL};
  kt_conv_check(&c);
  setenv("KCALL_DOT_KERNEL", "sse9", 1);
  KT_COMPILE_FAILS(KT_CONV_HLO("f32[1,5,5,2]", "f32[3,3,2,4]", "f32[1,5,5,4]",
                               "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"),
                   KC_INVALID_ARGUMENT, "KCALL_DOT_KERNEL: expected avx512, avx2 or plain",
                   "sse9");
  unsetenv("KCALL_DOT_KERNEL");
}
