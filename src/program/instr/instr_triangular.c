/* triangular-solve: XLA's TriangularSolve, on the CPU.
 *
 * Operands a[..., m, m] and b[..., m, n] (left_side=true) or b[..., n, m]
 * (left_side=false), of one element type (f32, f64, c64, c128), with equal
 * leading (batch) dimensions; the result has b's shape and solves, per
 * batch element,
 *
 *   left_side=true:   op(a) x = b
 *   left_side=false:  x op(a) = b
 *
 * where op(a) is a (transpose_a=NO_TRANSPOSE), its transpose (TRANSPOSE)
 * or its conjugate transpose (ADJOINT). Only the triangle `lower` names
 * (true: the lower one, diagonal included) is read; the other is ignored,
 * whatever it holds. unit_diagonal=true takes the diagonal as ones without
 * reading it. A zero on the diagonal divides by zero, as XLA:CPU's does
 * (infinities and NaNs, no status). Missing bools are false, as XLA's HLO
 * text leaves them out; transpose_a must be given.
 *
 * Forward or back substitution, each sum accumulated in double (complex
 * double for c64 and c128) and rounded once into the result; batch
 * elements and right-hand sides are shared out over the pool. */
#include <complex.h>
#include <stdio.h>
#include <string.h>

#include "internal/common.h"
#include "program/instr/instr.h"
#include "kernels/split.h"

enum { KC__TS_NO_TRANSPOSE, KC__TS_TRANSPOSE, KC__TS_ADJOINT };

static const char* const kc__ts_transpose_names[] = {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"};

typedef struct kc__ts_plan {
  bool left, lower, unit;
  int transpose;
  bool complex_type;
  size_t part;   /* bytes of a real part: 4 or 8 */
  int64_t batch; /* the product of the leading dimensions */
  int64_t m;     /* a's order */
  int64_t rhs;   /* right-hand sides per batch element: b's other dimension */
} kc__ts_plan;

static kc_status* kc__ts_bool(const kc__instr* in, const char* name, bool* out) {
  const kc_attr* a = kc__instr_attr(in, name);
  *out = false;
  if (!a) return NULL;
  if (a->type != KC_ATTR_BOOL) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT, "attribute %s: expected true or false", name);
  }
  *out = a->v.b;
  return NULL;
}

static kc_status* kc__ts_read(const kc_program* p, const kc__instr* in, kc__ts_plan* plan) {
  memset(plan, 0, sizeof *plan);
  const kc_shape* a = kc__instr_operand(p, in, 0);
  const kc_shape* b = kc__instr_operand(p, in, 1);
  KC_RETURN_IF_ERROR(kc__instr_expect_array(in, a, "operand 0 (a)"));
  KC_RETURN_IF_ERROR(kc__instr_expect_array(in, b, "operand 1 (b)"));
  KC_RETURN_IF_ERROR(kc__instr_expect_array(in, in->shape, "the result"));
  KC_RETURN_IF_ERROR(kc__ts_bool(in, "left_side", &plan->left));
  KC_RETURN_IF_ERROR(kc__ts_bool(in, "lower", &plan->lower));
  KC_RETURN_IF_ERROR(kc__ts_bool(in, "unit_diagonal", &plan->unit));
  kc_string_view tr;
  KC_RETURN_IF_ERROR(kc__instr_attr_string(in, "transpose_a", false, &tr));
  plan->transpose = -1;
  for (int t = 0; t < 3; ++t) {
    if (kc_sv_equal(tr, kc_sv(kc__ts_transpose_names[t]))) plan->transpose = t;
  }
  if (plan->transpose < 0) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "attribute transpose_a: expected NO_TRANSPOSE, TRANSPOSE or ADJOINT, "
                           "got %s",
                           KC__Q(tr));
  }
  char ga[256], gb[256], gr[256], t[32];
  kc_shape_format(a, ga, sizeof ga);
  kc_shape_format(b, gb, sizeof gb);
  kc_shape_format(in->shape, gr, sizeof gr);
  DLDataType dt = kc_shape_get_dtype(a);
  bool real = dt.code == kDLFloat && (dt.bits == 32 || dt.bits == 64);
  bool cplx = dt.code == kDLComplex && (dt.bits == 64 || dt.bits == 128);
  if (dt.lanes != 1 || (!real && !cplx)) {
    return kc__instr_error(in, KC_UNIMPLEMENTED,
                           "triangular-solve: element type %s is not supported (f32, f64, c64 "
                           "and c128)",
                           kc__instr_dtype_text(dt, t, sizeof t));
  }
  DLDataType bt = kc_shape_get_dtype(b), rt = kc_shape_get_dtype(in->shape);
  if (!kc_dtype_equal(bt, dt) || !kc_dtype_equal(rt, dt)) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "triangular-solve: expected a, b and the result of one element type, "
                           "got %s, %s and %s",
                           ga, gb, gr);
  }
  int32_t rank = kc_shape_get_rank(a);
  const int64_t* ad = kc_shape_get_dims(a);
  const int64_t* bd = kc_shape_get_dims(b);
  if (rank < 2 || ad[rank - 1] != ad[rank - 2]) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "triangular-solve: expected a to be square matrices ([..., m, m]), "
                           "got %s",
                           ga);
  }
  bool batch_ok = kc_shape_get_rank(b) == rank;
  for (int32_t k = 0; batch_ok && k < rank - 2; ++k) batch_ok = bd[k] == ad[k];
  if (!batch_ok) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "triangular-solve: expected b of a's rank and leading (batch) "
                           "dimensions, got a %s and b %s",
                           ga, gb);
  }
  plan->m = ad[rank - 1];
  int64_t shared = plan->left ? bd[rank - 2] : bd[rank - 1];
  if (shared != plan->m) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "triangular-solve: with left_side=%s, b's %s dimension must be a's "
                           "order %lld, got a %s and b %s",
                           plan->left ? "true" : "false", plan->left ? "second-last" : "last",
                           (long long)plan->m, ga, gb);
  }
  if (!kc_shape_equal(b, in->shape)) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "triangular-solve: expected a result of b's shape %s, got %s", gb, gr);
  }
  plan->rhs = plan->left ? bd[rank - 1] : bd[rank - 2];
  plan->batch = 1;
  for (int32_t k = 0; k < rank - 2; ++k) plan->batch *= ad[k];
  plan->complex_type = cplx;
  plan->part = cplx ? dt.bits / 16u : dt.bits / 8u;
  return NULL;
}

static kc_status* kc__ts_verify(const kc_program* p, const kc__instr* in) {
  kc__ts_plan plan;
  return kc__ts_read(p, in, &plan);
}

static kc_status* kc__ts_prepare(const kc_program* p, const kc__instr* in,
                                 const kc__prepare_ctx* ctx, const void** out) {
  kc__ts_plan* plan = kc__arena_alloc(ctx->arena, sizeof *plan);
  if (!plan) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  KC_RETURN_IF_ERROR(kc__ts_read(p, in, plan));
  *out = plan;
  return NULL;
}

/* ---- the solve
 * ---------------------------------------------------------------- */

typedef struct kc__ts_job {
  const kc__ts_plan* plan;
  const char* a;
  char* x; /* the result, holding b at first */
} kc__ts_job;

/* A complex value from its parts, infinities and NaN kept (glibc gives
 * clang no CMPLX; C11 lays the value out as its two parts). */
static double complex kc__ts_make(double re, double im) {
  double parts[2] = {re, im};
  double complex z;
  memcpy(&z, parts, sizeof z);
  return z;
}

/* Element `at` of a matrix of the plan's element type, widened. */
static double complex kc__ts_load(const kc__ts_plan* pl, const char* base, int64_t at) {
  if (pl->complex_type) {
    if (pl->part == 4) {
      const float* f = (const float*)(const void*)base + 2 * at;
      return kc__ts_make((double)f[0], (double)f[1]);
    }
    const double* d = (const double*)(const void*)base + 2 * at;
    return kc__ts_make(d[0], d[1]);
  }
  if (pl->part == 4) return (double)((const float*)(const void*)base)[at];
  return ((const double*)(const void*)base)[at];
}

static void kc__ts_store(const kc__ts_plan* pl, char* base, int64_t at, double complex v) {
  if (pl->complex_type) {
    if (pl->part == 4) {
      float* f = (float*)(void*)base + 2 * at;
      f[0] = (float)creal(v);
      f[1] = (float)cimag(v);
    } else {
      double* d = (double*)(void*)base + 2 * at;
      d[0] = creal(v);
      d[1] = cimag(v);
    }
  } else if (pl->part == 4) {
    ((float*)(void*)base)[at] = (float)creal(v);
  } else {
    ((double*)(void*)base)[at] = creal(v);
  }
}

/* Element (i, j) of op(a), for the matrix at `a`. */
static double complex kc__ts_op_a(const kc__ts_plan* pl, const char* a, int64_t i, int64_t j) {
  if (pl->transpose == KC__TS_NO_TRANSPOSE) return kc__ts_load(pl, a, i * pl->m + j);
  double complex v = kc__ts_load(pl, a, j * pl->m + i);
  return pl->transpose == KC__TS_ADJOINT ? conj(v) : v;
}

/* One right-hand side r of batch element `bi`. Left: column r of x,
 * op(a) x = b; right: row r of x, x op(a) = b. op(a) is lower triangular
 * when `lower` says a is and it is not transposed, or the other way. */
static void kc__ts_solve_one(const kc__ts_job* job, int64_t bi, int64_t r) {
  const kc__ts_plan* pl = job->plan;
  int64_t m = pl->m, n = pl->rhs;
  size_t esize = pl->part * (pl->complex_type ? 2u : 1u);
  const char* a = job->a + (size_t)(bi * m * m) * esize;
  char* x = job->x + (size_t)(bi * m * n) * esize;
  bool op_lower = pl->lower == (pl->transpose == KC__TS_NO_TRANSPOSE);
  /* x's element k of this right-hand side. */
  int64_t stride = pl->left ? n : 1, first = pl->left ? r : r * m;
  /* Left: row i of op(a) x, forward when op(a) is lower. Right: column j
   * of x op(a), forward (j from 0) when op(a) is upper. */
  bool forward = pl->left ? op_lower : !op_lower;
  for (int64_t step = 0; step < m; ++step) {
    int64_t i = forward ? step : m - 1 - step;
    double complex acc = kc__ts_load(pl, x, first + i * stride);
    int64_t lo = forward ? 0 : i + 1, hi = forward ? i : m;
    for (int64_t k = lo; k < hi; ++k) {
      double complex t = pl->left ? kc__ts_op_a(pl, a, i, k) : kc__ts_op_a(pl, a, k, i);
      acc -= t * kc__ts_load(pl, x, first + k * stride);
    }
    if (!pl->unit) acc /= kc__ts_op_a(pl, a, i, i);
    kc__ts_store(pl, x, first + i * stride, acc);
  }
}

static void kc__ts_range(void* p, int64_t begin, int64_t end) {
  const kc__ts_job* job = p;
  for (int64_t item = begin; item < end; ++item) {
    kc__ts_solve_one(job, item / job->plan->rhs, item % job->plan->rhs);
  }
}

static kc_status* kc__ts_kernel(const kc__instr_kernel_ctx* ctx, void* out,
                                const void* const* ins) {
  const kc__ts_plan* plan = ctx->data;
  size_t esize = plan->part * (plan->complex_type ? 2u : 1u);
  size_t bytes = (size_t)(plan->batch * plan->m * plan->rhs) * esize;
  if (bytes && out != ins[1]) memmove(out, ins[1], bytes);
  kc__ts_job job = {.plan = plan, .a = ins[0], .x = out};
  /* About 2 ns a multiply-add; m^2 / 2 of them a right-hand side. */
  kc__split_items(ctx->pool, plan->batch * plan->rhs, 1.0 * (double)plan->m * (double)plan->m,
                  kc__ts_range, &job);
  return NULL;
}

static const char* const kc__ts_attrs[] = {"left_side", "lower", "unit_diagonal", "transpose_a",
                                           NULL};

const kc__instr_def kc__instr_triangular[] = {
    {.op = KC_OP_TRIANGULAR_SOLVE,
     .name = "triangular-solve",
     .min_operands = 2,
     .max_operands = 2,
     .attrs = kc__ts_attrs,
     .verify = kc__ts_verify,
     .prepare = kc__ts_prepare,
     .kernel = kc__ts_kernel},
};
const size_t kc__instr_triangular_count = KC__ARRAY_SIZE(kc__instr_triangular);
