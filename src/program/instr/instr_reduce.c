/* reduce (reduce-window is instr_reduce_window.c): a reducer that is one add, multiply, maximum, minimum, and or or
 * of its two parameters runs as a native loop; any other reducer
 * (variadic ones such as argmax's) runs its computation per element. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/common.h"
#include "program/instr/instr.h"
#include "kernels/reduce.h"
#include "kernels/xla_arith.h"
#include "program/instr/instr_types.h"

#define KC__RED_MAX_RANK KC_TENSOR_MAX_NDIM

typedef struct kc__reduce_plan {
  size_t n;              /* operands reduced together */
  int32_t rank;          /* of the operands */
  int64_t dims[KC__RED_MAX_RANK];
  int64_t out_stride[KC__RED_MAX_RANK]; /* 0 along reduced dimensions */
  int64_t in_count, out_count;
  /* The native loop: the op and type, or op 0 for the general path. */
  int32_t op;
  int type;
  /* f16, bf16, c64 or c128 with a native reducer (instr_types.h), else
   * lanes 0. */
  DLDataType other;
  /* JAX's argmax (1) or argmin (2) reducer of (f32 or f64 values, s32 or
   * s64 indices), folded natively; 0 otherwise. */
  int32_t arg;
  /* The general path: the reducer, compiled. */
  kc_executable* reducer;
  const kc_shape* elem_shapes[2 * 64]; /* scalar shapes: accumulators, then elements */
} kc__reduce_plan;

static const kc_shape* kc__result_leaf(const kc__instr* in, size_t i, size_t n) {
  return n == 1 ? in->shape : kc_shape_get_element(in->shape, i);
}

/* The op of a reducer that is `op(p0, p1)` (or `op(p1, p0)`) of its two
 * scalar parameters, for the ops with a native loop; 0 otherwise. */
int32_t kc__simple_reducer(const kc_program* r) {
  if (kc_program_get_parameter_count(r) != 2 || r->count != 3) return 0;
  const kc__instr* root = &r->instrs[r->root];
  int32_t op = root->op;
  bool native = op == KC_OP_ADD || op == KC_OP_MULTIPLY || op == KC_OP_MAXIMUM ||
                op == KC_OP_MINIMUM || op == KC_OP_AND || op == KC_OP_OR;
  if (!native || root->num_operands != 2) return 0;
  int32_t a = root->operands[0], b = root->operands[1];
  bool params = r->instrs[a].op == KC__OP_PARAMETER && r->instrs[b].op == KC__OP_PARAMETER &&
                r->instrs[a].number != r->instrs[b].number;
  return params ? op : 0;
}

/* The type of an f16, bf16, c64 or c128 reduction whose reducer runs
 * natively in instr_half.c or instr_complex.c (add, multiply, and for the
 * halves maximum and minimum), else lanes 0. */
static DLDataType kc__reduce_other_type(int32_t op, DLDataType t) {
  DLDataType none = {0, 0, 0};
  bool arith = op == KC_OP_ADD || op == KC_OP_MULTIPLY;
  if (kc__type_is_half(t) && (arith || op == KC_OP_MAXIMUM || op == KC_OP_MINIMUM)) return t;
  if (kc__type_is_complex(t) && arith) return t;
  return none;
}

/* acc = op(acc, x) over n elements, folded into acc[0] or element-wise. */
static void kc__reduce_other_row(int32_t op, DLDataType t, void* acc, bool fold, const void* x,
                                 int64_t n) {
  if (kc__type_is_half(t)) {
    kc__half_reduce_row(op, t.code == kDLBfloat, acc, fold, x, n);
  } else {
    kc__complex_reduce_row(op, t.bits == 128, acc, fold, x, n);
  }
}

/* ---- argmax and argmin ------------------------------------------------------- */

static const kc__instr* kc__rat(const kc_program* r, int32_t id) { return &r->instrs[id]; }

static bool kc__rparam(const kc_program* r, int32_t id, int64_t number) {
  const kc__instr* in = kc__rat(r, id);
  return in->op == KC__OP_PARAMETER && in->number == number;
}

/* compare(parameter a, parameter b) in `direction`. */
static bool kc__rcompare(const kc_program* r, int32_t id, const char* direction, int64_t a,
                         int64_t b) {
  const kc__instr* in = kc__rat(r, id);
  if (in->op != KC_OP_COMPARE || in->num_operands != 2) return false;
  const kc_attr* d = kc__instr_attr(in, "direction");
  if (!d || d->type != KC_ATTR_STRING || !kc_sv_equal(d->v.str, kc_sv(direction))) return false;
  return kc__rparam(r, in->operands[0], a) && kc__rparam(r, in->operands[1], b);
}

/* op(x, y) or op(y, x) of two pred instructions: their ids. */
static bool kc__rlogic(const kc_program* r, int32_t id, int32_t op, int32_t* x, int32_t* y) {
  const kc__instr* in = kc__rat(r, id);
  if (in->op != op || in->num_operands != 2) return false;
  *x = in->operands[0];
  *y = in->operands[1];
  return true;
}

/* The reducer JAX writes for argmax (GT) or argmin (LT) of parameters
 * (value a, index a, value b, index b):
 *   keep = a > b (a < b) or a != a
 *   (select(keep, va, vb), select(keep or (va == vb and ia < ib), ia, ib))
 * with the operands of each or and and in either order. */
static bool kc__is_arg_reducer(const kc_program* r, const char* direction) {
  if (kc_program_get_parameter_count(r) != 4) return false;
  const kc__instr* root = kc__rat(r, r->root);
  if (root->op != KC__OP_TUPLE || root->num_operands != 2) return false;
  const kc__instr* sv = kc__rat(r, root->operands[0]);
  const kc__instr* si = kc__rat(r, root->operands[1]);
  if (sv->op != KC_OP_SELECT || si->op != KC_OP_SELECT || sv->num_operands != 3 ||
      si->num_operands != 3 || !kc__rparam(r, sv->operands[1], 0) ||
      !kc__rparam(r, sv->operands[2], 2) || !kc__rparam(r, si->operands[1], 1) ||
      !kc__rparam(r, si->operands[2], 3)) {
    return false;
  }
  int32_t keep = sv->operands[0], x, y, e, l;
  if (!kc__rlogic(r, keep, KC_OP_OR, &x, &y)) return false;
  bool keep_ok = (kc__rcompare(r, x, direction, 0, 2) && kc__rcompare(r, y, "NE", 0, 0)) ||
                 (kc__rcompare(r, y, direction, 0, 2) && kc__rcompare(r, x, "NE", 0, 0));
  if (!keep_ok || !kc__rlogic(r, si->operands[0], KC_OP_OR, &x, &y)) return false;
  int32_t tie = x == keep ? y : y == keep ? x : -1;
  if (tie < 0 || !kc__rlogic(r, tie, KC_OP_AND, &e, &l)) return false;
  return (kc__rcompare(r, e, "EQ", 0, 2) && kc__rcompare(r, l, "LT", 1, 3)) ||
         (kc__rcompare(r, l, "EQ", 0, 2) && kc__rcompare(r, e, "LT", 1, 3));
}

/* 1 for argmax, 2 for argmin, of value type `v` and index type `i`; 0
 * for another reducer or other types. */
static int32_t kc__arg_kind(const kc_program* r, DLDataType v, DLDataType i) {
  bool types = v.code == kDLFloat && (v.bits == 32 || v.bits == 64) && v.lanes == 1 &&
               i.code == kDLInt && (i.bits == 32 || i.bits == 64) && i.lanes == 1;
  if (!types) return 0;
  if (kc__is_arg_reducer(r, "GT")) return 1;
  if (kc__is_arg_reducer(r, "LT")) return 2;
  return 0;
}

static kc_status* kc__reduce_read(const kc_program* p, const kc__instr* in,
                                  kc__reduce_plan* plan) {
  if (in->num_operands % 2 != 0 || in->num_operands / 2 > 64) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                      "reduce: expected N operands then N initial values (N up to 64), got "
                      "%zu operands",
                      in->num_operands);
  }
  size_t n = in->num_operands / 2;
  plan->n = n;
  const kc_shape* first = kc__instr_operand(p, in, 0);
  KC_RETURN_IF_ERROR(kc__instr_expect_array(in, first, "operand 0"));
  plan->rank = kc_shape_get_rank(first);
  const int64_t* dims;
  size_t num_dims;
  KC_RETURN_IF_ERROR(kc__instr_attr_ints(in, "dimensions", false, &dims, &num_dims));
  bool reduced[KC__RED_MAX_RANK] = {false};
  for (size_t i = 0; i < num_dims; ++i) {
    if (dims[i] < 0 || dims[i] >= plan->rank || reduced[dims[i]]) {
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                        "attribute dimensions: entry %zu: expected a distinct dimension of "
                        "0 to %d, got %lld",
                        i, plan->rank - 1, (long long)dims[i]);
    }
    reduced[dims[i]] = true;
  }
  int64_t kept[KC__RED_MAX_RANK];
  int32_t num_kept = 0;
  plan->in_count = 1;
  for (int32_t d = 0; d < plan->rank; ++d) {
    plan->dims[d] = kc_shape_get_dims(first)[d];
    plan->in_count *= plan->dims[d];
    if (!reduced[d]) kept[num_kept++] = plan->dims[d];
  }
  int64_t stride = 1;
  plan->out_count = 1;
  for (int32_t d = plan->rank - 1; d >= 0; --d) {
    plan->out_stride[d] = reduced[d] ? 0 : stride;
    if (!reduced[d]) stride *= plan->dims[d];
  }
  plan->out_count = stride;
  if ((n == 1) == kc_shape_is_tuple(in->shape) ||
      (n > 1 && kc_shape_get_tuple_size(in->shape) != n)) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                      "reduce of %zu operand%s: expected %s result", n, n == 1 ? "" : "s",
                      n == 1 ? "an array" : "a tuple of one array per operand as its");
  }
  for (size_t i = 0; i < n; ++i) {
    const kc_shape* o = kc__instr_operand(p, in, i);
    const kc_shape* init = kc__instr_operand(p, in, n + i);
    const kc_shape* r = kc__result_leaf(in, i, n);
    char what[48];
    snprintf(what, sizeof what, "operand %zu", i);
    KC_RETURN_IF_ERROR(kc__instr_expect_array(in, o, what));
    DLDataType t = kc_shape_get_dtype(o);
    char buf[32], g[256];
    bool same = kc_shape_get_rank(o) == plan->rank &&
                memcmp(kc_shape_get_dims(o), plan->dims,
                       (size_t)plan->rank * sizeof(int64_t)) == 0;
    if (!same) {
      kc_shape_format(o, g, sizeof g);
      return kc__instr_error(in, KC_INVALID_ARGUMENT, "%s: expected the dims of operand 0, got %s",
                        what, g);
    }
    if (kc_shape_is_tuple(init) || kc_shape_get_rank(init) != 0 ||
        !kc_dtype_equal(kc_shape_get_dtype(init), t)) {
      kc_shape_format(init, g, sizeof g);
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                        "operand %zu (initial value %zu): expected %s[], got %s", n + i, i,
                        kc__instr_dtype_text(t, buf, sizeof buf), g);
    }
    bool ok = !kc_shape_is_tuple(r) && kc_dtype_equal(kc_shape_get_dtype(r), t) &&
              kc_shape_get_rank(r) == num_kept &&
              (num_kept == 0 ||
               memcmp(kc_shape_get_dims(r), kept, (size_t)num_kept * sizeof(int64_t)) == 0);
    if (!ok) {
      kc_shape* want = NULL;
      KC_RETURN_IF_ERROR(kc_shape_create_array(t, kept, num_kept, &want));
      char w[256];
      kc_shape_format(want, w, sizeof w);
      kc_shape_destroy(want);
      kc_shape_format(r, g, sizeof g);
      return kc__instr_error(in, KC_INVALID_ARGUMENT, "result %zu: expected %s, got %s", i, w, g);
    }
    plan->elem_shapes[i] = init;
    plan->elem_shapes[n + i] = init;
  }
  /* The reducer: 2N scalar parameters (accumulators, then elements) and
   * the N new accumulators. */
  const kc_program* red = in->computations[0];
  if (kc_program_get_parameter_count(red) != 2 * n) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                      "to_apply '%s': expected %zu scalar parameters, got %zu",
                      kc_program_get_name(red), 2 * n, kc_program_get_parameter_count(red));
  }
  for (size_t k = 0; k < 2 * n; ++k) {
    const kc_shape* got = kc_program_get_parameter_shape(red, k);
    if (!kc_shape_equal(got, plan->elem_shapes[k])) {
      char w[256], g[256];
      kc_shape_format(plan->elem_shapes[k], w, sizeof w);
      kc_shape_format(got, g, sizeof g);
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                             "to_apply '%s': parameter %zu: expected %s, got %s",
                        kc_program_get_name(red), k, w, g);
    }
  }
  const kc_shape* rr = kc_program_get_result_shape(red);
  bool result_ok = n == 1 ? kc_shape_equal(rr, plan->elem_shapes[0])
                          : kc_shape_is_tuple(rr) && kc_shape_get_tuple_size(rr) == n;
  for (size_t k = 0; result_ok && n > 1 && k < n; ++k) {
    result_ok = kc_shape_equal(kc_shape_get_element(rr, k), plan->elem_shapes[k]);
  }
  if (!result_ok) {
    char g[256];
    kc_shape_format(rr, g, sizeof g);
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                      "to_apply '%s': expected %s of the operands' element types, got %s",
                      kc_program_get_name(red), n == 1 ? "a scalar" : "a tuple of scalars",
                      g);
  }
  plan->op = n == 1 ? kc__simple_reducer(red) : 0;
  plan->arg = n == 2 ? kc__arg_kind(red, kc_shape_get_dtype(plan->elem_shapes[0]),
                                    kc_shape_get_dtype(plan->elem_shapes[1]))
                     : 0;
  plan->type = kc__instr_num_type(kc_shape_get_dtype(first));
  plan->other = kc__reduce_other_type(plan->op, kc_shape_get_dtype(first));
  if (plan->type == KC__E_NONE && !plan->other.lanes) plan->op = 0;
  if ((plan->op == KC_OP_AND || plan->op == KC_OP_OR) && plan->type != KC__E_pred) {
    plan->op = 0;
  }
  return NULL;
}

static kc_status* kc__reduce_verify(const kc_program* p, const kc__instr* in) {
  kc__reduce_plan* plan = kc__calloc(1, sizeof *plan);
  if (!plan) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  kc_status* st = kc__reduce_read(p, in, plan);
  kc__free(plan);
  return st;
}

static void kc__reduce_plan_free(void* thing) {
  kc__reduce_plan* plan = thing;
  kc_executable_destroy(plan->reducer);
  kc__free(plan);
}

static kc_status* kc__reduce_prepare(const kc_program* p, const kc__instr* in,
                                     const kc__prepare_ctx* ctx, const void** out) {
  kc__reduce_plan* plan = kc__calloc(1, sizeof *plan);
  if (!plan) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  kc_status* st = kc__reduce_read(p, in, plan);
  if (!st && plan->op == 0 && plan->arg == 0) {
    st = kc__prepare_compile(ctx, in->computations[0], &plan->reducer);
  }
  if (st) {
    kc__reduce_plan_free(plan);
    return st;
  }
  KC_RETURN_IF_ERROR(kc__executable_own_state(ctx->exe, plan, kc__reduce_plan_free));
  *out = plan;
  return NULL;
}

/* Calls body(i, o) for each operand element i in row-major order with o
 * its output element, keeping o by counters rather than dividing. */
#define KC__RED_WALK(plan, body)                                             \
  do {                                                                       \
    int64_t idx_[KC__RED_MAX_RANK] = {0};                                    \
    int64_t o = 0;                                                           \
    int32_t last_ = (plan)->rank - 1;                                        \
    for (int64_t i = 0; i < (plan)->in_count; ++i) {                         \
      body;                                                                  \
      for (int32_t d_ = last_; d_ >= 0; --d_) {                              \
        o += (plan)->out_stride[d_];                                         \
        if (++idx_[d_] < (plan)->dims[d_]) break;                            \
        o -= (plan)->out_stride[d_] * (plan)->dims[d_];                      \
        idx_[d_] = 0;                                                        \
      }                                                                      \
    }                                                                        \
  } while (0)

/* maximum and minimum as XLA's (kernels/xla_arith.h); integer add and
 * multiply wrap around. */
#define KC__RED_MINMAX(sfx, ctype, code, bits)                                 \
  static ctype kc__max_##sfx(ctype a, ctype b) { return KC__XLA_MAX(a, b); }   \
  static ctype kc__min_##sfx(ctype a, ctype b) { return KC__XLA_MIN(a, b); }   \
  static ctype kc__add_##sfx(ctype a, ctype b) {                               \
    return KC__XLA_ADD(code, ctype, a, b);                                     \
  }                                                                            \
  static ctype kc__mul_##sfx(ctype a, ctype b) {                               \
    return KC__XLA_MUL(code, ctype, a, b);                                     \
  }
KC__ETYPES(KC__RED_MINMAX)
/* op(acc, x) for one element of a native reducer. */
#define KC__RED_STEP(sfx, ctype, op, acc, x)                                 \
  ((op) == KC_OP_ADD        ? kc__add_##sfx((acc), (x))                     \
   : (op) == KC_OP_MULTIPLY ? kc__mul_##sfx((acc), (x))                     \
   : (op) == KC_OP_MAXIMUM  ? kc__max_##sfx((acc), (x))                     \
   : (op) == KC_OP_MINIMUM  ? kc__min_##sfx((acc), (x))                     \
   : (op) == KC_OP_AND      ? (ctype)((acc) != 0 && (x) != 0)               \
                            : (ctype)((acc) != 0 || (x) != 0))

/* The native loops walk the operand a row (its last dimension) at a time.
 * Along a kept last dimension a row combines element-wise into a row of
 * the result; along a reduced one it folds into one element, through
 * eight independent accumulators (vectors of eight for f32 and f64 add
 * and multiply), which is how XLA's CPU backend sums too: the order of
 * the additions differs from a sequential loop's in the last bits. */
#define KC__RED_NATIVE(sfx, ctype, code, bits)                                 \
  static ctype kc__fold_##sfx(int32_t op, ctype acc, const ctype* x,           \
                              int64_t n) {                                     \
    if (op == KC_OP_ADD && (code) == kDLFloat) {                               \
      if ((bits) == 32) {                                                      \
        return (ctype)kc__sum_f32((float)acc, (const float*)(const void*)x, n); \
      }                                                                        \
      return (ctype)kc__sum_f64((double)acc, (const double*)(const void*)x, n); \
    }                                                                          \
    if ((op == KC_OP_MAXIMUM || op == KC_OP_MINIMUM) && (code) == kDLFloat) {  \
      bool is_max = op == KC_OP_MAXIMUM;                                       \
      if ((bits) == 32) {                                                      \
        return (ctype)kc__minmax_f32((float)acc, (const float*)(const void*)x, \
                                     n, is_max);                               \
      }                                                                        \
      return (ctype)kc__minmax_f64((double)acc, (const double*)(const void*)x, \
                                   n, is_max);                                 \
    }                                                                          \
    int64_t i = 0;                                                             \
    if (n >= 16 && (op == KC_OP_ADD || op == KC_OP_MULTIPLY ||                 \
                    op == KC_OP_MAXIMUM || op == KC_OP_MINIMUM)) {             \
      ctype lane[8];                                                           \
      for (int j = 0; j < 8; ++j) lane[j] = x[j];                              \
      for (i = 8; i + 8 <= n; i += 8) {                                        \
        for (int j = 0; j < 8; ++j) {                                          \
          lane[j] = KC__RED_STEP(sfx, ctype, op, lane[j], x[i + j]);           \
        }                                                                      \
      }                                                                        \
      for (int w = 4; w >= 1; w /= 2) {                                        \
        for (int j = 0; j < w; ++j) {                                          \
          lane[j] = KC__RED_STEP(sfx, ctype, op, lane[j], lane[j + w]);        \
        }                                                                      \
      }                                                                        \
      acc = KC__RED_STEP(sfx, ctype, op, acc, lane[0]);                        \
    }                                                                          \
    for (; i < n; ++i) acc = KC__RED_STEP(sfx, ctype, op, acc, x[i]);          \
    return acc;                                                                \
  }                                                                            \
  static void kc__reduce_##sfx(const kc__reduce_plan* plan, const ctype* x,    \
                               ctype init, ctype* r) {                         \
    for (int64_t k = 0; k < plan->out_count; ++k) r[k] = init;                 \
    int32_t last = plan->rank - 1;                                             \
    int64_t n = last >= 0 ? plan->dims[last] : 1;                              \
    if (n == 0 || plan->in_count == 0) return;                                 \
    bool folds = last >= 0 && plan->out_stride[last] == 0;                     \
    int64_t rows = plan->in_count / n;                                         \
    int64_t idx[KC__RED_MAX_RANK] = {0};                                       \
    int64_t o = 0;                                                             \
    int32_t op = plan->op;                                                     \
    for (int64_t row = 0; row < rows; ++row) {                                 \
      const ctype* xr = x + row * n;                                           \
      if (folds) {                                                             \
        r[o] = kc__fold_##sfx(op, r[o], xr, n);                                \
      } else {                                                                 \
        ctype* rr = r + o; /* a kept last dimension has stride 1 */            \
        switch (op) {                                                          \
          case KC_OP_ADD:                                                      \
            if ((code) == kDLFloat && (bits) == 32) {                          \
              kc__acc_f32((float*)(void*)rr, (const float*)(const void*)xr, n); \
            } else if ((code) == kDLFloat) {                                   \
              kc__acc_f64((double*)(void*)rr, (const double*)(const void*)xr, n); \
            } else {                                                           \
              for (int64_t j = 0; j < n; ++j) rr[j] = kc__add_##sfx(rr[j], xr[j]); \
            }                                                                  \
            break;                                                             \
          case KC_OP_MULTIPLY:                                                 \
            for (int64_t j = 0; j < n; ++j) rr[j] = kc__mul_##sfx(rr[j], xr[j]); \
            break;                                                             \
          default:                                                             \
            for (int64_t j = 0; j < n; ++j) {                                  \
              rr[j] = KC__RED_STEP(sfx, ctype, op, rr[j], xr[j]);              \
            }                                                                  \
        }                                                                      \
      }                                                                        \
      for (int32_t d = last - 1; d >= 0; --d) {                                \
        o += plan->out_stride[d];                                              \
        if (++idx[d] < plan->dims[d]) break;                                   \
        o -= plan->out_stride[d] * plan->dims[d];                              \
        idx[d] = 0;                                                            \
      }                                                                        \
    }                                                                          \
  }

KC__ETYPES(KC__RED_NATIVE)
#undef KC__RED_NATIVE
#undef KC__RED_MINMAX

/* The argmax or argmin fold, element by element in the order of the
 * general path, exactly as JAX's reducer computes it: the accumulator
 * stays when it compares greater (less) or is NaN, and its index also
 * when the values are equal and its index is lower. */
#define KC__ARG_FOLD(name, vtype, itype)                                            \
  static inline void kc__arg_step_##name(vtype* av, itype* ai, vtype ev, itype ei,  \
                                         bool is_max) {                             \
    bool keep = (is_max ? *av > ev : *av < ev) || *av != *av;                      \
    bool keep_index = keep || (*av == ev && *ai < ei);                             \
    if (!keep) *av = ev;                                                           \
    if (!keep_index) *ai = ei;                                                     \
  }                                                                                \
  static void kc__arg_##name(const kc__reduce_plan* plan, void* out,                \
                             const void* const* ins) {                              \
    vtype* rv = ((void* const*)out)[0];                                            \
    itype* ri = ((void* const*)out)[1];                                            \
    const vtype* xv = ins[0];                                                      \
    const itype* xi = ins[1];                                                      \
    vtype v0;                                                                      \
    itype i0;                                                                      \
    memcpy(&v0, ins[2], sizeof v0);                                                \
    memcpy(&i0, ins[3], sizeof i0);                                                \
    for (int64_t j = 0; j < plan->out_count; ++j) {                                \
      rv[j] = v0;                                                                  \
      ri[j] = i0;                                                                  \
    }                                                                              \
    bool is_max = plan->arg == 1;                                                  \
    KC__RED_WALK(plan, (kc__arg_step_##name(rv + o, ri + o, xv[i], xi[i], is_max))); \
  }
KC__ARG_FOLD(f32_s32, float, int32_t)
KC__ARG_FOLD(f32_s64, float, int64_t)
KC__ARG_FOLD(f64_s32, double, int32_t)
KC__ARG_FOLD(f64_s64, double, int64_t)
#undef KC__ARG_FOLD

static void kc__reduce_arg(const kc__reduce_plan* plan, void* out, const void* const* ins) {
  bool v64 = kc_shape_get_dtype(plan->elem_shapes[0]).bits == 64;
  bool i64 = kc_shape_get_dtype(plan->elem_shapes[1]).bits == 64;
  if (v64) {
    i64 ? kc__arg_f64_s64(plan, out, ins) : kc__arg_f64_s32(plan, out, ins);
  } else {
    i64 ? kc__arg_f32_s64(plan, out, ins) : kc__arg_f32_s32(plan, out, ins);
  }
}

/* The general path: the reducer run per element on scalar tensors. */
static kc_status* kc__reduce_general(const kc__reduce_plan* plan, void* out,
                                     const void* const* ins) {
  size_t n = plan->n;
  void* results[64];
  size_t esize[64];
  for (size_t k = 0; k < n; ++k) {
    results[k] = n == 1 ? out : ((void* const*)out)[k];
    esize[k] = kc_shape_get_byte_size(plan->elem_shapes[k]);
    for (int64_t j = 0; j < plan->out_count; ++j) {
      memcpy((char*)results[k] + (size_t)j * esize[k], ins[n + k], esize[k]);
    }
  }
  DLTensor args[128];
  const DLTensor* ptrs[128];
  for (size_t k = 0; k < 2 * n; ++k) {
    memset(&args[k], 0, sizeof args[k]);
    args[k].device.device_type = kDLCPU;
    args[k].dtype = kc_shape_get_dtype(plan->elem_shapes[k]);
    ptrs[k] = &args[k];
  }
  /* The reducer's results go to slots of their own (it may not write
   * over its inputs), then into the accumulators. */
  _Alignas(16) char slots[64 * 16];
  void* outs[64];
  for (size_t k = 0; k < n; ++k) outs[k] = slots + 16 * k;
  kc_status* st = NULL;
  KC__RED_WALK(plan, {
    if (!st) {
      for (size_t k = 0; k < n; ++k) {
        args[k].data = (char*)results[k] + (size_t)o * esize[k];
        args[n + k].data = (char*)(uintptr_t)ins[k] + (size_t)i * esize[k];
      }
      st = kc__executable_run_called(plan->reducer, ptrs, outs);
      if (!st) {
        for (size_t k = 0; k < n; ++k) {
          memcpy((char*)results[k] + (size_t)o * esize[k], outs[k], esize[k]);
        }
      }
    }
  });
  return st ? kc_status_add_context(st, "in the reducer") : NULL;
}

/* f16, bf16, c64 and c128 with a native reducer, a row at a time as the
 * native loops above. */
static void kc__reduce_other(const kc__reduce_plan* plan, void* out, const void* const* ins) {
  size_t es = kc_dtype_get_size(plan->other);
  char* r = out;
  const char* x = ins[0];
  for (int64_t k = 0; k < plan->out_count; ++k) memcpy(r + (size_t)k * es, ins[1], es);
  int32_t last = plan->rank - 1;
  int64_t n = last >= 0 ? plan->dims[last] : 1;
  if (n == 0 || plan->in_count == 0) return;
  bool fold = last >= 0 && plan->out_stride[last] == 0;
  int64_t idx[KC__RED_MAX_RANK] = {0};
  int64_t o = 0;
  for (int64_t row = 0; row < plan->in_count / n; ++row) {
    kc__reduce_other_row(plan->op, plan->other, r + (size_t)o * es, fold,
                         x + (size_t)(row * n) * es, n);
    for (int32_t d = last - 1; d >= 0; --d) {
      o += plan->out_stride[d];
      if (++idx[d] < plan->dims[d]) break;
      o -= plan->out_stride[d] * plan->dims[d];
      idx[d] = 0;
    }
  }
}

static kc_status* kc__reduce_kernel(const kc__instr_kernel_ctx* ctx, void* out,
                                    const void* const* ins) {
  const kc__reduce_plan* plan = ctx->data;
  if (plan->arg) {
    kc__reduce_arg(plan, out, ins);
    return NULL;
  }
  if (plan->op == 0) return kc__reduce_general(plan, out, ins);
  if (plan->other.lanes) {
    kc__reduce_other(plan, out, ins);
    return NULL;
  }
  switch (plan->type) {
#define KC__RED_CASE(sfx, ctype, code, bits)                          \
  case KC__E_##sfx:                                                 \
    kc__reduce_##sfx(plan, ins[0], *(const ctype*)ins[1], out);       \
    break;
    KC__ETYPES(KC__RED_CASE)
#undef KC__RED_CASE
    default:
      break;
  }
  return NULL;
}

static const char* const kc__reduce_attrs[] = {"dimensions", NULL};
static const char* const kc__reduce_computations[] = {"to_apply", NULL};

const kc__instr_def kc__instr_reduce[] = {
    {.op = KC_OP_REDUCE, .name = "reduce", .min_operands = 2, .max_operands = -1,
     .num_computations = 1, .attrs = kc__reduce_attrs, .computation_attrs = kc__reduce_computations,
     .verify = kc__reduce_verify, .prepare = kc__reduce_prepare, .kernel = kc__reduce_kernel},
};
const size_t kc__instr_reduce_count = KC__ARRAY_SIZE(kc__instr_reduce);
