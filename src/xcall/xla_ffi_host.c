/*
 * kcall as a host of XLA FFI handlers: the XLA_FFI_Api table, errors,
 * futures, user types, the execution context, metadata queries and the
 * registration of handlers as custom-call targets. (Element types and
 * attributes in XLA's terms: xla_ffi_convert.c.)
 *
 * Call frames themselves are laid out by the program compiler
 * (src/program/compiler/lower_call.c, with xla_ffi_frame.c), so that a run only
 * writes buffer addresses; this file supplies what the frame points at.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal/code.h"
#include "internal/grow.h"
#include "internal/common.h"
#include "kcall/runtime.h"
#include "xcall/xla_ffi_internal.h"
#include "xcall/xla_ffi_layout.h" /* XLA's layouts, frozen */

_Static_assert(KC_XLA_FFI_API_VERSION_MAJOR == KC_XLA_FFI_API_MAJOR &&
                   KC_XLA_FFI_API_VERSION_MINOR == KC_XLA_FFI_API_MINOR,
               "one version of XLA's FFI");
/* The two bundles agree field for field after kcall's struct_size. */
_Static_assert(offsetof(kc_xla_ffi_handlers, execute) - offsetof(kc_xla_ffi_handlers, instantiate) ==
                   offsetof(XLA_FFI_Handler_Bundle, execute),
               "kc_xla_ffi_handlers follows XLA_FFI_Handler_Bundle");

/* Calls an erased handler through its real type. */
static inline XLA_FFI_Handler* kc__xla_handler(kc_xla_ffi_handler_fn fn) {
  return (XLA_FFI_Handler*)(void (*)(void))fn;
}

/* ---- errors ------------------------------------------------------------------------ */

struct XLA_FFI_Error {
  XLA_FFI_Error_Code code;
  bool shared; /* the static out-of-memory error: never freed */
  const char* message;
};

static XLA_FFI_Error kc__xla_oom = {.code = XLA_FFI_Error_Code_RESOURCE_EXHAUSTED,
                                    .shared = true,
                                    .message = "out of memory making an XLA FFI error"};

static XLA_FFI_Error* kc__xla_error_new(int32_t code, const char* message) {
  if (code < 0 || code > XLA_FFI_Error_Code_UNAUTHENTICATED) code = XLA_FFI_Error_Code_UNKNOWN;
  size_t n = strlen(message);
  XLA_FFI_Error* e = kc__malloc(sizeof *e + n + 1);
  if (!e) return &kc__xla_oom;
  char* text = (char*)(e + 1);
  memcpy(text, message, n + 1);
  e->code = (XLA_FFI_Error_Code)code;
  e->shared = false;
  e->message = text;
  return e;
}

XLA_FFI_Error* kc__xla_error_make(kc_status_code code, const char* fmt, ...) {
  if (code == KC_OK) return NULL;
  char buf[1024];
  va_list args;
  va_start(args, fmt);
  vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return kc__xla_error_new((int32_t)code, buf);
}

/* An error for a status (destroyed here): its code, and its context and
 * message without the code's name. */
static XLA_FFI_Error* kc__xla_error_from_status(kc_status* st) {
  if (!st) return NULL;
  char buf[1024];
  kc_status_format(st, buf, sizeof buf);
  const char* name = kc_status_code_name(kc_status_get_code(st));
  size_t skip = strlen(name);
  const char* text = strncmp(buf, name, skip) == 0 && buf[skip] == ':' ? buf + skip + 2 : buf;
  XLA_FFI_Error* e = kc__xla_error_new((int32_t)kc_status_get_code(st), text);
  kc_status_destroy(st);
  return e;
}

static void kc__xla_error_free(XLA_FFI_Error* e) {
  if (e && !e->shared) kc__free(e);
}

kc_status* kc__xla_error_take(XLA_FFI_Error* e) {
  if (!e) return NULL;
  kc_status_code code = e->code == XLA_FFI_Error_Code_OK ? KC_UNKNOWN : (kc_status_code)e->code;
  kc_status* st = kc_status_create(code, "%s", e->message ? e->message : "");
  kc__xla_error_free(e);
  return st;
}

/* INVALID_ARGUMENT unless the caller's struct holds `need` bytes. */
#define KC__XLA_CHECK_SIZE(args, type, last_field)                                  \
  do {                                                                              \
    if (!(args)) {                                                                  \
      return kc__xla_error_make(KC_INVALID_ARGUMENT, "%s: the arguments are NULL",  \
                                #type);                                             \
    }                                                                               \
    if ((args)->struct_size < KC__XLA_SIZE(type, last_field)) {                     \
      return kc__xla_error_make(KC_INVALID_ARGUMENT,                                \
                                "%s: struct_size %zu, expected at least %zu "       \
                                "(kcall implements XLA FFI API %d.%d)",             \
                                #type, (args)->struct_size,                         \
                                KC__XLA_SIZE(type, last_field),                     \
                                KC_XLA_FFI_API_MAJOR, KC_XLA_FFI_API_MINOR);        \
    }                                                                               \
  } while (0)

static XLA_FFI_Error* kc__xla_error_create(XLA_FFI_Error_Create_Args* args) {
  KC__XLA_CHECK_SIZE(args, XLA_FFI_Error_Create_Args, errc);
  return kc__xla_error_new((int32_t)args->errc, args->message ? args->message : "");
}

static void kc__xla_error_get_message(XLA_FFI_Error_GetMessage_Args* args) {
  if (!args || args->struct_size < KC__XLA_SIZE(XLA_FFI_Error_GetMessage_Args, message)) {
    return;
  }
  args->message = args->error ? args->error->message : "";
}

static void kc__xla_error_destroy(XLA_FFI_Error_Destroy_Args* args) {
  if (!args || args->struct_size < KC__XLA_SIZE(XLA_FFI_Error_Destroy_Args, error)) {
    return;
  }
  kc__xla_error_free(args->error);
}

/* ---- futures --------------------------------------------------------------------------- */

struct XLA_FFI_Future {
  pthread_mutex_t mu;
  pthread_cond_t done_cv;
  bool done;
  XLA_FFI_Error* error; /* set with done, by SetError */
};

static XLA_FFI_Error* kc__xla_future_create(XLA_FFI_Future_Create_Args* args) {
  KC__XLA_CHECK_SIZE(args, XLA_FFI_Future_Create_Args, extension_start);
  XLA_FFI_Future* f = kc__calloc(1, sizeof *f);
  if (!f) return kc__xla_error_make(KC_RESOURCE_EXHAUSTED, "out of memory making a future");
  pthread_mutex_init(&f->mu, NULL);
  pthread_cond_init(&f->done_cv, NULL);
  args->future = f;
  return NULL;
}

/* Completes `f` with `error` (NULL: available). Nothing touches `f` after
 * the unlock: the waiter may free it as soon as it sees `done`. */
static XLA_FFI_Error* kc__xla_future_complete(XLA_FFI_Future* f, XLA_FFI_Error* error) {
  if (!f) {
    kc__xla_error_free(error);
    return kc__xla_error_make(KC_INVALID_ARGUMENT, "the future is NULL");
  }
  pthread_mutex_lock(&f->mu);
  bool again = f->done;
  if (!again) {
    f->done = true;
    f->error = error;
    pthread_cond_broadcast(&f->done_cv);
  }
  pthread_mutex_unlock(&f->mu);
  if (again) {
    kc__xla_error_free(error);
    return kc__xla_error_make(KC_FAILED_PRECONDITION, "the future is already complete");
  }
  return NULL;
}

static XLA_FFI_Error* kc__xla_future_set_available(XLA_FFI_Future_SetAvailable_Args* args) {
  KC__XLA_CHECK_SIZE(args, XLA_FFI_Future_SetAvailable_Args, future);
  return kc__xla_future_complete(args->future, NULL);
}

static XLA_FFI_Error* kc__xla_future_set_error(XLA_FFI_Future_SetError_Args* args) {
  KC__XLA_CHECK_SIZE(args, XLA_FFI_Future_SetError_Args, error);
  if (!args->error) {
    return kc__xla_error_make(KC_INVALID_ARGUMENT, "XLA_FFI_Future_SetError: the error is NULL");
  }
  return kc__xla_future_complete(args->future, args->error);
}

/* Waits for `f`, frees it, and returns the error it completed with. */
static XLA_FFI_Error* kc__xla_future_wait(XLA_FFI_Future* f) {
  pthread_mutex_lock(&f->mu);
  while (!f->done) pthread_cond_wait(&f->done_cv, &f->mu);
  XLA_FFI_Error* error = f->error;
  pthread_mutex_unlock(&f->mu);
  pthread_cond_destroy(&f->done_cv);
  pthread_mutex_destroy(&f->mu);
  kc__free(f);
  return error;
}

kc_status* kc__xla_call_finish(XLA_FFI_CallFrame* frame, XLA_FFI_Error* error) {
  XLA_FFI_Future* future = frame->future;
  frame->future = NULL;
  if (error) {
    /* A synchronous error with a future is a broken handler; the future
     * is still the host's to free once the handler completes it. */
    if (future) kc__xla_error_free(kc__xla_future_wait(future));
    return kc__xla_error_take(error);
  }
  return future ? kc__xla_error_take(kc__xla_future_wait(future)) : NULL;
}

/* ---- user types ------------------------------------------------------------------------ */

typedef struct kc__xla_type {
  char* name;
  size_t name_size;
  int64_t id;
  void (*deleter)(void* object);
} kc__xla_type;

/* The registered types, for the life of the process; lock order: after
 * every registry (registration never happens under this lock). */
static pthread_mutex_t kc__xla_types_mu = PTHREAD_MUTEX_INITIALIZER;
static kc__xla_type* kc__xla_types;
static size_t kc__xla_num_types, kc__xla_cap_types;
static int64_t kc__xla_next_type_id = 1;

static kc__xla_type* kc__xla_type_by_name(kc_string_view name) {
  for (size_t i = 0; i < kc__xla_num_types; ++i) {
    kc__xla_type* t = &kc__xla_types[i];
    if (t->name_size == name.size && !memcmp(t->name, name.data, name.size)) return t;
  }
  return NULL;
}

static kc__xla_type* kc__xla_type_by_id(int64_t id) {
  for (size_t i = 0; i < kc__xla_num_types; ++i) {
    if (kc__xla_types[i].id == id) return &kc__xla_types[i];
  }
  return NULL;
}

static kc_status* kc__xla_type_add(kc_string_view name, XLA_FFI_TypeId* type_id,
                                   const XLA_FFI_TypeInfo* info) {
  kc__xla_type* t = kc__xla_type_by_name(name);
  if (t) {
    if (type_id->type_id != 0 && type_id->type_id != t->id) {
      return kc_status_create(KC_ALREADY_EXISTS,
                              "XLA FFI type %s is registered with id %lld, not %lld",
                              KC__Q(name), (long long)t->id,
                              (long long)type_id->type_id);
    }
    type_id->type_id = t->id;
    /* The latest info wins: a library loaded again (its old mapping gone)
     * registers its types again. State already set keeps its deleter. */
    if (info && info->struct_size >= KC__XLA_SIZE(XLA_FFI_TypeInfo, deleter)) {
      t->deleter = info->deleter;
    }
    return NULL;
  }
  int64_t id = type_id->type_id;
  if (id < 0) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "XLA FFI type %s: type id %lld is negative", KC__Q(name),
                            (long long)id);
  }
  if (id && kc__xla_type_by_id(id)) {
    return kc_status_create(KC_ALREADY_EXISTS,
                            "XLA FFI type %s: type id %lld is taken by another type",
                            KC__Q(name), (long long)id);
  }
  if (!KC__GROW(kc__xla_types, kc__xla_cap_types, kc__xla_num_types + 1)) {
    return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  }
  char* copy = kc__malloc(name.size + 1);
  if (!copy) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  memcpy(copy, name.data, name.size);
  copy[name.size] = '\0';
  if (!id) id = kc__xla_next_type_id;
  if (id >= kc__xla_next_type_id) kc__xla_next_type_id = id + 1;
  kc__xla_type* added = &kc__xla_types[kc__xla_num_types++];
  added->name = copy;
  added->name_size = name.size;
  added->id = id;
  added->deleter = info && info->struct_size >= KC__XLA_SIZE(XLA_FFI_TypeInfo, deleter)
                       ? info->deleter
                       : NULL;
  type_id->type_id = id;
  return NULL;
}

void kc__xla_types_forget_code(const kc__owner* w) {
  pthread_mutex_lock(&kc__xla_types_mu);
  for (size_t i = 0; i < kc__xla_num_types; ++i) {
    uintptr_t code = KC__CODE(kc__xla_types[i].deleter);
    for (size_t r = 0; code && r < w->num_ranges; ++r) {
      if (code >= w->lo[r] && code < w->hi[r]) kc__xla_types[i].deleter = NULL;
    }
  }
  pthread_mutex_unlock(&kc__xla_types_mu);
}

kc_status* kc_xla_ffi_type_register(kc_string_view name, void* type_id,
                                    const void* type_info) {
  if (!type_id || !name.data || !name.size) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_xla_ffi_type_register: %s",
                            type_id ? "the name is empty" : "type_id is NULL");
  }
  pthread_mutex_lock(&kc__xla_types_mu);
  kc_status* st = kc__xla_type_add(name, type_id, type_info);
  pthread_mutex_unlock(&kc__xla_types_mu);
  return st;
}

/* The deleter of registered type `id` into *out; false when unknown. */
static bool kc__xla_type_deleter(int64_t id, void (**out)(void*)) {
  pthread_mutex_lock(&kc__xla_types_mu);
  kc__xla_type* t = kc__xla_type_by_id(id);
  if (t) *out = t->deleter;
  pthread_mutex_unlock(&kc__xla_types_mu);
  return t != NULL;
}

static XLA_FFI_Error* kc__xla_type_register_fn(XLA_FFI_Type_Register_Args* args) {
  KC__XLA_CHECK_SIZE(args, XLA_FFI_Type_Register_Args, type_id);
  /* XLA's own size for this struct stops before type_info, which callers
   * built with XLA's headers set anyway. */
  kc_string_view name = {args->name.ptr, args->name.len};
  return kc__xla_error_from_status(kc_xla_ffi_type_register(name, args->type_id, args->type_info));
}

/* ---- the execution context ----------------------------------------------------------- */

static const char* kc__xla_stage_name(int32_t stage) {
  switch (stage) {
    case XLA_FFI_ExecutionStage_INSTANTIATE: return "instantiate";
    case XLA_FFI_ExecutionStage_PREPARE: return "prepare";
    case XLA_FFI_ExecutionStage_INITIALIZE: return "initialize";
    case XLA_FFI_ExecutionStage_EXECUTE: return "execute";
    default: return "unknown";
  }
}

static XLA_FFI_Error* kc__xla_no_instance(const char* fn) {
  return kc__xla_error_make(KC_FAILED_PRECONDITION,
                            "%s: no call site to keep state for (outside a "
                            "compiled program)",
                            fn);
}

/* What a caller of State_Set or State_Get passed, whatever its layout. */
typedef struct kc__xla_state_call {
  XLA_FFI_ExecutionContext* ctx;
  int32_t stage;
  XLA_FFI_TypeId* type_id;
  void** state;                 /* where the state is (Set) or goes (Get) */
  void (*deleter)(void* state); /* API 0.0 and 0.1: the state's own */
  bool own_deleter;
} kc__xla_state_call;

/* A struct too small for any version's layout. */
static XLA_FFI_Error* kc__xla_state_args_too_small(const char* type, size_t size,
                                                   const char* sizes) {
  return kc__xla_error_make(KC_INVALID_ARGUMENT,
                            "%s: struct_size %zu, expected %s (kcall reads XLA FFI API "
                            "0.0 to %d.%d)",
                            type, size, sizes, KC_XLA_FFI_API_MAJOR, KC_XLA_FFI_API_MINOR);
}

/* Whether a 48-byte XLA_FFI_State_Set_Args in `ctx` has API 0.0's and
 * 0.1's layout: the call site's handlers reported one of those versions. */
static bool kc__xla_state_set_is_0_1(const XLA_FFI_ExecutionContext* ctx) {
  const kc__xla_instance* inst = ctx ? ctx->instance : NULL;
  return inst && inst->api_major == 0 && inst->api_minor >= 0 && inst->api_minor <= 1;
}

/* Reads XLA_FFI_State_Set_Args in the layout of the caller's version:
 * 40 bytes is 0.2's; 48 is 0.3's, or 0.0's and 0.1's for a handler that
 * reported one of those. A version without `stage` sets the instantiate
 * stage's state. */
static XLA_FFI_Error* kc__xla_state_set_read(XLA_FFI_State_Set_Args* args,
                                             kc__xla_state_call* out) {
  if (!args) {
    return kc__xla_error_make(KC_INVALID_ARGUMENT,
                              "XLA_FFI_State_Set_Args: the arguments are NULL");
  }
  memset(out, 0, sizeof *out);
  out->ctx = args->ctx;
  out->stage = XLA_FFI_ExecutionStage_INSTANTIATE;
  if (args->struct_size >= KC__XLA_SIZE(XLA_FFI_State_Set_Args, state) &&
      !kc__xla_state_set_is_0_1(args->ctx)) {
    out->stage = (int32_t)args->stage;
    out->type_id = args->type_id;
    out->state = &args->state;
  } else if (args->struct_size >= KC__XLA_STATE_SET_ARGS_0_1_SIZE) {
    kc__xla_state_set_args_0_1* old = (kc__xla_state_set_args_0_1*)(void*)args;
    out->type_id = old->type_id;
    out->state = &old->state;
    out->deleter = old->deleter;
    out->own_deleter = true;
  } else if (args->struct_size >= KC__XLA_STATE_ARGS_0_2_SIZE) {
    kc__xla_state_args_0_2* old = (kc__xla_state_args_0_2*)(void*)args;
    out->type_id = old->type_id;
    out->state = &old->state;
  } else {
    return kc__xla_state_args_too_small("XLA_FFI_State_Set_Args", args->struct_size,
                                        "40 (API 0.2) or 48 (API 0.0, 0.1, 0.3)");
  }
  return NULL;
}

/* Reads XLA_FFI_State_Get_Args: 48 bytes is 0.3's layout, 40 that of 0.0
 * to 0.2 (the instantiate stage's state). */
static XLA_FFI_Error* kc__xla_state_get_read(XLA_FFI_State_Get_Args* args,
                                             kc__xla_state_call* out) {
  if (!args) {
    return kc__xla_error_make(KC_INVALID_ARGUMENT,
                              "XLA_FFI_State_Get_Args: the arguments are NULL");
  }
  memset(out, 0, sizeof *out);
  out->ctx = args->ctx;
  out->stage = XLA_FFI_ExecutionStage_INSTANTIATE;
  if (args->struct_size >= KC__XLA_SIZE(XLA_FFI_State_Get_Args, state)) {
    out->stage = (int32_t)args->stage;
    out->type_id = args->type_id;
    out->state = &args->state;
  } else if (args->struct_size >= KC__XLA_STATE_ARGS_0_2_SIZE) {
    kc__xla_state_args_0_2* old = (kc__xla_state_args_0_2*)(void*)args;
    out->type_id = old->type_id;
    out->state = &old->state;
  } else {
    return kc__xla_state_args_too_small("XLA_FFI_State_Get_Args", args->struct_size,
                                        "40 (API 0.0 to 0.2) or 48 (API 0.3)");
  }
  return NULL;
}

static XLA_FFI_Error* kc__xla_state_set(XLA_FFI_State_Set_Args* args) {
  kc__xla_state_call call;
  XLA_FFI_Error* err = kc__xla_state_set_read(args, &call);
  if (err) return err;
  XLA_FFI_ExecutionContext* ctx = call.ctx;
  if (!ctx || !ctx->instance) return kc__xla_no_instance("XLA_FFI_State_Set");
  if (ctx->stage == XLA_FFI_ExecutionStage_EXECUTE) {
    return kc__xla_error_make(KC_FAILED_PRECONDITION,
                              "XLA_FFI_State_Set: state is set at the instantiate, "
                              "prepare or initialize stage (kcall runs them when the "
                              "program is compiled), not at execute");
  }
  int32_t stage = call.stage;
  if (stage < XLA_FFI_ExecutionStage_INSTANTIATE || stage > XLA_FFI_ExecutionStage_INITIALIZE) {
    return kc__xla_error_make(KC_INVALID_ARGUMENT,
                              "XLA_FFI_State_Set: stage %d: expected instantiate, "
                              "prepare or initialize",
                              stage);
  }
  int64_t id = call.type_id ? call.type_id->type_id : 0;
  void (*deleter)(void*) = NULL;
  if (id <= 0 || !kc__xla_type_deleter(id, &deleter)) {
    return kc__xla_error_make(KC_FAILED_PRECONDITION,
                              "XLA_FFI_State_Set: type id %lld is not registered with "
                              "kcall: register the state's type first "
                              "(kc_xla_ffi_type_register; in JAX, "
                              "jax.ffi.register_ffi_type)",
                              (long long)id);
  }
  /* Before API 0.2 the state brought its deleter; the type had none. */
  if (call.own_deleter && call.deleter) deleter = call.deleter;
  struct kc__xla_state* slot = &ctx->instance->states[stage];
  if (slot->type_id) {
    return kc__xla_error_make(KC_ALREADY_EXISTS,
                              "XLA_FFI_State_Set: the %s stage's state is already set",
                              kc__xla_stage_name(stage));
  }
  slot->type_id = id;
  slot->state = *call.state;
  slot->deleter = deleter;
  return NULL;
}

static XLA_FFI_Error* kc__xla_state_get(XLA_FFI_State_Get_Args* args) {
  kc__xla_state_call call;
  XLA_FFI_Error* err = kc__xla_state_get_read(args, &call);
  if (err) return err;
  XLA_FFI_ExecutionContext* ctx = call.ctx;
  if (!ctx || !ctx->instance) return kc__xla_no_instance("XLA_FFI_State_Get");
  int32_t stage = call.stage;
  if (stage < XLA_FFI_ExecutionStage_INSTANTIATE || stage > XLA_FFI_ExecutionStage_INITIALIZE) {
    return kc__xla_error_make(KC_INVALID_ARGUMENT,
                              "XLA_FFI_State_Get: stage %d: expected instantiate, "
                              "prepare or initialize",
                              stage);
  }
  const struct kc__xla_state* slot = &ctx->instance->states[stage];
  if (!slot->type_id) {
    return kc__xla_error_make(KC_NOT_FOUND,
                              "XLA_FFI_State_Get: no state was set at the %s stage",
                              kc__xla_stage_name(stage));
  }
  int64_t id = call.type_id ? call.type_id->type_id : 0;
  if (id != slot->type_id) {
    return kc__xla_error_make(KC_INVALID_ARGUMENT,
                              "XLA_FFI_State_Get: the %s stage's state has type id "
                              "%lld, asked for %lld",
                              kc__xla_stage_name(stage), (long long)slot->type_id,
                              (long long)id);
  }
  *call.state = slot->state;
  return NULL;
}

static XLA_FFI_Error* kc__xla_stream_get(XLA_FFI_Stream_Get_Args* args) {
  KC__XLA_CHECK_SIZE(args, XLA_FFI_Stream_Get_Args, stream);
  /* The run's stream on CUDA; the host has none. Outside a run (the
   * compile-time stages) there is none either. */
  args->stream = args->ctx && args->ctx->run ? args->ctx->run->stream : NULL;
  return NULL;
}

static XLA_FFI_Error* kc__xla_context_get(XLA_FFI_ExecutionContext_Get_Args* args) {
  KC__XLA_CHECK_SIZE(args, XLA_FFI_ExecutionContext_Get_Args, data);
  return kc__xla_error_make(KC_NOT_FOUND,
                            "XLA_FFI_ExecutionContext_Get: kcall has no user data "
                            "in the execution context (type id %lld)",
                            (long long)(args->type_id ? args->type_id->type_id : 0));
}

/* What precedes each block DeviceMemory_Allocate hands out. */
typedef struct kc__xla_block {
  const kc_allocator* alloc;
  size_t total;  /* bytes allocated */
  size_t align;  /* alignment allocated with */
  size_t prefix; /* bytes from the allocation to the data */
} kc__xla_block;

static XLA_FFI_Error* kc__xla_memory_allocate(XLA_FFI_DeviceMemory_Allocate_Args* args) {
  KC__XLA_CHECK_SIZE(args, XLA_FFI_DeviceMemory_Allocate_Args, data);
  size_t align = args->alignment ? args->alignment : 16;
  if (align & (align - 1)) {
    return kc__xla_error_make(KC_INVALID_ARGUMENT,
                              "XLA_FFI_DeviceMemory_Allocate: alignment %zu is not a "
                              "power of two",
                              args->alignment);
  }
  if (align < 16) align = 16;
  if (args->ctx && args->ctx->run && args->ctx->run->stream) {
    /* Host memory handed to a handler that runs kernels would be a wrong
     * pointer: refused rather than given. */
    return kc__xla_error_make(KC_UNIMPLEMENTED,
                              "XLA_FFI_DeviceMemory_Allocate: not available in a run on "
                              "CUDA device %d (use the call's scratch or results)",
                              (int)args->ctx->run->device_ordinal);
  }
  size_t prefix = align > sizeof(kc__xla_block) ? align : sizeof(kc__xla_block);
  const kc_allocator* alloc =
      args->ctx && args->ctx->run ? args->ctx->run->alloc : kc_allocator_system();
  char* base = args->size > SIZE_MAX - prefix
                   ? NULL
                   : kc_allocator_alloc(alloc, prefix + args->size, align);
  if (!base) {
    return kc__xla_error_make(KC_RESOURCE_EXHAUSTED,
                              "XLA_FFI_DeviceMemory_Allocate: out of memory allocating "
                              "%zu bytes",
                              args->size);
  }
  kc__xla_block block = {
      .alloc = alloc, .total = prefix + args->size, .align = align, .prefix = prefix};
  memcpy(base + prefix - sizeof block, &block, sizeof block);
  args->data = base + prefix;
  return NULL;
}

static XLA_FFI_Error* kc__xla_memory_free(XLA_FFI_DeviceMemory_Free_Args* args) {
  KC__XLA_CHECK_SIZE(args, XLA_FFI_DeviceMemory_Free_Args, data);
  if (!args->data) return NULL;
  kc__xla_block block;
  memcpy(&block, (char*)args->data - sizeof block, sizeof block);
  if (block.total - block.prefix != args->size) {
    return kc__xla_error_make(KC_INVALID_ARGUMENT,
                              "XLA_FFI_DeviceMemory_Free: size %zu, but the block "
                              "holds %zu bytes",
                              args->size, block.total - block.prefix);
  }
  kc_allocator_free(block.alloc, (char*)args->data - block.prefix, block.total, block.align);
  return NULL;
}

static XLA_FFI_Error* kc__xla_pool_schedule(XLA_FFI_ThreadPool_Schedule_Args* args) {
  KC__XLA_CHECK_SIZE(args, XLA_FFI_ThreadPool_Schedule_Args, data);
  if (!args->ctx || !args->ctx->pool) {
    return kc__xla_error_make(KC_UNIMPLEMENTED, "XLA_FFI_ThreadPool_Schedule: no thread pool");
  }
  if (!args->task) {
    return kc__xla_error_make(KC_INVALID_ARGUMENT, "XLA_FFI_ThreadPool_Schedule: task is NULL");
  }
  kc_closure task = {.struct_size = sizeof task,
                     .fn = (void (*)(void*))args->task,
                     .self = args->data,
                     .deleter = NULL};
  return kc__xla_error_from_status(kc_thread_pool_schedule(args->ctx->pool, &task));
}

static XLA_FFI_Error* kc__xla_pool_size(XLA_FFI_ThreadPool_NumThreads_Args* args) {
  KC__XLA_CHECK_SIZE(args, XLA_FFI_ThreadPool_NumThreads_Args, num_threads);
  if (!args->ctx || !args->ctx->pool) {
    return kc__xla_error_make(KC_UNIMPLEMENTED, "XLA_FFI_ThreadPool_NumThreads: no thread pool");
  }
  if (!args->num_threads) {
    return kc__xla_error_make(KC_INVALID_ARGUMENT,
                              "XLA_FFI_ThreadPool_NumThreads: num_threads is NULL");
  }
  *args->num_threads = kc_thread_pool_get_size(args->ctx->pool);
  return NULL;
}

static _Atomic int64_t kc__xla_next_run_id = 1;

static XLA_FFI_Error* kc__xla_run_id(XLA_FFI_RunId_Get_Args* args) {
  KC__XLA_CHECK_SIZE(args, XLA_FFI_RunId_Get_Args, run_id);
  kc__xla_run_info* run = args->ctx ? args->ctx->run : NULL;
  if (!run) {
    return kc__xla_error_make(KC_FAILED_PRECONDITION,
                              "XLA_FFI_RunId_Get: there is a run id only while a "
                              "program runs");
  }
  int64_t id = atomic_load_explicit(&run->run_id, memory_order_acquire);
  if (!id) {
    int64_t fresh = atomic_fetch_add_explicit(&kc__xla_next_run_id, 1, memory_order_relaxed);
    id = 0;
    if (atomic_compare_exchange_strong(&run->run_id, &id, fresh)) id = fresh;
  }
  args->run_id = id;
  return NULL;
}

static XLA_FFI_Error* kc__xla_device_ordinal(XLA_FFI_DeviceOrdinal_Get_Args* args) {
  KC__XLA_CHECK_SIZE(args, XLA_FFI_DeviceOrdinal_Get_Args, device_ordinal);
  args->device_ordinal = args->ctx && args->ctx->run ? args->ctx->run->device_ordinal : 0;
  return NULL;
}

static XLA_FFI_Error* kc__xla_handler_register(XLA_FFI_Handler_Register_Args* args) {
  KC__XLA_CHECK_SIZE(args, XLA_FFI_Handler_Register_Args, traits);
  kc_platform platform;
  kc_status* st = kc_platform_parse((kc_string_view){args->platform.ptr, args->platform.len},
                                    &platform);
  if (!st) {
    kc_xla_ffi_handlers h = {
        .struct_size = sizeof h,
        .instantiate = (kc_xla_ffi_handler_fn)(void (*)(void))args->bundle.instantiate,
        .prepare = (kc_xla_ffi_handler_fn)(void (*)(void))args->bundle.prepare,
        .initialize = (kc_xla_ffi_handler_fn)(void (*)(void))args->bundle.initialize,
        .execute = (kc_xla_ffi_handler_fn)(void (*)(void))args->bundle.execute};
    st = kc_xcall_register_xla_ffi((kc_string_view){args->name.ptr, args->name.len}, platform,
                                   &h, 0);
  }
  return kc__xla_error_from_status(st);
}

/* ---- the table ------------------------------------------------------------------------- */

static const XLA_FFI_Api kc__xla_api_table = {
    KC__XLA_API_SIZE,
    NULL,
    {KC__XLA_API_VERSION_SIZE, NULL, KC_XLA_FFI_API_MAJOR, KC_XLA_FFI_API_MINOR},
    NULL,
    kc__xla_error_create,
    kc__xla_error_get_message,
    kc__xla_error_destroy,
    kc__xla_handler_register,
    kc__xla_stream_get,
    kc__xla_type_register_fn,
    kc__xla_context_get,
    kc__xla_state_set,
    kc__xla_state_get,
    kc__xla_memory_allocate,
    kc__xla_memory_free,
    kc__xla_pool_schedule,
    kc__xla_pool_size,
    kc__xla_future_create,
    kc__xla_future_set_available,
    kc__xla_future_set_error,
    kc__xla_run_id,
    kc__xla_device_ordinal,
};

const XLA_FFI_Api* kc__xla_api(void) { return &kc__xla_api_table; }

const void* kc_xla_ffi_get_api(void) { return &kc__xla_api_table; }

/* ---- metadata and registration ---------------------------------------------------------- */

/* Asks `fn` for its metadata as XLA does. *out_answered tells whether it
 * filled in a version. */
static kc_status* kc__xla_query_metadata(kc_xla_ffi_handler_fn fn, XLA_FFI_Metadata* md,
                                         bool* out_answered) {
  memset(md, 0, sizeof *md);
  md->struct_size = KC__XLA_METADATA_SIZE;
  md->api_version.struct_size = KC__XLA_API_VERSION_SIZE;
  md->api_version.major_version = -1;
  md->api_version.minor_version = -1;
  XLA_FFI_Metadata_Extension ext;
  memset(&ext, 0, sizeof ext);
  ext.extension_base.struct_size = KC__XLA_METADATA_EXTENSION_SIZE;
  ext.extension_base.type = XLA_FFI_Extension_Metadata;
  ext.metadata = md;
  /* A context with nothing in it: a handler that ignores the extension
   * and asks for state, a pool or a run id gets an error, not a crash. */
  XLA_FFI_ExecutionContext ctx = {
      .stage = XLA_FFI_ExecutionStage_EXECUTE, .instance = NULL, .pool = NULL, .run = NULL};
  XLA_FFI_CallFrame frame;
  memset(&frame, 0, sizeof frame);
  frame.struct_size = KC__XLA_CALL_FRAME_SIZE;
  frame.extension_start = &ext.extension_base;
  frame.api = &kc__xla_api_table;
  frame.ctx = &ctx;
  frame.stage = XLA_FFI_ExecutionStage_EXECUTE;
  frame.args.struct_size = KC__XLA_ARGS_SIZE;
  frame.rets.struct_size = KC__XLA_RETS_SIZE;
  frame.attrs.struct_size = KC__XLA_ATTRS_SIZE;
  kc_status* st = kc__xla_call_finish(&frame, kc__xla_handler(fn)(&frame));
  *out_answered = md->api_version.major_version != -1 || md->api_version.minor_version != -1;
  return st;
}

/* Checks what the handler for `stage` says about itself. */
static kc_status* kc__xla_check_handler(kc__xcall_target* t, kc_xla_ffi_handler_fn fn,
                                        const char* stage) {
  XLA_FFI_Metadata md;
  bool answered = false;
  kc_status* st = kc__xla_query_metadata(fn, &md, &answered);
  if (st && !answered) {
    return kc_status_add_context(
        st,
        "the %s handler did not answer XLA's metadata query (as XLA, kcall "
        "refuses it; a handler that predates the metadata extension can be "
        "registered with KC_XLA_FFI_NO_METADATA)",
        stage);
  }
  if (st) return kc_status_add_context(st, "the %s handler's metadata", stage);
  if (!answered) return NULL;
  int major = md.api_version.major_version, minor = md.api_version.minor_version;
  if (major != KC_XLA_FFI_API_MAJOR || minor > KC_XLA_FFI_API_MINOR || minor < 0) {
    return kc_status_create(KC_FAILED_PRECONDITION,
                            "the %s handler was built for XLA FFI API %d.%d; kcall "
                            "implements %d.%d and runs handlers built for %d.0 to "
                            "%d.%d",
                            stage, major, minor, KC_XLA_FFI_API_MAJOR,
                            KC_XLA_FFI_API_MINOR, KC_XLA_FFI_API_MAJOR,
                            KC_XLA_FFI_API_MAJOR, KC_XLA_FFI_API_MINOR);
  }
  /* One version for the target: the highest any stage reported. */
  if (t->xla_api_major < 0 || minor > t->xla_api_minor) {
    t->xla_api_major = major;
    t->xla_api_minor = minor;
  }
  t->xla_traits |= md.traits;
  return NULL;
}

kc_status* kc_xcall_register_xla_ffi(kc_string_view name, kc_platform platform,
                                     const kc_xla_ffi_handlers* handlers,
                                     uint32_t flags) {
  if (!handlers || handlers->struct_size < KC__XLA_SIZE(kc_xla_ffi_handlers, execute) ||
      !handlers->execute) {
    return kc_status_create(
        KC_INVALID_ARGUMENT, "registering XLA FFI handlers for %s: %s",
        KC__Q(name),
        !handlers ? "handlers is NULL"
        : handlers->struct_size < KC__XLA_SIZE(kc_xla_ffi_handlers, execute)
            ? "handlers->struct_size is too small to hold execute"
            : "the execute handler is NULL");
  }
  const uint32_t known = KC_REGISTER_OVERRIDE | KC_XLA_FFI_NO_METADATA | KC_XCALL_GRAPH_SAFE;
  if (flags & ~known) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "registering XLA FFI handlers for %s: unknown flags 0x%x "
                            "(expected KC_REGISTER_OVERRIDE, KC_XLA_FFI_NO_METADATA, "
                            "KC_XCALL_GRAPH_SAFE)",
                            KC__Q(name), flags & ~known);
  }
  /* A data symbol given as a handler would be called (for its metadata
   * first) and crash: refused, named. */
  const struct {
    kc_xla_ffi_handler_fn fn;
    const char* what;
  } given[] = {{handlers->execute, "the execute handler"},
               {handlers->instantiate, "the instantiate handler"},
               {handlers->prepare, "the prepare handler"},
               {handlers->initialize, "the initialize handler"}};
  for (size_t i = 0; i < KC__ARRAY_SIZE(given); ++i) {
    KC_RETURN_IF_ERROR(kc__code_address_check(KC__CODE(given[i].fn), given[i].what),
                       "registering XLA FFI handlers for %s", KC__Q(name));
  }
  char buf[KC__TARGET_KEY_CAP];
  kc_string_view key;
  kc__xcall_target* t = NULL;
  KC_RETURN_IF_ERROR(kc__xcall_target_new(name, platform, KC_XCALL_API_TYPED, buf, &key, &t),
                     "registering XLA FFI handlers");
  t->xla = *handlers;
  t->xla.struct_size = sizeof t->xla;
  t->xla_api_major = t->xla_api_minor = -1;
  t->signature.struct_size = sizeof t->signature;
  t->signature.flags = KC_XCALL_SIG_OPEN;
  kc_status* st = NULL;
  if (!(flags & KC_XLA_FFI_NO_METADATA)) {
    struct {
      kc_xla_ffi_handler_fn fn;
      const char* stage;
    } stages[] = {{t->xla.execute, "execute"},
                  {t->xla.instantiate, "instantiate"},
                  {t->xla.prepare, "prepare"},
                  {t->xla.initialize, "initialize"}};
    for (size_t i = 0; !st && i < KC__ARRAY_SIZE(stages); ++i) {
      bool seen = false;
      for (size_t j = 0; j < i; ++j) seen |= stages[j].fn == stages[i].fn;
      if (stages[i].fn && !seen) st = kc__xla_check_handler(t, stages[i].fn, stages[i].stage);
    }
  }
  if (st) {
    kc_object_release(KC_OBJECT(t));
    return kc_status_add_context(st, "registering XLA FFI handlers for %s", KC__QS(buf));
  }
  return kc__xcall_target_publish(t, key, flags & ~KC_XLA_FFI_NO_METADATA);
}

kc_status* kc_xcall_register_xla_ffi_handler(kc_string_view name, kc_platform platform,
                                             kc_xla_ffi_handler_fn execute,
                                             uint32_t flags) {
  kc_xla_ffi_handlers h;
  memset(&h, 0, sizeof h);
  h.struct_size = sizeof h;
  h.execute = execute;
  return kc_xcall_register_xla_ffi(name, platform, &h, flags);
}
