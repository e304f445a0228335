/* fft: discrete Fourier transforms over the innermost 1, 2 or 3
 * dimensions, with XLA's semantics.
 *
 *   FFT    c64/c128 -> the same: X[k] = sum_j x[j] exp(-2 pi i jk / N)
 *   IFFT   c64/c128 -> the same: the inverse, scaled by 1 / N (N the
 *          product of fft_length)
 *   RFFT   f32/f64 -> c64/c128: the FFT of real input; the last
 *          dimension keeps fft_length[-1] / 2 + 1 entries
 *   IRFFT  c64/c128 -> f32/f64: the inverse of RFFT; the operand's last
 *          dimension holds fft_length[-1] / 2 + 1 entries, the others are
 *          taken as their complex conjugates (Hermitian symmetry), so the
 *          imaginary parts of the zero and Nyquist entries do not count
 *
 * Multi-dimensional RFFT transforms the last dimension first and the
 * others on the half spectrum; IRFFT the others first, then the last, as
 * XLA (and NumPy's rfftn / irfftn) do.
 *
 * All the arithmetic is in double precision, c64 included: powers of two
 * by an iterative radix-2 transform, other lengths (primes among them) by
 * Bluestein's algorithm, a convolution through a power-of-two transform.
 * Twiddles and chirps are computed once, at compile time, in double. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal/common.h"
#include "program/instr/instr.h"
#include "kernels/split.h"

enum { KC__FFT, KC__IFFT, KC__RFFT, KC__IRFFT };

static const char* const kc__fft_type_names[] = {"FFT", "IFFT", "RFFT", "IRFFT"};

/* A transform of one length. */
typedef struct kc__fft_len {
  int64_t n;
  int64_t m;      /* the power of two the radix-2 transform runs at: n, or Bluestein's */
  double* tw;     /* m / 2 twiddles exp(-2 pi i k / m), re/im interleaved */
  double* chirp;  /* Bluestein: n entries exp(-i pi k^2 / n); NULL for powers of two */
  double* filter; /* Bluestein: the transform of the conjugate chirp, m entries */
} kc__fft_len;

typedef struct kc__fft_plan {
  int type;
  int32_t nfft;          /* 1 .. 3 */
  int64_t len[3];        /* fft_length */
  int64_t batch;         /* the product of the other (leading) dimensions */
  size_t part;           /* bytes of a real part: 4 or 8 */
  int64_t half;          /* len[nfft - 1] / 2 + 1 */
  int64_t max_m;         /* the largest m of the lengths */
  kc__fft_len lens[3];
} kc__fft_plan;

static bool kc__is_pow2(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

/* ---- reading and checking ---------------------------------------------------- */

static void kc__fft_dims_text(const int64_t* v, size_t n, char* buf, size_t cap) {
  size_t at = 0;
  at += (size_t)snprintf(buf, cap, "{");
  for (size_t i = 0; i < n && at < cap; ++i) {
    at += (size_t)snprintf(buf + at, cap - at, "%s%lld", i ? "," : "", (long long)v[i]);
  }
  if (at < cap) snprintf(buf + at, cap - at, "}");
}

static kc_status* kc__fft_read(const kc_program* p, const kc__instr* in, kc__fft_plan* plan) {
  memset(plan, 0, sizeof *plan);
  const kc_shape* x = kc__instr_operand(p, in, 0);
  KC_RETURN_IF_ERROR(kc__instr_expect_array(in, x, "operand 0"));
  KC_RETURN_IF_ERROR(kc__instr_expect_array(in, in->shape, "the result"));
  kc_string_view type;
  KC_RETURN_IF_ERROR(kc__instr_attr_string(in, "fft_type", false, &type));
  plan->type = -1;
  for (int t = 0; t < 4; ++t) {
    if (kc_sv_equal(type, kc_sv(kc__fft_type_names[t]))) plan->type = t;
  }
  if (plan->type < 0) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "attribute fft_type: expected FFT, IFFT, RFFT or IRFFT, got %s",
                           KC__Q(type));
  }
  const int64_t* len;
  size_t nfft;
  KC_RETURN_IF_ERROR(kc__instr_attr_ints(in, "fft_length", false, &len, &nfft));
  char lt[128], g[256], w[256], bx[32];
  kc__fft_dims_text(len, nfft, lt, sizeof lt);
  if (nfft < 1 || nfft > 3) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "attribute fft_length: expected 1 to 3 lengths, got %s", lt);
  }
  for (size_t i = 0; i < nfft; ++i) {
    if (len[i] < 1 || len[i] > ((int64_t)1 << 40)) {
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                             "attribute fft_length: expected lengths of at least 1, got %s", lt);
    }
  }
  plan->nfft = (int32_t)nfft;
  memcpy(plan->len, len, nfft * sizeof *len);
  plan->half = len[nfft - 1] / 2 + 1;

  DLDataType tx = kc_shape_get_dtype(x), tr = kc_shape_get_dtype(in->shape);
  bool real_in = plan->type == KC__RFFT, real_out = plan->type == KC__IRFFT;
  bool cx = tx.code == kDLComplex && (tx.bits == 64 || tx.bits == 128);
  bool fx = tx.code == kDLFloat && (tx.bits == 32 || tx.bits == 64);
  if (tx.lanes != 1 || !(real_in ? fx : cx)) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "fft_type=%s: expected a%s operand, got %s",
                           kc__fft_type_names[plan->type],
                           real_in ? "n f32 or f64" : " c64 or c128",
                           kc__instr_dtype_text(tx, bx, sizeof bx));
  }
  DLDataType want_t = tx;
  if (real_in) want_t = (DLDataType){kDLComplex, (uint8_t)(tx.bits * 2), 1};
  if (real_out) want_t = (DLDataType){kDLFloat, (uint8_t)(tx.bits / 2), 1};
  plan->part = (real_in ? tx.bits : tx.bits / 2) / 8u;

  int32_t rank = kc_shape_get_rank(x);
  const int64_t* dims = kc_shape_get_dims(x);
  if (rank < (int32_t)nfft) {
    kc_shape_format(x, g, sizeof g);
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "attribute fft_length: %s has %zu lengths, expected an operand of "
                           "at least that rank, got %s",
                           lt, nfft, g);
  }
  /* The operand's transformed dimensions: fft_length, but the last one
   * of IRFFT, which holds the half spectrum. */
  int64_t want_in[3];
  memcpy(want_in, len, nfft * sizeof *len);
  if (real_out) want_in[nfft - 1] = plan->half;
  int32_t lead = rank - (int32_t)nfft;
  if (memcmp(dims + lead, want_in, nfft * sizeof *want_in) != 0) {
    char wt[128];
    kc__fft_dims_text(want_in, nfft, wt, sizeof wt);
    kc_shape_format(x, g, sizeof g);
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "attribute fft_length=%s with fft_type=%s: expected an operand whose "
                           "last %zu dimensions are %s, got %s",
                           lt, kc__fft_type_names[plan->type], nfft, wt, g);
  }
  int64_t want_r[KC_TENSOR_MAX_NDIM];
  memcpy(want_r, dims, (size_t)rank * sizeof *dims);
  if (real_in) want_r[rank - 1] = plan->half;
  if (real_out) want_r[rank - 1] = len[nfft - 1];
  bool ok = tr.code == want_t.code && tr.bits == want_t.bits && tr.lanes == 1 &&
            kc_shape_get_rank(in->shape) == rank &&
            memcmp(kc_shape_get_dims(in->shape), want_r, (size_t)rank * sizeof *want_r) == 0;
  if (!ok) {
    kc_shape* s = NULL;
    KC_RETURN_IF_ERROR(kc_shape_create_array(want_t, want_r, rank, &s));
    kc_shape_format(s, w, sizeof w);
    kc_shape_destroy(s);
    kc_shape_format(in->shape, g, sizeof g);
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "fft_type=%s: expected a result of %s, got %s",
                           kc__fft_type_names[plan->type], w, g);
  }
  plan->batch = 1;
  for (int32_t d = 0; d < lead; ++d) plan->batch *= dims[d];
  return NULL;
}

static kc_status* kc__fft_verify(const kc_program* p, const kc__instr* in) {
  kc__fft_plan plan;
  return kc__fft_read(p, in, &plan);
}

/* ---- the one-dimensional transform ------------------------------------------ */

static void kc__radix2(const kc__fft_len* f, double* a) {
  int64_t m = f->m;
  for (int64_t i = 1, j = 0; i < m; ++i) { /* bit reversal */
    int64_t bit = m >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      double t0 = a[2 * i], t1 = a[2 * i + 1];
      a[2 * i] = a[2 * j];
      a[2 * i + 1] = a[2 * j + 1];
      a[2 * j] = t0;
      a[2 * j + 1] = t1;
    }
  }
  for (int64_t len = 2; len <= m; len <<= 1) {
    int64_t h = len / 2, step = m / len;
    for (int64_t i = 0; i < m; i += len) {
      for (int64_t j = 0; j < h; ++j) {
        const double* w = f->tw + 2 * j * step;
        double* u = a + 2 * (i + j);
        double* v = a + 2 * (i + j + h);
        double vr = v[0] * w[0] - v[1] * w[1];
        double vi = v[0] * w[1] + v[1] * w[0];
        v[0] = u[0] - vr;
        v[1] = u[1] - vi;
        u[0] += vr;
        u[1] += vi;
      }
    }
  }
}

/* The forward transform of a[0..n) (interleaved) in place; scratch holds
 * 2 * m doubles. */
static void kc__fft_forward(const kc__fft_len* f, double* a, double* scratch) {
  if (!f->chirp) {
    kc__radix2(f, a);
    return;
  }
  int64_t n = f->n, m = f->m;
  const double* c = f->chirp;
  for (int64_t k = 0; k < n; ++k) {
    scratch[2 * k] = a[2 * k] * c[2 * k] - a[2 * k + 1] * c[2 * k + 1];
    scratch[2 * k + 1] = a[2 * k] * c[2 * k + 1] + a[2 * k + 1] * c[2 * k];
  }
  memset(scratch + 2 * n, 0, (size_t)(m - n) * 2 * sizeof *scratch);
  kc__radix2(f, scratch);
  /* Multiplied by the filter and conjugated: the inverse as a forward. */
  for (int64_t k = 0; k < m; ++k) {
    const double* h = f->filter + 2 * k;
    double r = scratch[2 * k] * h[0] - scratch[2 * k + 1] * h[1];
    double i = scratch[2 * k] * h[1] + scratch[2 * k + 1] * h[0];
    scratch[2 * k] = r;
    scratch[2 * k + 1] = -i;
  }
  kc__radix2(f, scratch);
  double s = 1.0 / (double)m;
  for (int64_t k = 0; k < n; ++k) {
    double r = scratch[2 * k] * s, i = -scratch[2 * k + 1] * s;
    a[2 * k] = r * c[2 * k] - i * c[2 * k + 1];
    a[2 * k + 1] = r * c[2 * k + 1] + i * c[2 * k];
  }
}

/* Unscaled: sum_j a[j] exp(+2 pi i jk / n). */
static void kc__fft_inverse(const kc__fft_len* f, double* a, double* scratch) {
  for (int64_t k = 0; k < f->n; ++k) a[2 * k + 1] = -a[2 * k + 1];
  kc__fft_forward(f, a, scratch);
  for (int64_t k = 0; k < f->n; ++k) a[2 * k + 1] = -a[2 * k + 1];
}

static kc_status* kc__fft_len_init(kc__arena* arena, int64_t n, kc__fft_len* f) {
  const double pi = 3.14159265358979323846;
  f->n = n;
  f->m = 1;
  while (f->m < n) f->m <<= 1;
  if (!kc__is_pow2(n)) {
    f->m = 1;
    while (f->m < 2 * n - 1) f->m <<= 1;
  }
  int64_t m = f->m;
  f->tw = kc__arena_alloc(arena, (size_t)(m / 2 + 1) * 2 * sizeof(double));
  if (!f->tw) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  for (int64_t k = 0; k < m / 2; ++k) {
    double t = -2.0 * pi * (double)k / (double)m;
    f->tw[2 * k] = cos(t);
    f->tw[2 * k + 1] = sin(t);
  }
  f->chirp = NULL;
  f->filter = NULL;
  if (kc__is_pow2(n)) return NULL;
  f->chirp = kc__arena_alloc(arena, (size_t)n * 2 * sizeof(double));
  f->filter = kc__arena_alloc(arena, (size_t)m * 2 * sizeof(double));
  if (!f->chirp || !f->filter) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  for (int64_t k = 0; k < n; ++k) {
    /* k^2 mod 2n keeps the angle small, so it stays exact in double. */
    uint64_t k2 = ((uint64_t)k * (uint64_t)k) % (2u * (uint64_t)n);
    double t = -pi * (double)k2 / (double)n;
    f->chirp[2 * k] = cos(t);
    f->chirp[2 * k + 1] = sin(t);
  }
  double* b = f->filter;
  memset(b, 0, (size_t)m * 2 * sizeof *b);
  for (int64_t k = 0; k < n; ++k) {
    b[2 * k] = f->chirp[2 * k];
    b[2 * k + 1] = -f->chirp[2 * k + 1];
    if (k > 0) {
      b[2 * (m - k)] = b[2 * k];
      b[2 * (m - k) + 1] = b[2 * k + 1];
    }
  }
  kc__radix2(f, b);
  return NULL;
}

static kc_status* kc__fft_prepare(const kc_program* p, const kc__instr* in,
                                  const kc__prepare_ctx* ctx, const void** out) {
  kc__fft_plan* plan = kc__arena_alloc(ctx->arena, sizeof *plan);
  if (!plan) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  KC_RETURN_IF_ERROR(kc__fft_read(p, in, plan));
  plan->max_m = 1;
  for (int32_t i = 0; i < plan->nfft; ++i) {
    KC_RETURN_IF_ERROR(kc__fft_len_init(ctx->arena, plan->len[i], &plan->lens[i]));
    if (plan->lens[i].m > plan->max_m) plan->max_m = plan->lens[i].m;
  }
  *out = plan;
  return NULL;
}

/* ---- the kernel ------------------------------------------------------------- */

/* Transforms axis `axis` of the transformed block [d0, d1, d2) (nd of
 * them, the last `last` long) of each of `batch` blocks in work. */
static void kc__fft_axis(int64_t batch, const kc__fft_len* f, double* work,
                         const int64_t* dims, int32_t nd, int32_t axis, bool inverse,
                         double* row, double* scratch) {
  int64_t outer = batch, inner = 1, n = dims[axis];
  for (int32_t d = 0; d < axis; ++d) outer *= dims[d];
  for (int32_t d = axis + 1; d < nd; ++d) inner *= dims[d];
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      double* base = work + 2 * (o * n * inner + i);
      for (int64_t k = 0; k < n; ++k) {
        row[2 * k] = base[2 * k * inner];
        row[2 * k + 1] = base[2 * k * inner + 1];
      }
      if (inverse) {
        kc__fft_inverse(f, row, scratch);
      } else {
        kc__fft_forward(f, row, scratch);
      }
      for (int64_t k = 0; k < n; ++k) {
        base[2 * k * inner] = row[2 * k];
        base[2 * k * inner + 1] = row[2 * k + 1];
      }
    }
  }
}

static double kc__fft_load(const void* src, size_t part, int64_t i) {
  if (part == 4) return ((const float*)src)[i];
  return ((const double*)src)[i];
}

static void kc__fft_store(void* dst, size_t part, int64_t i, double v) {
  if (part == 4) {
    ((float*)dst)[i] = (float)v;
  } else {
    ((double*)dst)[i] = v;
  }
}

/* The transform of `batch` consecutive batch elements of `in` into `out`;
 * false when out of memory. */
static bool kc__fft_run(const kc__fft_plan* plan, const void* in, void* out, int64_t batch) {
  const void* const ins[1] = {in};
  int32_t nd = plan->nfft;
  int64_t dims[3]; /* the complex block's dims (the half spectrum for RFFT, IRFFT) */
  memcpy(dims, plan->len, sizeof dims);
  int64_t last = plan->len[nd - 1];
  if (plan->type >= KC__RFFT) dims[nd - 1] = plan->half;
  int64_t block = 1;
  for (int32_t d = 0; d < nd; ++d) block *= dims[d];
  int64_t count = block * batch, rows = count / dims[nd - 1];
  if (count == 0) return true;
  int64_t row_n = plan->max_m > last ? plan->max_m : last;
  double* work = kc__malloc((size_t)count * 2 * sizeof *work);
  double* row = kc__malloc((size_t)row_n * 2 * sizeof *row);
  double* scratch = kc__malloc((size_t)plan->max_m * 2 * sizeof *scratch);
  if (!work || !row || !scratch) {
    kc__free(work);
    kc__free(row);
    kc__free(scratch);
    return false;
  }
  const kc__fft_len* fl = &plan->lens[nd - 1];
  size_t part = plan->part;
  double total = 1;
  for (int32_t d = 0; d < nd; ++d) total *= (double)plan->len[d];
  switch (plan->type) {
    case KC__FFT:
    case KC__IFFT: {
      bool inv = plan->type == KC__IFFT;
      for (int64_t i = 0; i < 2 * count; ++i) work[i] = kc__fft_load(ins[0], part, i);
      for (int32_t a = nd - 1; a >= 0; --a) {
        kc__fft_axis(batch, &plan->lens[a], work, dims, nd, a, inv, row, scratch);
      }
      double s = inv ? 1.0 / total : 1.0;
      for (int64_t i = 0; i < 2 * count; ++i) kc__fft_store(out, part, i, work[i] * s);
      break;
    }
    case KC__RFFT: {
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t k = 0; k < last; ++k) {
          row[2 * k] = kc__fft_load(ins[0], part, r * last + k);
          row[2 * k + 1] = 0;
        }
        kc__fft_forward(fl, row, scratch);
        memcpy(work + 2 * r * plan->half, row, (size_t)plan->half * 2 * sizeof *row);
      }
      for (int32_t a = nd - 2; a >= 0; --a) {
        kc__fft_axis(batch, &plan->lens[a], work, dims, nd, a, false, row, scratch);
      }
      for (int64_t i = 0; i < 2 * count; ++i) kc__fft_store(out, part, i, work[i]);
      break;
    }
    case KC__IRFFT: {
      for (int64_t i = 0; i < 2 * count; ++i) work[i] = kc__fft_load(ins[0], part, i);
      for (int32_t a = nd - 2; a >= 0; --a) {
        kc__fft_axis(batch, &plan->lens[a], work, dims, nd, a, true, row, scratch);
      }
      double s = 1.0 / total;
      int64_t h = plan->half;
      for (int64_t r = 0; r < rows; ++r) {
        const double* src = work + 2 * r * h;
        for (int64_t k = 0; k < last; ++k) {
          if (k < h) {
            row[2 * k] = src[2 * k];
            row[2 * k + 1] = src[2 * k + 1];
          } else {
            row[2 * k] = src[2 * (last - k)];
            row[2 * k + 1] = -src[2 * (last - k) + 1];
          }
        }
        kc__fft_inverse(fl, row, scratch);
        for (int64_t k = 0; k < last; ++k) kc__fft_store(out, part, r * last + k, row[2 * k] * s);
      }
      break;
    }
    default:
      break;
  }
  kc__free(work);
  kc__free(row);
  kc__free(scratch);
  return true;
}

/* Batch elements shared over the pool: each range transforms its own, in
 * buffers of its own. */
typedef struct kc__fft_job {
  const kc__fft_plan* plan;
  const char* in;
  char* out;
  size_t in_bytes, out_bytes; /* of one batch element */
  int failed;
} kc__fft_job;

static void kc__fft_range(void* p, int64_t begin, int64_t end) {
  kc__fft_job* job = p;
  if (!kc__fft_run(job->plan, job->in + (size_t)begin * job->in_bytes,
                   job->out + (size_t)begin * job->out_bytes, end - begin)) {
    __atomic_store_n(&job->failed, 1, __ATOMIC_RELAXED);
  }
}

static kc_status* kc__fft_kernel(const kc__instr_kernel_ctx* ctx, void* out,
                                 const void* const* ins) {
  const kc__fft_plan* plan = ctx->data;
  int32_t nd = plan->nfft;
  int64_t reals = 1, block = 1; /* per batch element: real length, complex block */
  for (int32_t d = 0; d < nd; ++d) {
    reals *= plan->len[d];
    block *= d == nd - 1 && plan->type >= KC__RFFT ? plan->half : plan->len[d];
  }
  size_t complex_bytes = (size_t)block * 2 * plan->part, real_bytes = (size_t)reals * plan->part;
  kc__fft_job job = {.plan = plan, .in = ins[0], .out = out,
                     .in_bytes = plan->type == KC__RFFT ? real_bytes : complex_bytes,
                     .out_bytes = plan->type == KC__IRFFT ? real_bytes : complex_bytes};
  /* About 5 ns a complex element and stage of the radix-2 passes it runs. */
  double stages = 1 + log2((double)plan->max_m);
  kc__split_items(ctx->pool, plan->batch, 5.0 * (double)block * stages * nd, kc__fft_range,
                  &job);
  if (job.failed) return kc_status_create(KC_RESOURCE_EXHAUSTED, "fft: out of memory");
  return NULL;
}

static const char* const kc__fft_attrs[] = {"fft_type", "fft_length", NULL};

const kc__instr_def kc__instr_fft[] = {
    {.op = KC_OP_FFT, .name = "fft", .min_operands = 1, .max_operands = 1,
     .attrs = kc__fft_attrs, .verify = kc__fft_verify, .prepare = kc__fft_prepare,
     .kernel = kc__fft_kernel},
};
const size_t kc__instr_fft_count = KC__ARRAY_SIZE(kc__instr_fft);
