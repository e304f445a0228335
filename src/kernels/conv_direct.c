/* The direct NCHW convolution of conv.h (kc__conv2d_direct_f32).
 *
 * The work is shared out in units of one image's block of output rows.
 * A unit copies the input rows its block reads into a scratch of its
 * participant, with zeros where the padding is (and past the input's
 * right edge, as far as the last 16-column tile reads), so that with a
 * width stride of 1 a tap of a tile of 16 output positions reads 16
 * consecutive scratch floats: each tap is a shifted view of the same
 * rows, and nothing is unfolded. The tile of 6 output features x 16
 * positions stays in 12 AVX registers while the taps and channels go by,
 * the kernel's 6 features of each (tap, channel) broadcast from a copy of
 * the kernel packed once per call. */
#include <string.h>

#include "kernels/conv.h"
#include "kernels/vmath.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#define KC__CD_MR 6   /* output features a tile */
#define KC__CD_NR 16  /* output positions a tile */
#define KC__CD_ROWS 8 /* output rows a unit at most */
/* Bytes of input rows a unit copies at most (fewer output rows a unit
 * where the channels are many or the rows long, one at least): the
 * scratch stays in a core's L2, and a large pool's scratches stay small. */
#define KC__CD_SCRATCH_BYTES ((int64_t)512 << 10)

bool kc__conv2d_direct_runs(const kc__conv2d* cv) {
#if defined(__x86_64__)
  return kc__vmath_levels() > 1 && cv->pt >= 0 && cv->pl >= 0 && cv->sh >= 1 && cv->dh >= 1 &&
         cv->dw >= 1;
#else
  (void)cv;
  return false;
#endif
}

#if defined(__x86_64__)

typedef struct kc__cd_job {
  const kc__conv2d* cv;
  const float* apack;          /* [strips][taps][c][MR], zero past o */
  const int64_t* taps;         /* each tap's offset in a channel's scratch rows */
  int64_t ntaps, rows, blocks; /* taps; output rows a unit, units an image */
  int64_t wp, rr;              /* floats a scratch row; scratch rows a channel */
  float* scratch;              /* a participant's: c rr wp floats, threads of them */
} kc__cd_job;

#define KC__CD_R6(X) X(0) X(1) X(2) X(3) X(4) X(5)
#define KC__CD_DECL(r) __m256 c##r##0 = _mm256_setzero_ps(), c##r##1 = _mm256_setzero_ps();
#define KC__CD_FMA(r)                          \
  {                                            \
    __m256 s = _mm256_broadcast_ss(a + r);     \
    c##r##0 = _mm256_fmadd_ps(s, b0, c##r##0); \
    c##r##1 = _mm256_fmadd_ps(s, b1, c##r##1); \
  }
#define KC__CD_SPILL(r)                     \
  _mm256_storeu_ps(tile + r * 16, c##r##0); \
  _mm256_storeu_ps(tile + r * 16 + 8, c##r##1);

/* One tile: y[r][q] for r < rows, q < cols (row stride ldy) = the sum over
 * taps t and channels i of a[t][i][r] b[taps[t] + i cstride + q]. */
__attribute__((target("avx2,fma"))) static void kc__cd_tile(const float* restrict a, const float* b,
                                                            const int64_t* taps, int64_t ntaps,
                                                            int64_t c, int64_t cstride, float* y,
                                                            int64_t ldy, int64_t rows,
                                                            int64_t cols) {
  KC__CD_R6(KC__CD_DECL)
  for (int64_t t = 0; t < ntaps; ++t) {
    const float* bt = b + taps[t];
    for (int64_t i = 0; i < c; ++i, a += KC__CD_MR, bt += cstride) {
      __m256 b0 = _mm256_loadu_ps(bt), b1 = _mm256_loadu_ps(bt + 8);
      KC__CD_R6(KC__CD_FMA)
    }
  }
  float tile[KC__CD_MR * KC__CD_NR];
  KC__CD_R6(KC__CD_SPILL)
  for (int64_t r = 0; r < rows; ++r) {
    memcpy(y + r * ldy, tile + r * KC__CD_NR, (size_t)cols * sizeof(float));
  }
}

/* The input rows of image `img` that output rows oh0 .. oh0 + rows - 1
 * read, channel by channel, into s: zeros where they are padding. */
static void kc__cd_fill(const kc__cd_job* j, int64_t img, int64_t oh0, int64_t rows, float* s) {
  const kc__conv2d* cv = j->cv;
  int64_t need = (rows - 1) * cv->sh + (cv->kh - 1) * cv->dh + 1;
  int64_t ih0 = oh0 * cv->sh - cv->pt;
  for (int64_t i = 0; i < cv->c; ++i) {
    const float* xc = cv->x + img * cv->x_n + i * cv->x_c;
    for (int64_t r = 0; r < need; ++r) {
      float* row = s + (i * j->rr + r) * j->wp;
      int64_t ih = ih0 + r;
      if (ih < 0 || ih >= cv->height) {
        memset(row, 0, (size_t)j->wp * sizeof(float));
        continue;
      }
      memset(row, 0, (size_t)cv->pl * sizeof(float));
      memcpy(row + cv->pl, xc + ih * cv->width, (size_t)cv->width * sizeof(float));
      memset(row + cv->pl + cv->width, 0, (size_t)(j->wp - cv->pl - cv->width) * sizeof(float));
    }
  }
}

static void kc__cd_units(void* ctx, int64_t begin, int64_t end, int32_t worker) {
  const kc__cd_job* j = ctx;
  const kc__conv2d* cv = j->cv;
  float* s = j->scratch + (size_t)worker * (size_t)(cv->c * j->rr * j->wp);
  int64_t strips = (cv->o + KC__CD_MR - 1) / KC__CD_MR, astep = j->ntaps * cv->c * KC__CD_MR;
  for (int64_t u = begin; u < end; ++u) {
    int64_t img = u / j->blocks, oh0 = u % j->blocks * j->rows;
    int64_t rows = cv->oh - oh0 < j->rows ? cv->oh - oh0 : j->rows;
    kc__cd_fill(j, img, oh0, rows, s);
    for (int64_t r = 0; r < rows; ++r) {
      const float* b = s + r * cv->sh * j->wp;
      float* yrow = cv->y + img * cv->y_n + (oh0 + r) * cv->ow;
      for (int64_t q = 0; q < cv->ow; q += KC__CD_NR) {
        int64_t cols = cv->ow - q < KC__CD_NR ? cv->ow - q : KC__CD_NR;
        for (int64_t st = 0; st < strips; ++st) {
          int64_t o0 = st * KC__CD_MR;
          kc__cd_tile(j->apack + st * astep, b + q, j->taps, j->ntaps, cv->c, j->rr * j->wp,
                      yrow + o0 * cv->y_c + q, cv->y_c,
                      cv->o - o0 < KC__CD_MR ? cv->o - o0 : KC__CD_MR, cols);
        }
      }
    }
  }
}

/* The scratch's layout: its row length and rows a channel; floats of
 * the packed kernel and of one participant's rows. */
typedef struct kc__cd_plan {
  int64_t ntaps, strips, wp, rows, rr;
  size_t a_floats, s_floats;
} kc__cd_plan;

static kc__cd_plan kc__cd_plan_of(const kc__conv2d* cv) {
  kc__cd_plan p;
  p.ntaps = cv->kh * cv->kw;
  p.strips = (cv->o + KC__CD_MR - 1) / KC__CD_MR;
  int64_t tiles_w = (cv->ow + KC__CD_NR - 1) / KC__CD_NR * KC__CD_NR;
  p.wp = tiles_w + (cv->kw - 1) * cv->dw;
  if (p.wp < cv->pl + cv->width) p.wp = cv->pl + cv->width;
  int64_t reach = (cv->kh - 1) * cv->dh + 1, row_bytes = cv->c * p.wp * (int64_t)sizeof(float);
  int64_t fit = row_bytes > 0 ? KC__CD_SCRATCH_BYTES / row_bytes : KC__CD_ROWS * cv->sh + reach;
  p.rows = fit > reach ? (fit - reach) / cv->sh + 1 : 1;
  if (p.rows > KC__CD_ROWS) p.rows = KC__CD_ROWS;
  p.rr = (p.rows - 1) * cv->sh + reach;
  p.a_floats = (size_t)(p.strips * p.ntaps * cv->c * KC__CD_MR);
  p.s_floats = (size_t)(cv->c * p.rr * p.wp);
  return p;
}

size_t kc__conv2d_direct_scratch(const kc__conv2d* cv, int32_t threads) {
  kc__cd_plan p = kc__cd_plan_of(cv);
  return (size_t)p.ntaps * sizeof(int64_t) +
         (p.a_floats + (size_t)(threads > 1 ? threads : 1) * p.s_floats) * sizeof(float);
}

void kc__conv2d_direct_f32(const kc__conv2d* cv, void* scratch, kc_thread_pool* pool) {
  if (cv->n <= 0 || cv->o <= 0 || cv->oh <= 0 || cv->ow <= 0) return;
  kc__cd_plan p = kc__cd_plan_of(cv);
  /* The taps' offsets, then the packed kernel, then the participants' rows. */
  int64_t* taps = scratch;
  for (int64_t t = 0; t < p.ntaps; ++t) {
    taps[t] = t / cv->kw * cv->dh * p.wp + t % cv->kw * cv->dw;
  }
  float* apack = (float*)(taps + p.ntaps);
  for (int64_t st = 0; st < p.strips; ++st) {
    for (int64_t t = 0; t < p.ntaps; ++t) {
      for (int64_t i = 0; i < cv->c; ++i) {
        float* dst = apack + ((st * p.ntaps + t) * cv->c + i) * KC__CD_MR;
        for (int64_t r = 0; r < KC__CD_MR; ++r) {
          int64_t o = st * KC__CD_MR + r;
          dst[r] = o < cv->o ? cv->w[(o * cv->c + i) * p.ntaps + t] : 0.0f;
        }
      }
    }
  }
  int64_t blocks = (cv->oh + p.rows - 1) / p.rows;
  kc__cd_job job = {cv, apack, taps, p.ntaps, p.rows, blocks, p.wp, p.rr, apack + p.a_floats};
  /* A unit's multiply-adds, at about 16 a nanosecond. */
  int64_t cost =
      p.rows * (p.wp - (cv->kw - 1) * cv->dw) * p.strips * KC__CD_MR * p.ntaps * cv->c / 16 + 1;
  if (pool) {
    kc_thread_pool_parallel_for_with_worker_id(pool, cv->n * blocks, cost, kc__cd_units, &job);
  } else {
    kc__cd_units(&job, 0, cv->n * blocks, 0);
  }
}

#else /* not x86-64: kc__conv2d_direct_runs says no, and these are never called */

size_t kc__conv2d_direct_scratch(const kc__conv2d* cv, int32_t threads) {
  (void)cv;
  (void)threads;
  return 0;
}

void kc__conv2d_direct_f32(const kc__conv2d* cv, void* scratch, kc_thread_pool* pool) {
  (void)cv;
  (void)scratch;
  (void)pool;
}

#endif
