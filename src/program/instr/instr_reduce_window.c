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
 * two parameters runs as a native loop, row by row where the last
 * dimension passes through the window unchanged (NHWC pooling), split over
 * the thread pool when large; any other reducer runs its computation per
 * element. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/common.h"
#include "kernels/conv.h"
#include "kernels/xla_arith.h"
#include "program/instr/instr.h"

#define KC__RW_MAX_RANK KC_TENSOR_MAX_NDIM
#define KC__RW_MAX_OPERANDS 64
/* Bytes of one accumulator of the general path: any element type. */
#define KC__RW_SLOT 16

typedef struct kc__rw_plan {
  size_t n;     /* operands reduced together */
  kc__window win; /* over every dimension of the operands (win.dims: their rank) */
  int64_t in_stride[KC__RW_MAX_RANK]; /* row-major, in elements */
  int64_t out_count, window_count;
  /* Per dimension d, for output index o and window index w: the operand
   * index at pos[d][o * size[d] + w], or -1 in padding or a hole. */
  int64_t* pos[KC__RW_MAX_RANK];
  /* The native loop's rows: the last dimension passes through (window 1,
   * stride 1, no padding or dilation) and `row` elements are folded at
   * once; otherwise row is 1 and every dimension is windowed. */
  int32_t outer_rank;
  int64_t row, outer_count, outer_window_count;
  size_t esize[KC__RW_MAX_OPERANDS];
  const kc_shape* scalars[KC__RW_MAX_OPERANDS]; /* the initial values' shapes */
  int32_t op; /* a native reducer's op (one operand), else 0 */
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
  plan->win.dims = kc_shape_get_rank(first);
  memcpy(plan->win.in, kc_shape_get_dims(first), (size_t)plan->win.dims * sizeof(int64_t));
  char buf[32], g[256];
  for (size_t i = 0; i < n; ++i) {
    const kc_shape* o = kc__instr_operand(p, in, i);
    const kc_shape* init = kc__instr_operand(p, in, n + i);
    char what[48];
    snprintf(what, sizeof what, "operand %zu", i);
    KC_RETURN_IF_ERROR(kc__instr_expect_array(in, o, what));
    if (kc_shape_get_rank(o) != plan->win.dims ||
        memcmp(kc_shape_get_dims(o), plan->win.in, (size_t)plan->win.dims * sizeof(int64_t)) != 0) {
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
  int32_t rank = plan->win.dims;
  const int64_t* size;
  size_t count;
  KC_RETURN_IF_ERROR(kc__instr_attr_ints(in, "window_dimensions", false, &size, &count));
  if (count != (size_t)rank) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "window size: expected %d entries (the operand's rank), got %zu", rank,
                           count);
  }
  int64_t high[KC__RW_MAX_RANK];
  KC_RETURN_IF_ERROR(kc__rw_attr(in, "window_dimensions", rank, 1, 1, plan->win.size));
  KC_RETURN_IF_ERROR(kc__rw_attr(in, "window_strides", rank, 1, 1, plan->win.stride));
  KC_RETURN_IF_ERROR(kc__rw_attr(in, "padding_low", rank, 0, INT64_MIN, plan->win.low));
  KC_RETURN_IF_ERROR(kc__rw_attr(in, "padding_high", rank, 0, INT64_MIN, high));
  KC_RETURN_IF_ERROR(kc__rw_attr(in, "base_dilations", rank, 1, 1, plan->win.lhs_dil));
  KC_RETURN_IF_ERROR(kc__rw_attr(in, "window_dilations", rank, 1, 1, plan->win.rhs_dil));
  plan->out_count = plan->window_count = 1;
  int64_t stride = 1;
  for (int32_t d = rank - 1; d >= 0; --d) {
    plan->in_stride[d] = stride;
    stride *= plan->win.in[d];
  }
  for (int32_t d = 0; d < rank; ++d) {
    if (!kc__window_positions(plan->win.in[d], plan->win.low[d], high[d], plan->win.lhs_dil[d],
                              plan->win.size[d], plan->win.rhs_dil[d], plan->win.stride[d],
                              &plan->win.out[d])) {
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                             "dimension %d: the window, padding and dilations overflow 64 bits",
                             d);
    }
    if (__builtin_mul_overflow(plan->out_count, plan->win.out[d], &plan->out_count) ||
        __builtin_mul_overflow(plan->window_count, plan->win.size[d], &plan->window_count)) {
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                             "the windows or the result count past 64 bits");
    }
  }
  for (size_t i = 0; i < plan->n; ++i) {
    const kc_shape* r = plan->n == 1 ? in->shape : kc_shape_get_element(in->shape, i);
    DLDataType t = kc_shape_get_dtype(kc__instr_operand(p, in, i));
    bool ok = !kc_shape_is_tuple(r) && kc_dtype_equal(kc_shape_get_dtype(r), t) &&
              kc_shape_get_rank(r) == rank &&
              (rank == 0 ||
               memcmp(kc_shape_get_dims(r), plan->win.out, (size_t)rank * sizeof(int64_t)) == 0);
    if (!ok) {
      kc_shape* want = NULL;
      KC_RETURN_IF_ERROR(kc_shape_create_array(t, plan->win.out, rank, &want));
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
  plan->op = n == 1 && plan->type != KC__E_NONE ? kc__simple_reducer(red) : 0;
  if ((plan->op == KC_OP_AND || plan->op == KC_OP_OR) && plan->type != KC__E_pred) {
    plan->op = 0;
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
  for (int32_t d = 0; d < KC__RW_MAX_RANK; ++d) kc__free(plan->pos[d]);
  kc__free(plan);
}

/* The position tables and the native loop's rows. */
static bool kc__rw_tables(kc__rw_plan* plan) {
  const kc__window* win = &plan->win;
  int32_t rank = win->dims;
  for (int32_t d = 0; d < rank; ++d) {
    plan->pos[d] = kc__malloc((size_t)(win->out[d] * win->size[d]) * sizeof(int64_t) + 1);
    if (!plan->pos[d]) return false;
    kc__window_taps(win, d, 1, plan->pos[d]);
  }
  int32_t last = rank - 1;
  bool rows = plan->op && rank > 0 && win->size[last] == 1 && win->stride[last] == 1 &&
              win->low[last] == 0 && win->lhs_dil[last] == 1 && win->out[last] == win->in[last];
  plan->outer_rank = rows ? last : rank;
  plan->row = rows ? win->in[last] : 1;
  plan->outer_count = plan->outer_window_count = 1;
  for (int32_t d = 0; d < plan->outer_rank; ++d) {
    plan->outer_count *= plan->win.out[d];
    plan->outer_window_count *= plan->win.size[d];
  }
  return true;
}

static kc_status* kc__rw_prepare(const kc_program* p, const kc__instr* in,
                                 const kc__prepare_ctx* ctx, const void** out) {
  kc__rw_plan* plan = kc__calloc(1, sizeof *plan);
  if (!plan) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  kc_status* st = kc__rw_read(p, in, plan);
  if (!st && !kc__rw_tables(plan)) st = kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  if (!st && plan->op == 0) st = kc__prepare_compile(ctx, in->computations[0], &plan->reducer);
  if (st) {
    kc__rw_plan_free(plan);
    return st;
  }
  KC_RETURN_IF_ERROR(kc__executable_own_state(ctx->exe, plan, kc__rw_plan_free));
  *out = plan;
  return NULL;
}

/* The operand offset of window position w_idx of output position o_idx
 * (over the first `rank` dimensions), or -1 when it is padding or a hole. */
static inline int64_t kc__rw_offset(const kc__rw_plan* plan, int32_t rank, const int64_t* o_idx,
                                    const int64_t* w_idx) {
  int64_t off = 0;
  for (int32_t d = 0; d < rank; ++d) {
    int64_t i = plan->pos[d][o_idx[d] * plan->win.size[d] + w_idx[d]];
    if (i < 0) return -1;
    off += i * plan->in_stride[d];
  }
  return off;
}

/* Row-major multi-index of `flat` over dims[0..rank). */
static void kc__rw_unravel(int64_t flat, const int64_t* dims, int32_t rank, int64_t* idx) {
  for (int32_t d = rank - 1; d >= 0; --d) {
    idx[d] = dims[d] ? flat % dims[d] : 0;
    flat = dims[d] ? flat / dims[d] : 0;
  }
}

static inline void kc__rw_next(int64_t* idx, const int64_t* dims, int32_t rank) {
  for (int32_t d = rank - 1; d >= 0; --d) {
    if (++idx[d] < dims[d]) return;
    idx[d] = 0;
  }
}

/* ---- the native loop --------------------------------------------------------- */

/* maximum and minimum as XLA's (kernels/xla_arith.h); integer add and
 * multiply wrap around. */
#define KC__RW_FOLD(sfx, ctype, code, bits)                                              \
  static inline ctype kc__rw_max_##sfx(ctype a, ctype b) { return KC__XLA_MAX(a, b); }   \
  static inline ctype kc__rw_min_##sfx(ctype a, ctype b) { return KC__XLA_MIN(a, b); }   \
  /* acc[j] = op(acc[j], x[j]) for j < n, the op's switch outside the loop. */          \
  static void kc__rw_fold_##sfx(int32_t op, ctype* restrict acc, const ctype* restrict x, \
                                int64_t n) {                                             \
    switch (op) {                                                                        \
      case KC_OP_ADD:                                                                    \
        for (int64_t j = 0; j < n; ++j) acc[j] = KC__XLA_ADD(code, ctype, acc[j], x[j]);  \
        break;                                                                           \
      case KC_OP_MULTIPLY:                                                               \
        for (int64_t j = 0; j < n; ++j) acc[j] = KC__XLA_MUL(code, ctype, acc[j], x[j]);  \
        break;                                                                           \
      case KC_OP_MAXIMUM:                                                                \
        for (int64_t j = 0; j < n; ++j) acc[j] = kc__rw_max_##sfx(acc[j], x[j]);         \
        break;                                                                           \
      case KC_OP_MINIMUM:                                                                \
        for (int64_t j = 0; j < n; ++j) acc[j] = kc__rw_min_##sfx(acc[j], x[j]);         \
        break;                                                                           \
      case KC_OP_AND:                                                                    \
        for (int64_t j = 0; j < n; ++j) acc[j] = (ctype)(acc[j] != 0 && x[j] != 0);      \
        break;                                                                           \
      default:                                                                           \
        for (int64_t j = 0; j < n; ++j) acc[j] = (ctype)(acc[j] != 0 || x[j] != 0);      \
        break;                                                                           \
    }                                                                                    \
  }                                                                                      \
  /* Output rows [begin, end) of the outer dimensions. */                                \
  static void kc__rw_native_##sfx(const kc__rw_plan* plan, const ctype* x, ctype init,   \
                                  ctype* y, int64_t begin, int64_t end) {                \
    int32_t rank = plan->outer_rank;                                                     \
    int64_t row = plan->row;                                                             \
    int64_t o_idx[KC__RW_MAX_RANK];                                                      \
    kc__rw_unravel(begin, plan->win.out, rank, o_idx);                                  \
    for (int64_t o = begin; o < end; ++o) {                                              \
      ctype* acc = y + o * row;                                                          \
      for (int64_t j = 0; j < row; ++j) acc[j] = init;                                   \
      int64_t w_idx[KC__RW_MAX_RANK];                                                    \
      for (int32_t d = 0; d < rank; ++d) w_idx[d] = 0;                                   \
      for (int64_t w = 0; w < plan->outer_window_count; ++w) {                           \
        int64_t off = kc__rw_offset(plan, rank, o_idx, w_idx);                           \
        if (off >= 0) kc__rw_fold_##sfx(plan->op, acc, x + off, row);                    \
        kc__rw_next(w_idx, plan->win.size, rank);                                            \
      }                                                                                  \
      kc__rw_next(o_idx, plan->win.out, rank);                                          \
    }                                                                                    \
  }
KC__ETYPES(KC__RW_FOLD)
#undef KC__RW_FOLD

typedef struct kc__rw_native_args {
  const kc__rw_plan* plan;
  const void* x;
  const void* init;
  void* y;
} kc__rw_native_args;

static void kc__rw_native_range(void* ctx, int64_t begin, int64_t end) {
  const kc__rw_native_args* a = ctx;
  switch (a->plan->type) {
#define KC__RW_CASE(sfx, ctype, code, bits)                                            \
  case KC__E_##sfx: {                                                               \
    ctype init;                                                                        \
    memcpy(&init, a->init, sizeof init);                                               \
    kc__rw_native_##sfx(a->plan, (const ctype*)a->x, init, (ctype*)a->y, begin, end); \
    break;                                                                             \
  }
    KC__ETYPES(KC__RW_CASE)
#undef KC__RW_CASE
    default:
      break;
  }
}

/* ---- the general path ---------------------------------------------------------- */

/* Every output element with the reducer's computation: accumulators in
 * slots, the reducer's results in others, copied back after each step
 * (the reducer may not write over its inputs). */
static kc_status* kc__rw_general(const kc__rw_plan* plan, void* const* outs,
                                 const void* const* ins) {
  size_t n = plan->n;
  int32_t rank = plan->win.dims;
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
  for (int64_t o = 0; o < plan->out_count; ++o) {
    for (size_t k = 0; k < n; ++k) memcpy(acc + k * KC__RW_SLOT, ins[n + k], plan->esize[k]);
    int64_t w_idx[KC__RW_MAX_RANK];
    for (int32_t d = 0; d < rank; ++d) w_idx[d] = 0;
    for (int64_t w = 0; w < plan->window_count; ++w) {
      int64_t off = kc__rw_offset(plan, rank, o_idx, w_idx);
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
      kc__rw_next(w_idx, plan->win.size, rank);
    }
    for (size_t k = 0; k < n; ++k) {
      memcpy((char*)outs[k] + (size_t)o * plan->esize[k], acc + k * KC__RW_SLOT, plan->esize[k]);
    }
    kc__rw_next(o_idx, plan->win.out, rank);
  }
  return NULL;
}

/* Below this many element folds, one thread does the whole window. */
#define KC__RW_PARALLEL_WORK 65536

static kc_status* kc__rw_kernel(const kc__instr_kernel_ctx* ctx, void* out,
                                const void* const* ins) {
  const kc__rw_plan* plan = ctx->data;
  if (plan->out_count == 0) return NULL;
  if (plan->op == 0) {
    void* outs[KC__RW_MAX_OPERANDS];
    for (size_t k = 0; k < plan->n; ++k) outs[k] = plan->n == 1 ? out : ((void* const*)out)[k];
    return kc__rw_general(plan, outs, ins);
  }
  kc__rw_native_args args = {.plan = plan, .x = ins[0], .init = ins[1], .y = out};
  int64_t per_row = plan->outer_window_count * plan->row;
  kc_thread_pool* pool = ctx->pool;
  if (!pool && plan->out_count * plan->window_count >= KC__RW_PARALLEL_WORK) {
    pool = kc_thread_pool_get_default();
  }
  if (pool && plan->out_count * plan->window_count >= KC__RW_PARALLEL_WORK) {
    /* About a nanosecond an element fold. */
    kc_thread_pool_parallel_for(pool, plan->outer_count, per_row, kc__rw_native_range, &args);
  } else {
    kc__rw_native_range(&args, 0, plan->outer_count);
  }
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
