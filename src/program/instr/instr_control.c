/* while and conditional: called programs, compiled with the executable and
 * run on the state's buffers. */
#include <stdio.h>
#include <stdlib.h>

#include "internal/common.h"
#include "program/instr/instr.h"

/* ---- called programs -------------------------------------------------------- */

/* Computation k of `in` takes one parameter of shape `param` and gives
 * `result` (NULL: any). */
static kc_status* kc__check_called(const kc__instr* in, size_t k, const char* role,
                                   const kc_shape* param, const kc_shape* result) {
  const kc_program* c = in->computations[k];
  const char* name = kc_program_get_name(c);
  if (kc_program_get_parameter_count(c) != 1) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                      "%s '%s': expected 1 parameter, got %zu", role, name,
                      kc_program_get_parameter_count(c));
  }
  char w[256], g[256];
  const kc_shape* got = kc_program_get_parameter_shape(c, 0);
  if (!kc_shape_equal(got, param)) {
    kc_shape_format(param, w, sizeof w);
    kc_shape_format(got, g, sizeof g);
    return kc__instr_error(in, KC_INVALID_ARGUMENT, "%s '%s': expected a parameter of %s, got %s",
                      role, name, w, g);
  }
  got = kc_program_get_result_shape(c);
  if (result && !kc_shape_equal(got, result)) {
    kc_shape_format(result, w, sizeof w);
    kc_shape_format(got, g, sizeof g);
    return kc__instr_error(in, KC_INVALID_ARGUMENT, "%s '%s': expected a result of %s, got %s",
                      role, name, w, g);
  }
  return NULL;
}

/* What the kernels of while and conditional run: the called programs,
 * compiled, and the leaves of the instruction's result. */
typedef struct kc__control_plan {
  kc_executable** exes; /* one per computation */
  size_t num_exes;
  const kc_shape** leaves; /* the result's leaf shapes, in pre-order */
  size_t num_leaves;
} kc__control_plan;

static void kc__control_plan_free(void* thing) {
  kc__control_plan* plan = thing;
  for (size_t i = 0; i < plan->num_exes; ++i) kc_executable_destroy(plan->exes[i]);
  kc__free(plan->exes);
  kc__free(plan->leaves);
  kc__free(plan);
}

static kc_status* kc__control_prepare(const kc_program* p, const kc__instr* in,
                                      const kc__prepare_ctx* ctx, const void** out) {
  KC__UNUSED(p);
  kc__control_plan* plan = kc__calloc(1, sizeof *plan);
  size_t leaves = kc_shape_get_leaf_count(in->shape);
  if (plan) {
    plan->exes = kc__calloc(in->num_computations, sizeof *plan->exes);
    plan->leaves = kc__calloc(leaves + 1, sizeof *plan->leaves);
  }
  kc_status* st = NULL;
  if (!plan || !plan->exes || !plan->leaves) {
    st = kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  }
  if (plan && plan->leaves) kc__shape_leaves(in->shape, plan->leaves, &plan->num_leaves);
  for (size_t k = 0; !st && k < in->num_computations; ++k) {
    st = kc__prepare_compile(ctx, in->computations[k], &plan->exes[k]);
    if (!st) plan->num_exes++;
  }
  if (st) {
    if (plan) kc__control_plan_free(plan);
    char where[320];
    kc__instr_where(in, where, sizeof where);
    return kc_status_add_context(st, "%s", where);
  }
  KC_RETURN_IF_ERROR(kc__executable_own_state(ctx->exe, plan, kc__control_plan_free));
  *out = plan;
  return NULL;
}

/* The leaf addresses of a value held at `at` (a buffer, or for a tuple its
 * pointer table), in pre-order. */
static void kc__value_leaves(const kc_shape* s, const void* at, void** out, size_t* n) {
  if (!kc_shape_is_tuple(s)) {
    out[(*n)++] = (void*)(uintptr_t)at;
    return;
  }
  void* const* table = at;
  for (size_t i = 0; i < kc_shape_get_tuple_size(s); ++i) {
    kc__value_leaves(kc_shape_get_element(s, i), table[i], out, n);
  }
}

static void kc__leaf_tensor(const kc_shape* s, void* data, DLTensor* t) {
  memset(t, 0, sizeof *t);
  t->data = data;
  t->device.device_type = kDLCPU;
  t->ndim = kc_shape_get_rank(s);
  t->dtype = kc_shape_get_dtype(s);
  t->shape = (int64_t*)(uintptr_t)kc_shape_get_dims(s);
}

/* Runs `exe` on the leaves `args` (shapes `shapes`) and copies its outputs
 * into `results`; with `results` NULL, returns its one pred output in
 * *out_pred instead. */
static kc_status* kc__run_called(const kc_executable* exe, const kc_shape* const* shapes,
                                 void* const* args, size_t n, void* const* results,
                                 const kc_shape* const* result_shapes, size_t num_results,
                                 bool* out_pred) {
  DLTensor local[16];
  const DLTensor* local_ptrs[16];
  DLTensor* tensors = n <= 16 ? local : kc__malloc(n * sizeof *tensors);
  const DLTensor** ptrs = n <= 16 ? local_ptrs : kc__malloc(n * sizeof *ptrs);
  kc_tensor* out_local[16];
  size_t nout = results ? num_results : 1;
  kc_tensor** outs = nout <= 16 ? out_local : kc__calloc(nout, sizeof *outs);
  kc_status* st = NULL;
  if (!tensors || !ptrs || !outs) {
    st = kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  } else {
    for (size_t i = 0; i < n; ++i) {
      kc__leaf_tensor(shapes[i], args[i], &tensors[i]);
      ptrs[i] = &tensors[i];
    }
    st = kc_executable_execute(exe, ptrs, n, NULL, outs);
  }
  if (!st) {
    if (results) {
      for (size_t i = 0; i < nout; ++i) {
        memcpy(results[i], kc_tensor_get_dltensor(outs[i])->data,
               kc_shape_get_byte_size(result_shapes[i]));
      }
    } else {
      *out_pred = *(const uint8_t*)kc_tensor_get_dltensor(outs[0])->data != 0;
    }
    for (size_t i = 0; i < nout; ++i) kc_object_release(KC_OBJECT(outs[i]));
  }
  if (tensors != local) kc__free(tensors);
  if (ptrs != local_ptrs) kc__free((void*)ptrs);
  if (outs != out_local) kc__free(outs);
  return st;
}

/* ---- while -------------------------------------------------------------------- */

static kc_status* kc__while_verify(const kc_program* p, const kc__instr* in) {
  const kc_shape* state = kc__instr_operand(p, in, 0);
  if (!kc_shape_equal(state, in->shape)) {
    char w[256], g[256];
    kc_shape_format(state, w, sizeof w);
    kc_shape_format(in->shape, g, sizeof g);
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                      "while: expected a result of its operand's shape %s, got %s", w, g);
  }
  kc_shape* pred = NULL;
  KC_RETURN_IF_ERROR(kc_shape_parse(KC_SV_LIT("pred[]"), &pred));
  kc_status* st = kc__check_called(in, 0, "condition", state, pred);
  kc_shape_destroy(pred);
  if (!st) st = kc__check_called(in, 1, "body", state, state);
  return st;
}

/* The loop runs the condition and the body (kc__executable_run_held)
 * on two sets of state buffers in turn (the result's own and one scratch
 * block), so that an iteration allocates nothing: the body reads one set
 * and writes the other, which is then the state. */
typedef struct kc__while_state {
  DLTensor* t[2];     /* the leaves of each set, as tensors */
  const DLTensor** p[2];
} kc__while_state;

static void kc__while_tensors(const kc__control_plan* plan, void* const* leaves, DLTensor* t,
                              const DLTensor** p) {
  for (size_t i = 0; i < plan->num_leaves; ++i) {
    kc__leaf_tensor(plan->leaves[i], leaves[i], &t[i]);
    p[i] = &t[i];
  }
}

/* The condition and the body each hold their run state for the whole
 * loop (kc__executable_hold): no lock an iteration. One whose
 * temporaries and block take at most this many bytes holds a second, one
 * per set of state buffers, so that no iteration rewrites the addresses
 * of the state in it; a larger one has work enough an iteration that the
 * rewrite does not count, and is not worth its memory twice. */
#define KC__WHILE_PAIR_BYTES ((size_t)256 << 10)

/* runs[s]: the run of `exe` for state set s (the same one twice, or two). */
static kc_status* kc__while_hold(const kc_executable* exe, struct kc__run** runs) {
  KC_RETURN_IF_ERROR(kc__executable_hold(exe, &runs[0]));
  runs[1] = runs[0];
  if (runs[0] && kc__executable_run_bytes(exe) <= KC__WHILE_PAIR_BYTES) {
    kc_status* st = kc__executable_hold(exe, &runs[1]);
    if (st) {
      kc__executable_unhold(exe, runs[0]);
      runs[0] = runs[1] = NULL;
      return st;
    }
  }
  return NULL;
}

static void kc__while_unhold(const kc_executable* exe, struct kc__run** runs) {
  kc__executable_unhold(exe, runs[0]);
  if (runs[1] != runs[0]) kc__executable_unhold(exe, runs[1]);
}

/* The fuzzing build (-DKCALL_FUZZ=ON) stops a loop after this many
 * iterations with RESOURCE_EXHAUSTED: a mutated bound or step makes a
 * loop run for as long as it likes, which libFuzzer reports as a hang.
 * Every other build runs a loop until its condition says stop. */
#ifdef KCALL_FUZZ_BUILD
#define KC__WHILE_MAX_ITERATIONS UINT64_C(256)
#else
#define KC__WHILE_MAX_ITERATIONS UINT64_MAX
#endif

static kc_status* kc__while_kernel(const kc__instr_kernel_ctx* ctx, void* out,
                                   const void* const* ins) {
  const kc__control_plan* plan = ctx->data;
  size_t n = plan->num_leaves;
  size_t scratch_bytes = 0;
  for (size_t i = 0; i < n; ++i) {
    scratch_bytes += (kc_shape_get_byte_size(plan->leaves[i]) + 63) & ~(size_t)63;
  }
  /* One allocation: the leaf addresses, the tensors of both sets, their
   * pointers, then the scratch set (aligned as kcall aligns buffers). */
  size_t head = (3 * n * sizeof(void*) + 2 * n * sizeof(DLTensor) + 2 * n * sizeof(void*) + 63) &
                ~(size_t)63;
  char* mem = kc__aligned_alloc(64, head + scratch_bytes + 64);
  if (!mem) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  void** from = (void**)(void*)mem;
  void** state = from + n;
  void** spare = state + n;
  kc__while_state w;
  w.t[0] = (DLTensor*)(void*)(spare + n);
  w.t[1] = w.t[0] + n;
  w.p[0] = (const DLTensor**)(void*)(w.t[1] + n);
  w.p[1] = w.p[0] + n;
  size_t k = 0, m = 0, off = 0;
  kc__value_leaves(ctx->instr->shape, ins[0], from, &k);
  kc__value_leaves(ctx->instr->shape, out, state, &m);
  for (size_t i = 0; i < n; ++i) {
    if (from[i] != state[i]) memcpy(state[i], from[i], kc_shape_get_byte_size(plan->leaves[i]));
    spare[i] = mem + head + off;
    off += (kc_shape_get_byte_size(plan->leaves[i]) + 63) & ~(size_t)63;
  }
  kc__while_tensors(plan, state, w.t[0], w.p[0]);
  kc__while_tensors(plan, spare, w.t[1], w.p[1]);
  uint8_t go = 0;
  void* pred_out = &go;
  void* const* sets[2] = {state, spare};
  struct kc__run* cond_runs[2] = {NULL, NULL};
  struct kc__run* body_runs[2] = {NULL, NULL};
  kc_status* st = kc__while_hold(plan->exes[0], cond_runs);
  if (!st) {
    st = kc__while_hold(plan->exes[1], body_runs);
    if (st) kc__while_unhold(plan->exes[0], cond_runs);
  }
  if (st) {
    kc__free(mem);
    return st;
  }
  int cur = 0; /* the set that holds the state */
  for (uint64_t iteration = 0;; ++iteration) {
    /* From the third iteration on, a run per set sees its set again. */
    bool again = iteration >= 2;
    st = kc__executable_run_held(plan->exes[0], cond_runs[cur], w.p[cur], &pred_out,
                                 again && cond_runs[0] != cond_runs[1]);
    if (st) {
      st = kc_status_add_context(st, "in the condition, iteration %llu",
                                 (unsigned long long)iteration);
      break;
    }
    if (!go) break;
    if (iteration == KC__WHILE_MAX_ITERATIONS) {
      st = kc_status_create(KC_RESOURCE_EXHAUSTED,
                            "while: more than %llu iterations, this build's limit",
                            (unsigned long long)KC__WHILE_MAX_ITERATIONS);
      break;
    }
    st = kc__executable_run_held(plan->exes[1], body_runs[cur], w.p[cur], sets[1 - cur],
                                 again && body_runs[0] != body_runs[1]);
    if (st) {
      st = kc_status_add_context(st, "in the body, iteration %llu",
                                 (unsigned long long)iteration);
      break;
    }
    cur = 1 - cur;
  }
  kc__while_unhold(plan->exes[0], cond_runs);
  kc__while_unhold(plan->exes[1], body_runs);
  if (!st && cur == 1) {
    for (size_t i = 0; i < n; ++i) {
      memcpy(state[i], spare[i], kc_shape_get_byte_size(plan->leaves[i]));
    }
  }
  kc__free(mem);
  return st;
}

/* ---- conditional ---------------------------------------------------------------- */

static kc_status* kc__conditional_verify(const kc_program* p, const kc__instr* in) {
  const kc_shape* index = kc__instr_operand(p, in, 0);
  DLDataType t = kc_shape_get_dtype(index);
  bool is_pred = !kc_shape_is_tuple(index) && t.code == kDLBool;
  bool is_s32 = !kc_shape_is_tuple(index) && t.code == kDLInt && t.bits == 32;
  if ((!is_pred && !is_s32) || kc_shape_get_rank(index) != 0) {
    char g[256];
    kc_shape_format(index, g, sizeof g);
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                      "conditional: operand 0: expected pred[] or s32[], got %s", g);
  }
  size_t branches = in->num_computations;
  if (is_pred && branches != 2) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                      "conditional on a pred: expected 2 computations (true, false), got %zu",
                      branches);
  }
  if (in->num_operands != branches + 1) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                      "conditional: expected %zu operands (the index and one per branch), "
                      "got %zu",
                      branches + 1, in->num_operands);
  }
  for (size_t k = 0; k < branches; ++k) {
    char role[32];
    snprintf(role, sizeof role, "branch %zu", k);
    KC_RETURN_IF_ERROR(kc__check_called(in, k, role, kc__instr_operand(p, in, k + 1), in->shape));
  }
  return NULL;
}

static kc_status* kc__conditional_kernel(const kc__instr_kernel_ctx* ctx, void* out,
                                         const void* const* ins) {
  const kc__control_plan* plan = ctx->data;
  const kc_program* p = ctx->program;
  const kc__instr* in = ctx->instr;
  size_t branch;
  if (kc_shape_get_dtype(kc__instr_operand(p, in, 0)).code == kDLBool) {
    branch = *(const uint8_t*)ins[0] ? 0 : 1;
  } else {
    int32_t i = *(const int32_t*)ins[0];
    /* As XLA: an index out of range runs the last branch. */
    branch = i < 0 || (size_t)i >= plan->num_exes ? plan->num_exes - 1 : (size_t)i;
  }
  const kc_shape* arg = kc__instr_operand(p, in, branch + 1);
  size_t n = kc_shape_get_leaf_count(arg);
  const kc_shape** shapes = kc__calloc(n + 1, sizeof *shapes);
  void** args = kc__calloc(n + 1, sizeof *args);
  void** results = kc__calloc(plan->num_leaves + 1, sizeof *results);
  kc_status* st = NULL;
  if (!shapes || !args || !results) {
    st = kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  } else {
    size_t k = 0, m = 0, r = 0;
    kc__shape_leaves(arg, shapes, &k);
    kc__value_leaves(arg, ins[branch + 1], args, &m);
    kc__value_leaves(in->shape, out, results, &r);
    st = kc__run_called(plan->exes[branch], shapes, args, n, results, plan->leaves,
                        plan->num_leaves, NULL);
    if (st) st = kc_status_add_context(st, "in branch %zu", branch);
  }
  kc__free(shapes);
  kc__free(args);
  kc__free(results);
  return st;
}

/* ---- the table ------------------------------------------------------------------ */

static const char* const kc__no_attrs[] = {NULL};
static const char* const kc__while_computations[] = {"condition", "body", NULL};
static const char* const kc__conditional_computations[] = {
    "true_computation", "false_computation", "branch_computations", NULL};

const kc__instr_def kc__instr_control[] = {
    {.op = KC_OP_WHILE, .name = "while", .min_operands = 1, .max_operands = 1,
     .num_computations = 2, .attrs = kc__no_attrs, .computation_attrs = kc__while_computations,
     .verify = kc__while_verify, .prepare = kc__control_prepare, .kernel = kc__while_kernel},
    {.op = KC_OP_CONDITIONAL, .name = "conditional", .min_operands = 2, .max_operands = -1,
     .num_computations = -1, .attrs = kc__no_attrs,
     .computation_attrs = kc__conditional_computations, .verify = kc__conditional_verify,
     .prepare = kc__control_prepare, .kernel = kc__conditional_kernel},
};
const size_t kc__instr_control_count = KC__ARRAY_SIZE(kc__instr_control);
