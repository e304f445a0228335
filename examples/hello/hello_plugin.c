/*
 * hello_plugin.c — a kcall plugin that registers a few packed functions.
 *
 * It includes only <kcall/abi.h> and links nothing from kcall: every call
 * into the library goes through the kc_host_api table its entry point
 * receives. That is what lets one build of the plugin load into any host
 * offering the same API major, whichever way the host got libkcall.
 *
 *   kcall call --plugin libhello_plugin.so hello.add 2 3        -> 5
 *   kcall call --plugin libhello_plugin.so hello.concat a b c   -> abc
 *   kcall call --plugin libhello_plugin.so hello.call hello.add 2 3
 */
#include <kcall/abi.h>

/* Deepest tensor hello.scale walks; the same bound kcall's tensors have. */
#define HELLO_MAX_RANK 32

/* ---- memory, from the host's allocator ------------------------------------ */
/* The plugin has no libc headers; the host lends its allocator instead. */

static void* hello_alloc(const kc_host_api* host, size_t size) {
  const kc_allocator* a = host->system_allocator;
  return a->fn(a->self, NULL, 0, size, 0);
}

static void hello_free(const kc_host_api* host, void* ptr, size_t size) {
  const kc_allocator* a = host->system_allocator;
  if (ptr) a->fn(a->self, ptr, size, 0, 0);
}

/* Signed overflow is undefined in C, so the sum is checked first. */
static kc_status* add_ints(const kc_host_api* host, const char* fn_name,
                           int64_t a, int64_t b, kc_any* ret) {
  if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b)) {
    return host->status_create(KC_OUT_OF_RANGE,
                               "%s: %lld + %lld does not fit in an int",
                               fn_name, (long long)a, (long long)b);
  }
  *ret = kc_any_int(a + b);
  return NULL;
}

/* ---- hello.add(a: int, b: int) -> int ------------------------------------- */
/* Every plain function gets the host table as its `self`, so the plugin
 * keeps no global state. */

static kc_status* hello_add(void* self, const kc_any* args, int32_t nargs,
                            kc_any* ret) {
  const kc_host_api* host = self;
  int64_t a = 0;
  int64_t b = 0;
  kc_status* status = kc_host_args_check_count(host, "hello.add", nargs, 2, 2);
  if (!status) status = kc_host_args_get_int(host, "hello.add", args, nargs, 0, &a);
  if (!status) status = kc_host_args_get_int(host, "hello.add", args, nargs, 1, &b);
  if (status) return status;
  return add_ints(host, "hello.add", a, b, ret);
}

/* ---- hello.concat(str...) -> str ------------------------------------------ */

static kc_status* hello_concat(void* self, const kc_any* args, int32_t nargs,
                               kc_any* ret) {
  const kc_host_api* host = self;
  kc_string_view part;
  size_t total = 0;
  /* Check every argument before allocating anything. */
  for (int32_t i = 0; i < nargs; ++i) {
    kc_status* status =
        kc_host_args_get_string(host, "hello.concat", args, nargs, i, &part);
    if (status) return status;
    total += part.size;
  }
  if (total == 0) return host->any_from_string(NULL, KC_SV_LIT(""), ret);

  char* joined = hello_alloc(host, total);
  if (!joined) {
    return host->status_create(KC_RESOURCE_EXHAUSTED,
                               "hello.concat: no memory for %zu bytes", total);
  }
  size_t at = 0;
  for (int32_t i = 0; i < nargs; ++i) {
    host->any_get_string(&args[i], &part);
    for (size_t k = 0; k < part.size; ++k) joined[at++] = part.data[k];
  }
  /* any_from_string copies, so the buffer can go right away. */
  kc_string_view view = {joined, total};
  kc_status* status = host->any_from_string(NULL, view, ret);
  hello_free(host, joined, total);
  return status;
}

/* ---- hello.make_adder(n: int) -> function --------------------------------- */

/* What an adder closes over. It carries the host because a deleter gets
 * nothing but this pointer, and must reach the allocator to free it. */
typedef struct hello_adder {
  const kc_host_api* host;
  int64_t n;
} hello_adder;

static kc_status* adder_call(void* self, const kc_any* args, int32_t nargs,
                             kc_any* ret) {
  const hello_adder* adder = self;
  const kc_host_api* host = adder->host;
  int64_t x = 0;
  kc_status* status = kc_host_args_check_count(host, "hello.adder", nargs, 1, 1);
  if (!status) status = kc_host_args_get_int(host, "hello.adder", args, nargs, 0, &x);
  if (status) return status;
  return add_ints(host, "hello.adder", adder->n, x, ret);
}

static void adder_delete(void* self) {
  hello_adder* adder = self;
  hello_free(adder->host, adder, sizeof *adder);
}

static kc_status* hello_make_adder(void* self, const kc_any* args,
                                   int32_t nargs, kc_any* ret) {
  const kc_host_api* host = self;
  int64_t n = 0;
  kc_status* status = kc_host_args_check_count(host, "hello.make_adder", nargs, 1, 1);
  if (!status) {
    status = kc_host_args_get_int(host, "hello.make_adder", args, nargs, 0, &n);
  }
  if (status) return status;

  hello_adder* adder = hello_alloc(host, sizeof *adder);
  if (!adder) {
    return host->status_create(KC_RESOURCE_EXHAUSTED,
                               "hello.make_adder: out of memory");
  }
  adder->host = host;
  adder->n = n;
  /* func_create runs adder_delete itself when it fails, so the state
   * cannot leak; on success the function owns it. */
  kc_func* func = NULL;
  status = host->func_create(NULL, adder_call, adder, adder_delete, &func);
  if (status) return status;
  *ret = kc_any_object(KC_OBJECT(func)); /* our reference goes to the caller */
  return NULL;
}

/* ---- hello.call(name | function, args...) -> any -------------------------- */

static kc_status* hello_call(void* self, const kc_any* args, int32_t nargs,
                             kc_any* ret) {
  const kc_host_api* host = self;
  kc_status* status = kc_host_args_check_count(host, "hello.call", nargs, 1, -1);
  if (status) return status;

  kc_string_view name;
  kc_func* target = NULL;
  if (host->any_get_string(&args[0], &name)) {
    /* The registry answers a missing name with the nearest ones. */
    status = host->func_registry_lookup(name, &target);
    if (status) return host->status_add_context(status, "hello.call");
  } else {
    name = KC_SV_LIT("the function in argument 0");
    status = kc_host_args_get_func(host, "hello.call", args, nargs, 0, &target);
    if (status) return status;
  }
  status = host->func_call(target, args + 1, nargs - 1, ret);
  if (status) {
    status = host->status_add_context(status, "hello.call: calling %.*s",
                                      (int)name.size, name.data);
  }
  return status;
}

/* ---- hello.scale(t: f32 tensor, factor: float) -> none -------------------- */

static kc_status* check_f32_cpu(const kc_host_api* host, const DLTensor* t) {
  if (t->dtype.code != kDLFloat || t->dtype.bits != 32 || t->dtype.lanes != 1) {
    return host->status_create(
        KC_INVALID_ARGUMENT,
        "hello.scale: argument 0: expected an f32 tensor, got dtype "
        "code %u with %u bits and %u lanes",
        (unsigned)t->dtype.code, (unsigned)t->dtype.bits,
        (unsigned)t->dtype.lanes);
  }
  if (t->device.device_type != kDLCPU &&
      t->device.device_type != kDLCUDAHost) {
    return host->status_create(KC_UNIMPLEMENTED,
                               "hello.scale: argument 0: only tensors in "
                               "host memory are supported");
  }
  if (t->ndim < 0 || t->ndim > HELLO_MAX_RANK) {
    return host->status_create(KC_INVALID_ARGUMENT,
                               "hello.scale: argument 0: rank %d is not in "
                               "[0, %d]",
                               (int)t->ndim, HELLO_MAX_RANK);
  }
  return NULL;
}

/* Visits the elements in row-major order with one counter per dimension,
 * so a strided view is scaled as correctly as a compact tensor. */
static void scale_elements(DLTensor* t, double factor) {
  int64_t strides[HELLO_MAX_RANK];
  int64_t index[HELLO_MAX_RANK];
  int64_t count = 1;
  for (int32_t d = t->ndim - 1; d >= 0; --d) {
    strides[d] = t->strides ? t->strides[d] : count; /* NULL: compact */
    index[d] = 0;
    count *= t->shape[d];
  }
  float* first = (float*)(void*)((char*)t->data + t->byte_offset);
  int64_t offset = 0;
  for (int64_t k = 0; k < count; ++k) {
    first[offset] = (float)((double)first[offset] * factor);
    for (int32_t d = t->ndim - 1; d >= 0; --d) {
      offset += strides[d];
      if (++index[d] < t->shape[d]) break;
      offset -= strides[d] * t->shape[d];
      index[d] = 0;
    }
  }
}

static kc_status* hello_scale(void* self, const kc_any* args, int32_t nargs,
                              kc_any* ret) {
  const kc_host_api* host = self;
  DLTensor* tensor = NULL;
  double factor = 0;
  (void)ret; /* returns none: the tensor is changed in place */
  kc_status* status = kc_host_args_check_count(host, "hello.scale", nargs, 2, 2);
  if (!status) {
    status = kc_host_args_get_dltensor(host, "hello.scale", args, nargs, 0, &tensor);
  }
  if (!status) {
    status = kc_host_args_get_float(host, "hello.scale", args, nargs, 1, &factor);
  }
  if (!status) status = check_f32_cpu(host, tensor);
  if (!status) scale_elements(tensor, factor);
  return status;
}

/* ---- registration ----------------------------------------------------------- */

static kc_status* hello_init(const kc_host_api* host) {
  static const kc_func_entry kFunctions[] = {
      {"hello.add", hello_add},
      {"hello.concat", hello_concat},
      {"hello.make_adder", hello_make_adder},
      {"hello.call", hello_call},
      {"hello.scale", hello_scale},
  };
  /* If one registration fails, the host discards the earlier ones:
   * nothing is left half registered. */
  return kc_host_register_functions(
      host, kFunctions, sizeof kFunctions / sizeof kFunctions[0],
      (void*)(uintptr_t)host);
}

static const kc_plugin_info kHelloInfo = {
    .struct_size = sizeof(kc_plugin_info),
    .api_major = KC_API_VERSION_MAJOR,
    .api_minor = KC_API_VERSION_MINOR,
    .name = "hello",
    .version = "1.0.0",
    .required_features = NULL,
    .init = hello_init,
};

KC_PLUGIN_ENTRY(host) {
  (void)host; /* a plugin that needs a newer table would check it here */
  return &kHelloInfo;
}
