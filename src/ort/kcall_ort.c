/* libkcall_ort: kcall ops as ONNX Runtime custom ops (docs/onnxruntime.md).
 *
 * ONNX Runtime loads this library (SessionOptions.register_custom_ops_library,
 * or RegisterCustomOpsLibrary_V2 in C) and calls RegisterCustomOps, which
 * adds every kcall op registered at that moment to a custom-op domain
 * ("kcall" unless kcall_ort_set_domain named another). Each op becomes
 * one OrtCustomOp, or one per dtype of the type attr its inputs are typed
 * by when that attr lists its dtypes (overloads, which ONNX Runtime types
 * and checks itself):
 *   - inputs and outputs from the op's specs: a fixed dtype is that ONNX
 *     type, an open type attr any type, an "N * T" or list input the last,
 *     variadic, input;
 *   - output types and shapes from the op's shape function, when the
 *     session is created (symbolic dims where the op declares its shape
 *     function symbolic; else the rank with unknown dims);
 *   - attributes read from the node by the op's attr specs (one of
 *     another kind is refused);
 *   - a kernel, made when the session is (checking the node against the
 *     op, so a node kcall refuses fails there), that lends ONNX Runtime's
 *     tensors to kc_op_call_into as DLTensors (no copies) and runs its
 *     loops on the session's intra-op threads.
 * The custom ops and domains live until the process ends (ONNX Runtime
 * requires them to outlive every session using them; a later registration
 * of the same ops reuses them), and each holds a reference to its kcall
 * op, so the plugin that registered it stays loaded. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ort/ort_internal.h"

/* ---- state ---------------------------------------------------------------- */

static pthread_mutex_t kc__ort_lock = PTHREAD_MUTEX_INITIALIZER;
static char* kc__ort_domain_name;
static kc__ort_api kc__ort_table;
static bool kc__ort_table_ready;

/* Sets the domain the next RegisterCustomOps adds the ops to (copied).
 * Returns 0, or -1 when out of memory. */
KC__ORT_EXPORT int kcall_ort_set_domain(const char* domain);
int kcall_ort_set_domain(const char* domain) {
  char* copy = strdup(domain && *domain ? domain : "kcall");
  if (!copy) return -1;
  pthread_mutex_lock(&kc__ort_lock);
  free(kc__ort_domain_name);
  kc__ort_domain_name = copy;
  pthread_mutex_unlock(&kc__ort_lock);
  return 0;
}

/* ---- types ---------------------------------------------------------------- */

int kc__ort_type_of(DLDataType t) {
  if (t.lanes != 1) return KC__ONNX_UNDEFINED;
  switch (t.code) {
    case kDLFloat:
      return t.bits == 32 ? KC__ONNX_FLOAT
             : t.bits == 64 ? KC__ONNX_DOUBLE
             : t.bits == 16 ? KC__ONNX_FLOAT16
                            : KC__ONNX_UNDEFINED;
    case kDLBfloat: return t.bits == 16 ? KC__ONNX_BFLOAT16 : KC__ONNX_UNDEFINED;
    case kDLInt:
      return t.bits == 8 ? KC__ONNX_INT8
             : t.bits == 16 ? KC__ONNX_INT16
             : t.bits == 32 ? KC__ONNX_INT32
             : t.bits == 64 ? KC__ONNX_INT64
                            : KC__ONNX_UNDEFINED;
    case kDLUInt:
      return t.bits == 8 ? KC__ONNX_UINT8
             : t.bits == 16 ? KC__ONNX_UINT16
             : t.bits == 32 ? KC__ONNX_UINT32
             : t.bits == 64 ? KC__ONNX_UINT64
                            : KC__ONNX_UNDEFINED;
    case kDLBool: return t.bits == 8 ? KC__ONNX_BOOL : KC__ONNX_UNDEFINED;
    case kDLComplex:
      return t.bits == 64 ? KC__ONNX_COMPLEX64
             : t.bits == 128 ? KC__ONNX_COMPLEX128
                             : KC__ONNX_UNDEFINED;
    default: return KC__ONNX_UNDEFINED;
  }
}

/* The DLPack dtype of an ONNX element type; false for one kcall has no
 * dtype for (strings, 8-bit and smaller floats). */
bool kc__ort_dtype_of(int onnx, DLDataType* out) {
  static const struct {
    int onnx;
    uint8_t code, bits;
  } map[] = {
      {KC__ONNX_FLOAT, kDLFloat, 32},     {KC__ONNX_DOUBLE, kDLFloat, 64},
      {KC__ONNX_FLOAT16, kDLFloat, 16},   {KC__ONNX_BFLOAT16, kDLBfloat, 16},
      {KC__ONNX_INT8, kDLInt, 8},         {KC__ONNX_INT16, kDLInt, 16},
      {KC__ONNX_INT32, kDLInt, 32},       {KC__ONNX_INT64, kDLInt, 64},
      {KC__ONNX_UINT8, kDLUInt, 8},       {KC__ONNX_UINT16, kDLUInt, 16},
      {KC__ONNX_UINT32, kDLUInt, 32},     {KC__ONNX_UINT64, kDLUInt, 64},
      {KC__ONNX_BOOL, kDLBool, 8},        {KC__ONNX_COMPLEX64, kDLComplex, 64},
      {KC__ONNX_COMPLEX128, kDLComplex, 128},
  };
  for (size_t i = 0; i < sizeof map / sizeof map[0]; ++i) {
    if (map[i].onnx == onnx) {
      *out = (DLDataType){.code = map[i].code, .bits = map[i].bits, .lanes = 1};
      return true;
    }
  }
  return false;
}

/* ---- statuses ---------------------------------------------------------------- */

/* An OrtStatus carrying kcall's message, with the op's and node's names.
 * Takes `st`. */
kc__ort_status* kc__ort_error(const kc__ort_api* api, const kc__ort_op* op,
                                     kc_status* st) {
  int code = KC__ORT_RUNTIME_EXCEPTION;
  switch (kc_status_get_code(st)) {
    case KC_INVALID_ARGUMENT:
    case KC_OUT_OF_RANGE: code = KC__ORT_INVALID_ARGUMENT; break;
    case KC_UNIMPLEMENTED: code = KC__ORT_NOT_IMPLEMENTED; break;
    default: break;
  }
  char message[2048];
  snprintf(message, sizeof message, "kcall op '%s': %s", op ? op->name : "?",
           kc_status_get_message(st));
  kc_status_destroy(st);
  return api->create_status(code, message);
}

kc__ort_status* kc__ort_fail(const kc__ort_api* api, const char* what) {
  return api->create_status(KC__ORT_FAIL, what);
}

/* ---- tensors ------------------------------------------------------------------ */

/* An ONNX Runtime tensor as a DLTensor (borrowed data; dims into `dims`). */
static kc__ort_status* kc__ort_tensor_view(const kc__ort_op* op, const kc__ort_value* value,
                                           int64_t* dims, DLTensor* out) {
  const kc__ort_api* api = op->api;
  kc__ort_tensor_info* info = NULL;
  kc__ort_status* st = api->get_tensor_type_and_shape(value, &info);
  int type = 0;
  size_t rank = 0;
  if (!st) st = api->get_tensor_element_type(info, &type);
  if (!st) st = api->get_dimensions_count(info, &rank);
  if (!st && rank > KC_TENSOR_MAX_NDIM) {
    st = kc__ort_fail(api, "kcall: a tensor of more dimensions than kcall takes");
  }
  if (!st) st = api->get_dimensions(info, dims, rank);
  api->release_tensor_info(info);
  if (st) return st;
  void* data = NULL;
  st = api->get_tensor_mutable_data((kc__ort_value*)value, &data);
  if (st) return st;
  memset(out, 0, sizeof *out);
  if (!kc__ort_dtype_of(type, &out->dtype)) {
    char message[320];
    snprintf(message, sizeof message,
             "kcall op '%s': an input of ONNX element type %d, which kcall has no dtype for",
             op->name, type);
    return api->create_status(KC__ORT_INVALID_ARGUMENT, message);
  }
  out->data = data;
  out->device = (DLDevice){.device_type = kDLCPU, .device_id = 0};
  out->ndim = (int32_t)rank;
  out->shape = dims;
  return NULL;
}

/* ---- ONNX Runtime's intra-op pool as kcall's ------------------------------- */

/* The kernels' parallel loops run on the pool of the session running them
 * (KernelContext_ParallelFor), so a session's intra-op thread count holds
 * for kcall ops too and no second set of threads competes with ONNX
 * Runtime's. One kcall pool for the process (kc_thread_pool_create_on),
 * whose loops go to the context of the kernel running on the calling
 * thread; a loop started elsewhere (a thread of the kernel's own) runs on
 * the calling thread. */
static _Thread_local const kc__ort_kernel_context* kc__ort_running;
static kc_thread_pool* kc__ort_pool;
static pthread_once_t kc__ort_pool_once = PTHREAD_ONCE_INIT;

typedef struct kc__ort_loop {
  kc_range_fn fn;
  void* ctx;
  int64_t total, grain;
} kc__ort_loop;

static void kc__ort_loop_range(void* data, size_t i) {
  const kc__ort_loop* l = data;
  int64_t begin = (int64_t)i * l->grain;
  int64_t end = begin + l->grain < l->total ? begin + l->grain : l->total;
  l->fn(l->ctx, begin, end);
}

static int kc__ort_parallel_for(void* self, int64_t total, int64_t grain, kc_range_fn fn,
                                void* ctx) {
  (void)self;
  const kc__ort_kernel_context* running = kc__ort_running;
  if (!running) return 1; /* not inside a kernel: kcall runs it here */
  kc__ort_loop l = {.fn = fn, .ctx = ctx, .total = total, .grain = grain > 0 ? grain : 1};
  size_t ranges = (size_t)((total + l.grain - 1) / l.grain);
  kc__ort_status* st =
      kc__ort_table.kernel_context_parallel_for(running, kc__ort_loop_range, ranges, 0, &l);
  if (!st) return 0;
  kc__ort_table.release_status(st); /* refused before it ran anything */
  return 1;
}

static void kc__ort_pool_make(void) {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  kc_thread_pool_backend backend = {
      .struct_size = sizeof backend,
      .self = NULL,
      .size = (int32_t)(cores > 0 && cores < 4096 ? cores : 1),
      .parallel_for = kc__ort_parallel_for,
  };
  kc_status* st = kc_thread_pool_create_on(&backend, &kc__ort_pool);
  if (st) {
    kc_status_destroy(st); /* out of memory: kcall's own pool serves */
    kc__ort_pool = NULL;
  }
}

/* ---- the custom op's callbacks --------------------------------------------- */

static const char* kc__ort_get_name(const void* op) { return KC__ORT_OP(op)->name; }

static const char* kc__ort_get_provider(const void* op) {
  (void)op;
  return NULL; /* the CPU execution provider */
}

static int kc__ort_input_type(const void* op, size_t i) {
  const kc__ort_op* o = KC__ORT_OP(op);
  return i < (size_t)o->num_inputs ? o->input_types[i] : KC__ONNX_UNDEFINED;
}

static size_t kc__ort_input_count(const void* op) { return (size_t)KC__ORT_OP(op)->num_inputs; }

static int kc__ort_output_type(const void* op, size_t i) {
  const kc__ort_op* o = KC__ORT_OP(op);
  return i < (size_t)o->num_outputs ? o->output_types[i] : KC__ONNX_UNDEFINED;
}

static size_t kc__ort_output_count(const void* op) {
  return (size_t)KC__ORT_OP(op)->num_outputs;
}

static int kc__ort_input_characteristic(const void* op, size_t i) {
  const kc__ort_op* o = KC__ORT_OP(op);
  return o->variadic_input && i + 1 == (size_t)o->num_inputs ? KC__ORT_VARIADIC
                                                               : KC__ORT_REQUIRED;
}

static int kc__ort_output_characteristic(const void* op, size_t i) {
  (void)op;
  (void)i;
  return KC__ORT_REQUIRED;
}

static int kc__ort_memory_type(const void* op, size_t i) {
  (void)op;
  (void)i;
  return 0; /* OrtMemTypeDefault */
}

static int kc__ort_variadic_min_arity(const void* op) {
  (void)op;
  return 1;
}

static int kc__ort_variadic_input_homogeneity(const void* op) {
  return KC__ORT_OP(op)->homogeneous ? 1 : 0;
}

static int kc__ort_variadic_output_homogeneity(const void* op) {
  (void)op;
  return 1;
}

static kc__ort_status* kc__ort_create_kernel(const void* op, const void* api_table,
                                             const kc__ort_kernel_info* info, void** out) {
  (void)api_table; /* the table read at registration serves every version */
  const kc__ort_op* o = KC__ORT_OP(op);
  kc__ort_kernel* k = calloc(1, sizeof *k);
  if (!k) return kc__ort_fail(o->api, "kcall: out of memory creating a kernel");
  k->op = o;
  kc__ort_status* st = kc__ort_attrs_read(o, info, NULL, &k->attrs);
  if (!st) {
    st = kc__ort_check_node(o, info, &k->attrs);
    if (st) kc__ort_attrs_release(&k->attrs);
  }
  if (st) {
    free(k);
    return st;
  }
  *out = k;
  return NULL;
}

static void* kc__ort_create_kernel_v1(const void* op, const void* api,
                                      const kc__ort_kernel_info* info) {
  (void)op;
  (void)api;
  (void)info;
  return NULL; /* never used: version 17 makes ONNX Runtime call the V2 */
}

static void kc__ort_kernel_destroy(void* kernel) {
  kc__ort_kernel* k = kernel;
  if (!k) return;
  kc__ort_attrs_release(&k->attrs);
  free(k);
}

static void kc__ort_compute_v1(void* kernel, kc__ort_kernel_context* ctx) {
  (void)kernel;
  (void)ctx; /* never used: version 17 makes ONNX Runtime call the V2 */
}

static kc__ort_status* kc__ort_compute(void* kernel, kc__ort_kernel_context* ctx) {
  const kc__ort_kernel* k = kernel;
  const kc__ort_op* o = k->op;
  const kc__ort_api* api = o->api;
  size_t n = 0;
  kc__ort_status* st = api->kernel_context_get_input_count(ctx, &n);
  if (st) return st;
  if (n > KC__ORT_MAX_ARGS) return kc__ort_fail(api, "kcall: more than 64 inputs");
  int64_t in_dims[KC__ORT_MAX_ARGS][KC_TENSOR_MAX_NDIM];
  DLTensor in_views[KC__ORT_MAX_ARGS];
  const DLTensor* ins[KC__ORT_MAX_ARGS];
  for (size_t i = 0; i < n; ++i) {
    const kc__ort_value* v = NULL;
    st = api->kernel_context_get_input(ctx, i, &v);
    if (!st) st = kc__ort_tensor_view(o, v, in_dims[i], &in_views[i]);
    if (st) return st;
    ins[i] = &in_views[i];
  }
  kc_op_output_info infos[KC__ORT_MAX_ARGS];
  int32_t num_out = 0;
  kc_status* kst = kc_op_infer(o->op, ins, (int32_t)n, k->attrs.items, k->attrs.count, infos,
                               KC__ORT_MAX_ARGS, &num_out);
  if (kst) return kc__ort_error(api, o, kst);
  int64_t out_dims[KC__ORT_MAX_ARGS][KC_TENSOR_MAX_NDIM];
  DLTensor out_views[KC__ORT_MAX_ARGS];
  DLTensor* outs[KC__ORT_MAX_ARGS];
  for (int32_t i = 0; i < num_out; ++i) {
    if (infos[i].rank < 0) {
      return kc__ort_error(api, o,
                           kc_status_create(KC_UNIMPLEMENTED,
                                            "output %d: the shape function leaves its shape "
                                            "unknown, and ONNX Runtime allocates outputs "
                                            "before the kernel runs",
                                            i));
    }
    kc__ort_value* v = NULL;
    st = api->kernel_context_get_output(ctx, (size_t)i, infos[i].dims, (size_t)infos[i].rank,
                                        &v);
    if (!st) st = kc__ort_tensor_view(o, v, out_dims[i], &out_views[i]);
    if (st) return st;
    outs[i] = &out_views[i];
  }
  pthread_once(&kc__ort_pool_once, kc__ort_pool_make);
  kc_op_call_options options = {.struct_size = sizeof options, .thread_pool = kc__ort_pool};
  const kc__ort_kernel_context* outer = kc__ort_running;
  kc__ort_running = ctx;
  kst = kc_op_call_into(o->op, ins, (int32_t)n, k->attrs.items, k->attrs.count, &options, outs,
                        num_out);
  kc__ort_running = outer;
  return kst ? kc__ort_error(api, o, kst) : NULL;
}

/* ---- registration -------------------------------------------------------------- */

/* Fills `o` from the op; false (and why in `why`) for an op ONNX Runtime
 * cannot take. */
static bool kc__ort_op_make(const kc__ort_api* api, const kc_op* op, kc__ort_op* o,
                            char* why, size_t cap) {
  memset(o, 0, sizeof *o);
  o->api = api;
  o->op = op;
  kc_string_view name = kc_op_get_name(op);
  if (name.size >= sizeof o->name) {
    snprintf(why, cap, "its name is longer than %zu characters", sizeof o->name - 1);
    return false;
  }
  memcpy(o->name, name.data, name.size);
  o->num_inputs = kc_op_get_input_count(op);
  o->num_outputs = kc_op_get_output_count(op);
  o->num_attrs = kc_op_get_attr_count(op);
  if (o->num_inputs > KC__ORT_MAX_ARGS || o->num_outputs > KC__ORT_MAX_ARGS ||
      o->num_attrs > KC__ORT_MAX_ATTRS) {
    snprintf(why, cap, "more than %d inputs or outputs or %d attrs", KC__ORT_MAX_ARGS,
             KC__ORT_MAX_ATTRS);
    return false;
  }
  for (int32_t i = 0; i < o->num_attrs; ++i) {
    const char* spec = kc_op_get_attr_spec(op, i);
    if (!kc__ort_attr_kind_of(spec, o->attrs[i].name, sizeof o->attrs[i].name,
                              &o->attrs[i].kind)) {
      snprintf(why, cap, "attr %d's name is longer than %zu characters", i,
               sizeof o->attrs[i].name - 1);
      return false;
    }
    if (o->attrs[i].kind == KC__ORT_KIND_TYPE) kc__ort_attr_choices(spec, &o->attrs[i]);
  }
  for (int32_t i = 0; i < o->num_inputs; ++i) {
    bool list = false, homogeneous = false;
    const char* word = "";
    o->input_types[i] =
        kc__ort_arg_type(kc_op_get_input_spec(op, i), &list, &homogeneous, &word);
    o->input_attr[i] = o->input_types[i] == KC__ONNX_UNDEFINED ? kc__ort_attr_index(o, word) : -1;
    if (list && i + 1 != o->num_inputs) {
      snprintf(why, cap, "input %d is a list and not the last (only the last may vary)", i);
      return false;
    }
    if (list) {
      o->variadic_input = true;
      o->homogeneous = homogeneous;
    }
  }
  for (int32_t i = 0; i < o->num_outputs; ++i) {
    bool list = false, homogeneous = false;
    const char* word = "";
    o->output_types[i] =
        kc__ort_arg_type(kc_op_get_output_spec(op, i), &list, &homogeneous, &word);
    o->output_attr[i] =
        o->output_types[i] == KC__ONNX_UNDEFINED ? kc__ort_attr_index(o, word) : -1;
    if (list) {
      snprintf(why, cap, "output %d is a list", i);
      return false;
    }
  }
  kc__ort_custom_op* c = &o->ort;
  c->version = KC__ORT_API_VERSION;
  c->create_kernel = kc__ort_create_kernel_v1;
  c->get_name = kc__ort_get_name;
  c->get_execution_provider_type = kc__ort_get_provider;
  c->get_input_type = kc__ort_input_type;
  c->get_input_type_count = kc__ort_input_count;
  c->get_output_type = kc__ort_output_type;
  c->get_output_type_count = kc__ort_output_count;
  c->kernel_compute = kc__ort_compute_v1;
  c->kernel_destroy = kc__ort_kernel_destroy;
  c->get_input_characteristic = kc__ort_input_characteristic;
  c->get_output_characteristic = kc__ort_output_characteristic;
  c->get_input_memory_type = kc__ort_memory_type;
  c->get_variadic_input_min_arity = kc__ort_variadic_min_arity;
  c->get_variadic_input_homogeneity = kc__ort_variadic_input_homogeneity;
  c->get_variadic_output_min_arity = kc__ort_variadic_min_arity;
  c->get_variadic_output_homogeneity = kc__ort_variadic_output_homogeneity;
  c->create_kernel_v2 = kc__ort_create_kernel;
  c->kernel_compute_v2 = kc__ort_compute;
  c->infer_output_shape = kc__ort_infer_shape;
  return true;
}

/* Adds `base`'s overloads to `domain`: one a combination of the choices of
 * the type attrs its inputs are typed by (each a copy of `base` with
 * those inputs' and outputs' types fixed, so ONNX Runtime checks and
 * infers types itself), or `base` alone when none has choices (its inputs
 * then take any type, and its outputs are typed by the shape function).
 * ONNX Runtime before 1.22 types a dynamically typed output only from a
 * single dynamically typed input: there, an overload that needs more is
 * not added (*made false, why in `why`). Each overload added holds a
 * reference to the op. */
static kc__ort_status* kc__ort_add_overloads(kc__ort_domain* domain, const kc__ort_op* base,
                                             int ort_minor, char* why, size_t cap,
                                             bool* made) {
  const kc__ort_api* api = base->api;
  int8_t varying[KC__ORT_MAX_ATTRS];
  int32_t num_varying = 0, total = 1;
  for (int32_t i = 0; i < base->num_inputs; ++i) {
    int8_t a = base->input_attr[i];
    if (a < 0 || base->attrs[a].num_choices == 0) continue;
    bool seen = false;
    for (int32_t j = 0; j < num_varying; ++j) seen = seen || varying[j] == a;
    if (seen) continue;
    if (total * base->attrs[a].num_choices > 64) break; /* too many: leave it open */
    varying[num_varying++] = a;
    total *= base->attrs[a].num_choices;
  }
  *made = false;
  for (int32_t c = 0; c < total; ++c) {
    kc__ort_op* o = malloc(sizeof *o);
    if (!o) return kc__ort_fail(api, "kcall: out of memory registering ops");
    *o = *base;
    /* Combination c: the mixed-radix digits of c, one a varying attr. */
    int chosen[KC__ORT_MAX_ATTRS];
    for (int32_t a = 0; a < o->num_attrs; ++a) chosen[a] = KC__ONNX_UNDEFINED;
    for (int32_t j = 0, rest = c; j < num_varying; ++j) {
      const kc__ort_attr_decl* d = &o->attrs[varying[j]];
      chosen[varying[j]] = d->choices[rest % d->num_choices];
      rest /= d->num_choices;
    }
    int dynamic_inputs = 0, dynamic_outputs = 0;
    for (int32_t i = 0; i < o->num_inputs; ++i) {
      if (o->input_attr[i] >= 0 && chosen[o->input_attr[i]] != KC__ONNX_UNDEFINED) {
        o->input_types[i] = chosen[o->input_attr[i]];
      }
      dynamic_inputs += o->input_types[i] == KC__ONNX_UNDEFINED;
    }
    for (int32_t i = 0; i < o->num_outputs; ++i) {
      if (o->output_attr[i] >= 0 && chosen[o->output_attr[i]] != KC__ONNX_UNDEFINED) {
        o->output_types[i] = chosen[o->output_attr[i]];
      }
      dynamic_outputs += o->output_types[i] == KC__ONNX_UNDEFINED;
    }
    if (ort_minor < 22 && dynamic_outputs > 0 && (dynamic_inputs != 1 || dynamic_outputs > 1)) {
      snprintf(why, cap,
               "ONNX Runtime 1.%d types a dynamically typed output only from a single "
               "dynamically typed input, and this op has %d such inputs and %d such outputs "
               "(ONNX Runtime 1.22 or newer takes it)",
               ort_minor, dynamic_inputs, dynamic_outputs);
      free(o);
      return NULL;
    }
    kc__ort_status* st = api->custom_op_domain_add(domain, o);
    if (st) {
      free(o);
      return st;
    }
    if (*made) kc_object_retain(KC_OBJECT(o->op)); /* each overload holds one */
    *made = true;
  }
  return NULL;
}

/* The function table, read once at its indices. */
static bool kc__ort_read_table(const void* const* table) {
  if (kc__ort_table_ready) return true;
#define KC__ORT_READ(index, name, ret, params) \
  memcpy(&kc__ort_table.name, &table[index], sizeof kc__ort_table.name);
  KC__ORT_FUNCTIONS(KC__ORT_READ)
#undef KC__ORT_READ
  kc__ort_table_ready = true;
  return true;
}

/* What the last RegisterCustomOps left out, and why (one op a line). */
static char kc__ort_skipped[4096];

/* The ops the last RegisterCustomOps could not offer, one "NAME: why" a
 * line (empty: none). Static storage, rewritten by each registration. */
KC__ORT_EXPORT const char* kcall_ort_skipped(void);
const char* kcall_ort_skipped(void) { return kc__ort_skipped; }

KC__ORT_EXPORT kc__ort_status* RegisterCustomOps(kc__ort_session_options* options,
                                                  const kc__ort_api_base* base);

/* A domain made by a registration, kept for the process's life (ONNX
 * Runtime requires it to outlive every session using it) and given again
 * to a later registration of the same domain name when the registered ops
 * are still the same ones (each overload holds its op, so an op pointer
 * seen again is the same op). */
typedef struct kc__ort_made {
  struct kc__ort_made* next;
  char* name;
  size_t num_ops;
  const kc_op** ops;
  kc__ort_domain* domain;
  char* skipped;
} kc__ort_made;

static kc__ort_made* kc__ort_domains;

/* The registered ops, each retained (the caller releases them). */
static kc__ort_status* kc__ort_list_ops(const kc__ort_api* api, const kc_op*** out_ops,
                                        size_t* out_count) {
  kc_array* names = NULL;
  kc_status* kst = kc_op_registry_list(NULL, kc_sv(""), &names);
  if (kst) return kc__ort_error(api, NULL, kst);
  size_t count = kc_array_get_size(names), n = 0;
  const kc_op** ops = calloc(count ? count : 1, sizeof *ops);
  if (!ops) {
    kc_object_release(KC_OBJECT(names));
    return kc__ort_fail(api, "kcall: out of memory registering ops");
  }
  for (size_t i = 0; i < count; ++i) {
    kc_string_view name = {0};
    if (!kc_any_get_string(kc_array_get_item(names, i), &name)) continue;
    kst = kc_op_registry_lookup_retained(name, &ops[n]);
    if (kst) { /* unregistered meanwhile */
      kc_status_destroy(kst);
      continue;
    }
    ++n;
  }
  kc_object_release(KC_OBJECT(names));
  *out_ops = ops;
  *out_count = n;
  return NULL;
}

static void kc__ort_release_ops(const kc_op** ops, size_t count) {
  for (size_t i = 0; i < count; ++i) kc_object_release(KC_OBJECT(ops[i]));
}

/* A new domain of the ops (their references pass to the overloads made;
 * those of ops not offered are released). */
static kc__ort_status* kc__ort_make_domain(const kc__ort_api* api, const char* domain_name,
                                           const kc_op** ops, size_t count, int ort_minor,
                                           kc__ort_domain** out) {
  kc__ort_domain* domain = NULL;
  kc__ort_status* st = api->create_custom_op_domain(domain_name, &domain);
  size_t i = 0;
  for (; i < count && !st; ++i) {
    kc__ort_op* o = calloc(1, sizeof *o);
    if (!o) {
      st = kc__ort_fail(api, "kcall: out of memory registering ops");
      break;
    }
    char why[256] = "";
    bool made = kc__ort_op_make(api, ops[i], o, why, sizeof why);
    if (made) st = kc__ort_add_overloads(domain, o, ort_minor, why, sizeof why, &made);
    if (!made && !st) {
      size_t used = strlen(kc__ort_skipped);
      snprintf(kc__ort_skipped + used, sizeof kc__ort_skipped - used, "%s: %s\n", o->name,
               why);
    }
    /* The overloads added hold the op's reference; the template goes. */
    if (!made || st) kc_object_release(KC_OBJECT(ops[i]));
    free(o);
  }
  kc__ort_release_ops(ops + i, count - i);
  /* On failure the domain and what was added to it stay allocated: ONNX
   * Runtime's domain object may point at them, and nothing uses them. */
  *out = st ? NULL : domain;
  return st;
}

/* ONNX Runtime's entry point: adds the registered kcall ops to a domain
 * of `options`. NULL on success. */
kc__ort_status* RegisterCustomOps(kc__ort_session_options* options,
                                  const kc__ort_api_base* base) {
  if (!base) return NULL; /* not called by ONNX Runtime */
  const void* const* table = base->get_api(KC__ORT_API_VERSION);
  if (!table) {
    /* An ONNX Runtime older than 1.17: its first table (every version has
     * CreateStatus first) makes the status that says so. */
    const void* const* first = base->get_api(1);
    if (!first) return NULL;
    kc__ort_status* (*create_status)(int, const char*);
    memcpy(&create_status, &first[0], sizeof create_status);
    char message[256];
    snprintf(message, sizeof message,
             "kcall: libkcall_ort needs ONNX Runtime 1.17 or newer (C API version %d); "
             "this is ONNX Runtime %s",
             KC__ORT_API_VERSION, base->get_version_string());
    return create_status(KC__ORT_FAIL, message);
  }
  pthread_mutex_lock(&kc__ort_lock);
  kc__ort_read_table(table);
  const kc__ort_api* api = &kc__ort_table;
  int ort_major = 0, ort_minor = 0;
  if (sscanf(base->get_version_string(), "%d.%d", &ort_major, &ort_minor) != 2 || ort_major > 1) {
    ort_minor = 1000; /* a version it cannot read: assume a new one */
  }
  const char* domain_name = kc__ort_domain_name ? kc__ort_domain_name : "kcall";
  const kc_op** ops = NULL;
  size_t count = 0;
  kc__ort_status* st = kc__ort_list_ops(api, &ops, &count);
  kc__ort_made* made = NULL;
  for (kc__ort_made* m = kc__ort_domains; !st && m && !made; m = m->next) {
    if (strcmp(m->name, domain_name) == 0 && m->num_ops == count &&
        (count == 0 || memcmp(m->ops, ops, count * sizeof *ops) == 0)) {
      made = m;
    }
  }
  if (made) {
    kc__ort_release_ops(ops, count);
    free(ops);
  } else if (!st) {
    kc__ort_skipped[0] = '\0';
    made = calloc(1, sizeof *made);
    char* name = strdup(domain_name);
    const kc_op** kept = malloc(count ? count * sizeof *ops : 1);
    if (!made || !name || !kept) {
      free(made);
      free(name);
      free(kept);
      made = NULL;
      kc__ort_release_ops(ops, count);
      st = kc__ort_fail(api, "kcall: out of memory registering ops");
    } else {
      if (count) memcpy(kept, ops, count * sizeof *ops);
      st = kc__ort_make_domain(api, domain_name, ops, count, ort_minor, &made->domain);
      made->skipped = st ? NULL : strdup(kc__ort_skipped);
      if (st || !made->skipped) {
        free(made->skipped);
        free(made);
        free(name);
        free(kept);
        made = NULL;
        if (!st) st = kc__ort_fail(api, "kcall: out of memory registering ops");
      } else {
        made->name = name;
        made->ops = kept;
        made->num_ops = count;
        made->next = kc__ort_domains;
        kc__ort_domains = made;
      }
    }
    free(ops);
  } else {
    free(ops);
  }
  if (made) {
    snprintf(kc__ort_skipped, sizeof kc__ort_skipped, "%s", made->skipped);
    st = api->add_custom_op_domain(options, made->domain);
  }
  pthread_mutex_unlock(&kc__ort_lock);
  return st;
}
