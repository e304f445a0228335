/*
 * ops_add.c — the example plugin's Add (ops_plugin.c registers it): NumPy
 * broadcasting, with vector loops for the common forms and long rows
 * split across the call's thread pool.
 */
#include <kcall/plugin_api.h>
#include <string.h>

#include "ops_plugin.h"

/* ======================================================================== */
/* Add, with broadcasting                                                   */
/* ======================================================================== */

void add_strides(const DLTensor* t, int32_t rank, const int64_t* out,
                        int64_t* strides) {
  int64_t s = 1;
  for (int32_t i = rank - 1; i >= 0; --i) {
    int32_t ti = i - (rank - t->ndim);
    int64_t d = ti >= 0 ? t->shape[ti] : 1;
    strides[i] = d == 1 && out[i] != 1 ? 0 : s;
    s *= d;
  }
}

/* The row loops, once per element type: c = a + b over n elements, where
 * `a` and `b` are each a vector (stride 1) or one element repeated
 * (stride 0). The vector forms run 16-byte vectors (GCC and Clang vector
 * extensions, which SSE2 and NEON give everywhere, unaligned loads
 * through memcpy), two at a time; plain C compilers at -O2 do not
 * vectorise a loop of unknown length. Each vector is loaded before its
 * result is stored, so an output that is exactly an input (call_into with
 * the same tensor) gives the same answer as the scalar loop; partly
 * overlapping storage takes the scalar loop. */
#if defined(__GNUC__) || defined(__clang__)
#define ADD_VECTORS 1
#endif
/* On x86-64, 32-byte vectors in functions compiled for AVX2, taken when
 * the CPU has it (checked once): twice the work an instruction for
 * operands in cache. */
#if defined(ADD_VECTORS) && defined(__x86_64__)
#define ADD_AVX2 1
static bool add_have_avx2(void) {
  static int have = -1;
  int h = __atomic_load_n(&have, __ATOMIC_RELAXED);
  if (h < 0) {
    __builtin_cpu_init();
    h = __builtin_cpu_supports("avx2") ? 1 : 0;
    __atomic_store_n(&have, h, __ATOMIC_RELAXED);
  }
  return h == 1;
}
#endif

#ifdef ADD_VECTORS
/* The two vector loops at one vector width W (bytes), with `attr` the
 * function attributes that width needs. */
#define ADD_ROW_VECTORS_AT(T, W, suffix, attr)                                 \
  typedef T add_vec##suffix##_##T __attribute__((vector_size(W)));             \
  attr static int64_t add_vv##suffix##_##T(T* c, const T* a, const T* b,       \
                                           int64_t n) {                        \
    enum { L = (int)(W / sizeof(T)) };                                         \
    int64_t i = 0;                                                             \
    for (; i + 2 * L <= n; i += 2 * L) {                                       \
      add_vec##suffix##_##T x0, x1, y0, y1;                                    \
      memcpy(&x0, a + i, sizeof x0);                                           \
      memcpy(&x1, a + i + L, sizeof x1);                                       \
      memcpy(&y0, b + i, sizeof y0);                                           \
      memcpy(&y1, b + i + L, sizeof y1);                                       \
      x0 += y0;                                                                \
      x1 += y1;                                                                \
      memcpy(c + i, &x0, sizeof x0);                                           \
      memcpy(c + i + L, &x1, sizeof x1);                                       \
    }                                                                          \
    return i;                                                                  \
  }                                                                            \
  attr static int64_t add_vs##suffix##_##T(T* c, const T* a, T s,              \
                                           int64_t n) {                        \
    enum { L = (int)(W / sizeof(T)) };                                         \
    add_vec##suffix##_##T sv;                                                  \
    for (int k = 0; k < L; ++k) sv[k] = s;                                     \
    int64_t i = 0;                                                             \
    for (; i + 2 * L <= n; i += 2 * L) {                                       \
      add_vec##suffix##_##T x0, x1;                                            \
      memcpy(&x0, a + i, sizeof x0);                                           \
      memcpy(&x1, a + i + L, sizeof x1);                                       \
      x0 += sv;                                                                \
      x1 += sv;                                                                \
      memcpy(c + i, &x0, sizeof x0);                                           \
      memcpy(c + i + L, &x1, sizeof x1);                                       \
    }                                                                          \
    return i;                                                                  \
  }
#ifdef ADD_AVX2
#define ADD_ROW_VECTORS(T)                                                     \
  ADD_ROW_VECTORS_AT(T, 16, 4, )                                               \
  ADD_ROW_VECTORS_AT(T, 32, 8, __attribute__((target("avx2"))))                \
  static int64_t add_vv_##T(T* c, const T* a, const T* b, int64_t n) {         \
    return add_have_avx2() ? add_vv8_##T(c, a, b, n) : add_vv4_##T(c, a, b, n); \
  }                                                                            \
  static int64_t add_vs_##T(T* c, const T* a, T s, int64_t n) {                \
    return add_have_avx2() ? add_vs8_##T(c, a, s, n) : add_vs4_##T(c, a, s, n); \
  }
#else
#define ADD_ROW_VECTORS(T)                                                     \
  ADD_ROW_VECTORS_AT(T, 16, 4, )                                               \
  static int64_t add_vv_##T(T* c, const T* a, const T* b, int64_t n) {         \
    return add_vv4_##T(c, a, b, n);                                            \
  }                                                                            \
  static int64_t add_vs_##T(T* c, const T* a, T s, int64_t n) {                \
    return add_vs4_##T(c, a, s, n);                                            \
  }
#endif
#else
#define ADD_ROW_VECTORS(T)                                                     \
  static int64_t add_vv_##T(T* c, const T* a, const T* b, int64_t n) {         \
    (void)c, (void)a, (void)b, (void)n;                                        \
    return 0;                                                                  \
  }                                                                            \
  static int64_t add_vs_##T(T* c, const T* a, T s, int64_t n) {                \
    (void)c, (void)a, (void)s, (void)n;                                        \
    return 0;                                                                  \
  }
#endif

/* True when [p, p + n) and [q, q + m) share bytes without being the same
 * place: such an output takes the scalar loop. */
static bool add_overlap(const void* p, size_t n, const void* q, size_t m) {
  uintptr_t a = (uintptr_t)p, b = (uintptr_t)q;
  return a != b && a < b + m && b < a + n;
}

#define ADD_ROW(T)                                                             \
  ADD_ROW_VECTORS(T)                                                           \
  static void add_row_##T(T* c, const T* a, int64_t ia, const T* b,            \
                          int64_t ib, int64_t n, bool vectors) {               \
    int64_t i = 0;                                                             \
    if (vectors && ia == 1 && ib == 1) {                                       \
      i = add_vv_##T(c, a, b, n);                                              \
    } else if (vectors && ia == 1 && ib == 0) {                                \
      i = add_vs_##T(c, a, b[0], n);                                           \
    } else if (vectors && ia == 0 && ib == 1) {                                \
      i = add_vs_##T(c, b, a[0], n); /* + commutes for these types */         \
    }                                                                          \
    for (; i < n; ++i) c[i] = (T)(a[i * ia] + b[i * ib]);                      \
  }

/* A row of at least ADD_SPLIT_MIN elements (some 50 microseconds of
 * memory traffic: shorter rows take less than waking a sleeping pool
 * costs) is split across the call's thread pool in chunks of ADD_CHUNK,
 * as torch.add splits its own. */
#define ADD_SPLIT_MIN ((int64_t)1 << 18)
#define ADD_CHUNK ((int64_t)1 << 13)
#define ADD_CHUNK_NS 2000

#define ADD_SPLIT(T)                                                           \
  typedef struct add_job_##T {                                                 \
    T* c;                                                                      \
    const T* a;                                                                \
    const T* b;                                                                \
    int64_t ia, ib, n;                                                         \
  } add_job_##T;                                                               \
  static void add_chunks_##T(void* p, int64_t begin, int64_t end) {            \
    const add_job_##T* j = p;                                                  \
    int64_t lo = begin * ADD_CHUNK;                                            \
    int64_t hi = end * ADD_CHUNK < j->n ? end * ADD_CHUNK : j->n;              \
    add_row_##T(j->c + lo, j->a + lo * j->ia, j->ia, j->b + lo * j->ib,        \
                j->ib, hi - lo, true);                                         \
  }

/* The loop, once per element type. Same shapes, or one side a single
 * element, is one row (split across the pool when long); one side repeating along the leading dims (a row
 * or block broadcast, [m, k] + [k]) is a row per block; anything else
 * steps the outer dims like an odometer, with the innermost dim a row. */
#define ADD_LOOP(T)                                                            \
  ADD_ROW(T)                                                                   \
  ADD_SPLIT(T)                                                                 \
  static void add_##T(const DLTensor* x, const DLTensor* y, DLTensor* z,       \
                      kc_thread_pool* pool) {                                  \
    int32_t rank = z->ndim;                                                    \
    int64_t sx[OPS_MAX_RANK], sy[OPS_MAX_RANK], idx[OPS_MAX_RANK];             \
    const T* a = ops_data(x);                                                  \
    const T* b = ops_data(y);                                                  \
    T* c = ops_data(z);                                                        \
    int64_t n = ops_numel(z);                                                  \
    int64_t na = ops_numel(x), nb = ops_numel(y);                              \
    if (n == 0) return;                                                        \
    bool vectors = !add_overlap(c, (size_t)n * sizeof(T), a,                   \
                                (size_t)na * sizeof(T)) &&                     \
                   !add_overlap(c, (size_t)n * sizeof(T), b,                   \
                                (size_t)nb * sizeof(T));                       \
    if ((na == n || na == 1) && (nb == n || nb == 1)) {                        \
      int64_t ia = na == n ? 1 : 0, ib = nb == n ? 1 : 0;                      \
      if (vectors && n >= ADD_SPLIT_MIN) {                                     \
        add_job_##T job = {c, a, b, ia, ib, n};                                \
        kc_thread_pool_parallel_for(pool, (n + ADD_CHUNK - 1) / ADD_CHUNK,     \
                                    ADD_CHUNK_NS, add_chunks_##T, &job);       \
      } else {                                                                 \
        add_row_##T(c, a, ia, b, ib, n, vectors);                              \
      }                                                                        \
      return;                                                                  \
    }                                                                          \
    add_strides(x, rank, z->shape, sx);                                        \
    add_strides(y, rank, z->shape, sy);                                        \
    /* One side whole, the other the same block again and again: its dims  \
     * are z's trailing ones (after any leading 1s). */                        \
    if ((na == n || nb == n) && n % (na == n ? nb : na) == 0) {                \
      const int64_t* sr = na == n ? sy : sx;                                   \
      int64_t block = na == n ? nb : na, run = 1;                              \
      int32_t d = rank - 1;                                                    \
      for (; d >= 0 && run < block; --d) {                                     \
        if (sr[d] != run) break;                                               \
        run *= z->shape[d];                                                    \
      }                                                                        \
      if (run == block) {                                                      \
        for (int64_t o = 0; o < n; o += block) {                               \
          if (na == n) {                                                       \
            add_row_##T(c + o, a + o, 1, b, 1, block, vectors);                \
          } else {                                                             \
            add_row_##T(c + o, a, 1, b + o, 1, block, vectors);                \
          }                                                                    \
        }                                                                      \
        return;                                                                \
      }                                                                        \
    }                                                                          \
    int64_t inner = rank ? z->shape[rank - 1] : 1;                             \
    int64_t ix = rank ? sx[rank - 1] : 0, iy = rank ? sy[rank - 1] : 0;        \
    for (int32_t i = 0; i < rank; ++i) idx[i] = 0;                             \
    int64_t ox = 0, oy = 0;                                                    \
    for (int64_t done = 0; done < n; done += inner) {                          \
      add_row_##T(c, a + ox, ix, b + oy, iy, inner, vectors);                  \
      c += inner;                                                              \
      for (int32_t d = rank - 2; d >= 0; --d) {                                \
        ox += sx[d];                                                           \
        oy += sy[d];                                                           \
        if (++idx[d] < z->shape[d]) break;                                     \
        ox -= sx[d] * idx[d];                                                  \
        oy -= sy[d] * idx[d];                                                  \
        idx[d] = 0;                                                            \
      }                                                                        \
    }                                                                          \
  }
ADD_LOOP(float)
ADD_LOOP(double)
ADD_LOOP(int32_t)
#undef ADD_LOOP
#undef ADD_SPLIT
#undef ADD_ROW
#undef ADD_ROW_VECTORS
#undef ADD_ROW_VECTORS_AT

kc_status* add_compute(void* kernel, kc_kernel_ctx* ctx) {
  (void)kernel;
  const DLTensor* x = kc_kernel_ctx_get_input(ctx, 0);
  const DLTensor* y = kc_kernel_ctx_get_input(ctx, 1);
  DLTensor* z = kc_kernel_ctx_get_output(ctx, 0);
  kc_thread_pool* pool = kc_kernel_ctx_get_thread_pool(ctx);
  if (x->dtype.code == kDLFloat && x->dtype.bits == 32) {
    add_float(x, y, z, pool);
  } else if (x->dtype.code == kDLFloat) {
    add_double(x, y, z, pool);
  } else {
    add_int32_t(x, y, z, pool);
  }
  return NULL;
}
