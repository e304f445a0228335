/*
 * What the files of an eager call share: the call resolved against its op
 * (resolve.c) and where a kernel context places an output (kernel_ctx.c);
 * call.c runs the call, kernel_cache.h looks its kernel up. Never
 * installed.
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

/* A resolved call remembered for the calls that repeat it: given no
 * attrs, resolution depends only on the inputs' count, dtypes and device,
 * so a later call with the same ones skips it and the kernel lookup
 * (kernel_cache.h). Immutable once published; `call` owns its values. */
typedef struct kc__call_memo {
  struct kc__call_memo* retired_next;
  kc__cache_entry* entry; /* the op's: lives as long as the memo */
  kc__resolved_call call;
} kc__call_memo;

/* resolve.c. Fills `f` (whose def is set) from the call's inputs and
 * attrs; release it after, whether or not resolution succeeded. */
kc_status* kc__resolve(kc__resolved_call* f, const DLTensor* const* inputs,
                       int32_t num_inputs, const kc_op_attr* attrs,
                       int32_t num_attrs);

/* Releases the values resolution made (a type list inferred from the
 * inputs). Inline: every call runs it. */
static inline void kc__resolved_call_release(kc__resolved_call* f) {
  for (int32_t i = 0; f->owned && i < f->def->num_attrs; ++i) {
    if (f->owned >> i & 1u) kc_any_release(&f->values[i]);
  }
}

/* True when t is a tensor an eager call takes as it is (the checks of
 * resolve.c, without their messages): valid rank and dims, compact. */
static inline bool kc__input_tensor_ok(const DLTensor* t) {
  if (!t || t->ndim < 0 || t->ndim > KC_TENSOR_MAX_NDIM ||
      (t->ndim && !t->shape)) {
    return false;
  }
  for (int32_t i = 0; i < t->ndim; ++i) {
    if (t->shape[i] < 0) return false;
  }
  return !t->strides || kc_dltensor_is_compact(t);
}

/* Host memory, which a host-memory arg of a kernel may use. */
static inline bool kc__host_device(DLDevice d) {
  return d.device_type == kDLCPU || d.device_type == kDLCUDAHost;
}

/* kernel_ctx.c. Where the index-th output lives: the call's device, or the
 * host for an output arg the kernel declared host memory. */
DLDevice kc__kernel_ctx_output_device(const kc_kernel_ctx* ctx, int32_t index);

#endif /* KCALL_OP_CALL_INTERNAL_H_ */
