/*
 * kcall/device.h — devices: counting them, their properties, streams,
 * device and pinned host memory, copies.
 *
 * The CPU is built in. CUDA devices are served by a separate library,
 * libkcall_cuda, that the core loads the first time a CUDA device is asked
 * for (by any function here, kc_tensor_create on "cuda:N", or compiling a
 * program for KC_PLATFORM_CUDA). libkcall itself never links the CUDA
 * runtime. The backend library is looked for, in order:
 *   1. at the path in the environment variable KCALL_CUDA_BACKEND, when it
 *      is set (and only there);
 *   2. beside libkcall (the directory libkcall was loaded from);
 *   3. by the dynamic loader's search (LD_LIBRARY_PATH, ...), as
 *      "libkcall_cuda.so".
 * The outcome is settled once per process. When there is no backend, no
 * driver or no device, every CUDA request fails with FAILED_PRECONDITION
 * and a message that starts "no CUDA device: " and says which it was.
 *
 * Streams are the backend's native handles, passed as void*: a
 * cudaStream_t on CUDA. A NULL stream is the device's legacy default
 * stream. On the CPU, streams are NULL and every operation is synchronous.
 *
 * Every function here is thread-safe.
 */
#ifndef KCALL_DEVICE_H_
#define KCALL_DEVICE_H_

#include "kcall/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* kc_memcpy_kind and kc_device_properties are in kcall/abi.h (plugins
 * reach these functions through the host table). */

/* How many devices of `type` there are: 1 for kDLCPU; for kDLCUDA, the
 * number of CUDA devices. FAILED_PRECONDITION "no CUDA device: ..." when
 * the backend, the driver or a device is missing (the message says which);
 * UNIMPLEMENTED for other device types; INVALID_ARGUMENT for a NULL out. */
KC_API kc_status* kc_device_get_count(DLDeviceType type, int32_t* out_count);

/* Loads the backend of `device` if needed and checks the device exists:
 * NULL when it can be used. FAILED_PRECONDITION as kc_device_get_count;
 * OUT_OF_RANGE for an ordinal past the last device, naming how many there
 * are. Every other function here checks the same way. */
KC_API kc_status* kc_device_check(DLDevice device);

/* Fills `out` (up to out->struct_size) with the properties of `device`. */
KC_API kc_status* kc_device_get_properties(DLDevice device,
                                           kc_device_properties* out);

/* Device memory of `bytes` bytes on `device`, at least 256-byte aligned
 * (64 on the CPU). With `stream` NULL the allocation is synchronous and
 * usable on every stream; with a stream it is stream-ordered: usable by
 * work queued on that stream after this call (and by other streams once
 * they are ordered after it). 0 bytes gives NULL. Free it with
 * kc_device_free on the same device. RESOURCE_EXHAUSTED when the device
 * is out of memory. */
KC_API kc_status* kc_device_allocate(DLDevice device, size_t bytes,
                                     void* stream, void** out_ptr);

/* Frees memory from kc_device_allocate: with `stream` NULL at once (after
 * the device finishes what uses it); with a stream, once the work queued
 * on it before this call is done. NULL does nothing. */
KC_API kc_status* kc_device_free(DLDevice device, void* ptr, void* stream);

/* Page-locked host memory for staging copies to and from `device` (plain
 * aligned host memory for the CPU). Free it with kc_device_host_free. */
KC_API kc_status* kc_device_host_allocate(DLDevice device, size_t bytes,
                                          void** out_ptr);
KC_API void kc_device_host_free(DLDevice device, void* ptr);

/* Copies `bytes` bytes, queued on `stream` (asynchronous with respect to
 * the host unless the stream is NULL and the host side is pageable). On
 * the CPU every kind is a plain memcpy. */
KC_API kc_status* kc_device_memcpy(DLDevice device, void* dst, const void* src,
                                   size_t bytes, kc_memcpy_kind kind,
                                   void* stream);

/* A new stream of `device` that does not synchronise with the legacy
 * default stream; the caller destroys it with kc_device_stream_destroy.
 * The CPU's stream is NULL. */
KC_API kc_status* kc_device_stream_create(DLDevice device, void** out_stream);
KC_API void kc_device_stream_destroy(DLDevice device, void* stream);

/* Waits until everything queued on `stream` has run, and reports an error
 * the device hit meanwhile (INTERNAL with the driver's message). */
KC_API kc_status* kc_device_stream_synchronize(DLDevice device, void* stream);

/* The stream kcall uses on `device` when a caller names none (created on
 * first use, lives as long as the process; NULL on the CPU). Work kcall
 * queues there is waited for before the call that queued it returns. */
KC_API kc_status* kc_device_get_default_stream(DLDevice device,
                                               void** out_stream);

/* Copies the elements of `from` into `to`: both compact row-major, with
 * the same dtype and dims, on the CPU (or pinned host memory) or on one
 * device. Queued on `stream` when a device is involved; NULL waits for the
 * copy to finish. INVALID_ARGUMENT names what differs. */
KC_API kc_status* kc_dltensor_copy(const DLTensor* from, const DLTensor* to,
                                   void* stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KCALL_DEVICE_H_ */
