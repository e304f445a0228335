/* reduce with JAX's argmax and argmin reducers (folded natively) against
 * what JAX 0.10.2 computes, and against the same reducer written so that
 * it runs as its computation: NaN wins, ties go to the lower index, -0
 * equals 0. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kt_hlo.h"

/* JAX's reducer; DIR is GT for argmax, LT for argmin. SWAP writes the
 * first compare the other way round (b < a for a > b), which computes
 * the same but is not the form the native fold recognises. */
#define KT_ARG_REDUCER(NAME, V, I, CMP)                                            \
  "%" NAME " (av: " V "[], ai: " I "[], bv: " V "[], bi: " I "[]) -> (" V "[], " I \
  "[]) {\n"                                                                        \
  "  %av = " V "[] parameter(0)\n  %ai = " I "[] parameter(1)\n"                   \
  "  %bv = " V "[] parameter(2)\n  %bi = " I "[] parameter(3)\n"                   \
  "  %gt = pred[] compare(" CMP "\n"                                               \
  "  %ne = pred[] compare(%av, %av), direction=NE\n"                               \
  "  %keep = pred[] or(%gt, %ne)\n"                                                \
  "  %v = " V "[] select(%keep, %av, %bv)\n"                                       \
  "  %eq = pred[] compare(%av, %bv), direction=EQ\n"                               \
  "  %lt = pred[] compare(%ai, %bi), direction=LT\n"                               \
  "  %tie = pred[] and(%eq, %lt)\n"                                                \
  "  %k2 = pred[] or(%keep, %tie)\n"                                               \
  "  %i = " I "[] select(%k2, %ai, %bi)\n"                                         \
  "  ROOT %r = (" V "[], " I "[]) tuple(%v, %i)\n}\n"

static void kt_arg_program(char* text, size_t cap, const char* v, const char* idx) {
  char head[4096];
  snprintf(head, sizeof head, "%s%s%s",
           "HloModule m\n",
           KT_ARG_REDUCER("amax", "VT", "IT", "%av, %bv), direction=GT")
               KT_ARG_REDUCER("amin", "VT", "IT", "%av, %bv), direction=LT")
                   KT_ARG_REDUCER("amax_general", "VT", "IT", "%bv, %av), direction=LT"),
           "ENTRY e {\n"
           "  x = VT[4,5] constant({{1, nan, 3, nan, 0}, {2, 5, 5, -1, 5}, {-0, 0, -0, 0, -inf}, "
           "{inf, -inf, inf, 7, 7}})\n"
           "  i1 = IT[4,5] iota(), iota_dimension=1\n  i0 = IT[4,5] iota(), iota_dimension=0\n"
           "  ninf = VT[] constant(-inf)\n  pinf = VT[] constant(inf)\n  z = IT[] constant(0)\n"
           "  a = (VT[4], IT[4]) reduce(x, i1, ninf, z), dimensions={1}, to_apply=%amax\n"
           "  b = (VT[4], IT[4]) reduce(x, i1, pinf, z), dimensions={1}, to_apply=%amin\n"
           "  c = (VT[5], IT[5]) reduce(x, i0, ninf, z), dimensions={0}, to_apply=%amax\n"
           "  d = (VT[5], IT[5]) reduce(x, i0, pinf, z), dimensions={0}, to_apply=%amin\n"
           "  g = (VT[4], IT[4]) reduce(x, i1, ninf, z), dimensions={1}, "
           "to_apply=%amax_general\n"
           "  ROOT t = ((VT[4], IT[4]), (VT[4], IT[4]), (VT[5], IT[5]), (VT[5], IT[5]), "
           "(VT[4], IT[4])) tuple(a, b, c, d, g)\n}\n");
  /* VT and IT become the value and index types. */
  size_t n = 0;
  for (const char* p = head; *p && n + 4 < cap; ++p) {
    if (p[0] == 'V' && p[1] == 'T') {
      n += (size_t)snprintf(text + n, cap - n, "%s", v);
      ++p;
    } else if (p[0] == 'I' && p[1] == 'T') {
      n += (size_t)snprintf(text + n, cap - n, "%s", idx);
      ++p;
    } else {
      text[n++] = *p;
    }
  }
  text[n] = 0;
}

static int64_t kt_index(const kc_tensor* t, int k) {
  const DLTensor* d = kc_tensor_get_dltensor((kc_tensor*)(uintptr_t)t);
  if (d->dtype.bits == 64) return ((const int64_t*)d->data)[k];
  return ((const int32_t*)d->data)[k];
}

static double kt_value(const kc_tensor* t, int k) {
  const DLTensor* d = kc_tensor_get_dltensor((kc_tensor*)(uintptr_t)t);
  if (d->dtype.bits == 64) return ((const double*)d->data)[k];
  return ((const float*)d->data)[k];
}

static void kt_check_arg(const char* v, const char* idx) {
  static char text[8192];
  kt_arg_program(text, sizeof text, v, idx);
  kc_tensor* outs[10];
  kt_run_text(text, outs, 10);
  static const int64_t amax1[4] = {1, 1, 0, 0}, amin1[4] = {1, 3, 4, 1};
  static const int64_t amax0[5] = {3, 0, 3, 0, 3}, amin0[5] = {2, 0, 2, 0, 2};
  for (int k = 0; k < 4; ++k) {
    KC_CHECK_INT(kt_index(outs[1], k), amax1[k]);
    KC_CHECK_INT(kt_index(outs[3], k), amin1[k]);
    /* the general path gives the same bits */
    KC_CHECK_INT(kt_index(outs[9], k), amax1[k]);
    double a = kt_value(outs[0], k), g = kt_value(outs[8], k);
    KC_CHECK(memcmp(&a, &g, sizeof a) == 0);
  }
  for (int k = 0; k < 5; ++k) {
    KC_CHECK_INT(kt_index(outs[5], k), amax0[k]);
    KC_CHECK_INT(kt_index(outs[7], k), amin0[k]);
  }
  KC_CHECK(isnan(kt_value(outs[0], 0)) && kt_value(outs[0], 1) == 5);
  KC_CHECK(kt_value(outs[2], 2) == -INFINITY && kt_value(outs[6], 4) == -INFINITY);
  /* equal zeros: the index of the first, the value of the last taken */
  KC_CHECK(kt_value(outs[0], 2) == 0 && !signbit(kt_value(outs[0], 2)));
  kt_release(outs, 10);
}

KC_TEST(hlo_reduce_argmax_argmin) {
  kt_check_arg("f32", "s32");
  kt_check_arg("f64", "s64");
  kt_check_arg("f32", "s64");
}
