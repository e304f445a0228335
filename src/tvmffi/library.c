/* Finding libtvm_ffi at run time and the table of its functions kcall
 * calls (kcall/tvm_ffi.h says where it looks). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "internal/common.h"
#include "tvmffi/tvmffi_internal.h"

#define KC__TVM_SONAME "libtvm_ffi.so"
#define KC__TVM_ENV "KCALL_TVM_FFI_LIBRARY"
#define KC__TVM_ADVICE                                                        \
  "install tvm-ffi (pip install apache-tvm-ffi) and import tvm_ffi first, "  \
  "or set " KC__TVM_ENV " to its libtvm_ffi.so (python -c \"import "          \
  "tvm_ffi.libinfo as l; print(l.find_libtvm_ffi())\" prints it)"

static pthread_mutex_t kc__tvm_mu = PTHREAD_MUTEX_INITIALIZER;
static kc__tvm_api kc__tvm_table;
static _Atomic(const kc__tvm_api*) kc__tvm_ready;

const kc__tvm_api* kc__tvm_api_loaded(void) {
  return atomic_load_explicit(&kc__tvm_ready, memory_order_acquire);
}

/* dlsym into a function pointer (POSIX allows the conversion). */
static bool kc__sym(void* handle, const char* name, void* out_fn) {
  void* p = dlsym(handle, name);
  if (!p) return false;
  memcpy(out_fn, &p, sizeof p);
  return true;
}

/* Fills the table from `handle`; the name of the first missing function,
 * or NULL. */
static const char* kc__fill(void* handle, kc__tvm_api* t) {
  struct {
    const char* name;
    void* slot;
  } fns[] = {
      {"TVMFFIObjectIncRef", &t->object_inc_ref},
      {"TVMFFIObjectDecRef", &t->object_dec_ref},
      {"TVMFFIFunctionCreate", &t->function_create},
      {"TVMFFIFunctionGetGlobal", &t->function_get_global},
      {"TVMFFIFunctionSetGlobal", &t->function_set_global},
      {"TVMFFIErrorMoveFromRaised", &t->error_move_from_raised},
      {"TVMFFIErrorSetRaisedFromCStr", &t->error_set_raised_from_cstr},
      {"TVMFFIStringFromByteArray", &t->string_from_byte_array},
      {"TVMFFIBytesFromByteArray", &t->bytes_from_byte_array},
      {"TVMFFITensorFromDLPackVersioned", &t->tensor_from_dlpack_versioned},
      {"TVMFFITensorToDLPackVersioned", &t->tensor_to_dlpack_versioned},
      {"TVMFFIGetTypeInfo", &t->get_type_info},
  };
  for (size_t i = 0; i < KC__ARRAY_SIZE(fns); ++i) {
    if (!kc__sym(handle, fns[i].name, fns[i].slot)) return fns[i].name;
  }
  return NULL;
}

/* With the mutex held: checks the library at `handle` (found as `how`)
 * and publishes its table. */
static kc_status* kc__adopt(void* handle, const char* how) {
  void (*get_version)(kc__tvm_version*) = NULL;
  if (!kc__sym(handle, "TVMFFIGetVersion", &get_version)) {
    return kc_status_create(KC_FAILED_PRECONDITION,
                            "the libtvm_ffi %s has no TVMFFIGetVersion: not "
                            "tvm-ffi, or older than kcall supports (0.1)",
                            how);
  }
  kc__tvm_version v = {0, 0, 0};
  get_version(&v);
  if (v.major != 0 || v.minor != 1) {
    return kc_status_create(KC_FAILED_PRECONDITION,
                            "the libtvm_ffi %s is tvm-ffi %u.%u.%u; kcall "
                            "speaks tvm-ffi's ABI 0.1 (apache-tvm-ffi 0.1.x)",
                            how, v.major, v.minor, v.patch);
  }
  kc__tvm_api t = {0};
  const char* missing = kc__fill(handle, &t);
  if (missing) {
    return kc_status_create(KC_FAILED_PRECONDITION,
                            "the libtvm_ffi %s lacks %s", how, missing);
  }
  Dl_info info;
  void* any_fn = NULL;
  memcpy(&any_fn, &t.object_inc_ref, sizeof any_fn);
  const char* path = dladdr(any_fn, &info) && info.dli_fname
                         ? info.dli_fname
                         : KC__TVM_SONAME;
  t.path = kc__strdup(path);
  if (!t.path) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  kc__tvm_table = t;
  atomic_store_explicit(&kc__tvm_ready, &kc__tvm_table, memory_order_release);
  return NULL;
}

const kc__tvm_api* kc__tvm_api_get(kc_status** out_status) {
  const kc__tvm_api* ready = kc__tvm_api_loaded();
  if (KC__LIKELY(ready != NULL)) return ready;
  pthread_mutex_lock(&kc__tvm_mu);
  kc_status* st = NULL;
  if (!kc__tvm_api_loaded()) {
    /* 1. Already in the process (by its soname). */
    void* handle = dlopen(KC__TVM_SONAME, RTLD_NOW | RTLD_NOLOAD);
    if (handle) {
      st = kc__adopt(handle, "already loaded in this process");
    } else {
      const char* env = getenv(KC__TVM_ENV);
      if (env && env[0]) {
        /* 2. Named by the environment. */
        handle = dlopen(env, RTLD_NOW | RTLD_GLOBAL);
        if (!handle) {
          const char* why = dlerror();
          st = kc_status_create(KC_FAILED_PRECONDITION,
                                "%s=%s cannot be loaded (%s): " KC__TVM_ADVICE,
                                KC__TVM_ENV, env, why ? why : "dlopen failed");
        } else {
          st = kc__adopt(handle, "named by " KC__TVM_ENV);
        }
      } else {
        /* 3. On the loader's search path. */
        handle = dlopen(KC__TVM_SONAME, RTLD_NOW | RTLD_GLOBAL);
        st = handle ? kc__adopt(handle, "on the library path")
                    : kc_status_create(KC_FAILED_PRECONDITION,
                                       "tvm-ffi's runtime library "
                                       "libtvm_ffi.so is not in this process, "
                                       "not named by %s and not on the "
                                       "library path: " KC__TVM_ADVICE,
                                       KC__TVM_ENV);
      }
    }
    /* A library kcall loaded and refused stays loaded: unloading code
     * that may have run is never safe. */
  }
  pthread_mutex_unlock(&kc__tvm_mu);
  if (st) {
    *out_status = st;
    return NULL;
  }
  return kc__tvm_api_loaded();
}

kc_status* kc_tvm_ffi_library(const char** out_path) {
  if (!out_path) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_tvm_ffi_library: out_path is NULL");
  }
  *out_path = NULL;
  kc_status* st = NULL;
  const kc__tvm_api* api = kc__tvm_api_get(&st);
  if (!api) return st;
  *out_path = api->path;
  return NULL;
}
