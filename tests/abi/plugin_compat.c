/*
 * tests/abi/plugin_compat.c — a plugin written for plugin API 1.0, loaded
 * into the current host by test_abi.c.
 *
 * tests/abi/abi_tests.cmake builds it twice:
 *   kt_plugin_v1_0.so      against the frozen 1.0 header (tests/abi/v1.0)
 *                          and nothing else, by the project's compiler: a
 *                          plugin built when 1.0 shipped must keep loading
 *                          and giving the same answers;
 *   kt_plugin_other_cc.so  against include/, by the other compiler (clang
 *                          in a gcc build, gcc in a clang build): the ABI is
 *                          the C ABI of the platform, not one compiler's.
 *
 * It registers each kind of thing a plugin can, and each leans on a layout
 * the two sides must agree on: kc_any (ints, floats, bools, strings,
 * objects, arrays of them), DLTensor (strides and byte_offset), the host
 * table (entries from every block of 1.0), kc_plugin_info with required
 * features, an op's shape function and kernel, a legacy custom call's
 * opaque bytes and failure message, a typed one's kc_xcall_frame, kc_attr
 * and kc_xcall_signature. Like every plugin it reaches the host only
 * through the table.
 */
#include <kcall/abi.h>

/* Set once by init, before anything can call into the plugin; only read
 * after. (The legacy custom-call conventions and kernels get no user
 * pointer to carry it.) */
static const kc_host_api* g_host;

static kc_status* fail(kc_status_code code, const char* message) {
  return g_host->status_create(code, "%s", message);
}

/* ---- packed functions ------------------------------------------------------ */

/* kt_compat.add(a: int, b: int) -> int */
static kc_status* compat_add(void* self, const kc_any* args, int32_t nargs,
                             kc_any* ret) {
  const kc_host_api* host = self;
  int64_t a = 0, b = 0;
  kc_status* st = kc_host_args_check_count(host, "kt_compat.add", nargs, 2, 2);
  if (!st) st = kc_host_args_get_int(host, "kt_compat.add", args, nargs, 0, &a);
  if (!st) st = kc_host_args_get_int(host, "kt_compat.add", args, nargs, 1, &b);
  if (st) return st;
  *ret = kc_any_int(a + b);
  return NULL;
}

/* kt_compat.mix(i: int, x: float, b: bool, s: str) -> array
 *   [i * 2, x / 4, not b, s + "!" (an owned string)] */
static kc_status* compat_mix(void* self, const kc_any* args, int32_t nargs,
                             kc_any* ret) {
  const kc_host_api* host = self;
  static const char kName[] = "kt_compat.mix";
  int64_t i = 0;
  double x = 0;
  bool b = false;
  kc_string_view s = {NULL, 0};
  kc_status* st = kc_host_args_check_count(host, kName, nargs, 4, 4);
  if (!st) st = kc_host_args_get_int(host, kName, args, nargs, 0, &i);
  if (!st) st = kc_host_args_get_float(host, kName, args, nargs, 1, &x);
  if (!st) st = kc_host_args_get_bool(host, kName, args, nargs, 2, &b);
  if (!st) st = kc_host_args_get_string(host, kName, args, nargs, 3, &s);
  if (st) return st;
  char text[64];
  if (s.size + 1 > sizeof text) {
    return fail(KC_OUT_OF_RANGE, "kt_compat.mix: string too long");
  }
  for (size_t k = 0; k < s.size; ++k) text[k] = s.data[k];
  text[s.size] = '!';
  kc_any items[4] = {kc_any_int(i * 2), kc_any_float(x / 4), kc_any_bool(!b),
                     kc_any_none()};
  kc_string_view bang = {text, s.size + 1};
  st = host->any_from_string(host->system_allocator, bang, &items[3]);
  if (st) return st;
  kc_array* array = NULL;
  st = host->array_create(host->system_allocator, items, 4, &array);
  host->any_release(&items[3]); /* the array holds its own reference */
  if (st) return st;
  *ret = kc_any_object(KC_OBJECT(array));
  return NULL;
}

/* kt_compat.strided_sum(t: DLTensor* of f64, any rank and strides) -> float */
static kc_status* compat_strided_sum(void* self, const kc_any* args,
                                     int32_t nargs, kc_any* ret) {
  const kc_host_api* host = self;
  static const char kName[] = "kt_compat.strided_sum";
  DLTensor* t = NULL;
  kc_status* st = kc_host_args_check_count(host, kName, nargs, 1, 1);
  if (!st) st = kc_host_args_get_dltensor(host, kName, args, nargs, 0, &t);
  if (st) return st;
  if (t->dtype.code != kDLFloat || t->dtype.bits != 64 || t->dtype.lanes != 1 ||
      t->ndim < 0 || t->ndim > 8) {
    return fail(KC_INVALID_ARGUMENT, "kt_compat.strided_sum: expected f64");
  }
  /* Walks every index of the shape, as an odometer. */
  const char* base = (const char*)t->data + t->byte_offset;
  int64_t index[8] = {0};
  int64_t numel = 1;
  for (int32_t d = 0; d < t->ndim; ++d) numel *= t->shape[d];
  double sum = 0;
  for (int64_t n = 0; n < numel; ++n) {
    int64_t offset = 0, stride = 1;
    for (int32_t d = t->ndim - 1; d >= 0; --d) {
      offset += index[d] * (t->strides ? t->strides[d] : stride);
      stride *= t->shape[d];
    }
    sum += ((const double*)(const void*)base)[offset];
    for (int32_t d = t->ndim - 1; d >= 0 && ++index[d] == t->shape[d]; --d) {
      index[d] = 0;
    }
  }
  *ret = kc_any_float(sum);
  return NULL;
}

/* kt_compat.iota(n: int) -> tensor object, f32[n] = 0, 1, ..., n-1 */
static kc_status* compat_iota(void* self, const kc_any* args, int32_t nargs,
                              kc_any* ret) {
  const kc_host_api* host = self;
  int64_t n = 0;
  kc_status* st = kc_host_args_check_count(host, "kt_compat.iota", nargs, 1, 1);
  if (!st) st = kc_host_args_get_int(host, "kt_compat.iota", args, nargs, 0, &n);
  if (st) return st;
  kc_tensor* tensor = NULL;
  const DLDataType f32 = {kDLFloat, 32, 1};
  const DLDevice cpu = {kDLCPU, 0};
  st = host->tensor_create(host->system_allocator, &n, 1, f32, cpu, &tensor);
  if (st) return st;
  float* data = host->tensor_get_dltensor(tensor)->data;
  for (int64_t k = 0; k < n; ++k) data[k] = (float)k;
  *ret = kc_any_object(KC_OBJECT(tensor));
  return NULL;
}

/* kt_compat.apply(f: function, x) -> f(x), through the host's func_call. */
static kc_status* compat_apply(void* self, const kc_any* args, int32_t nargs,
                               kc_any* ret) {
  const kc_host_api* host = self;
  kc_func* f = NULL;
  kc_status* st = kc_host_args_check_count(host, "kt_compat.apply", nargs, 2, 2);
  if (!st) st = kc_host_args_get_func(host, "kt_compat.apply", args, nargs, 0, &f);
  if (st) return st;
  st = host->func_call(f, &args[1], 1, ret);
  if (st) host->any_release(ret);
  return st;
}

/* ---- an op and its kernel: z = a * x + y ----------------------------------- */

static kc_status* axpy_shape(kc_shape_ctx* ctx) {
  const kc_shape_handle* merged = NULL;
  kc_status* st = g_host->shape_ctx_merge(ctx, g_host->shape_ctx_get_input(ctx, 0),
                                          g_host->shape_ctx_get_input(ctx, 1),
                                          &merged);
  if (!st) st = g_host->shape_ctx_set_output(ctx, 0, merged);
  return st;
}

typedef struct axpy_kernel {
  double a;
} axpy_kernel;

static kc_status* axpy_create(kc_kernel_construct_ctx* ctx, void** out) {
  const kc_allocator* alloc = g_host->system_allocator;
  axpy_kernel* k = alloc->fn(alloc->self, NULL, 0, sizeof *k, 0);
  if (!k) return fail(KC_RESOURCE_EXHAUSTED, "kt_compat.Axpy: no memory");
  kc_status* st = g_host->op_attrs_get_float(
      g_host->kernel_construct_ctx_get_attrs(ctx), "a", &k->a);
  if (st) {
    alloc->fn(alloc->self, k, sizeof *k, 0, 0);
    return st;
  }
  *out = k;
  return NULL;
}

static void axpy_delete(void* kernel) {
  const kc_allocator* alloc = g_host->system_allocator;
  alloc->fn(alloc->self, kernel, sizeof(axpy_kernel), 0, 0);
}

typedef struct axpy_job {
  const DLTensor* x;
  const DLTensor* y;
  DLTensor* z;
  double a;
} axpy_job;

static void axpy_range(void* ctx, int64_t begin, int64_t end) {
  const axpy_job* j = ctx;
  if (j->x->dtype.bits == 32) {
    const float* x = j->x->data;
    const float* y = j->y->data;
    float* z = j->z->data;
    for (int64_t i = begin; i < end; ++i) z[i] = (float)(j->a * x[i] + y[i]);
  } else {
    const double* x = j->x->data;
    const double* y = j->y->data;
    double* z = j->z->data;
    for (int64_t i = begin; i < end; ++i) z[i] = j->a * x[i] + y[i];
  }
}

static kc_status* axpy_compute(void* kernel, kc_kernel_ctx* ctx) {
  axpy_job job = {g_host->kernel_ctx_get_input(ctx, 0),
                  g_host->kernel_ctx_get_input(ctx, 1),
                  g_host->kernel_ctx_get_output(ctx, 0),
                  ((const axpy_kernel*)kernel)->a};
  int64_t n = 1;
  for (int32_t d = 0; d < job.x->ndim; ++d) n *= job.x->shape[d];
  g_host->thread_pool_parallel_for(g_host->kernel_ctx_get_thread_pool(ctx), n,
                                   1, axpy_range, &job);
  return NULL;
}

static kc_status* register_op(const kc_host_api* host) {
  kc_op_builder* b = NULL;
  kc_status* st = host->op_builder_create("kt_compat.Axpy", &b);
  if (st) return st;
  st = host->op_builder_add_input(b, "x: T");
  if (!st) st = host->op_builder_add_input(b, "y: T");
  if (!st) st = host->op_builder_add_output(b, "z: T");
  if (!st) st = host->op_builder_add_attr(b, "T: {f32, f64}");
  if (!st) st = host->op_builder_add_attr(b, "a: float = 1");
  if (!st) st = host->op_builder_set_doc(b, "z = a * x + y");
  if (!st) st = host->op_builder_set_shape_fn(b, axpy_shape);
  if (st) {
    host->op_builder_destroy(b);
    return st;
  }
  st = host->op_registry_register(b, 0);
  if (st) return st;

  kc_kernel_builder* kb = NULL;
  st = host->kernel_builder_create("kt_compat.Axpy", kDLCPU, axpy_create,
                                   axpy_compute, axpy_delete, &kb);
  if (st) return st;
  const DLDataType types[2] = {{kDLFloat, 32, 1}, {kDLFloat, 64, 1}};
  st = host->kernel_builder_add_type_constraint(kb, "T", types, 2);
  if (st) {
    host->kernel_builder_destroy(kb);
    return st;
  }
  return host->kernel_registry_register(kb);
}

/* ---- custom-call targets ----------------------------------------------------- */

/* kt_compat.add_n, STATUS_RETURNING_UNIFIED: out[i] = a[i] + b[i] for the
 * n f32 elements its opaque bytes give in decimal ("4"). */
static void add_n(void* out, const void** ins, const char* opaque,
                  size_t opaque_len, kc_xcall_status* status) {
  int64_t n = 0;
  bool ok = opaque_len > 0 && opaque_len <= 9;
  for (size_t i = 0; ok && i < opaque_len; ++i) {
    ok = opaque[i] >= '0' && opaque[i] <= '9';
    if (ok) n = n * 10 + (opaque[i] - '0');
  }
  if (!ok) {
    static const char kMessage[] =
        "kt_compat.add_n: backend_config must be the element count";
    g_host->xcall_status_set_failure(status, kMessage, sizeof kMessage - 1);
    return;
  }
  const float* a = ins[0];
  const float* b = ins[1];
  float* c = out;
  for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
}

/* kt_compat.scale, typed: y = x * factor, f32 of any rank; the attribute
 * comes as an f32. */
static kc_status* scale(kc_xcall_frame* frame) {
  if (frame->stage == KC_XCALL_STAGE_INSTANTIATE) return NULL;
  const DLTensor* x = &frame->args[0];
  const DLTensor* y = &frame->results[0];
  const float factor = frame->attrs[0].v.f32;
  int64_t n = 1;
  for (int32_t d = 0; d < x->ndim; ++d) n *= x->shape[d];
  const float* in = (const float*)(const void*)((const char*)x->data + x->byte_offset);
  float* res = (float*)(void*)((char*)y->data + y->byte_offset);
  for (int64_t i = 0; i < n; ++i) res[i] = in[i] * factor;
  return NULL;
}

static const kc_xcall_buffer_spec kScaleBuffer[] = {{{kDLFloat, 32, 1}, -1}};
static const kc_xcall_attr_spec kScaleAttrs[] = {{"factor", KC_ATTR_F32, 0}};

static kc_status* register_targets(const kc_host_api* host) {
  kc_status* st = host->xcall_register(
      KC_SV_LIT("kt_compat.add_n"), KC_PLATFORM_HOST,
      KC_XCALL_API_STATUS_RETURNING_UNIFIED, (void (*)(void))add_n, 0);
  if (st) return st;
  kc_xcall_signature sig = {0};
  sig.struct_size = sizeof sig;
  sig.num_args = 1;
  sig.args = kScaleBuffer;
  sig.num_results = 1;
  sig.results = kScaleBuffer;
  sig.num_attrs = 1;
  sig.attrs = kScaleAttrs;
  return host->xcall_register_typed(KC_SV_LIT("kt_compat.scale"),
                                    KC_PLATFORM_HOST, &sig, scale, NULL, NULL,
                                    0);
}

/* ---- the plugin -------------------------------------------------------------- */

static kc_status* compat_init(const kc_host_api* host) {
  g_host = host;
  static const kc_func_entry kFunctions[] = {
      {"kt_compat.add", compat_add},
      {"kt_compat.mix", compat_mix},
      {"kt_compat.strided_sum", compat_strided_sum},
      {"kt_compat.iota", compat_iota},
      {"kt_compat.apply", compat_apply},
  };
  kc_status* st = kc_host_register_functions(
      host, kFunctions, sizeof kFunctions / sizeof kFunctions[0],
      (void*)(uintptr_t)host);
  if (!st) st = register_op(host);
  if (!st) st = register_targets(host);
  return st;
}

static const char* const kRequired[] = {"ops", "kernels", "custom_calls", NULL};

/* Designated: the same source builds against the frozen 1.0 header and,
 * from the other compiler, against the current one (whose info has more
 * fields). */
static const kc_plugin_info kInfo = {
    .struct_size = sizeof(kc_plugin_info),
    .api_major = KC_API_VERSION_MAJOR,
    .api_minor = KC_API_VERSION_MINOR,
    .name = "kt_compat",
    .version = "1.0.0",
    .required_features = kRequired,
    .init = compat_init,
};

KC_PLUGIN_ENTRY(host) {
  (void)host;
  return &kInfo;
}
