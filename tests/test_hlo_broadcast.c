/* broadcast on the host: scalars, rows, columns,
 * dimensions of one element, and every element size, each against the
 * definition result[i] = operand[i restricted to the mapped dims]
 * (dimensions increase: kcall refuses a broadcast that transposes). */
#include <stdio.h>
#include <string.h>

#include "kt_hlo.h"

/* Runs `x = TYPE[in] iota(), ROOT b = TYPE[out] broadcast(x),
 * dimensions={map}` and checks every element against the definition
 * (iota along the operand's flattened index, from a reshape of an iota). */
static void kt_check_broadcast(const char* type, const char* in_text, const int64_t* in_dims,
                               int32_t in_rank, const char* out_text, const int64_t* out_dims,
                               int32_t out_rank, const int64_t* map, const char* map_text) {
  int64_t in_count = 1, out_count = 1;
  for (int32_t i = 0; i < in_rank; ++i) in_count *= in_dims[i];
  for (int32_t i = 0; i < out_rank; ++i) out_count *= out_dims[i];
  char text[1024];
  snprintf(text, sizeof text,
           "HloModule m\nENTRY e {\n  i = s32[%lld] iota(), iota_dimension=0\n"
           "  c = %s[%lld] convert(i)\n  x = %s[%s] reshape(c)\n"
           "  ROOT b = %s[%s] broadcast(x), dimensions={%s}\n}\n",
           (long long)in_count, type, (long long)in_count, type, in_text, type, out_text,
           map_text);
  kc_tensor* out[1];
  kt_run_text(text, out, 1);
  const DLTensor* t = kc_tensor_get_dltensor(out[0]);
  size_t es = (size_t)t->dtype.bits / 8;
  int64_t bad = 0;
  for (int64_t e = 0; e < out_count; ++e) {
    int64_t idx[8], rest = e;
    for (int32_t d = out_rank - 1; d >= 0; --d) {
      idx[d] = rest % out_dims[d];
      rest /= out_dims[d];
    }
    int64_t want = 0;
    for (int32_t k = 0; k < in_rank; ++k) want = want * in_dims[k] + idx[map[k]];
    /* The value's low byte and, where there is one, its second: iota
     * values are small, so this tells elements apart by type. */
    const unsigned char* at = (const unsigned char*)t->data + (size_t)e * es;
    int64_t got = 0;
    if (t->dtype.code == kDLFloat && es == 4) {
      float f;
      memcpy(&f, at, 4);
      got = (int64_t)f;
    } else if (t->dtype.code == kDLFloat && es == 8) {
      double f;
      memcpy(&f, at, 8);
      got = (int64_t)f;
    } else if (es == 1) {
      got = at[0];
      want &= 0xff;
    } else if (es == 2) {
      uint16_t v;
      memcpy(&v, at, 2);
      got = v;
    } else {
      int64_t v = 0;
      memcpy(&v, at, es < 8 ? es : 8);
      got = v;
    }
    if (got != want) bad++;
  }
  KC_CHECK_INT(bad, 0);
  kt_release(out, 1);
}

KC_TEST(hlo_broadcast_shapes) {
  static const int64_t none[1] = {0};
  static const int64_t d34[2] = {3, 4}, d3[1] = {3}, d4[1] = {4};
  /* a scalar everywhere */
  kt_check_broadcast("f32", "", none, 0, "3,4", d34, 2, none, "");
  /* a row repeated: bias added to a batch */
  static const int64_t d534[3] = {5, 3, 4};
  static const int64_t m12[2] = {1, 2};
  kt_check_broadcast("f32", "3,4", d34, 2, "5,3,4", d534, 3, m12, "1,2");
  /* a column: the last dimension broadcast */
  static const int64_t m0[1] = {0}, m1[1] = {1};
  kt_check_broadcast("s32", "3", d3, 1, "3,4", d34, 2, m0, "0");
  /* the middle dimension broadcast, and dims of one element */
  static const int64_t d3x4[3] = {3, 7, 4}, m02[2] = {0, 2};
  kt_check_broadcast("f64", "3,4", d34, 2, "3,7,4", d3x4, 3, m02, "0,2");
  static const int64_t d1[2] = {1, 4}, d1b[4] = {2, 1, 3, 4}, m13[2] = {1, 3};
  kt_check_broadcast("s16", "1,4", d1, 2, "2,1,3,4", d1b, 4, m13, "1,3");
  /* the first and last dimensions broadcast around a column */
  static const int64_t d5[1] = {5}, d253[3] = {2, 5, 3};
  kt_check_broadcast("u8", "5", d5, 1, "2,5,3", d253, 3, m1, "1");
  /* bytes, and a run long enough to be copied many times */
  static const int64_t d64[1] = {64}, d9_64[2] = {9, 64};
  kt_check_broadcast("u8", "64", d64, 1, "9,64", d9_64, 2, m1, "1");
  kt_check_broadcast("s64", "4", d4, 1, "3,4", d34, 2, m1, "1");
}

/* c128 (16-byte elements) and a result with no elements. */
KC_TEST(hlo_broadcast_wide_and_empty) {
  kc_tensor* out[2];
  kt_run_text("HloModule m\nENTRY e {\n  r = f64[2] constant({1.5, -2})\n"
              "  i = f64[2] constant({3, 4})\n  z = c128[2] complex(r, i)\n"
              "  b = c128[3,2] broadcast(z), dimensions={1}\n"
              "  x = f32[] constant(1)\n  e = f32[0,3] broadcast(x), dimensions={}\n"
              "  ROOT t = (c128[3,2], f32[0,3]) tuple(b, e)\n}\n",
              out, 2);
  const double* b = kt_data(out[0]);
  for (int row = 0; row < 3; ++row) {
    KC_CHECK(b[row * 4 + 0] == 1.5 && b[row * 4 + 1] == 3);
    KC_CHECK(b[row * 4 + 2] == -2 && b[row * 4 + 3] == 4);
  }
  KC_CHECK_INT(kc_tensor_get_dltensor(out[1])->shape[0], 0);
  kt_release(out, 2);
}
