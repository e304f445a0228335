/* select-and-scatter, as XLA defines it (the gradient of max pooling):
 * select-and-scatter(operand, source, init), window={...}, select=S,
 * scatter=T. The result, of the operand's shape, starts as init. For each
 * window position (one per source element, in row-major order) S picks
 * one element of the operand under the window: the first one inside the
 * operand (padding is never picked), replaced by each later one e while
 * S(picked, e) is false. T then combines the source element into the
 * result at the picked position: result = T(source, result), in XLA's
 * order of arguments. A window over padding alone scatters nothing.
 *
 * A selector that is one compare of its two parameters (in order) and a
 * scatter that is one add, multiply, maximum or minimum of them run as
 * native loops (JAX's max pooling gradient: compare GE, add); any other
 * computation runs per element. */
#include <stdio.h>
#include <stdlib.h>

#include "internal/common.h"
#include "kernels/xla_arith.h"
#include "program/instr/instr.h"

#define KC__SAS_MAX_RANK KC_TENSOR_MAX_NDIM

enum { KC__SAS_GE = 1, KC__SAS_GT, KC__SAS_LE, KC__SAS_LT, KC__SAS_EQ, KC__SAS_NE };

typedef struct kc__sas_plan {
  int32_t rank;
  int64_t dims[KC__SAS_MAX_RANK], src_dims[KC__SAS_MAX_RANK];
  int64_t size[KC__SAS_MAX_RANK], stride[KC__SAS_MAX_RANK], low[KC__SAS_MAX_RANK];
  int64_t in_stride[KC__SAS_MAX_RANK];
  int64_t count, src_count, window_count;
  size_t esize;
  int type;
  int32_t cmp;      /* a native selector's direction (KC__SAS_*), else 0 */
  bool totalorder;  /* the native selector compares floats in XLA's total order */
  int32_t scatter;  /* a native scatter's op, else 0 */
  kc_executable* select_exe;
  kc_executable* scatter_exe;
  const kc_shape* scalar;
} kc__sas_plan;

/* The op of a computation that is `op(p0, p1)` of its two scalar
 * parameters in that order; 0 otherwise. */
static const kc__instr* kc__sas_simple_root(const kc_program* r) {
  if (kc_program_get_parameter_count(r) != 2 || r->count != 3) return NULL;
  const kc__instr* root = &r->instrs[r->root];
  if (root->num_operands != 2) return NULL;
  const kc__instr* a = &r->instrs[root->operands[0]];
  const kc__instr* b = &r->instrs[root->operands[1]];
  bool params = a->op == KC__OP_PARAMETER && b->op == KC__OP_PARAMETER && a->number == 0 &&
                b->number == 1;
  return params ? root : NULL;
}

static void kc__sas_native(const kc__instr* in, kc__sas_plan* plan) {
  plan->cmp = 0;
  plan->scatter = 0;
  if (plan->type == KC__E_NONE || plan->type == KC__E_pred) return;
  const kc__instr* sel = kc__sas_simple_root(in->computations[0]);
  if (sel && sel->op == KC_OP_COMPARE) {
    kc_string_view dir = {NULL, 0}, type = {NULL, 0};
    const kc_attr* d = kc__instr_attr(sel, "direction");
    const kc_attr* t = kc__instr_attr(sel, "type");
    if (d && d->type == KC_ATTR_STRING) dir = d->v.str;
    if (t && t->type == KC_ATTR_STRING) type = t->v.str;
    static const char* const dirs[] = {"GE", "GT", "LE", "LT", "EQ", "NE"};
    for (int32_t i = 0; i < 6; ++i) {
      if (kc_sv_equal(dir, kc_sv(dirs[i]))) plan->cmp = i + 1;
    }
    bool is_float = plan->type == KC__E_f32 || plan->type == KC__E_f64;
    plan->totalorder = is_float && kc_sv_equal(type, KC_SV_LIT("TOTALORDER"));
    bool type_ok = !t || plan->totalorder ||
                   (is_float ? kc_sv_equal(type, KC_SV_LIT("FLOAT"))
                             : (plan->type <= KC__E_s64 && plan->type >= KC__E_s8
                                    ? kc_sv_equal(type, KC_SV_LIT("SIGNED"))
                                    : kc_sv_equal(type, KC_SV_LIT("UNSIGNED"))));
    if (!type_ok) plan->cmp = 0;
  }
  const kc__instr* sc = kc__sas_simple_root(in->computations[1]);
  if (sc && (sc->op == KC_OP_ADD || sc->op == KC_OP_MULTIPLY || sc->op == KC_OP_MAXIMUM ||
             sc->op == KC_OP_MINIMUM)) {
    plan->scatter = sc->op;
  }
}

/* The optional window attribute `name`: `rank` entries of min..max, else
 * `fill` each. */
static kc_status* kc__sas_window(const kc__instr* in, const char* name, const char* key,
                                 int32_t rank, int64_t fill, int64_t min, int64_t max,
                                 int64_t* out) {
  const int64_t* v;
  size_t n;
  KC_RETURN_IF_ERROR(kc__instr_attr_ints(in, name, true, &v, &n));
  if (n != 0 && n != (size_t)rank) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "window %s: expected %d entries (the operand's rank), got %zu", key,
                           rank, n);
  }
  for (int32_t d = 0; d < rank; ++d) {
    out[d] = n ? v[d] : fill;
    if (out[d] < min || out[d] > max) {
      char want[64];
      if (min == max) {
        snprintf(want, sizeof want, "%lld (select-and-scatter has no dilation)",
                 (long long)min);
      } else {
        snprintf(want, sizeof want, "at least %lld", (long long)min);
      }
      return kc__instr_error(in, KC_INVALID_ARGUMENT, "window %s: entry %d: expected %s, got %lld",
                             key, d, want, (long long)out[d]);
    }
  }
  return NULL;
}

static kc_status* kc__sas_read(const kc_program* p, const kc__instr* in, kc__sas_plan* plan) {
  const kc_shape* x = kc__instr_operand(p, in, 0);
  const kc_shape* src = kc__instr_operand(p, in, 1);
  const kc_shape* init = kc__instr_operand(p, in, 2);
  KC_RETURN_IF_ERROR(kc__instr_expect_array(in, x, "operand 0"));
  KC_RETURN_IF_ERROR(kc__instr_expect_array(in, src, "operand 1 (the source)"));
  KC_RETURN_IF_ERROR(kc__instr_expect_array(in, in->shape, "the result"));
  DLDataType t = kc_shape_get_dtype(x);
  char buf[32], g[256], w[256];
  if (kc_shape_is_tuple(init) || kc_shape_get_rank(init) != 0 ||
      !kc_dtype_equal(kc_shape_get_dtype(init), t)) {
    kc_shape_format(init, g, sizeof g);
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "operand 2 (the initial value): expected %s[], got %s",
                           kc__instr_dtype_text(t, buf, sizeof buf), g);
  }
  if (!kc_shape_equal(in->shape, x)) {
    kc_shape_format(x, w, sizeof w);
    kc_shape_format(in->shape, g, sizeof g);
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "expected a result of the operand's shape %s, got %s", w, g);
  }
  int32_t rank = plan->rank = kc_shape_get_rank(x);
  const int64_t* size;
  size_t n;
  KC_RETURN_IF_ERROR(kc__instr_attr_ints(in, "window_dimensions", false, &size, &n));
  if (n != (size_t)rank) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "window size: expected %d entries (the operand's rank), got %zu",
                           rank, n);
  }
  int64_t high[KC__SAS_MAX_RANK], dil[KC__SAS_MAX_RANK];
  KC_RETURN_IF_ERROR(
      kc__sas_window(in, "window_dimensions", "size", rank, 1, 1, INT64_MAX, plan->size));
  KC_RETURN_IF_ERROR(
      kc__sas_window(in, "window_strides", "stride", rank, 1, 1, INT64_MAX, plan->stride));
  KC_RETURN_IF_ERROR(kc__sas_window(in, "padding_low", "pad", rank, 0, 0, INT64_MAX, plan->low));
  KC_RETURN_IF_ERROR(kc__sas_window(in, "padding_high", "pad", rank, 0, 0, INT64_MAX, high));
  KC_RETURN_IF_ERROR(kc__sas_window(in, "base_dilations", "lhs_dilate", rank, 1, 1, 1, dil));
  KC_RETURN_IF_ERROR(kc__sas_window(in, "window_dilations", "rhs_dilate", rank, 1, 1, 1, dil));
  int64_t want[KC__SAS_MAX_RANK];
  plan->count = plan->src_count = plan->window_count = 1;
  int64_t s = 1;
  for (int32_t d = rank - 1; d >= 0; --d) {
    plan->in_stride[d] = s;
    s *= kc_shape_get_dims(x)[d];
  }
  for (int32_t d = 0; d < rank; ++d) {
    plan->dims[d] = kc_shape_get_dims(x)[d];
    int64_t padded = plan->dims[d] + plan->low[d] + high[d];
    want[d] = padded < plan->size[d] ? 0 : (padded - plan->size[d]) / plan->stride[d] + 1;
    plan->src_dims[d] = want[d];
    plan->count *= plan->dims[d];
    plan->src_count *= want[d];
    plan->window_count *= plan->size[d];
  }
  bool ok = kc_dtype_equal(kc_shape_get_dtype(src), t) && kc_shape_get_rank(src) == rank &&
            (rank == 0 || memcmp(kc_shape_get_dims(src), want, (size_t)rank * sizeof *want) == 0);
  if (!ok) {
    kc_shape* ws = NULL;
    KC_RETURN_IF_ERROR(kc_shape_create_array(t, want, rank, &ws));
    kc_shape_format(ws, w, sizeof w);
    kc_shape_destroy(ws);
    kc_shape_format(src, g, sizeof g);
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "operand 1 (the source): expected %s (one element per window "
                           "position), got %s",
                           w, g);
  }
  static const char* const roles[2] = {"select", "scatter"};
  for (int k = 0; k < 2; ++k) {
    const kc_program* c = in->computations[k];
    const kc_shape* res = kc_program_get_result_shape(c);
    bool res_ok = k == 1 ? kc_shape_equal(res, init)
                         : !kc_shape_is_tuple(res) && kc_shape_get_rank(res) == 0 &&
                               kc_shape_get_dtype(res).code == kDLBool;
    bool params = kc_program_get_parameter_count(c) == 2 &&
                  kc_shape_equal(kc_program_get_parameter_shape(c, 0), init) &&
                  kc_shape_equal(kc_program_get_parameter_shape(c, 1), init);
    if (!params || !res_ok) {
      kc_shape_format(res, g, sizeof g);
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                             "%s '%s': expected two %s[] parameters and a %s[] result (got a "
                             "result of %s and %zu parameters)",
                             roles[k], kc_program_get_name(c),
                             kc__instr_dtype_text(t, buf, sizeof buf), k == 0 ? "pred" : buf, g,
                             kc_program_get_parameter_count(c));
    }
  }
  plan->scalar = init;
  plan->esize = kc_dtype_get_size(t);
  plan->type = kc__instr_num_type(t);
  kc__sas_native(in, plan);
  return NULL;
}

static kc_status* kc__sas_verify(const kc_program* p, const kc__instr* in) {
  kc__sas_plan* plan = kc__calloc(1, sizeof *plan);
  if (!plan) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  kc_status* st = kc__sas_read(p, in, plan);
  kc__free(plan);
  return st;
}

static void kc__sas_plan_free(void* thing) {
  kc__sas_plan* plan = thing;
  kc_executable_destroy(plan->select_exe);
  kc_executable_destroy(plan->scatter_exe);
  kc__free(plan);
}

static kc_status* kc__sas_prepare(const kc_program* p, const kc__instr* in,
                                  const kc__prepare_ctx* ctx, const void** out) {
  kc__sas_plan* plan = kc__calloc(1, sizeof *plan);
  if (!plan) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  kc_status* st = kc__sas_read(p, in, plan);
  if (!st && plan->cmp == 0) st = kc__prepare_compile(ctx, in->computations[0], &plan->select_exe);
  if (!st && plan->scatter == 0) {
    st = kc__prepare_compile(ctx, in->computations[1], &plan->scatter_exe);
  }
  if (st) {
    kc__sas_plan_free(plan);
    return st;
  }
  KC_RETURN_IF_ERROR(kc__executable_own_state(ctx->exe, plan, kc__sas_plan_free));
  *out = plan;
  return NULL;
}

/* ---- native selectors and scatters ---------------------------------------------------- */

/* XLA's total order of floats as a signed key: -NaN < -inf < ... < -0 < +0
 * < ... < inf < NaN. */
static int64_t kc__sas_key_f64(double v) {
  int64_t bits;
  memcpy(&bits, &v, sizeof bits);
  return bits < 0 ? bits ^ INT64_MAX : bits;
}

#define KC__SAS_NATIVE(sfx, ctype, code, bits)                                                \
  static bool kc__sas_keep_##sfx(const kc__sas_plan* plan, ctype a, ctype b) {               \
    if (plan->totalorder) {                                                                  \
      int64_t ka = kc__sas_key_f64((double)a), kb = kc__sas_key_f64((double)b);              \
      switch (plan->cmp) {                                                                   \
        case KC__SAS_GE: return ka >= kb;                                                    \
        case KC__SAS_GT: return ka > kb;                                                     \
        case KC__SAS_LE: return ka <= kb;                                                    \
        case KC__SAS_LT: return ka < kb;                                                     \
        case KC__SAS_EQ: return ka == kb;                                                    \
        default: return ka != kb;                                                            \
      }                                                                                      \
    }                                                                                        \
    switch (plan->cmp) {                                                                     \
      case KC__SAS_GE: return a >= b;                                                        \
      case KC__SAS_GT: return a > b;                                                         \
      case KC__SAS_LE: return a <= b;                                                        \
      case KC__SAS_LT: return a < b;                                                         \
      case KC__SAS_EQ: return a == b;                                                        \
      default: return a != b;                                                                \
    }                                                                                        \
  }                                                                                          \
  static ctype kc__sas_apply_##sfx(int32_t op, ctype a, ctype b) {                           \
    switch (op) {                                                                            \
      case KC_OP_ADD:                                                                        \
        return KC__XLA_ADD(code, ctype, a, b);                                               \
      case KC_OP_MULTIPLY:                                                                   \
        return KC__XLA_MUL(code, ctype, a, b);                                               \
      case KC_OP_MAXIMUM: return KC__XLA_MAX(a, b);                                          \
      default: return KC__XLA_MIN(a, b);                                                     \
    }                                                                                        \
  }
KC__ETYPES(KC__SAS_NATIVE)
#undef KC__SAS_NATIVE

/* Whether select(a, b) keeps a. */
static kc_status* kc__sas_keep(const kc__sas_plan* plan, const void* a, const void* b,
                               bool* keep) {
  if (plan->cmp) {
    switch (plan->type) {
#define KC__SAS_KEEP_CASE(sfx, ctype, code, bits)                      \
  case KC__E_##sfx: {                                               \
    ctype va, vb;                                                      \
    memcpy(&va, a, sizeof va);                                         \
    memcpy(&vb, b, sizeof vb);                                         \
    *keep = kc__sas_keep_##sfx(plan, va, vb);                          \
    return NULL;                                                       \
  }
      KC__ETYPES(KC__SAS_KEEP_CASE)
#undef KC__SAS_KEEP_CASE
      default:
        break;
    }
  }
  DLTensor args[2];
  const DLTensor* ptrs[2] = {&args[0], &args[1]};
  memset(args, 0, sizeof args);
  const void* data[2] = {a, b};
  for (int i = 0; i < 2; ++i) {
    args[i].device.device_type = kDLCPU;
    args[i].dtype = kc_shape_get_dtype(plan->scalar);
    args[i].data = (void*)(uintptr_t)data[i];
  }
  kc_tensor* r = NULL;
  kc_status* st = kc_executable_execute(plan->select_exe, ptrs, 2, NULL, &r);
  if (st) return kc_status_add_context(st, "in the select computation");
  *keep = *(const uint8_t*)kc_tensor_get_dltensor(r)->data != 0;
  kc_object_release(KC_OBJECT(r));
  return NULL;
}

/* acc = scatter(x, acc): the source element first, as XLA calls it. */
static kc_status* kc__sas_scatter(const kc__sas_plan* plan, void* acc, const void* x) {
  if (plan->scatter) {
    switch (plan->type) {
#define KC__SAS_SCATTER_CASE(sfx, ctype, code, bits)                 \
  case KC__E_##sfx: {                                             \
    ctype va, vb;                                                    \
    memcpy(&va, acc, sizeof va);                                     \
    memcpy(&vb, x, sizeof vb);                                       \
    va = kc__sas_apply_##sfx(plan->scatter, va, vb);                 \
    memcpy(acc, &va, sizeof va);                                     \
    return NULL;                                                     \
  }
      KC__ETYPES(KC__SAS_SCATTER_CASE)
#undef KC__SAS_SCATTER_CASE
      default:
        break;
    }
  }
  DLTensor args[2];
  const DLTensor* ptrs[2] = {&args[0], &args[1]};
  memset(args, 0, sizeof args);
  const void* data[2] = {x, acc};
  for (int i = 0; i < 2; ++i) {
    args[i].device.device_type = kDLCPU;
    args[i].dtype = kc_shape_get_dtype(plan->scalar);
    args[i].data = (void*)(uintptr_t)data[i];
  }
  kc_tensor* r = NULL;
  kc_status* st = kc_executable_execute(plan->scatter_exe, ptrs, 2, NULL, &r);
  if (st) return kc_status_add_context(st, "in the scatter computation");
  memcpy(acc, kc_tensor_get_dltensor(r)->data, plan->esize);
  kc_object_release(KC_OBJECT(r));
  return NULL;
}

/* The fast path for f32 with a native selector and add: no calls per
 * element. */
static void kc__sas_f32_add(const kc__sas_plan* plan, const float* x, const float* src,
                            float* out) {
  int32_t rank = plan->rank;
  int64_t s_idx[KC__SAS_MAX_RANK] = {0};
  for (int64_t s = 0; s < plan->src_count; ++s) {
    int64_t w_idx[KC__SAS_MAX_RANK] = {0};
    int64_t best = -1;
    float bv = 0;
    for (int64_t w = 0; w < plan->window_count; ++w) {
      int64_t off = 0;
      bool inside = true;
      for (int32_t d = 0; d < rank && inside; ++d) {
        int64_t pos = s_idx[d] * plan->stride[d] + w_idx[d] - plan->low[d];
        inside = pos >= 0 && pos < plan->dims[d];
        off += pos * plan->in_stride[d];
      }
      if (inside && (best < 0 || !kc__sas_keep_f32(plan, bv, x[off]))) {
        best = off;
        bv = x[off];
      }
      for (int32_t d = rank - 1; d >= 0; --d) {
        if (++w_idx[d] < plan->size[d]) break;
        w_idx[d] = 0;
      }
    }
    if (best >= 0) out[best] += src[s];
    for (int32_t d = rank - 1; d >= 0; --d) {
      if (++s_idx[d] < plan->src_dims[d]) break;
      s_idx[d] = 0;
    }
  }
}

static kc_status* kc__sas_kernel(const kc__instr_kernel_ctx* ctx, void* out,
                                 const void* const* ins) {
  const kc__sas_plan* plan = ctx->data;
  int32_t rank = plan->rank;
  size_t es = plan->esize;
  const char* x = ins[0];
  const char* src = ins[1];
  for (int64_t i = 0; i < plan->count; ++i) memcpy((char*)out + (size_t)i * es, ins[2], es);
  if (plan->type == KC__E_f32 && plan->cmp && plan->scatter == KC_OP_ADD) {
    kc__sas_f32_add(plan, ins[0], ins[1], out);
    return NULL;
  }
  int64_t s_idx[KC__SAS_MAX_RANK] = {0};
  for (int64_t s = 0; s < plan->src_count; ++s) {
    int64_t w_idx[KC__SAS_MAX_RANK] = {0};
    int64_t best = -1;
    for (int64_t w = 0; w < plan->window_count; ++w) {
      int64_t off = 0;
      bool inside = true;
      for (int32_t d = 0; d < rank && inside; ++d) {
        int64_t pos = s_idx[d] * plan->stride[d] + w_idx[d] - plan->low[d];
        inside = pos >= 0 && pos < plan->dims[d];
        off += pos * plan->in_stride[d];
      }
      if (inside) {
        bool keep = false;
        if (best >= 0) {
          KC_RETURN_IF_ERROR(
              kc__sas_keep(plan, x + (size_t)best * es, x + (size_t)off * es, &keep));
        }
        if (!keep) best = off;
      }
      for (int32_t d = rank - 1; d >= 0; --d) {
        if (++w_idx[d] < plan->size[d]) break;
        w_idx[d] = 0;
      }
    }
    if (best >= 0) {
      KC_RETURN_IF_ERROR(
          kc__sas_scatter(plan, (char*)out + (size_t)best * es, src + (size_t)s * es));
    }
    for (int32_t d = rank - 1; d >= 0; --d) {
      if (++s_idx[d] < plan->src_dims[d]) break;
      s_idx[d] = 0;
    }
  }
  return NULL;
}

static const char* const kc__sas_attrs[] = {"window_dimensions", "window_strides",
                                            "padding_low",       "padding_high",
                                            "base_dilations",    "window_dilations",
                                            NULL};
static const char* const kc__sas_computations[] = {"select", "scatter", NULL};

const kc__instr_def kc__instr_select_scatter[] = {
    {.op = KC_OP_SELECT_AND_SCATTER, .name = "select-and-scatter", .min_operands = 3,
     .max_operands = 3, .num_computations = 2, .attrs = kc__sas_attrs,
     .computation_attrs = kc__sas_computations, .verify = kc__sas_verify,
     .prepare = kc__sas_prepare, .kernel = kc__sas_kernel},
};
const size_t kc__instr_select_scatter_count = KC__ARRAY_SIZE(kc__instr_select_scatter);
