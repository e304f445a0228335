/* reduce-window: one operand and variadic, padding, base and window
 * dilation, native and general reducers. The expected values of the
 * reducers that are no monoid are what JAX 0.10.2 (XLA:CPU) computes for
 * the same windows: padding and holes are skipped, never folded in as the
 * initial value, and the window is folded in row-major order. */
#include <math.h>
#include <string.h>

#include "kt_hlo.h"

/* f(a, b) = 2a + b: neither commutative nor associative, so the result
 * shows which elements were folded and in which order. */
#define KT_TWICE_PLUS                                                   \
  "%twice_plus (a: f32[], b: f32[]) -> f32[] {\n"                       \
  "  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n"              \
  "  %two = f32[] constant(2)\n  %aa = f32[] multiply(%a, %two)\n"      \
  "  ROOT %s = f32[] add(%aa, %b)\n}\n"

#define KT_ADD \
  "%add (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n" \
  "  %b = f32[] parameter(1)\n  ROOT %s = f32[] add(%a, %b)\n}\n"

static void kt_check_floats(const float* got, const float* want, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (got[i] != want[i]) {
      KC_CHECK_INT((int64_t)i, -1); /* names the position */
      KC_CHECK(got[i] == want[i]);
      return;
    }
  }
}

KC_TEST(hlo_reduce_window_skips_padding_and_holes) {
  static const char text[] =
      "HloModule m\n" KT_TWICE_PLUS KT_ADD
      "ENTRY e {\n"
      "  %x = f32[5] constant({1, 2, 3, 4, 5})\n"
      "  %init = f32[] constant(100)\n  %ten = f32[] constant(10)\n"
      "  %y = f32[4] constant({1, 2, 3, 4})\n"
      "  %p = f32[7] reduce-window(%x, %init), window={size=3 pad=2_2}, to_apply=%twice_plus\n"
      "  %b = f32[7] reduce-window(%x, %init), window={size=3 lhs_dilate=2}, to_apply=%twice_plus\n"
      "  %w = f32[7] reduce-window(%x, %init), window={size=3 pad=1_1 lhs_dilate=2 rhs_dilate=2}, "
      "to_apply=%twice_plus\n"
      /* a native reducer with an initial value that is not its identity:
       * 10 once, however much padding the window covers */
      "  %s = f32[2] reduce-window(%y, %ten), window={size=3 stride=2 pad=1_0}, to_apply=%add\n"
      "  ROOT %t = (f32[7], f32[7], f32[7], f32[2]) tuple(%p, %b, %w, %s)\n"
      "}\n";
  kc_tensor* outs[4];
  kt_run_text(text, outs, 4);
  static const float p[7] = {201, 404, 811, 818, 825, 413, 205};
  static const float b[7] = {404, 202, 407, 203, 410, 204, 413};
  static const float w[7] = {100, 811, 100, 818, 100, 825, 100};
  kt_check_floats(kt_data(outs[0]), p, 7);
  kt_check_floats(kt_data(outs[1]), b, 7);
  kt_check_floats(kt_data(outs[2]), w, 7);
  const float* s = kt_data(outs[3]);
  KC_CHECK(s[0] == 10 + 1 + 2 && s[1] == 10 + 2 + 3 + 4);
  kt_release(outs, 4);
}

/* Two operands, a reducer of four scalars giving a tuple, in 2-D with
 * strides, asymmetric padding, base dilation along 0 and window dilation
 * along 1: jax.lax.reduce_window((a, b), (1, 5), f, (2, 3), (2, 1),
 * ((1, 0), (2, 1)), base_dilation=(2, 1), window_dilation=(1, 2)) with
 * f((av, ai), (ev, ei)) = (2 av + ev, 3 ai - ei). */
KC_TEST(hlo_reduce_window_variadic) {
  static const char text[] =
      "HloModule m\n"
      "%red (av: f32[], ai: s32[], ev: f32[], ei: s32[]) -> (f32[], s32[]) {\n"
      "  %av = f32[] parameter(0)\n  %ai = s32[] parameter(1)\n"
      "  %ev = f32[] parameter(2)\n  %ei = s32[] parameter(3)\n"
      "  %two = f32[] constant(2)\n  %three = s32[] constant(3)\n"
      "  %a2 = f32[] multiply(%av, %two)\n  %v = f32[] add(%a2, %ev)\n"
      "  %a3 = s32[] multiply(%ai, %three)\n  %i = s32[] subtract(%a3, %ei)\n"
      "  ROOT %r = (f32[], s32[]) tuple(%v, %i)\n}\n"
      "ENTRY e {\n"
      "  %a = f32[3,4] constant({{-2, -1.5, -1, -0.5}, {0, 0.5, 1, 1.5}, {2, 2.5, 3, 3.5}})\n"
      "  %b = s32[3,4] constant({{-7, -4, -1, 2}, {5, 8, 11, 14}, {17, 20, 23, 26}})\n"
      "  %one = f32[] constant(1)\n  %five = s32[] constant(5)\n"
      "  ROOT %w = (f32[3,3], s32[3,3]) reduce-window(%a, %b, %one, %five), "
      "window={size=2x3 stride=2x1 pad=1_0x2_1 lhs_dilate=2x1 rhs_dilate=1x2}, to_apply=%red\n"
      "}\n";
  kc_tensor* outs[2];
  kt_run_text(text, outs, 2);
  static const float v[9] = {-1.0f, 0.5f, -1.0f, 5.0f, 6.5f, 5.0f, 11.0f, 12.5f, 11.0f};
  static const int32_t i[9] = {67, 55, 67, 19, 7, 19, -29, -41, -29};
  kt_check_floats(kt_data(outs[0]), v, 9);
  KC_CHECK(memcmp(kt_data(outs[1]), i, sizeof i) == 0);
  kt_release(outs, 2);
}

/* Runs a one-parameter program on `x`; the result goes to *out. */
static void kt_run_one(const char* text, const float* x, const int64_t* dims, int32_t ndim,
                       kc_tensor** out) {
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_parse(kc_sv(text), &p));
  kc_executable* exe = NULL;
  KC_CHECK_OK(kc_program_compile(p, NULL, &exe));
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = (void*)(uintptr_t)x;
  t.device = kc_device_cpu();
  t.ndim = ndim;
  t.dtype = (DLDataType){kDLFloat, 32, 1};
  t.shape = (int64_t*)(uintptr_t)dims;
  const DLTensor* args[1] = {&t};
  KC_CHECK_OK(kc_executable_execute(exe, args, 1, NULL, out));
  kc_executable_destroy(exe);
  kc_program_destroy(p);
}

/* A 2x2 max pool with stride 2 in NHWC and a 3x3 SAME average pool's sum,
 * large enough to be split over the thread pool, against loops written
 * here; the max pool sees NaN (it wins, as in XLA) and -inf. */
KC_TEST(hlo_reduce_window_pools_nhwc) {
  enum { N = 2, H = 34, W = 30, C = 24 };
  static float x[N * H * W * C];
  for (int k = 0; k < N * H * W * C; ++k) x[k] = (float)((k * 7919) % 1013) * 0.25f - 100.0f;
  x[5 * C + 3] = NAN;
  x[(W + 1) * C] = -INFINITY;
  static const char text[] =
      "HloModule m\n" KT_ADD
      "%max (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
      "  %b = f32[] parameter(1)\n  ROOT %s = f32[] maximum(%b, %a)\n}\n"
      "ENTRY e {\n  %x = f32[2,34,30,24] parameter(0)\n"
      "  %ninf = f32[] constant(-inf)\n  %zero = f32[] constant(0)\n"
      "  %m = f32[2,17,15,24] reduce-window(%x, %ninf), window={size=1x2x2x1 stride=1x2x2x1}, "
      "to_apply=%max\n"
      "  %s = f32[2,34,30,24] reduce-window(%x, %zero), window={size=1x3x3x1 pad=0_0x1_1x1_1x0_0}, "
      "to_apply=%add\n"
      "  ROOT %t = (f32[2,17,15,24], f32[2,34,30,24]) tuple(%m, %s)\n}\n";
  static const int64_t dims[4] = {N, H, W, C};
  kc_tensor* outs[2];
  kt_run_one(text, x, dims, 4, outs);
  const float* m = kt_data(outs[0]);
  const float* s = kt_data(outs[1]);
  size_t bad = 0;
  for (int n = 0; n < N; ++n) {
    for (int i = 0; i < H; ++i) {
      for (int j = 0; j < W; ++j) {
        for (int c = 0; c < C; ++c) {
          float sum = 0, mx = -INFINITY;
          for (int di = -1; di <= 1; ++di) {
            for (int dj = -1; dj <= 1; ++dj) {
              int a = i + di, b = j + dj;
              if (a >= 0 && a < H && b >= 0 && b < W) sum += x[((n * H + a) * W + b) * C + c];
            }
          }
          float got_sum = s[((n * H + i) * W + j) * C + c];
          if (!(got_sum == sum || (isnan(got_sum) && isnan(sum)))) bad++;
          if (i % 2 || j % 2) continue;
          for (int di = 0; di < 2; ++di) {
            for (int dj = 0; dj < 2; ++dj) {
              float v = x[((n * H + i + di) * W + j + dj) * C + c];
              mx = isnan(mx) || isnan(v) ? NAN : (v > mx ? v : mx);
            }
          }
          float got = m[((n * (H / 2) + i / 2) * (W / 2) + j / 2) * C + c];
          if (!(got == mx || (isnan(got) && isnan(mx)))) bad++;
        }
      }
    }
  }
  KC_CHECK_INT((int64_t)bad, 0);
  KC_CHECK(isnan(m[(0 * 15 + 2) * C + 3])); /* x[0, 0, 5, 3] is NaN */
  kt_release(outs, 2);
}

/* Integer and pred operands with native reducers, over NCHW's last two
 * dimensions (no passing row): minima of s32 and an or of pred. */
KC_TEST(hlo_reduce_window_int_and_pred) {
  static const char text[] =
      "HloModule m\n"
      "%min (a: s32[], b: s32[]) -> s32[] {\n  %a = s32[] parameter(0)\n"
      "  %b = s32[] parameter(1)\n  ROOT %s = s32[] minimum(%a, %b)\n}\n"
      "%or (a: pred[], b: pred[]) -> pred[] {\n  %a = pred[] parameter(0)\n"
      "  %b = pred[] parameter(1)\n  ROOT %s = pred[] or(%a, %b)\n}\n"
      "ENTRY e {\n"
      "  %x = s32[1,2,3] constant({{{5, -3, 7}, {2, 9, -8}}})\n"
      "  %big = s32[] constant(4)\n"
      "  %q = pred[2,3] constant({{false, true, false}, {false, false, false}})\n"
      "  %f = pred[] constant(false)\n"
      "  %m = s32[1,2,2] reduce-window(%x, %big), window={size=1x2x2 pad=0_0x0_1x0_0}, "
      "to_apply=%min\n"
      "  %o = pred[2,2] reduce-window(%q, %f), window={size=1x2}, to_apply=%or\n"
      "  ROOT %t = (s32[1,2,2], pred[2,2]) tuple(%m, %o)\n}\n";
  kc_tensor* outs[2];
  kt_run_text(text, outs, 2);
  static const int32_t m[4] = {-3, -8, 2, -8};
  static const uint8_t o[4] = {1, 1, 0, 0};
  KC_CHECK(memcmp(kt_data(outs[0]), m, sizeof m) == 0);
  KC_CHECK(memcmp(kt_data(outs[1]), o, sizeof o) == 0);
  kt_release(outs, 2);
}

#define KT_RED2                                                           \
  "%red (av: f32[], ai: s32[], ev: f32[], ei: s32[]) -> (f32[], s32[]) {\n" \
  "  %av = f32[] parameter(0)\n  %ai = s32[] parameter(1)\n"              \
  "  %ev = f32[] parameter(2)\n  %ei = s32[] parameter(3)\n"              \
  "  ROOT %r = (f32[], s32[]) tuple(%ev, %ei)\n}\n"

KC_TEST(hlo_reduce_window_refusals) {
  KT_COMPILE_FAILS("HloModule m\n%add (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
                   "  %b = f32[] parameter(1)\n  ROOT %s = f32[] add(%a, %b)\n}\n"
                   "ENTRY e {\n a = f32[4] parameter(0)\n z = f32[] constant(0)\n"
                   " ROOT r = f32[3] reduce-window(a, z), window={size=2 "
                   "lhs_dilate=4611686018427387904}, to_apply=%add\n}\n",
                   KC_INVALID_ARGUMENT, "dimension 0: the window, padding and dilations overflow "
                   "64 bits");
  KT_COMPILE_FAILS("HloModule m\n" KT_RED2
                   "ENTRY e {\n a = f32[4] parameter(0)\n b = s32[3] parameter(1)\n"
                   " z = f32[] constant(0)\n i = s32[] constant(0)\n"
                   " ROOT r = (f32[3], s32[3]) reduce-window(a, b, z, i), window={size=2}, "
                   "to_apply=%red\n}\n",
                   KC_INVALID_ARGUMENT, "operand 1: expected the dims of operand 0, got s32[3]");
  KT_COMPILE_FAILS("HloModule m\n" KT_RED2
                   "ENTRY e {\n a = f32[4] parameter(0)\n b = s32[4] parameter(1)\n"
                   " z = f32[] constant(0)\n i = f32[] constant(0)\n"
                   " ROOT r = (f32[3], s32[3]) reduce-window(a, b, z, i), window={size=2}, "
                   "to_apply=%red\n}\n",
                   KC_INVALID_ARGUMENT, "operand 3 (initial value 1): expected s32[], got f32[]");
  KT_COMPILE_FAILS("HloModule m\n" KT_RED2
                   "ENTRY e {\n a = f32[4] parameter(0)\n b = s32[4] parameter(1)\n"
                   " z = f32[] constant(0)\n i = s32[] constant(0)\n"
                   " ROOT r = (f32[3], s32[2]) reduce-window(a, b, z, i), window={size=2}, "
                   "to_apply=%red\n}\n",
                   KC_INVALID_ARGUMENT, "result 1: expected s32[3], got s32[2]");
  KT_COMPILE_FAILS("HloModule m\n" KT_RED2
                   "ENTRY e {\n a = f32[4] parameter(0)\n b = s32[4] parameter(1)\n"
                   " z = f32[] constant(0)\n i = s32[] constant(0)\n"
                   " ROOT r = f32[3] reduce-window(a, b, z, i), window={size=2}, "
                   "to_apply=%red\n}\n",
                   KC_INVALID_ARGUMENT, "reduce-window of 2 operands: expected a tuple of one "
                   "array per operand, got f32[3]");
  KT_COMPILE_FAILS("HloModule m\n" KT_RED2
                   "ENTRY e {\n a = f32[4] parameter(0)\n b = f32[4] parameter(1)\n"
                   " z = f32[] constant(0)\n"
                   " ROOT r = (f32[3], f32[3]) reduce-window(a, b, z, z), window={size=2}, "
                   "to_apply=%red\n}\n",
                   KC_INVALID_ARGUMENT, "to_apply 'red': parameter 1: expected f32[], got s32[]");
  KT_COMPILE_FAILS("HloModule m\n" KT_ADD
                   "ENTRY e {\n a = f32[4] parameter(0)\n z = f32[] constant(0)\n"
                   " ROOT r = f32[3] reduce-window(a, z, z), window={size=2}, to_apply=%add\n}\n",
                   KC_INVALID_ARGUMENT, "expected N operands then N initial values");
  KT_COMPILE_FAILS("HloModule m\n" KT_ADD
                   "ENTRY e {\n a = f32[4,2] parameter(0)\n z = f32[] constant(0)\n"
                   " ROOT r = f32[3,2] reduce-window(a, z), window={size=2x1 stride=0x1}, "
                   "to_apply=%add\n}\n",
                   KC_INVALID_ARGUMENT, "window window_strides: entry 0: expected at least 1, got 0");
}
