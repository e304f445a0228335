/* while runs its body on two sets of state buffers in turn: the result
 * is right after an even and an odd number of iterations, with zero
 * iterations, and with a leaf of no elements in the state. */
#include <stdio.h>
#include <string.h>

#include "kt_hlo.h"

static void kt_count_to(int32_t limit, int32_t want_i, float want_x) {
  char text[2048];
  snprintf(text, sizeof text,
           "HloModule m\n"
           "%%cond (s: (s32[], f32[3], f32[0])) -> pred[] {\n"
           "  %%s = (s32[], f32[3], f32[0]) parameter(0)\n"
           "  %%i = s32[] get-tuple-element(%%s), index=0\n"
           "  %%n = s32[] constant(%d)\n"
           "  ROOT %%lt = pred[] compare(%%i, %%n), direction=LT\n}\n"
           "%%body (s: (s32[], f32[3], f32[0])) -> (s32[], f32[3], f32[0]) {\n"
           "  %%s = (s32[], f32[3], f32[0]) parameter(0)\n"
           "  %%i = s32[] get-tuple-element(%%s), index=0\n"
           "  %%x = f32[3] get-tuple-element(%%s), index=1\n"
           "  %%e = f32[0] get-tuple-element(%%s), index=2\n"
           "  %%one = s32[] constant(1)\n  %%j = s32[] add(%%i, %%one)\n"
           "  %%two = f32[] constant(2)\n  %%tb = f32[3] broadcast(%%two), dimensions={}\n"
           "  %%y = f32[3] multiply(%%x, %%tb)\n"
           "  ROOT %%t = (s32[], f32[3], f32[0]) tuple(%%j, %%y, %%e)\n}\n"
           "ENTRY e {\n  %%z = s32[] constant(0)\n  %%x = f32[3] constant({1, -1, 0.5})\n"
           "  %%e = f32[0] constant({})\n"
           "  %%s = (s32[], f32[3], f32[0]) tuple(%%z, %%x, %%e)\n"
           "  %%w = (s32[], f32[3], f32[0]) while(%%s), condition=%%cond, body=%%body\n"
           "  %%i = s32[] get-tuple-element(%%w), index=0\n"
           "  %%r = f32[3] get-tuple-element(%%w), index=1\n"
           "  ROOT %%t = (s32[], f32[3]) tuple(%%i, %%r)\n}\n",
           (int)limit);
  kc_tensor* outs[2];
  kt_run_text(text, outs, 2);
  KC_CHECK_INT(*(const int32_t*)kt_data(outs[0]), want_i);
  const float* x = kt_data(outs[1]);
  KC_CHECK(x[0] == want_x && x[1] == -want_x && x[2] == 0.5f * want_x);
  kt_release(outs, 2);
}

KC_TEST(hlo_while_even_odd_and_no_iterations) {
  kt_count_to(0, 0, 1);
  kt_count_to(1, 1, 2);
  kt_count_to(4, 4, 16);
  kt_count_to(7, 7, 128);
}
