/* triangular-solve: every combination of left_side, lower, unit_diagonal
 * and transpose_a in each element type, batched, checked by multiplying
 * the solution back (with NaN in the entries the options say not to
 * read, so reading one shows); the HLO text JAX's HLO uses; and the
 * refusals. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt_hlo.h"

typedef struct kt_ts_case {
  const char* type; /* f32, f64, c64, c128 */
  bool left, lower, unit;
  const char* transpose;
  int batch, m, rhs;
} kt_ts_case;

static bool kt_is_complex(const char* type) { return type[0] == 'c'; }

/* A deterministic value in [-1, 1]. */
static double kt_value(unsigned* seed) {
  *seed = *seed * 1103515245u + 12345u;
  return (double)((*seed >> 8) % 2001u) / 1000.0 - 1.0;
}

/* Appends "v" or "(re,im)"; NaN as HLO writes it. */
static size_t kt_put(char* buf, size_t at, size_t cap, double complex v, bool cplx) {
  char re[32], im[32];
  if (isnan(creal(v)))
    snprintf(re, sizeof re, "nan");
  else
    snprintf(re, sizeof re, "%.17g", creal(v));
  snprintf(im, sizeof im, "%.17g", cimag(v));
  return at + (size_t)(cplx ? snprintf(buf + at, cap - at, "(%s,%s)", re, im)
                            : snprintf(buf + at, cap - at, "%s", re));
}

/* A constant literal {{{..}}} of batch x rows x cols values. */
static size_t kt_literal(char* buf, size_t at, size_t cap, const double complex* v, int batch,
                         int rows, int cols, bool cplx) {
  at += (size_t)snprintf(buf + at, cap - at, "{");
  for (int b = 0; b < batch; ++b) {
    at += (size_t)snprintf(buf + at, cap - at, "%s{", b ? ", " : "");
    for (int i = 0; i < rows; ++i) {
      at += (size_t)snprintf(buf + at, cap - at, "%s{", i ? ", " : "");
      for (int j = 0; j < cols; ++j) {
        if (j) at += (size_t)snprintf(buf + at, cap - at, ", ");
        at = kt_put(buf, at, cap, v[(b * rows + i) * cols + j], cplx);
      }
      at += (size_t)snprintf(buf + at, cap - at, "}");
    }
    at += (size_t)snprintf(buf + at, cap - at, "}");
  }
  return at + (size_t)snprintf(buf + at, cap - at, "}");
}

/* The value the solution's element `at` holds. */
static double complex kt_out(const void* data, const char* type, size_t at) {
  if (!strcmp(type, "f32")) return ((const float*)data)[at];
  if (!strcmp(type, "f64")) return ((const double*)data)[at];
  if (!strcmp(type, "c64")) {
    const float* f = (const float*)data + 2 * at;
    return f[0] + f[1] * I;
  }
  const double* d = (const double*)data + 2 * at;
  return d[0] + d[1] * I;
}

static void kt_run_case(const kt_ts_case* c, kc_thread_pool* pool) {
  bool cplx = kt_is_complex(c->type);
  int nb = c->batch, m = c->m;
  int brows = c->left ? m : c->rhs, bcols = c->left ? c->rhs : m;
  size_t na = (size_t)(nb * m * m), nbv = (size_t)(nb * m * c->rhs);
  double complex* a = malloc(na * sizeof *a);
  double complex* b = malloc(nbv * sizeof *b);
  double complex* t = malloc((size_t)(m * m) * sizeof *t);
  size_t cap = (na + nbv) * 64 + 1024;
  char* text = malloc(cap);
  KC_CHECK(a && b && t && text);
  unsigned seed = 7;
  /* The triangle read, a dominant diagonal (unless unit), and NaN where
   * nothing may be read. */
  for (int k = 0; k < nb; ++k) {
    for (int i = 0; i < m; ++i) {
      for (int j = 0; j < m; ++j) {
        double complex v = kt_value(&seed) + (cplx ? kt_value(&seed) * I : 0);
        bool in = c->lower ? j <= i : j >= i;
        if (i == j)
          v = c->unit ? NAN : 3 + v;
        else if (!in)
          v = NAN;
        else
          v /= m;
        a[(k * m + i) * m + j] = v;
      }
    }
  }
  for (size_t i = 0; i < nbv; ++i) b[i] = kt_value(&seed) + (cplx ? kt_value(&seed) * I : 0);
  size_t at = (size_t)snprintf(text, cap, "HloModule m\nENTRY e {\n a = %s[%d,%d,%d] constant(",
                               c->type, nb, m, m);
  at = kt_literal(text, at, cap, a, nb, m, m, cplx);
  at += (size_t)snprintf(text + at, cap - at, ")\n b = %s[%d,%d,%d] constant(", c->type, nb, brows,
                         bcols);
  at = kt_literal(text, at, cap, b, nb, brows, bcols, cplx);
  /* As XLA prints it: the bools that are true, then transpose_a. */
  at += (size_t)snprintf(text + at, cap - at,
                         ")\n ROOT x = %s[%d,%d,%d]{2,1,0} triangular-solve(a, b)%s%s%s, "
                         "transpose_a=%s\n}\n",
                         c->type, nb, brows, bcols, c->left ? ", left_side=true" : "",
                         c->lower ? ", lower=true" : "", c->unit ? ", unit_diagonal=true" : "",
                         c->transpose);
  KC_CHECK(at < cap);
  kc_tensor* out = NULL;
  kt_run_text_on(text, pool, &out, 1);
  const void* x = kt_data(out);
  double tol = !strcmp(c->type, "f32") || !strcmp(c->type, "c64") ? 1e-4 : 1e-11;
  for (int k = 0; k < nb; ++k) {
    /* op(T): the triangle read, a unit diagonal where asked. */
    for (int i = 0; i < m; ++i) {
      for (int j = 0; j < m; ++j) {
        bool in = c->lower ? j <= i : j >= i;
        double complex v = i == j && c->unit ? 1 : in ? a[(k * m + i) * m + j] : 0;
        if (!strcmp(c->transpose, "NO_TRANSPOSE"))
          t[i * m + j] = v;
        else
          t[j * m + i] = !strcmp(c->transpose, "ADJOINT") ? conj(v) : v;
      }
    }
    size_t base = (size_t)k * (size_t)(m * c->rhs);
    for (int i = 0; i < brows; ++i) {
      for (int j = 0; j < bcols; ++j) {
        double complex sum = 0;
        for (int q = 0; q < m; ++q) {
          sum += c->left ? t[i * m + q] * kt_out(x, c->type, base + (size_t)(q * bcols + j))
                         : kt_out(x, c->type, base + (size_t)(i * bcols + q)) * t[q * m + j];
        }
        double complex want = b[base + (size_t)(i * bcols + j)];
        if (!(cabs(sum - want) <= tol)) {
          kt__fail(__FILE__, __LINE__,
                   "%s left_side=%d lower=%d unit=%d %s: batch %d, (%d, %d): "
                   "op(a) x gives "
                   "%g%+gi, b is %g%+gi",
                   c->type, c->left, c->lower, c->unit, c->transpose, k, i, j, creal(sum),
                   cimag(sum), creal(want), cimag(want));
        }
      }
    }
  }
  kc_object_release(KC_OBJECT(out));
  free(a);
  free(b);
  free(t);
  free(text);
}

KC_TEST(hlo_triangular_solve_every_option_and_type) {
  static const char* const types[] = {"f32", "f64", "c64", "c128"};
  static const char* const transposes[] = {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"};
  kc_thread_pool* pool = NULL;
  KC_CHECK_OK(kc_thread_pool_create(2, &pool));
  for (int ty = 0; ty < 4; ++ty) {
    for (int opts = 0; opts < 8; ++opts) {
      for (int tr = 0; tr < 3; ++tr) {
        kt_ts_case c = {types[ty], opts & 1, (opts & 2) != 0, (opts & 4) != 0, transposes[tr], 2,
                        4,         3};
        kt_run_case(&c, pool);
      }
    }
  }
  kc_thread_pool_destroy(pool);
}

/* Large enough to be shared out over the pool's threads. */
KC_TEST(hlo_triangular_solve_over_threads) {
  kc_thread_pool* pool = NULL;
  KC_CHECK_OK(kc_thread_pool_create(2, &pool));
  kt_ts_case left = {"f64", true, true, false, "NO_TRANSPOSE", 3, 48, 40};
  kt_run_case(&left, pool);
  kt_ts_case right = {"c64", false, false, false, "ADJOINT", 2, 40, 48};
  kt_run_case(&right, pool);
  kc_thread_pool_destroy(pool);
}

/* As JAX's HLO would hold it: one matrix, no batch; XLA's printer leaves
 * out the bools that are false. x = [[1, 0], [2, 3]]^-1 [2, 8] = [2, 2]. */
KC_TEST(hlo_triangular_solve_single_matrix) {
  kc_tensor* out = NULL;
  kt_run_text(
      "HloModule m\nENTRY e {\n"
      " a = f32[2,2] constant({ {1, 99}, {2, 3} })\n"
      " b = f32[2,1] constant({ {2}, {10} })\n"
      " ROOT x = f32[2,1] triangular-solve(a, b), left_side=true, lower=true, "
      "transpose_a=NO_TRANSPOSE\n}\n",
      &out, 1);
  const float* x = kt_data(out);
  KC_CHECK(x[0] == 2 && x[1] == 2);
  kc_object_release(KC_OBJECT(out));
  /* A zero on the diagonal divides by zero, as XLA:CPU's does. */
  kt_run_text(
      "HloModule m\nENTRY e {\n"
      " a = f64[1,1] constant({ {0} })\n"
      " b = f64[1,1] constant({ {1} })\n"
      " ROOT x = f64[1,1] triangular-solve(a, b), left_side=true, lower=true, "
      "transpose_a=NO_TRANSPOSE\n}\n",
      &out, 1);
  KC_CHECK(isinf(((const double*)kt_data(out))[0]));
  kc_object_release(KC_OBJECT(out));
}

KC_TEST(hlo_triangular_solve_refusals) {
#define KT_TS(decl_a, decl_b, result, attrs)                           \
  "HloModule m\nENTRY e {\n a = " decl_a " parameter(0)\n b = " decl_b \
  " parameter(1)\n"                                                    \
  " ROOT x = " result " triangular-solve(a, b)" attrs "\n}\n"
  KT_COMPILE_FAILS(
      KT_TS("f16[2,2]", "f16[2,1]", "f16[2,1]", ", left_side=true, transpose_a=NO_TRANSPOSE"),
      KC_UNIMPLEMENTED, "element type f16 is not supported (f32, f64, c64 and c128)");
  KT_COMPILE_FAILS(
      KT_TS("f32[2,3]", "f32[2,1]", "f32[2,1]", ", left_side=true, transpose_a=NO_TRANSPOSE"),
      KC_INVALID_ARGUMENT, "expected a to be square matrices", "got f32[2,3]");
  KT_COMPILE_FAILS(KT_TS("f32[2,2]", "f32[2,1]", "f32[2,1]", ", transpose_a=NO_TRANSPOSE"),
                   KC_INVALID_ARGUMENT,
                   "with left_side=false, b's last dimension must be a's "
                   "order 2");
  KT_COMPILE_FAILS(
      KT_TS("f32[3,2,2]", "f32[2,2,1]", "f32[2,2,1]", ", left_side=true, transpose_a=NO_TRANSPOSE"),
      KC_INVALID_ARGUMENT, "leading (batch) dimensions");
  KT_COMPILE_FAILS(
      KT_TS("f32[2,2]", "f64[2,1]", "f64[2,1]", ", left_side=true, transpose_a=NO_TRANSPOSE"),
      KC_INVALID_ARGUMENT, "of one element type");
  KT_COMPILE_FAILS(
      KT_TS("f32[2,2]", "f32[2,1]", "f32[2,1]", ", left_side=true, transpose_a=CONJUGATE"),
      KC_INVALID_ARGUMENT,
      "transpose_a: expected NO_TRANSPOSE, TRANSPOSE or ADJOINT, "
      "got 'CONJUGATE'");
  KT_COMPILE_FAILS(KT_TS("f32[2,2]", "f32[2,1]", "f32[2,1]", ", left_side=true"),
                   KC_INVALID_ARGUMENT, "transpose_a");
  KT_COMPILE_FAILS(
      KT_TS("f32[2,2]", "f32[2,1]", "f32[1,2]", ", left_side=true, transpose_a=NO_TRANSPOSE"),
      KC_INVALID_ARGUMENT, "expected a result of b's shape f32[2,1], got f32[1,2]");
#undef KT_TS
}
