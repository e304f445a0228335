/* The LAPACK custom calls JAX emits for jnp.linalg (lapack_*_ffi), run by
 * kcall's built-in targets: each routine on small matrices whose results
 * are known, in batches, in JAX's column-major layouts; the refusals of
 * calls that do not match the target; and the refusal when there is no
 * LAPACK. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt_hlo.h"

#define KT_HEAD "HloModule m\nENTRY e {\n"
#define KT_TYPED ", api_version=API_VERSION_TYPED_FFI"

static void kt_near(double got, double want, double tol, const char* what, int i) {
  if (!(fabs(got - want) <= tol)) {
    kt__fail(__FILE__, __LINE__, "%s[%d]: got %.9g, expected %.9g (within %g)", what, i, got,
             want, tol);
  }
}

static void kt_near_all(const double* got, const double* want, int n, double tol,
                        const char* what) {
  for (int i = 0; i < n; ++i) kt_near(got[i], want[i], tol, what, i);
}

static void kt_near_all_f(const float* got, const double* want, int n, double tol,
                          const char* what) {
  for (int i = 0; i < n; ++i) kt_near(got[i], want[i], tol, what, i);
}

/* ---- potrf ---------------------------------------------------------------- */

/* Two matrices: one positive definite, one not (info 2, as LAPACK says:
 * the leading minor of order 2 is not positive). The upper triangle is
 * left as it was. */
KC_TEST(hlo_linalg_potrf) {
  kc_tensor* outs[2];
  kt_run_text(KT_HEAD
              " a = f64[2,2,2] constant({ { {4, 2}, {2, 3} }, { {1, 2}, {2, 1} } })\n"
              " c = (f64[2,2,2]{1,2,0}, s32[2]{0}) custom-call(a), "
              "custom_call_target=\"lapack_dpotrf_ffi\", "
              "operand_layout_constraints={f64[2,2,2]{1,2,0}}, "
              "output_to_operand_aliasing={{0}: (0, {})}" KT_TYPED
              ", backend_config={uplo = 76 : ui8}\n"
              " f = f64[2,2,2] get-tuple-element(c), index=0\n"
              " i = s32[2] get-tuple-element(c), index=1\n"
              " ROOT t = (f64[2,2,2], s32[2]) tuple(f, i)\n}\n",
              outs, 2);
  const double* f = kt_data(outs[0]);
  const int32_t* info = kt_data(outs[1]);
  static const double want[4] = {2, 2, 1, 1.4142135623730951};
  kt_near_all(f, want, 4, 1e-12, "L");
  KC_CHECK_INT(info[0], 0);
  KC_CHECK_INT(info[1], 2);
  kt_release(outs, 2);
  /* f32 with the upper triangle; rank 2 (no batch), info s32[]. */
  kt_run_text(KT_HEAD
              " a = f32[2,2] constant({ {4, 2}, {2, 3} })\n"
              " c = (f32[2,2]{0,1}, s32[]) custom-call(a), "
              "custom_call_target=\"lapack_spotrf_ffi\", "
              "operand_layout_constraints={f32[2,2]{0,1}}" KT_TYPED
              ", backend_config={uplo = 85 : ui8}\n"
              " f = f32[2,2] get-tuple-element(c), index=0\n"
              " i = s32[] get-tuple-element(c), index=1\n"
              " ROOT t = (f32[2,2], s32[]) tuple(f, i)\n}\n",
              outs, 2);
  static const double want_u[4] = {2, 1, 2, 1.4142135623730951};
  kt_near_all_f(kt_data(outs[0]), want_u, 4, 1e-6, "U");
  KC_CHECK_INT(*(const int32_t*)kt_data(outs[1]), 0);
  kt_release(outs, 2);
}

/* Layouts are honoured, not refused: like jaxlib's handler, the call reads
 * its buffer's bytes as column-major matrices, so with row-major layouts
 * (as XLA would hand them over) the factor L lands transposed, and the
 * untouched upper triangle of the bytes is the logical lower one. */
KC_TEST(hlo_linalg_row_major_bytes) {
  kc_tensor* outs[1];
  kt_run_text(KT_HEAD
              " a = f64[2,2] constant({ {4, 2}, {2, 3} })\n"
              " c = (f64[2,2]{1,0}, s32[]) custom-call(a), "
              "custom_call_target=\"lapack_dpotrf_ffi\", "
              "operand_layout_constraints={f64[2,2]{1,0}}" KT_TYPED
              ", backend_config={uplo = 76 : ui8}\n"
              " ROOT f = f64[2,2] get-tuple-element(c), index=0\n}\n",
              outs, 1);
  static const double want[4] = {2, 1, 2, 1.4142135623730951};
  kt_near_all(kt_data(outs[0]), want, 4, 1e-12, "L^T");
  kt_release(outs, 1);
}

/* c128: a Hermitian positive definite matrix, [[4, 2i], [-2i, 5]]:
 * L = [[2, 0], [-i, 2]]. */
KC_TEST(hlo_linalg_potrf_complex) {
  kc_tensor* outs[1];
  kt_run_text(KT_HEAD
              " a = c128[2,2] constant({ {(4,0), (0,2)}, {(0,-2), (5,0)} })\n"
              " c = (c128[2,2]{0,1}, s32[]) custom-call(a), "
              "custom_call_target=\"lapack_zpotrf_ffi\", "
              "operand_layout_constraints={c128[2,2]{0,1}}" KT_TYPED
              ", backend_config={uplo = 76 : ui8}\n"
              " ROOT f = c128[2,2] get-tuple-element(c), index=0\n}\n",
              outs, 1);
  const double* f = kt_data(outs[0]); /* re, im pairs, row-major */
  kt_near(f[0], 2, 1e-12, "L00", 0);
  kt_near(f[4], 0, 1e-12, "L10.re", 0);
  kt_near(f[5], -1, 1e-12, "L10.im", 0);
  kt_near(f[6], 2, 1e-12, "L11.re", 0);
  kt_near(f[7], 0, 1e-12, "L11.im", 0);
  kt_release(outs, 1);
}

/* ---- getrf ---------------------------------------------------------------- */

/* [[0, 1], [2, 3]]: rows swapped (pivot 2), U = [[2, 3], [0, 1]], L21 =
 * 0; [[1, 2], [2, 4]], singular: pivot 2, L21 = 0.5, U22 = 0, info 2. */
KC_TEST(hlo_linalg_getrf) {
  kc_tensor* outs[3];
  kt_run_text(KT_HEAD
              " a = f32[2,2,2] constant({ { {0, 1}, {2, 3} }, { {1, 2}, {2, 4} } })\n"
              " c = (f32[2,2,2]{1,2,0}, s32[2,2]{1,0}, s32[2]{0}) custom-call(a), "
              "custom_call_target=\"lapack_sgetrf_ffi\", "
              "operand_layout_constraints={f32[2,2,2]{1,2,0}}, "
              "output_to_operand_aliasing={{0}: (0, {})}" KT_TYPED ", backend_config={}\n"
              " f = f32[2,2,2] get-tuple-element(c), index=0\n"
              " p = s32[2,2] get-tuple-element(c), index=1\n"
              " i = s32[2] get-tuple-element(c), index=2\n"
              " ROOT t = (f32[2,2,2], s32[2,2], s32[2]) tuple(f, p, i)\n}\n",
              outs, 3);
  static const double want[8] = {2, 3, 0, 1, 2, 4, 0.5, 0};
  kt_near_all_f(kt_data(outs[0]), want, 8, 1e-6, "LU");
  const int32_t* piv = kt_data(outs[1]);
  const int32_t* info = kt_data(outs[2]);
  KC_CHECK_INT(piv[0], 2);
  KC_CHECK_INT(piv[1], 2);
  KC_CHECK_INT(piv[2], 2);
  KC_CHECK_INT(piv[3], 2);
  KC_CHECK_INT(info[0], 0);
  KC_CHECK_INT(info[1], 2);
  kt_release(outs, 3);
  /* f64, wide (2 x 3): min(m, n) = 2 pivots. */
  kt_run_text(KT_HEAD
              " a = f64[2,3] constant({ {1, 2, 3}, {4, 5, 6} })\n"
              " c = (f64[2,3]{0,1}, s32[2]{0}, s32[]) custom-call(a), "
              "custom_call_target=\"lapack_dgetrf_ffi\", "
              "operand_layout_constraints={f64[2,3]{0,1}}" KT_TYPED "\n"
              " f = f64[2,3] get-tuple-element(c), index=0\n"
              " p = s32[2] get-tuple-element(c), index=1\n"
              " i = s32[] get-tuple-element(c), index=2\n"
              " ROOT t = (f64[2,3], s32[2], s32[]) tuple(f, p, i)\n}\n",
              outs, 3);
  static const double want_w[6] = {4, 5, 6, 0.25, 0.75, 1.5};
  kt_near_all(kt_data(outs[0]), want_w, 6, 1e-12, "LU");
  KC_CHECK_INT(((const int32_t*)kt_data(outs[1]))[0], 2);
  KC_CHECK_INT(((const int32_t*)kt_data(outs[1]))[1], 2);
  KC_CHECK_INT(*(const int32_t*)kt_data(outs[2]), 0);
  kt_release(outs, 3);
}

/* ---- trsm ----------------------------------------------------------------- */

/* Solves with a = [[2, 0], [1, 4]] (lower) and b = [[2, 4], [5, 6]] under
 * `attrs`, and in the same batch with 2 a: the solutions want[0..4) and
 * want2[0..4). */
static void kt_trsm(const char* attrs, const double* want, const double* want2) {
  char text[2048];
  snprintf(text, sizeof text,
           KT_HEAD
           " a = f64[2,2,2] constant({ { {2, 0}, {1, 4} }, { {4, 0}, {2, 8} } })\n"
           " b = f64[2,2,2] constant({ { {2, 4}, {5, 6} }, { {2, 4}, {5, 6} } })\n"
           " ROOT x = f64[2,2,2]{1,2,0} custom-call(a, b), "
           "custom_call_target=\"lapack_dtrsm_ffi\", "
           "operand_layout_constraints={f64[2,2,2]{1,2,0}, f64[2,2,2]{1,2,0}}, "
           "output_to_operand_aliasing={{}: (1, {})}" KT_TYPED ", backend_config={%s}\n}\n",
           attrs);
  kc_tensor* outs[1];
  kt_run_text(text, outs, 1);
  const double* x = kt_data(outs[0]);
  kt_near_all(x, want, 4, 1e-12, attrs);
  kt_near_all(x + 4, want2, 4, 1e-12, attrs);
  kt_release(outs, 1);
}

KC_TEST(hlo_linalg_trsm) {
  static const double left[4] = {1, 2, 1, 1}, left2[4] = {0.5, 1, 0.5, 0.5};
  kt_trsm("diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8", left, left2);
  static const double lt[4] = {0.375, 1.25, 1.25, 1.5}, lt2[4] = {0.1875, 0.625, 0.625, 0.75};
  kt_trsm("diag = 78 : ui8, side = 76 : ui8, trans_x = 84 : ui8, uplo = 76 : ui8", lt, lt2);
  static const double right[4] = {0.5, 1, 1.75, 1.5}, right2[4] = {0.25, 0.5, 0.875, 0.75};
  kt_trsm("diag = 78 : ui8, side = 82 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8", right,
          right2);
  /* A unit diagonal: a's diagonal is not read. */
  static const double unit[4] = {2, 4, 3, 2}, unit2[4] = {2, 4, 1, -2};
  kt_trsm("diag = 85 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8", unit, unit2);
}

/* ---- syevd / heevd ----------------------------------------------------------- */

/* [[2, 1], [1, 2]] and 3 times it: eigenvalues 1, 3 and 3, 9, ascending;
 * eigenvectors (columns) with A v = w v, of norm 1. */
KC_TEST(hlo_linalg_syevd) {
  kc_tensor* outs[3];
  kt_run_text(KT_HEAD
              " a = f64[2,2,2] constant({ { {2, 1}, {1, 2} }, { {6, 3}, {3, 6} } })\n"
              " c = (f64[2,2,2]{1,2,0}, f64[2,2]{1,0}, s32[2]{0}) custom-call(a), "
              "custom_call_target=\"lapack_dsyevd_ffi\", "
              "operand_layout_constraints={f64[2,2,2]{1,2,0}}, "
              "output_to_operand_aliasing={{0}: (0, {})}" KT_TYPED
              ", backend_config={mode = 86 : ui8, uplo = 76 : ui8}\n"
              " v = f64[2,2,2] get-tuple-element(c), index=0\n"
              " w = f64[2,2] get-tuple-element(c), index=1\n"
              " i = s32[2] get-tuple-element(c), index=2\n"
              " ROOT t = (f64[2,2,2], f64[2,2], s32[2]) tuple(v, w, i)\n}\n",
              outs, 3);
  const double* v = kt_data(outs[0]);
  const double* w = kt_data(outs[1]);
  static const double want_w[4] = {1, 3, 3, 9};
  kt_near_all(w, want_w, 4, 1e-12, "w");
  for (int b = 0; b < 2; ++b) {
    double s = b ? 3 : 1;
    const double* m = v + 4 * b;
    for (int j = 0; j < 2; ++j) { /* column j: A v_j = w_j v_j */
      double x = m[j], y = m[2 + j];
      kt_near(s * (2 * x + y), w[2 * b + j] * x, 1e-12, "Av", j);
      kt_near(s * (x + 2 * y), w[2 * b + j] * y, 1e-12, "Av", j);
      kt_near(x * x + y * y, 1, 1e-12, "|v|", j);
    }
  }
  KC_CHECK_INT(((const int32_t*)kt_data(outs[2]))[0], 0);
  KC_CHECK_INT(((const int32_t*)kt_data(outs[2]))[1], 0);
  kt_release(outs, 3);
  /* f32, eigenvalues only (mode N), the upper triangle read. */
  kt_run_text(KT_HEAD
              " a = f32[2,2] constant({ {2, 1}, {7, 2} })\n"
              " c = (f32[2,2]{0,1}, f32[2]{0}, s32[]) custom-call(a), "
              "custom_call_target=\"lapack_ssyevd_ffi\", "
              "operand_layout_constraints={f32[2,2]{0,1}}" KT_TYPED
              ", backend_config={mode = 78 : ui8, uplo = 85 : ui8}\n"
              " ROOT w = f32[2] get-tuple-element(c), index=1\n}\n",
              outs, 1);
  static const double want_n[2] = {1, 3};
  kt_near_all_f(kt_data(outs[0]), want_n, 2, 1e-6, "w");
  kt_release(outs, 1);
}

/* c64 heevd: [[2, i], [-i, 2]] has eigenvalues 1 and 3 (f32). */
KC_TEST(hlo_linalg_heevd) {
  kc_tensor* outs[2];
  kt_run_text(KT_HEAD
              " a = c64[1,2,2] constant({ { {(2,0), (0,1)}, {(0,-1), (2,0)} } })\n"
              " c = (c64[1,2,2]{1,2,0}, f32[1,2]{1,0}, s32[1]{0}) custom-call(a), "
              "custom_call_target=\"lapack_cheevd_ffi\", "
              "operand_layout_constraints={c64[1,2,2]{1,2,0}}" KT_TYPED
              ", backend_config={mode = 86 : ui8, uplo = 76 : ui8}\n"
              " w = f32[1,2] get-tuple-element(c), index=1\n"
              " i = s32[1] get-tuple-element(c), index=2\n"
              " ROOT t = (f32[1,2], s32[1]) tuple(w, i)\n}\n",
              outs, 2);
  static const double want[2] = {1, 3};
  kt_near_all_f(kt_data(outs[0]), want, 2, 1e-5, "w");
  KC_CHECK_INT(*(const int32_t*)kt_data(outs[1]), 0);
  kt_release(outs, 2);
}

/* ---- gesdd ---------------------------------------------------------------- */

/* a = [[0, 3], [-2, 0], [0, 0]] (3 x 2): singular values 3 and 2; in mode
 * A, u is 3 x 3 and vt 2 x 2, in S 3 x 2 and 2 x 2, and u S vt is a. */
static void kt_gesdd(char mode, int ucols) {
  char text[2048];
  snprintf(text, sizeof text,
           KT_HEAD
           " a = f32[3,2] constant({ {0, 3}, {-2, 0}, {0, 0} })\n"
           " c = (f32[3,2]{0,1}, f32[2]{0}, f32[3,%d]{0,1}, f32[2,2]{0,1}, s32[]) "
           "custom-call(a), custom_call_target=\"lapack_sgesdd_ffi\", "
           "operand_layout_constraints={f32[3,2]{0,1}}, "
           "output_to_operand_aliasing={{0}: (0, {})}" KT_TYPED
           ", backend_config={mode = %d : ui8}\n"
           " s = f32[2] get-tuple-element(c), index=1\n"
           " u = f32[3,%d] get-tuple-element(c), index=2\n"
           " vt = f32[2,2] get-tuple-element(c), index=3\n"
           " i = s32[] get-tuple-element(c), index=4\n"
           " ROOT t = (f32[2], f32[3,%d], f32[2,2], s32[]) tuple(s, u, vt, i)\n}\n",
           ucols, (int)mode, ucols, ucols);
  kc_tensor* outs[4];
  kt_run_text(text, outs, 4);
  const float* s = kt_data(outs[0]);
  const float* u = kt_data(outs[1]);
  const float* vt = kt_data(outs[2]);
  static const double want_s[2] = {3, 2};
  kt_near_all_f(s, want_s, 2, 1e-6, "s");
  static const double a[6] = {0, 3, -2, 0, 0, 0};
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 2; ++j) {
      double r = 0;
      for (int k = 0; k < 2; ++k) r += (double)u[i * ucols + k] * s[k] * vt[k * 2 + j];
      kt_near(mode == 'N' ? 0 : r, mode == 'N' ? 0 : a[i * 2 + j], 1e-6, "u s vt", i * 2 + j);
      /* Mode N computes no vectors: u and vt are zeros. */
      if (mode == 'N') kt_near(u[i * ucols + j], 0, 0, "u", i * ucols + j);
    }
  }
  KC_CHECK_INT(*(const int32_t*)kt_data(outs[3]), 0);
  kt_release(outs, 4);
}

KC_TEST(hlo_linalg_gesdd) {
  kt_gesdd('A', 3);
  kt_gesdd('S', 2);
  kt_gesdd('N', 3);
}

/* c128 in a batch of 2: diag(1+i, 2) has singular values 2 and sqrt 2. */
KC_TEST(hlo_linalg_gesdd_complex) {
  kc_tensor* outs[1];
  kt_run_text(KT_HEAD
              " a = c128[2,2,2] constant({ { {(1,1), (0,0)}, {(0,0), (2,0)} },"
              " { {(0,0), (0,3)}, {(0,0), (0,0)} } })\n"
              " c = (c128[2,2,2]{1,2,0}, f64[2,2]{1,0}, c128[2,2,2]{1,2,0}, "
              "c128[2,2,2]{1,2,0}, s32[2]{0}) custom-call(a), "
              "custom_call_target=\"lapack_zgesdd_ffi\", "
              "operand_layout_constraints={c128[2,2,2]{1,2,0}}" KT_TYPED
              ", backend_config={mode = 83 : ui8}\n"
              " ROOT s = f64[2,2] get-tuple-element(c), index=1\n}\n",
              outs, 1);
  static const double want[4] = {2, 1.4142135623730951, 3, 0};
  kt_near_all(kt_data(outs[0]), want, 4, 1e-12, "s");
  kt_release(outs, 1);
}

/* ---- geqrf and orgqr -------------------------------------------------------- */

/* a = [[1, 2], [3, 4], [5, 6]], batch 2 (the second 2 a): Q R = a with R
 * the upper triangle geqrf leaves, Q from orgqr; Q^T Q = I. */
KC_TEST(hlo_linalg_qr) {
  kc_tensor* outs[3];
  kt_run_text(KT_HEAD
              " a = f64[2,3,2] constant({ { {1, 2}, {3, 4}, {5, 6} }, "
              "{ {2, 4}, {6, 8}, {10, 12} } })\n"
              " g = (f64[2,3,2]{1,2,0}, f64[2,2]{1,0}) custom-call(a), "
              "custom_call_target=\"lapack_dgeqrf_ffi\", "
              "operand_layout_constraints={f64[2,3,2]{1,2,0}}, "
              "output_to_operand_aliasing={{0}: (0, {})}" KT_TYPED ", backend_config={}\n"
              " r = f64[2,3,2] get-tuple-element(g), index=0\n"
              " tau = f64[2,2] get-tuple-element(g), index=1\n"
              " q = f64[2,3,2]{1,2,0} custom-call(r, tau), "
              "custom_call_target=\"lapack_dorgqr_ffi\", "
              "operand_layout_constraints={f64[2,3,2]{1,2,0}, f64[2,2]{1,0}}, "
              "output_to_operand_aliasing={{}: (0, {})}" KT_TYPED ", backend_config={}\n"
              " ROOT t = (f64[2,3,2], f64[2,3,2], f64[2,2]) tuple(q, r, tau)\n}\n",
              outs, 3);
  const double* q = kt_data(outs[0]);
  const double* r = kt_data(outs[1]);
  for (int b = 0; b < 2; ++b) {
    const double* qb = q + 6 * b;
    const double* rb = r + 6 * b;
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 2; ++j) {
        double x = 0;
        for (int k = 0; k <= j; ++k) x += qb[i * 2 + k] * rb[k * 2 + j];
        kt_near(x, (b + 1) * (1 + 2 * i + j), 1e-12, "QR", i * 2 + j);
      }
    }
    for (int j = 0; j < 2; ++j) {
      for (int k = 0; k < 2; ++k) {
        double x = 0;
        for (int i = 0; i < 3; ++i) x += qb[i * 2 + j] * qb[i * 2 + k];
        kt_near(x, j == k, 1e-12, "QtQ", j * 2 + k);
      }
    }
  }
  kt_release(outs, 3);
}

/* c64 ungqr after cgeqrf: Q^H Q = I for a 2 x 2 complex matrix. */
KC_TEST(hlo_linalg_qr_complex) {
  kc_tensor* outs[1];
  kt_run_text(KT_HEAD
              " a = c64[2,2] constant({ {(1,1), (2,0)}, {(0,1), (1,-1)} })\n"
              " g = (c64[2,2]{0,1}, c64[2]{0}) custom-call(a), "
              "custom_call_target=\"lapack_cgeqrf_ffi\", "
              "operand_layout_constraints={c64[2,2]{0,1}}" KT_TYPED "\n"
              " r = c64[2,2] get-tuple-element(g), index=0\n"
              " tau = c64[2] get-tuple-element(g), index=1\n"
              " ROOT q = c64[2,2]{0,1} custom-call(r, tau), "
              "custom_call_target=\"lapack_cungqr_ffi\", "
              "operand_layout_constraints={c64[2,2]{0,1}, c64[2]{0}}" KT_TYPED "\n}\n",
              outs, 1);
  const float complex* q = kt_data(outs[0]);
  for (int j = 0; j < 2; ++j) {
    for (int k = 0; k < 2; ++k) {
      float complex x = 0;
      for (int i = 0; i < 2; ++i) x += conjf(q[i * 2 + j]) * q[i * 2 + k];
      kt_near(crealf(x), j == k, 1e-5, "QhQ.re", j * 2 + k);
      kt_near(cimagf(x), 0, 1e-5, "QhQ.im", j * 2 + k);
    }
  }
  kt_release(outs, 1);
}

/* ---- refusals --------------------------------------------------------------- */

#define KT_POTRF(shape, result, cfg)                                                  \
  KT_HEAD " a = " shape " parameter(0)\n ROOT c = " result " custom-call(a), "        \
          "custom_call_target=\"lapack_spotrf_ffi\"" KT_TYPED cfg "\n}\n"

KC_TEST(hlo_linalg_refusals) {
  KT_COMPILE_FAILS(KT_POTRF("f64[2,2]", "(f64[2,2], s32[])", ", backend_config={uplo = 76 : ui8}"),
                   KC_INVALID_ARGUMENT, "instruction 'c'", "custom call 'lapack_spotrf_ffi'",
                   "operand 0: expected f32[..., m, n] (a batch of matrices), got f64[2,2]");
  KT_COMPILE_FAILS(KT_POTRF("f32[2]", "(f32[2], s32[])", ", backend_config={uplo = 76 : ui8}"),
                   KC_INVALID_ARGUMENT, "operand 0: expected f32[..., m, n]", "got f32[2]");
  KT_COMPILE_FAILS(KT_POTRF("f32[2,3]", "(f32[2,3], s32[])", ", backend_config={uplo = 76 : ui8}"),
                   KC_INVALID_ARGUMENT, "operand 0 (square matrices): expected f32[2,2]",
                   "got f32[2,3]");
  KT_COMPILE_FAILS(
      KT_POTRF("f32[4,2,2]", "(f32[4,2,2], s32[3])", ", backend_config={uplo = 76 : ui8}"),
      KC_INVALID_ARGUMENT, "result 1 (info): expected s32[4], got s32[3]");
  KT_COMPILE_FAILS(KT_POTRF("f32[2,2]", "f32[2,2]", ", backend_config={uplo = 76 : ui8}"),
                   KC_INVALID_ARGUMENT,
                   "expected 1 operand and a tuple of 2 results, got 1 operand and the result "
                   "f32[2,2]");
  KT_COMPILE_FAILS(KT_POTRF("f32[2,2]", "(f32[2,2], s32[])", ""), KC_INVALID_ARGUMENT,
                   "missing attribute 'uplo' (one of the characters LU, as ui8)");
  KT_COMPILE_FAILS(KT_POTRF("f32[2,2]", "(f32[2,2], s32[])", ", backend_config={uplo = 88 : ui8}"),
                   KC_INVALID_ARGUMENT,
                   "attribute 'uplo': expected one of the characters LU", "got 88");
  KT_COMPILE_FAILS(
      KT_POTRF("f32[2,2]", "(f32[2,2], s32[])", ", backend_config={uplo = 76 : ui8, lower = 1 : i32}"),
      KC_INVALID_ARGUMENT, "attribute 'lower' is not one it reads");
  KT_COMPILE_FAILS(KT_HEAD " a = f32[2,2] parameter(0)\n ROOT c = (f32[2,2], s32[]) custom-call(a), "
                           "custom_call_target=\"lapack_spotrf_ffi\", "
                           "api_version=API_VERSION_STATUS_RETURNING\n}\n",
                   KC_INVALID_ARGUMENT, "expected api_version=API_VERSION_TYPED_FFI (4)",
                   "got 2");
  /* trsm: a's order follows side; gesdd: u and vt follow mode; orgqr:
   * m >= n >= k. */
  KT_COMPILE_FAILS(KT_HEAD " a = f64[3,3] parameter(0)\n b = f64[2,4] parameter(1)\n"
                           " ROOT x = f64[2,4] custom-call(a, b), "
                           "custom_call_target=\"lapack_dtrsm_ffi\"" KT_TYPED
                           ", backend_config={diag = 78 : ui8, side = 76 : ui8, "
                           "trans_x = 78 : ui8, uplo = 76 : ui8}\n}\n",
                   KC_INVALID_ARGUMENT,
                   "operand 0 (the triangular matrices): expected f64[2,2], got f64[3,3]");
  KT_COMPILE_FAILS(KT_HEAD " a = f32[3,2] parameter(0)\n"
                           " ROOT c = (f32[3,2], f32[2], f32[3,2], f32[2,2], s32[]) "
                           "custom-call(a), custom_call_target=\"lapack_sgesdd_ffi\"" KT_TYPED
                           ", backend_config={mode = 65 : ui8}\n}\n",
                   KC_INVALID_ARGUMENT, "result 2 (u): expected f32[3,3], got f32[3,2]");
  KT_COMPILE_FAILS(KT_HEAD " a = f32[3,2] parameter(0)\n"
                           " ROOT c = (f32[3,2], f32[2], f32[3,3], f32[2,2], s32[]) "
                           "custom-call(a), custom_call_target=\"lapack_sgesdd_ffi\"" KT_TYPED
                           ", backend_config={mode = 79 : ui8}\n}\n",
                   KC_INVALID_ARGUMENT, "attribute 'mode': expected one of the characters ASN",
                   "got 79");
  KT_COMPILE_FAILS(KT_HEAD " a = f32[2,3] parameter(0)\n t = f32[2] parameter(1)\n"
                           " ROOT q = f32[2,3] custom-call(a, t), "
                           "custom_call_target=\"lapack_sorgqr_ffi\"" KT_TYPED "\n}\n",
                   KC_INVALID_ARGUMENT,
                   "expected m >= n >= k (a's rows, a's columns, tau's length), got m 2, n 3, "
                   "k 2");
  KT_COMPILE_FAILS(KT_HEAD " a = f32[3,2] parameter(0)\n"
                           " ROOT g = (f32[3,2], f32[3]) custom-call(a), "
                           "custom_call_target=\"lapack_sgeqrf_ffi\"" KT_TYPED "\n}\n",
                   KC_INVALID_ARGUMENT, "result 1 (tau): expected f32[2], got f32[3]");
  KT_COMPILE_FAILS(KT_HEAD " a = c64[2,2] parameter(0)\n"
                           " ROOT c = (c64[2,2], c64[2], s32[]) custom-call(a), "
                           "custom_call_target=\"lapack_cheevd_ffi\"" KT_TYPED
                           ", backend_config={mode = 86 : ui8, uplo = 76 : ui8}\n}\n",
                   KC_INVALID_ARGUMENT,
                   "result 1 (eigenvalues): expected f32[2], got c64[2]");
}

/* Without LAPACK (KCALL_LAPACK_LIBRARY names a library that is not there;
 * ctest sets it for this test's process, so that no earlier compile has
 * loaded one), compiling refuses the call, naming the target, the library
 * and what to do. */
KC_TEST(hlo_linalg_no_lapack) {
  const char* env = getenv("KCALL_LAPACK_LIBRARY");
  if (!env || strcmp(env, "/nonexistent/liblapack.so.3") != 0) {
    kt_skip("needs KCALL_LAPACK_LIBRARY=/nonexistent/liblapack.so.3 from the start of the "
            "process (ctest sets it)");
  }
  KT_COMPILE_FAILS(KT_POTRF("f32[2,2]", "(f32[2,2], s32[])", ", backend_config={uplo = 76 : ui8}"),
                   KC_FAILED_PRECONDITION, "instruction 'c'",
                   "custom call 'lapack_spotrf_ffi' (a LAPACK routine, as JAX emits for "
                   "jnp.linalg) needs LAPACK",
                   "cannot load the LAPACK library '/nonexistent/liblapack.so.3' named by "
                   "KCALL_LAPACK_LIBRARY");
  /* Parsing alone needs no LAPACK; a bad call is still refused as such. */
  KT_COMPILE_FAILS(KT_POTRF("f32[2,3]", "(f32[2,3], s32[])", ", backend_config={uplo = 76 : ui8}"),
                   KC_INVALID_ARGUMENT, "operand 0 (square matrices)");
}
