/* The core's side of device backends (src/runtime/device.c): loading them
 * and finding the one that serves a device. Never installed. */
#ifndef KCALL_RUNTIME_DEVICE_INTERNAL_H_
#define KCALL_RUNTIME_DEVICE_INTERNAL_H_

#include "kcall/device.h"
#include "runtime/backend.h"

/* The backend serving devices of `type`, loaded on the first call (see
 * kcall/device.h for where it is looked for), with its device count.
 * FAILED_PRECONDITION "no CUDA device: ..." when it cannot be loaded or
 * found no device; UNIMPLEMENTED for a type no backend serves (kDLCPU
 * included: the CPU has no backend table). The table lives as long as the
 * process. */
kc_status* kc__backend_get(DLDeviceType type, const kc__backend** out,
                           int32_t* out_count);

/* As kc__backend_get for device.device_type, also checking the ordinal
 * (OUT_OF_RANGE naming the count). */
kc_status* kc__device_backend(DLDevice device, const kc__backend** out);

/* kcall's own stream on `device` (kc_device_get_default_stream). */
kc_status* kc__device_default_stream(DLDevice device, void** out_stream);

/* True for memory the host can address directly: kDLCPU, kDLCUDAHost,
 * kDLCUDAManaged. */
bool kc__device_host_addressable(DLDevice device);

#endif /* KCALL_RUNTIME_DEVICE_INTERNAL_H_ */
