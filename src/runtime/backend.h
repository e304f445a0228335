/*
 * The contract between the core and a device backend library (today:
 * libkcall_cuda). Never installed: the core and the backend are built from
 * one tree, and the version below is checked when the backend is loaded.
 *
 * The core never includes CUDA headers and never links the CUDA runtime.
 * When a CUDA device is first asked for, the core dlopens the backend
 * library (see src/runtime/device.c for where it looks) and calls its one
 * exported symbol, KC__BACKEND_ENTRY_SYMBOL:
 *
 *   const kc__backend* kc_backend_entry(uint32_t abi_version,
 *                                       const kc__backend_core* core);
 *
 * which returns its table, or NULL when it was built for another
 * KC__BACKEND_ABI_VERSION. The backend links no part of kcall: everything
 * it needs from the core (making statuses) comes through `core`, so that a
 * process holding several copies of kcall cannot mix them up.
 *
 * Conventions for every function of the table:
 *   - `ordinal` is the device number (DLDevice.device_id), already checked
 *     by the core to lie in [0, device_count);
 *   - a stream is the backend's native stream handle (a cudaStream_t);
 *     NULL is the device's legacy default stream;
 *   - failures return an owned kc_status* made through core->status_create
 *     whose message names the operation and the driver's error ("cudaMalloc
 *     of 1048576 bytes on cuda:0: out of memory (cudaErrorMemoryAllocation)");
 *     out-of-memory is KC_RESOURCE_EXHAUSTED, a missing feature
 *     KC_UNIMPLEMENTED, anything else the driver reports KC_INTERNAL;
 *   - everything is thread-safe, and every call makes `ordinal` the calling
 *     thread's current device itself.
 */
#ifndef KCALL_RUNTIME_BACKEND_H_
#define KCALL_RUNTIME_BACKEND_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kcall/abi.h"

#define KC__BACKEND_ABI_VERSION 1u
#define KC__BACKEND_ENTRY_SYMBOL "kc_backend_entry"

#ifdef __cplusplus
extern "C" {
#endif

/* What the core gives the backend. */
typedef struct kc__backend_core {
  size_t struct_size;
  kc_status* (*status_create)(kc_status_code code, const char* fmt, ...)
      KC_PRINTF(2, 3);
} kc__backend_core;

/* Directions of a copy (the same values as kc_memcpy_kind in
 * kcall/device.h). */
enum {
  KC__COPY_HOST_TO_DEVICE = 1,
  KC__COPY_DEVICE_TO_HOST = 2,
  KC__COPY_DEVICE_TO_DEVICE = 3
};

/* Comparison directions of KC_OP_COMPARE, as HLO spells them. A direction
 * with KC__CMP_TOTAL_ORDER or'ed in compares f32 or f64 operands in XLA's
 * total order (type=TOTALORDER: -NaN < -inf < ... < -0 < +0 < ... < +inf
 * < +NaN) rather than IEEE's. */
enum {
  KC__CMP_EQ = 1,
  KC__CMP_NE,
  KC__CMP_LT,
  KC__CMP_LE,
  KC__CMP_GT,
  KC__CMP_GE,
  KC__CMP_TOTAL_ORDER = 16
};

/* One element-wise instruction on device memory, all buffers compact with
 * `count` elements:
 *   - arity 1 (unary ops, KC_OP_CONVERT): out = op(in[0]);
 *   - arity 2 (binary ops, KC_OP_COMPARE with `direction`): out =
 *     op(in[0], in[1]);
 *   - arity 3: KC_OP_SELECT, out = in[0] (pred) ? in[1] : in[2], and
 *     KC_OP_CLAMP, out = min(max(in[1], in[0]), in[2]) (HLO's operand
 *     order: min, operand, max).
 * `in_dtype` is the dtype of the data operands (for select, of in[1] and
 * in[2]; in[0] is pred, an 8-bit bool); `out_dtype` the result's. The
 * semantics are those of the host's kernels (src/program/instr/elementwise.c):
 * integer division by zero gives -1, INT_MIN / -1 gives INT_MIN, float to
 * integer conversion saturates and maps NaN to 0. */
typedef struct kc__elementwise_desc {
  int32_t op;        /* kc_opcode */
  int32_t arity;     /* 1, 2 or 3 */
  int32_t direction; /* KC__CMP_* (| KC__CMP_TOTAL_ORDER) for KC_OP_COMPARE;
                        0 otherwise */
  DLDataType in_dtype;
  DLDataType out_dtype;
  int64_t count;
  const void* in[3];
  void* out;
} kc__elementwise_desc;

/* out (rank out_rank, dims out_dims) from in (rank in_rank, dims in_dims):
 * operand dim i is result dim map[i]; elements of `esize` bytes (1, 2, 4,
 * 8 or 16). Ranks are at most 32. The arrays are host memory and need not
 * outlive the call. */
typedef struct kc__broadcast_desc {
  const void* in;
  void* out;
  int32_t in_rank;
  int32_t out_rank;
  const int64_t* in_dims;
  const int64_t* out_dims;
  const int64_t* map;
  size_t esize;
} kc__broadcast_desc;

typedef struct kc__device_props {
  char name[256];
  int32_t compute_major;
  int32_t compute_minor;
  int32_t multiprocessor_count;
  int32_t max_threads_per_block;
  int32_t warp_size;
  size_t total_memory;
  size_t shared_memory_per_block;
  int32_t driver_version;  /* e.g. 13000 for 13.0 */
  int32_t runtime_version; /* the runtime the backend was built with */
  int32_t pci_bus_id;
  int32_t pci_device_id;
} kc__device_props;

typedef struct kc__backend {
  size_t struct_size;
  uint32_t abi_version; /* KC__BACKEND_ABI_VERSION */
  const char* name;     /* "CUDA" */
  DLDeviceType device_type;

  /* Once, before anything else: finds the driver and the devices. Fails
   * (any code; the core prefixes "no CUDA device: ") when there is no
   * driver or no device, saying which: "the CUDA driver is not installed
   * or too old (cudaErrorInsufficientDriver: ...)", "no device
   * (cudaErrorNoDevice)". On success *out_count >= 1. */
  kc_status* (*init)(int32_t* out_count);

  kc_status* (*get_properties)(int32_t ordinal, kc__device_props* out);

  /* Device memory. With a NULL stream, a synchronous allocation usable on
   * every stream (cudaMalloc / cudaFree, which waits for the device); with
   * a stream, stream-ordered (cudaMallocAsync / cudaFreeAsync). A size of
   * 0 gives a NULL pointer; freeing NULL does nothing. */
  kc_status* (*alloc)(int32_t ordinal, size_t bytes, void* stream, void** out);
  kc_status* (*free)(int32_t ordinal, void* ptr, void* stream);

  /* Page-locked host memory, for staging copies (cudaMallocHost). */
  kc_status* (*host_alloc)(int32_t ordinal, size_t bytes, void** out);
  void (*host_free)(int32_t ordinal, void* ptr);

  /* An asynchronous copy of `bytes` bytes on `stream` (KC__COPY_*). */
  kc_status* (*memcpy)(int32_t ordinal, void* dst, const void* src,
                       size_t bytes, int32_t kind, void* stream);
  /* Sets `bytes` bytes of device memory to `value`, on `stream`. */
  kc_status* (*memset)(int32_t ordinal, void* dst, int value, size_t bytes,
                       void* stream);

  /* Streams: a non-blocking stream (cudaStreamNonBlocking) of the device. */
  kc_status* (*stream_create)(int32_t ordinal, void** out);
  void (*stream_destroy)(int32_t ordinal, void* stream);
  /* Waits for everything queued on `stream`; reports an error the device
   * hit meanwhile (a failed kernel, an illegal address). */
  kc_status* (*stream_synchronize)(int32_t ordinal, void* stream);
  /* An error from an earlier launch on the calling thread (without
   * waiting); NULL when there is none. */
  kc_status* (*check_launch)(int32_t ordinal);

  /* Built-in instructions on device memory, queued on `stream`. */
  bool (*elementwise_supported)(int32_t op, DLDataType in, DLDataType out);
  kc_status* (*elementwise)(int32_t ordinal, void* stream,
                            const kc__elementwise_desc* desc);
  kc_status* (*broadcast)(int32_t ordinal, void* stream,
                          const kc__broadcast_desc* desc);
  /* out[i] = i along dimension `dim` of a compact tensor of `rank` dims:
   * the element at index (i0, ..., i{rank-1}) holds i{dim}, converted to
   * `dtype`. */
  kc_status* (*iota)(int32_t ordinal, void* stream, void* out, DLDataType dtype,
                     int32_t rank, const int64_t* dims, int32_t dim);

  /* CUDA graphs: everything queued on `stream` between capture_begin and
   * capture_end (thread-local capture mode) becomes an instantiated graph,
   * *out_graph; graph_launch replays it on a stream; graph_destroy frees
   * it. A failed capture_end leaves the stream usable and out NULL. */
  kc_status* (*capture_begin)(int32_t ordinal, void* stream);
  kc_status* (*capture_end)(int32_t ordinal, void* stream, void** out_graph);
  kc_status* (*graph_launch)(int32_t ordinal, void* graph, void* stream);
  void (*graph_destroy)(int32_t ordinal, void* graph);
} kc__backend;

typedef const kc__backend* (*kc__backend_entry_fn)(uint32_t abi_version,
                                                  const kc__backend_core* core);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KCALL_RUNTIME_BACKEND_H_ */
