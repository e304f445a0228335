/* LAPACK loaded at run time (lapack.h says from where). Every routine is
 * called through its Fortran interface: arguments by address, the hidden
 * lengths of character arguments last (1 each, as gfortran passes them). */
#include "kernels/lapack.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kc__lapack {
  void* handle;
  bool ilp64;
  const char* prefix; /* "", "scipy_" */
  const char* suffix; /* "_", "_64_" */
  char name[512];
  void (*fn[KC__LA_NUM_ROUTINES][KC__LA_NUM_TYPES])(void);
};

static struct {
  pthread_once_t once;
  kc__lapack la;
  bool loaded;
  char why[1024];
} kc__lapack_state = {.once = PTHREAD_ONCE_INIT};

/* The routines' names without the type letter: real, then complex. */
static const char* const kc__la_names[KC__LA_NUM_ROUTINES][2] = {
    [KC__LA_POTRF] = {"potrf", "potrf"}, [KC__LA_GETRF] = {"getrf", "getrf"},
    [KC__LA_TRSM] = {"trsm", "trsm"},    [KC__LA_SYEVD] = {"syevd", "heevd"},
    [KC__LA_GESDD] = {"gesdd", "gesdd"}, [KC__LA_GEQRF] = {"geqrf", "geqrf"},
    [KC__LA_ORGQR] = {"orgqr", "ungqr"},
};

static void kc__la_symbol(const char* prefix, const char* suffix, kc__la_routine r,
                          kc__la_type t, char* buf, size_t cap) {
  snprintf(buf, cap, "%s%c%s%s", prefix, "sdcz"[t], kc__la_names[r][t >= KC__LA_C], suffix);
}

/* The naming conventions, tried in order: the first with dgetrf wins. */
static const struct {
  const char* prefix;
  const char* suffix;
  bool ilp64;
} kc__la_conventions[] = {
    {"", "_", false},
    {"", "_64_", true},
    {"scipy_", "_64_", true},
    {"scipy_", "_", false},
};

static bool kc__lapack_bind(void* h, const char* name) {
  kc__lapack* la = &kc__lapack_state.la;
  for (size_t k = 0; k < sizeof kc__la_conventions / sizeof kc__la_conventions[0]; ++k) {
    char sym[64];
    kc__la_symbol(kc__la_conventions[k].prefix, kc__la_conventions[k].suffix, KC__LA_GETRF,
                  KC__LA_D, sym, sizeof sym);
    if (!dlsym(h, sym)) continue;
    la->handle = h;
    la->ilp64 = kc__la_conventions[k].ilp64;
    la->prefix = kc__la_conventions[k].prefix;
    la->suffix = kc__la_conventions[k].suffix;
    snprintf(la->name, sizeof la->name, "%s", name);
    for (int r = 0; r < KC__LA_NUM_ROUTINES; ++r) {
      for (int t = 0; t < KC__LA_NUM_TYPES; ++t) {
        kc__la_symbol(la->prefix, la->suffix, (kc__la_routine)r, (kc__la_type)t, sym,
                      sizeof sym);
        void* f = dlsym(h, sym);
        memcpy(&la->fn[r][t], &f, sizeof f);
      }
    }
    return true;
  }
  return false;
}

static void kc__lapack_load(void) {
  char* why = kc__lapack_state.why;
  size_t cap = sizeof kc__lapack_state.why;
  const char* env = getenv("KCALL_LAPACK_LIBRARY");
  if (env && *env) {
    void* h = dlopen(env, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* e = dlerror();
      snprintf(why, cap, "cannot load the LAPACK library '%.300s' named by KCALL_LAPACK_LIBRARY: %.400s",
               env, e ? e : "unknown error");
      return;
    }
    if (!kc__lapack_bind(h, env)) {
      dlclose(h);
      snprintf(why, cap,
               "the library '%.300s' named by KCALL_LAPACK_LIBRARY has no LAPACK (no dgetrf_, "
               "dgetrf_64_ or scipy_dgetrf_64_)",
               env);
      return;
    }
    kc__lapack_state.loaded = true;
    return;
  }
  static const char* const names[] = {"liblapack.so.3", "liblapack.so", "libopenblas.so.0",
                                      "libopenblas.so"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
    void* h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!h) continue;
    if (kc__lapack_bind(h, names[i])) {
      kc__lapack_state.loaded = true;
      return;
    }
    dlclose(h);
  }
  const char* fallback = getenv("KCALL_LAPACK_FALLBACK");
  if (fallback && *fallback) {
    void* h = dlopen(fallback, RTLD_NOW | RTLD_LOCAL);
    if (h && kc__lapack_bind(h, fallback)) {
      kc__lapack_state.loaded = true;
      return;
    }
    if (h) dlclose(h);
  }
  snprintf(why, cap,
           "no LAPACK library found (looked for liblapack.so.3, liblapack.so, libopenblas.so.0 "
           "and libopenblas.so on the loader's path%s); install one (Debian and Ubuntu: "
           "apt-get install liblapack3; Fedora: dnf install lapack) or set "
           "KCALL_LAPACK_LIBRARY to the path of a LAPACK library, such as the "
           "libscipy_openblas64_*.so in NumPy's numpy.libs folder",
           fallback && *fallback ? ", then KCALL_LAPACK_FALLBACK, which did not load" : "");
}

const kc__lapack* kc__lapack_get(const char** out_why) {
  pthread_once(&kc__lapack_state.once, kc__lapack_load);
  if (kc__lapack_state.loaded) {
    if (out_why) *out_why = NULL;
    return &kc__lapack_state.la;
  }
  if (out_why) *out_why = kc__lapack_state.why;
  return NULL;
}

bool kc__lapack_has(const kc__lapack* la, kc__la_routine r, kc__la_type t, char* buf,
                    size_t cap) {
  kc__la_symbol(la->prefix, la->suffix, r, t, buf, cap);
  return la->fn[r][t] != NULL;
}

const char* kc__lapack_name(const kc__lapack* la) { return la->name; }

size_t kc__lapack_int_size(const kc__lapack* la) { return la->ilp64 ? 8 : 4; }

int64_t kc__lapack_int_at(const kc__lapack* la, const void* array, size_t i) {
  if (la->ilp64) {
    int64_t v;
    memcpy(&v, (const char*)array + i * 8, 8);
    return v;
  }
  int32_t v;
  memcpy(&v, (const char*)array + i * 4, 4);
  return v;
}

/* An integer argument in the library's width. */
typedef struct kc__li {
  int64_t i64;
  int32_t i32;
} kc__li;

static void* kc__li_set(const kc__lapack* la, kc__li* x, int64_t v) {
  x->i64 = v;
  x->i32 = (int32_t)v;
  return la->ilp64 ? (void*)&x->i64 : (void*)&x->i32;
}

static int64_t kc__li_get(const kc__lapack* la, const kc__li* x) {
  return la->ilp64 ? x->i64 : x->i32;
}

typedef void (*kc__potrf_fn)(const char*, const void*, void*, const void*, void*, size_t);
typedef void (*kc__getrf_fn)(const void*, const void*, void*, const void*, void*, void*);
typedef void (*kc__trsm_fn)(const char*, const char*, const char*, const char*, const void*,
                            const void*, const void*, const void*, const void*, void*,
                            const void*, size_t, size_t, size_t, size_t);
typedef void (*kc__syevd_fn)(const char*, const char*, const void*, void*, const void*, void*,
                             void*, const void*, void*, const void*, void*, size_t, size_t);
typedef void (*kc__heevd_fn)(const char*, const char*, const void*, void*, const void*, void*,
                             void*, const void*, void*, const void*, void*, const void*, void*,
                             size_t, size_t);
typedef void (*kc__gesdd_fn)(const char*, const void*, const void*, void*, const void*, void*,
                             void*, const void*, void*, const void*, void*, const void*, void*,
                             void*, size_t);
typedef void (*kc__cgesdd_fn)(const char*, const void*, const void*, void*, const void*, void*,
                              void*, const void*, void*, const void*, void*, const void*, void*,
                              void*, void*, size_t);
typedef void (*kc__geqrf_fn)(const void*, const void*, void*, const void*, void*, void*,
                             const void*, void*);
typedef void (*kc__orgqr_fn)(const void*, const void*, const void*, void*, const void*,
                             const void*, void*, const void*, void*);

int64_t kc__lapack_potrf(const kc__lapack* la, kc__la_type t, char uplo, int64_t n, void* a,
                         int64_t lda) {
  kc__li nv, ldav, info = {0, 0};
  void* n_ = kc__li_set(la, &nv, n);
  void* lda_ = kc__li_set(la, &ldav, lda);
  ((kc__potrf_fn)la->fn[KC__LA_POTRF][t])(&uplo, n_, a, lda_, kc__li_set(la, &info, 0), 1);
  return kc__li_get(la, &info);
}

int64_t kc__lapack_getrf(const kc__lapack* la, kc__la_type t, int64_t m, int64_t n, void* a,
                         int64_t lda, void* ipiv) {
  kc__li mv, nv, ldav, info = {0, 0};
  void* m_ = kc__li_set(la, &mv, m);
  void* n_ = kc__li_set(la, &nv, n);
  void* lda_ = kc__li_set(la, &ldav, lda);
  ((kc__getrf_fn)la->fn[KC__LA_GETRF][t])(m_, n_, a, lda_, ipiv, kc__li_set(la, &info, 0));
  return kc__li_get(la, &info);
}

void kc__lapack_trsm(const kc__lapack* la, kc__la_type t, char side, char uplo, char trans,
                     char diag, int64_t m, int64_t n, const void* a, int64_t lda, void* b,
                     int64_t ldb) {
  kc__li mv, nv, ldav, ldbv;
  void* m_ = kc__li_set(la, &mv, m);
  void* n_ = kc__li_set(la, &nv, n);
  void* lda_ = kc__li_set(la, &ldav, lda);
  void* ldb_ = kc__li_set(la, &ldbv, ldb);
  /* One, as a float, double or complex of either. */
  float one_f[2] = {1.0f, 0.0f};
  double one_d[2] = {1.0, 0.0};
  const void* alpha = (t == KC__LA_S || t == KC__LA_C) ? (const void*)one_f : (const void*)one_d;
  ((kc__trsm_fn)la->fn[KC__LA_TRSM][t])(&side, &uplo, &trans, &diag, m_, n_, alpha, a, lda_, b,
                                        ldb_, 1, 1, 1, 1);
}

int64_t kc__lapack_syevd(const kc__lapack* la, kc__la_type t, char jobz, char uplo, int64_t n,
                         void* a, int64_t lda, void* w, void* work, int64_t lwork, void* rwork,
                         int64_t lrwork, void* iwork, int64_t liwork) {
  kc__li nv, ldav, lworkv, lrworkv, liworkv, info = {0, 0};
  void* n_ = kc__li_set(la, &nv, n);
  void* lda_ = kc__li_set(la, &ldav, lda);
  void* lwork_ = kc__li_set(la, &lworkv, lwork);
  void* liwork_ = kc__li_set(la, &liworkv, liwork);
  void* info_ = kc__li_set(la, &info, 0);
  if (t == KC__LA_S || t == KC__LA_D) {
    ((kc__syevd_fn)la->fn[KC__LA_SYEVD][t])(&jobz, &uplo, n_, a, lda_, w, work, lwork_, iwork,
                                            liwork_, info_, 1, 1);
  } else {
    void* lrwork_ = kc__li_set(la, &lrworkv, lrwork);
    ((kc__heevd_fn)la->fn[KC__LA_SYEVD][t])(&jobz, &uplo, n_, a, lda_, w, work, lwork_, rwork,
                                            lrwork_, iwork, liwork_, info_, 1, 1);
  }
  return kc__li_get(la, &info);
}

int64_t kc__lapack_gesdd(const kc__lapack* la, kc__la_type t, char jobz, int64_t m, int64_t n,
                         void* a, int64_t lda, void* s, void* u, int64_t ldu, void* vt,
                         int64_t ldvt, void* work, int64_t lwork, void* rwork, void* iwork) {
  kc__li mv, nv, ldav, lduv, ldvtv, lworkv, info = {0, 0};
  void* m_ = kc__li_set(la, &mv, m);
  void* n_ = kc__li_set(la, &nv, n);
  void* lda_ = kc__li_set(la, &ldav, lda);
  void* ldu_ = kc__li_set(la, &lduv, ldu);
  void* ldvt_ = kc__li_set(la, &ldvtv, ldvt);
  void* lwork_ = kc__li_set(la, &lworkv, lwork);
  void* info_ = kc__li_set(la, &info, 0);
  if (t == KC__LA_S || t == KC__LA_D) {
    ((kc__gesdd_fn)la->fn[KC__LA_GESDD][t])(&jobz, m_, n_, a, lda_, s, u, ldu_, vt, ldvt_, work,
                                            lwork_, iwork, info_, 1);
  } else {
    ((kc__cgesdd_fn)la->fn[KC__LA_GESDD][t])(&jobz, m_, n_, a, lda_, s, u, ldu_, vt, ldvt_,
                                             work, lwork_, rwork, iwork, info_, 1);
  }
  return kc__li_get(la, &info);
}

int64_t kc__lapack_geqrf(const kc__lapack* la, kc__la_type t, int64_t m, int64_t n, void* a,
                         int64_t lda, void* tau, void* work, int64_t lwork) {
  kc__li mv, nv, ldav, lworkv, info = {0, 0};
  void* m_ = kc__li_set(la, &mv, m);
  void* n_ = kc__li_set(la, &nv, n);
  void* lda_ = kc__li_set(la, &ldav, lda);
  void* lwork_ = kc__li_set(la, &lworkv, lwork);
  ((kc__geqrf_fn)la->fn[KC__LA_GEQRF][t])(m_, n_, a, lda_, tau, work, lwork_,
                                          kc__li_set(la, &info, 0));
  return kc__li_get(la, &info);
}

int64_t kc__lapack_orgqr(const kc__lapack* la, kc__la_type t, int64_t m, int64_t n, int64_t k,
                         void* a, int64_t lda, const void* tau, void* work, int64_t lwork) {
  kc__li mv, nv, kv, ldav, lworkv, info = {0, 0};
  void* m_ = kc__li_set(la, &mv, m);
  void* n_ = kc__li_set(la, &nv, n);
  void* k_ = kc__li_set(la, &kv, k);
  void* lda_ = kc__li_set(la, &ldav, lda);
  void* lwork_ = kc__li_set(la, &lworkv, lwork);
  ((kc__orgqr_fn)la->fn[KC__LA_ORGQR][t])(m_, n_, k_, a, lda_, tau, work, lwork_,
                                          kc__li_set(la, &info, 0));
  return kc__li_get(la, &info);
}
