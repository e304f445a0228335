/* fft from HLO text: FFT, IFFT, RFFT and IRFFT over 1, 2 and 3 dimensions,
 * c64 and c128, powers of two and other lengths (primes among them),
 * against a naive DFT in double; and the refusals of malformed ones. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kcall/kcall.h"
#include "test.h"

enum { KT_FFT, KT_IFFT, KT_RFFT, KT_IRFFT };
static const char* const kt_types[] = {"FFT", "IFFT", "RFFT", "IRFFT"};

static uint64_t kt_seed = 88172645463325252ull;

static double kt_rand(void) {
  kt_seed ^= kt_seed << 13;
  kt_seed ^= kt_seed >> 7;
  kt_seed ^= kt_seed << 17;
  return (double)(kt_seed >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static void kt_dims_text(const int64_t* d, int32_t n, char* buf, size_t cap) {
  size_t at = 0;
  for (int32_t i = 0; i < n; ++i) {
    at += (size_t)snprintf(buf + at, cap - at, "%s%lld", i ? "," : "", (long long)d[i]);
  }
  if (n == 0) buf[0] = 0;
}

/* Naive DFT of axis `axis` of work (complex doubles, dims[0..nd)), sign
 * -1 forward, +1 inverse (unscaled). */
static void kt_dft_axis(double* work, const int64_t* dims, int32_t nd, int32_t axis, int sign) {
  const double pi = 3.14159265358979323846;
  int64_t outer = 1, inner = 1, n = dims[axis];
  for (int32_t d = 0; d < axis; ++d) outer *= dims[d];
  for (int32_t d = axis + 1; d < nd; ++d) inner *= dims[d];
  double* row = malloc((size_t)n * 2 * sizeof *row);
  double* cs = malloc((size_t)n * 2 * sizeof *cs); /* the angles, once */
  KC_CHECK(row != NULL && cs != NULL);
  for (int64_t j = 0; j < n; ++j) {
    double t = sign * 2.0 * pi * (double)j / (double)n;
    cs[2 * j] = cos(t);
    cs[2 * j + 1] = sin(t);
  }
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      double* base = work + 2 * (o * n * inner + i);
      for (int64_t k = 0; k < n; ++k) {
        double re = 0, im = 0;
        for (int64_t j = 0; j < n; ++j) {
          int64_t at = (j * k) % n;
          double c = cs[2 * at], s = cs[2 * at + 1];
          double xr = base[2 * j * inner], xi = base[2 * j * inner + 1];
          re += xr * c - xi * s;
          im += xr * s + xi * c;
        }
        row[2 * k] = re;
        row[2 * k + 1] = im;
      }
      for (int64_t k = 0; k < n; ++k) {
        base[2 * k * inner] = row[2 * k];
        base[2 * k * inner + 1] = row[2 * k + 1];
      }
    }
  }
  free(row);
  free(cs);
}

/* Runs fft of `type` on a random operand of batch dims `batch` and
 * fft_length `len`, complex parts of `part` bytes, and checks every
 * output against the naive DFT: the largest error at most tol times the
 * operand's L2 norm. */
static void kt_fft_check(int type, int part, const int64_t* batch, int32_t nb,
                         const int64_t* len, int32_t nl, double tol) {
  int64_t in_dims[8], out_dims[8];
  int32_t rank = nb + nl;
  memcpy(in_dims, batch, (size_t)nb * sizeof *batch);
  memcpy(in_dims + nb, len, (size_t)nl * sizeof *len);
  memcpy(out_dims, in_dims, sizeof in_dims);
  int64_t half = len[nl - 1] / 2 + 1;
  if (type == KT_RFFT) out_dims[rank - 1] = half;
  if (type == KT_IRFFT) in_dims[rank - 1] = half;
  bool real_in = type == KT_RFFT, real_out = type == KT_IRFFT;
  const char* ct = part == 4 ? "c64" : "c128";
  const char* rt = part == 4 ? "f32" : "f64";
  char di[128], dout[128], dl[64], text[1024];
  kt_dims_text(in_dims, rank, di, sizeof di);
  kt_dims_text(out_dims, rank, dout, sizeof dout);
  kt_dims_text(len, nl, dl, sizeof dl);
  snprintf(text, sizeof text,
           "HloModule m\nENTRY e {\n x = %s[%s] parameter(0)\n"
           " ROOT f = %s[%s] fft(x), fft_type=%s, fft_length={%s}\n}\n",
           real_in ? rt : ct, di, real_out ? rt : ct, dout, kt_types[type], dl);

  int64_t n_in = 1, n_out = 1;
  for (int32_t d = 0; d < rank; ++d) {
    n_in *= in_dims[d];
    n_out *= out_dims[d];
  }
  int in_scalars = real_in ? 1 : 2, out_scalars = real_out ? 1 : 2;
  DLDataType dt;
  dt.code = (uint8_t)(real_in ? kDLFloat : kDLComplex);
  dt.bits = (uint8_t)(part * 8 * in_scalars);
  dt.lanes = 1;
  kc_tensor* x = NULL;
  KC_CHECK_OK(kc_tensor_create(NULL, in_dims, rank, dt, (DLDevice){kDLCPU, 0}, &x));
  void* xd = kc_tensor_get_dltensor(x)->data;
  /* The reference's work array, complex doubles, the operand's values. */
  double* ref = calloc((size_t)(n_in > n_out ? n_in : n_out) * 2 * 2, sizeof *ref);
  KC_CHECK(ref != NULL);
  double norm = 0;
  for (int64_t i = 0; i < n_in * in_scalars; ++i) {
    double v = kt_rand();
    if (part == 4) {
      float f = (float)v;
      ((float*)xd)[i] = f;
      v = f;
    } else {
      ((double*)xd)[i] = v;
    }
    ref[real_in ? 2 * i : i] = v;
    norm += v * v;
  }
  norm = sqrt(norm);

  /* The reference, per axis. */
  int64_t blk[3];
  int64_t rows = 1;
  for (int32_t d = 0; d < nb; ++d) rows *= batch[d];
  int64_t total = 1;
  for (int32_t d = 0; d < nl; ++d) total *= len[d];
  int64_t full_dims[4];
  full_dims[0] = rows;
  double* want = NULL;
  if (type == KT_FFT || type == KT_IFFT || type == KT_RFFT) {
    memcpy(full_dims + 1, len, (size_t)nl * sizeof *len);
    for (int32_t a = nl; a >= 1; --a) kt_dft_axis(ref, full_dims, nl + 1, a, type == KT_IFFT ? 1 : -1);
    if (type == KT_IFFT) {
      for (int64_t i = 0; i < 2 * n_in; ++i) ref[i] /= (double)total;
    }
    want = ref;
    if (type == KT_RFFT) { /* keep the half spectrum */
      want = malloc((size_t)n_out * 2 * sizeof *want);
      KC_CHECK(want != NULL);
      int64_t last = len[nl - 1];
      for (int64_t r = 0; r < n_out / half; ++r) {
        memcpy(want + 2 * r * half, ref + 2 * r * last, (size_t)half * 2 * sizeof *want);
      }
    }
  } else {
    memcpy(full_dims + 1, len, (size_t)nl * sizeof *len);
    full_dims[nl] = half;
    for (int32_t a = nl - 1; a >= 1; --a) kt_dft_axis(ref, full_dims, nl + 1, a, 1);
    int64_t last = len[nl - 1];
    want = malloc((size_t)n_out * 2 * sizeof *want);
    KC_CHECK(want != NULL);
    full_dims[nl] = last;
    for (int64_t r = 0; r < n_out / last; ++r) { /* Hermitian extension */
      for (int64_t k = 0; k < last; ++k) {
        int64_t s = k < half ? k : last - k;
        want[2 * (r * last + k)] = ref[2 * (r * half + s)];
        want[2 * (r * last + k) + 1] = k < half ? ref[2 * (r * half + s) + 1]
                                                : -ref[2 * (r * half + s) + 1];
      }
    }
    kt_dft_axis(want, full_dims, nl + 1, nl, 1);
    for (int64_t i = 0; i < 2 * n_out; ++i) want[i] /= (double)total;
  }
  (void)blk;

  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_parse(kc_sv(text), &p));
  kc_executable* exe = NULL;
  KC_CHECK_OK(kc_program_compile(p, NULL, &exe));
  const DLTensor* args[1] = {kc_tensor_get_dltensor(x)};
  kc_tensor* out = NULL;
  KC_CHECK_OK(kc_executable_execute(exe, args, 1, NULL, &out));
  const DLTensor* od = kc_tensor_get_dltensor(out);
  KC_CHECK_INT(od->ndim, rank);
  for (int32_t d = 0; d < rank; ++d) KC_CHECK_INT(od->shape[d], out_dims[d]);
  double err = 0;
  for (int64_t i = 0; i < n_out; ++i) {
    for (int c = 0; c < out_scalars; ++c) {
      double g = part == 4 ? ((const float*)od->data)[i * out_scalars + c]
                           : ((const double*)od->data)[i * out_scalars + c];
      double e = fabs(g - want[2 * i + c]);
      if (!(e <= err)) err = e; /* NaN wins */
    }
  }
  if (!(err <= tol * norm)) {
    fprintf(stderr, "%s: largest error %g, bound %g\n", text, err, tol * norm);
  }
  KC_CHECK(err <= tol * norm);
  if (want != ref) free(want);
  free(ref);
  kc_object_release(KC_OBJECT(out));
  kc_object_release(KC_OBJECT(x));
  kc_executable_destroy(exe);
  kc_program_destroy(p);
}

static const int64_t kt_no_batch[1] = {0};

KC_TEST(hlo_fft_c64_one_dimension_lengths) {
  /* Powers of two (radix-2) and the others (Bluestein), up to 4096. */
  static const int64_t lens[] = {1, 2, 3, 7, 8, 12, 97, 100, 1024, 4093, 4096};
  int64_t b[1] = {2};
  for (size_t i = 0; i < sizeof lens / sizeof *lens; ++i) {
    kt_fft_check(KT_FFT, 4, b, 1, &lens[i], 1, 1e-6);
    kt_fft_check(KT_IFFT, 4, kt_no_batch, 0, &lens[i], 1, 1e-6);
  }
}

KC_TEST(hlo_fft_c128_one_dimension_lengths) {
  static const int64_t lens[] = {1, 5, 16, 97, 255, 256, 4093, 4096};
  int64_t b[2] = {2, 1};
  for (size_t i = 0; i < sizeof lens / sizeof *lens; ++i) {
    kt_fft_check(KT_FFT, 8, b, 2, &lens[i], 1, 1e-12);
    kt_fft_check(KT_IFFT, 8, b, 1, &lens[i], 1, 1e-12);
  }
}

KC_TEST(hlo_fft_two_and_three_dimensions) {
  static const int64_t l2[] = {6, 5}, l3[] = {3, 4, 7}, l2p[] = {8, 16};
  int64_t b[1] = {3};
  kt_fft_check(KT_FFT, 4, b, 1, l2, 2, 1e-6);
  kt_fft_check(KT_IFFT, 4, b, 1, l2, 2, 1e-6);
  kt_fft_check(KT_FFT, 8, kt_no_batch, 0, l3, 3, 1e-12);
  kt_fft_check(KT_IFFT, 8, b, 1, l3, 3, 1e-12);
  kt_fft_check(KT_FFT, 4, kt_no_batch, 0, l2p, 2, 1e-6);
}

KC_TEST(hlo_fft_real_transforms) {
  /* RFFT keeps len / 2 + 1 entries; IRFFT reads them, the imaginary parts
   * of the zero and Nyquist entries ignored (the random operand has
   * them), as NumPy's irfft. */
  static const int64_t lens[] = {1, 2, 7, 8, 97, 100, 4096};
  int64_t b[1] = {2};
  for (size_t i = 0; i < sizeof lens / sizeof *lens; ++i) {
    kt_fft_check(KT_RFFT, 4, b, 1, &lens[i], 1, 1e-6);
    kt_fft_check(KT_IRFFT, 4, b, 1, &lens[i], 1, 1e-6);
    kt_fft_check(KT_RFFT, 8, kt_no_batch, 0, &lens[i], 1, 1e-12);
    kt_fft_check(KT_IRFFT, 8, kt_no_batch, 0, &lens[i], 1, 1e-12);
  }
  static const int64_t l2[] = {4, 6}, l2o[] = {5, 7}, l3[] = {2, 3, 5};
  kt_fft_check(KT_RFFT, 4, b, 1, l2, 2, 1e-6);
  kt_fft_check(KT_IRFFT, 4, b, 1, l2, 2, 1e-6);
  kt_fft_check(KT_RFFT, 8, kt_no_batch, 0, l2o, 2, 1e-12);
  kt_fft_check(KT_IRFFT, 8, kt_no_batch, 0, l2o, 2, 1e-12);
  kt_fft_check(KT_RFFT, 8, b, 1, l3, 3, 1e-12);
  kt_fft_check(KT_IRFFT, 4, b, 1, l3, 3, 1e-6);
}

KC_TEST(hlo_fft_empty_batch) {
  int64_t b[1] = {0};
  static const int64_t l[] = {7};
  kt_fft_check(KT_FFT, 4, b, 1, l, 1, 1e-6);
  kt_fft_check(KT_IRFFT, 8, b, 1, l, 1, 1e-12);
}

#define KT_FFT_FAILS(text, ...)                                                    \
  do {                                                                             \
    kc_program* kt_p_ = NULL;                                                      \
    KC_CHECK_OK(kc_program_parse(kc_sv(text), &kt_p_));                            \
    kc_executable* kt_e_ = NULL;                                                   \
    KC_CHECK_CODE(kc_program_compile(kt_p_, NULL, &kt_e_), KC_INVALID_ARGUMENT,    \
                  __VA_ARGS__);                                                    \
    KC_CHECK(kt_e_ == NULL);                                                       \
    kc_program_destroy(kt_p_);                                                     \
  } while (0)

#define KT_FFT_HLO(x, r, attrs)                                                    \
  "HloModule m\nENTRY e {\n x = " x " parameter(0)\n ROOT f = " r " fft(x), " attrs \
  "\n}\n"

KC_TEST(hlo_fft_refusals) {
  KT_FFT_FAILS(KT_FFT_HLO("c64[4,8]", "c64[4,8]", "fft_type=FFT, fft_length={7}"),
               "fft_length={7}", "expected an operand whose last 1 dimensions are {7}",
               "got c64[4,8]");
  KT_FFT_FAILS(KT_FFT_HLO("c64[4,8]", "c64[4,8]", "fft_type=FFT, fft_length={4,8,1,1}"),
               "attribute fft_length", "expected 1 to 3 lengths", "got {4,8,1,1}");
  KT_FFT_FAILS(KT_FFT_HLO("c64[8]", "c64[8]", "fft_type=FFT, fft_length={4,8}"),
               "attribute fft_length", "expected an operand of at least that rank",
               "got c64[8]");
  KT_FFT_FAILS(KT_FFT_HLO("c64[8]", "c64[8]", "fft_type=FFT, fft_length={0}"),
               "attribute fft_length", "expected lengths of at least 1", "got {0}");
  KT_FFT_FAILS(KT_FFT_HLO("c64[8]", "c64[8]", "fft_type=DCT, fft_length={8}"),
               "attribute fft_type", "expected FFT, IFFT, RFFT or IRFFT", "got 'DCT'");
  KT_FFT_FAILS(KT_FFT_HLO("c64[8]", "c64[8]", "fft_type=FFT"), "fft_length");
  KT_FFT_FAILS(KT_FFT_HLO("c64[8]", "c64[8]", "fft_length={8}"), "fft_type");
  KT_FFT_FAILS(KT_FFT_HLO("f32[8]", "c64[8]", "fft_type=FFT, fft_length={8}"),
               "fft_type=FFT", "expected a c64 or c128 operand", "got f32");
  KT_FFT_FAILS(KT_FFT_HLO("c64[8]", "c64[5]", "fft_type=RFFT, fft_length={8}"),
               "fft_type=RFFT", "expected an f32 or f64 operand", "got c64");
  KT_FFT_FAILS(KT_FFT_HLO("f32[8]", "c64[8]", "fft_type=RFFT, fft_length={8}"),
               "fft_type=RFFT", "expected a result of c64[5]", "got c64[8]");
  KT_FFT_FAILS(KT_FFT_HLO("f64[8]", "c64[5]", "fft_type=RFFT, fft_length={8}"),
               "expected a result of c128[5]", "got c64[5]");
  KT_FFT_FAILS(KT_FFT_HLO("c64[3,8]", "f32[3,8]", "fft_type=IRFFT, fft_length={8}"),
               "fft_type=IRFFT", "expected an operand whose last 1 dimensions are {5}",
               "got c64[3,8]");
  KT_FFT_FAILS(KT_FFT_HLO("c64[3,5]", "f32[3,9]", "fft_type=IRFFT, fft_length={8}"),
               "expected a result of f32[3,8]", "got f32[3,9]");
}
