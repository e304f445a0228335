/*
 * kcall/kernel.h — kernels: the code that computes an op on one kind of
 * device for some dtypes.
 *
 * A kernel is three callbacks (kcall/abi.h):
 *   create(ctx, &state)  builds per-instance state from the attributes;
 *                        runs once per (op, attributes, device) and the
 *                        result is cached (may be NULL; create may be NULL);
 *   compute(state, ctx)  runs one call: reads inputs, writes outputs;
 *   delete(state)        frees the state when the cache entry goes: at
 *                        kc_op_registry_reset, or when a thread that lost
 *                        a race to construct the same entry drops its
 *                        own; may be NULL.
 * compute may run on several threads at once with the same state: state
 * that changes must be synchronised (atomics, say).
 *
 *   kc_kernel_builder* b;
 *   kc_kernel_builder_create("MatMul", kDLCPU, NULL, matmul_compute, NULL,
 *                            &b);
 *   DLDataType f32 = {kDLFloat, 32, 1};
 *   kc_kernel_builder_add_type_constraint(b, "T", &f32, 1);
 *   kc_status* st = kc_kernel_registry_register(b);  (consumes b)
 *
 * The registry keeps kernels under "OP:DEVICE:N" (N counts from 0 per op
 * and device type, in registration order), which is the name `kcall
 * inspect` shows. A kernel may be registered before its op (by another
 * plugin, say); it is checked against the op when both are known.
 *
 * Thread safety as for ops (kcall/op.h): lock-free lookups, serialised and
 * staged registration, builders used by one thread.
 */
#ifndef KCALL_KERNEL_H_
#define KCALL_KERNEL_H_

#include "kcall/op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================== */
/* Building and registering                                                 */
/* ======================================================================== */

/* Creates a builder for a kernel of the op `op_name` (NUL-terminated) on
 * devices of type `device_type`. `compute` is required; `create` and
 * `delete_fn` may be NULL. INVALID_ARGUMENT for a bad name, a NULL compute
 * or out; RESOURCE_EXHAUSTED. The caller owns the builder until it passes
 * it to kc_kernel_registry_register or kc_kernel_builder_destroy. */
KC_API kc_status* kc_kernel_builder_create(const char* op_name,
                                           DLDeviceType device_type,
                                           kc_kernel_create_fn create,
                                           kc_kernel_compute_fn compute,
                                           kc_deleter_fn delete_fn,
                                           kc_kernel_builder** out_builder);

/* Restricts the kernel to calls whose type attr `attr_name` (or every item
 * of a list(type) attr) is one of `dtypes[0 .. count)`; count >= 1. One
 * constraint per attr: INVALID_ARGUMENT for a second one, an empty list or
 * a bad name. Several dtypes in one builder are one kernel serving each;
 * compute reads the actual dtype from its inputs or attrs. */
KC_API kc_status* kc_kernel_builder_add_type_constraint(
    kc_kernel_builder* builder, const char* attr_name, const DLDataType* dtypes,
    int32_t count);

/* Among matching kernels the highest priority wins (default 0). */
KC_API kc_status* kc_kernel_builder_set_priority(kc_kernel_builder* builder,
                                                 int32_t priority);

/* Declares that the input or output arg `arg_name` stays in host memory
 * even when the kernel runs on another device (shapes, indices): an eager
 * call then accepts that input from the CPU. */
KC_API kc_status* kc_kernel_builder_add_host_memory_arg(
    kc_kernel_builder* builder, const char* arg_name);

/* Attaches data every instance's create sees (kc_kernel_construct_ctx_get_
 * data), such as the host table of a plugin. `data_deleter` (may be NULL)
 * runs with `data` when the kernel is freed, or when registration fails.
 * Replacing earlier data runs the earlier deleter. */
KC_API kc_status* kc_kernel_builder_set_data(kc_kernel_builder* builder,
                                             void* data,
                                             kc_deleter_fn data_deleter);

/* Frees a builder that will not be registered (running the data deleter).
 * NULL is a no-op. */
KC_API void kc_kernel_builder_destroy(kc_kernel_builder* builder);

/* Registers the kernel; consumes `builder` either way. When the op is
 * already registered (or staged by the same plugin), the kernel is checked
 * against it now: INVALID_ARGUMENT for a constraint on an attr that is not
 * a type or list(type) attr of the op, a constraint dtype the op does not
 * allow, or a host-memory arg the op does not have. A kernel registered
 * before its op is not checked; one whose constraints name attrs the op
 * lacks is then never selected (and shows in the no-kernel message). Also
 * INVALID_ARGUMENT for the builder's first error; RESOURCE_EXHAUSTED. */
KC_API kc_status* kc_kernel_registry_register(kc_kernel_builder* builder);

/* An array (of strings) describing the kernels registered for `op_name`,
 * in selection order per device: "cpu: T in {f32, f64} (priority 1)".
 * Empty when there are none. Owned by the caller, from `alloc` (NULL:
 * system). */
KC_API kc_status* kc_kernel_registry_list(const kc_allocator* alloc,
                                          kc_string_view op_name,
                                          kc_array** out_descriptions);

/* Removes every kernel. Cached instances keep their kernel alive until
 * kc_op_registry_reset. NOT thread-safe; for tests and shutdown. */
KC_API void kc_kernel_registry_reset(void);

/* ======================================================================== */
/* Construction context                                                     */
/* ======================================================================== */
/* Valid during create only; what it returns is borrowed for that long. */

KC_API const kc_op_attrs* kc_kernel_construct_ctx_get_attrs(
    const kc_kernel_construct_ctx* ctx);
KC_API kc_string_view
kc_kernel_construct_ctx_get_op_name(const kc_kernel_construct_ctx* ctx);
KC_API DLDevice
kc_kernel_construct_ctx_get_device(const kc_kernel_construct_ctx* ctx);
/* Numbers of input and output tensors, and their dtypes (all-zero out of
 * range). */
KC_API int32_t
kc_kernel_construct_ctx_get_input_count(const kc_kernel_construct_ctx* ctx);
KC_API DLDataType kc_kernel_construct_ctx_get_input_dtype(
    const kc_kernel_construct_ctx* ctx, int32_t index);
KC_API int32_t
kc_kernel_construct_ctx_get_output_count(const kc_kernel_construct_ctx* ctx);
KC_API DLDataType kc_kernel_construct_ctx_get_output_dtype(
    const kc_kernel_construct_ctx* ctx, int32_t index);
/* What kc_kernel_builder_set_data attached, or NULL. */
KC_API void* kc_kernel_construct_ctx_get_data(
    const kc_kernel_construct_ctx* ctx);

/* ======================================================================== */
/* Compute context                                                          */
/* ======================================================================== */
/*
 * Valid during compute only. Tensors are numbered flat, as in shape
 * inference. Inputs are read-only views, compact row-major (honour
 * byte_offset). Outputs whose shape inference settled are allocated before
 * compute; the others the kernel allocates once it knows their shape. Every
 * output must exist when compute returns.
 *
 * The getters and kc_kernel_ctx_set_status may be called from any thread
 * compute hands work to (a parallel_for body, say); allocation only from
 * the thread compute runs on.
 */

KC_API int32_t kc_kernel_ctx_get_input_count(const kc_kernel_ctx* ctx);
/* The index-th input; NULL out of range. */
KC_API const DLTensor* kc_kernel_ctx_get_input(const kc_kernel_ctx* ctx,
                                               int32_t index);
KC_API int32_t kc_kernel_ctx_get_output_count(const kc_kernel_ctx* ctx);
/* The index-th output, or NULL when it is not allocated yet or out of
 * range. */
KC_API DLTensor* kc_kernel_ctx_get_output(const kc_kernel_ctx* ctx,
                                          int32_t index);
/* The tensors of the input arg named `arg_name`: [*out_start, *out_stop).
 * NOT_FOUND when the op has no such input. */
KC_API kc_status* kc_kernel_ctx_get_input_range(const kc_kernel_ctx* ctx,
                                                const char* arg_name,
                                                int32_t* out_start,
                                                int32_t* out_stop);

/* Allocates the index-th output with `shape` (its dtype comes from the
 * definition) and returns it. If it is already allocated (its shape was
 * inferred, or the caller provided it), returns that one when the shape is
 * the same and INVALID_ARGUMENT otherwise; a shape contradicting what
 * inference knew is INVALID_ARGUMENT too. RESOURCE_EXHAUSTED. */
KC_API kc_status* kc_kernel_ctx_allocate_output(kc_kernel_ctx* ctx,
                                                int32_t index,
                                                const int64_t* shape,
                                                int32_t ndim,
                                                DLTensor** out_tensor);

/* Scratch memory for this call, freed when compute returns. `alignment`
 * 0 means 64. On the CPU, host memory from the call's allocator. On a
 * device (cuda:N), device memory allocated in the order of the call's
 * stream (kc_kernel_ctx_get_stream) and freed in that order once compute
 * returns, so work compute queued on the stream may use it; alignment up
 * to 256 (INVALID_ARGUMENT above). INVALID_ARGUMENT for size 0;
 * RESOURCE_EXHAUSTED. */
KC_API kc_status* kc_kernel_ctx_allocate_temp(kc_kernel_ctx* ctx, size_t size,
                                              size_t alignment, void** out_ptr);

/* Records a failure of this call; the first one recorded wins and later
 * ones are destroyed. The call fails with it even if compute returns NULL
 * (a status compute returns comes first). Takes ownership of `status`;
 * NULL is a no-op. Thread-safe. */
KC_API void kc_kernel_ctx_set_status(kc_kernel_ctx* ctx, kc_status* status);

/* The pool to run parallel work on (never NULL). */
KC_API kc_thread_pool* kc_kernel_ctx_get_thread_pool(const kc_kernel_ctx* ctx);
/* The stream this call's work goes on: on a device (cuda:N), the caller's
 * stream (kc_op_call_options.stream) or kcall's default stream of the
 * device (a cudaStream_t; never NULL there, so launching on it never means
 * the legacy default stream by accident); NULL on the CPU. A kernel queues
 * its work there and returns without waiting for it. Compute runs on the
 * caller's thread, whose current CUDA device kcall does not promise: a
 * kernel makes kc_kernel_ctx_get_device(ctx).device_id current itself
 * (cudaSetDevice, cheap when it already is). */
KC_API void* kc_kernel_ctx_get_stream(const kc_kernel_ctx* ctx);
KC_API DLDevice kc_kernel_ctx_get_device(const kc_kernel_ctx* ctx);
/* The attributes of this call (those the kernel was constructed with). */
KC_API const kc_op_attrs* kc_kernel_ctx_get_attrs(const kc_kernel_ctx* ctx);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KCALL_KERNEL_H_ */
