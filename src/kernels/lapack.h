/* LAPACK and the one BLAS routine the linear-algebra custom calls need
 * (instr_linalg.c), loaded at run time with dlopen: libkcall never links
 * against them. Never installed.
 *
 * Where it comes from, decided once per process (the first compile of a
 * program that calls one of them; later changes to the environment are
 * not seen):
 *   1. KCALL_LAPACK_LIBRARY, when set and not empty: that library (a path
 *      or a name the dynamic loader finds) and nothing else;
 *   2. otherwise the system's: liblapack.so.3, liblapack.so,
 *      libopenblas.so.0, libopenblas.so, in that order;
 *   3. otherwise KCALL_LAPACK_FALLBACK, when set: the Python package sets
 *      it, when it is imported, to the OpenBLAS NumPy's wheel bundles
 *      (numpy.libs/libscipy_openblas*.so), so that a pip install works on
 *      a machine without a system LAPACK.
 * A library may export the routines under their Fortran names (dgetrf_,
 * 32-bit integers: the reference LAPACK, OpenBLAS), with the 64_ suffix
 * (dgetrf_64_, 64-bit integers), or with the scipy_ prefix of the
 * OpenBLAS NumPy's and SciPy's wheels bundle (scipy_dgetrf_64_, 64-bit;
 * scipy_dgetrf_, 32-bit); kcall tries them in that order and keeps the
 * first that has dgetrf.
 *
 * The wrappers below take and return 64-bit integers whatever the
 * library's; integer arrays (pivots, integer workspaces) are in the
 * library's width: kc__lapack_int_size bytes per element. Element types
 * are indexed by kc__la_type. */
#ifndef KCALL_KERNELS_LAPACK_H_
#define KCALL_KERNELS_LAPACK_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* s, d, c, z: f32, f64, c64, c128. */
typedef enum kc__la_type { KC__LA_S = 0, KC__LA_D, KC__LA_C, KC__LA_Z, KC__LA_NUM_TYPES } kc__la_type;

/* The routines, each in the four types (syevd is heevd and orgqr is
 * ungqr for the complex ones). */
typedef enum kc__la_routine {
  KC__LA_POTRF = 0,
  KC__LA_GETRF,
  KC__LA_TRSM,
  KC__LA_SYEVD,
  KC__LA_GESDD,
  KC__LA_GEQRF,
  KC__LA_ORGQR,
  KC__LA_NUM_ROUTINES
} kc__la_routine;

typedef struct kc__lapack kc__lapack;

/* The process's LAPACK, loaded on the first call (thread-safe: every
 * caller waits for the one load); NULL when there is none, with why in
 * *out_why (static text, naming where kcall looked and what to install).
 * The library stays loaded until the process ends. */
const kc__lapack* kc__lapack_get(const char** out_why);

/* The routine's symbol as the library names it ("dgetrf_",
 * "scipy_dgetrf_64_") into buf, and whether the library has it. */
bool kc__lapack_has(const kc__lapack* la, kc__la_routine r, kc__la_type t, char* buf,
                    size_t cap);

/* The library's path or name, as it was opened. */
const char* kc__lapack_name(const kc__lapack* la);

/* Bytes of one of the library's integers: 4 or 8. */
size_t kc__lapack_int_size(const kc__lapack* la);

/* Element i of an array of the library's integers. */
int64_t kc__lapack_int_at(const kc__lapack* la, const void* array, size_t i);

/* The routines (LAPACK's arguments, column-major, leading dimensions as
 * given); each returns INFO. A workspace query is lwork = -1: the sizes
 * come back in work[0] (its real part), rwork[0] and iwork[0]. */
int64_t kc__lapack_potrf(const kc__lapack* la, kc__la_type t, char uplo, int64_t n, void* a,
                         int64_t lda);
int64_t kc__lapack_getrf(const kc__lapack* la, kc__la_type t, int64_t m, int64_t n, void* a,
                         int64_t lda, void* ipiv);
/* B := op(A)^-1 B (side L) or B op(A)^-1 (side R), alpha 1. */
void kc__lapack_trsm(const kc__lapack* la, kc__la_type t, char side, char uplo, char trans,
                     char diag, int64_t m, int64_t n, const void* a, int64_t lda, void* b,
                     int64_t ldb);
/* syevd for s and d (rwork ignored), heevd for c and z. */
int64_t kc__lapack_syevd(const kc__lapack* la, kc__la_type t, char jobz, char uplo, int64_t n,
                         void* a, int64_t lda, void* w, void* work, int64_t lwork, void* rwork,
                         int64_t lrwork, void* iwork, int64_t liwork);
/* rwork only for c and z. */
int64_t kc__lapack_gesdd(const kc__lapack* la, kc__la_type t, char jobz, int64_t m, int64_t n,
                         void* a, int64_t lda, void* s, void* u, int64_t ldu, void* vt,
                         int64_t ldvt, void* work, int64_t lwork, void* rwork, void* iwork);
int64_t kc__lapack_geqrf(const kc__lapack* la, kc__la_type t, int64_t m, int64_t n, void* a,
                         int64_t lda, void* tau, void* work, int64_t lwork);
/* orgqr for s and d, ungqr for c and z. */
int64_t kc__lapack_orgqr(const kc__lapack* la, kc__la_type t, int64_t m, int64_t n, int64_t k,
                         void* a, int64_t lda, const void* tau, void* work, int64_t lwork);

#endif /* KCALL_KERNELS_LAPACK_H_ */
