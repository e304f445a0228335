/* dot: any batch and contracting dimensions. Both operands are brought to
 * [batch, rows, contracted] and [batch, contracted, columns] (copied only
 * when they are not already so; for f32, [batch, contracted, rows] and
 * [batch, columns, contracted] are read in place too), then multiplied:
 * f32 by the blocked GEMM of gemm_f32.c on the thread pool, all batch
 * elements in one parallel job, other types by plain loops.
 *
 * The products accumulate in the compute type: the result's, or f32 for
 * an f16 or bf16 result (rounded once at the end, as XLA:CPU does).
 * Operands of another type than the compute type (s8 x s8 -> s32, bf16 x
 * bf16 -> f32, JAX's preferred_element_type) are converted to it first,
 * which is exact for every pair accepted. */
#include <complex.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal/common.h"
#include "program/instr/elementwise.h"
#include "kernels/gemm_f32.h"
#include "program/instr/instr.h"
#include "program/instr/instr_types.h"

#define KC__DOT_MAX_RANK KC_TENSOR_MAX_NDIM

typedef struct kc__dot_plan {
  DLDataType dtype; /* the compute type */
  size_t esize;     /* its size */
  DLDataType lhs_type, rhs_type, result_type;
  int64_t batch, m, n, k;
  /* Copies of the operands into the canonical order, or rank -1 where
   * the operand is in that order already. */
  kc__box lhs_box, rhs_box;
  /* f32 only: the operand is in the order batch, contracted, free (lhs)
   * or batch, free, contracted (rhs), which the GEMM packs from in place
   * (its box then has rank -1). */
  bool lhs_trans, rhs_trans;
  /* The f32 micro-kernel (NULL for other types). */
  const kc__gemm_f32_kernel* kernel;
} kc__dot_plan;

/* ---- checking -------------------------------------------------------------------- */

static kc_status* kc__dims_list(const kc__instr* in, const char* name, int32_t rank,
                                bool* used, const int64_t** out, size_t* out_count) {
  KC_RETURN_IF_ERROR(kc__instr_attr_ints(in, name, true, out, out_count));
  for (size_t i = 0; i < *out_count; ++i) {
    int64_t d = (*out)[i];
    if (d < 0 || d >= rank || used[d]) {
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                        "attribute %s: entry %zu: expected a dimension of 0 to %d not named "
                        "before, got %lld",
                        name, i, rank - 1, (long long)d);
    }
    used[d] = true;
  }
  return NULL;
}

/* The box that copies `s` into the order batch dims, free dims, then
 * contracted dims (contracted_last) or batch, contracted, free; rank -1
 * when that order is the operand's own. */
static void kc__canonical_box(const kc_shape* s, const int64_t* batch, size_t nb,
                              const int64_t* contracted, size_t nc, const bool* used,
                              bool contracted_last, kc__box* box) {
  int32_t rank = kc_shape_get_rank(s);
  int64_t order[KC__DOT_MAX_RANK];
  int32_t n = 0;
  for (size_t i = 0; i < nb; ++i) order[n++] = batch[i];
  if (!contracted_last) {
    for (size_t i = 0; i < nc; ++i) order[n++] = contracted[i];
  }
  for (int32_t d = 0; d < rank; ++d) {
    if (!used[d]) order[n++] = d;
  }
  if (contracted_last) {
    for (size_t i = 0; i < nc; ++i) order[n++] = contracted[i];
  }
  bool identity = true;
  for (int32_t i = 0; i < rank; ++i) identity = identity && order[i] == i;
  memset(box, 0, sizeof *box);
  if (identity) {
    box->rank = -1;
    return;
  }
  int64_t in_stride[KC__DOT_MAX_RANK];
  kc__instr_strides(s, in_stride);
  box->rank = rank;
  int64_t stride = 1;
  for (int32_t i = rank - 1; i >= 0; --i) {
    box->dims[i] = kc_shape_get_dims(s)[order[i]];
    box->src_stride[i] = in_stride[order[i]];
    box->dst_stride[i] = stride;
    stride *= box->dims[i];
  }
}

/* The type a result of type `t` accumulates in (f32 for f16 and bf16),
 * or false when dot does not give `t`. */
static bool kc__dot_compute_type(DLDataType t, DLDataType* out) {
  if (t.lanes != 1) return false;
  bool sized = t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64;
  switch (t.code) {
    case kDLInt:
    case kDLUInt: *out = t; return sized;
    case kDLFloat:
      if (t.bits == 16) break;
      *out = t;
      return t.bits == 32 || t.bits == 64;
    case kDLBfloat:
      if (t.bits == 16) break;
      return false;
    case kDLComplex: *out = t; return t.bits == 64 || t.bits == 128;
    default: return false;
  }
  *out = (DLDataType){kDLFloat, 32, 1};
  return true;
}

/* Whether every value of an operand type `o` is exact in the compute
 * type `c`. */
static bool kc__dot_operand_fits(DLDataType o, DLDataType c) {
  bool is_int = o.code == kDLInt || o.code == kDLUInt;
  bool is_float = o.code == kDLFloat || o.code == kDLBfloat;
  if (o.lanes != 1 || !(is_int || is_float || o.code == kDLComplex)) return false;
  if (o.bits != 8 && o.bits != 16 && o.bits != 32 && o.bits != 64 && o.bits != 128) {
    return false;
  }
  switch (c.code) {
    case kDLInt:
    case kDLUInt: return is_int && o.bits <= c.bits;
    case kDLFloat: return is_float ? o.bits <= c.bits : is_int && 2 * o.bits <= c.bits;
    default: /* complex: each part is a float of half its bits */
      if (o.code == kDLComplex) return o.bits <= c.bits;
      return is_float ? 2 * o.bits <= c.bits : is_int && 4 * o.bits <= c.bits;
  }
}

static kc_status* kc__dot_read(const kc_program* p, const kc__instr* in, kc__dot_plan* plan) {
  const kc_shape* a = kc__instr_operand(p, in, 0);
  const kc_shape* b = kc__instr_operand(p, in, 1);
  KC_RETURN_IF_ERROR(kc__instr_expect_array(in, a, "operand 0"));
  KC_RETURN_IF_ERROR(kc__instr_expect_array(in, b, "operand 1"));
  KC_RETURN_IF_ERROR(kc__instr_expect_array(in, in->shape, "the result"));
  DLDataType t = kc_shape_get_dtype(in->shape);
  DLDataType compute = t;
  if (!kc__dot_compute_type(t, &compute)) {
    char tr[32];
    return kc__instr_error(in, KC_UNIMPLEMENTED,
                           "dot: result element type %s is not supported (the integer types, "
                           "f16, bf16, f32, f64, c64, c128)",
                           kc__instr_dtype_text(t, tr, sizeof tr));
  }
  for (int i = 0; i < 2; ++i) {
    DLDataType ot = kc_shape_get_dtype(i ? b : a);
    if (!kc__dot_operand_fits(ot, compute)) {
      char to[32], tr[32];
      return kc__instr_error(
          in, KC_UNIMPLEMENTED,
          "dot: operand %d: element type %s does not convert exactly to %s, the type a %s "
          "result accumulates in (integers into integers at least as wide, integers of up "
          "to half the mantissa and floats no wider into floats, either into complex)",
          i, kc__instr_dtype_text(ot, to, sizeof to), kc__instr_dtype_text(compute, tr, sizeof tr),
          kc__instr_dtype_text(t, tr, sizeof tr));
    }
  }
  int32_t ra = kc_shape_get_rank(a), rb = kc_shape_get_rank(b);
  bool used_a[KC__DOT_MAX_RANK] = {false}, used_b[KC__DOT_MAX_RANK] = {false};
  const int64_t *lb, *rbd, *lc, *rc;
  size_t nlb, nrb, nlc, nrc;
  KC_RETURN_IF_ERROR(kc__dims_list(in, "lhs_batch_dims", ra, used_a, &lb, &nlb));
  KC_RETURN_IF_ERROR(kc__dims_list(in, "rhs_batch_dims", rb, used_b, &rbd, &nrb));
  KC_RETURN_IF_ERROR(kc__dims_list(in, "lhs_contracting_dims", ra, used_a, &lc, &nlc));
  KC_RETURN_IF_ERROR(kc__dims_list(in, "rhs_contracting_dims", rb, used_b, &rc, &nrc));
  if (nlb != nrb || nlc != nrc) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                      "expected as many %s dimensions on both sides, got %zu and %zu",
                      nlb != nrb ? "batch" : "contracting", nlb != nrb ? nlb : nlc,
                      nlb != nrb ? nrb : nrc);
  }
  const int64_t* da = kc_shape_get_dims(a);
  const int64_t* db = kc_shape_get_dims(b);
  int64_t dims[KC__DOT_MAX_RANK];
  int32_t nd = 0;
  plan->batch = plan->m = plan->n = plan->k = 1;
  for (size_t i = 0; i < nlb; ++i) {
    if (da[lb[i]] != db[rbd[i]]) {
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                        "batch dimension %zu: lhs dimension %lld has %lld elements, rhs "
                        "dimension %lld has %lld",
                        i, (long long)lb[i], (long long)da[lb[i]], (long long)rbd[i],
                        (long long)db[rbd[i]]);
    }
    dims[nd++] = da[lb[i]];
    plan->batch *= da[lb[i]];
  }
  for (size_t i = 0; i < nlc; ++i) {
    if (da[lc[i]] != db[rc[i]]) {
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                        "contracting dimension %zu: lhs dimension %lld has %lld elements, "
                        "rhs dimension %lld has %lld",
                        i, (long long)lc[i], (long long)da[lc[i]], (long long)rc[i],
                        (long long)db[rc[i]]);
    }
    plan->k *= da[lc[i]];
  }
  for (int32_t d = 0; d < ra; ++d) {
    if (!used_a[d]) {
      dims[nd++] = da[d];
      plan->m *= da[d];
    }
  }
  for (int32_t d = 0; d < rb; ++d) {
    if (!used_b[d]) {
      dims[nd++] = db[d];
      plan->n *= db[d];
    }
  }
  const kc_shape* r = in->shape;
  bool ok = kc_shape_get_rank(r) == nd &&
            (nd == 0 || memcmp(kc_shape_get_dims(r), dims, (size_t)nd * sizeof(int64_t)) == 0);
  if (!ok) {
    kc_shape* want = NULL;
    KC_RETURN_IF_ERROR(kc_shape_create_array(t, dims, nd, &want));
    char w[256], g[256];
    kc_shape_format(want, w, sizeof w);
    kc_shape_format(r, g, sizeof g);
    kc_shape_destroy(want);
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                      "expected a result of %s (batch, lhs free, rhs free dimensions), got %s",
                      w, g);
  }
  plan->dtype = compute;
  plan->esize = kc_dtype_get_size(compute);
  plan->lhs_type = kc_shape_get_dtype(a);
  plan->rhs_type = kc_shape_get_dtype(b);
  plan->result_type = t;
  kc__canonical_box(a, lb, nlb, lc, nlc, used_a, true, &plan->lhs_box);
  kc__canonical_box(b, rbd, nrb, rc, nrc, used_b, false, &plan->rhs_box);
  plan->lhs_trans = plan->rhs_trans = false;
  if (compute.code == kDLFloat && compute.bits == 32) {
    kc__box other;
    if (plan->lhs_box.rank >= 0) {
      kc__canonical_box(a, lb, nlb, lc, nlc, used_a, false, &other);
      if (other.rank < 0) {
        plan->lhs_box = other;
        plan->lhs_trans = true;
      }
    }
    if (plan->rhs_box.rank >= 0) {
      kc__canonical_box(b, rbd, nrb, rc, nrc, used_b, true, &other);
      if (other.rank < 0) {
        plan->rhs_box = other;
        plan->rhs_trans = true;
      }
    }
  }
  return NULL;
}

static kc_status* kc__dot_verify(const kc_program* p, const kc__instr* in) {
  kc__dot_plan plan;
  return kc__dot_read(p, in, &plan);
}

/* The f32 kernel: the CPU's best, or the one KCALL_DOT_KERNEL names
 * ("avx512", "avx2" or "plain"), for tests and comparisons. A name that
 * is unknown or that this CPU cannot run is refused rather than ignored. */
static kc_status* kc__dot_kernel_choose(const kc__instr* in,
                                        const kc__gemm_f32_kernel** out) {
  const char* want = getenv("KCALL_DOT_KERNEL");
  if (!want || !*want) {
    *out = kc__gemm_f32_kernel_best();
    return NULL;
  }
  const kc__gemm_f32_kernel* kernel = kc__gemm_f32_kernel_lookup(want);
  if (!kernel) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                      "KCALL_DOT_KERNEL: expected avx512, avx2 or plain, got %s", KC__QS(want));
  }
  if (!kc__gemm_f32_kernel_supported(kernel)) {
    return kc__instr_error(in, KC_FAILED_PRECONDITION,
                      "KCALL_DOT_KERNEL: this CPU cannot run the %s kernel", want);
  }
  *out = kernel;
  return NULL;
}

static kc_status* kc__dot_prepare(const kc_program* p, const kc__instr* in,
                                  const kc__prepare_ctx* ctx, const void** out) {
  kc__dot_plan* plan = kc__arena_alloc(ctx->arena, sizeof *plan);
  if (!plan) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  KC_RETURN_IF_ERROR(kc__dot_read(p, in, plan));
  if (plan->dtype.code == kDLFloat && plan->dtype.bits == 32) {
    KC_RETURN_IF_ERROR(kc__dot_kernel_choose(in, &plan->kernel));
  }
  *out = plan;
  return NULL;
}

/* ---- other types: plain loops ---------------------------------------------------------- */

#define KC__DOT_LOOP(T, W)                                                            \
  static void kc__gemm_##T(const T* a, const T* b, T* c, int64_t m, int64_t n, int64_t k) { \
    for (int64_t i = 0; i < m; ++i) {                                                  \
      T* row = c + i * n;                                                              \
      for (int64_t j = 0; j < n; ++j) row[j] = 0;                                      \
      for (int64_t p = 0; p < k; ++p) {                                                \
        W x = (W)a[i * k + p];                                                         \
        const T* brow = b + p * n;                                                     \
        for (int64_t j = 0; j < n; ++j) row[j] = (T)((W)row[j] + x * (W)brow[j]);      \
      }                                                                                \
    }                                                                                  \
  }
typedef float _Complex kc__c64;
typedef double _Complex kc__c128;
KC__DOT_LOOP(double, double)
KC__DOT_LOOP(kc__c64, kc__c64)
KC__DOT_LOOP(kc__c128, kc__c128)
KC__DOT_LOOP(uint8_t, uint64_t)
KC__DOT_LOOP(uint16_t, uint64_t)
KC__DOT_LOOP(uint32_t, uint64_t)
KC__DOT_LOOP(uint64_t, uint64_t)
#undef KC__DOT_LOOP

/* n elements from one type to another: f16 and bf16 to and from f32 on
 * the bits (instr_half.c), the rest as convert does. */
static void kc__dot_convert(DLDataType from, DLDataType to, const void* src, void* dst,
                            int64_t n) {
  bool f32_to = to.code == kDLFloat && to.bits == 32;
  bool f32_from = from.code == kDLFloat && from.bits == 32;
  if (kc__type_is_half(from) && f32_to) {
    kc__half_widen(from.code == kDLBfloat, src, dst, n);
  } else if (f32_from && kc__type_is_half(to)) {
    kc__half_narrow(to.code == kDLBfloat, src, dst, n);
  } else {
    kc__elementwise_run(KC_OP_CONVERT, from, to, src, NULL, dst, n);
  }
}

static kc_status* kc__dot_kernel(const kc__instr_kernel_ctx* ctx, void* out,
                                 const void* const* ins) {
  const kc__dot_plan* plan = ctx->data;
  size_t es = plan->esize;
  const char* a = ins[0];
  const char* b = ins[1];
  int64_t a_count = plan->batch * plan->m * plan->k, b_count = plan->batch * plan->k * plan->n;
  int64_t c_count = plan->batch * plan->m * plan->n;
  size_t a_bytes = (size_t)a_count * es, b_bytes = (size_t)b_count * es;
  bool convert_a = !kc_dtype_equal(plan->lhs_type, plan->dtype);
  bool convert_b = !kc_dtype_equal(plan->rhs_type, plan->dtype);
  bool convert_c = !kc_dtype_equal(plan->result_type, plan->dtype);
  /* Scratch: converted operands, each then in canonical order, and the
   * result in the compute type. */
  size_t a_room = (convert_a ? a_bytes : 0) + (plan->lhs_box.rank >= 0 ? a_bytes : 0);
  size_t b_room = (convert_b ? b_bytes : 0) + (plan->rhs_box.rank >= 0 ? b_bytes : 0);
  size_t c_room = convert_c ? (size_t)c_count * es : 0;
  char* scratch = NULL;
  if (a_room + b_room + c_room > 0) {
    scratch = kc__malloc(a_room + b_room + c_room);
    if (!scratch) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory in a dot");
    char* at = scratch;
    if (convert_a) {
      kc__dot_convert(plan->lhs_type, plan->dtype, a, at, a_count);
      a = at;
      at += a_bytes;
    }
    if (plan->lhs_box.rank >= 0) {
      kc__box_copy(&plan->lhs_box, a, at, es);
      a = at;
      at += a_bytes;
    }
    if (convert_b) {
      kc__dot_convert(plan->rhs_type, plan->dtype, b, at, b_count);
      b = at;
      at += b_bytes;
    }
    if (plan->rhs_box.rank >= 0) {
      kc__box_copy(&plan->rhs_box, b, at, es);
      b = at;
      at += b_bytes;
    }
  }
  void* result = convert_c ? scratch + a_room + b_room : out;
  kc_status* st = NULL;
  int64_t m = plan->m, n = plan->n, k = plan->k;
  bool f32 = plan->dtype.code == kDLFloat && plan->dtype.bits == 32;
  if (f32) {
    st = kc__gemm_f32_batched(plan->kernel, (const float*)a, plan->lhs_trans,
                              (const float*)b, plan->rhs_trans, result, plan->batch, m, n, k,
                              ctx->pool);
  }
  for (int64_t i = 0; i < plan->batch && !st && !f32; ++i) {
    const void* ai = a + (size_t)(i * m * k) * es;
    const void* bi = b + (size_t)(i * k * n) * es;
    void* ci = (char*)result + (size_t)(i * m * n) * es;
    if (plan->dtype.code == kDLFloat) {
      kc__gemm_double(ai, bi, ci, m, n, k);
    } else if (plan->dtype.code == kDLComplex && es == 8) {
      kc__gemm_kc__c64(ai, bi, ci, m, n, k);
    } else if (plan->dtype.code == kDLComplex) {
      kc__gemm_kc__c128(ai, bi, ci, m, n, k);
    } else if (es == 1) {
      kc__gemm_uint8_t(ai, bi, ci, m, n, k);
    } else if (es == 2) {
      kc__gemm_uint16_t(ai, bi, ci, m, n, k);
    } else if (es == 4) {
      kc__gemm_uint32_t(ai, bi, ci, m, n, k);
    } else {
      kc__gemm_uint64_t(ai, bi, ci, m, n, k);
    }
  }
  if (!st && convert_c) {
    kc__dot_convert(plan->dtype, plan->result_type, result, out, c_count);
  }
  kc__free(scratch);
  return st;
}

static const char* const kc__dot_attrs[] = {"lhs_batch_dims", "rhs_batch_dims",
                                            "lhs_contracting_dims", "rhs_contracting_dims",
                                            NULL};

const kc__instr_def kc__instr_dot[] = {
    {.op = KC_OP_DOT, .name = "dot", .min_operands = 2, .max_operands = 2, .num_computations = 0,
     .attrs = kc__dot_attrs, .computation_attrs = NULL, .verify = kc__dot_verify,
     .prepare = kc__dot_prepare, .kernel = kc__dot_kernel},
};
const size_t kc__instr_dot_count = KC__ARRAY_SIZE(kc__instr_dot);
