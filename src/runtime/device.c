/* Devices: the CPU, built in, and backends loaded on first use
 * (kcall/device.h, runtime/backend.h). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal/common.h"
#include "kcall/tensor.h" /* KC_TENSOR_ALIGNMENT only */
#include "runtime/device_internal.h"

/* The file name of the CUDA backend, beside libkcall or on the loader's
 * path. */
#define KC__CUDA_BACKEND_FILE "libkcall_cuda.so"

/* The CUDA backend, settled once per process: its table and device count,
 * or why there is none. */
static struct {
  pthread_once_t once;
  const kc__backend* table;
  int32_t count;
  char why[768]; /* after "no CUDA device: " when table is NULL */
  pthread_mutex_t streams_mu;
  void** streams; /* kcall's default stream of each device; made on demand */
} kc__cuda = {PTHREAD_ONCE_INIT, NULL, 0, "", PTHREAD_MUTEX_INITIALIZER, NULL};

static const kc__backend_core kc__core_for_backends = {
    sizeof(kc__backend_core), kc_status_create};

/* Opens the backend library, writing why not into kc__cuda.why. */
static void* kc__open_cuda_backend(char* path, size_t cap) {
  const char* env = getenv("KCALL_CUDA_BACKEND");
  if (env && *env) {
    snprintf(path, cap, "%s", env);
    void* h = dlopen(env, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* e = dlerror();
      snprintf(kc__cuda.why, sizeof kc__cuda.why,
               "cannot load the CUDA backend %s named by KCALL_CUDA_BACKEND: %s",
               KC__QS(env), e ? e : "unknown error");
    }
    return h;
  }
  /* Beside libkcall. */
  char beside[512] = "";
  Dl_info info;
  if (dladdr((void*)(uintptr_t)&kc__backend_get, &info) && info.dli_fname) {
    const char* slash = strrchr(info.dli_fname, '/');
    if (slash) {
      snprintf(beside, sizeof beside, "%.*s/%s", (int)(slash - info.dli_fname),
               info.dli_fname, KC__CUDA_BACKEND_FILE);
    }
  }
  struct stat sb;
  if (beside[0] && stat(beside, &sb) == 0) {
    snprintf(path, cap, "%s", beside);
    void* h = dlopen(beside, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* e = dlerror();
      snprintf(kc__cuda.why, sizeof kc__cuda.why,
               "cannot load the CUDA backend %s: %s", KC__QS(beside),
               e ? e : "unknown error");
    }
    return h;
  }
  snprintf(path, cap, "%s", KC__CUDA_BACKEND_FILE);
  void* h = dlopen(KC__CUDA_BACKEND_FILE, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    snprintf(kc__cuda.why, sizeof kc__cuda.why,
             "the CUDA backend library %s is not installed (looked beside "
             "libkcall, at %s, and on the loader's path: %s); kcall was built "
             "without CUDA, or the library was not installed with it",
             KC__CUDA_BACKEND_FILE, beside[0] ? KC__QS(beside) : "(unknown)",
             e ? e : "unknown error");
  }
  return h;
}

/* Every entry a backend must fill. */
static bool kc__backend_complete(const kc__backend* b) {
  return b->init && b->get_properties && b->alloc && b->free && b->host_alloc &&
         b->host_free && b->memcpy && b->memset && b->stream_create &&
         b->stream_destroy && b->stream_synchronize && b->check_launch &&
         b->elementwise_supported && b->elementwise && b->broadcast && b->iota &&
         b->capture_begin && b->capture_end && b->graph_launch && b->graph_destroy;
}

static void kc__cuda_load(void) {
  char path[512];
  void* h = kc__open_cuda_backend(path, sizeof path);
  if (!h) return;
  kc__backend_entry_fn entry;
  void* sym = dlsym(h, KC__BACKEND_ENTRY_SYMBOL);
  if (!sym) {
    snprintf(kc__cuda.why, sizeof kc__cuda.why,
             "%s is not a kcall backend: it has no %s", KC__QS(path),
             KC__BACKEND_ENTRY_SYMBOL);
    dlclose(h);
    return;
  }
  memcpy(&entry, &sym, sizeof entry);
  const kc__backend* b = entry(KC__BACKEND_ABI_VERSION, &kc__core_for_backends);
  if (!b || b->abi_version != KC__BACKEND_ABI_VERSION ||
      b->struct_size < sizeof(kc__backend)) {
    snprintf(kc__cuda.why, sizeof kc__cuda.why,
             "the CUDA backend %s was built for another version of kcall "
             "(backend ABI %u expected)",
             KC__QS(path), KC__BACKEND_ABI_VERSION);
    dlclose(h);
    return;
  }
  if (b->device_type != kDLCUDA || !kc__backend_complete(b)) {
    snprintf(kc__cuda.why, sizeof kc__cuda.why,
             "%s is not a complete CUDA backend (device type %d, or entries "
             "missing from its table)",
             KC__QS(path), (int)b->device_type);
    dlclose(h);
    return;
  }
  int32_t count = 0;
  kc_status* st = b->init(&count);
  if (!st && count < 1) {
    st = kc_status_create(KC_FAILED_PRECONDITION, "the driver reports no device");
  }
  if (st) {
    snprintf(kc__cuda.why, sizeof kc__cuda.why, "%s", kc_status_get_message(st));
    kc_status_destroy(st);
    /* The library stays loaded: a backend may have started threads. */
    return;
  }
  kc__cuda.streams = kc__calloc((size_t)count, sizeof(void*));
  if (!kc__cuda.streams) {
    snprintf(kc__cuda.why, sizeof kc__cuda.why, "out of memory");
    return;
  }
  kc__cuda.count = count;
  kc__cuda.table = b;
}

static kc_status* kc__unknown_device_type(DLDeviceType type) {
  char name[48];
  DLDevice d = {type, 0};
  kc_device_format(d, name, sizeof name);
  return kc_status_create(KC_UNIMPLEMENTED,
                          "device type %s (%d): no backend serves it (kcall "
                          "knows cpu and cuda)",
                          name, (int)type);
}

static bool kc__is_cuda_type(DLDeviceType type) {
  return type == kDLCUDA || type == kDLCUDAHost || type == kDLCUDAManaged;
}

kc_status* kc__backend_get(DLDeviceType type, const kc__backend** out,
                           int32_t* out_count) {
  if (!kc__is_cuda_type(type)) return kc__unknown_device_type(type);
  pthread_once(&kc__cuda.once, kc__cuda_load);
  if (KC__UNLIKELY(!kc__cuda.table)) {
    return kc_status_create(KC_FAILED_PRECONDITION, "no CUDA device: %s", kc__cuda.why);
  }
  *out = kc__cuda.table;
  if (out_count) *out_count = kc__cuda.count;
  return NULL;
}

kc_status* kc__device_backend(DLDevice device, const kc__backend** out) {
  int32_t count = 0;
  KC_RETURN_IF_ERROR(kc__backend_get(device.device_type, out, &count));
  if (KC__UNLIKELY(device.device_id < 0 || device.device_id >= count)) {
    char name[48];
    kc_device_format(device, name, sizeof name);
    return kc_status_create(KC_OUT_OF_RANGE,
                            "device %s: expected a CUDA ordinal in [0, %d), got %d "
                            "(this machine has %d CUDA device%s)",
                            name, count, (int)device.device_id, count,
                            count == 1 ? "" : "s");
  }
  return NULL;
}

bool kc__device_host_addressable(DLDevice device) {
  return device.device_type == kDLCPU || device.device_type == kDLCUDAHost ||
         device.device_type == kDLCUDAManaged;
}

/* The CPU: device 0 only. */
static kc_status* kc__check_cpu(DLDevice device) {
  if (device.device_id != 0) {
    return kc_status_create(KC_OUT_OF_RANGE,
                            "device cpu:%d: expected cpu:0 (the CPU is one device)",
                            (int)device.device_id);
  }
  return NULL;
}

/* The backend of `device`, or NULL with no error for the CPU. */
static kc_status* kc__resolve(DLDevice device, const kc__backend** out) {
  *out = NULL;
  if (device.device_type == kDLCPU) return kc__check_cpu(device);
  return kc__device_backend(device, out);
}

/* ---- public ---------------------------------------------------------------- */

kc_status* kc_device_get_count(DLDeviceType type, int32_t* out_count) {
  if (!out_count) {
    return kc_status_create(KC_INVALID_ARGUMENT, "kc_device_get_count: out_count is NULL");
  }
  *out_count = 0;
  if (type == kDLCPU) {
    *out_count = 1;
    return NULL;
  }
  const kc__backend* b;
  return kc__backend_get(type, &b, out_count);
}

kc_status* kc_device_check(DLDevice device) {
  const kc__backend* b;
  return kc__resolve(device, &b);
}

kc_status* kc_device_get_properties(DLDevice device, kc_device_properties* out) {
  if (!out || out->struct_size < sizeof(size_t)) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_device_get_properties: out is NULL or its "
                            "struct_size is not set");
  }
  const kc__backend* b;
  KC_RETURN_IF_ERROR(kc__resolve(device, &b));
  kc_device_properties p;
  memset(&p, 0, sizeof p);
  p.struct_size = out->struct_size;
  p.device = device;
  if (!b) {
    snprintf(p.name, sizeof p.name, "cpu");
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    p.multiprocessor_count = cores > 0 ? (int32_t)cores : 1;
    if (pages > 0 && page > 0) p.total_memory_bytes = (size_t)pages * (size_t)page;
  } else {
    kc__device_props d;
    memset(&d, 0, sizeof d);
    KC_RETURN_IF_ERROR(b->get_properties(device.device_id, &d));
    memcpy(p.name, d.name, sizeof p.name);
    p.name[sizeof p.name - 1] = '\0';
    p.compute_capability_major = d.compute_major;
    p.compute_capability_minor = d.compute_minor;
    p.multiprocessor_count = d.multiprocessor_count;
    p.max_threads_per_block = d.max_threads_per_block;
    p.warp_size = d.warp_size;
    p.total_memory_bytes = d.total_memory;
    p.shared_memory_per_block_bytes = d.shared_memory_per_block;
    p.driver_version = d.driver_version;
    p.runtime_version = d.runtime_version;
    p.pci_bus_id = d.pci_bus_id;
    p.pci_device_id = d.pci_device_id;
  }
  size_t n = out->struct_size < sizeof p ? out->struct_size : sizeof p;
  memcpy(out, &p, n);
  return NULL;
}

kc_status* kc_device_allocate(DLDevice device, size_t bytes, void* stream,
                              void** out_ptr) {
  if (!out_ptr) {
    return kc_status_create(KC_INVALID_ARGUMENT, "kc_device_allocate: out_ptr is NULL");
  }
  *out_ptr = NULL;
  const kc__backend* b;
  KC_RETURN_IF_ERROR(kc__resolve(device, &b));
  if (!bytes) return NULL;
  if (b) return b->alloc(device.device_id, bytes, stream, out_ptr);
  *out_ptr = kc_allocator_alloc(NULL, bytes, KC_TENSOR_ALIGNMENT);
  if (!*out_ptr) {
    return kc_status_create(KC_RESOURCE_EXHAUSTED,
                            "out of memory allocating %zu bytes on cpu:0", bytes);
  }
  return NULL;
}

kc_status* kc_device_free(DLDevice device, void* ptr, void* stream) {
  if (!ptr) return NULL;
  const kc__backend* b;
  KC_RETURN_IF_ERROR(kc__resolve(device, &b));
  if (b) return b->free(device.device_id, ptr, stream);
  kc_allocator_free(NULL, ptr, 0, KC_TENSOR_ALIGNMENT);
  return NULL;
}

kc_status* kc_device_host_allocate(DLDevice device, size_t bytes, void** out_ptr) {
  if (!out_ptr) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_device_host_allocate: out_ptr is NULL");
  }
  *out_ptr = NULL;
  const kc__backend* b;
  KC_RETURN_IF_ERROR(kc__resolve(device, &b));
  if (!bytes) return NULL;
  if (b) return b->host_alloc(device.device_id, bytes, out_ptr);
  return kc_device_allocate(device, bytes, NULL, out_ptr);
}

void kc_device_host_free(DLDevice device, void* ptr) {
  if (!ptr) return;
  const kc__backend* b;
  kc_status* st = kc__resolve(device, &b);
  if (st) {
    /* Nothing could have been allocated on a device that does not resolve. */
    kc_status_destroy(st);
    return;
  }
  if (b) {
    b->host_free(device.device_id, ptr);
  } else {
    kc_allocator_free(NULL, ptr, 0, KC_TENSOR_ALIGNMENT);
  }
}

kc_status* kc_device_memcpy(DLDevice device, void* dst, const void* src,
                            size_t bytes, kc_memcpy_kind kind, void* stream) {
  if (kind < KC_MEMCPY_HOST_TO_DEVICE || kind > KC_MEMCPY_DEVICE_TO_DEVICE) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_device_memcpy: kind: expected 1 (host to device), 2 "
                            "(device to host) or 3 (device to device), got %d",
                            (int)kind);
  }
  if (!bytes) return NULL;
  if (!dst || !src) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_device_memcpy: %s is NULL (copying %zu bytes)",
                            !dst ? "dst" : "src", bytes);
  }
  const kc__backend* b;
  KC_RETURN_IF_ERROR(kc__resolve(device, &b));
  if (b) return b->memcpy(device.device_id, dst, src, bytes, (int32_t)kind, stream);
  memmove(dst, src, bytes);
  return NULL;
}

kc_status* kc_device_stream_create(DLDevice device, void** out_stream) {
  if (!out_stream) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_device_stream_create: out_stream is NULL");
  }
  *out_stream = NULL;
  const kc__backend* b;
  KC_RETURN_IF_ERROR(kc__resolve(device, &b));
  return b ? b->stream_create(device.device_id, out_stream) : NULL;
}

void kc_device_stream_destroy(DLDevice device, void* stream) {
  if (!stream) return;
  const kc__backend* b;
  kc_status* st = kc__resolve(device, &b);
  if (st) {
    kc_status_destroy(st);
    return;
  }
  if (b) b->stream_destroy(device.device_id, stream);
}

kc_status* kc_device_stream_synchronize(DLDevice device, void* stream) {
  const kc__backend* b;
  KC_RETURN_IF_ERROR(kc__resolve(device, &b));
  return b ? b->stream_synchronize(device.device_id, stream) : NULL;
}

kc_status* kc__device_default_stream(DLDevice device, void** out_stream) {
  *out_stream = NULL;
  const kc__backend* b;
  KC_RETURN_IF_ERROR(kc__resolve(device, &b));
  if (!b) return NULL;
  if (device.device_type != kDLCUDA) {
    char name[48];
    kc_device_format(device, name, sizeof name);
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "device %s has no streams (expected cuda:N)", name);
  }
  pthread_mutex_lock(&kc__cuda.streams_mu);
  kc_status* st = NULL;
  void** slot = &kc__cuda.streams[device.device_id];
  if (!*slot) st = b->stream_create(device.device_id, slot);
  *out_stream = *slot;
  pthread_mutex_unlock(&kc__cuda.streams_mu);
  return st;
}

kc_status* kc_device_get_default_stream(DLDevice device, void** out_stream) {
  if (!out_stream) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_device_get_default_stream: out_stream is NULL");
  }
  return kc__device_default_stream(device, out_stream);
}
