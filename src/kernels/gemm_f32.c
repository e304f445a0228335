/* The f32 GEMM of gemm_f32.h, in the shape of the published GotoBLAS/BLIS
 * design:
 *
 *   B is packed into panels of NR columns (k x NR each, zero-padded) by
 *     the first thread that needs each panel, from B or in place from its
 *     transpose;
 *   every thread of the pool claims strips of MR rows of C (numbered
 *     across all batch elements), fewer at a time as fewer are left, and
 *     for each claim:
 *     for each block of NC columns,
 *       for each KC slice of the contracted dimension,
 *         for each group of up to MC rows: pack its strips' MR x KC slices
 *           of A (from A or its transpose; L2-resident),
 *           for each panel of the block (its KC x NR slice L1-resident),
 *             for each strip of the group: the micro-kernel, C tile += A B.
 *
 * The micro-kernel keeps the whole MR x NR tile of C in registers, loads
 * the B row of a step with aligned vector loads and broadcasts A's
 * elements from memory into the multiply-adds. Edge tiles are computed in
 * full (the packing pads with zeros) and stored partially. */
#include "kernels/gemm_f32.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "internal/common.h"

#if defined(__x86_64__) || defined(__SSE2__)
#include <immintrin.h>
#endif

/* Contracted elements per slice: a B panel's 256 x 16 slice (16 KiB; 32
 * KiB at 32 columns) stays in L1 while the strips' A slices stream from
 * L2. */
#define KC__GEMM_KC 256
/* Bytes of packed B one column block may take (KC x NC). */
#define KC__GEMM_BLOCK_BYTES (1 << 20)
/* Panels of B packed together (reading KC__GEMM_UNIT x NR floats of
 * each row of B at a time). */
#define KC__GEMM_UNIT 8
/* Rows of A packed at a time (a multiple of every kernel's MR): a
 * 96 x 256 block (96 KiB) stays in L2 while each B panel's 256 x NR slice
 * stays in L1 over its strips. */
#define KC__GEMM_MC 96

typedef void (*kc__micro_fn)(int64_t kc, const float* a, const float* b, float* c,
                             int64_t ldc, int64_t rows, int64_t cols, bool accumulate);

struct kc__gemm_f32_kernel {
  const char* name;
  kc__micro_fn fn;
  int64_t mr, nr;
  /* Rough multiply-adds a nanosecond, for the pool's split. */
  int64_t fma_per_ns;
  bool (*supported)(void);
};

/* Rows x cols of a tile (row stride ld) into C, or added to it. */
static void kc__tile_store(const float* tile, int64_t ld, float* c, int64_t ldc, int64_t rows,
                           int64_t cols, bool accumulate) {
  for (int64_t r = 0; r < rows; ++r) {
    float* row = c + r * ldc;
    const float* src = tile + r * ld;
    if (accumulate) {
      for (int64_t j = 0; j < cols; ++j) row[j] += src[j];
    } else {
      memcpy(row, src, (size_t)cols * sizeof(float));
    }
  }
}

/* ---- micro-kernels ------------------------------------------------------------------ */

#define KC__R4(X) X(0) X(1) X(2) X(3)
#define KC__R6(X) KC__R4(X) X(4) X(5)
#define KC__R12(X) KC__R6(X) X(6) X(7) X(8) X(9) X(10) X(11)

#if defined(__x86_64__)

/* 12 x 32: 24 accumulators, two B vectors, A broadcast from memory. */
#define KC__A512_DECL(r) __m512 c##r##0 = _mm512_setzero_ps(), c##r##1 = _mm512_setzero_ps();
#define KC__A512_FMA(r)                                                 \
  {                                                                     \
    __m512 x = _mm512_set1_ps(a[r]);                                    \
    c##r##0 = _mm512_fmadd_ps(x, b0, c##r##0);                          \
    c##r##1 = _mm512_fmadd_ps(x, b1, c##r##1);                          \
  }
#define KC__A512_STEP                                                   \
  {                                                                     \
    __m512 b0 = _mm512_load_ps(b), b1 = _mm512_load_ps(b + 16);         \
    KC__R12(KC__A512_FMA)                                               \
    a += 12;                                                            \
    b += 32;                                                            \
  }
#define KC__A512_STORE(r)                                               \
  {                                                                     \
    float* row = c + r * ldc;                                           \
    if (accumulate) {                                                   \
      c##r##0 = _mm512_add_ps(c##r##0, _mm512_loadu_ps(row));           \
      c##r##1 = _mm512_add_ps(c##r##1, _mm512_loadu_ps(row + 16));      \
    }                                                                   \
    _mm512_storeu_ps(row, c##r##0);                                     \
    _mm512_storeu_ps(row + 16, c##r##1);                                \
  }
#define KC__A512_SPILL(r)                                               \
  _mm512_store_ps(tile + r * 32, c##r##0);                              \
  _mm512_store_ps(tile + r * 32 + 16, c##r##1);

__attribute__((target("avx512f"))) static void kc__micro_avx512(
    int64_t kc, const float* restrict a, const float* restrict b, float* restrict c,
    int64_t ldc, int64_t rows, int64_t cols, bool accumulate) {
  KC__R12(KC__A512_DECL)
  int64_t p = 0;
  for (; p + 4 <= kc; p += 4) {
    _mm_prefetch((const char*)(b + 32 * 16), _MM_HINT_T0);
    _mm_prefetch((const char*)(b + 32 * 16 + 16), _MM_HINT_T0);
    KC__A512_STEP
    _mm_prefetch((const char*)(b + 32 * 16), _MM_HINT_T0);
    _mm_prefetch((const char*)(b + 32 * 16 + 16), _MM_HINT_T0);
    KC__A512_STEP
    _mm_prefetch((const char*)(b + 32 * 16), _MM_HINT_T0);
    _mm_prefetch((const char*)(b + 32 * 16 + 16), _MM_HINT_T0);
    KC__A512_STEP
    _mm_prefetch((const char*)(b + 32 * 16), _MM_HINT_T0);
    _mm_prefetch((const char*)(b + 32 * 16 + 16), _MM_HINT_T0);
    KC__A512_STEP
  }
  for (; p < kc; ++p) KC__A512_STEP
  if (rows == 12 && cols == 32) {
    KC__R12(KC__A512_STORE)
  } else {
    _Alignas(64) float tile[12 * 32];
    KC__R12(KC__A512_SPILL)
    kc__tile_store(tile, 32, c, ldc, rows, cols, accumulate);
  }
}

/* 6 x 16: 12 accumulators of the 16 ymm registers. */
#define KC__A2_DECL(r) __m256 c##r##0 = _mm256_setzero_ps(), c##r##1 = _mm256_setzero_ps();
#define KC__A2_FMA(r)                                                   \
  {                                                                     \
    __m256 x = _mm256_broadcast_ss(a + r);                              \
    c##r##0 = _mm256_fmadd_ps(x, b0, c##r##0);                          \
    c##r##1 = _mm256_fmadd_ps(x, b1, c##r##1);                          \
  }
#define KC__A2_STEP                                                     \
  {                                                                     \
    __m256 b0 = _mm256_load_ps(b), b1 = _mm256_load_ps(b + 8);          \
    KC__R6(KC__A2_FMA)                                                  \
    a += 6;                                                             \
    b += 16;                                                            \
  }
#define KC__A2_STORE(r)                                                 \
  {                                                                     \
    float* row = c + r * ldc;                                           \
    if (accumulate) {                                                   \
      c##r##0 = _mm256_add_ps(c##r##0, _mm256_loadu_ps(row));           \
      c##r##1 = _mm256_add_ps(c##r##1, _mm256_loadu_ps(row + 8));       \
    }                                                                   \
    _mm256_storeu_ps(row, c##r##0);                                     \
    _mm256_storeu_ps(row + 8, c##r##1);                                 \
  }
#define KC__A2_SPILL(r)                                                 \
  _mm256_store_ps(tile + r * 16, c##r##0);                              \
  _mm256_store_ps(tile + r * 16 + 8, c##r##1);

__attribute__((target("avx2,fma"))) static void kc__micro_avx2(
    int64_t kc, const float* restrict a, const float* restrict b, float* restrict c,
    int64_t ldc, int64_t rows, int64_t cols, bool accumulate) {
  KC__R6(KC__A2_DECL)
  int64_t p = 0;
  for (; p + 4 <= kc; p += 4) {
    _mm_prefetch((const char*)(b + 16 * 16), _MM_HINT_T0);
    KC__A2_STEP
    KC__A2_STEP
    _mm_prefetch((const char*)(b + 16 * 16), _MM_HINT_T0);
    KC__A2_STEP
    KC__A2_STEP
  }
  for (; p < kc; ++p) KC__A2_STEP
  if (rows == 6 && cols == 16) {
    KC__R6(KC__A2_STORE)
  } else {
    _Alignas(32) float tile[6 * 16];
    KC__R6(KC__A2_SPILL)
    kc__tile_store(tile, 16, c, ldc, rows, cols, accumulate);
  }
}

static bool kc__cpu_avx512(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f");
}

static bool kc__cpu_avx2(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

#endif /* __x86_64__ */

/* 4 x 16 in portable C, which compilers vectorise for the base ISA. */
static void kc__micro_plain(int64_t kc, const float* restrict a, const float* restrict b,
                            float* restrict c, int64_t ldc, int64_t rows, int64_t cols,
                            bool accumulate) {
  float acc[4][16];
  memset(acc, 0, sizeof acc);
  for (int64_t p = 0; p < kc; ++p) {
    for (int r = 0; r < 4; ++r) {
      float x = a[r];
      for (int j = 0; j < 16; ++j) acc[r][j] += x * b[j];
    }
    a += 4;
    b += 16;
  }
  kc__tile_store(&acc[0][0], 16, c, ldc, rows, cols, accumulate);
}

static bool kc__cpu_any(void) { return true; }

#if !defined(__x86_64__)
/* Elsewhere the x86 kernels keep their names, so that asking for one is
 * answered "not on this CPU" rather than "no such kernel"; never run. */
static bool kc__cpu_never(void) { return false; }
#define kc__micro_avx512 NULL
#define kc__micro_avx2 NULL
#define kc__cpu_avx512 kc__cpu_never
#define kc__cpu_avx2 kc__cpu_never
#endif

/* Fastest first. */
static const struct kc__gemm_f32_kernel kc__gemm_kernels[] = {
    {"avx512", kc__micro_avx512, 12, 32, 64, kc__cpu_avx512},
    {"avx2", kc__micro_avx2, 6, 16, 24, kc__cpu_avx2},
    {"plain", kc__micro_plain, 4, 16, 2, kc__cpu_any},
};

static pthread_once_t kc__gemm_once = PTHREAD_ONCE_INIT;
static const kc__gemm_f32_kernel* kc__gemm_best;

static void kc__gemm_choose(void) {
  for (size_t i = 0; i < KC__ARRAY_SIZE(kc__gemm_kernels); ++i) {
    if (kc__gemm_kernels[i].supported()) {
      kc__gemm_best = &kc__gemm_kernels[i];
      return;
    }
  }
}

const kc__gemm_f32_kernel* kc__gemm_f32_kernel_best(void) {
  pthread_once(&kc__gemm_once, kc__gemm_choose);
  return kc__gemm_best;
}

const kc__gemm_f32_kernel* kc__gemm_f32_kernel_lookup(const char* name) {
  for (size_t i = 0; i < KC__ARRAY_SIZE(kc__gemm_kernels); ++i) {
    if (strcmp(kc__gemm_kernels[i].name, name) == 0) return &kc__gemm_kernels[i];
  }
  return NULL;
}

bool kc__gemm_f32_kernel_supported(const kc__gemm_f32_kernel* kernel) {
  return kernel->supported();
}

const char* kc__gemm_f32_kernel_name(const kc__gemm_f32_kernel* kernel) {
  return kernel->name;
}

/* ---- packing ------------------------------------------------------------------------ */

/* A row of `cols` floats of B into a panel row of nr, zero past cols.
 * Full rows of the kernels' widths are copies of a constant size, which
 * compilers inline: a call of memcpy would cost as much as the copy. */
static inline void kc__pack_row(float* restrict dst, const float* restrict src, int64_t cols,
                                int64_t nr) {
  if (cols == 16 && nr == 16) {
    memcpy(dst, src, 16 * sizeof(float));
  } else if (cols == 32 && nr == 32) {
    memcpy(dst, src, 32 * sizeof(float));
  } else {
    for (int64_t z = 0; z < cols; ++z) dst[z] = src[z];
    for (int64_t z = cols; z < nr; ++z) dst[z] = 0.0f;
  }
}

/* Panels [begin, end) of B (k x n; row-major, or its transpose, n x k
 * row-major, when `trans`): panel p holds columns [p nr, p nr + nr) as k
 * rows of nr, zero past column n. From B, row by row across all the
 * panels (a row of B may be a page of its own: going down one panel's
 * columns would cross a page at every step); from the transpose, full
 * groups of 4 columns and 4 rows go by 4 x 4 blocks transposed in SSE
 * registers. */
static void kc__pack_b(const float* b, bool trans, int64_t n, int64_t k, int64_t nr,
                       int64_t begin, int64_t end, float* packed) {
  if (!trans) {
    for (int64_t i = 0; i < k; ++i) {
      for (int64_t p = begin; p < end; ++p) {
        int64_t j = p * nr;
        kc__pack_row(packed + p * k * nr + i * nr, b + i * n + j, n - j < nr ? n - j : nr, nr);
      }
    }
    return;
  }
  for (int64_t p = begin; p < end; ++p) {
    int64_t j = p * nr;
    int64_t cols = n - j < nr ? n - j : nr;
    float* dst = packed + p * k * nr;
    int64_t z = 0;
#if defined(__SSE2__)
    for (; z + 4 <= cols; z += 4) {
      const float* src = b + (j + z) * k;
      int64_t i = 0;
      for (; i + 4 <= k; i += 4) {
        __m128 x0 = _mm_loadu_ps(src + i), x1 = _mm_loadu_ps(src + k + i);
        __m128 x2 = _mm_loadu_ps(src + 2 * k + i), x3 = _mm_loadu_ps(src + 3 * k + i);
        _MM_TRANSPOSE4_PS(x0, x1, x2, x3);
        float* out = dst + i * nr + z;
        _mm_storeu_ps(out, x0);
        _mm_storeu_ps(out + nr, x1);
        _mm_storeu_ps(out + 2 * nr, x2);
        _mm_storeu_ps(out + 3 * nr, x3);
      }
      for (; i < k; ++i) {
        for (int64_t q = 0; q < 4; ++q) dst[i * nr + z + q] = src[q * k + i];
      }
    }
#endif
    for (; z < cols; ++z) {
      const float* src = b + (j + z) * k;
      for (int64_t i = 0; i < k; ++i) dst[i * nr + z] = src[i];
    }
    for (; z < nr; ++z) {
      for (int64_t i = 0; i < k; ++i) dst[i * nr + z] = 0.0f;
    }
  }
}

/* A strip of `rows` rows (row stride lda) and kc columns, as kc steps of
 * mr elements (zero past `rows`). Full strips of a multiple of 4 rows go
 * by 4 x 4 blocks transposed in SSE registers (x86-64's baseline), four
 * times fewer loads and stores than one element at a time. */
static void kc__pack_a(const float* a, int64_t lda, int64_t rows, int64_t kc, int64_t mr,
                       float* restrict dst) {
#if defined(__SSE2__)
  if (rows == mr && mr % 4 == 0) {
    int64_t p = 0;
    for (; p + 4 <= kc; p += 4) {
      for (int64_t r = 0; r < mr; r += 4) {
        const float* src = a + r * lda + p;
        __m128 x0 = _mm_loadu_ps(src), x1 = _mm_loadu_ps(src + lda);
        __m128 x2 = _mm_loadu_ps(src + 2 * lda), x3 = _mm_loadu_ps(src + 3 * lda);
        _MM_TRANSPOSE4_PS(x0, x1, x2, x3);
        float* out = dst + p * mr + r;
        _mm_storeu_ps(out, x0);
        _mm_storeu_ps(out + mr, x1);
        _mm_storeu_ps(out + 2 * mr, x2);
        _mm_storeu_ps(out + 3 * mr, x3);
      }
    }
    for (; p < kc; ++p) {
      for (int64_t r = 0; r < mr; ++r) dst[p * mr + r] = a[r * lda + p];
    }
    return;
  }
#endif
  for (int64_t r = 0; r < rows; ++r) {
    const float* src = a + r * lda;
    for (int64_t p = 0; p < kc; ++p) dst[p * mr + r] = src[p];
  }
  for (int64_t r = rows; r < mr; ++r) {
    for (int64_t p = 0; p < kc; ++p) dst[p * mr + r] = 0.0f;
  }
}

/* `strips` strips of A from its transpose (k x m row-major, row stride
 * lda), the first at `at`, `rows` rows left from there: into dst, strip
 * after strip, kc steps of mr elements each (zero past `rows`). Each
 * step's elements are contiguous in the transpose, so a row of it is
 * read once for all the strips: one strip at a time read 24 bytes from
 * each of kc rows lda apart, and at 4096 floats apart those rows fell
 * into the same L1 sets and were fetched again for every strip. Full
 * strips of the kernels' heights are copies of a constant size, which
 * compilers inline. */
static void kc__pack_a_trans(const float* at, int64_t lda, int64_t rows, int64_t strips, int64_t kc,
                             int64_t mr, float* restrict dst) {
  int64_t full = rows / mr < strips ? rows / mr : strips;
  for (int64_t p = 0; p < kc; ++p) {
    const float* src = at + p * lda;
    float* out = dst + p * mr;
    int64_t s = 0;
#define KC__PACK_A_TRANS_FULL(MR)                                                      \
  if (mr == MR) {                                                                      \
    for (; s < full; ++s) memcpy(out + s * kc * MR, src + s * MR, MR * sizeof(float)); \
  }
    KC__PACK_A_TRANS_FULL(4)
    KC__PACK_A_TRANS_FULL(6)
    KC__PACK_A_TRANS_FULL(12)
#undef KC__PACK_A_TRANS_FULL
    for (; s < strips; ++s) {
      int64_t have = rows - s * mr < mr ? rows - s * mr : mr;
      for (int64_t r = 0; r < mr; ++r) out[s * kc * mr + r] = r < have ? src[s * mr + r] : 0.0f;
    }
  }
}

/* ---- the product -------------------------------------------------------------------- */

/* Panel states: nobody has it yet, someone is packing it, packed. */
enum { KC__PANEL_EMPTY = 0, KC__PANEL_PACKING = 1, KC__PANEL_READY = 2 };

typedef struct kc__gemm_job {
  const kc__gemm_f32_kernel* kernel;
  const float* a;
  const float* b;
  float* c;
  bool a_trans, b_trans; /* A given as k x m, B as n x k */
  float* panels;         /* packed B of every batch element, filled on demand */
  uint8_t* panel_state;  /* one a panel, atomically */
  int64_t m, n, k;
  int64_t panels_per;    /* panels of one batch element's B */
  int64_t nc;            /* columns a block, a multiple of nr */
  int64_t strips;        /* MR-row strips of one batch element's C */
  int64_t total;         /* strips of all batch elements */
  int64_t next_strip;    /* the first strip nobody has claimed, atomically */
  int64_t threads;       /* participants, for the claim sizes and the panel order */
  float* apack;          /* KC__GEMM_MC x KC__GEMM_KC floats a participant */
} kc__gemm_job;

/* Claims the next strips (numbered across the batch), fewer at a time
 * as fewer are left (guided scheduling): big claims keep a block of B in
 * L2 over many strips, small ones at the end keep every thread busy when
 * a core is slow or shared. */
static bool kc__gemm_claim(kc__gemm_job* job, int64_t* begin, int64_t* end) {
  int64_t cur = __atomic_load_n(&job->next_strip, __ATOMIC_RELAXED);
  for (;;) {
    int64_t left = job->total - cur;
    if (left <= 0) return false;
    int64_t take = left / (2 * job->threads);
    if (take < 1) take = 1;
    if (__atomic_compare_exchange_n(&job->next_strip, &cur, cur + take, true, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED)) {
      *begin = cur;
      *end = cur + take;
      return true;
    }
  }
}

/* Makes panel p (numbered across the batch) of B packed: packs its unit
 * of KC__GEMM_UNIT panels (whose first panel's state stands for all)
 * when nobody has, else waits for the thread that is packing it (some
 * microseconds of copying). */
static void kc__gemm_panel_ready(kc__gemm_job* job, int64_t p) {
  int64_t bi = p / job->panels_per, q = p % job->panels_per;
  q -= q % KC__GEMM_UNIT;
  int64_t q_end = q + KC__GEMM_UNIT < job->panels_per ? q + KC__GEMM_UNIT : job->panels_per;
  uint8_t* state = &job->panel_state[bi * job->panels_per + q];
  uint8_t seen = __atomic_load_n(state, __ATOMIC_ACQUIRE);
  if (seen == KC__PANEL_READY) return;
  if (seen == KC__PANEL_EMPTY &&
      __atomic_compare_exchange_n(state, &seen, KC__PANEL_PACKING, false, __ATOMIC_ACQUIRE,
                                  __ATOMIC_ACQUIRE)) {
    int64_t nr = job->kernel->nr;
    kc__pack_b(job->b + bi * job->k * job->n, job->b_trans, job->n, job->k, nr, q, q_end,
               job->panels + bi * job->panels_per * job->k * nr);
    __atomic_store_n(state, KC__PANEL_READY, __ATOMIC_RELEASE);
    return;
  }
  for (unsigned spins = 0; __atomic_load_n(state, __ATOMIC_ACQUIRE) != KC__PANEL_READY;
       ++spins) {
    if (spins >= 64) sched_yield();
  }
}

/* Strips [begin, end) of batch element bi, into the participant's A
 * buffer `apack` (KC__GEMM_MC x KC__GEMM_KC floats): for each block of
 * columns, each slice of the contracted dimension and each group of up
 * to KC__GEMM_MC rows, the group's A slices are packed (they stay in
 * L2), then each panel of the block meets every strip of the group in
 * turn (the panel's slice stays in L1). The participant `id` (of
 * job->threads) visits the panels from its own share on, so that threads
 * starting together pack different panels. */
static void kc__gemm_strips(kc__gemm_job* job, int64_t bi, int64_t begin, int64_t end,
                            int64_t id, float* apack) {
  const kc__gemm_f32_kernel* kern = job->kernel;
  int64_t mr = kern->mr, nr = kern->nr, m = job->m, n = job->n, k = job->k;
  int64_t group = KC__GEMM_MC / mr;
  const float* a = job->a + bi * m * k;
  float* c = job->c + bi * m * n;
  int64_t panel0 = bi * job->panels_per;
  const float* panels = job->panels + panel0 * k * nr;
  for (int64_t jc = 0; jc < n; jc += job->nc) {
    int64_t first = jc / nr;
    int64_t count = ((n - jc < job->nc ? n - jc : job->nc) + nr - 1) / nr;
    int64_t start = count * (id % job->threads) / job->threads;
    for (int64_t pc = 0; pc < k; pc += KC__GEMM_KC) {
      int64_t kc = k - pc < KC__GEMM_KC ? k - pc : KC__GEMM_KC;
      for (int64_t s0 = begin; s0 < end; s0 += group) {
        int64_t s1 = end - s0 < group ? end : s0 + group;
        if (job->a_trans) {
          kc__pack_a_trans(a + pc * m + s0 * mr, m, m - s0 * mr, s1 - s0, kc, mr, apack);
        } else {
          for (int64_t s = s0; s < s1; ++s) {
            int64_t i = s * mr;
            int64_t rows = m - i < mr ? m - i : mr;
            kc__pack_a(a + i * k + pc, k, rows, kc, mr, apack + (s - s0) * mr * kc);
          }
        }
        for (int64_t q = 0; q < count; ++q) {
          int64_t p = first + (start + q) % count;
          if (pc == 0 && s0 == begin) kc__gemm_panel_ready(job, panel0 + p);
          int64_t j = p * nr;
          int64_t cols = n - j < nr ? n - j : nr;
          const float* panel = panels + p * k * nr + pc * nr;
          for (int64_t s = s0; s < s1; ++s) {
            int64_t i = s * mr;
            int64_t rows = m - i < mr ? m - i : mr;
            kern->fn(kc, apack + (s - s0) * mr * kc, panel, c + i * n + j, n, rows, cols,
                     pc > 0);
          }
        }
      }
    }
  }
}

/* One participant: claims strips until none are left, and runs each
 * claim's strips batch element by batch element. */
static void kc__gemm_participant(void* ctx, int64_t begin, int64_t end) {
  kc__gemm_job* job = ctx;
  KC__UNUSED(end);
  float* apack = job->apack + begin * KC__GEMM_MC * KC__GEMM_KC;
  int64_t first, last;
  /* A participant that starts late finds the strips claimed, and returns. */
  while (kc__gemm_claim(job, &first, &last)) {
    while (first < last) {
      int64_t bi = first / job->strips;
      int64_t stop = (bi + 1) * job->strips < last ? (bi + 1) * job->strips : last;
      kc__gemm_strips(job, bi, first - bi * job->strips, stop - bi * job->strips, begin,
                      apack);
      first = stop;
    }
  }
}

kc_status* kc__gemm_f32_batched(const kc__gemm_f32_kernel* kernel, const float* a,
                                bool a_trans, const float* b, bool b_trans, float* c,
                                int64_t batch, int64_t m, int64_t n, int64_t k,
                                kc_thread_pool* pool) {
  if (batch <= 0 || m <= 0 || n <= 0) return NULL;
  if (k <= 0) {
    memset(c, 0, (size_t)(batch * m * n) * sizeof(float));
    return NULL;
  }
  int64_t mr = kernel->mr, nr = kernel->nr;
  int64_t panels_per = (n + nr - 1) / nr;
  size_t panels = (size_t)batch * (size_t)panels_per;
  int64_t strips = (m + mr - 1) / mr;
  int64_t total = batch * strips;
  /* Below about 50 us of work the pool's hand-over costs more than it
   * gains. */
  int64_t work_ns = total * (mr * n * k / kernel->fma_per_ns);
  if (!pool && work_ns > 50000) pool = kc_thread_pool_get_default();
  int64_t threads = pool ? kc_thread_pool_get_size(pool) : 1;
  if (threads > total) threads = total;
  /* Packed B, then each participant's A block, then the panel states. */
  size_t floats = panels * (size_t)k * (size_t)nr;
  size_t a_floats = (size_t)threads * KC__GEMM_MC * KC__GEMM_KC;
  float* packed = NULL;
  if (floats / (size_t)k / (size_t)nr != panels ||
      floats > (SIZE_MAX - panels) / sizeof(float) - a_floats ||
      !(packed = kc__aligned_alloc(64, (floats + a_floats) * sizeof(float) + panels))) {
    return kc_status_create(KC_RESOURCE_EXHAUSTED,
                            "out of memory packing the %lld x %lld operand of a dot",
                            (long long)k, (long long)n);
  }
  uint8_t* state = (uint8_t*)(packed + floats + a_floats);
  memset(state, KC__PANEL_EMPTY, panels);
  int64_t nc = KC__GEMM_BLOCK_BYTES / (KC__GEMM_KC * (int64_t)sizeof(float)) / nr * nr;
  if (nc < nr) nc = nr;
  kc__gemm_job job = {kernel, a,      b,  c,      a_trans, b_trans, packed,  state, m,
                      n,      k,      panels_per, nc, strips, total,   0,       threads,
                      packed + floats};
  if (threads > 1) {
    /* One unit a participant, each worth its share of the product: the
     * pool hands one to every thread when a share is worth it; the claims
     * then share the work, whoever runs them. */
    kc_thread_pool_parallel_for(pool, threads, work_ns / threads + 1, kc__gemm_participant,
                                &job);
  } else {
    kc__gemm_participant(&job, 0, 1);
  }
  kc__free(packed);
  return NULL;
}

kc_status* kc__gemm_f32(const kc__gemm_f32_kernel* kernel, const float* a, const float* b,
                        float* c, int64_t m, int64_t n, int64_t k, kc_thread_pool* pool) {
  return kc__gemm_f32_batched(kernel, a, false, b, false, c, 1, m, n, k, pool);
}
