/*
 * kcall/xcall.h — custom-call targets: native functions a program calls by
 * name, with XLA's calling conventions or kcall's typed one.
 *
 * A target is registered under (name, platform). Its calling convention is
 * its API version (kc_xcall_api in kcall/abi.h):
 *
 *   ORIGINAL                  host: void fn(void* out, const void** ins)
 *   STATUS_RETURNING          host: + kc_xcall_status* (may fail)
 *   STATUS_RETURNING_UNIFIED  host: + opaque bytes and their length
 *                             (the status also carries the target's user
 *                             data: kc_xcall_status_get_user)
 *   TYPED                     kc_status* fn(kc_xcall_frame*): buffers with
 *                             dtypes and dims, typed attributes, per-instance
 *                             state, scratch memory, the thread pool
 *
 * CUDA targets (kc_xcall_gpu_fn, kc_xcall_gpu_status_fn; ORIGINAL and
 * STATUS_RETURNING) are called by programs compiled for KC_PLATFORM_CUDA
 * with the run's stream and `buffers`, a host array of device pointers:
 * the operands then the result, each flattened in pre-order of its shape,
 * tuple nodes included, as XLA lays them out. A tuple operand's entry is a
 * device buffer holding its elements' device pointers (written by kcall,
 * on the stream, before the call; never null, as every sub-buffer is
 * known); a tuple result's entry is device memory of one pointer per
 * element that the callee fills, its leaves being already allocated.
 * Typed handlers on CUDA get frame->stream and DLTensors on the device.
 * KC_XCALL_GRAPH_SAFE (kcall/abi.h) lets runs be captured into CUDA
 * graphs (see "CUDA executables" in kcall/program.h).
 *
 * A failed call (a STATUS_RETURNING target that sets failure, a TYPED
 * handler that returns a status) ends the run: no output is returned.
 *
 * Thread safety: registration and lookup are thread-safe; lookups take no
 * lock. A registration made while a plugin's init runs is published only
 * if the init succeeds (see kcall/plugin.h).
 */
#ifndef KCALL_XCALL_H_
#define KCALL_XCALL_H_

#include "kcall/op.h"
#include "kcall/value.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Parses a platform name: "Host", "cpu", "CUDA", "gpu" (any case).
 * INVALID_ARGUMENT naming the text otherwise. */
KC_API kc_status* kc_platform_parse(kc_string_view text,
                                    kc_platform* out_platform);

/* "Host" or "CUDA"; "unknown" otherwise. Static storage. */
KC_API const char* kc_platform_name(kc_platform platform);

/* "ORIGINAL", "STATUS_RETURNING", "STATUS_RETURNING_UNIFIED", "TYPED";
 * "unknown" otherwise. Static storage. */
KC_API const char* kc_xcall_api_name(kc_xcall_api api);

/* Marks the running call as failed with `message` (copied; `size` bytes,
 * need not be NUL-terminated). The run stops after the call returns and
 * the message is reported with the instruction's name. A later call on the
 * same status replaces the message. NULL status is a no-op. */
KC_API void kc_xcall_status_set_failure(kc_xcall_status* status,
                                        const char* message, size_t size);

/* Clears a failure set earlier in the same call. */
KC_API void kc_xcall_status_set_success(kc_xcall_status* status);

/* Registers a target with one of the legacy conventions. `fn` is the
 * function cast to void(*)(void); `api` says how it will be called:
 * ORIGINAL, STATUS_RETURNING or STATUS_RETURNING_UNIFIED (the last is
 * host-only).
 *
 * `user` is data the target reads while it runs, so that it needs no
 * globals. The legacy signatures are XLA's and cannot change, so kcall
 * hands the data over through the one argument of them that is its own:
 * the kc_xcall_status* of the status-returning conventions, read with
 * kc_xcall_status_get_user. ORIGINAL (and the CUDA kc_xcall_gpu_fn) has
 * no such argument, so user data is refused for it; a target that needs
 * data and no status registers as STATUS_RETURNING and never sets
 * failure. The target owns `user` from this call on: `user_deleter` (may
 * be NULL) runs with it exactly once, when the target is freed
 * (kc_xcall_registry_reset; unloading its plugin; discarded with a failing
 * plugin init; or, replaced with KC_REGISTER_OVERRIDE, once nothing holds
 * it: no executable compiled against it), or at once if registration
 * fails. The data may be read by concurrent runs:
 * keep it read-only or synchronised.
 *
 * Refused: INVALID_ARGUMENT for a NULL fn, a malformed name (1 to 255
 * bytes of [A-Za-z0-9_.:$-]), an unknown platform or api (TYPED goes
 * through kc_xcall_register_typed), user data with ORIGINAL;
 * ALREADY_EXISTS when the (name, platform) pair is taken, unless flags has
 * KC_REGISTER_OVERRIDE; RESOURCE_EXHAUSTED. */
KC_API kc_status* kc_xcall_register_v2(kc_string_view name,
                                       kc_platform platform, kc_xcall_api api,
                                       void (*fn)(void), void* user,
                                       kc_deleter_fn user_deleter,
                                       uint32_t flags);

/* kc_xcall_register_v2 without user data. */
KC_API kc_status* kc_xcall_register(kc_string_view name, kc_platform platform,
                                    kc_xcall_api api, void (*fn)(void),
                                    uint32_t flags);

/* The user data of the target being called (kc_xcall_register_v2), from
 * the status a STATUS_RETURNING or STATUS_RETURNING_UNIFIED target is
 * handed; NULL when it has none, or for a NULL status. Borrowed: owned by
 * the target. A pointer load: cheap enough for every call. */
KC_API void* kc_xcall_status_get_user(const kc_xcall_status* status);

/* Registers a typed handler. `signature` (copied) says what the handler
 * accepts; `user` is handed to it in every frame and released with
 * `user_deleter` (may be NULL) when the target is destroyed, or at once
 * if registration fails. With KC_XCALL_SIG_OPEN in signature->flags the
 * handler takes any buffers and receives every attribute of the call
 * site, sorted by name. Errors as kc_xcall_register, plus
 * INVALID_ARGUMENT for a malformed signature (negative counts, a NULL
 * array with a positive count, an attribute without a name or of an
 * unknown type, a struct_size too small, an open signature with lists,
 * unknown flags). */
KC_API kc_status* kc_xcall_register_typed(kc_string_view name,
                                          kc_platform platform,
                                          const kc_xcall_signature* signature,
                                          kc_xcall_handler_fn fn, void* user,
                                          kc_deleter_fn user_deleter,
                                          uint32_t flags);

/* What is registered under (name, platform). */
typedef struct kc_xcall_target_desc {
  size_t struct_size; /* set by the caller */
  kc_string_view name;
  kc_platform platform;
  kc_xcall_api api;
  /* The typed handler's signature; NULL for the legacy conventions. */
  const kc_xcall_signature* signature;
  /* True for XLA FFI handlers (kcall/xla_ffi.h), whose signature is open;
   * then the XLA FFI API version the handler reported (-1 and -1 when it
   * did not say). */
  bool xla_ffi;
  int32_t xla_ffi_api_major;
  int32_t xla_ffi_api_minor;
} kc_xcall_target_desc;

/* Looks a target up. On success `out` (filled up to out->struct_size)
 * borrows from the registry: valid while the target stays registered,
 * that is until it is overridden or the plugin that registered it is
 * unloaded (by any thread), or kc_xcall_registry_reset(). NOT_FOUND lists
 * the nearest registered targets (computed when its message is first
 * read). */
KC_API kc_status* kc_xcall_lookup(kc_string_view name, kc_platform platform,
                                  kc_xcall_target_desc* out);

/* The gradient a typed target declares (kc_xcall_signature.gradient),
 * resolved: op_name is the gradient target's name, and the kc_op_grad_arg
 * indices count the target's arguments (KC_OP_GRAD_INPUT) and results
 * (KC_OP_GRAD_OUTPUT, KC_OP_GRAD_COTANGENT). *out_declared says whether it
 * declares one; `out` (filled up to out->struct_size) is left alone when
 * it does not. Borrowed as kc_xcall_lookup's description: valid while the
 * target stays registered. NOT_FOUND as kc_xcall_lookup; INVALID_ARGUMENT
 * for a NULL out or out_declared. */
KC_API kc_status* kc_xcall_get_gradient(kc_string_view name,
                                        kc_platform platform,
                                        kc_op_gradient* out,
                                        bool* out_declared);

/* Prints a signature as "(f32[?], f32[2]) -> (f32[*]) {eps: f32}" ('?'
 * dims: the rank is fixed, '*': any rank; "any" for any dtype; an open
 * signature is "(...) -> (...) {...}"), snprintf-style. An optional
 * attribute (one with a default, kc_xcall_signature.attr_defaults) shows
 * its default: "{eps: f32 = 1e-05, mode: str = 'fast', axes: array<i64>
 * = [0, 1]}" (floats with the fewest digits that read back the same,
 * strings quoted as kc_sv_format_quoted quotes them, arrays cut after 8
 * items with the count). */
KC_API size_t kc_xcall_signature_format(const kc_xcall_signature* signature,
                                        char* buf, size_t cap);

/* An array (of strings) of the registered targets as "name@Platform",
 * sorted, allocated from `alloc` (NULL: system). */
KC_API kc_status* kc_xcall_registry_list(const kc_allocator* alloc,
                                         kc_array** out_names);

/* Removes every target. NOT thread-safe with registration. Compiled
 * programs hold the targets they call, which therefore live on until the
 * programs are destroyed. For tests and shutdown. */
KC_API void kc_xcall_registry_reset(void);

/* The attribute named `name` in `dict`, or NULL. A linear search: for
 * typed handlers, which receive their declared attributes in order, this is
 * only needed for optional ones. */
KC_API const kc_attr* kc_attr_dict_lookup(const kc_attr_dict* dict,
                                          kc_string_view name);

/* The name of an attribute type ("f32", "i64", "str", "array", "dict");
 * "unknown" otherwise. Static storage. */
KC_API const char* kc_attr_type_name(int32_t type);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KCALL_XCALL_H_ */
