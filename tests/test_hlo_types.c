/* f16, bf16, c64 and c128 through the HLO instructions, and dot with a
 * result type other than its operands': every op against a reference
 * computed here in double (for the halves: rounded to nearest even once,
 * by a rounding written independently of the library's), with NaN,
 * infinities, -0 and rounding ties. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt_hlo.h"

/* ---- 16-bit floats, independently of src/kernels/half.h ---------------------- */

typedef struct kt_half_fmt {
  const char* name; /* "f16", "bf16" */
  int mbits, emin, emax;
} kt_half_fmt;

static const kt_half_fmt kt_f16 = {"f16", 10, -14, 15};
static const kt_half_fmt kt_bf16 = {"bf16", 7, -126, 127};

/* v rounded to nearest even in the format: the result's value. */
static double kt_round(const kt_half_fmt* f, double v) {
  if (v != v || isinf(v) || v == 0) return v;
  int e = ilogb(v);
  if (e < f->emin) e = f->emin;
  double q = ldexp(1.0, e - f->mbits);
  double r = nearbyint(v / q) * q; /* ties to even in the default mode */
  double max = ldexp(2.0 - ldexp(1.0, -f->mbits), f->emax);
  if (fabs(r) > max) return copysign(INFINITY, v);
  return r;
}

/* The bits of a value the format holds exactly. */
static uint16_t kt_bits(const kt_half_fmt* f, double v) {
  int ebits = f->name[0] == 'b' ? 8 : 5;
  uint16_t sign = signbit(v) ? 0x8000u : 0;
  uint16_t inf = (uint16_t)(((1u << ebits) - 1) << f->mbits);
  if (v != v) return (uint16_t)(sign | inf | (1u << (f->mbits - 1)));
  if (isinf(v)) return (uint16_t)(sign | inf);
  if (v == 0) return sign;
  double a = fabs(v);
  int e = ilogb(a);
  if (e < f->emin) return (uint16_t)(sign | (uint16_t)ldexp(a, f->mbits - f->emin));
  uint32_t m = (uint32_t)(ldexp(a, f->mbits - e) - ldexp(1.0, f->mbits));
  return (uint16_t)(sign | ((uint32_t)(e - f->emin + 1) << f->mbits) | m);
}

static double kt_value(const kt_half_fmt* f, uint16_t h) {
  int ebits = f->name[0] == 'b' ? 8 : 5;
  uint32_t e = ((uint32_t)h >> f->mbits) & ((1u << ebits) - 1);
  uint32_t m = h & ((1u << f->mbits) - 1);
  double v;
  if (e == 0) {
    v = ldexp((double)m, f->emin - f->mbits);
  } else if (e == (1u << ebits) - 1) {
    v = m ? NAN : INFINITY;
  } else {
    v = ldexp((double)(m | (1u << f->mbits)), (int)e + f->emin - 1 - f->mbits);
  }
  return (h & 0x8000u) ? -v : v;
}

/* "{1, -0, nan, ...}": values that print and parse back exactly. */
static void kt_list(char* buf, size_t cap, const double* v, int n) {
  size_t at = (size_t)snprintf(buf, cap, "{");
  for (int i = 0; i < n; ++i) {
    at += (size_t)snprintf(buf + at, cap - at, "%s%.17g", i ? ", " : "", v[i]);
  }
  snprintf(buf + at, cap - at, "}");
}

/* The result element i, `got`, against `want` (a value of the format):
 * the same bits, or both NaN. */
static void kt_check_half(const kt_half_fmt* f, const char* what, int i, uint16_t got,
                          double want) {
  double g = kt_value(f, got);
  if (g != g && want != want) return;
  if (got != kt_bits(f, want)) {
    kt__fail(__FILE__, __LINE__, "%s %s element %d: got %.9g (0x%04x), want %.9g (0x%04x)",
             f->name, what, i, g, got, want, kt_bits(f, want));
  }
}

/* Runs `ROOT r = RT[n] OP(a[, b])` on a and b (values of `in`) and gives
 * the result tensor. */
static kc_tensor* kt_run_op(const char* in_type, const char* out_type, const char* op,
                            const char* a, const char* b, int n) {
  char text[4096];
  if (b) {
    snprintf(text, sizeof text,
             "HloModule m\nENTRY e {\n a = %s[%d] constant(%s)\n b = %s[%d] constant(%s)\n"
             " ROOT r = %s[%d] %s(a, b)\n}\n",
             in_type, n, a, in_type, n, b, out_type, n, op);
  } else {
    snprintf(text, sizeof text,
             "HloModule m\nENTRY e {\n a = %s[%d] constant(%s)\n ROOT r = %s[%d] %s(a)\n}\n",
             in_type, n, a, out_type, n, op);
  }
  kc_tensor* out = NULL;
  kt_run_text(text, &out, 1);
  return out;
}

/* ---- f16 and bf16 ---------------------------------------------------------------- */

static double kt_sign(double x) { return x > 0 ? 1 : x < 0 ? -1 : x; }
static double kt_rsqrt(double x) { return 1 / sqrt(x); }
static double kt_logistic(double x) { return 1 / (1 + exp(-x)); }
static double kt_negate(double x) { return -x; }

static const struct {
  const char* name;
  double (*fn)(double);
} kt_unary[] = {
    {"abs", fabs},          {"sign", kt_sign},
    {"sqrt", sqrt},         {"rsqrt", kt_rsqrt},
    {"cbrt", cbrt},         {"tanh", tanh},
    {"logistic", kt_logistic}, {"sine", sin},
    {"cosine", cos},        {"tan", tan},
    {"floor", floor},       {"ceil", ceil},
    {"round-nearest-afz", round}, {"round-nearest-even", nearbyint},
    {"log-plus-one", log1p}, {"exponential-minus-one", expm1},
    {"erf", erf},           {"exponential", exp},
    {"log", log},           {"negate", kt_negate},
};

/* Inputs: -0, ties of the rounding ops (2.5, -0.5), a value each format
 * rounds (0.1), large and small magnitudes, infinities and NaN. */
static const double kt_inputs[] = {-0.0, 0.5, -1.5, 2.5, 0.1,  3.75,  -0.5,
                                   100,  1e-3, 7,   -INFINITY, INFINITY, NAN};
#define KT_N ((int)(sizeof kt_inputs / sizeof kt_inputs[0]))

KC_TEST(hlo_types_half_unary_math) {
  const kt_half_fmt* fmts[2] = {&kt_f16, &kt_bf16};
  for (int k = 0; k < 2; ++k) {
    const kt_half_fmt* f = fmts[k];
    double x[KT_N];
    for (int i = 0; i < KT_N; ++i) x[i] = kt_round(f, kt_inputs[i]);
    char a[1024];
    kt_list(a, sizeof a, x, KT_N);
    for (size_t op = 0; op < sizeof kt_unary / sizeof kt_unary[0]; ++op) {
      kc_tensor* t = kt_run_op(f->name, f->name, kt_unary[op].name, a, NULL, KT_N);
      const uint16_t* got = kt_data(t);
      for (int i = 0; i < KT_N; ++i) {
        kt_check_half(f, kt_unary[op].name, i, got[i], kt_round(f, kt_unary[op].fn(x[i])));
      }
      kc_object_release(KC_OBJECT(t));
    }
    /* is-finite */
    kc_tensor* t = kt_run_op(f->name, "pred", "is-finite", a, NULL, KT_N);
    const uint8_t* fin = kt_data(t);
    for (int i = 0; i < KT_N; ++i) KC_CHECK_INT(fin[i], isfinite(x[i]) ? 1 : 0);
    kc_object_release(KC_OBJECT(t));
  }
}

static double kt_add(double x, double y) { return x + y; }
static double kt_sub(double x, double y) { return x - y; }
static double kt_mul(double x, double y) { return x * y; }
static double kt_div(double x, double y) { return x / y; }
/* XLA's maximum and minimum: NaN when either is. */
static double kt_max(double x, double y) { return x != x || y != y ? NAN : x > y ? x : y; }
static double kt_min(double x, double y) { return x != x || y != y ? NAN : x < y ? x : y; }

static const struct {
  const char* name;
  double (*fn)(double, double);
} kt_binary[] = {
    {"add", kt_add},     {"subtract", kt_sub}, {"multiply", kt_mul}, {"divide", kt_div},
    {"maximum", kt_max}, {"minimum", kt_min},  {"power", pow},       {"remainder", fmod},
    {"atan2", atan2},
};

KC_TEST(hlo_types_half_binary_math_rounds_once_to_even) {
  const kt_half_fmt* fmts[2] = {&kt_f16, &kt_bf16};
  for (int k = 0; k < 2; ++k) {
    const kt_half_fmt* f = fmts[k];
    /* u: one unit in the last place of 1. The sums 1 + u/2 (a tie: to
     * even, 1), 1 + 3u/2 (a tie: up, 1 + 2u), the largest finite value
     * plus half its ulp (a tie past it: infinity), -0 + -0, inf - inf. */
    double u = ldexp(1.0, -f->mbits);
    double big = ldexp(2.0 - u, f->emax);
    double x[] = {1, 1 + u, big, -0.0, INFINITY, 2.5, -3, 0.1, NAN, 6};
    double y[] = {u / 2, u / 2, ldexp(1.0, f->emax - f->mbits - 1), -0.0, INFINITY,
                  -1.25, 2, 3, 1, -0.0};
    int n = (int)(sizeof x / sizeof x[0]);
    for (int i = 0; i < n; ++i) {
      x[i] = kt_round(f, x[i]);
      y[i] = kt_round(f, y[i]);
    }
    char a[1024], b[1024];
    kt_list(a, sizeof a, x, n);
    kt_list(b, sizeof b, y, n);
    for (size_t op = 0; op < sizeof kt_binary / sizeof kt_binary[0]; ++op) {
      kc_tensor* t = kt_run_op(f->name, f->name, kt_binary[op].name, a, b, n);
      const uint16_t* got = kt_data(t);
      for (int i = 0; i < n; ++i) {
        kt_check_half(f, kt_binary[op].name, i, got[i], kt_round(f, kt_binary[op].fn(x[i], y[i])));
      }
      kc_object_release(KC_OBJECT(t));
    }
    /* The ties themselves. */
    kc_tensor* t = kt_run_op(f->name, f->name, "add", a, b, n);
    const uint16_t* s = kt_data(t);
    KC_CHECK(kt_value(f, s[0]) == 1.0);
    KC_CHECK(kt_value(f, s[1]) == 1 + 2 * u);
    KC_CHECK(isinf(kt_value(f, s[2])));
    KC_CHECK(s[3] == 0x8000u); /* -0 + -0 = -0 */
    kc_object_release(KC_OBJECT(t));
  }
}

/* clamp(lo, x, hi) = minimum(maximum(x, lo), hi): a NaN bound gives NaN,
 * as JAX's lax.clamp does on XLA:CPU (lo [nan, 0, 4, 0, nan], x [1, 2, 3,
 * nan, 5], hi [2, nan, 3.5, 9, nan] -> [nan, nan, 3.5, nan, nan]), also
 * with scalar bounds; integers clamp as usual. */
KC_TEST(hlo_types_clamp_nan_bounds) {
  static const char* const types[] = {"f32", "f64"};
  for (int k = 0; k < 2; ++k) {
    char text[1024];
    snprintf(text, sizeof text,
             "HloModule m\nENTRY e {\n"
             " lo = %s[5] constant({nan, 0, 4, 0, nan})\n"
             " x = %s[5] constant({1, 2, 3, nan, 5})\n"
             " hi = %s[5] constant({2, nan, 3.5, 9, nan})\n"
             " n = %s[] constant(nan)\n one = %s[] constant(1)\n"
             " a = %s[5] clamp(lo, x, hi)\n"
             " b = %s[5] clamp(n, x, hi)\n"
             " c = %s[5] clamp(one, x, n)\n"
             " ROOT t = (%s[5], %s[5], %s[5]) tuple(a, b, c)\n}\n",
             types[k], types[k], types[k], types[k], types[k], types[k], types[k],
             types[k], types[k], types[k], types[k]);
    kc_tensor* outs[3];
    kt_run_text(text, outs, 3);
    double got[3][5];
    for (int o = 0; o < 3; ++o) {
      for (int i = 0; i < 5; ++i) {
        got[o][i] = k == 0 ? ((const float*)kt_data(outs[o]))[i]
                           : ((const double*)kt_data(outs[o]))[i];
      }
    }
    for (int i = 0; i < 5; ++i) {
      KC_CHECK(i == 2 ? got[0][i] == 3.5 : isnan(got[0][i]));
      KC_CHECK(isnan(got[1][i]));
      KC_CHECK(isnan(got[2][i]));
    }
    kt_release(outs, 3);
  }
  kc_tensor* ints[1];
  kt_run_text("HloModule m\nENTRY e {\n lo = s32[] constant(-2)\n"
              " hi = s32[] constant(3)\n x = s32[4] constant({-5, 0, 3, 9})\n"
              " ROOT c = s32[4] clamp(lo, x, hi)\n}\n",
              ints, 1);
  const int32_t* c = kt_data(ints[0]);
  KC_CHECK(c[0] == -2 && c[1] == 0 && c[2] == 3 && c[3] == 3);
  kt_release(ints, 1);
}

/* Complex multiply and divide as XLA:CPU computes them, bit for bit: the
 * expected values are JAX's (jax 0.10.2 on x86-64): fused multiply-adds
 * (C's rounding differs in the last bit: 0x1.39383e6c631f7p+2 for the
 * first case), no Annex G recovery of infinities, Smith's quotient with
 * XLA's fix-ups for zero and infinite operands. */
KC_TEST(hlo_types_complex_multiply_divide_match_xla) {
  static const double nan = NAN, inf = INFINITY;
  static const struct {
    bool c128;
    const char* op;
    double a[2], b[2], want[2];
  } cases[] = {
      {true, "multiply", {0x1.053cd67810b16p+1, -0x1.045f97dd0439cp+1},
       {0x1.c28a8768c1bb1p+0, -0x1.49a87b3876693p-1},
       {0x1.241d32db9e2ecp+1, -0x1.39383e6c631f6p+2}},
      {false, "multiply", {0x1.c4a308p+0, -0x1.4ad0aap+0}, {0x1.58b3e8p+0, -0x1.e1684ap-6},
       {0x1.2be064p+1, -0x1.cabd9cp+0}},
      {true, "divide", {0x1.ac221aa4baeafp-2, 0x1.6b4e11727f1c1p-1},
       {0x1.5e5952856e93ep+0, -0x1.6bac5dd5e443bp-1},
       {0x1.d5d26e4c5bbdcp-6, 0x1.11164ea7f78d1p-1}},
      {false, "divide", {0x1.3e0d74p-1, -0x1.e29ec4p-2}, {0x1.14013cp+0, 0x1.dc3182p-2},
       {0x1.4ea8eep-2, -0x1.27fe6ep-1}},
      {true, "multiply", {inf, 0}, {1, nan}, {nan, nan}},
      {true, "multiply", {inf, inf}, {0, 1}, {nan, nan}},
      {true, "multiply", {1e300, 1e300}, {1e300, 1e300}, {-inf, inf}},
      {true, "multiply", {0, inf}, {inf, 0}, {nan, inf}},
      {true, "divide", {1, 2}, {0, 0}, {inf, inf}},
      {true, "divide", {1e300, 1e300}, {1e300, 1e300}, {1, 0}},
      {true, "divide", {inf, inf}, {0, 1}, {inf, -inf}},
      {true, "divide", {inf, 1}, {-2.5, 0}, {-inf, nan}},
      {true, "divide", {1, -2.5}, {inf, 0}, {0, -0.0}},
      {false, "divide", {-2.5, 1}, {0, -0.0}, {-inf, inf}},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    const char* c = cases[k].c128 ? "c128" : "c64";
    const char* f = cases[k].c128 ? "f64" : "f32";
    char text[1024];
    snprintf(text, sizeof text,
             "HloModule m\nENTRY e {\n"
             " ar = %s[] constant(%.17g)\n ai = %s[] constant(%.17g)\n"
             " br = %s[] constant(%.17g)\n bi = %s[] constant(%.17g)\n"
             " a = %s[] complex(ar, ai)\n b = %s[] complex(br, bi)\n"
             " ROOT r = %s[] %s(a, b)\n}\n",
             f, cases[k].a[0], f, cases[k].a[1], f, cases[k].b[0], f, cases[k].b[1], c, c, c,
             cases[k].op);
    kc_tensor* out[1];
    kt_run_text(text, out, 1);
    for (int part = 0; part < 2; ++part) {
      double got = cases[k].c128 ? ((const double*)kt_data(out[0]))[part]
                                 : ((const float*)kt_data(out[0]))[part];
      double want = cases[k].want[part];
      bool ok = isnan(want) ? isnan(got) : got == want && signbit(got) == signbit(want);
      if (!ok) {
        fprintf(stderr, "case %zu (%s %s) part %d: got %a, want %a\n", k, c, cases[k].op,
                part, got, want);
      }
      KC_CHECK(ok);
    }
    kt_release(out, 1);
  }
}

KC_TEST(hlo_types_half_compare_clamp_select_iota) {
  const kt_half_fmt* fmts[2] = {&kt_f16, &kt_bf16};
  static const char* dirs[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
  for (int k = 0; k < 2; ++k) {
    const kt_half_fmt* f = fmts[k];
    const char* h = f->name;
    char text[4096];
    snprintf(text, sizeof text,
             "HloModule m\nENTRY e {\n"
             " a = %s[5] constant({-0, 1, nan, -inf, 2})\n"
             " b = %s[5] constant({0, 1, 1, nan, 1.5})\n"
             " eq = pred[5] compare(a, b), direction=EQ\n"
             " ne = pred[5] compare(a, b), direction=NE\n"
             " lt = pred[5] compare(a, b), direction=LT\n"
             " le = pred[5] compare(a, b), direction=LE, type=FLOAT\n"
             " gt = pred[5] compare(a, b), direction=GT\n"
             " ge = pred[5] compare(a, b), direction=GE\n"
             " tlt = pred[5] compare(a, b), direction=LT, type=TOTALORDER\n"
             " teq = pred[5] compare(a, b), direction=EQ, type=TOTALORDER\n"
             " lo = %s[] constant(0.25)\n hi = %s[5] constant({1, 1, 1, 1, nan})\n"
             " x = %s[5] constant({-3, 0.5, nan, 7, 0.5})\n"
             " c = %s[5] clamp(lo, x, hi)\n"
             " s = %s[5] select(lt, a, b)\n"
             " i = %s[2,3] iota(), iota_dimension=1\n"
             " ROOT t = (pred[5], pred[5], pred[5], pred[5], pred[5], pred[5], pred[5], "
             "pred[5], %s[5], %s[5], %s[2,3]) "
             "tuple(eq, ne, lt, le, gt, ge, tlt, teq, c, s, i)\n}\n",
             h, h, h, h, h, h, h, h, h, h, h);
    kc_tensor* outs[11];
    kt_run_text(text, outs, 11);
    static const uint8_t want[8][5] = {
        {1, 1, 0, 0, 0}, {0, 0, 1, 1, 1}, {0, 0, 0, 0, 0}, {1, 1, 0, 0, 0},
        {0, 0, 0, 0, 1}, {1, 1, 0, 0, 1},
        /* total order: -0 < 0, NaN above everything, -inf below NaN */
        {1, 0, 0, 1, 0}, {0, 1, 0, 0, 0}};
    for (int d = 0; d < 8; ++d) {
      const uint8_t* got = kt_data(outs[d]);
      for (int i = 0; i < 5; ++i) {
        if (got[i] != want[d][i]) {
          kt__fail(__FILE__, __LINE__, "%s compare %s%s element %d: got %d", h,
                   dirs[d % 6], d >= 6 ? " (total order)" : "", i, got[i]);
        }
      }
    }
    /* clamp = minimum(maximum(x, lo), hi), NaN from either */
    const uint16_t* c = kt_data(outs[8]);
    double want_c[5] = {0.25, 0.5, NAN, 1, NAN};
    for (int i = 0; i < 5; ++i) kt_check_half(f, "clamp", i, c[i], want_c[i]);
    const uint16_t* s = kt_data(outs[9]);
    double want_s[5] = {0, 1, 1, NAN, 1.5}; /* lt is false everywhere */
    for (int i = 0; i < 5; ++i) kt_check_half(f, "select", i, s[i], want_s[i]);
    const uint16_t* io = kt_data(outs[10]);
    for (int i = 0; i < 6; ++i) kt_check_half(f, "iota", i, io[i], (double)(i % 3));
    kt_release(outs, 11);
  }
}

KC_TEST(hlo_types_half_convert_rounding) {
  /* f32 -> f16: the largest finite value, the tie just past it (to
   * infinity), a subnormal tie (to even: 0) and one above (up), NaN;
   * f32 -> bf16: a tie to even, a tie up; f16 -> s32 saturates, NaN 0. */
  kc_tensor* outs[4];
  kt_run_text("HloModule m\nENTRY e {\n"
              " a = f32[6] constant({65519, 65520, 2.98023223876953125e-08, "
              "4.470348358154296875e-08, nan, -65504})\n"
              " h = f16[6] convert(a)\n"
              " b = f32[3] constant({1.00390625, 1.01171875, -0})\n"
              " g = bf16[3] convert(b)\n"
              " c = f16[4] constant({65504, -inf, nan, -2.5})\n"
              " i = s8[4] convert(c)\n"
              " w = f32[4] convert(c)\n"
              " ROOT t = (f16[6], bf16[3], s8[4], f32[4]) tuple(h, g, i, w)\n}\n",
              outs, 4);
  const uint16_t* h = kt_data(outs[0]);
  KC_CHECK_INT(h[0], 0x7BFF);
  KC_CHECK_INT(h[1], 0x7C00);
  KC_CHECK_INT(h[2], 0x0000);
  KC_CHECK_INT(h[3], 0x0001);
  KC_CHECK((h[4] & 0x7C00) == 0x7C00 && (h[4] & 0x3FF) != 0);
  KC_CHECK_INT(h[5], 0xFBFF);
  const uint16_t* g = kt_data(outs[1]);
  KC_CHECK_INT(g[0], 0x3F80); /* 1 + 2^-8: to even, 1 */
  KC_CHECK_INT(g[1], 0x3F82); /* 1 + 3 * 2^-8: up, 1 + 2^-6 */
  KC_CHECK_INT(g[2], 0x8000);
  const int8_t* i = kt_data(outs[2]);
  KC_CHECK(i[0] == 127 && i[1] == -128 && i[2] == 0 && i[3] == -2);
  const float* w = kt_data(outs[3]);
  KC_CHECK(w[0] == 65504.0f && isinf(w[1]) && w[1] < 0 && isnan(w[2]) && w[3] == -2.5f);
  kt_release(outs, 4);
}

KC_TEST(hlo_types_half_reduce_rounds_each_step) {
  const kt_half_fmt* fmts[2] = {&kt_f16, &kt_bf16};
  for (int k = 0; k < 2; ++k) {
    const kt_half_fmt* f = fmts[k];
    const char* h = f->name;
    double u = ldexp(1.0, -f->mbits);
    /* Rows of [1, u/2, u/2, u/2]: each step's sum rounds back to 1 (as the
     * reducer computation, one add at a time, gives), where f32 would
     * accumulate 1 + 3u/2. */
    char text[4096];
    snprintf(text, sizeof text,
             "HloModule m\n"
             "add {\n x = %s[] parameter(0)\n y = %s[] parameter(1)\n ROOT s = %s[] add(x, y)\n}\n"
             "max {\n x = %s[] parameter(0)\n y = %s[] parameter(1)\n"
             " ROOT s = %s[] maximum(x, y)\n}\n"
             "ENTRY e {\n"
             " a = %s[2,4] constant({{1, %.17g, %.17g, %.17g}, {-1, 2, nan, 3}})\n"
             " z = %s[] constant(0)\n m = %s[] constant(-inf)\n"
             " rows = %s[2] reduce(a, z), dimensions={1}, to_apply=add\n"
             " cols = %s[4] reduce(a, m), dimensions={0}, to_apply=max\n"
             " rmax = %s[2] reduce(a, m), dimensions={1}, to_apply=max\n"
             " win = %s[2,3] reduce-window(a, z), window={size=1x2}, to_apply=add\n"
             " ROOT t = (%s[2], %s[4], %s[2], %s[2,3]) tuple(rows, cols, rmax, win)\n}\n",
             h, h, h, h, h, h, h, u / 2, u / 2, u / 2, h, h, h, h, h, h, h, h, h, h);
    kc_tensor* outs[4];
    kt_run_text(text, outs, 4);
    const uint16_t* rows = kt_data(outs[0]);
    kt_check_half(f, "reduce add", 0, rows[0], 1.0);
    kt_check_half(f, "reduce add", 1, rows[1], NAN);
    const uint16_t* cols = kt_data(outs[1]);
    double want_cols[4] = {1, 2, NAN, 3};
    for (int i = 0; i < 4; ++i) kt_check_half(f, "reduce max", i, cols[i], want_cols[i]);
    const uint16_t* rmax = kt_data(outs[2]);
    kt_check_half(f, "reduce max", 0, rmax[0], 1.0);
    kt_check_half(f, "reduce max", 1, rmax[1], NAN);
    const uint16_t* win = kt_data(outs[3]);
    double want_win[6] = {1, u, u, 1, NAN, NAN};
    for (int i = 0; i < 6; ++i) kt_check_half(f, "reduce-window add", i, win[i], want_win[i]);
    kt_release(outs, 4);
  }
}

/* ---- c64 and c128 ---------------------------------------------------------------- */

/* Operands (re, im), and the exponents of power. */
static const double kt_cx_in_parts[][2] = {{0.5, 1}, {-1.5, 2}, {0, 0},
                                           {-0.25, -3}, {2, 0}, {0, 0}};
static const double kt_cx_w_parts[][2] = {{2, 0}, {0.5, 0}, {2, 0}, {1, 1}, {-1, 0.5}, {0, 0}};
#define KT_CN 6

static double _Complex kt_cx(double re, double im) {
  double parts[2] = {re, im};
  double _Complex z;
  memcpy(&z, parts, sizeof z);
  return z;
}

static void kt_cx_list(char* buf, size_t cap, const double _Complex* v, int n) {
  size_t at = (size_t)snprintf(buf, cap, "{");
  for (int i = 0; i < n; ++i) {
    at += (size_t)snprintf(buf + at, cap - at, "%s(%.17g, %.17g)", i ? ", " : "", creal(v[i]),
                           cimag(v[i]));
  }
  snprintf(buf + at, cap - at, "}");
}

static double _Complex kt_cx_sign(double _Complex z) { return z == 0 ? z : z / cabs(z); }
static double _Complex kt_cx_rsqrt(double _Complex z) { return 1 / csqrt(z); }
static double _Complex kt_cx_log1p(double _Complex z) { return clog(1 + z); }
static double _Complex kt_cx_expm1(double _Complex z) { return cexp(z) - 1; }
static double _Complex kt_cx_neg(double _Complex z) { return -z; }
/* XLA's power: 0^0 = 1, 0^w = 0 for a real w > 0. */
static double _Complex kt_cx_pow(double _Complex z, double _Complex w) {
  if (z == 0) return w == 0 ? 1 : 0;
  return cpow(z, w);
}

static const struct {
  const char* name;
  double _Complex (*fn)(double _Complex);
} kt_cx_unary[] = {
    {"sign", kt_cx_sign},     {"sqrt", csqrt},          {"rsqrt", kt_cx_rsqrt},
    {"tanh", ctanh},          {"sine", csin},           {"cosine", ccos},
    {"tan", ctan},            {"log-plus-one", kt_cx_log1p}, {"exponential-minus-one", kt_cx_expm1},
    {"exponential", cexp},    {"log", clog},            {"negate", kt_cx_neg},
};

/* Element i of a complex result against the reference, within `tol` of
 * its modulus (or of 1 near 0). */
static void kt_check_cx(const char* type, const char* what, int i, const void* data,
                        double _Complex want, double tol) {
  double re, im;
  if (strcmp(type, "c64") == 0) {
    re = ((const float*)data)[2 * i];
    im = ((const float*)data)[2 * i + 1];
  } else {
    re = ((const double*)data)[2 * i];
    im = ((const double*)data)[2 * i + 1];
  }
  double scale = cabs(want) > 1 ? cabs(want) : 1;
  bool re_ok = (re != re && creal(want) != creal(want)) || fabs(re - creal(want)) <= tol * scale;
  bool im_ok = (im != im && cimag(want) != cimag(want)) || fabs(im - cimag(want)) <= tol * scale;
  if (!re_ok || !im_ok) {
    kt__fail(__FILE__, __LINE__, "%s %s element %d: got (%.17g, %.17g), want (%.17g, %.17g)",
             type, what, i, re, im, creal(want), cimag(want));
  }
}

KC_TEST(hlo_types_complex_math) {
  static const char* types[2][2] = {{"c64", "f32"}, {"c128", "f64"}};
  for (int k = 0; k < 2; ++k) {
    const char* t = types[k][0];
    double tol = k == 0 ? 2e-6 : 1e-13;
    double _Complex z[KT_CN], kt_cx_w[KT_CN];
    for (int i = 0; i < KT_CN; ++i) {
      z[i] = kt_cx(kt_cx_in_parts[i][0], kt_cx_in_parts[i][1]); /* exact in f32 too */
      kt_cx_w[i] = kt_cx(kt_cx_w_parts[i][0], kt_cx_w_parts[i][1]);
    }
    char a[1024], w[1024];
    kt_cx_list(a, sizeof a, z, KT_CN);
    kt_cx_list(w, sizeof w, kt_cx_w, KT_CN);
    for (size_t op = 0; op < sizeof kt_cx_unary / sizeof kt_cx_unary[0]; ++op) {
      /* sqrt, rsqrt, log, sign of 0 have their own rules (tested below) */
      kc_tensor* r = kt_run_op(t, t, kt_cx_unary[op].name, a, NULL, KT_CN);
      for (int i = 0; i < KT_CN; ++i) {
        if (z[i] == 0 && (strcmp(kt_cx_unary[op].name, "rsqrt") == 0 ||
                          strcmp(kt_cx_unary[op].name, "log") == 0)) {
          continue;
        }
        kt_check_cx(t, kt_cx_unary[op].name, i, kt_data(r), kt_cx_unary[op].fn(z[i]), tol);
      }
      kc_object_release(KC_OBJECT(r));
    }
    /* abs: the modulus, of the part type */
    kc_tensor* r = kt_run_op(t, types[k][1], "abs", a, NULL, KT_CN);
    for (int i = 0; i < KT_CN; ++i) {
      double got = k == 0 ? (double)((const float*)kt_data(r))[i] : ((const double*)kt_data(r))[i];
      KC_CHECK(fabs(got - cabs(z[i])) <= tol * (cabs(z[i]) + 1));
    }
    kc_object_release(KC_OBJECT(r));
    static const struct {
      const char* name;
      int op;
    } bins[] = {{"add", 0}, {"subtract", 1}, {"multiply", 2}, {"divide", 3}, {"power", 4}};
    for (size_t op = 0; op < 5; ++op) {
      r = kt_run_op(t, t, bins[op].name, a, w, KT_CN);
      for (int i = 0; i < KT_CN; ++i) {
        double _Complex x = z[i], y = kt_cx_w[i];
        double _Complex want = bins[op].op == 0   ? x + y
                               : bins[op].op == 1 ? x - y
                               : bins[op].op == 2 ? x * y
                               : bins[op].op == 3 ? x / y
                                                  : kt_cx_pow(x, y);
        kt_check_cx(t, bins[op].name, i, kt_data(r), want, tol);
      }
      kc_object_release(KC_OBJECT(r));
    }
  }
}

KC_TEST(hlo_types_complex_compare_convert_parts_reduce) {
  kc_tensor* outs[9];
  kt_run_text("HloModule m\n"
              "add {\n x = c64[] parameter(0)\n y = c64[] parameter(1)\n"
              " ROOT s = c64[] add(x, y)\n}\n"
              "mul {\n x = c128[] parameter(0)\n y = c128[] parameter(1)\n"
              " ROOT s = c128[] multiply(x, y)\n}\n"
              "ENTRY e {\n"
              " a = c64[4] constant({(1, 2), (1, -2), (-0, 0), (nan, 1)})\n"
              " b = c64[4] constant({(1, 2), (1, 2), (0, -0), (nan, 1)})\n"
              " eq = pred[4] compare(a, b), direction=EQ\n"
              " ne = pred[4] compare(a, b), direction=NE, type=FLOAT\n"
              " w = c128[4] convert(a)\n"
              " s = s32[2] constant({-3, 7})\n"
              " sc = c64[2] convert(s)\n"
              " re = f32[4] real(a)\n"
              " z = c64[] constant((0, 0))\n"
              " sum = c64[] reduce(a, z), dimensions={0}, to_apply=add\n"
              " c = c128[2,2] constant({{(1, 1), (0, 2)}, {(2, 0), (1, -1)}})\n"
              " one = c128[] constant((1, 0))\n"
              " prod = c128[2] reduce(c, one), dimensions={1}, to_apply=mul\n"
              " io = c64[3] iota(), iota_dimension=0\n"
              " ROOT t = (pred[4], pred[4], c128[4], c64[2], f32[4], c64[], c128[2], c64[3], "
              "c64[4]) tuple(eq, ne, w, sc, re, sum, prod, io, b)\n}\n",
              outs, 9);
  const uint8_t* eq = kt_data(outs[0]);
  const uint8_t* ne = kt_data(outs[1]);
  /* -0 equals 0; NaN equals nothing */
  KC_CHECK(eq[0] == 1 && eq[1] == 0 && eq[2] == 1 && eq[3] == 0);
  KC_CHECK(ne[0] == 0 && ne[1] == 1 && ne[2] == 0 && ne[3] == 1);
  const double* w = kt_data(outs[2]);
  KC_CHECK(w[0] == 1 && w[1] == 2 && w[2] == 1 && w[3] == -2 && isnan(w[6]) && w[7] == 1);
  const float* sc = kt_data(outs[3]);
  KC_CHECK(sc[0] == -3 && sc[1] == 0 && sc[2] == 7 && sc[3] == 0);
  const float* re = kt_data(outs[4]);
  KC_CHECK(re[0] == 1 && re[1] == 1 && re[2] == 0 && signbit(re[2]) && isnan(re[3]));
  const float* sum = kt_data(outs[5]);
  KC_CHECK(isnan(sum[0]) && sum[1] == 1); /* (1+2i)+(1-2i)+(-0+0i)+(nan+1i) */
  const double* prod = kt_data(outs[6]);
  /* (1+i)(2i) = -2+2i; 2(1-i) = 2-2i */
  KC_CHECK(prod[0] == -2 && prod[1] == 2 && prod[2] == 2 && prod[3] == -2);
  const float* io = kt_data(outs[7]);
  KC_CHECK(io[0] == 0 && io[1] == 0 && io[2] == 1 && io[3] == 0 && io[4] == 2 && io[5] == 0);
  kt_release(outs, 9);
}

KC_TEST(hlo_types_complex_refusals) {
  KT_COMPILE_FAILS("HloModule m\nENTRY e {\n a = c64[2] constant({(1, 2), (3, 4)})\n"
                   " ROOT r = c64[2] floor(a)\n}\n",
                   KC_UNIMPLEMENTED, "floor: element type c64 is not supported",
                   "f16, bf16, f32 and f64");
  KT_COMPILE_FAILS("HloModule m\nENTRY e {\n a = c128[2] constant({(1, 2), (3, 4)})\n"
                   " ROOT r = c128[2] clamp(a, a, a)\n}\n",
                   KC_UNIMPLEMENTED, "the result: element type c128 is not supported");
  KT_COMPILE_FAILS("HloModule m\nENTRY e {\n a = c64[2] constant({(1, 2), (3, 4)})\n"
                   " ROOT r = pred[2] compare(a, a), direction=GE\n}\n",
                   KC_INVALID_ARGUMENT, "expected EQ or NE for c64 operands", "GE");
  KT_COMPILE_FAILS("HloModule m\nENTRY e {\n a = c64[2] constant({(1, 2), (3, 4)})\n"
                   " ROOT r = c64[2] abs(a)\n}\n",
                   KC_INVALID_ARGUMENT,
                   "abs of c64[2]: expected a result of its part type f32 and the operand's "
                   "dims, got c64[2]");
  KT_COMPILE_FAILS("HloModule m\nENTRY e {\n a = c64[2] constant({(1, 2), (3, 4)})\n"
                   " ROOT r = pred[2] compare(a, a), direction=EQ, type=TOTALORDER\n}\n",
                   KC_INVALID_ARGUMENT, "attribute type: expected FLOAT for c64 operands");
}

/* ---- dot ------------------------------------------------------------------------ */

KC_TEST(hlo_types_dot_integer_widening) {
  /* s8 x s8 -> s32: products and sums beyond s8 (and beyond s16); the
   * lhs transposed (contracting its first dimension) to go through the
   * reordering copy after the conversion; u8 -> s32 and u8 -> u32 read 255
   * as 255. */
  kc_tensor* outs[3];
  kt_run_text("HloModule m\nENTRY e {\n"
              " a = s8[3,2] constant({{-128, 127}, {-128, 127}, {-128, -128}})\n"
              " b = s8[3,2] constant({{-128, 1}, {-128, 2}, {-128, 3}})\n"
              " d = s32[2,2] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n"
              " u = u8[1,3] constant({{255, 255, 1}})\n"
              " v = u8[3] constant({255, 2, 3})\n"
              " du = s32[1] dot(u, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
              " dv = u32[1] dot(u, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
              " ROOT t = (s32[2,2], s32[1], u32[1]) tuple(d, du, dv)\n}\n",
              outs, 3);
  const int32_t* d = kt_data(outs[0]);
  /* column 0 of a: -128 each; column 1: 127, 127, -128 */
  KC_CHECK_INT(d[0], 3 * 16384);                           /* (-128)(-128) x 3 */
  KC_CHECK_INT(d[1], -128 * 1 - 128 * 2 - 128 * 3);        /* -768 */
  KC_CHECK_INT(d[2], 127 * -128 * 2 + -128 * -128);        /* -16128 */
  KC_CHECK_INT(d[3], 127 * 1 + 127 * 2 - 128 * 3);
  KC_CHECK_INT(((const int32_t*)kt_data(outs[1]))[0], 255 * 255 + 255 * 2 + 3);
  KC_CHECK_INT(((const uint32_t*)kt_data(outs[2]))[0], 255 * 255 + 255 * 2 + 3);
  kt_release(outs, 3);
}

KC_TEST(hlo_types_dot_half_accumulates_in_f32) {
  const kt_half_fmt* fmts[2] = {&kt_f16, &kt_bf16};
  for (int k = 0; k < 2; ++k) {
    const kt_half_fmt* f = fmts[k];
    const char* h = f->name;
    double u = ldexp(1.0, -f->mbits);
    /* [1, u/2, u/2] . [1, 1, 1]: f32 accumulates 1 + u exactly, which the
     * half result holds; rounding every step would give 1. The f32 result
     * of the same operands keeps it too; and bf16 x bf16 -> f32 of
     * products beyond the half's precision. */
    char text[2048];
    snprintf(text, sizeof text,
             "HloModule m\nENTRY e {\n"
             " a = %s[1,3] constant({{1, %.17g, %.17g}})\n"
             " b = %s[3] constant({1, 1, 1})\n"
             " d = %s[1] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
             " w = f32[1] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
             " x = %s[2] constant({%.17g, 3})\n"
             " p = f32[] dot(x, x), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n"
             " ROOT t = (%s[1], f32[1], f32[]) tuple(d, w, p)\n}\n",
             h, u / 2, u / 2, h, h, h, 1 + u, h);
    kc_tensor* outs[3];
    kt_run_text(text, outs, 3);
    kt_check_half(f, "dot", 0, ((const uint16_t*)kt_data(outs[0]))[0], 1 + u);
    KC_CHECK(((const float*)kt_data(outs[1]))[0] == (float)(1 + u));
    /* (1 + u)^2 + 9 = 10 + 2u + u^2, exact in f32 */
    KC_CHECK(((const float*)kt_data(outs[2]))[0] == (float)(10 + 2 * u + u * u));
    kt_release(outs, 3);
  }
}

KC_TEST(hlo_types_dot_f32_to_f64_and_complex) {
  kc_tensor* outs[3];
  kt_run_text("HloModule m\nENTRY e {\n"
              " a = f32[2] constant({16777216, 1})\n"
              " d = f64[] dot(a, a), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n"
              " x = c64[2,2] constant({{(1, 1), (0, 2)}, {(2, 0), (1, -1)}})\n"
              " y = c64[2] constant({(1, -1), (3, 0)})\n"
              " c = c64[2] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
              " xw = c128[2,2] convert(x)\n"
              " cw = c128[2] dot(y, xw), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n"
              " ROOT t = (f64[], c64[2], c128[2]) tuple(d, c, cw)\n}\n",
              outs, 3);
  /* 2^48 + 1: exact in f64, not in f32 */
  KC_CHECK(((const double*)kt_data(outs[0]))[0] == 281474976710657.0);
  const float* c = kt_data(outs[1]);
  /* (1+i)(1-i) + 2i*3 = 2 + 6i; 2(1-i) + (1-i)3 = 5 - 5i */
  KC_CHECK(c[0] == 2 && c[1] == 6 && c[2] == 5 && c[3] == -5);
  const double* cw = kt_data(outs[2]);
  /* y . columns of x: (1-i)(1+i) + 3*2 = 8; (1-i)(2i) + 3(1-i) = 5 - i */
  KC_CHECK(cw[0] == 8 && cw[1] == 0 && cw[2] == 5 && cw[3] == -1);
  kt_release(outs, 3);
}

KC_TEST(hlo_types_half_subnormal_and_overflow_results) {
  /* Products of rows [x, y] by a multiply reducer: results in the
   * subnormal range (exact, ties to even down to 0 and up), overflow to
   * infinity, the sign of an underflow to 0, NaN. */
  const kt_half_fmt* fmts[2] = {&kt_f16, &kt_bf16};
  for (int k = 0; k < 2; ++k) {
    const kt_half_fmt* f = fmts[k];
    const char* h = f->name;
    double u = ldexp(1.0, -f->mbits);
    double tiny = ldexp(1.0, f->emin - f->mbits); /* the smallest subnormal */
    double big = ldexp(2.0 - u, f->emax);
    double x[8] = {ldexp(1.0, f->emin), tiny, 3 * tiny, tiny, big, -tiny, 1 + u, NAN};
    double y[8] = {0.5, 0.5, 0.5, 1.5, 2, 0.25, 1 + u, 1};
    char rows[1024];
    size_t at = (size_t)snprintf(rows, sizeof rows, "{");
    for (int i = 0; i < 8; ++i) {
      at += (size_t)snprintf(rows + at, sizeof rows - at, "%s{%.17g, %.17g}", i ? ", " : "",
                             x[i], y[i]);
    }
    snprintf(rows + at, sizeof rows - at, "}");
    char text[2048];
    snprintf(text, sizeof text,
             "HloModule m\n"
             "mul {\n a = %s[] parameter(0)\n b = %s[] parameter(1)\n"
             " ROOT p = %s[] multiply(a, b)\n}\n"
             "ENTRY e {\n x = %s[8,2] constant(%s)\n one = %s[] constant(1)\n"
             " ROOT r = %s[8] reduce(x, one), dimensions={1}, to_apply=mul\n}\n",
             h, h, h, h, rows, h, h);
    kc_tensor* out = NULL;
    kt_run_text(text, &out, 1);
    const uint16_t* r = kt_data(out);
    for (int i = 0; i < 8; ++i) {
      kt_check_half(f, "reduce multiply", i, r[i], kt_round(f, x[i] * y[i]));
    }
    KC_CHECK(kt_value(f, r[1]) == 0 && kt_value(f, r[2]) == 2 * tiny && isinf(kt_value(f, r[4])));
    KC_CHECK(r[5] == 0x8000u);
    kc_object_release(KC_OBJECT(out));
  }
}

/* add, multiply, maximum and minimum of pred values, as XLA computes
 * them: or, and, or, and (from the builder and from HLO text alike). */
KC_TEST(hlo_types_pred_arithmetic_is_logical) {
  kc_tensor* outs[4];
  kt_run_text("HloModule m\nENTRY e {\n"
              "  a = pred[4] constant({false, false, true, true})\n"
              "  b = pred[4] constant({false, true, false, true})\n"
              "  s = pred[4] add(a, b)\n  m = pred[4] multiply(a, b)\n"
              "  x = pred[4] maximum(a, b)\n  n = pred[4] minimum(a, b)\n"
              "  ROOT t = (pred[4], pred[4], pred[4], pred[4]) tuple(s, m, x, n)\n}\n",
              outs, 4);
  static const uint8_t want[4][4] = {{0, 1, 1, 1}, {0, 0, 0, 1}, {0, 1, 1, 1}, {0, 0, 0, 1}};
  for (int k = 0; k < 4; ++k) KC_CHECK(memcmp(kt_data(outs[k]), want[k], 4) == 0);
  kt_release(outs, 4);
  /* Not on pred operands with another result: still refused. */
  KT_COMPILE_FAILS("HloModule m\nENTRY e {\n  a = pred[2] parameter(0)\n"
                   "  ROOT s = s32[2] add(a, a)\n}\n",
                   KC_INVALID_ARGUMENT, "operand 0: expected s32[2], got pred[2]");
}
