/* Instructions large enough to be split over the thread pool give the
 * same elements as the loop on one thread would: element-wise steps in
 * ranges (add, exponential, convert, compare). */
#include <math.h>
#include <string.h>

#include "kt_hlo.h"

KC_TEST(hlo_large_elementwise_split) {
  /* 300001 elements: an odd count, so ranges end anywhere. */
  static const char text[] =
      "HloModule m\nENTRY e {\n"
      "  i = s32[300001] iota(), iota_dimension=0\n"
      "  f = f32[300001] convert(i)\n"
      "  k = f32[] constant(-0.0001)\n  kb = f32[300001] broadcast(k), dimensions={}\n"
      "  s = f32[300001] multiply(f, kb)\n"
      "  x = f32[300001] exponential(s)\n"
      "  a = f32[300001] add(x, f)\n"
      "  h = f32[] constant(150000)\n  hb = f32[300001] broadcast(h), dimensions={}\n"
      "  c = pred[300001] compare(f, hb), direction=GT\n"
      "  d = f64[300001] convert(a)\n"
      "  ROOT t = (f32[300001], pred[300001], f64[300001]) tuple(a, c, d)\n}\n";
  kc_tensor* outs[3];
  kt_run_text(text, outs, 3);
  const float* a = kt_data(outs[0]);
  const uint8_t* c = kt_data(outs[1]);
  const double* d = kt_data(outs[2]);
  int64_t bad = 0;
  for (int i = 0; i < 300001; ++i) {
    float want = expf((float)i * -0.0001f) + (float)i;
    /* exp within a few ulps of libm's; the rest exact */
    if (fabsf(a[i] - want) > 1e-6f * fabsf(want) + 1e-6f) bad++;
    if (c[i] != (i > 150000)) bad++;
    if (d[i] != (double)a[i]) bad++;
  }
  KC_CHECK_INT(bad, 0);
  kt_release(outs, 3);
}
