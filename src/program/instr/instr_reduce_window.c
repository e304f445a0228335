/* reduce-window, one operand or several (variadic: N operands, N initial
 * values, a reducer of 2N scalars giving a tuple of N), with strides,
 * padding, base (lhs) and window (rhs) dilation, as XLA defines it:
 *
 * each result element starts from the initial values and folds in, in
 * row-major order of the window, the operand elements under its window;
 * window positions that fall in the padding or in a hole between
 * base-dilated elements are skipped (they do not count as the initial
 * value: a reducer that is no monoid, or an initial value that is not its
 * identity, sees only real elements).
 *
 * A reducer that is one add, multiply, maximum, minimum, and or or of its
 * two parameters runs as the native window fold of kernels/pool.h, row by
 * row where the last dimension passes through the window unchanged (NHWC
 * pooling), split over the thread pool when large; any other reducer runs
 * its computation per element, over the fold's tables. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/common.h"
#include "kernels/pool.h"
#include "program/instr/instr.h"

#define KC__RW_MAX_RANK KC_TENSOR_MAX_NDIM
#define KC__RW_MAX_OPERANDS 64
/* Bytes of one accumulator of the general path: any element type. */
#define KC__RW_SLOT 16

typedef struct kc__rw_plan {
  size_t n;             /* operands reduced together */
  kc__window_fold fold; /* the window over every dimension of the operands, its tables */
  size_t esize[KC__RW_MAX_OPERANDS];
  const kc_shape* scalars[KC__RW_MAX_OPERANDS]; /* the initial values' shapes */
  bool native; /* one operand, a reducer folded natively (fold_op) */
  kc__fold_op fold_op;
  int type;
  kc_executable* reducer; /* the general path */
} kc__rw_plan;

/* An optional window attribute of `rank` entries, else `fill` each. */
static kc_status* kc__rw_attr(const kc__instr* in, const char* name, int32_t rank, int64_t fill,
                              int64_t min, int64_t* out) {
  const int64_t* v;
  size_t n;
  KC_RETURN_IF_ERROR(kc__instr_attr_ints(in, name, true, &v, &n));
  if (n != 0 && n != (size_t)rank) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "window %s: expected %d entries (the operand's rank), got %zu", name,
                           rank, n);
  }
  for (int32_t d = 0; d < rank; ++d) {
    out[d] = n ? v[d] : fill;
    if (out[d] < min) {
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                             "window %s: entry %d: expected at least %lld, got %lld", name, d,
                             (long long)min, (long long)out[d]);
    }
  }
  return NULL;
}

/* The operands, initial values and result: N arrays of one dims, N scalars
 * of their element types, and an array (N = 1) or a tuple of N arrays of
 * the windowed dims. */
static kc_status* kc__rw_read_values(const kc_program* p, const kc__instr* in,
                                     kc__rw_plan* plan) {
  if (in->num_operands % 2 != 0 || in->num_operands / 2 > KC__RW_MAX_OPERANDS) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "reduce-window: expected N operands then N initial values (N up to "
                           "%d), got %zu operands",
                           KC__RW_MAX_OPERANDS, in->num_operands);
  }
  size_t n = plan->n = in->num_operands / 2;
  const kc_shape* first = kc__instr_operand(p, in, 0);
  KC_RETURN_IF_ERROR(kc__instr_expect_array(in, first, "operand 0"));
  plan->fold.win.dims = kc_shape_get_rank(first);
  memcpy(plan->fold.win.in, kc_shape_get_dims(first),
         (size_t)plan->fold.win.dims * sizeof(int64_t));
  char buf[32], g[256];
  for (size_t i = 0; i < n; ++i) {
    const kc_shape* o = kc__instr_operand(p, in, i);
    const kc_shape* init = kc__instr_operand(p, in, n + i);
    char what[48];
    snprintf(what, sizeof what, "operand %zu", i);
    KC_RETURN_IF_ERROR(kc__instr_expect_array(in, o, what));
    if (kc_shape_get_rank(o) != plan->fold.win.dims ||
        memcmp(kc_shape_get_dims(o), plan->fold.win.in,
               (size_t)plan->fold.win.dims * sizeof(int64_t)) != 0) {
      kc_shape_format(o, g, sizeof g);
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                             "operand %zu: expected the dims of operand 0, got %s", i, g);
    }
    DLDataType t = kc_shape_get_dtype(o);
    if (kc_shape_is_tuple(init) || kc_shape_get_rank(init) != 0 ||
        !kc_dtype_equal(kc_shape_get_dtype(init), t)) {
      kc_shape_format(init, g, sizeof g);
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                             "operand %zu (initial value %zu): expected %s[], got %s", n + i, i,
                             kc__instr_dtype_text(t, buf, sizeof buf), g);
    }
    plan->scalars[i] = init;
    plan->esize[i] = kc_dtype_get_size(t);
  }
  if ((n == 1) == kc_shape_is_tuple(in->shape) ||
      (n > 1 && kc_shape_get_tuple_size(in->shape) != n)) {
    kc_shape_format(in->shape, g, sizeof g);
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "reduce-window of %zu operand%s: expected %s, got %s", n,
                           n == 1 ? "" : "s",
                           n == 1 ? "an array result" : "a tuple of one array per operand", g);
  }
  return NULL;
}

/* The window: its attributes, the result's dims, each result leaf. */
static kc_status* kc__rw_read_window(const kc_program* p, const kc__instr* in,
                                     kc__rw_plan* plan) {
  int32_t rank = plan->fold.win.dims;
  const int64_t* size;
  size_t count;
  KC_RETURN_IF_ERROR(kc__instr_attr_ints(in, "window_dimensions", false, &size, &count));
  if (count != (size_t)rank) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "window size: expected %d entries (the operand's rank), got %zu", rank,
                           count);
  }
  int64_t high[KC__RW_MAX_RANK];
  KC_RETURN_IF_ERROR(kc__rw_attr(in, "window_dimensions", rank, 1, 1, plan->fold.win.size));
  KC_RETURN_IF_ERROR(kc__rw_attr(in, "window_strides", rank, 1, 1, plan->fold.win.stride));
  KC_RETURN_IF_ERROR(kc__rw_attr(in, "padding_low", rank, 0, INT64_MIN, plan->fold.win.low));
  KC_RETURN_IF_ERROR(kc__rw_attr(in, "padding_high", rank, 0, INT64_MIN, high));
  KC_RETURN_IF_ERROR(kc__rw_attr(in, "base_dilations", rank, 1, 1, plan->fold.win.lhs_dil));
  KC_RETURN_IF_ERROR(kc__rw_attr(in, "window_dilations", rank, 1, 1, plan->fold.win.rhs_dil));
  plan->fold.out_count = plan->fold.window_count = 1;
  for (int32_t d = 0; d < rank; ++d) {
    if (!kc__window_positions(plan->fold.win.in[d], plan->fold.win.low[d], high[d],
                              plan->fold.win.lhs_dil[d], plan->fold.win.size[d],
                              plan->fold.win.rhs_dil[d], plan->fold.win.stride[d],
                              &plan->fold.win.out[d])) {
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                             "dimension %d: the window, padding and dilations overflow 64 bits",
                             d);
    }
    if (__builtin_mul_overflow(plan->fold.out_count, plan->fold.win.out[d],
                               &plan->fold.out_count) ||
        __builtin_mul_overflow(plan->fold.window_count, plan->fold.win.size[d],
                               &plan->fold.window_count)) {
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                             "the windows or the result count past 64 bits");
    }
  }
  for (size_t i = 0; i < plan->n; ++i) {
    const kc_shape* r = plan->n == 1 ? in->shape : kc_shape_get_element(in->shape, i);
    DLDataType t = kc_shape_get_dtype(kc__instr_operand(p, in, i));
    bool ok = !kc_shape_is_tuple(r) && kc_dtype_equal(kc_shape_get_dtype(r), t) &&
              kc_shape_get_rank(r) == rank &&
              (rank == 0 || memcmp(kc_shape_get_dims(r), plan->fold.win.out,
                                   (size_t)rank * sizeof(int64_t)) == 0);
    if (!ok) {
      kc_shape* want = NULL;
      KC_RETURN_IF_ERROR(kc_shape_create_array(t, plan->fold.win.out, rank, &want));
      char w[256], g[256];
      kc_shape_format(want, w, sizeof w);
      kc_shape_destroy(want);
      kc_shape_format(r, g, sizeof g);
      if (plan->n == 1) {
        return kc__instr_error(in, KC_INVALID_ARGUMENT, "expected a result of %s, got %s", w, g);
      }
      return kc__instr_error(in, KC_INVALID_ARGUMENT, "result %zu: expected %s, got %s", i, w, g);
    }
  }
  return NULL;
}

/* The reducer: 2N scalar parameters (accumulators, then elements) and a
 * scalar (N = 1) or a tuple of N scalars, of the operands' types. */
static kc_status* kc__rw_read_reducer(const kc__instr* in, kc__rw_plan* plan) {
  const kc_program* red = in->computations[0];
  size_t n = plan->n;
  const char* name = kc_program_get_name(red);
  if (kc_program_get_parameter_count(red) != 2 * n) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "to_apply '%s': expected %zu scalar parameters, got %zu", name, 2 * n,
                           kc_program_get_parameter_count(red));
  }
  char w[256], g[256];
  for (size_t k = 0; k < 2 * n; ++k) {
    const kc_shape* got = kc_program_get_parameter_shape(red, k);
    if (!kc_shape_equal(got, plan->scalars[k % n])) {
      kc_shape_format(plan->scalars[k % n], w, sizeof w);
      kc_shape_format(got, g, sizeof g);
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                             "to_apply '%s': parameter %zu: expected %s, got %s", name, k, w, g);
    }
  }
  const kc_shape* rr = kc_program_get_result_shape(red);
  bool ok = n == 1 ? kc_shape_equal(rr, plan->scalars[0])
                   : kc_shape_is_tuple(rr) && kc_shape_get_tuple_size(rr) == n;
  for (size_t k = 0; ok && n > 1 && k < n; ++k) {
    ok = kc_shape_equal(kc_shape_get_element(rr, k), plan->scalars[k]);
  }
  if (!ok) {
    kc_shape_format(rr, g, sizeof g);
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "to_apply '%s': expected %s of the operands' element types, got %s",
                           name, n == 1 ? "a scalar" : "a tuple of scalars", g);
  }
  DLDataType t = kc_shape_get_dtype(plan->scalars[0]);
  plan->type = kc__instr_num_type(t);
  int32_t op = n == 1 && plan->type != KC__E_NONE ? kc__simple_reducer(red) : 0;
  plan->native = true;
  switch (op) {
    case KC_OP_ADD:
      plan->fold_op = KC__FOLD_ADD;
      break;
    case KC_OP_MULTIPLY:
      plan->fold_op = KC__FOLD_MUL;
      break;
    case KC_OP_MAXIMUM:
      plan->fold_op = KC__FOLD_MAX;
      break;
    case KC_OP_MINIMUM:
      plan->fold_op = KC__FOLD_MIN;
      break;
    case KC_OP_AND:
    case KC_OP_OR:
      plan->fold_op = op == KC_OP_AND ? KC__FOLD_AND : KC__FOLD_OR;
      plan->native = plan->type == KC__E_pred;
      break;
    default:
      plan->native = false;
      break;
  }
  return NULL;
}

static kc_status* kc__rw_read(const kc_program* p, const kc__instr* in, kc__rw_plan* plan) {
  KC_RETURN_IF_ERROR(kc__rw_read_values(p, in, plan));
  KC_RETURN_IF_ERROR(kc__rw_read_window(p, in, plan));
  return kc__rw_read_reducer(in, plan);
}

static kc_status* kc__rw_verify(const kc_program* p, const kc__instr* in) {
  kc__rw_plan* plan = kc__calloc(1, sizeof *plan);
  if (!plan) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  kc_status* st = kc__rw_read(p, in, plan);
  kc__free(plan);
  return st;
}

static void kc__rw_plan_free(void* thing) {
  kc__rw_plan* plan = thing;
  kc_executable_destroy(plan->reducer);
  kc__window_fold_free(&plan->fold);
  kc__free(plan);
}

static kc_status* kc__rw_prepare(const kc_program* p, const kc__instr* in,
                                 const kc__prepare_ctx* ctx, const void** out) {
  kc__rw_plan* plan = kc__calloc(1, sizeof *plan);
  if (!plan) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  kc_status* st = kc__rw_read(p, in, plan);
  if (!st && !kc__window_fold_init(&plan->fold)) {
    st = kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  }
  if (!st && !plan->native) st = kc__prepare_compile(ctx, in->computations[0], &plan->reducer);
  if (st) {
    kc__rw_plan_free(plan);
    return st;
  }
  KC_RETURN_IF_ERROR(kc__executable_own_state(ctx->exe, plan, kc__rw_plan_free));
  *out = plan;
  return NULL;
}

/* ---- the general path ---------------------------------------------------------- */

/* Every output element with the reducer's computation: accumulators in
 * slots, the reducer's results in others, copied back after each step
 * (the reducer may not write over its inputs). */
static kc_status* kc__rw_general(const kc__rw_plan* plan, void* const* outs,
                                 const void* const* ins) {
  size_t n = plan->n;
  int32_t rank = plan->fold.win.dims;
  char acc[KC__RW_MAX_OPERANDS * KC__RW_SLOT], res[KC__RW_MAX_OPERANDS * KC__RW_SLOT];
  DLTensor args[2 * KC__RW_MAX_OPERANDS];
  const DLTensor* arg_ptrs[2 * KC__RW_MAX_OPERANDS];
  void* result_data[KC__RW_MAX_OPERANDS];
  memset(args, 0, sizeof args);
  for (size_t k = 0; k < 2 * n; ++k) {
    args[k].device.device_type = kDLCPU;
    args[k].dtype = kc_shape_get_dtype(plan->scalars[k % n]);
    arg_ptrs[k] = &args[k];
  }
  for (size_t k = 0; k < n; ++k) {
    args[k].data = acc + k * KC__RW_SLOT;
    result_data[k] = res + k * KC__RW_SLOT;
  }
  int64_t o_idx[KC__RW_MAX_RANK] = {0};
  for (int64_t o = 0; o < plan->fold.out_count; ++o) {
    for (size_t k = 0; k < n; ++k) memcpy(acc + k * KC__RW_SLOT, ins[n + k], plan->esize[k]);
    int64_t w_idx[KC__RW_MAX_RANK];
    for (int32_t d = 0; d < rank; ++d) w_idx[d] = 0;
    for (int64_t w = 0; w < plan->fold.window_count; ++w) {
      int64_t off = kc__window_fold_offset(&plan->fold, rank, o_idx, w_idx);
      if (off >= 0) {
        for (size_t k = 0; k < n; ++k) {
          args[n + k].data = (char*)(uintptr_t)ins[k] + (size_t)off * plan->esize[k];
        }
        kc_status* st = kc__executable_run_called(plan->reducer, arg_ptrs, result_data);
        if (st) return kc_status_add_context(st, "in the reducer");
        for (size_t k = 0; k < n; ++k) {
          memcpy(acc + k * KC__RW_SLOT, res + k * KC__RW_SLOT, plan->esize[k]);
        }
      }
      kc__index_next(w_idx, plan->fold.win.size, rank);
    }
    for (size_t k = 0; k < n; ++k) {
      memcpy((char*)outs[k] + (size_t)o * plan->esize[k], acc + k * KC__RW_SLOT, plan->esize[k]);
    }
    kc__index_next(o_idx, plan->fold.win.out, rank);
  }
  return NULL;
}

static kc_status* kc__rw_kernel(const kc__instr_kernel_ctx* ctx, void* out,
                                const void* const* ins) {
  const kc__rw_plan* plan = ctx->data;
  if (plan->fold.out_count == 0) return NULL;
  if (!plan->native) {
    void* outs[KC__RW_MAX_OPERANDS];
    for (size_t k = 0; k < plan->n; ++k) outs[k] = plan->n == 1 ? out : ((void* const*)out)[k];
    return kc__rw_general(plan, outs, ins);
  }
  kc__window_fold_run(&plan->fold, plan->fold_op, (kc__etype)plan->type, ins[0], ins[1], out,
                      ctx->pool);
  return NULL;
}

static const char* const kc__rw_attrs[] = {"window_dimensions", "window_strides",
                                           "padding_low",       "padding_high",
                                           "base_dilations",    "window_dilations",
                                           NULL};
static const char* const kc__rw_computations[] = {"to_apply", NULL};

const kc__instr_def kc__instr_reduce_window[] = {
    {.op = KC_OP_REDUCE_WINDOW, .name = "reduce-window", .min_operands = 2, .max_operands = -1,
     .num_computations = 1, .attrs = kc__rw_attrs, .computation_attrs = kc__rw_computations,
     .verify = kc__rw_verify, .prepare = kc__rw_prepare, .kernel = kc__rw_kernel},
};
const size_t kc__instr_reduce_window_count = KC__ARRAY_SIZE(kc__instr_reduce_window);
