/*
 * ops_plugin.c — ops and kernels defined by a plugin. It calls kcall by the
 * library's names through <kcall/plugin_api.h>, which (built with
 * KC_BUILDING_PLUGIN) turns each call into one through the host table, so
 * the plugin includes only <kcall/abi.h> and links nothing of kcall:
 *
 *   Bitcast(input: T) -> (output: type)     the seed's example
 *   Add(x: T, y: T) -> (z: T)               NumPy broadcasting; f32 f64 i32;
 *                                           (its kernel: ops_add.c); long rows
 *                                           split with parallel_for
 *   MatMul(a: T, b: T) -> (product: T)      f32, rows split with parallel_for
 *   Concat(values: N * T) -> (output: T)    along attr `axis`
 *   Counter() -> (count: i64)               stateful: create and delete
 *   Softplus(x: T) -> (y: T)                log(1 + e^x); f32 f64
 *
 * Add, MatMul and Softplus declare their gradients (op.h, "Gradients"),
 * each computed by an op of its own: AddGrad sums the cotangent over the
 * broadcast dims, MatMulGrad is two products, SoftplusGrad multiplies by
 * the logistic function. AddGrad and SoftplusGrad declare gradients too
 * (Add, and SoftplusGradGrad), so JAX and PyTorch take second
 * derivatives through them.
 *
 * The gradient ops' shapes are their first inputs' (kc_shape_fn_like_inputs).
 *
 * They also declare forward-mode rules (op.h, "Forward-mode rules"): Add
 * and AddGrad are linear, so they are their own (on the tangents);
 * Softplus's tangent is SoftplusGrad's product with the logistic
 * function; MatMulJvp computes ta b + a tb; SoftplusGradJvp gives
 * SoftplusGrad one, so forward-over-reverse (torch.func.hessian) works.
 *
 * Every shape function here computes dims only through kcall's helpers,
 * so each op but Counter (which has no inputs) declares
 * KC_OP_SYMBOLIC_SHAPES, and frameworks get its output shapes as
 * expressions of the input sizes (torch.compile with dynamic shapes,
 * torch.export, jax.export); Add, Softplus and its gradients use
 * kcall's ready-made shape functions (kc_shape_fn_broadcast,
 * kc_shape_fn_unchanged, kc_shape_fn_elementwise), which are symbolic
 * without saying so.
 *
 * Each op is also the packed function "op.NAME", so the kcall tool calls
 * them on literal tensors:
 *   kcall call --plugin libops_plugin.so op.Add f32[2,2]:1,2,3,4 f32[2]:10,20
 */
#include <kcall/plugin_api.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops_plugin.h"

static kc_status* ops_error(kc_status_code code, const char* op,
                            const char* what) {
  return kc_status_create(code, "%s: %s", op, what);
}

static size_t ops_dtype_size(DLDataType t) {
  return ((size_t)t.bits * t.lanes + 7) / 8;
}

/* How each op batches under a framework's vmap (op.h, "Batching"). The
 * element-wise ones compute each slice along a leading dim from the same
 * slice of their inputs; MatMul (2-D only) and Concat (its axis counts
 * from the front) do not, and batch one element at a time, as an op
 * declaring nothing does; Counter advances once per call, which a batch
 * cannot honour. */
static const struct {
  const char* op;
  kc_op_batching rule;
} kOpsBatching[] = {
    {"Bitcast", KC_OP_BATCH_ELEMENTWISE},  {"Add", KC_OP_BATCH_ELEMENTWISE},
    {"AddGrad", KC_OP_BATCH_ELEMENTWISE},  {"Softplus", KC_OP_BATCH_ELEMENTWISE},
    {"SoftplusGrad", KC_OP_BATCH_ELEMENTWISE},
    {"SoftplusGradGrad", KC_OP_BATCH_ELEMENTWISE},
    {"SoftplusGradJvp", KC_OP_BATCH_ELEMENTWISE},
    {"MatMul", KC_OP_BATCH_SEQUENTIAL},    {"MatMulGrad", KC_OP_BATCH_SEQUENTIAL},
    {"MatMulJvp", KC_OP_BATCH_SEQUENTIAL},
    {"Concat", KC_OP_BATCH_SEQUENTIAL},    {"Counter", KC_OP_BATCH_NONE},
};

static kc_op_batching ops_batching(const char* name) {
  for (size_t i = 0; i < sizeof kOpsBatching / sizeof kOpsBatching[0]; ++i) {
    if (strcmp(kOpsBatching[i].op, name) == 0) return kOpsBatching[i].rule;
  }
  return KC_OP_BATCH_SEQUENTIAL;
}

/* Registers one op from its specs, with its gradient and forward-mode
 * rule (NULL: none); the
 * builder is consumed either way. The builder keeps the first failure of
 * the calls in between, and registration returns it. */
static kc_status* ops_define_grad(const char* name, const char* const* inputs,
                                  const char* const* outputs,
                                  const char* const* attrs, uint32_t flags,
                                  const char* doc, kc_shape_fn shape_fn,
                                  const char* gradient, const char* jvp) {
  kc_op_builder* b = NULL;
  kc_status* st = kc_op_builder_create(name, &b);
  if (st) return st;
  for (size_t i = 0; inputs && inputs[i]; ++i) {
    kc_op_builder_add_input_v2(b, inputs[i]);
  }
  for (size_t i = 0; outputs && outputs[i]; ++i) {
    kc_op_builder_add_output_v2(b, outputs[i]);
  }
  for (size_t i = 0; attrs && attrs[i]; ++i) {
    kc_op_builder_add_attr_v2(b, attrs[i]);
  }
  kc_op_builder_set_flags_v2(b, flags);
  kc_op_builder_set_doc_v2(b, doc);
  kc_op_builder_set_shape_fn_v2(b, shape_fn, NULL, NULL);
  if (gradient) kc_op_builder_set_gradient(b, gradient);
  if (jvp) kc_op_builder_set_jvp(b, jvp);
  kc_op_builder_set_batching(b, ops_batching(name));
  return kc_op_registry_register(b, 0);
}

/* Registers `grad`, the gradient op `op`'s declaration names, defined from
 * the declaration and `op`'s specs (kc_op_builder_create_gradient): only
 * its doc is written here, and its kernel. */
static kc_status* ops_define_gradient_op(const char* op, const char* grad,
                                         const char* doc) {
  kc_op_builder* b = NULL;
  kc_status* st = kc_op_builder_create_gradient(op, &b);
  if (st) return st;
  kc_op_builder_set_doc_v2(b, doc);
  kc_op_builder_set_batching(b, ops_batching(grad));
  return kc_op_registry_register(b, 0);
}

static kc_status* ops_define(const char* name, const char* const* inputs,
                             const char* const* outputs,
                             const char* const* attrs, uint32_t flags,
                             const char* doc, kc_shape_fn shape_fn) {
  return ops_define_grad(name, inputs, outputs, attrs, flags, doc, shape_fn,
                         NULL, NULL);
}

/* Registers a CPU kernel, optionally constrained on attr `attr`. */
static kc_status* ops_kernel(const char* op, kc_kernel_create_fn create,
                             kc_kernel_compute_fn compute,
                             kc_deleter_fn delete_fn, const char* attr,
                             const DLDataType* dtypes, int32_t count) {
  kc_kernel_builder* b = NULL;
  kc_status* st =
      kc_kernel_builder_create(op, kDLCPU, create, compute, delete_fn, &b);
  if (st) return st;
  if (attr) st = kc_kernel_builder_add_type_constraint(b, attr, dtypes, count);
  if (st) {
    kc_kernel_builder_destroy(b);
    return st;
  }
  return kc_kernel_registry_register(b);
}

#define OPS_LIST(...) ((const char* const[]){__VA_ARGS__, NULL})

/* ======================================================================== */
/* Bitcast                                                                  */
/* ======================================================================== */
/* Reinterprets the bytes of `input` as `type`. Same size: same shape. A
 * smaller type adds a last dim (in/out elements); a bigger one needs a last
 * dim of exactly out/in, and drops it. */

static kc_status* bitcast_shape(kc_shape_ctx* ctx) {
  const kc_shape_handle* in = kc_shape_ctx_get_input(ctx, 0);
  size_t from = ops_dtype_size(kc_shape_ctx_get_input_dtype(ctx, 0));
  size_t to = ops_dtype_size(kc_shape_ctx_get_output_dtype(ctx, 0));
  const kc_shape_handle* out = in;
  kc_status* st = NULL;
  if (from > to) {
    const kc_shape_handle* extra = NULL;
    int64_t ratio = (int64_t)(from / to);
    st = kc_shape_ctx_make_shape(ctx, 1, &ratio, &extra);
    if (!st) st = kc_shape_ctx_concatenate(ctx, in, extra, &out);
  } else if (from < to) {
    int64_t last = 0;
    st = kc_shape_ctx_with_rank_at_least(ctx, in, 1, &in);
    if (!st) {
      st = kc_shape_ctx_merge_dim(ctx, kc_shape_handle_get_dim(in, -1),
                                  (int64_t)(to / from), &last);
    }
    if (st) {
      return kc_status_add_context(st,
                                   "Bitcast to a type %zu times "
                                   "as wide needs a last dim of %zu",
                                   to / from, to / from);
    }
    st = kc_shape_ctx_subshape(ctx, in, 0, -1, &out);
  }
  if (!st) st = kc_shape_ctx_set_output(ctx, 0, out);
  return st;
}

static kc_status* bitcast_compute(void* kernel, kc_kernel_ctx* ctx) {
  (void)kernel;
  const DLTensor* in = kc_kernel_ctx_get_input(ctx, 0);
  DLTensor* out = kc_kernel_ctx_get_output(ctx, 0);
  memcpy(ops_data(out), ops_data(in),
         (size_t)ops_numel(in) * ops_dtype_size(in->dtype));
  return NULL;
}

/* ======================================================================== */
/* MatMul                                                                   */
/* ======================================================================== */

static kc_status* matmul_shape(kc_shape_ctx* ctx) {
  const kc_shape_handle *a = NULL, *b = NULL, *out = NULL;
  int64_t k = 0;
  kc_status* st =
      kc_shape_ctx_with_rank(ctx, kc_shape_ctx_get_input(ctx, 0), 2, &a);
  if (!st) {
    st = kc_shape_ctx_with_rank(ctx, kc_shape_ctx_get_input(ctx, 1), 2, &b);
  }
  if (!st) {
    st = kc_shape_ctx_merge_dim(ctx, kc_shape_handle_get_dim(a, 1),
                                kc_shape_handle_get_dim(b, 0), &k);
    if (st) st = kc_status_add_context(st, "MatMul: inner dimensions");
  }
  if (!st) {
    int64_t dims[2] = {kc_shape_handle_get_dim(a, 0),
                       kc_shape_handle_get_dim(b, 1)};
    st = kc_shape_ctx_make_shape(ctx, 2, dims, &out);
  }
  if (!st) st = kc_shape_ctx_set_output(ctx, 0, out);
  return st;
}

typedef struct matmul_job {
  const float* a;
  const float* b;
  float* c;
  int64_t k, n;
  bool accumulate; /* C += A B rather than C = A B */
} matmul_job;

/* Blocks of B small enough to stay in cache while a band of rows runs
 * over them. */
#define MATMUL_BLOCK_K 128
#define MATMUL_BLOCK_N 256

/* Rows [begin, end) of C = A B. */
static void matmul_rows(void* ctx, int64_t begin, int64_t end) {
  const matmul_job* j = ctx;
  for (int64_t i = begin; i < end && !j->accumulate; ++i) {
    for (int64_t c = 0; c < j->n; ++c) j->c[i * j->n + c] = 0;
  }
  for (int64_t n0 = 0; n0 < j->n; n0 += MATMUL_BLOCK_N) {
    int64_t n1 = n0 + MATMUL_BLOCK_N < j->n ? n0 + MATMUL_BLOCK_N : j->n;
    for (int64_t k0 = 0; k0 < j->k; k0 += MATMUL_BLOCK_K) {
      int64_t k1 = k0 + MATMUL_BLOCK_K < j->k ? k0 + MATMUL_BLOCK_K : j->k;
      for (int64_t i = begin; i < end; ++i) {
        float* crow = j->c + i * j->n;
        for (int64_t p = k0; p < k1; ++p) {
          float aip = j->a[i * j->k + p];
          const float* brow = j->b + p * j->n;
          for (int64_t c = n0; c < n1; ++c) crow[c] += aip * brow[c];
        }
      }
    }
  }
}

static kc_status* matmul_compute(void* kernel, kc_kernel_ctx* ctx) {
  (void)kernel;
  const DLTensor* a = kc_kernel_ctx_get_input(ctx, 0);
  const DLTensor* b = kc_kernel_ctx_get_input(ctx, 1);
  DLTensor* c = kc_kernel_ctx_get_output(ctx, 0);
  matmul_job job = {ops_data(a), ops_data(b), ops_data(c), a->shape[1],
                    b->shape[1], false};
  /* A row costs about 2 K N flops, a nanosecond per few of them. */
  kc_thread_pool_parallel_for(kc_kernel_ctx_get_thread_pool(ctx), a->shape[0],
                              job.k * job.n / 2 + 1, matmul_rows, &job);
  return NULL;
}

/* MatMulJvp(a, b, ta, tb) -> t = ta b + a tb, MatMul's tangent. */
static kc_status* matmul_jvp_shape(kc_shape_ctx* ctx) {
  kc_status* st = matmul_shape(ctx);
  for (int32_t i = 0; !st && i < 2; ++i) {
    const kc_shape_handle* same = NULL;
    st = kc_shape_ctx_merge(ctx, kc_shape_ctx_get_input(ctx, i),
                            kc_shape_ctx_get_input(ctx, i + 2), &same);
    if (st) {
      st = kc_status_add_context(st, "MatMulJvp: %s's tangent", i ? "b" : "a");
    }
  }
  return st;
}

static kc_status* matmul_jvp_compute(void* kernel, kc_kernel_ctx* ctx) {
  (void)kernel;
  const DLTensor* a = kc_kernel_ctx_get_input(ctx, 0);
  const DLTensor* b = kc_kernel_ctx_get_input(ctx, 1);
  DLTensor* t = kc_kernel_ctx_get_output(ctx, 0);
  kc_thread_pool* pool = kc_kernel_ctx_get_thread_pool(ctx);
  int64_t k = a->shape[1], n = b->shape[1];
  matmul_job first = {ops_data(kc_kernel_ctx_get_input(ctx, 2)), ops_data(b),
                      ops_data(t), k, n, false};
  matmul_job second = {ops_data(a), ops_data(kc_kernel_ctx_get_input(ctx, 3)),
                       ops_data(t), k, n, true};
  kc_thread_pool_parallel_for(pool, a->shape[0], k * n / 2 + 1, matmul_rows,
                              &first);
  kc_thread_pool_parallel_for(pool, a->shape[0], k * n / 2 + 1, matmul_rows,
                              &second);
  return NULL;
}

/* ======================================================================== */
/* Gradients of Add and MatMul                                              */
/* ======================================================================== */

/* AddGrad(x, y, dz) -> (dx, dy): dz summed into the shape of each input
 * (over the dims it was broadcast along). */
#define ADD_GRAD_LOOP(T)                                                   \
  static void add_grad_##T(const DLTensor* dz, DLTensor* d) {              \
    int32_t rank = dz->ndim;                                               \
    int64_t sd[OPS_MAX_RANK], idx[OPS_MAX_RANK];                           \
    const T* g = ops_data(dz);                                             \
    T* out = ops_data(d);                                                  \
    int64_t n = ops_numel(dz);                                             \
    for (int64_t i = 0; i < ops_numel(d); ++i) out[i] = 0;                 \
    add_strides(d, rank, dz->shape, sd);                                   \
    for (int32_t i = 0; i < rank; ++i) idx[i] = 0;                         \
    int64_t off = 0;                                                       \
    for (int64_t e = 0; e < n; ++e) {                                      \
      out[off] += g[e];                                                    \
      for (int32_t k = rank - 1; k >= 0; --k) {                            \
        off += sd[k];                                                      \
        if (++idx[k] < dz->shape[k]) break;                                \
        off -= sd[k] * idx[k];                                             \
        idx[k] = 0;                                                        \
      }                                                                    \
    }                                                                      \
  }
ADD_GRAD_LOOP(float)
ADD_GRAD_LOOP(double)
#undef ADD_GRAD_LOOP

static kc_status* add_grad_compute(void* kernel, kc_kernel_ctx* ctx) {
  (void)kernel;
  const DLTensor* dz = kc_kernel_ctx_get_input(ctx, 2);
  for (int32_t i = 0; i < 2; ++i) {
    DLTensor* d = kc_kernel_ctx_get_output(ctx, i);
    if (dz->dtype.bits == 32) {
      add_grad_float(dz, d);
    } else {
      add_grad_double(dz, d);
    }
  }
  return NULL;
}

/* MatMulGrad(a, b, dp) -> (da, db): da = dp b^T, db = a^T dp. */
static kc_status* matmul_grad_compute(void* kernel, kc_kernel_ctx* ctx) {
  (void)kernel;
  const DLTensor* a = kc_kernel_ctx_get_input(ctx, 0);
  const DLTensor* b = kc_kernel_ctx_get_input(ctx, 1);
  const DLTensor* dp = kc_kernel_ctx_get_input(ctx, 2);
  if (dp->ndim != 2 || dp->shape[0] != a->shape[0] ||
      dp->shape[1] != b->shape[1]) {
    return ops_error(KC_INVALID_ARGUMENT, "MatMulGrad",
                     "dproduct must be [rows of a, columns of b]");
  }
  const float* av = ops_data(a);
  const float* bv = ops_data(b);
  const float* g = ops_data(dp);
  float* da = ops_data(kc_kernel_ctx_get_output(ctx, 0));
  float* db = ops_data(kc_kernel_ctx_get_output(ctx, 1));
  int64_t m = a->shape[0], k = a->shape[1], n = b->shape[1];
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t p = 0; p < k; ++p) {
      float acc = 0;
      for (int64_t c = 0; c < n; ++c) acc += g[i * n + c] * bv[p * n + c];
      da[i * k + p] = acc;
    }
  }
  for (int64_t j = 0; j < k * n; ++j) db[j] = 0;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t p = 0; p < k; ++p) {
      float aip = av[i * k + p];
      for (int64_t c = 0; c < n; ++c) db[p * n + c] += aip * g[i * n + c];
    }
  }
  return NULL;
}

/* ======================================================================== */
/* Softplus and its gradients                                               */
/* ======================================================================== */
/* y = log(1 + e^x), written so that neither branch overflows; its
 * derivative is the logistic function s(x) = 1 / (1 + e^-x), and s' is
 * s (1 - s). */

static double softplus(double x) { return fmax(x, 0) + log1p(exp(-fabs(x))); }
static double logistic(double x) {
  return x >= 0 ? 1 / (1 + exp(-x)) : exp(x) / (1 + exp(x));
}

/* Runs f over every element: inputs 0..3 (as many as given) and outputs
 * 0..1, all of one shape and of f32 or f64. */
typedef void (*softplus_fn)(const double* in, double* out);

static kc_status* softplus_each(kc_kernel_ctx* ctx, softplus_fn f) {
  int32_t nin = kc_kernel_ctx_get_input_count(ctx);
  int32_t nout = kc_kernel_ctx_get_output_count(ctx);
  const DLTensor* x = kc_kernel_ctx_get_input(ctx, 0);
  for (int32_t i = 1; i < nin; ++i) {
    if (ops_numel(kc_kernel_ctx_get_input(ctx, i)) != ops_numel(x)) {
      return ops_error(KC_INVALID_ARGUMENT, "Softplus gradient",
                       "inputs must have one shape");
    }
  }
  bool f32 = x->dtype.bits == 32;
  for (int64_t e = 0; e < ops_numel(x); ++e) {
    double in[4] = {0, 0, 0, 0}, out[2] = {0, 0};
    for (int32_t i = 0; i < nin && i < 4; ++i) {
      const void* p = ops_data(kc_kernel_ctx_get_input(ctx, i));
      in[i] = f32 ? ((const float*)p)[e] : ((const double*)p)[e];
    }
    f(in, out);
    for (int32_t o = 0; o < nout && o < 2; ++o) {
      void* p = ops_data(kc_kernel_ctx_get_output(ctx, o));
      if (f32) {
        ((float*)p)[e] = (float)out[o];
      } else {
        ((double*)p)[e] = out[o];
      }
    }
  }
  return NULL;
}

static void softplus_value(const double* in, double* out) {
  out[0] = softplus(in[0]);
}
/* (x, dy) -> dx = dy s(x) */
static void softplus_grad_value(const double* in, double* out) {
  out[0] = in[1] * logistic(in[0]);
}
/* (x, dy, g) -> (g dy s'(x), g s(x)) */
static void softplus_grad_grad_value(const double* in, double* out) {
  double s = logistic(in[0]);
  out[0] = in[2] * in[1] * s * (1 - s);
  out[1] = in[2] * s;
}

/* (x, dy, tx, tdy) -> tdx = tdy s(x) + dy s'(x) tx, SoftplusGrad's tangent */
static void softplus_grad_jvp_value(const double* in, double* out) {
  double s = logistic(in[0]);
  out[0] = in[3] * s + in[1] * s * (1 - s) * in[2];
}

static kc_status* softplus_compute(void* kernel, kc_kernel_ctx* ctx) {
  (void)kernel;
  return softplus_each(ctx, softplus_value);
}
static kc_status* softplus_grad_compute(void* kernel, kc_kernel_ctx* ctx) {
  (void)kernel;
  return softplus_each(ctx, softplus_grad_value);
}
static kc_status* softplus_grad_grad_compute(void* kernel, kc_kernel_ctx* ctx) {
  (void)kernel;
  return softplus_each(ctx, softplus_grad_grad_value);
}
static kc_status* softplus_grad_jvp_compute(void* kernel, kc_kernel_ctx* ctx) {
  (void)kernel;
  return softplus_each(ctx, softplus_grad_jvp_value);
}

/* ======================================================================== */
/* Concat                                                                   */
/* ======================================================================== */

static kc_status* concat_shape(kc_shape_ctx* ctx) {
  int64_t axis = 0;
  kc_status* st =
      kc_op_attrs_get_int(kc_shape_ctx_get_attrs(ctx), "axis", &axis);
  const kc_shape_handle* first = kc_shape_ctx_get_input(ctx, 0);
  int32_t rank = kc_shape_handle_get_rank(first);
  if (st) return st;
  if (rank < 1) {
    return ops_error(KC_INVALID_ARGUMENT, "Concat",
                     "inputs must have rank >= 1 (known)");
  }
  if (axis < -rank || axis >= rank) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "Concat: axis %lld is out of range for rank "
                            "%d",
                            (long long)axis, rank);
  }
  int32_t ax = (int32_t)(axis < 0 ? axis + rank : axis);
  int64_t dims[OPS_MAX_RANK];
  for (int32_t d = 0; d < rank; ++d)
    dims[d] = kc_shape_handle_get_dim(first, d);
  for (int32_t i = 1; !st && i < kc_shape_ctx_get_input_count(ctx); ++i) {
    const kc_shape_handle* s = NULL;
    st = kc_shape_ctx_with_rank(ctx, kc_shape_ctx_get_input(ctx, i), rank, &s);
    for (int32_t d = 0; !st && d < rank; ++d) {
      int64_t di = kc_shape_handle_get_dim(s, d);
      st = d == ax ? kc_shape_ctx_add_dims(ctx, dims[d], di, &dims[d])
                   : kc_shape_ctx_merge_dim(ctx, dims[d], di, &dims[d]);
    }
    if (st) {
      st = kc_status_add_context(st, "Concat: input %d against input 0", i);
    }
  }
  const kc_shape_handle* out = NULL;
  if (!st) st = kc_shape_ctx_make_shape(ctx, rank, dims, &out);
  if (!st) st = kc_shape_ctx_set_output(ctx, 0, out);
  return st;
}

static kc_status* concat_compute(void* kernel, kc_kernel_ctx* ctx) {
  (void)kernel;
  DLTensor* out = kc_kernel_ctx_get_output(ctx, 0);
  int64_t axis = 0;
  kc_status* st =
      kc_op_attrs_get_int(kc_kernel_ctx_get_attrs(ctx), "axis", &axis);
  if (st) return st;
  int32_t ax = (int32_t)(axis < 0 ? axis + out->ndim : axis);
  /* Each input is `outer` chunks of (its axis dim * inner) elements,
   * interleaved into the output. */
  int64_t outer = 1, inner = 1;
  for (int32_t d = 0; d < ax; ++d) outer *= out->shape[d];
  for (int32_t d = ax + 1; d < out->ndim; ++d) inner *= out->shape[d];
  size_t elem = ops_dtype_size(out->dtype);
  size_t row = (size_t)(out->shape[ax] * inner) * elem;
  char* dst = ops_data(out);
  size_t offset = 0;
  for (int32_t i = 0; i < kc_kernel_ctx_get_input_count(ctx); ++i) {
    const DLTensor* in = kc_kernel_ctx_get_input(ctx, i);
    size_t chunk = (size_t)(in->shape[ax] * inner) * elem;
    const char* src = ops_data(in);
    for (int64_t o = 0; o < outer; ++o) {
      memcpy(dst + (size_t)o * row + offset, src + (size_t)o * chunk, chunk);
    }
    offset += chunk;
  }
  return NULL;
}

/* ======================================================================== */
/* Counter                                                                  */
/* ======================================================================== */
/* Returns start, start + step, start + 2 step, ... one per call. The count
 * lives in the kernel instance, which the runtime creates once per (start,
 * step) and deletes with the op: state with a lifetime, shown. */

typedef struct counter {
  int64_t next; /* atomic: calls may run on several threads at once */
  int64_t step;
} counter;

static kc_status* counter_shape(kc_shape_ctx* ctx) {
  const kc_shape_handle* scalar = NULL;
  kc_status* st = kc_shape_ctx_make_shape(ctx, 0, NULL, &scalar);
  if (!st) st = kc_shape_ctx_set_output(ctx, 0, scalar);
  return st;
}

static kc_status* counter_create(kc_kernel_construct_ctx* ctx, void** out) {
  const kc_op_attrs* attrs = kc_kernel_construct_ctx_get_attrs(ctx);
  counter* c = malloc(sizeof *c);
  if (!c) return ops_error(KC_RESOURCE_EXHAUSTED, "Counter", "out of memory");
  kc_status* st = kc_op_attrs_get_int(attrs, "start", &c->next);
  if (!st) st = kc_op_attrs_get_int(attrs, "step", &c->step);
  if (st) {
    free(c);
    return st;
  }
  *out = c;
  return NULL;
}

static kc_status* counter_compute(void* kernel, kc_kernel_ctx* ctx) {
  counter* c = kernel;
  int64_t* out = ops_data(kc_kernel_ctx_get_output(ctx, 0));
  *out = __atomic_fetch_add(&c->next, c->step, __ATOMIC_RELAXED);
  return NULL;
}

/* ======================================================================== */
/* Registration                                                             */
/* ======================================================================== */

static kc_status* ops_init(const kc_host_api* host) {
  /* KC_PLUGIN_ENTRY gave <kcall/plugin_api.h> the table. The builder's _v2
   * calls are API 1.1 (feature "op_builder_v2", required below). */
  (void)host;
  const DLDataType f32 = {kDLFloat, 32, 1};
  const DLDataType add_types[3] = {f32, {kDLFloat, 64, 1}, {kDLInt, 32, 1}};
  kc_status* st = ops_define(
      "Bitcast", OPS_LIST("input: T"), OPS_LIST("output: type"),
      OPS_LIST("T: {numeric, bool}", "type: {numeric, bool}"),
      KC_OP_SYMBOLIC_SHAPES,
      "Reinterprets the bytes of `input` as `type`, without copying values "
      "(the shape gains or loses a last dim when the sizes differ).",
      bitcast_shape);
  if (!st)
    st = ops_kernel("Bitcast", NULL, bitcast_compute, NULL, NULL, NULL, 0);
  if (!st) {
    st = ops_define_grad("Add", OPS_LIST("x: T", "y: T"), OPS_LIST("z: T"),
                         OPS_LIST("T: {f32, f64, i32}"),
                         KC_OP_COMMUTATIVE | KC_OP_SYMBOLIC_SHAPES,
                         "z = x + y, broadcasting as NumPy does.",
                         kc_shape_fn_broadcast,
                         "AddGrad(x, y, grad(z)) -> (grad(x), grad(y))",
                         "Add(tangent(x), tangent(y)) -> tangent(z)");
  }
  if (!st) st = ops_kernel("Add", NULL, add_compute, NULL, "T", add_types, 3);
  if (!st) {
    /* Linear in dz, and x and y only give the shapes: its gradient is the
     * two cotangents added back up to dz's shape. */
    st = ops_define_grad("AddGrad", OPS_LIST("x: T", "y: T", "dz: T"),
                         OPS_LIST("dx: T", "dy: T"), OPS_LIST("T: {f32, f64}"),
                         KC_OP_SYMBOLIC_SHAPES,
                         "The gradient of Add: dz summed over the dims each "
                         "input was broadcast along.",
                         kc_shape_fn_like_inputs, "Add(grad(dx), grad(dy)) -> grad(dz)",
                         "AddGrad(x, y, tangent(dz)) -> (tangent(dx), "
                         "tangent(dy))");
  }
  if (!st) st = ops_kernel("AddGrad", NULL, add_grad_compute, NULL, "T", add_types, 2);
  if (!st) {
    st = ops_define_grad("MatMul", OPS_LIST("a: T", "b: T"),
                         OPS_LIST("product: T"), OPS_LIST("T: {f32}"),
                         KC_OP_SYMBOLIC_SHAPES,
                         "The matrix product of a [M, K] and b [K, N], rows "
                         "split across the thread pool.",
                         matmul_shape,
                         "MatMulGrad(a, b, grad(product)) -> (grad(a), grad(b))",
                         "MatMulJvp(a, b, tangent(a), tangent(b)) -> "
                         "tangent(product)");
  }
  if (!st) st = ops_kernel("MatMul", NULL, matmul_compute, NULL, "T", &f32, 1);
  if (!st) {
    st = ops_define("MatMulJvp", OPS_LIST("a: T", "b: T", "ta: T", "tb: T"),
                    OPS_LIST("t: T"), OPS_LIST("T: {f32}"),
                    KC_OP_SYMBOLIC_SHAPES,
                    "The tangent of MatMul: t = ta b + a tb.",
                    matmul_jvp_shape);
  }
  if (!st) {
    st = ops_kernel("MatMulJvp", NULL, matmul_jvp_compute, NULL, "T", &f32, 1);
  }
  if (!st) {
    /* MatMulGrad(a: T, b: T, dproduct: T) -> (da: T, db: T), from
     * MatMul's declaration. */
    st = ops_define_gradient_op("MatMul", "MatMulGrad",
                                "The gradient of MatMul: da = dproduct b^T, "
                                "db = a^T dproduct.");
  }
  if (!st) {
    st = ops_kernel("MatMulGrad", NULL, matmul_grad_compute, NULL, "T", &f32, 1);
  }
  if (!st) {
    st = ops_define_grad("Softplus", OPS_LIST("x: T"), OPS_LIST("y: T"),
                         OPS_LIST("T: {f32, f64}"), 0,
                         "y = log(1 + e^x), a smooth ReLU.",
                         kc_shape_fn_unchanged,
                         "SoftplusGrad(x, grad(y)) -> grad(x)",
                         "SoftplusGrad(x, tangent(x)) -> tangent(y)");
  }
  if (!st) st = ops_kernel("Softplus", NULL, softplus_compute, NULL, "T", add_types, 2);
  if (!st) {
    st = ops_define_grad("SoftplusGrad", OPS_LIST("x: T", "dy: T"),
                         OPS_LIST("dx: T"), OPS_LIST("T: {f32, f64}"), 0,
                         "The gradient of Softplus: dx = dy / (1 + e^-x).",
                         kc_shape_fn_elementwise,
                         "SoftplusGradGrad(x, dy, grad(dx)) -> (grad(x), "
                         "grad(dy))",
                         "SoftplusGradJvp(x, dy, tangent(x), tangent(dy)) -> "
                         "tangent(dx)");
  }
  if (!st) {
    st = ops_kernel("SoftplusGrad", NULL, softplus_grad_compute, NULL, "T",
                    add_types, 2);
  }
  if (!st) {
    st = ops_define("SoftplusGradGrad", OPS_LIST("x: T", "dy: T", "g: T"),
                    OPS_LIST("gx: T", "gdy: T"), OPS_LIST("T: {f32, f64}"), 0,
                    "The gradient of SoftplusGrad.", kc_shape_fn_elementwise);
  }
  if (!st) {
    st = ops_kernel("SoftplusGradGrad", NULL, softplus_grad_grad_compute, NULL,
                    "T", add_types, 2);
  }
  if (!st) {
    st = ops_define("SoftplusGradJvp",
                    OPS_LIST("x: T", "dy: T", "tx: T", "tdy: T"),
                    OPS_LIST("tdx: T"), OPS_LIST("T: {f32, f64}"), 0,
                    "The tangent of SoftplusGrad.", kc_shape_fn_elementwise);
  }
  if (!st) {
    st = ops_kernel("SoftplusGradJvp", NULL, softplus_grad_jvp_compute, NULL,
                    "T", add_types, 2);
  }
  if (!st) {
    st = ops_define("Concat", OPS_LIST("values: N * T"), OPS_LIST("output: T"),
                    OPS_LIST("N: int >= 1", "T: type", "axis: int = 0"),
                    KC_OP_SYMBOLIC_SHAPES,
                    "Joins N tensors along `axis` (negative counts from the "
                    "end); the other dims must match.",
                    concat_shape);
  }
  if (!st) st = ops_kernel("Concat", NULL, concat_compute, NULL, NULL, NULL, 0);
  if (!st) {
    st = ops_define("Counter", NULL, OPS_LIST("count: i64"),
                    OPS_LIST("start: int = 0", "step: int = 1"), KC_OP_STATEFUL,
                    "Returns start, start + step, ... one more each call.",
                    counter_shape);
  }
  if (!st) {
    st = ops_kernel("Counter", counter_create, counter_compute, free, NULL,
                    NULL, 0);
  }
  /* On failure the host discards everything registered above. */
  return st;
}

static const kc_plugin_info kOpsInfo = {
    .struct_size = sizeof(kc_plugin_info),
    .api_major = KC_API_VERSION_MAJOR,
    .api_minor = KC_API_VERSION_MINOR,
    .name = "ops",
    .version = "1.0.0",
    .required_features =
        (const char* const[]){"ops", "kernels", "op_builder_v2", "gradient",
                               "batching", NULL},
    .init = ops_init,
};

KC_PLUGIN_ENTRY(host) {
  (void)host;
  return &kOpsInfo;
}
