/* Windows over N-D arrays, and the unfolding of a convolution's input
 * into a matrix (im2col) and back (col2im): what the HLO convolution, the
 * built-in kc.Conv2D and its gradient and the window folds of pool.h
 * share. Never installed.
 *
 * A window slides over the spatial dimensions of an input as XLA's
 * convolution and reduce-window define it: along dimension d, output
 * position o and window position w read the input at
 *   at = o stride[d] + w rhs_dil[d] - low[d]
 * in the input dilated by lhs_dil[d] (lhs_dil - 1 holes between two
 * elements), that is input index at / lhs_dil[d] when at is a multiple of
 * it and inside the input; elsewhere the window is in the padding or in a
 * hole. Every function here is thread-safe. */
#ifndef KCALL_KERNELS_CONV_H_
#define KCALL_KERNELS_CONV_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kcall/runtime.h"
#include "kcall/tensor.h"

/* Spatial dimensions a window has at most. */
#define KC__WINDOW_MAX_DIMS KC_TENSOR_MAX_NDIM

typedef struct kc__window {
  int32_t dims;                      /* spatial dimensions */
  int64_t in[KC__WINDOW_MAX_DIMS];   /* the input's size along each */
  int64_t size[KC__WINDOW_MAX_DIMS]; /* the window's */
  int64_t out[KC__WINDOW_MAX_DIMS];  /* the output's (positions of the window) */
  int64_t stride[KC__WINDOW_MAX_DIMS], low[KC__WINDOW_MAX_DIMS];
  int64_t lhs_dil[KC__WINDOW_MAX_DIMS], rhs_dil[KC__WINDOW_MAX_DIMS]; /* at least 1 */
} kc__window;

/* The positions a window takes along one dimension (out[d] of a
 * kc__window): `size` elements dilated by `base_dilation` and padded by
 * lo and hi (either may be negative), a window of `window` taps dilated by
 * `window_dilation`, moved by `stride` (>= 1). False when a step of the
 * arithmetic overflows int64 (attributes no real program has), for the
 * verify function to refuse. */
static inline bool kc__window_positions(int64_t size, int64_t lo, int64_t hi, int64_t base_dilation,
                                        int64_t window, int64_t window_dilation, int64_t stride,
                                        int64_t* out) {
  int64_t dilated = 0, padded, span = 0;
  if (size > 0 && (__builtin_mul_overflow(size - 1, base_dilation, &dilated) ||
                   __builtin_add_overflow(dilated, 1, &dilated))) {
    return false;
  }
  if (__builtin_add_overflow(dilated, lo, &padded) || __builtin_add_overflow(padded, hi, &padded)) {
    return false;
  }
  if (window > 0 && (__builtin_mul_overflow(window - 1, window_dilation, &span) ||
                     __builtin_add_overflow(span, 1, &span))) {
    return false;
  }
  *out = padded < span || stride < 1 ? 0 : (padded - span) / stride + 1;
  return true;
}

/* The input index under window position w of output position o along
 * dimension d, or -1 in the padding or a hole. */
static inline int64_t kc__window_index(const kc__window* win, int32_t d, int64_t o, int64_t w) {
  int64_t at = o * win->stride[d] + w * win->rhs_dil[d] - win->low[d];
  if (at < 0) return -1;
  if (win->lhs_dil[d] == 1) return at < win->in[d] ? at : -1;
  int64_t i = at / win->lhs_dil[d];
  return at % win->lhs_dil[d] == 0 && i < win->in[d] ? i : -1;
}

/* Dimension d's taps: table[o size[d] + w] = kc__window_index(win, d, o,
 * w) times `scale` (an element stride), or -1, for every output position
 * o and window position w; out[d] size[d] entries, which the caller
 * owns. */
void kc__window_taps(const kc__window* win, int32_t d, int64_t scale, int64_t* table);

/* Along a dimension of `n` output positions whose input index is
 * o stride + off (no dilation of the input), the positions whose index
 * lies in 0 .. in - 1: [*lo, *hi), lo <= hi, both in 0 .. n. */
void kc__window_span(int64_t n, int64_t stride, int64_t off, int64_t in, int64_t* lo, int64_t* hi);

/* A convolution's input side: the window over the spatial dimensions, the
 * input's element strides and the features one window position reads.
 * Fill the fields above the line, then call kc__conv_geom_finish. */
typedef struct kc__conv_geom {
  kc__window win;
  int64_t x_b, x_f, x_s[KC__WINDOW_MAX_DIMS]; /* element strides: batch, feature, spatial */
  int64_t features; /* input features a window position reads (one group's) */
  /* ---- from kc__conv_geom_finish ---- */
  int64_t positions; /* output positions of one image: the product of win.out */
  int64_t taps;      /* window positions: the product of win.size */
  int64_t k;         /* taps features: the length of an unfolded window */
} kc__conv_geom;

/* Sets positions, taps and k from the fields above them. */
void kc__conv_geom_finish(kc__conv_geom* g);

/* The unfolded forms, of f32 (es 4) or f64 (es 8) elements. In both,
 * `x` points at the first feature the window reads (a group's: the
 * input plus its first feature times x_f), image 0, and every element
 * under the padding or a hole of the window is 0.
 *
 * Rows: one row of k elements per output position, [taps, features] in
 * row-major order of the window; row r is position r % positions of
 * image r / positions. kc__conv_unfold_rows writes rows r0 .. r0 + count
 * - 1 into `rows` (count k elements). With an output of [images,
 * positions, o] and a kernel of [taps, features, o] (HWIO), the product
 * rows x kernel is the convolution.
 *
 * Columns: per image, a [k, positions] matrix whose rows are
 * [features, taps] in row-major order; kc__conv_unfold_cols writes images
 * n0 .. n0 + count - 1 one after the other into `cols` (count k positions
 * elements). With a kernel of [o, features, taps] (OIHW), kernel x the
 * image's matrix is its [o, positions] output (NCHW's).
 *
 * The folds are the transposes: every element of the unfolded form is
 * added into dx (the input's gradient, of x's layout, pointed to as x
 * is) at the element it was read from; padding and holes are dropped.
 * They fold whole images: images n0 .. n0 + count - 1 from `rows` (count
 * positions rows, the first of them row 0 of `rows`) or from `cols`.
 *
 * The work is shared out over `pool`; NULL runs it on the caller. */
void kc__conv_unfold_rows(const kc__conv_geom* g, size_t es, const void* x, int64_t r0,
                          int64_t count, void* rows, kc_thread_pool* pool);
void kc__conv_unfold_cols(const kc__conv_geom* g, size_t es, const void* x, int64_t n0,
                          int64_t count, void* cols, kc_thread_pool* pool);
void kc__conv_fold_rows(const kc__conv_geom* g, size_t es, const void* rows, int64_t n0,
                        int64_t count, void* dx, kc_thread_pool* pool);
void kc__conv_fold_cols(const kc__conv_geom* g, size_t es, const void* cols, int64_t n0,
                        int64_t count, void* dx, kc_thread_pool* pool);

/* ---- direct NCHW convolution --------------------------------------------------------- */

/* A 2-D convolution of f32 NCHW images with an OIHW kernel, width stride
 * 1, computed without unfolding (conv_direct.c): y[img][o][oh][ow] = the
 * sum over channels i and taps (a, b) of w[o][i][a][b] x[img][i][oh sh +
 * a dh - pt][ow + b dw - pl], zero outside the input. Rows of x and y
 * are dense (width and ow floats); images and channels are x_n, x_c (and
 * y_n, y_c) floats apart, so a group's slice of a tensor is one too. w
 * is [o, c, kh, kw], dense. */
typedef struct kc__conv2d {
  const float* x;
  int64_t x_n, x_c;
  const float* w;
  float* y;
  int64_t y_n, y_c;
  int64_t n, c, height, width; /* images, channels, input rows and columns */
  int64_t o, kh, kw, oh, ow;   /* output features, the window, the output */
  int64_t sh, dh, dw, pt, pl;  /* the height stride, dilations, top and left padding */
} kc__conv2d;

/* Whether kc__conv2d_direct_f32 runs here (x86-64 with AVX2 and FMA)
 * and takes cv (padding not negative; stride and dilations positive). */
bool kc__conv2d_direct_runs(const kc__conv2d* cv);

/* Bytes of scratch kc__conv2d_direct_f32 needs for cv on a pool of
 * `threads` participants (the packed kernel, and a block of input rows
 * each), to be aligned to 8 bytes. */
size_t kc__conv2d_direct_scratch(const kc__conv2d* cv, int32_t threads);

/* Writes cv->y, where kc__conv2d_direct_runs(cv); shares the work out
 * over `pool` (NULL: the caller), whose size the scratch was sized for. */
void kc__conv2d_direct_f32(const kc__conv2d* cv, void* scratch, kc_thread_pool* pool);

#endif /* KCALL_KERNELS_CONV_H_ */
