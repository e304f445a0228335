/* Custom-call targets: internals shared with the program compiler. */
#ifndef KCALL_XCALL_XCALL_INTERNAL_H_
#define KCALL_XCALL_XCALL_INTERNAL_H_

#include "internal/arena.h"
#include "internal/owner.h"
#include "kcall/xcall.h"

/* Type index of target objects; internal, never seen in a kc_any. */
#define KC__TYPE_XCALL_TARGET 1024

struct kc_xcall_status {
  bool failed;
  char* message; /* kc__malloc'd; NULL when none */
  size_t size;
  void* user; /* the target's user data (kc_xcall_status_get_user) */
};

typedef struct kc__xcall_target {
  kc_object header;
  char* name;
  kc_platform platform;
  kc_xcall_api api;
  void (*fn)(void);           /* legacy conventions */
  kc_xcall_handler_fn handler; /* TYPED */
  void* user; /* TYPED: frame->user; legacy: kc_xcall_status_get_user */
  kc_deleter_fn user_deleter;
  kc_xcall_signature signature; /* TYPED: arrays below, owned */
  kc__arena defaults; /* signature.attr_defaults and what they point to */
  /* signature.gradient, parsed and resolved; NULL: none declared. */
  struct kc__op_gradient* gradient;
  /* XLA FFI handlers (xla_ffi_host.c): non-NULL xla.execute marks an XLA
   * target, which is TYPED with an open signature and no `handler`. */
  kc_xla_ffi_handlers xla;
  int32_t xla_api_major, xla_api_minor; /* -1: not reported */
  uint32_t xla_traits;
  /* KC_XCALL_GRAPH_SAFE at registration, or KC_XCALL_SIG_GRAPH_SAFE in a
   * typed signature: may be captured into a CUDA graph. */
  bool graph_safe;
  kc__owned owned; /* from registration: the plugin it belongs to (owner.h) */
} kc__xcall_target;

/* Longest target name, leaving room for "@Platform" within a key. */
#define KC__TARGET_NAME_MAX 240
/* Room for a registry key "name@Platform". */
#define KC__TARGET_KEY_CAP (KC__TARGET_NAME_MAX + 16)

/* A new target object for (name, platform) with one reference, and its
 * registry key in `key_buf` (KC__TARGET_KEY_CAP bytes). INVALID_ARGUMENT
 * for a malformed name or an unknown platform. */
kc_status* kc__xcall_target_new(kc_string_view name, kc_platform platform,
                                kc_xcall_api api, char* key_buf,
                                kc_string_view* out_key,
                                kc__xcall_target** out);

/* Publishes (or stages) the target under `key` and drops the creator's
 * reference, whether or not that succeeds. */
kc_status* kc__xcall_target_publish(kc__xcall_target* t, kc_string_view key,
                                    uint32_t flags);

/* Bytes of one value of a numeric kc_attr_type (array elements are packed
 * at this width). */
static inline size_t kc__attr_width(int32_t type) {
  switch (type) {
    case KC_ATTR_BOOL: case KC_ATTR_I8: case KC_ATTR_U8: return 1;
    case KC_ATTR_I16: case KC_ATTR_U16: return 2;
    case KC_ATTR_I32: case KC_ATTR_U32: case KC_ATTR_F32: return 4;
    default: return 8;
  }
}

/* A program's attribute as an op's (xla_ffi_adapter_attrs.c): numbers,
 * strings and arrays of numbers; *o's value is the caller's to release.
 * INVALID_ARGUMENT for a dictionary or an unsigned number above
 * INT64_MAX, RESOURCE_EXHAUSTED. */
kc_status* kc__op_attr_from(const kc_attr* a, kc_op_attr* o);

/* For the program compiler, when a custom call names "kcall.OP" for a
 * registered op OP: checks the call against the op as kc_op_infer does,
 * before it runs: its attributes (each one the op declares, of a type it
 * takes) and its operands (dtypes, ranks), then that the results the
 * program declares are the op's outputs, dtype and dims. INVALID_ARGUMENT
 * names the attribute, or the result with the shape the op produces and
 * the one declared; NULL (no check) for another target name or when no
 * such op is registered. `operands` and `results` are DLTensors whose
 * data is not read (op_target.c). */
kc_status* kc__xcall_check_op_call(kc_string_view target,
                                   const kc_attr_dict* attrs,
                                   const DLTensor* const* operands,
                                   size_t num_operands,
                                   const DLTensor* const* results,
                                   size_t num_results);

/* The target registered under (name, platform), retained (a new
 * reference), or NULL; lock-free. */
kc__xcall_target* kc__xcall_get(kc_string_view name, kc_platform platform);

/* For the program compiler: the target (name, platform), retained, into
 * *out; where there is none and the name is "kcall.OP" for an op OP on
 * the host, the op's XLA FFI adapter is registered as that target first
 * (op_target.c). NOT_FOUND as kc__xcall_not_found, or the error of making
 * the adapter (RESOURCE_EXHAUSTED when the pool is bound). */
kc_status* kc__xcall_get_for_program(kc_string_view name, kc_platform platform,
                                     kc__xcall_target** out);

/* Forgets the deleters of XLA FFI types that lie in `w`'s file, which is
 * being closed (xla_ffi_host.c): state of such a type set later is then
 * never deleted, rather than deleted by code that is gone. A library that
 * registers the type again gives its deleter back. */
void kc__xla_types_forget_code(const kc__owner* w);

/* What a buffer spec of a signature accepts, for messages that compare it
 * with a buffer ("expected f32 of rank 2, got f64[2]"): "f32 of rank 2",
 * "f32 of any rank", "any dtype of rank 2" or "any array";
 * snprintf-style. `dtype_name` names the spec's dtype as the message names
 * the buffer's (HLO's s64 where kcall says i64); NULL: kc_dtype_format's
 * name. */
size_t kc__xcall_buffer_spec_describe(const kc_xcall_buffer_spec* spec,
                                      const char* dtype_name, char* buf,
                                      size_t cap);

/* True when a buffer of `dtype` and `rank` is one `spec` accepts. */
static inline bool kc__xcall_buffer_spec_accepts(const kc_xcall_buffer_spec* spec,
                                                 DLDataType dtype, int32_t rank) {
  return (spec->dtype.bits == 0 || kc_dtype_equal(spec->dtype, dtype)) &&
         (spec->rank < 0 || spec->rank == rank);
}

/* Room for the `why` of kc__xcall_attr_match. */
#define KC__XCALL_ATTR_WHY_CAP 512

/* The value a call site gives attribute `i` of the (closed) signature
 * `sig`: `given` (NULL: the call site has none), or else the signature's
 * default. NULL when that is missing or not of the declared type, with
 * "attribute 'x': expected f32, got f64" (or "got none") in `why`;
 * `float_hint` adds, for an f64 where f32 is declared, how a Python caller
 * passes an f32. */
const kc_attr* kc__xcall_attr_match(const kc_xcall_signature* sig, int32_t i,
                                    const kc_attr* given, bool float_hint, char* why,
                                    size_t cap);

/* Every attribute of `dict`, sorted by name (bytewise), nested
 * dictionaries too, into the arena: what an open signature receives. NULL
 * when out of memory. */
kc_attr* kc__xcall_attrs_sorted(kc__arena* arena, const kc_attr_dict* dict);

/* NOT_FOUND for (name, platform), with the nearest registered targets. */
kc_status* kc__xcall_not_found(kc_string_view name, kc_platform platform);

#endif /* KCALL_XCALL_XCALL_INTERNAL_H_ */
