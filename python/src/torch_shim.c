/*
 * libtorch's C shim found at run time (torch_shim.h): the symbol table,
 * torch's dtype codes against kcall's dtypes, and kcall pools on torch's
 * intra-op threads.
 */
#include <stdio.h>
#include <string.h>

#include <dlfcn.h>

#include "torch_shim.h"

/* Each symbol, where it goes, and whether kcall.torch can do without it. */
static const struct shim_symbol {
  const char* name;
  size_t offset;
  bool optional;
} shim_symbols[] = {
#define SHIM(field, symbol, opt) {symbol, offsetof(torch_shim, field), opt}
    SHIM(library_init_impl, "aoti_torch_library_init_impl", false),
    SHIM(library_impl, "aoti_torch_library_impl", false),
    SHIM(call_dispatcher, "aoti_torch_call_dispatcher", false),
    SHIM(grad_mode_is_enabled, "aoti_torch_grad_mode_is_enabled", false),
    SHIM(delete_tensor_object, "aoti_torch_delete_tensor_object", false),
    SHIM(get_data_ptr, "aoti_torch_get_data_ptr", false),
    SHIM(get_dim, "aoti_torch_get_dim", false),
    SHIM(get_sizes, "aoti_torch_get_sizes", false),
    SHIM(get_strides, "aoti_torch_get_strides", false),
    SHIM(get_dtype, "aoti_torch_get_dtype", false),
    SHIM(get_device_type, "aoti_torch_get_device_type", false),
    SHIM(empty_strided, "aoti_torch_empty_strided", false),
    SHIM(copy_, "aoti_torch_copy_", false),
    SHIM(check, "aoti_torch_check", false),
    SHIM(tensor_to_pyobject, "torch_tensor_to_pyobject", false),
    SHIM(device_type_cpu, "aoti_torch_device_type_cpu", false),
    SHIM(delete_stable_ivalue, "torch_delete_stable_ivalue", true),
    SHIM(exception_what, "torch_exception_get_what_without_backtrace", true),
    SHIM(parallel_for, "torch_parallel_for", true),
    SHIM(get_num_threads, "torch_get_num_threads", true),
    SHIM(list_size, "torch_list_size", true),
    SHIM(list_get_item, "torch_list_get_item", true),
    SHIM(delete_list, "torch_delete_list", true),
    SHIM(string_c_str, "torch_string_c_str", true),
    SHIM(delete_string, "torch_delete_string", true),
#undef SHIM
};

/* torch's dtypes (the code aoti_torch_dtype_NAME() returns) and kcall's
 * names for them; NULL where kcall has none (named in messages). */
static const struct {
  const char* torch_name;
  const char* kcall_name;
} dtype_names[] = {
    {"float32", "f32"},          {"float64", "f64"},
    {"float16", "f16"},          {"bfloat16", "bf16"},
    {"int8", "i8"},              {"int16", "i16"},
    {"int32", "i32"},            {"int64", "i64"},
    {"uint8", "u8"},             {"uint16", "u16"},
    {"uint32", "u32"},           {"uint64", "u64"},
    {"bool", "bool"},            {"complex64", "c64"},
    {"complex128", "c128"},      {"float8_e5m2", "f8e5m2"},
    {"float8_e4m3fn", "f8e4m3fn"}, {"float8_e5m2fnuz", "f8e5m2fnuz"},
    {"float8_e4m3fnuz", "f8e4m3fnuz"}, {"complex32", NULL},
};
#define NUM_DTYPES (sizeof dtype_names / sizeof dtype_names[0])

torch_shim shim;
int32_t cpu_device_type;
static int32_t dtype_codes[NUM_DTYPES];
static DLDataType dtype_kcall[NUM_DTYPES];

int torch_shim_load(void* lib, PyObject* hidden) {
  torch_shim found = {0};
  for (size_t i = 0; i < sizeof shim_symbols / sizeof shim_symbols[0]; ++i) {
    const struct shim_symbol* sym = &shim_symbols[i];
    void* fn = dlsym(lib, sym->name);
    if (hidden && fn) {
      PyObject* name = PyUnicode_FromString(sym->name);
      int is_hidden = name ? PySequence_Contains(hidden, name) : -1;
      Py_XDECREF(name);
      if (is_hidden < 0) {
        dlclose(lib);
        return -1;
      }
      if (is_hidden) fn = NULL;
    }
    if (!fn && !sym->optional) {
      dlclose(lib);
      PyErr_Format(PyExc_RuntimeError, "%s", sym->name);
      return -1;
    }
    memcpy((char*)&found + sym->offset, &fn, sizeof fn);
  }
  for (size_t i = 0; i < NUM_DTYPES; ++i) {
    char getter_name[64];
    snprintf(getter_name, sizeof getter_name, "aoti_torch_dtype_%s",
             dtype_names[i].torch_name);
    int32_t (*getter)(void) = NULL;
    void* fn = dlsym(lib, getter_name);
    memcpy(&getter, &fn, sizeof fn);
    dtype_codes[i] = getter ? getter() : -1;
    if (!dtype_names[i].kcall_name) continue;
    kc_status* st = kc_dtype_parse(kc_sv(dtype_names[i].kcall_name),
                                   &dtype_kcall[i]);
    if (st) {
      dlclose(lib);
      kcpy_raise(st);
      return -1;
    }
  }
  shim = found;
  cpu_device_type = shim.device_type_cpu();
  return 0;
}

/* kcall's dtype for torch's `code`; false with *out_name torch's name of
 * it (NULL when not known here) when kcall has none. */
bool dtype_from_torch(int32_t code, DLDataType* out,
                             const char** out_name) {
  *out_name = NULL;
  for (size_t i = 0; i < NUM_DTYPES; ++i) {
    if (dtype_codes[i] != code) continue;
    *out_name = dtype_names[i].torch_name;
    if (!dtype_names[i].kcall_name) return false;
    *out = dtype_kcall[i];
    return true;
  }
  return false;
}

bool dtype_to_torch(DLDataType dtype, int32_t* out) {
  for (size_t i = 0; i < NUM_DTYPES; ++i) {
    if (!dtype_names[i].kcall_name || dtype_codes[i] < 0) continue;
    if (dtype_kcall[i].code == dtype.code && dtype_kcall[i].bits == dtype.bits &&
        dtype_kcall[i].lanes == dtype.lanes) {
      *out = dtype_codes[i];
      return true;
    }
  }
  return false;
}

int32_t torch_dtype_float32(void) { return dtype_codes[0]; }

/* ---- torch's threads ---------------------------------------------------- */

/* The kernels' parallel loops run on torch's intra-op threads
 * (torch_parallel_for, kc_thread_pool_create_on), so a kcall op between
 * torch's own does not bring kcall's pool to the same cores. One pool per
 * thread count torch has run with, made on first use and kept for the
 * process (a few bytes each); NULL, kcall's default pool, without the
 * shim functions. */
static kc_thread_pool* torch_pools[KC_THREAD_POOL_MAX_SIZE + 1]; /* atomic */

typedef struct torch_loop_ctx {
  kc_range_fn fn;
  void* ctx;
} torch_loop_ctx;

static void torch_loop_range(int64_t begin, int64_t end, void* ctx) {
  const torch_loop_ctx* c = ctx;
  c->fn(c->ctx, begin, end);
}

static int torch_loop(void* self, int64_t total, int64_t grain,
                      kc_range_fn fn, void* ctx) {
  (void)self;
  torch_loop_ctx c = {fn, ctx};
  return shim.parallel_for(0, total, grain, torch_loop_range, &c) != 0;
}

kc_thread_pool* torch_thread_pool(void) {
  uint32_t n = 0;
  if (!shim.parallel_for || !shim.get_num_threads ||
      shim.get_num_threads(&n) || n < 1) {
    return NULL;
  }
  if (n > KC_THREAD_POOL_MAX_SIZE) n = KC_THREAD_POOL_MAX_SIZE;
  kc_thread_pool* pool = __atomic_load_n(&torch_pools[n], __ATOMIC_ACQUIRE);
  if (pool) return pool;
  kc_thread_pool_backend b = {sizeof b, NULL, (int32_t)n, torch_loop, NULL};
  kc_status* st = kc_thread_pool_create_on(&b, &pool);
  if (st) { /* out of memory: kcall's default pool */
    kc_status_destroy(st);
    return NULL;
  }
  kc_thread_pool* first = NULL;
  if (!__atomic_compare_exchange_n(&torch_pools[n], &first, pool, false,
                                   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    kc_thread_pool_destroy(pool); /* another kernel made it first */
    pool = first;
  }
  return pool;
}
