/* sort and fft shared over the thread pool (split.h, kc__split_items):
 * rows and batch elements run in ranges of their own, so that a program
 * gives the same bits on a pool of one thread and on a pool of several,
 * and the sort is still a sort. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kt_hlo.h"

/* Compiles and runs `text` (no parameters) on a pool of `threads`. */
static void kt_split_run(const char* text, int32_t threads, kc_tensor** outs,
                         size_t n) {
  kc_thread_pool* pool = NULL;
  KC_CHECK_OK(kc_thread_pool_create(threads, &pool));
  kt_run_text_on(text, pool, outs, n);
  kc_thread_pool_destroy(pool);
}

static size_t kt_bytes(kc_tensor* t) {
  const DLTensor* d = kc_tensor_get_dltensor(t);
  size_t n = (size_t)d->dtype.bits / 8 * d->dtype.lanes;
  for (int32_t i = 0; i < d->ndim; ++i) n *= (size_t)d->shape[i];
  return n;
}

/* The outputs of `text` on one thread and on three are the same bytes. */
static void kt_split_same_bits(const char* text, size_t n, kc_tensor** three) {
  kc_tensor* one[8];
  KC_CHECK(n <= sizeof one / sizeof one[0]);
  kt_split_run(text, 1, one, n);
  kt_split_run(text, 3, three, n);
  for (size_t i = 0; i < n; ++i) {
    KC_CHECK_INT((int64_t)kt_bytes(one[i]), (int64_t)kt_bytes(three[i]));
    KC_CHECK(memcmp(kt_data(one[i]), kt_data(three[i]), kt_bytes(one[i])) == 0);
  }
  kt_release(one, n);
}

/* 256 rows of 2048 s32 keys, sorted with their indices (the key path),
 * stable; every row is checked against the keys it started from. */
KC_TEST(hlo_split_sort_rows_over_the_pool) {
  static const char text[] =
      "HloModule m\n"
      "cmp {\n a = s32[] parameter(0)\n b = s32[] parameter(1)\n"
      " c = s32[] parameter(2)\n d = s32[] parameter(3)\n"
      " ROOT lt = pred[] compare(a, b), direction=LT\n}\n"
      "ENTRY e {\n"
      " i = s32[256,2048] iota(), iota_dimension=1\n"
      " j = s32[256,2048] iota(), iota_dimension=0\n"
      " k = s32[] constant(-1640531535)\n kb = s32[256,2048] broadcast(k), dimensions={}\n"
      " m = s32[] constant(40503)\n mb = s32[256,2048] broadcast(m), dimensions={}\n"
      " x = s32[256,2048] multiply(i, kb)\n y = s32[256,2048] multiply(j, mb)\n"
      " keys = s32[256,2048] xor(x, y)\n"
      " ROOT s = (s32[256,2048], s32[256,2048]) sort(keys, i), dimensions={1},"
      " is_stable=true, to_apply=cmp\n}\n";
  kc_tensor* outs[2];
  kt_split_same_bits(text, 2, outs);
  const int32_t* keys = kt_data(outs[0]);
  const int32_t* idx = kt_data(outs[1]);
  int bad = 0;
  for (int64_t r = 0; r < 256; ++r) {
    for (int64_t c = 0; c < 2048; ++c) {
      int32_t key = keys[r * 2048 + c];
      uint32_t from = (uint32_t)idx[r * 2048 + c];
      int32_t want = (int32_t)((from * 2654435761u) ^ ((uint32_t)r * 40503u));
      if (key != want || (c && key < keys[r * 2048 + c - 1])) bad++;
    }
  }
  KC_CHECK_INT(bad, 0);
  kt_release(outs, 2);
}

/* 64 transforms of 1000 points (Bluestein) each way, and 16 of 4 x 1000. */
KC_TEST(hlo_split_fft_batches_over_the_pool) {
  static const char text[] =
      "HloModule m\nENTRY e {\n"
      " i = f32[64,1000] iota(), iota_dimension=1\n"
      " j = f32[64,1000] iota(), iota_dimension=0\n"
      " c = f32[] constant(0.37)\n cb = f32[64,1000] broadcast(c), dimensions={}\n"
      " t = f32[64,1000] multiply(i, cb)\n u = f32[64,1000] add(t, j)\n"
      " re = f32[64,1000] sine(u)\n im = f32[64,1000] cosine(t)\n"
      " z = c64[64,1000] complex(re, im)\n"
      " f = c64[64,1000] fft(z), fft_type=FFT, fft_length={1000}\n"
      " g = c64[64,1000] fft(z), fft_type=IFFT, fft_length={1000}\n"
      " r = c64[64,501] fft(re), fft_type=RFFT, fft_length={1000}\n"
      " ir = f32[64,1000] fft(r), fft_type=IRFFT, fft_length={1000}\n"
      " z3 = c64[16,4,1000] reshape(z)\n"
      " f2 = c64[16,4,1000] fft(z3), fft_type=FFT, fft_length={4,1000}\n"
      " ROOT o = (c64[64,1000], c64[64,1000], c64[64,501], f32[64,1000], c64[16,4,1000])"
      " tuple(f, g, r, ir, f2)\n}\n";
  kc_tensor* outs[5];
  kt_split_same_bits(text, 5, outs);
  /* The real round trip gives the input back. */
  kc_tensor* in[1];
  kt_run_text("HloModule m\nENTRY e {\n"
              " i = f32[64,1000] iota(), iota_dimension=1\n"
              " j = f32[64,1000] iota(), iota_dimension=0\n"
              " c = f32[] constant(0.37)\n cb = f32[64,1000] broadcast(c), dimensions={}\n"
              " t = f32[64,1000] multiply(i, cb)\n u = f32[64,1000] add(t, j)\n"
              " ROOT re = f32[64,1000] sine(u)\n}\n",
              in, 1);
  const float* x = kt_data(in[0]);
  const float* back = kt_data(outs[3]);
  int bad = 0;
  for (int64_t k = 0; k < 64 * 1000; ++k) bad += fabsf(back[k] - x[k]) > 1e-4f;
  KC_CHECK_INT(bad, 0);
  kt_release(in, 1);
  kt_release(outs, 5);
}
