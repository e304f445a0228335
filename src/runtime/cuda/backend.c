/*
 * libkcall_cuda: the CUDA backend's table (src/runtime/backend.h) over the
 * CUDA runtime API, which is linked statically, so that the library needs
 * only the driver (libcuda.so.1) at run time. Its one export is
 * kc_backend_entry; it links no part of kcall.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "runtime/cuda/cuda_internal.h"

#define KC__CUDA_EXPORT __attribute__((visibility("default")))

const kc__backend_core* kc__cuda_core;

/* ---- statuses ----------------------------------------------------------------- */

static kc_status_code kc__code_of(cudaError_t err) {
  switch (err) {
    case cudaErrorMemoryAllocation:
      return KC_RESOURCE_EXHAUSTED;
    case cudaErrorNotSupported:
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorUnsupportedPtxVersion:
    case cudaErrorStreamCaptureUnsupported:
      return KC_UNIMPLEMENTED;
    default:
      return KC_INTERNAL;
  }
}

kc_status* kc__cuda_error(cudaError_t err, const char* fmt, ...) {
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  /* The failed call left err as the thread's last error (a sticky one
   * stays whatever we do). */
  (void)cudaGetLastError();
  const char* hint = "";
  if (err == cudaErrorNoKernelImageForDevice) {
    hint = "; libkcall_cuda was built for " KC__CUDA_ARCH_TEXT;
  }
  return KC__CUDA_STATUS(kc__code_of(err), "%s: %s (%s)%s", what, cudaGetErrorString(err),
                         cudaGetErrorName(err), hint);
}

/* ---- the current device ------------------------------------------------------- */

/* Asking the runtime which device is current is cheap (no driver call
 * when it is already the one), and unlike a cache of our own it sees a
 * device another library made current on this thread. */
static cudaError_t kc__set_device(int32_t ordinal) {
  int current = -1;
  if (cudaGetDevice(&current) == cudaSuccess && current == ordinal) return cudaSuccess;
  return cudaSetDevice(ordinal);
}

kc_status* kc__cuda_use_device(int32_t ordinal) {
  cudaError_t err = kc__set_device(ordinal);
  if (err != cudaSuccess) return kc__cuda_error(err, "cudaSetDevice(%d)", (int)ordinal);
  return NULL;
}

/* For the functions that return nothing: the core gives no way to free a
 * status, so a failure is dropped, not made. */
static void kc__set_device_quiet(int32_t ordinal) {
  if (kc__set_device(ordinal) != cudaSuccess) (void)cudaGetLastError();
}

#define KC__USE(ordinal)                            \
  do {                                              \
    kc_status* kc__use = kc__cuda_use_device(ordinal); \
    if (kc__use) return kc__use;                    \
  } while (0)

unsigned kc__cuda_grid_for(int64_t count) {
  /* Enough blocks of KC__CUDA_BLOCK threads to cover count, at most 8192
   * (an H100 holds about 1000 such blocks at once): the kernels stride
   * over the rest. */
  int64_t blocks = (count + KC__CUDA_BLOCK - 1) / KC__CUDA_BLOCK;
  if (blocks < 1) blocks = 1;
  if (blocks > 8192) blocks = 8192;
  return (unsigned)blocks;
}

/* ---- init ----------------------------------------------------------------------- */

static pthread_once_t kc__init_once = PTHREAD_ONCE_INIT;
static cudaError_t kc__init_error;
static int kc__init_count;

static void kc__init_run(void) {
  int count = 0;
  kc__init_error = cudaGetDeviceCount(&count);
  kc__init_count = count;
  if (kc__init_error == cudaSuccess && count < 1) kc__init_error = cudaErrorNoDevice;
  (void)cudaGetLastError();
}

static void kc__version_text(int v, char* buf, size_t cap) {
  snprintf(buf, cap, "%d.%d", v / 1000, (v % 1000) / 10);
}

/* Why there is no usable device, in words a user can act on. */
static kc_status* kc__init_failure(cudaError_t err) {
  int driver = 0;
  if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
  (void)cudaGetLastError();
  char built[16], have[32];
  kc__version_text(CUDART_VERSION, built, sizeof built);
  if (driver > 0) {
    char v[16];
    kc__version_text(driver, v, sizeof v);
    snprintf(have, sizeof have, "CUDA %s", v);
  } else {
    snprintf(have, sizeof have, "none");
  }
  const char* name = cudaGetErrorName(err);
  const char* text = cudaGetErrorString(err);
  switch (err) {
    case cudaErrorInsufficientDriver:
    case cudaErrorCallRequiresNewerDriver:
      return KC__CUDA_STATUS(KC_FAILED_PRECONDITION,
                             "the CUDA driver is not installed or too old (%s: %s); "
                             "libkcall_cuda needs a driver for CUDA %s or newer, the "
                             "driver found supports: %s",
                             name, text, built, have);
    case cudaErrorNoDevice:
      return KC__CUDA_STATUS(KC_FAILED_PRECONDITION, "no device (%s: %s)", name, text);
    case cudaErrorStubLibrary:
      return KC__CUDA_STATUS(KC_FAILED_PRECONDITION,
                             "the libcuda.so found is the toolkit's stub, not a driver "
                             "(%s: %s); remove the stubs directory from the library path",
                             name, text);
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice:
      return KC__CUDA_STATUS(KC_FAILED_PRECONDITION,
                             "the CUDA driver does not match the kernel module or the "
                             "device (%s: %s)",
                             name, text);
    case cudaErrorDevicesUnavailable:
      return KC__CUDA_STATUS(KC_FAILED_PRECONDITION,
                             "every device is busy or unavailable (%s: %s)", name, text);
    default:
      return KC__CUDA_STATUS(KC_INTERNAL, "cudaGetDeviceCount failed: %s (%s)", text, name);
  }
}

static kc_status* kc__cuda_init(int32_t* out_count) {
  if (!out_count) return KC__CUDA_STATUS(KC_INVALID_ARGUMENT, "init: out_count is NULL");
  *out_count = 0;
  pthread_once(&kc__init_once, kc__init_run);
  if (kc__init_error != cudaSuccess) return kc__init_failure(kc__init_error);
  *out_count = kc__init_count;
  return NULL;
}

/* ---- properties --------------------------------------------------------------- */

static kc_status* kc__cuda_get_properties(int32_t ordinal, kc__device_props* out) {
  if (!out) return KC__CUDA_STATUS(KC_INVALID_ARGUMENT, "get_properties: out is NULL");
  memset(out, 0, sizeof *out);
  struct cudaDeviceProp p;
  cudaError_t err = cudaGetDeviceProperties(&p, ordinal);
  if (err != cudaSuccess) {
    return kc__cuda_error(err, "cudaGetDeviceProperties of cuda:%d", (int)ordinal);
  }
  snprintf(out->name, sizeof out->name, "%s", p.name);
  out->compute_major = p.major;
  out->compute_minor = p.minor;
  out->multiprocessor_count = p.multiProcessorCount;
  out->max_threads_per_block = p.maxThreadsPerBlock;
  out->warp_size = p.warpSize;
  out->total_memory = p.totalGlobalMem;
  out->shared_memory_per_block = p.sharedMemPerBlock;
  out->pci_bus_id = p.pciBusID;
  out->pci_device_id = p.pciDeviceID;
  int v = 0;
  err = cudaDriverGetVersion(&v);
  if (err != cudaSuccess) return kc__cuda_error(err, "cudaDriverGetVersion");
  out->driver_version = v;
  err = cudaRuntimeGetVersion(&v);
  if (err != cudaSuccess) return kc__cuda_error(err, "cudaRuntimeGetVersion");
  out->runtime_version = v;
  return NULL;
}

/* ---- memory ------------------------------------------------------------------- */

/* Whether each device has memory pools (stream-ordered allocation):
 * 0 not asked yet, 1 yes, 2 no. Devices past the table are asked each
 * time. */
enum { KC__POOL_CACHE = 64 };
static _Atomic signed char kc__pools[KC__POOL_CACHE];

static bool kc__has_pools(int32_t ordinal) {
  if (ordinal >= 0 && ordinal < KC__POOL_CACHE) {
    signed char known = atomic_load_explicit(&kc__pools[ordinal], memory_order_relaxed);
    if (known) return known == 1;
  }
  int yes = 0;
  if (cudaDeviceGetAttribute(&yes, cudaDevAttrMemoryPoolsSupported, ordinal) != cudaSuccess) {
    (void)cudaGetLastError();
    yes = 0;
  }
  if (ordinal >= 0 && ordinal < KC__POOL_CACHE) {
    atomic_store_explicit(&kc__pools[ordinal], (signed char)(yes ? 1 : 2), memory_order_relaxed);
  }
  return yes != 0;
}

static kc_status* kc__cuda_alloc(int32_t ordinal, size_t bytes, void* stream, void** out) {
  if (!out) return KC__CUDA_STATUS(KC_INVALID_ARGUMENT, "alloc: out is NULL");
  *out = NULL;
  if (bytes == 0) return NULL;
  KC__USE(ordinal);
  void* p = NULL;
  if (stream && kc__has_pools(ordinal)) {
    cudaError_t err = cudaMallocAsync(&p, bytes, (cudaStream_t)stream);
    if (err != cudaSuccess) {
      return kc__cuda_error(err, "cudaMallocAsync of %zu bytes on cuda:%d", bytes, (int)ordinal);
    }
  } else {
    cudaError_t err = cudaMalloc(&p, bytes);
    if (err != cudaSuccess) {
      return kc__cuda_error(err, "cudaMalloc of %zu bytes on cuda:%d", bytes, (int)ordinal);
    }
  }
  *out = p;
  return NULL;
}

static kc_status* kc__cuda_free(int32_t ordinal, void* ptr, void* stream) {
  if (!ptr) return NULL;
  KC__USE(ordinal);
  if (stream && kc__has_pools(ordinal)) {
    cudaError_t err = cudaFreeAsync(ptr, (cudaStream_t)stream);
    if (err != cudaSuccess) {
      return kc__cuda_error(err, "cudaFreeAsync of %p on cuda:%d", ptr, (int)ordinal);
    }
    return NULL;
  }
  /* cudaFree waits for the device, so work queued on `stream` before
   * this call is done before the memory goes. */
  cudaError_t err = cudaFree(ptr);
  if (err != cudaSuccess) return kc__cuda_error(err, "cudaFree of %p on cuda:%d", ptr, (int)ordinal);
  return NULL;
}

static kc_status* kc__cuda_host_alloc(int32_t ordinal, size_t bytes, void** out) {
  if (!out) return KC__CUDA_STATUS(KC_INVALID_ARGUMENT, "host_alloc: out is NULL");
  *out = NULL;
  if (bytes == 0) return NULL;
  KC__USE(ordinal);
  /* Portable: pinned for every device, not only the one asked for. */
  void* p = NULL;
  cudaError_t err = cudaHostAlloc(&p, bytes, cudaHostAllocPortable);
  if (err != cudaSuccess) {
    return kc__cuda_error(err, "cudaHostAlloc of %zu bytes of pinned host memory for cuda:%d",
                          bytes, (int)ordinal);
  }
  *out = p;
  return NULL;
}

static void kc__cuda_host_free(int32_t ordinal, void* ptr) {
  if (!ptr) return;
  kc__set_device_quiet(ordinal);
  if (cudaFreeHost(ptr) != cudaSuccess) (void)cudaGetLastError();
}

static kc_status* kc__cuda_memcpy(int32_t ordinal, void* dst, const void* src, size_t bytes,
                                  int32_t kind, void* stream) {
  enum cudaMemcpyKind k;
  const char* name;
  switch (kind) {
    case KC__COPY_HOST_TO_DEVICE: k = cudaMemcpyHostToDevice; name = "host to device"; break;
    case KC__COPY_DEVICE_TO_HOST: k = cudaMemcpyDeviceToHost; name = "device to host"; break;
    case KC__COPY_DEVICE_TO_DEVICE: k = cudaMemcpyDeviceToDevice; name = "device to device"; break;
    default:
      return KC__CUDA_STATUS(KC_INVALID_ARGUMENT,
                             "memcpy on cuda:%d: kind: expected 1 (host to device), 2 (device "
                             "to host) or 3 (device to device), got %d",
                             (int)ordinal, (int)kind);
  }
  if (bytes == 0) return NULL;
  if (!dst || !src) {
    return KC__CUDA_STATUS(KC_INVALID_ARGUMENT, "memcpy of %zu bytes %s on cuda:%d: %s is NULL",
                           bytes, name, (int)ordinal, dst ? "the source" : "the destination");
  }
  KC__USE(ordinal);
  cudaError_t err = cudaMemcpyAsync(dst, src, bytes, k, (cudaStream_t)stream);
  if (err != cudaSuccess) {
    return kc__cuda_error(err, "cudaMemcpyAsync of %zu bytes %s on cuda:%d", bytes, name,
                          (int)ordinal);
  }
  return NULL;
}

static kc_status* kc__cuda_memset(int32_t ordinal, void* dst, int value, size_t bytes,
                                  void* stream) {
  if (bytes == 0) return NULL;
  if (!dst) {
    return KC__CUDA_STATUS(KC_INVALID_ARGUMENT, "memset of %zu bytes on cuda:%d: dst is NULL",
                           bytes, (int)ordinal);
  }
  KC__USE(ordinal);
  cudaError_t err = cudaMemsetAsync(dst, value, bytes, (cudaStream_t)stream);
  if (err != cudaSuccess) {
    return kc__cuda_error(err, "cudaMemsetAsync of %zu bytes on cuda:%d", bytes, (int)ordinal);
  }
  return NULL;
}

/* ---- streams -------------------------------------------------------------------- */

static kc_status* kc__cuda_stream_create(int32_t ordinal, void** out) {
  if (!out) return KC__CUDA_STATUS(KC_INVALID_ARGUMENT, "stream_create: out is NULL");
  *out = NULL;
  KC__USE(ordinal);
  cudaStream_t s = NULL;
  cudaError_t err = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  if (err != cudaSuccess) {
    return kc__cuda_error(err, "cudaStreamCreateWithFlags on cuda:%d", (int)ordinal);
  }
  *out = s;
  return NULL;
}

static void kc__cuda_stream_destroy(int32_t ordinal, void* stream) {
  if (!stream) return;
  kc__set_device_quiet(ordinal);
  if (cudaStreamDestroy((cudaStream_t)stream) != cudaSuccess) (void)cudaGetLastError();
}

static kc_status* kc__cuda_stream_synchronize(int32_t ordinal, void* stream) {
  KC__USE(ordinal);
  cudaError_t err = cudaStreamSynchronize((cudaStream_t)stream);
  if (err != cudaSuccess) {
    return kc__cuda_error(err, "cudaStreamSynchronize of stream %p on cuda:%d", stream,
                          (int)ordinal);
  }
  return NULL;
}

static kc_status* kc__cuda_check_launch(int32_t ordinal) {
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return kc__cuda_error(err, "a kernel launch on cuda:%d", (int)ordinal);
  return NULL;
}

/* ---- built-in instructions -------------------------------------------------------- */

/* The launchers check their arguments first and make the device current
 * just before they launch. */

static kc_status* kc__cuda_elementwise(int32_t ordinal, void* stream,
                                       const kc__elementwise_desc* desc) {
  if (!desc) return KC__CUDA_STATUS(KC_INVALID_ARGUMENT, "elementwise: desc is NULL");
  return kc__cuda_elementwise_launch(ordinal, (cudaStream_t)stream, desc);
}

static kc_status* kc__cuda_broadcast(int32_t ordinal, void* stream,
                                     const kc__broadcast_desc* desc) {
  if (!desc) return KC__CUDA_STATUS(KC_INVALID_ARGUMENT, "broadcast: desc is NULL");
  return kc__cuda_broadcast_launch(ordinal, (cudaStream_t)stream, desc);
}

static kc_status* kc__cuda_iota(int32_t ordinal, void* stream, void* out, DLDataType dtype,
                                int32_t rank, const int64_t* dims, int32_t dim) {
  return kc__cuda_iota_launch(ordinal, (cudaStream_t)stream, out, dtype, rank, dims, dim);
}

/* ---- graphs ---------------------------------------------------------------------- */

static kc_status* kc__cuda_capture_begin(int32_t ordinal, void* stream) {
  if (!stream) {
    return KC__CUDA_STATUS(KC_INVALID_ARGUMENT,
                           "capture on cuda:%d: the legacy default stream (NULL) cannot be "
                           "captured; pass a stream",
                           (int)ordinal);
  }
  KC__USE(ordinal);
  cudaError_t err = cudaStreamBeginCapture((cudaStream_t)stream, cudaStreamCaptureModeThreadLocal);
  if (err != cudaSuccess) {
    return kc__cuda_error(err, "cudaStreamBeginCapture of stream %p on cuda:%d", stream,
                          (int)ordinal);
  }
  return NULL;
}

static kc_status* kc__cuda_capture_end(int32_t ordinal, void* stream, void** out_graph) {
  if (!out_graph) {
    return KC__CUDA_STATUS(KC_INVALID_ARGUMENT, "capture_end: out_graph is NULL");
  }
  *out_graph = NULL;
  if (!stream) {
    return KC__CUDA_STATUS(KC_INVALID_ARGUMENT,
                           "capture_end on cuda:%d: the stream is NULL (never captured)",
                           (int)ordinal);
  }
  KC__USE(ordinal);
  /* Ending the capture comes first whatever happens, so that the stream
   * is usable again; what it made is destroyed on any failure. */
  cudaGraph_t graph = NULL;
  cudaError_t err = cudaStreamEndCapture((cudaStream_t)stream, &graph);
  if (err != cudaSuccess) {
    if (graph) cudaGraphDestroy(graph);
    return kc__cuda_error(err,
                          "cudaStreamEndCapture of stream %p on cuda:%d (the capture was "
                          "invalidated by an operation it cannot hold, or was not begun)",
                          stream, (int)ordinal);
  }
  if (!graph) {
    return KC__CUDA_STATUS(KC_INTERNAL, "cudaStreamEndCapture of stream %p on cuda:%d gave no graph",
                           stream, (int)ordinal);
  }
  cudaGraphExec_t exec = NULL;
  err = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  if (err != cudaSuccess) {
    if (exec) cudaGraphExecDestroy(exec);
    return kc__cuda_error(err, "cudaGraphInstantiate of the graph captured on cuda:%d",
                          (int)ordinal);
  }
  *out_graph = exec;
  return NULL;
}

static kc_status* kc__cuda_graph_launch(int32_t ordinal, void* graph, void* stream) {
  if (!graph) return KC__CUDA_STATUS(KC_INVALID_ARGUMENT, "graph_launch on cuda:%d: graph is NULL", (int)ordinal);
  KC__USE(ordinal);
  cudaError_t err = cudaGraphLaunch((cudaGraphExec_t)graph, (cudaStream_t)stream);
  if (err != cudaSuccess) {
    return kc__cuda_error(err, "cudaGraphLaunch of graph %p on cuda:%d", graph, (int)ordinal);
  }
  return NULL;
}

static void kc__cuda_graph_destroy(int32_t ordinal, void* graph) {
  if (!graph) return;
  kc__set_device_quiet(ordinal);
  if (cudaGraphExecDestroy((cudaGraphExec_t)graph) != cudaSuccess) (void)cudaGetLastError();
}

/* ---- the table ------------------------------------------------------------------ */

static const kc__backend kc__cuda_backend = {
    .struct_size = sizeof(kc__backend),
    .abi_version = KC__BACKEND_ABI_VERSION,
    .name = "CUDA",
    .device_type = kDLCUDA,
    .init = kc__cuda_init,
    .get_properties = kc__cuda_get_properties,
    .alloc = kc__cuda_alloc,
    .free = kc__cuda_free,
    .host_alloc = kc__cuda_host_alloc,
    .host_free = kc__cuda_host_free,
    .memcpy = kc__cuda_memcpy,
    .memset = kc__cuda_memset,
    .stream_create = kc__cuda_stream_create,
    .stream_destroy = kc__cuda_stream_destroy,
    .stream_synchronize = kc__cuda_stream_synchronize,
    .check_launch = kc__cuda_check_launch,
    .elementwise_supported = kc__cuda_elementwise_supported,
    .elementwise = kc__cuda_elementwise,
    .broadcast = kc__cuda_broadcast,
    .iota = kc__cuda_iota,
    .capture_begin = kc__cuda_capture_begin,
    .capture_end = kc__cuda_capture_end,
    .graph_launch = kc__cuda_graph_launch,
    .graph_destroy = kc__cuda_graph_destroy,
};

/* The core's table, copied: the backend has one set of functions without
 * a context argument, so it serves one core, the first that loads it. A
 * second copy of kcall that reaches this same file (by KCALL_CUDA_BACKEND
 * or the loader path) with other functions is refused rather than handed
 * statuses it did not make. */
static pthread_mutex_t kc__entry_lock = PTHREAD_MUTEX_INITIALIZER;
static kc__backend_core kc__core_copy;

KC__CUDA_EXPORT const kc__backend* kc_backend_entry(uint32_t abi_version,
                                                    const kc__backend_core* core);

KC__CUDA_EXPORT const kc__backend* kc_backend_entry(uint32_t abi_version,
                                                    const kc__backend_core* core) {
  if (abi_version != KC__BACKEND_ABI_VERSION || !core ||
      core->struct_size < offsetof(kc__backend_core, status_create) + sizeof core->status_create ||
      !core->status_create) {
    return NULL;
  }
  const kc__backend* table = &kc__cuda_backend;
  pthread_mutex_lock(&kc__entry_lock);
  if (!kc__cuda_core) {
    kc__core_copy.struct_size = sizeof kc__core_copy;
    kc__core_copy.status_create = core->status_create;
    kc__cuda_core = &kc__core_copy;
  } else if (kc__core_copy.status_create != core->status_create) {
    table = NULL;
  }
  pthread_mutex_unlock(&kc__entry_lock);
  return table;
}
