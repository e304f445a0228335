/* The error of the f32 vector kernels of the element-wise instructions
 * (src/kernels/vmath.h), in units in the last place of the f32 result,
 * against the C library's double functions rounded to f32: over a sweep of
 * every 1031st bit pattern of all 2^32 (both signs, denormals, the largest
 * values, infinities and NaNs), plus special values, on each build the
 * processor runs (baseline and AVX2 + FMA). Then through the instructions,
 * on arrays large enough to be split across the thread pool, and the
 * split itself.
 *
 * The bounds, measured over every 97th bit pattern on both builds (the
 * largest errors seen): exp 0.98, expm1 1.53, log 0.83, log1p 0.91,
 * tanh 2.59, logistic 2.28, erf 1.10 (1.15 over all 2^32), sqrt 0.5
 * (correctly rounded), rsqrt 1.49. The checks allow a little more. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt_hlo.h"
#include "kernels/split.h"
#include "kernels/vmath.h"
#include "test.h"

static const char* const kt_vm_names[KC__VM_COUNT] = {
    "exp", "expm1", "log", "log1p", "tanh", "logistic", "erf", "sqrt", "rsqrt"};

/* The largest error allowed, in ulp. */
static const double kt_vm_bound[KC__VM_COUNT] = {1.0, 2.0, 1.0, 1.0, 3.0, 2.5, 1.5, 0.5, 1.5};

static double kt_vm_ref(kc__vmath_fn fn, double x) {
  switch (fn) {
    case KC__VM_EXP: return exp(x);
    case KC__VM_EXPM1: return expm1(x);
    case KC__VM_LOG: return log(x);
    case KC__VM_LOG1P: return log1p(x);
    case KC__VM_TANH: return tanh(x);
    case KC__VM_LOGISTIC: return x >= 0 ? 1 / (1 + exp(-x)) : exp(x) / (1 + exp(x));
    case KC__VM_ERF: return erf(x);
    case KC__VM_SQRT: return sqrt(x);
    default: return 1 / sqrt(x);
  }
}

/* The error of y in ulp of the f32 result nearest r; NaN, infinities and
 * zeros (with their sign) must match exactly (1e9 when they do not). */
static double kt_vm_ulps(float y, double r) {
  float rf = (float)r;
  if (isnan(r)) return isnan(y) ? 0 : 1e9;
  if (isnan(y)) return 1e9;
  if (isinf(rf) || isinf(y)) return y == rf ? 0 : 1e9;
  if (r == 0 || y == 0) return y == rf && signbit(y) == signbit(rf) ? 0 : 1e9;
  int e = ilogb(r);
  if (e < -126) e = -126;
  return fabs((double)y - r) / ldexp(1.0, e - 23);
}

/* The builds a processor may run (kc__vmath_levels): baseline, AVX2,
 * AVX-512. */
enum { KT_VM_LEVELS = 3 };

typedef struct kt_vm_worst {
  double ulps;
  float x, y;
} kt_vm_worst;

/* Runs fn on x[0..n) on every build; records the worst error of each. */
static void kt_vm_check_block(kc__vmath_fn fn, const float* x, int n, kt_vm_worst* worst) {
  enum { KT_BLOCK = 4096 };
  static float y[KT_BLOCK];
  static double ref[KT_BLOCK];
  for (int i = 0; i < n; ++i) ref[i] = kt_vm_ref(fn, (double)x[i]);
  KC_CHECK(kc__vmath_levels() <= KT_VM_LEVELS);
  for (int level = 0; level < kc__vmath_levels(); ++level) {
    kc__vmath_f32_at(level, fn, x, y, n);
    for (int i = 0; i < n; ++i) {
      double u = kt_vm_ulps(y[i], ref[i]);
      if (u > worst[level].ulps) worst[level] = (kt_vm_worst){u, x[i], y[i]};
    }
  }
}

static void kt_vm_report(kc__vmath_fn fn, const kt_vm_worst* worst, const char* what) {
  for (int level = 0; level < kc__vmath_levels(); ++level) {
    const kt_vm_worst* w = &worst[level];
    if (w->ulps > kt_vm_bound[fn]) {
      fprintf(stderr, "%s (%s, build %d): %.3f ulp at x = %a: got %a, want %a\n",
              kt_vm_names[fn], what, level, w->ulps, (double)w->x, (double)w->y,
              kt_vm_ref(fn, (double)w->x));
    }
    KC_CHECK(w->ulps <= kt_vm_bound[fn]);
  }
}

KC_TEST(hlo_math_ulp_sweep) {
  enum { KT_BLOCK = 4096, KT_STRIDE = 1031 };
  static float x[KT_BLOCK];
  for (int fn = 0; fn < KC__VM_COUNT; ++fn) {
    kt_vm_worst worst[KT_VM_LEVELS] = {{0, 0, 0}};
    int k = 0;
    for (uint64_t b = 0; b < (1ull << 32); b += KT_STRIDE) {
      uint32_t bits = (uint32_t)b;
      memcpy(&x[k], &bits, sizeof bits);
      if (++k == KT_BLOCK) {
        kt_vm_check_block((kc__vmath_fn)fn, x, k, worst);
        k = 0;
      }
    }
    kt_vm_check_block((kc__vmath_fn)fn, x, k, worst);
    kt_vm_report((kc__vmath_fn)fn, worst, "sweep");
  }
}

KC_TEST(hlo_math_ulp_special_values) {
  static const float x[] = {
      0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 0x1p-149f, -0x1p-149f, 0x1p-127f, 0x1p-126f,
      -0x1p-126f, 0x1.fffffep127f, -0x1.fffffep127f, 1.0f, -1.0f, 0.5f, 2.0f, 0x1p-25f, -0x1p-25f,
      /* where exp overflows and underflows, and its last denormals */
      88.7228394f, 88.7228317f, 88.72284f, 89.0f, -87.33654f, -103.2789f, -103.972084f,
      -103.97208f, -104.0f, -150.0f, 200.0f, -200.0f,
      /* expm1 and tanh reach -1 and 1; log1p at -1 */
      -17.0f, -17.4f, -18.0f, 8.9f, 9.0f, 9.1f, 9.2f, 0x1.fffffep-1f, -0x1.fffffep-1f,
      -0x1.000002p+0f, 1e-10f, -1e-10f, 1e-30f, -1e-30f,
      /* the ends of the reductions' ranges */
      0.34657359f, -0.34657359f, 0.70710677f, 1.41421354f, 1.41421366f, 0.29289323f,
      -0.29289323f, 0.41421356f, 3.9f, 3.92f, 4.0f, -4.0f, 0.99999994f, 1.0000001f};
  enum { KT_N = sizeof x / sizeof x[0] };
  for (int fn = 0; fn < KC__VM_COUNT; ++fn) {
    kt_vm_worst worst[KT_VM_LEVELS] = {{0, 0, 0}};
    /* Each value in every lane of a vector, and in the padded tail. */
    for (int lane = 0; lane < 9; ++lane) {
      float v[KT_N + 8];
      for (int i = 0; i < KT_N + 8; ++i) v[i] = 1.0f;
      memcpy(v + lane % 8, x, sizeof x);
      kt_vm_check_block((kc__vmath_fn)fn, v, KT_N + lane % 8, worst);
    }
    kt_vm_report((kc__vmath_fn)fn, worst, "special values");
  }
  /* The cases that the ulp check treats alike, exactly. */
  for (int level = 0; level < kc__vmath_levels(); ++level) {
    float in[8] = {-0.0f, 0.0f, -INFINITY, INFINITY, NAN, -1.0f, -2.0f, -1e-45f}, out[8];
    kc__vmath_f32_at(level, KC__VM_LOG, in, out, 8);
    KC_CHECK(out[0] == -INFINITY && out[1] == -INFINITY && isnan(out[2]) && out[3] == INFINITY);
    KC_CHECK(isnan(out[4]) && isnan(out[5]) && isnan(out[6]) && isnan(out[7]));
    kc__vmath_f32_at(level, KC__VM_EXP, in, out, 8);
    KC_CHECK(out[0] == 1 && out[1] == 1 && out[2] == 0 && !signbit(out[2]) && out[3] == INFINITY);
    KC_CHECK(isnan(out[4]));
    kc__vmath_f32_at(level, KC__VM_TANH, in, out, 8);
    KC_CHECK(out[0] == 0 && signbit(out[0]) && out[2] == -1 && out[3] == 1 && isnan(out[4]));
    kc__vmath_f32_at(level, KC__VM_LOGISTIC, in, out, 8);
    KC_CHECK(out[0] == 0.5f && out[2] == 0 && out[3] == 1 && isnan(out[4]));
    kc__vmath_f32_at(level, KC__VM_LOG1P, in, out, 8);
    KC_CHECK(out[0] == 0 && signbit(out[0]) && isnan(out[2]) && out[5] == -INFINITY);
    KC_CHECK(isnan(out[6]) && out[7] == -1e-45f);
    /* in place */
    kc__vmath_f32_at(level, KC__VM_EXPM1, in, in, 8);
    KC_CHECK(in[0] == 0 && signbit(in[0]) && in[2] == -1 && in[3] == INFINITY && isnan(in[4]));
  }
}

/* exp, and the logistic through it, take a shorter path for a vector
 * whose lanes all give normal results: the same bits as the general path,
 * which a vector takes when one of its lanes is out of that range (here a
 * NaN every 4 lanes, so that every vector of every build has one). */
KC_TEST(hlo_math_exp_fast_and_general_paths_agree) {
  enum { KT_N = 256 };
  static float x[KT_N], mixed[KT_N], y[KT_N], z[KT_N];
  for (int i = 0; i < KT_N; ++i) {
    /* [-86, 88], the ends included, and values near 0. */
    x[i] = i == 0 ? -86.0f : i == 1 ? 88.0f : -86.0f + 174.0f * (float)i / KT_N;
    if (i % 16 == 2) x[i] = ldexpf((float)i, -30);
    mixed[i] = i % 4 == 3 ? NAN : x[i];
  }
  static const kc__vmath_fn fns[] = {KC__VM_EXP, KC__VM_LOGISTIC};
  for (int level = 0; level < kc__vmath_levels(); ++level) {
    for (size_t f = 0; f < sizeof fns / sizeof fns[0]; ++f) {
      kc__vmath_f32_at(level, fns[f], x, y, KT_N);
      kc__vmath_f32_at(level, fns[f], mixed, z, KT_N);
      for (int i = 0; i < KT_N; ++i) {
        if (i % 4 == 3) {
          KC_CHECK(isnan(z[i]));
        } else if (memcmp(&y[i], &z[i], sizeof y[i]) != 0) {
          fprintf(stderr, "%s, build %d: x = %a: %a alone, %a next to a NaN\n", kt_vm_names[fns[f]],
                  level, (double)x[i], (double)y[i], (double)z[i]);
          KC_CHECK(false);
        }
      }
    }
  }
}

/* The instructions on 2^20 + 3 elements of x = (i - 2^19) * scale, so
 * that the work is split across the pool (and the tail is not a whole
 * vector): each result is the vector kernel's, and within its bound. */
static void kt_vm_instruction(const char* op, kc__vmath_fn fn, const char* scale) {
  enum { KT_N = (1 << 20) + 3 };
  char text[512];
  snprintf(text, sizeof text,
           "HloModule m\nENTRY e {\n"
           "  i = s32[%d] iota(), iota_dimension=0\n"
           "  c = s32[] constant(%d)\n  h = s32[%d] broadcast(c), dimensions={}\n"
           "  j = s32[%d] subtract(i, h)\n  f = f32[%d] convert(j)\n"
           "  k = f32[] constant(%s)\n  s = f32[%d] broadcast(k), dimensions={}\n"
           "  x = f32[%d] multiply(f, s)\n  ROOT y = f32[%d] %s(x)\n}\n",
           KT_N, 1 << 19, KT_N, KT_N, KT_N, scale, KT_N, KT_N, KT_N, op);
  kc_tensor* out = NULL;
  kt_run_text(text, &out, 1);
  const float* y = kt_data(out);
  float s = strtof(scale, NULL);
  static float x[KT_N], want[KT_N];
  for (int i = 0; i < KT_N; ++i) x[i] = (float)(i - (1 << 19)) * s;
  kc__vmath_f32(fn, x, want, KT_N);
  int64_t bad = -1;
  double worst = 0;
  for (int i = 0; i < KT_N; ++i) {
    bool same = memcmp(&y[i], &want[i], sizeof(float)) == 0 || (isnan(y[i]) && isnan(want[i]));
    if (!same && bad < 0) bad = i;
    double u = kt_vm_ulps(y[i], kt_vm_ref(fn, (double)x[i]));
    if (u > worst) worst = u;
  }
  if (bad >= 0) {
    fprintf(stderr, "%s: element %lld (x = %a): got %a, want %a\n", op, (long long)bad,
            (double)x[bad], (double)y[bad], (double)want[bad]);
  }
  KC_CHECK(bad < 0);
  KC_CHECK(worst <= kt_vm_bound[fn]);
  kt_release(&out, 1);
}

KC_TEST(hlo_math_ulp_instructions) {
  kt_vm_instruction("tanh", KC__VM_TANH, "1e-5");
  kt_vm_instruction("exponential", KC__VM_EXP, "2e-4");
  kt_vm_instruction("log", KC__VM_LOG, "3e-3");
  kt_vm_instruction("logistic", KC__VM_LOGISTIC, "1e-4");
  kt_vm_instruction("log-plus-one", KC__VM_LOG1P, "1e-6");
  kt_vm_instruction("exponential-minus-one", KC__VM_EXPM1, "1e-4");
  kt_vm_instruction("erf", KC__VM_ERF, "1e-5");
  kt_vm_instruction("sqrt", KC__VM_SQRT, "0.5");
  kt_vm_instruction("rsqrt", KC__VM_RSQRT, "0.5");
}

/* kc__split_run (src/kernels/split.c, compiled into the runner): each
 * element once, ranges that start on a block boundary, the pool used for
 * large work and the caller alone for small. */
typedef struct kt_split_seen {
  uint8_t* hits;
  int ranges;       /* atomic */
  int misaligned;   /* atomic */
} kt_split_seen;

static void kt_split_body(void* p, int64_t begin, int64_t end) {
  kt_split_seen* seen = p;
  for (int64_t i = begin; i < end; ++i) seen->hits[i]++;
  __atomic_add_fetch(&seen->ranges, 1, __ATOMIC_RELAXED);
  if (begin % 4096 != 0) __atomic_add_fetch(&seen->misaligned, 1, __ATOMIC_RELAXED);
}

KC_TEST(hlo_math_split_covers_once) {
  kc_thread_pool* pool = NULL;
  KC_CHECK_OK(kc_thread_pool_create(4, &pool));
  enum { KT_N = (1 << 20) + 5 };
  static uint8_t hits[KT_N];
  kt_split_seen seen = {hits, 0, 0};
  kc__split_run(pool, KT_N, 1.0, kt_split_body, &seen);
  int64_t wrong = 0;
  for (int64_t i = 0; i < KT_N; ++i) wrong += hits[i] != 1;
  KC_CHECK_INT(wrong, 0);
  KC_CHECK(seen.ranges > 1); /* a millisecond of work is shared */
  KC_CHECK_INT(seen.misaligned, 0);
  /* 1000 elements at a nanosecond: one range, on the caller. */
  memset(hits, 0, 1000);
  seen.ranges = 0;
  kc__split_run(pool, 1000, 1.0, kt_split_body, &seen);
  KC_CHECK_INT(seen.ranges, 1);
  for (int i = 0; i < 1000; ++i) KC_CHECK(hits[i] == 1);
  kc__split_run(pool, 0, 1.0, kt_split_body, &seen);
  KC_CHECK_INT(seen.ranges, 1);
  kc_thread_pool_destroy(pool);
}
