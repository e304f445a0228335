/* npy_equal [--rtol R] [--atol A] GOT.npy WANT.npy
 *
 * Exit 0 when the two files hold the same dtype and shape and every
 * element of GOT matches WANT's; else 1, saying how many elements differ
 * and where the first and the worst are; 2 when a file cannot be read or
 * the arguments are wrong. Files are read with the kcall tool's own reader.
 *
 * Without a tolerance (the default, or --rtol 0 --atol 0) a match is exact:
 * the same bits, or NaN against NaN whatever their payloads. With one,
 * float and complex elements match as numpy.isclose(got, want, rtol,
 * atol, equal_nan=True) says: |got - want| <= atol + rtol * |want|, NaN
 * only against NaN, an infinity only against the same infinity. Integer
 * and bool elements always compare exactly. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/half.h"
#include "run.h"

typedef struct kt_tolerance {
  double rtol;
  double atol;
} kt_tolerance;

static int64_t kt_count(const DLTensor* t) {
  int64_t n = 1;
  for (int32_t d = 0; d < t->ndim; ++d) n *= t->shape[d];
  return n;
}

/* Element i of a float tensor (f16, bf16, f32, f64) as a double. */
static double kt_real(const DLTensor* t, int64_t i) {
  const char* p = (const char*)t->data + (size_t)i * (t->dtype.bits / 8u);
  if (t->dtype.bits == 16) {
    uint16_t h;
    memcpy(&h, p, sizeof h);
    return kc__half_to_f32(t->dtype.code == kDLBfloat, h);
  }
  if (t->dtype.bits == 32) {
    float f;
    memcpy(&f, p, sizeof f);
    return f;
  }
  double d;
  memcpy(&d, p, sizeof d);
  return d;
}

/* Element i of a complex tensor (c64, c128): its real and imaginary
 * parts. */
static void kt_complex(const DLTensor* t, int64_t i, double* re, double* im) {
  const char* p = (const char*)t->data + (size_t)i * (t->dtype.bits / 8u);
  if (t->dtype.bits == 64) {
    float f[2];
    memcpy(f, p, sizeof f);
    *re = f[0];
    *im = f[1];
  } else {
    double d[2];
    memcpy(d, p, sizeof d);
    *re = d[0];
    *im = d[1];
  }
}

static bool kt_is_float(DLDataType dt) {
  return (dt.code == kDLFloat && (dt.bits == 16 || dt.bits == 32 || dt.bits == 64)) ||
         (dt.code == kDLBfloat && dt.bits == 16);
}

static bool kt_is_complex(DLDataType dt) {
  return dt.code == kDLComplex && (dt.bits == 64 || dt.bits == 128);
}

/* How far got is from want, in units of what the tolerance allows (a
 * match is <= 1), for floats and complex numbers given as (re, im) pairs
 * (im 0 for floats), whose bits differ. NaN matches only NaN; without a
 * tolerance nothing else matches (not even -0 against 0). */
static double kt_excess(double g_re, double g_im, double w_re, double w_im,
                        kt_tolerance tol) {
  bool g_nan = isnan(g_re) || isnan(g_im);
  bool w_nan = isnan(w_re) || isnan(w_im);
  if (g_nan || w_nan) return g_nan && w_nan ? 0.0 : INFINITY;
  if (tol.rtol == 0.0 && tol.atol == 0.0) return INFINITY;
  if (g_re == w_re && g_im == w_im) return 0.0; /* infinities too */
  double diff = hypot(g_re - w_re, g_im - w_im);
  double allowed = tol.atol + tol.rtol * hypot(w_re, w_im);
  if (isnan(diff) || isinf(diff) || allowed == 0.0) return INFINITY;
  return diff / allowed;
}

/* Writes the row-major index of element i of t as "[1, 2]". */
static void kt_format_index(const DLTensor* t, int64_t i, char* buf, size_t cap) {
  int64_t idx[KC_TENSOR_MAX_NDIM];
  for (int32_t d = t->ndim - 1; d >= 0; --d) {
    idx[d] = t->shape[d] ? i % t->shape[d] : 0;
    i = t->shape[d] ? i / t->shape[d] : 0;
  }
  size_t len = (size_t)snprintf(buf, cap, "[");
  for (int32_t d = 0; d < t->ndim && len < cap; ++d) {
    len += (size_t)snprintf(buf + len, cap - len, d ? ", %lld" : "%lld", (long long)idx[d]);
  }
  if (len < cap) snprintf(buf + len, cap - len, "]");
}

/* Writes t's shape as "(2, 3)". */
static void kt_format_shape(const DLTensor* t, char* buf, size_t cap) {
  size_t len = (size_t)snprintf(buf, cap, "(");
  for (int32_t d = 0; d < t->ndim && len < cap; ++d) {
    len += (size_t)snprintf(buf + len, cap - len, d ? ", %lld" : "%lld", (long long)t->shape[d]);
  }
  if (len < cap) snprintf(buf + len, cap - len, t->ndim == 1 ? ",)" : ")");
}

static void kt_format_element(const DLTensor* t, int64_t i, char* buf, size_t cap) {
  if (kt_is_complex(t->dtype)) {
    double re, im;
    kt_complex(t, i, &re, &im);
    snprintf(buf, cap, "(%.9g%+.9gj)", re, im);
  } else if (kt_is_float(t->dtype)) {
    snprintf(buf, cap, "%.9g", kt_real(t, i));
  } else {
    const unsigned char* p = (const unsigned char*)t->data + (size_t)i * (t->dtype.bits / 8u);
    size_t len = (size_t)snprintf(buf, cap, "bytes");
    for (unsigned b = 0; b < t->dtype.bits / 8u && len < cap; ++b) {
      len += (size_t)snprintf(buf + len, cap - len, " %02x", p[b]);
    }
  }
}

/* Compares the elements of two tensors of one dtype and shape. */
static int kt_compare(const DLTensor* got, const DLTensor* want, kt_tolerance tol) {
  char dtype[32];
  kc_dtype_format(want->dtype, dtype, sizeof dtype);
  size_t width = kc_dtype_get_size(want->dtype);
  bool numeric = kt_is_float(want->dtype) || kt_is_complex(want->dtype);
  int64_t n = kt_count(want), bad = 0, first = -1, worst = -1;
  double worst_excess = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const char* g = (const char*)got->data + (size_t)i * width;
    const char* w = (const char*)want->data + (size_t)i * width;
    if (!memcmp(g, w, width)) continue;
    double excess = INFINITY;
    if (numeric) {
      double g_re, g_im = 0.0, w_re, w_im = 0.0;
      if (kt_is_complex(want->dtype)) {
        kt_complex(got, i, &g_re, &g_im);
        kt_complex(want, i, &w_re, &w_im);
      } else {
        g_re = kt_real(got, i);
        w_re = kt_real(want, i);
      }
      excess = kt_excess(g_re, g_im, w_re, w_im, tol);
    }
    if (excess <= 1.0) continue;
    if (first < 0) first = i;
    if (worst < 0 || excess > worst_excess) {
      worst = i;
      worst_excess = excess;
    }
    bad++;
  }
  if (!bad) return 0;
  fprintf(stderr, "npy_equal: %lld of %lld elements of %s differ (rtol %g, atol %g)\n",
          (long long)bad, (long long)n, dtype, tol.rtol, tol.atol);
  int64_t shown[2] = {first, worst};
  const char* label[2] = {"first", "worst"};
  for (int k = 0; k < 2; ++k) {
    if (k == 1 && worst == first) break;
    char index[256], g[64], w[64];
    kt_format_index(want, shown[k], index, sizeof index);
    kt_format_element(got, shown[k], g, sizeof g);
    kt_format_element(want, shown[k], w, sizeof w);
    fprintf(stderr, "npy_equal: %s at %s: got %s, expected %s\n", label[k], index, g, w);
  }
  return 1;
}

/* A tolerance given on the command line: a finite number >= 0. */
static bool kt_parse_tolerance(const char* option, const char* text, double* out) {
  char* end;
  errno = 0;
  double v = text ? strtod(text, &end) : 0.0;
  if (!text || end == text || *end || errno || !isfinite(v) || v < 0) {
    fprintf(stderr, "npy_equal: %s: expected a finite number >= 0, got '%s'\n", option,
            text ? text : "");
    return false;
  }
  *out = v;
  return true;
}

int main(int argc, char** argv) {
  kt_tolerance tol = {0.0, 0.0};
  const char* files[2] = {NULL, NULL};
  int num_files = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--rtol") || !strcmp(argv[i], "--atol")) {
      double* v = argv[i][2] == 'r' ? &tol.rtol : &tol.atol;
      if (!kt_parse_tolerance(argv[i], i + 1 < argc ? argv[i + 1] : NULL, v)) return 2;
      ++i;
    } else if (num_files < 2) {
      files[num_files++] = argv[i];
    } else {
      num_files = 3;
    }
  }
  if (num_files != 2) {
    fprintf(stderr, "usage: npy_equal [--rtol R] [--atol A] GOT.npy WANT.npy\n");
    return 2;
  }
  kc_tensor* t[2] = {NULL, NULL};
  for (int i = 0; i < 2; ++i) {
    kc_status* st = kc_tensor_read_npy(files[i], NULL, &t[i]);
    if (st) {
      char msg[512];
      kc_status_format(st, msg, sizeof msg);
      fprintf(stderr, "npy_equal: %s\n", msg);
      kc_status_destroy(st);
      if (t[0]) kc_object_release(KC_OBJECT(t[0]));
      return 2;
    }
  }
  const DLTensor* a = kc_tensor_get_dltensor(t[0]);
  const DLTensor* b = kc_tensor_get_dltensor(t[1]);
  int rc = 0;
  char da[32], db[32];
  kc_dtype_format(a->dtype, da, sizeof da);
  kc_dtype_format(b->dtype, db, sizeof db);
  if (!kc_dtype_equal(a->dtype, b->dtype)) {
    fprintf(stderr, "npy_equal: dtype %s, expected %s\n", da, db);
    rc = 1;
  } else if (a->ndim != b->ndim ||
             (a->ndim && memcmp(a->shape, b->shape, (size_t)a->ndim * sizeof *a->shape))) {
    char sa[256], sb[256];
    kt_format_shape(a, sa, sizeof sa);
    kt_format_shape(b, sb, sizeof sb);
    fprintf(stderr, "npy_equal: shape %s, expected %s\n", sa, sb);
    rc = 1;
  } else {
    rc = kt_compare(a, b, tol);
  }
  kc_object_release(KC_OBJECT(t[0]));
  kc_object_release(KC_OBJECT(t[1]));
  return rc;
}
