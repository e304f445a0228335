/* The element-wise built-in ops: kc.Add, kc.Sub, kc.Mul, kc.Div,
 * kc.Maximum, kc.Minimum with NumPy broadcasting, their gradient and
 * tangent ops; kc.Neg, kc.Exp, kc.Log, kc.Tanh, kc.Sigmoid, kc.Relu,
 * kc.Softplus and the ops their gradients need. f32 and f64; long runs
 * split across the call's thread pool, the f32 transcendental functions on
 * src/kernels/vmath.h, the other f32 loops also built for AVX2 and chosen
 * at run time. */
#include <math.h>
#include <string.h>

#include "builtin/builtin_internal.h"
#include "internal/common.h"
#include "kernels/vmath.h"

enum {
  KC__BE_ADD,
  KC__BE_SUB,
  KC__BE_MUL,
  KC__BE_DIV,
  KC__BE_MAX,
  KC__BE_MIN,
};

enum {
  KC__BE_NEG,
  KC__BE_EXP,
  KC__BE_LOG,
  KC__BE_TANH,
  KC__BE_SIGMOID,
  KC__BE_RELU,
  KC__BE_SOFTPLUS,
  KC__BE_GELU,
  /* (y or x, dy) -> dx of the four above whose gradient needs an op */
  KC__BE_TANH_GRAD,
  KC__BE_SIGMOID_GRAD,
  KC__BE_RELU_GRAD,
  KC__BE_SOFTPLUS_GRAD,
  KC__BE_GELU_GRAD,
};

/* Elements per task when a run is split across the pool. */
#define KC__BE_CHUNK 16384

/* ---- binary: the loops ------------------------------------------------------------- */

/* z[i] = a OP b over n elements, each operand a run (step 1) or one value
 * repeated (step 0). Maximum and minimum propagate NaN, as XLA and PyTorch
 * do. */
/* `|` rather than `||`: no branch, so that the loops vectorise. */
#define KC__BE_MAXV(a, b) ((((a) > (b)) | ((a) != (a))) ? (a) : (b))
#define KC__BE_MINV(a, b) ((((a) < (b)) | ((a) != (a))) ? (a) : (b))
#define KC__BE_LOOP(T, EXPR)                  \
  if (ix && iy) {                             \
    for (int64_t i = 0; i < n; ++i) {         \
      T a = x[i], b = y[i];                   \
      z[i] = (EXPR);                          \
    }                                         \
  } else if (ix) {                            \
    T b = y[0];                               \
    for (int64_t i = 0; i < n; ++i) {         \
      T a = x[i];                             \
      z[i] = (EXPR);                          \
    }                                         \
  } else if (iy) {                            \
    T a = x[0];                               \
    for (int64_t i = 0; i < n; ++i) {         \
      T b = y[i];                             \
      z[i] = (EXPR);                          \
    }                                         \
  } else {                                    \
    T a = x[0], b = y[0];                     \
    T v = (EXPR);                             \
    for (int64_t i = 0; i < n; ++i) z[i] = v; \
  }
#define KC__BE_ROW(T, SFX, ATTR)                                                             \
  static ATTR void kc__be_row_##T##SFX(int code, const T* x, int64_t ix, const T* y,         \
                                       int64_t iy, T* z, int64_t n) {                        \
    switch (code) {                                                                          \
      case KC__BE_ADD:                                                                       \
        KC__BE_LOOP(T, a + b) break;                                                         \
      case KC__BE_SUB:                                                                       \
        KC__BE_LOOP(T, a - b) break;                                                         \
      case KC__BE_MUL:                                                                       \
        KC__BE_LOOP(T, a* b) break;                                                          \
      case KC__BE_DIV:                                                                       \
        KC__BE_LOOP(T, a / b) break;                                                         \
      case KC__BE_MAX:                                                                       \
        KC__BE_LOOP(T, KC__BE_MAXV(a, b)) break;                                             \
      default:                                                                               \
        KC__BE_LOOP(T, KC__BE_MINV(a, b)) break;                                             \
    }                                                                                        \
  }
KC__BE_ROW(float, , )
KC__BE_ROW(double, , )

/* The f32 loops again for AVX2 (32-byte vectors: twice the divisions and
 * maxima a cycle), called when the processor has it (kc__be_avx2). Not
 * "fma": the compiler would contract a * b + c, and the results would
 * depend on the processor. A target attribute, not target_clones (whose
 * resolver runs before ThreadSanitizer's runtime has started). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define KC__BE_AVX2 __attribute__((target("avx2")))
KC__BE_ROW(float, _avx2, KC__BE_AVX2)
static bool kc__be_avx2(void) { return kc__vmath_levels() > 1; }
#else
#define kc__be_row_float_avx2 kc__be_row_float
static bool kc__be_avx2(void) { return false; }
#endif

/* ---- binary: broadcasting ------------------------------------------------------------ */

/* Up to four operands against one output, as runs along the output's last
 * dim: row r of the output starts at element r * row, operand j's at
 * kc__bi_offset(r, rank - 1, dims, s[j]), and steps by step[j] (0 or 1)
 * along the row. Operands of the output's own shape make one run. */
typedef struct kc__be_layout {
  int32_t rank;
  int64_t dims[KC__BI_MAX_RANK];
  int64_t s[4][KC__BI_MAX_RANK];
  int64_t step[4];
  int64_t row, rows;
} kc__be_layout;

static void kc__be_layout_of(const DLTensor* const* ops, int count, const DLTensor* out,
                             kc__be_layout* l) {
  int64_t n = kc__bi_numel(out);
  bool flat = true;
  for (int j = 0; j < count; ++j) flat = flat && kc__bi_numel(ops[j]) == n;
  if (flat || out->ndim == 0) {
    l->rank = 1;
    l->dims[0] = n;
    for (int j = 0; j < count; ++j) {
      l->s[j][0] = kc__bi_numel(ops[j]) == n ? 1 : 0;
      l->step[j] = l->s[j][0];
    }
    l->row = n;
    l->rows = n ? 1 : 0;
    return;
  }
  l->rank = out->ndim;
  memcpy(l->dims, out->shape, (size_t)out->ndim * sizeof(int64_t));
  for (int j = 0; j < count; ++j) {
    kc__bi_broadcast_strides(ops[j], l->rank, l->dims, l->s[j]);
    l->step[j] = l->s[j][l->rank - 1];
  }
  l->row = l->dims[l->rank - 1];
  l->rows = l->row ? n / l->row : 0;
}

static int64_t kc__be_start(const kc__be_layout* l, int j, int64_t row) {
  return kc__bi_offset(row, l->rank - 1, l->dims, l->s[j]);
}

typedef struct kc__be_binary_job {
  int code;
  bool f32, avx2;
  const void *x, *y;
  void* z;
  kc__be_layout l;
} kc__be_binary_job;

/* Units are chunks of the one run, or rows. */
static void kc__be_binary_units(void* ctx, int64_t begin, int64_t end) {
  const kc__be_binary_job* j = ctx;
  const kc__be_layout* l = &j->l;
  for (int64_t u = begin; u < end; ++u) {
    int64_t row = l->rows == 1 ? 0 : u;
    int64_t from = l->rows == 1 ? u * KC__BE_CHUNK : 0;
    int64_t n =
        l->rows == 1 ? (l->row - from < KC__BE_CHUNK ? l->row - from : KC__BE_CHUNK) : l->row;
    int64_t ox = kc__be_start(l, 0, row) + from * l->step[0];
    int64_t oy = kc__be_start(l, 1, row) + from * l->step[1];
    int64_t oz = row * l->row + from;
    if (j->f32) {
      (j->avx2 ? kc__be_row_float_avx2 : kc__be_row_float)(
          j->code, (const float*)j->x + ox, l->step[0], (const float*)j->y + oy, l->step[1],
          (float*)j->z + oz, n);
    } else {
      kc__be_row_double(j->code, (const double*)j->x + ox, l->step[0], (const double*)j->y + oy,
                        l->step[1], (double*)j->z + oz, n);
    }
  }
}

static int64_t kc__be_units(const kc__be_layout* l) {
  return l->rows == 1 ? (l->row + KC__BE_CHUNK - 1) / KC__BE_CHUNK : l->rows;
}

static kc_status* kc__be_binary_compute(void* kernel, kc_kernel_ctx* ctx) {
  const DLTensor* ops[2] = {kc_kernel_ctx_get_input(ctx, 0), kc_kernel_ctx_get_input(ctx, 1)};
  DLTensor* z = kc_kernel_ctx_get_output(ctx, 0);
  kc__be_binary_job job = {.code = kc__bi_code(kernel),
                           .f32 = kc__bi_is_f32(z),
                           .avx2 = kc__be_avx2(),
                           .x = kc__bi_data(ops[0]),
                           .y = kc__bi_data(ops[1]),
                           .z = kc__bi_data(z)};
  kc__be_layout_of(ops, 2, z, &job.l);
  int64_t per_unit = job.l.rows == 1 ? KC__BE_CHUNK : job.l.row;
  kc_thread_pool_parallel_for(kc_kernel_ctx_get_thread_pool(ctx), kc__be_units(&job.l),
                              per_unit / 2 + 1, kc__be_binary_units, &job);
  return NULL;
}

/* ---- binary: gradients and tangents ---------------------------------------------------- */

/* The cotangents of a and b for the cotangent g of z = a OP b. A tie of
 * maximum or minimum shares g in halves, as JAX and PyTorch do. */
static inline void kc__be_partials(int code, double a, double b, double g, double* ga, double* gb) {
  switch (code) {
    case KC__BE_ADD:
      *ga = g, *gb = g;
      return;
    case KC__BE_SUB:
      *ga = g, *gb = -g;
      return;
    case KC__BE_MUL:
      *ga = g * b, *gb = g * a;
      return;
    case KC__BE_DIV:
      *ga = g / b, *gb = -g * a / (b * b);
      return;
    default: {
      bool first = code == KC__BE_MAX ? a > b : a < b;
      bool second = code == KC__BE_MAX ? a < b : a > b;
      if (first || a != a) {
        *ga = g, *gb = 0;
      } else if (second || b != b) {
        *ga = 0, *gb = g;
      } else {
        *ga = g / 2, *gb = g / 2;
      }
    }
  }
}

static inline double kc__be_load(const void* p, bool f32, int64_t i) {
  return f32 ? (double)((const float*)p)[i] : ((const double*)p)[i];
}

static inline void kc__be_store(void* p, bool f32, int64_t i, double v) {
  if (f32) {
    ((float*)p)[i] = (float)v;
  } else {
    ((double*)p)[i] = v;
  }
}

static inline void kc__be_add_to(void* p, bool f32, int64_t i, double v) {
  if (f32) {
    ((float*)p)[i] += (float)v;
  } else {
    ((double*)p)[i] += v;
  }
}

typedef struct kc__be_grad_job {
  int code;
  bool f32;
  const void *x, *y, *g;
  void *dx, *dy;
} kc__be_grad_job;

/* The same-shape case: every element its own, split across the pool. */
static void kc__be_grad_flat(void* ctx, int64_t begin, int64_t end) {
  const kc__be_grad_job* j = ctx;
  for (int64_t i = begin; i < end; ++i) {
    double ga, gb;
    kc__be_partials(j->code, kc__be_load(j->x, j->f32, i), kc__be_load(j->y, j->f32, i),
                    kc__be_load(j->g, j->f32, i), &ga, &gb);
    kc__be_store(j->dx, j->f32, i, ga);
    kc__be_store(j->dy, j->f32, i, gb);
  }
}

/* d = sign * dz summed into operand j's shape (kc.AddGrad, kc.SubGrad):
 * a copy when it has dz's shape, else sums along the runs of the layout
 * (a bias's gradient: dz's rows added up). */
#define KC__BE_SUM_INTO(T)                                                                     \
  static void kc__be_sum_into_##T(const kc__be_layout* l, int j, const T* g, T* d, int64_t nd, \
                                  T sign) {                                                    \
    if (nd == l->rows * l->row) {                                                              \
      for (int64_t i = 0; i < nd; ++i) d[i] = sign * g[i];                                     \
      return;                                                                                  \
    }                                                                                          \
    memset(d, 0, (size_t)nd * sizeof(T));                                                      \
    for (int64_t r = 0; r < l->rows; ++r) {                                                    \
      T* o = d + kc__be_start(l, j, r);                                                        \
      const T* gr = g + r * l->row;                                                            \
      if (l->step[j]) {                                                                        \
        for (int64_t i = 0; i < l->row; ++i) o[i] += sign * gr[i];                             \
      } else {                                                                                 \
        T s = 0;                                                                               \
        for (int64_t i = 0; i < l->row; ++i) s += gr[i];                                       \
        *o += sign * s;                                                                        \
      }                                                                                        \
    }                                                                                          \
  }
KC__BE_SUM_INTO(float)
KC__BE_SUM_INTO(double)

/* kc.<Op>Grad(x, y, dz) -> (dx, dy): each partial summed over the dims
 * its input was broadcast along. */
static kc_status* kc__be_grad_compute(void* kernel, kc_kernel_ctx* ctx) {
  const DLTensor* x = kc_kernel_ctx_get_input(ctx, 0);
  const DLTensor* y = kc_kernel_ctx_get_input(ctx, 1);
  const DLTensor* g = kc_kernel_ctx_get_input(ctx, 2);
  DLTensor* dx = kc_kernel_ctx_get_output(ctx, 0);
  DLTensor* dy = kc_kernel_ctx_get_output(ctx, 1);
  kc__be_grad_job job = {.code = kc__bi_code(kernel),
                         .f32 = kc__bi_is_f32(g),
                         .x = kc__bi_data(x),
                         .y = kc__bi_data(y),
                         .g = kc__bi_data(g),
                         .dx = kc__bi_data(dx),
                         .dy = kc__bi_data(dy)};
  int64_t n = kc__bi_numel(g);
  if (kc__bi_numel(x) == n && kc__bi_numel(y) == n) {
    kc_thread_pool_parallel_for(kc_kernel_ctx_get_thread_pool(ctx), n, 4, kc__be_grad_flat, &job);
    return NULL;
  }
  const DLTensor* ops[2] = {x, y};
  kc__be_layout l;
  kc__be_layout_of(ops, 2, g, &l);
  if (job.code == KC__BE_ADD || job.code == KC__BE_SUB) {
    for (int j = 0; j < 2; ++j) {
      int64_t nd = kc__bi_numel(j ? y : x);
      bool negate = j == 1 && job.code == KC__BE_SUB;
      if (job.f32) {
        kc__be_sum_into_float(&l, j, job.g, j ? job.dy : job.dx, nd, negate ? -1.0f : 1.0f);
      } else {
        kc__be_sum_into_double(&l, j, job.g, j ? job.dy : job.dx, nd, negate ? -1.0 : 1.0);
      }
    }
    return NULL;
  }
  size_t esize = job.f32 ? 4 : 8;
  memset(job.dx, 0, (size_t)kc__bi_numel(x) * esize);
  memset(job.dy, 0, (size_t)kc__bi_numel(y) * esize);
  for (int64_t r = 0; r < l.rows; ++r) {
    int64_t ox = kc__be_start(&l, 0, r), oy = kc__be_start(&l, 1, r);
    for (int64_t i = 0; i < l.row; ++i) {
      int64_t ix = ox + i * l.step[0], iy = oy + i * l.step[1];
      double ga, gb;
      kc__be_partials(job.code, kc__be_load(job.x, job.f32, ix), kc__be_load(job.y, job.f32, iy),
                      kc__be_load(job.g, job.f32, r * l.row + i), &ga, &gb);
      kc__be_add_to(job.dx, job.f32, ix, ga);
      kc__be_add_to(job.dy, job.f32, iy, gb);
    }
  }
  return NULL;
}

/* kc.<Op>Jvp(x, y, tx, ty) -> tz: the partials applied to the tangents
 * (tx of x's shape, ty of y's). */
static kc_status* kc__be_jvp_compute(void* kernel, kc_kernel_ctx* ctx) {
  int code = kc__bi_code(kernel);
  const DLTensor* ops[4];
  for (int32_t i = 0; i < 4; ++i) ops[i] = kc_kernel_ctx_get_input(ctx, i);
  DLTensor* tz = kc_kernel_ctx_get_output(ctx, 0);
  bool f32 = kc__bi_is_f32(tz);
  kc__be_layout l;
  kc__be_layout_of(ops, 4, tz, &l);
  const void* p[4];
  for (int32_t i = 0; i < 4; ++i) p[i] = kc__bi_data(ops[i]);
  void* out = kc__bi_data(tz);
  for (int64_t r = 0; r < l.rows; ++r) {
    int64_t o[4];
    for (int j = 0; j < 4; ++j) o[j] = kc__be_start(&l, j, r);
    for (int64_t i = 0; i < l.row; ++i) {
      double v[4];
      for (int j = 0; j < 4; ++j) v[j] = kc__be_load(p[j], f32, o[j] + i * l.step[j]);
      /* d(a OP b) = (da/dz-partials) applied: the cotangent partials of a
       * cotangent 1 are the derivatives. */
      double pa, pb;
      kc__be_partials(code, v[0], v[1], 1.0, &pa, &pb);
      kc__be_store(out, f32, r * l.row + i, pa * v[2] + pb * v[3]);
    }
  }
  return NULL;
}

/* ---- unary ------------------------------------------------------------------------------ */

typedef struct kc__be_unary_job {
  int code;
  bool f32, avx2;
  const void *x, *g; /* g: the second input of the gradient helpers */
  void* y;
  int64_t n;
} kc__be_unary_job;

/* 1 / sqrt(2) and 1 / sqrt(2 pi). */
#define KC__BE_RSQRT2 0.70710678118654752440
#define KC__BE_RSQRT2PI 0.39894228040143267794

static inline double kc__be_unary_value(int code, double x, double g) {
  switch (code) {
    case KC__BE_NEG:
      return -x;
    case KC__BE_EXP:
      return exp(x);
    case KC__BE_LOG:
      return log(x);
    case KC__BE_TANH:
      return tanh(x);
    case KC__BE_SIGMOID:
      return x >= 0 ? 1 / (1 + exp(-x)) : exp(x) / (1 + exp(x));
    case KC__BE_RELU:
      return x > 0 ? x : x != x ? x : 0;
    case KC__BE_SOFTPLUS:
      return fmax(x, 0) + log1p(exp(-fabs(x)));
    case KC__BE_SOFTPLUS_GRAD:
      return g * (x >= 0 ? 1 / (1 + exp(-x)) : exp(x) / (1 + exp(x)));
    case KC__BE_TANH_GRAD:
      return g * (1 - x * x);
    case KC__BE_SIGMOID_GRAD:
      return g * x * (1 - x);
    case KC__BE_GELU:
      return 0.5 * x * (1 + erf(x * KC__BE_RSQRT2));
    case KC__BE_GELU_GRAD:
      return g * (0.5 * (1 + erf(x * KC__BE_RSQRT2)) + x * exp(-0.5 * x * x) * KC__BE_RSQRT2PI);
    default: /* KC__BE_RELU_GRAD */
      return x > 0 ? g : 0;
  }
}

/* softplus(x) = max(x, 0) + log1p(e^-|x|), neither term overflowing; its
 * derivative the logistic function. On the vector kernels, a block at a
 * time through a buffer on the stack; the steps between them on 16-byte
 * vectors (GCC and Clang vector extensions: SSE2 and NEON everywhere), on
 * the bits: -|x| sets the sign bit, max(x, 0) keeps x where x > 0 (NaN
 * then comes from the second term). */
typedef float kc__be_f4 __attribute__((vector_size(16)));
typedef int32_t kc__be_i4 __attribute__((vector_size(16)));

static void kc__be_softplus_f32(const float* x, const float* g, float* y, int64_t n) {
  float t[1024];
  const kc__be_i4 sign = {INT32_MIN, INT32_MIN, INT32_MIN, INT32_MIN};
  const kc__be_f4 zero = {0, 0, 0, 0};
  for (int64_t from = 0; from < n; from += 1024) {
    int64_t m = n - from < 1024 ? n - from : 1024, i = 0;
    const float* xs = x + from;
    float* ys = y + from;
    if (g) {
      kc__vmath_f32(KC__VM_LOGISTIC, xs, t, m);
      for (i = 0; i < m; ++i) ys[i] = g[from + i] * t[i];
      continue;
    }
    for (i = 0; i + 4 <= m; i += 4) {
      kc__be_i4 v;
      memcpy(&v, xs + i, sizeof v);
      v |= sign;
      memcpy(t + i, &v, sizeof v);
    }
    for (; i < m; ++i) t[i] = -fabsf(xs[i]);
    kc__vmath_f32(KC__VM_EXP, t, t, m);
    kc__vmath_f32(KC__VM_LOG1P, t, t, m);
    for (i = 0; i + 4 <= m; i += 4) {
      kc__be_f4 v, w;
      memcpy(&v, xs + i, sizeof v);
      memcpy(&w, t + i, sizeof w);
      kc__be_i4 keep = v > zero;
      v = (kc__be_f4)((kc__be_i4)v & keep) + w;
      memcpy(ys + i, &v, sizeof v);
    }
    for (; i < m; ++i) ys[i] = (xs[i] > 0 ? xs[i] : 0.0f) + t[i];
  }
}

/* gelu(x) = x Phi(x), Phi(x) = (1 + erf(x / sqrt 2)) / 2; its derivative
 * Phi(x) + x phi(x). On the vector erf and exp, a block at a time. */
static void kc__be_gelu_f32(const float* x, const float* g, float* y, int64_t n) {
  float t[1024], e[1024];
  for (int64_t from = 0; from < n; from += 1024) {
    int64_t m = n - from < 1024 ? n - from : 1024;
    const float* xs = x + from;
    float* ys = y + from;
    for (int64_t i = 0; i < m; ++i) t[i] = xs[i] * (float)KC__BE_RSQRT2;
    kc__vmath_f32(KC__VM_ERF, t, t, m);
    if (!g) {
      for (int64_t i = 0; i < m; ++i) ys[i] = 0.5f * xs[i] * (1 + t[i]);
      continue;
    }
    for (int64_t i = 0; i < m; ++i) e[i] = -0.5f * xs[i] * xs[i];
    kc__vmath_f32(KC__VM_EXP, e, e, m);
    const float kPhi = (float)KC__BE_RSQRT2PI;
    for (int64_t i = 0; i < m; ++i) {
      ys[i] = g[from + i] * (0.5f * (1 + t[i]) + xs[i] * e[i] * kPhi);
    }
  }
}

/* The f32 ops without a transcendental function: y = -x, relu(x), and
 * from (x or y, g): relu's, tanh's and the logistic's gradients. */
#define KC__BE_PLAIN(SFX, ATTR)                                                                \
  static ATTR void kc__be_plain_f32##SFX(int code, const float* x, const float* g, float* y,  \
                                         int64_t n) {                                          \
    switch (code) {                                                                            \
      case KC__BE_NEG:                                                                         \
        for (int64_t i = 0; i < n; ++i) y[i] = -x[i];                                          \
        return;                                                                                \
      case KC__BE_RELU:                                                                        \
        for (int64_t i = 0; i < n; ++i) y[i] = x[i] <= 0 ? 0.0f : x[i]; /* NaN: x */          \
        return;                                                                                \
      case KC__BE_RELU_GRAD:                                                                   \
        /* g[i] read whatever x[i] is, so the select is a blend, not a                        \
         * branch on the data (a 50% mispredict on random signs). */                           \
        for (int64_t i = 0; i < n; ++i) {                                                      \
          float gi = g[i];                                                                     \
          y[i] = x[i] > 0 ? gi : 0.0f;                                                         \
        }                                                                                      \
        return;                                                                                \
      case KC__BE_TANH_GRAD:                                                                   \
        for (int64_t i = 0; i < n; ++i) y[i] = g[i] * (1 - x[i] * x[i]);                       \
        return;                                                                                \
      default: /* KC__BE_SIGMOID_GRAD */                                                       \
        for (int64_t i = 0; i < n; ++i) y[i] = g[i] * x[i] * (1 - x[i]);                       \
        return;                                                                                \
    }                                                                                          \
  }
KC__BE_PLAIN(, )
#if defined(KC__BE_AVX2)
KC__BE_PLAIN(_avx2, KC__BE_AVX2)
#else
#define kc__be_plain_f32_avx2 kc__be_plain_f32
#endif

static void kc__be_unary_chunks(void* ctx, int64_t begin, int64_t end) {
  const kc__be_unary_job* j = ctx;
  for (int64_t c = begin; c < end; ++c) {
    int64_t from = c * KC__BE_CHUNK;
    int64_t n = j->n - from < KC__BE_CHUNK ? j->n - from : KC__BE_CHUNK;
    if (j->f32) {
      const float* x = (const float*)j->x + from;
      float* y = (float*)j->y + from;
      const float* g = j->g ? (const float*)j->g + from : NULL;
      switch (j->code) {
        case KC__BE_EXP:
          kc__vmath_f32(KC__VM_EXP, x, y, n);
          continue;
        case KC__BE_LOG:
          kc__vmath_f32(KC__VM_LOG, x, y, n);
          continue;
        case KC__BE_TANH:
          kc__vmath_f32(KC__VM_TANH, x, y, n);
          continue;
        case KC__BE_SIGMOID:
          kc__vmath_f32(KC__VM_LOGISTIC, x, y, n);
          continue;
        case KC__BE_NEG:
        case KC__BE_RELU:
        case KC__BE_RELU_GRAD:
        case KC__BE_TANH_GRAD:
        case KC__BE_SIGMOID_GRAD:
          (j->avx2 ? kc__be_plain_f32_avx2 : kc__be_plain_f32)(j->code, x, g, y, n);
          continue;
        case KC__BE_SOFTPLUS:
          kc__be_softplus_f32(x, NULL, y, n);
          continue;
        case KC__BE_SOFTPLUS_GRAD:
          kc__be_softplus_f32(x, g, y, n);
          continue;
        case KC__BE_GELU:
          kc__be_gelu_f32(x, NULL, y, n);
          continue;
        default: /* KC__BE_GELU_GRAD */
          kc__be_gelu_f32(x, g, y, n);
          continue;
      }
    }
    const double* x = (const double*)j->x + from;
    const double* g = j->g ? (const double*)j->g + from : NULL;
    double* y = (double*)j->y + from;
    for (int64_t i = 0; i < n; ++i) y[i] = kc__be_unary_value(j->code, x[i], g ? g[i] : 0);
  }
}

/* One input (kc.Exp, ...) or two of one shape (kc.TanhGrad(y, dy), ...). */
static kc_status* kc__be_unary_compute(void* kernel, kc_kernel_ctx* ctx) {
  const DLTensor* x = kc_kernel_ctx_get_input(ctx, 0);
  const DLTensor* g =
      kc_kernel_ctx_get_input_count(ctx) > 1 ? kc_kernel_ctx_get_input(ctx, 1) : NULL;
  DLTensor* y = kc_kernel_ctx_get_output(ctx, 0);
  kc__be_unary_job job = {.code = kc__bi_code(kernel),
                          .f32 = kc__bi_is_f32(y),
                          .avx2 = kc__be_avx2(),
                          .x = kc__bi_data(x),
                          .g = g ? kc__bi_data(g) : NULL,
                          .y = kc__bi_data(y),
                          .n = kc__bi_numel(y)};
  kc_thread_pool_parallel_for(kc_kernel_ctx_get_thread_pool(ctx),
                              (job.n + KC__BE_CHUNK - 1) / KC__BE_CHUNK, KC__BE_CHUNK * 2,
                              kc__be_unary_chunks, &job);
  return NULL;
}

/* kc.<Op>Grad's shapes: dz must be x and y broadcast together; dx x's,
 * dy y's. */
static kc_status* kc__be_grad_shape(kc_shape_ctx* ctx) {
  const kc_shape_handle *z = NULL, *same = NULL;
  KC_RETURN_IF_ERROR(kc_shape_ctx_broadcast(ctx, kc_shape_ctx_get_input(ctx, 0),
                                            kc_shape_ctx_get_input(ctx, 1), &z),
                     "x and y");
  KC_RETURN_IF_ERROR(kc_shape_ctx_merge(ctx, z, kc_shape_ctx_get_input(ctx, 2), &same),
                     "dz against x and y broadcast together");
  KC_RETURN_IF_ERROR(kc_shape_ctx_set_output(ctx, 0, kc_shape_ctx_get_input(ctx, 0)));
  return kc_shape_ctx_set_output(ctx, 1, kc_shape_ctx_get_input(ctx, 1));
}

/* kc.<Op>Jvp's shape: each tangent its primal's, the output x and y
 * broadcast together. */
static kc_status* kc__be_jvp_shape(kc_shape_ctx* ctx) {
  for (int32_t i = 0; i < 2; ++i) {
    const kc_shape_handle* same = NULL;
    KC_RETURN_IF_ERROR(kc_shape_ctx_merge(ctx, kc_shape_ctx_get_input(ctx, i),
                                          kc_shape_ctx_get_input(ctx, i + 2), &same),
                       "%s's tangent", i ? "y" : "x");
  }
  const kc_shape_handle* z = NULL;
  KC_RETURN_IF_ERROR(kc_shape_ctx_broadcast(ctx, kc_shape_ctx_get_input(ctx, 0),
                                            kc_shape_ctx_get_input(ctx, 1), &z),
                     "x and y");
  return kc_shape_ctx_set_output(ctx, 0, z);
}

/* ---- the table ------------------------------------------------------------------------ */

#define KC__BE_T \
  { KC__BI_T, NULL }

#define KC__BE_BINARY(NAME, CODE, DOC, GRAD_DOC, JVP, GRAD_GRAD, GRAD_JVP)            \
  {.name = "kc." NAME,                                                                \
   .inputs = {"x: T", "y: T", NULL},                                                  \
   .outputs = {"z: T", NULL},                                                         \
   .attrs = KC__BE_T,                                                                 \
   .doc = DOC " Broadcasting as NumPy does.",                                         \
   .shape_fn = kc_shape_fn_broadcast,                                                 \
   .gradient = "kc." NAME "Grad(x, y, grad(z)) -> (grad(x), grad(y))",                \
   .jvp = JVP,                                                                        \
   .batching = KC_OP_BATCH_ELEMENTWISE,                                               \
   .compute = kc__be_binary_compute,                                                  \
   .code = CODE},                                                                     \
  {                                                                                   \
    .name = "kc." NAME "Grad", .inputs = {"x: T", "y: T", "dz: T", NULL},             \
    .outputs = {"dx: T", "dy: T", NULL}, .attrs = KC__BE_T,                           \
    .doc = "The gradient of kc." NAME ": " GRAD_DOC                                   \
           ", each summed over the dims its "                                         \
           "input was broadcast along.",                                              \
    .shape_fn = kc__be_grad_shape, .gradient = GRAD_GRAD, .jvp = GRAD_JVP,            \
    .batching = KC_OP_BATCH_ELEMENTWISE, .compute = kc__be_grad_compute, .code = CODE \
  }

#define KC__BE_JVP_OP(NAME, CODE)                                                 \
  {                                                                               \
    .name = "kc." NAME "Jvp", .inputs = {"x: T", "y: T", "tx: T", "ty: T", NULL}, \
    .outputs = {"tz: T", NULL}, .attrs = KC__BE_T,                                \
    .doc = "The tangent of kc." NAME ", from x, y and their tangents.",           \
    .shape_fn = kc__be_jvp_shape, .batching = KC_OP_BATCH_ELEMENTWISE,            \
    .compute = kc__be_jvp_compute, .code = CODE                                   \
  }

#define KC__BE_UNARY(NAME, CODE, DOC, GRAD, JVP)                                                \
  {                                                                                             \
    .name = "kc." NAME, .inputs = {"x: T", NULL}, .outputs = {"y: T", NULL}, .attrs = KC__BE_T, \
    .doc = DOC, .shape_fn = kc_shape_fn_unchanged, .gradient = GRAD, .jvp = JVP,                \
    .batching = KC_OP_BATCH_ELEMENTWISE, .compute = kc__be_unary_compute, .code = CODE          \
  }

#define KC__BE_UNARY_GRAD(NAME, FIRST, CODE, DOC)                                      \
  {                                                                                    \
    .name = "kc." NAME, .inputs = {FIRST, "dy: T", NULL}, .outputs = {"dx: T", NULL},  \
    .attrs = KC__BE_T, .doc = DOC, .shape_fn = kc_shape_fn_elementwise,                \
    .batching = KC_OP_BATCH_ELEMENTWISE, .compute = kc__be_unary_compute, .code = CODE \
  }

const kc__bi_op kc__bi_elementwise_ops[] = {
    KC__BE_BINARY("Add", KC__BE_ADD, "z = x + y.", "dx = dz, dy = dz",
                  "kc.Add(tangent(x), tangent(y)) -> tangent(z)",
                  /* AddGrad and SubGrad are linear in dz. */
                  "kc.Add(grad(dx), grad(dy)) -> grad(dz)",
                  "kc.AddGrad(x, y, tangent(dz)) -> (tangent(dx), tangent(dy))"),
    KC__BE_BINARY("Sub", KC__BE_SUB, "z = x - y.", "dx = dz, dy = -dz",
                  "kc.Sub(tangent(x), tangent(y)) -> tangent(z)",
                  "kc.Sub(grad(dx), grad(dy)) -> grad(dz)",
                  "kc.SubGrad(x, y, tangent(dz)) -> (tangent(dx), tangent(dy))"),
    KC__BE_BINARY("Mul", KC__BE_MUL, "z = x * y.", "dx = dz y, dy = dz x",
                  "kc.MulJvp(x, y, tangent(x), tangent(y)) -> tangent(z)", NULL, NULL),
    KC__BE_BINARY("Div", KC__BE_DIV, "z = x / y.", "dx = dz / y, dy = -dz x / y^2",
                  "kc.DivJvp(x, y, tangent(x), tangent(y)) -> tangent(z)", NULL, NULL),
    KC__BE_BINARY("Maximum", KC__BE_MAX, "z = max(x, y); NaN if either is NaN.",
                  "dz to the larger input, halved between equal ones",
                  "kc.MaximumJvp(x, y, tangent(x), tangent(y)) -> tangent(z)", NULL, NULL),
    KC__BE_BINARY("Minimum", KC__BE_MIN, "z = min(x, y); NaN if either is NaN.",
                  "dz to the smaller input, halved between equal ones",
                  "kc.MinimumJvp(x, y, tangent(x), tangent(y)) -> tangent(z)", NULL, NULL),
    KC__BE_JVP_OP("Mul", KC__BE_MUL),
    KC__BE_JVP_OP("Div", KC__BE_DIV),
    KC__BE_JVP_OP("Maximum", KC__BE_MAX),
    KC__BE_JVP_OP("Minimum", KC__BE_MIN),
    KC__BE_UNARY("Neg", KC__BE_NEG, "y = -x.", "kc.Neg(grad(y)) -> grad(x)",
                 "kc.Neg(tangent(x)) -> tangent(y)"),
    KC__BE_UNARY("Exp", KC__BE_EXP, "y = e^x.", "kc.Mul(y, grad(y)) -> grad(x)",
                 "kc.Mul(y, tangent(x)) -> tangent(y)"),
    KC__BE_UNARY("Log", KC__BE_LOG, "y = ln(x).", "kc.Div(grad(y), x) -> grad(x)",
                 "kc.Div(tangent(x), x) -> tangent(y)"),
    KC__BE_UNARY("Tanh", KC__BE_TANH, "y = tanh(x).", "kc.TanhGrad(y, grad(y)) -> grad(x)",
                 "kc.TanhGrad(y, tangent(x)) -> tangent(y)"),
    KC__BE_UNARY("Sigmoid", KC__BE_SIGMOID, "y = 1 / (1 + e^-x).",
                 "kc.SigmoidGrad(y, grad(y)) -> grad(x)",
                 "kc.SigmoidGrad(y, tangent(x)) -> tangent(y)"),
    KC__BE_UNARY("Relu", KC__BE_RELU, "y = max(x, 0); NaN stays NaN.",
                 "kc.ReluGrad(x, grad(y)) -> grad(x)", "kc.ReluGrad(x, tangent(x)) -> tangent(y)"),
    KC__BE_UNARY("Softplus", KC__BE_SOFTPLUS, "y = ln(1 + e^x), a smooth Relu.",
                 "kc.SoftplusGrad(x, grad(y)) -> grad(x)",
                 "kc.SoftplusGrad(x, tangent(x)) -> tangent(y)"),
    KC__BE_UNARY("Gelu", KC__BE_GELU,
                 "y = x Phi(x), Phi the standard normal's distribution function "
                 "(x (1 + erf(x / sqrt 2)) / 2: the exact form, not tanh's approximation).",
                 "kc.GeluGrad(x, grad(y)) -> grad(x)", "kc.GeluGrad(x, tangent(x)) -> tangent(y)"),
    KC__BE_UNARY_GRAD("TanhGrad", "y: T", KC__BE_TANH_GRAD,
                      "dx = dy (1 - y^2), kc.Tanh's gradient from its output y."),
    KC__BE_UNARY_GRAD("SigmoidGrad", "y: T", KC__BE_SIGMOID_GRAD,
                      "dx = dy y (1 - y), kc.Sigmoid's gradient from its output y."),
    KC__BE_UNARY_GRAD("ReluGrad", "x: T", KC__BE_RELU_GRAD,
                      "dx = dy where x > 0, else 0: kc.Relu's gradient."),
    KC__BE_UNARY_GRAD("SoftplusGrad", "x: T", KC__BE_SOFTPLUS_GRAD,
                      "dx = dy / (1 + e^-x), kc.Softplus's gradient."),
    KC__BE_UNARY_GRAD("GeluGrad", "x: T", KC__BE_GELU_GRAD,
                      "dx = dy (Phi(x) + x phi(x)), kc.Gelu's gradient (phi the standard "
                      "normal density)."),
};
const size_t kc__bi_elementwise_op_count =
    sizeof kc__bi_elementwise_ops / sizeof kc__bi_elementwise_ops[0];
