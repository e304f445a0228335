/*
 * What the parts of libkcall_cuda share: the core's table, making statuses
 * from CUDA errors, making a device current, and the launchers of the
 * built-in kernels (written in CUDA C++, called from the C table). Never
 * installed.
 */
#ifndef KCALL_RUNTIME_CUDA_CUDA_INTERNAL_H_
#define KCALL_RUNTIME_CUDA_CUDA_INTERNAL_H_

#include <cuda_runtime_api.h>

#include "runtime/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The core that loaded the backend (set once by kc_backend_entry). */
extern const kc__backend_core* kc__cuda_core;

/* An owned status for `err`, a failed CUDA call: "<what>: <the runtime's
 * description> (<cudaErrorName>)", with the code backend.h fixes
 * (RESOURCE_EXHAUSTED for out of memory, UNIMPLEMENTED for a missing
 * feature or kernel image, INTERNAL otherwise). Clears the calling
 * thread's last error, so that a later check_launch does not report it
 * again. */
kc_status* kc__cuda_error(cudaError_t err, const char* fmt, ...)
    KC_PRINTF(2, 3);

/* An owned status of `code` with a message, through the core. */
#define KC__CUDA_STATUS(code, ...) kc__cuda_core->status_create(code, __VA_ARGS__)

/* Makes `ordinal` the calling thread's current device (a no-op when it is
 * already). */
kc_status* kc__cuda_use_device(int32_t ordinal);

/* ---- built-in kernels (elementwise.cu, layout.cu) --------------------------- */

bool kc__cuda_elementwise_supported(int32_t op, DLDataType in, DLDataType out);
/* Each checks its arguments (against what elementwise_supported says,
 * for elementwise), makes `ordinal` current and launches. */
kc_status* kc__cuda_elementwise_launch(int32_t ordinal, cudaStream_t stream,
                                       const kc__elementwise_desc* desc);
kc_status* kc__cuda_broadcast_launch(int32_t ordinal, cudaStream_t stream,
                                     const kc__broadcast_desc* desc);
kc_status* kc__cuda_iota_launch(int32_t ordinal, cudaStream_t stream, void* out,
                                DLDataType dtype, int32_t rank,
                                const int64_t* dims, int32_t dim);

/* The launch geometry of a grid-stride loop over `count` elements: blocks
 * of KC__CUDA_BLOCK threads, at most enough blocks to fill the device a
 * few times over. */
#define KC__CUDA_BLOCK 256
unsigned kc__cuda_grid_for(int64_t count);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KCALL_RUNTIME_CUDA_CUDA_INTERNAL_H_ */
