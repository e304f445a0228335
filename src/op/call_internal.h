/*
 * What the files of an eager call share: the call resolved against its op
 * (resolve.c), the kernel cache lookup (kernel_cache.c), and where a
 * kernel context places an output (kernel_ctx.c); call.c runs the call.
 * Never installed.
 */
#ifndef KCALL_OP_CALL_INTERNAL_H_
#define KCALL_OP_CALL_INTERNAL_H_

#include "op/op_internal.h"

/* An attribute value not yet resolved (its type_index). */
#define KC__UNSET (-1)

/* An eager call resolved against its op, on the caller's stack: the
 * attribute values (given, inferred from the inputs, or defaulted), where
 * each arg's tensors start, the dtypes, and the device the call runs on. */
typedef struct kc__resolved_call {
  const kc__op_schema* def;
  kc_any values[KC_OP_MAX_ATTRS];
  uint64_t owned; /* bit i: values[i] holds a reference this call owns */
  int32_t input_starts[KC_OP_MAX_ARGS + 1];
  int32_t output_starts[KC_OP_MAX_ARGS + 1];
  int32_t num_inputs;
  int32_t num_outputs;
  DLDataType input_dtypes[KC_OP_MAX_TENSORS];
  DLDataType output_dtypes[KC_OP_MAX_TENSORS];
  DLDevice device;
  bool mixed_devices;
} kc__resolved_call;

/* resolve.c. Fills `f` (whose def is set) from the call's inputs and
 * attrs; release it after, whether or not resolution succeeded. */
kc_status* kc__resolve(kc__resolved_call* f, const DLTensor* const* inputs,
                       int32_t num_inputs, const kc_op_attr* attrs,
                       int32_t num_attrs);
void kc__resolved_call_release(kc__resolved_call* f);

/* Host memory, which a host-memory arg of a kernel may use. */
static inline bool kc__host_device(DLDevice d) {
  return d.device_type == kDLCPU || d.device_type == kDLCUDAHost;
}

/* kernel_cache.c. The cache entry for a resolved call of op: cached,
 * re-checked after new registrations, or selected and constructed now.
 * Borrowed: it lives as long as the op. */
kc_status* kc__cache_get(const kc_op* op, const kc__resolved_call* f,
                         kc__cache_entry** out);

/* kernel_ctx.c. Where the index-th output lives: the call's device, or the
 * host for an output arg the kernel declared host memory. */
DLDevice kc__kernel_ctx_output_device(const kc_kernel_ctx* ctx, int32_t index);

#endif /* KCALL_OP_CALL_INTERNAL_H_ */
