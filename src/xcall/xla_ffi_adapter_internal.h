/* The XLA FFI adapter's parts shared by its files (xla_ffi_adapter.c and
 * xla_ffi_adapter_attrs.c). Never installed. */
#ifndef KCALL_XCALL_XLA_FFI_ADAPTER_INTERNAL_H_
#define KCALL_XCALL_XLA_FFI_ADAPTER_INTERNAL_H_

#include "kcall/op.h"
#include "xcall/xla_ffi_internal.h"

/* XLA's intra-op pool for the kernels XLA calls (xla_pool.c). The adapter
 * enters it around each call it runs for XLA, and the kernels' pool is
 * then kc__xla_pool_current(fallback): the pool on XLA's threads, or
 * `fallback` where XLA offers none (or is kcall's own host, whose calls
 * run on kcall's pool). */
typedef struct kc__xla_pool_call {
  const XLA_FFI_Api* api;
  XLA_FFI_ExecutionContext* ctx;
  kc_thread_pool* pool;
} kc__xla_pool_call;
void kc__xla_pool_enter(const XLA_FFI_Api* api, XLA_FFI_ExecutionContext* ctx,
                        kc__xla_pool_call* saved);
kc_thread_pool* kc__xla_pool_current(kc_thread_pool* fallback);
void kc__xla_pool_leave(const kc__xla_pool_call* saved);

/* Most buffers and decoded attributes (dictionary entries included) of one
 * call, as kcall/xla_ffi.h documents. */
#define KC__ADAPTER_MAX_BUFFERS 64
#define KC__ADAPTER_MAX_ATTRS 128

/* ---- errors, made by the calling XLA (xla_ffi_adapter.c) ----------------- */

XLA_FFI_Error* kc__adapter_error(const XLA_FFI_Api* api, kc_status_code code,
                                 const char* fmt, ...) KC_PRINTF(3, 4);

/* The status as an XLA error (the status is destroyed): its code, and
 * "WHO: " (unless NULL: an op's status names the op) and its whole text
 * without the code's name, which XLA prints itself. */
XLA_FFI_Error* kc__adapter_error_from(const XLA_FFI_Api* api, const char* who,
                                      kc_status* st);

/* ---- attributes (xla_ffi_adapter_attrs.c) -------------------------------- */

/* Decoding XLA's attributes into kc_attr: copied into a site's arena, or,
 * with no arena, borrowed from XLA's frame for the call, with dictionary
 * entries taken from `pool`. */
typedef struct kc__decoder {
  const XLA_FFI_Api* api;
  kc__arena* arena; /* NULL: borrow */
  kc_attr* pool;    /* with no arena: the end of the free room */
  int32_t pool_left; /* entries free before `pool` */
  int32_t budget;   /* attributes left to decode */
  const char* who;  /* "kcall target 'NAME'" */
} kc__decoder;

/* The attributes a target's signature declares, in its order, each of its
 * declared type; an open signature takes all of XLA's, in XLA's order. */
XLA_FFI_Error* kc__decode_target_attrs(kc__decoder* d, const kc_xcall_signature* sig,
                                       const XLA_FFI_Attrs* in, kc_attr** out,
                                       int32_t* out_count);

/* An op's attributes as kc_op_attr values (numbers, strings, arrays of
 * numbers), into *op_attrs (allocated here; *num_op_attrs counts those
 * that hold a value, for the caller to release even on failure); what the
 * op does not declare is left for kc_op_call_into to refuse by name. */
XLA_FFI_Error* kc__decode_op_attrs(kc__decoder* d, const XLA_FFI_Attrs* in,
                                   kc_op_attr** op_attrs, int32_t* num_op_attrs);

#endif /* KCALL_XCALL_XLA_FFI_ADAPTER_INTERNAL_H_ */
