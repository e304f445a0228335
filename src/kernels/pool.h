/* Pooling over windows, in the two arithmetics kcall's callers need.
 * Never installed.
 *
 * - PyTorch's 2-D pools (`kc__pool2d_*`), which the built-in kc.MaxPool,
 *   kc.AvgPool, their gradients and MaxPool's tangent run: NHWC or NCHW,
 *   f32 or f64, windows clamped to the input (padding never chosen, and
 *   counted by the average only when asked), max keeping the first of
 *   equal elements (a NaN anywhere gives NaN), so that the gradient can
 *   give each window's cotangent to the element PyTorch would.
 * - XLA's reduce-window folds (`kc__window_fold_*`), which the HLO
 *   reduce-window instruction runs: N-D windows as `kc__window` defines
 *   them (kernels/conv.h), every element type of `KC__ETYPES`, an initial
 *   value given at run time, maximum and minimum as kernels/xla_arith.h
 *   defines them (+0 above -0), integer add and multiply that wrap.
 *
 * The two differ where it shows (which of equal elements a max keeps, the
 * initial value, -0 against +0), so they are two kernels; they share the
 * window definition of kernels/conv.h. */
#ifndef KCALL_KERNELS_POOL_H_
#define KCALL_KERNELS_POOL_H_

#include <stdbool.h>
#include <stdint.h>

#include "kcall/runtime.h"
#include "kernels/conv.h"
#include "kernels/etype.h"

/* ---- PyTorch's 2-D pools ------------------------------------------------- */

typedef enum kc__pool2d_kind {
  KC__POOL2D_MAX,      /* (x) -> y */
  KC__POOL2D_AVG,      /* (x) -> y */
  KC__POOL2D_MAX_GRAD, /* (x, y, dy) -> dx */
  KC__POOL2D_AVG_GRAD, /* (x, dy) -> dx */
  KC__POOL2D_MAX_JVP,  /* (x, tx) -> ty */
} kc__pool2d_kind;

/* A pool's geometry: n images of c channels of h x w in, oh x ow out, a
 * kh x kw window sh, sw apart, the input padded by pt above and pl on the
 * left (the output's size says how much below and on the right). xs, ys:
 * the element strides of n, c, row and column in x and y (NCHW's or
 * NHWC's, as `nchw` says). */
typedef struct kc__pool2d {
  bool nchw, f32;   /* f32, else f64 */
  bool include_pad; /* the average divides by kh kw, else by the window's elements in x */
  int64_t n, c, h, w, oh, ow, kh, kw, sh, sw, pt, pl;
  int64_t xs[4], ys[4];
} kc__pool2d;

/* y = the pool of x (KC__POOL2D_MAX or _AVG), split over `pool` (NULL: on
 * the caller). A window in the padding alone gives -inf (max) or 0. */
void kc__pool2d_forward(const kc__pool2d* g, kc__pool2d_kind kind, const void* x, void* y,
                        kc_thread_pool* pool);

/* The other kinds: `out` (dx: x's shape; ty: y's) = the gradient from x,
 * ym (MAX_GRAD: the forward's y; else NULL) and b (dy, or tx for the
 * tangent), split over `pool`. The max's choice is the first element of a
 * window equal to its max, or the last NaN when the max is NaN. false
 * when MAX_GRAD found a window (with elements of x) none of which equals
 * its ym: ym is not the pool of x, and `out` is incomplete. */
bool kc__pool2d_backward(const kc__pool2d* g, kc__pool2d_kind kind, const void* x, const void* ym,
                         const void* b, void* out, kc_thread_pool* pool);

/* ---- XLA's reduce-window folds ------------------------------------------- */

/* The reducers folded natively (any other runs per element in its
 * caller). */
typedef enum kc__fold_op {
  KC__FOLD_ADD,
  KC__FOLD_MUL,
  KC__FOLD_MAX,
  KC__FOLD_MIN,
  KC__FOLD_AND, /* pred only */
  KC__FOLD_OR,  /* pred only */
} kc__fold_op;

/* A reduce-window over every dimension of a row-major array. The caller
 * fills the fields above the line (win.dims: the array's rank, win.in: its
 * dims, win.out: the result's) and calls kc__window_fold_init once; then
 * kc__window_fold_run as often as it likes, from any thread. */
typedef struct kc__window_fold {
  kc__window win;
  int64_t out_count, window_count; /* the products of win.out and win.size */
  /* ---- from kc__window_fold_init ---- */
  int64_t in_stride[KC__WINDOW_MAX_DIMS]; /* row-major, in elements */
  /* Per dimension d, for output index o and window index w: the input
   * index at pos[d][o size[d] + w], or -1 in padding or a hole. */
  int64_t* pos[KC__WINDOW_MAX_DIMS];
  /* The native loop's rows: where the last dimension passes through the
   * window unchanged (window 1, stride 1, no padding or dilation: NHWC
   * pooling) `row` elements fold at once and the outer_rank dimensions
   * before it are windowed; otherwise row is 1 and every dimension is. */
  int32_t outer_rank;
  int64_t row, outer_count, outer_window_count;
} kc__window_fold;

/* The tables and rows of `f`. false when out of memory (f then holds no
 * table). kc__window_fold_free releases them either way. */
bool kc__window_fold_init(kc__window_fold* f);
void kc__window_fold_free(kc__window_fold* f);

/* The input offset of window position w_idx of output position o_idx
 * over the first `rank` dimensions, or -1 when it is padding or a hole. */
static inline int64_t kc__window_fold_offset(const kc__window_fold* f, int32_t rank,
                                             const int64_t* o_idx, const int64_t* w_idx) {
  int64_t off = 0;
  for (int32_t d = 0; d < rank; ++d) {
    int64_t i = f->pos[d][o_idx[d] * f->win.size[d] + w_idx[d]];
    if (i < 0) return -1;
    off += i * f->in_stride[d];
  }
  return off;
}

/* The next row-major multi-index over dims[0 .. rank), wrapping to 0. */
static inline void kc__index_next(int64_t* idx, const int64_t* dims, int32_t rank) {
  for (int32_t d = rank - 1; d >= 0; --d) {
    if (++idx[d] < dims[d]) return;
    idx[d] = 0;
  }
}

/* y[o] = init folded with op, in row-major order of the window, with the
 * elements of x under output o's window (padding and holes skipped, not
 * taken as init), for every output o: x and y of `type` (a KC__ETYPES
 * type; AND and OR on pred only), init one element of it. Split over
 * `pool` (NULL: the default pool) when large. Thread-safe. */
void kc__window_fold_run(const kc__window_fold* f, kc__fold_op op, kc__etype type, const void* x,
                         const void* init, void* y, kc_thread_pool* pool);

#endif /* KCALL_KERNELS_POOL_H_ */
