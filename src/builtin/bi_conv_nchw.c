/* kc.Conv2D and its gradient on NCHW tensors with OIHW kernels (PyTorch's
 * layout), for bi_conv.c.
 *
 * NCHW runs image by image, each image on one thread, in bands of output
 * rows whose unfolded block ([k, band positions], KC__CV_BAND_BYTES at
 * most) stays in that core's cache from im2col through the GEMM (called
 * from inside the loop over images, so it runs on that thread) to the
 * transpose or col2im. A band's product is [positions, og] = rows^T
 * w_g^T: the positions, not the few output features, run along the
 * GEMM's tall side. dw is summed per image, then over the images in
 * order, so it does not depend on the threads. */
#include <string.h>

#include "builtin/bi_spatial.h"
#include "builtin/builtin_internal.h"
#include "internal/common.h"

/* Bytes of a band's unfolded block at most (one output row at least). */
#define KC__CV_BAND_BYTES ((int64_t)256 << 10)

/* Bytes of the per-image dw parts a pass holds at most (one image at
 * least); more images go in passes. */
#define KC__CV_PARTS_BYTES ((int64_t)16 << 20)

typedef struct kc__cv_nchw_job {
  const kc__cv_geom* g;
  kc_kernel_ctx* ctx;
  size_t es;
  int64_t band; /* output rows a band holds */
  kc_thread_pool* pool;
  const void *x, *w;
  void *dy, *y, *dx;
  void* parts; /* the gradient's dw of each image of the pass, [o k] each */
  int64_t n0;  /* the pass's first image */
  bool grad, need_dx, need_dw;
  char* scratch; /* per worker: rows [k, band], a block [band, og], dw [og, k] */
  size_t rows_bytes, block_bytes, scratch_bytes;
} kc__cv_nchw_job;

/* Band oy0 .. oy1 - 1 of an image: rows [k, pb] unfolded from xg (the
 * group's first feature plane), or added back into dg; its [pb, og]
 * product stored into y's group planes yg, or dy's group planes
 * gathered into [og, pb]. */
#define KC__CV_BAND(T)                                                                          \
  static void kc__cv_band_##T(const kc__cv_geom* g, const T* xg, T* dg, int64_t oy0,           \
                              int64_t oy1, T* rows) {                                           \
    int64_t pb = (oy1 - oy0) * g->ow;                                                           \
    for (int64_t q = 0; q < g->k; ++q) {                                                        \
      int64_t c = q / (g->kh * g->kw), ky = q / g->kw % g->kh, kx = q % g->kw;                  \
      int64_t off = kx * g->dw - g->pl, lo, hi;                                                 \
      kc__cv_span(g->ow, g->sw, off, g->w, &lo, &hi);                                           \
      T* row = rows + q * pb;                                                                   \
      for (int64_t oy = oy0; oy < oy1; ++oy, row += g->ow) {                                    \
        int64_t iy = kc__cv_iy(g, oy, ky);                                                      \
        bool in = iy >= 0 && iy < g->h;                                                         \
        if (dg) { /* col2im: input column ox sw + off of each output column */                  \
          T* dst = dg + c * g->xs[1] + (in ? iy : 0) * g->w;                                    \
          for (int64_t ox = lo; in && ox < hi; ++ox) dst[ox * g->sw + off] += row[ox];          \
          continue;                                                                             \
        }                                                                                       \
        const T* src = xg + c * g->xs[1] + (in ? iy : 0) * g->w;                                \
        int64_t a = in ? lo : g->ow, b = in ? hi : g->ow;                                       \
        for (int64_t ox = 0; ox < a; ++ox) row[ox] = 0;                                         \
        if (g->sw == 1) {                                                                       \
          for (int64_t ox = a; ox < b; ++ox) row[ox] = src[ox + off];                           \
        } else {                                                                                \
          for (int64_t ox = a; ox < b; ++ox) row[ox] = src[ox * g->sw + off];                   \
        }                                                                                       \
        for (int64_t ox = b; ox < g->ow; ++ox) row[ox] = 0;                                     \
      }                                                                                         \
    }                                                                                           \
  }                                                                                             \
  static void kc__cv_band_move_##T(const kc__cv_geom* g, T* planes, int64_t oy0, int64_t oy1,   \
                                   T* block, bool store) {                                      \
    int64_t pb = (oy1 - oy0) * g->ow;                                                           \
    for (int64_t q = 0; q < g->og; ++q) {                                                       \
      T* plane = planes + q * g->p + oy0 * g->ow;                                               \
      if (store) {                                                                              \
        for (int64_t i = 0; i < pb; ++i) plane[i] = block[i * g->og + q];                       \
      } else {                                                                                  \
        memcpy(block + q * pb, plane, (size_t)pb * sizeof(T));                                  \
      }                                                                                         \
    }                                                                                           \
  }

KC__CV_BAND(float)
KC__CV_BAND(double)

static void kc__cv_band(const kc__cv_nchw_job* j, const char* xg, char* dg, int64_t oy0,
                        int64_t oy1, char* rows) {
  if (j->g->f32) {
    kc__cv_band_float(j->g, (const float*)(const void*)xg, (float*)(void*)dg, oy0, oy1,
                      (float*)(void*)rows);
  } else {
    kc__cv_band_double(j->g, (const double*)(const void*)xg, (double*)(void*)dg, oy0, oy1,
                       (double*)(void*)rows);
  }
}

static void kc__cv_band_move(const kc__cv_nchw_job* j, char* planes, int64_t oy0, int64_t oy1,
                             char* block, bool store) {
  if (j->g->f32) {
    kc__cv_band_move_float(j->g, (float*)(void*)planes, oy0, oy1, (float*)(void*)block, store);
  } else {
    kc__cv_band_move_double(j->g, (double*)(void*)planes, oy0, oy1, (double*)(void*)block,
                            store);
  }
}

/* One band of one image and group: y's planes, or dx's and dw's parts. */
static kc_status* kc__cv_nchw_band(const kc__cv_nchw_job* j, int64_t n, int64_t grp,
                                   int64_t oy0, int64_t oy1, char* rows, char* block, char* dwb) {
  const kc__cv_geom* g = j->g;
  const size_t es = j->es;
  int64_t pb = (oy1 - oy0) * g->ow;
  int64_t plane0 = n * g->o * g->p + grp * g->og * g->p; /* the group's first output plane */
  const char* xg = (const char*)j->x + (size_t)(n * g->xs[0] + grp * g->cg * g->xs[1]) * es;
  kc__bi_operand wg = {(const char*)j->w + (size_t)(grp * g->og * g->k) * es, true};
  if (!j->grad) {
    kc__cv_band(j, xg, NULL, oy0, oy1, rows);
    KC_RETURN_IF_ERROR(kc__bi_products(g->f32, (kc__bi_operand){rows, true}, 0, wg, 0, block, 1,
                                       pb, g->og, g->k, j->pool));
    kc__cv_band_move(j, (char*)j->y + (size_t)plane0 * es, oy0, oy1, block, true);
    return NULL;
  }
  kc__cv_band_move(j, (char*)j->dy + (size_t)plane0 * es, oy0, oy1, block, false);
  kc__bi_operand dyb = {block, false};
  if (j->need_dw) { /* [og, k] += dy_b [og, pb] rows^T */
    kc__cv_band(j, xg, NULL, oy0, oy1, rows);
    KC_RETURN_IF_ERROR(kc__bi_products(g->f32, dyb, 0, (kc__bi_operand){rows, true}, 0, dwb, 1,
                                       g->og, g->k, pb, j->pool));
    kc__cv_accumulate(g->f32,
                      (char*)j->parts + (size_t)((n - j->n0) * g->o * g->k + grp * g->og * g->k) * es,
                      dwb, g->og * g->k);
  }
  if (j->need_dx) { /* rows [k, pb] = w_g^T dy_b, folded into dx */
    KC_RETURN_IF_ERROR(kc__bi_products(g->f32, wg, 0, dyb, 0, rows, 1, g->k, pb, g->og, j->pool));
    char* dg = (char*)j->dx + (size_t)(n * g->xs[0] + grp * g->cg * g->xs[1]) * es;
    kc__cv_band(j, NULL, dg, oy0, oy1, rows);
  }
  return NULL;
}

static void kc__cv_nchw_images(void* ctx, int64_t begin, int64_t end, int32_t worker) {
  const kc__cv_nchw_job* j = ctx;
  const kc__cv_geom* g = j->g;
  char* rows = j->scratch + (size_t)worker * j->scratch_bytes;
  char* block = rows + j->rows_bytes;
  char* dwb = block + j->block_bytes;
  for (int64_t n = j->n0 + begin; n < j->n0 + end; ++n) {
    for (int64_t grp = 0; grp < g->groups; ++grp) {
      for (int64_t oy0 = 0; oy0 < g->oh; oy0 += j->band) {
        int64_t oy1 = oy0 + j->band < g->oh ? oy0 + j->band : g->oh;
        kc_status* st = kc__cv_nchw_band(j, n, grp, oy0, oy1, rows, block, dwb);
        if (st) {
          kc_kernel_ctx_set_status(j->ctx, st);
          return;
        }
      }
    }
  }
}

static size_t kc__cv_round64(int64_t bytes) { return (size_t)((bytes + 63) & ~(int64_t)63); }

kc_status* kc__cv_nchw(kc_kernel_ctx* ctx, const kc__cv_geom* g, const void* x, const void* w,
                       void* dy, void* y, void* dx, void* dw, const bool* need) {
  kc_thread_pool* pool = kc_kernel_ctx_get_thread_pool(ctx);
  size_t es = g->f32 ? sizeof(float) : sizeof(double);
  int64_t row_bytes = g->k * g->ow * (int64_t)es;
  int64_t band = row_bytes > 0 && row_bytes < KC__CV_BAND_BYTES ? KC__CV_BAND_BYTES / row_bytes : 1;
  kc__cv_nchw_job j = {.g = g, .ctx = ctx, .es = es, .band = band < g->oh ? band : g->oh,
                       .pool = pool, .x = x, .w = w, .dy = dy, .y = y, .dx = dx, .grad = y == NULL,
                       .need_dx = need && need[0], .need_dw = need && need[1]};
  int64_t pb = j.band * g->ow;
  j.rows_bytes = kc__cv_round64(g->k * pb * (int64_t)es);
  j.block_bytes = kc__cv_round64(g->og * pb * (int64_t)es);
  j.scratch_bytes = j.rows_bytes + j.block_bytes + kc__cv_round64(g->og * g->k * (int64_t)es);
  int32_t workers = kc_thread_pool_get_size(pool);
  KC_RETURN_IF_ERROR(kc_kernel_ctx_allocate_temp(
      ctx, j.scratch_bytes * (size_t)(workers > 0 ? workers : 1), 64, (void**)&j.scratch));
  int64_t part = g->o * g->k * (int64_t)es;
  int64_t pass = j.need_dw && part > 0 && part < KC__CV_PARTS_BYTES ? KC__CV_PARTS_BYTES / part : 1;
  if (pass > g->n) pass = g->n;
  if (j.need_dw) {
    KC_RETURN_IF_ERROR(kc_kernel_ctx_allocate_temp(ctx, (size_t)(pass * part), 64, &j.parts));
  }
  for (j.n0 = 0; j.n0 < g->n; j.n0 += pass) {
    int64_t count = g->n - j.n0 < pass ? g->n - j.n0 : pass;
    if (j.need_dw) memset(j.parts, 0, (size_t)(count * part));
    /* Fewer images than threads: one thread takes them, and each GEMM
     * spreads over the pool itself. */
    if (count < workers) {
      kc__cv_nchw_images(&j, 0, count, 0);
    } else {
      kc_thread_pool_parallel_for_with_worker_id(pool, count, g->p * g->k * g->og * 2 + 1,
                                                 kc__cv_nchw_images, &j);
    }
    for (int64_t i = 0; j.need_dw && i < count; ++i) { /* in image order */
      kc__cv_accumulate(g->f32, dw, (const char*)j.parts + (size_t)(i * part), g->o * g->k);
    }
  }
  return NULL;
}

