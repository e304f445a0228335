/*
 * kcall targets and ops as XLA FFI handlers: what XLA (JAX) calls with its
 * call frame. See kc_xla_ffi_adapter_create in kcall/xla_ffi.h.
 *
 * The handlers come from a fixed pool of trampolines, one per adapter
 * slot, since XLA gives a handler nothing but the call frame. A slot,
 * once bound, stays bound for the life of the process.
 *
 * A target that does nothing at INSTANTIATE (KC_XCALL_SIG_NO_INSTANTIATE)
 * is run from XLA's frame alone: buffers and attributes decoded onto the
 * stack on every call. For the others and for ops, XLA's INSTANTIATE stage
 * makes a `kc__site`, kept as XLA state (deleted by XLA with its
 * executable): the attributes decoded and copied once, and for targets
 * the target's own INSTANTIATE outcome (state, scratch), computed at the
 * site's first EXECUTE, where the buffers' shapes are known.
 *
 * XLA's attributes are decoded by xla_ffi_adapter_attrs.c.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/arena.h"
#include "internal/common.h"
#include "kcall/op.h"
#include "kcall/runtime.h"
#include "kcall/value.h"
#include "xcall/xla_ffi_adapter_internal.h"
#include "xcall/xla_ffi_internal.h"

typedef enum { KC__BIND_TARGET = 1, KC__BIND_OP = 2 } kc__bind_kind;

/* The site type's id in one XLA API table; immutable once published. */
typedef struct kc__site_type_entry {
  const XLA_FFI_Api* api;
  XLA_FFI_TypeId id;
} kc__site_type_entry;

typedef struct kc__adapter {
  _Atomic int kind; /* 0 while free or being bound; a kc__bind_kind after */
  kc_platform platform;
  char* name;
  kc__xcall_target* target; /* a reference, for KC__BIND_TARGET */
  kc_op* op;                /* a reference, for KC__BIND_OP */
  char* who;                /* "kcall target 'NAME'", for messages */
  /* A TYPED target whose buffers are checked on each call: it does
   * nothing at INSTANTIATE and its signature is not open. */
  bool stateless;
  kc_thread_pool* pool;     /* what targets get: the default pool */
  /* The site type of the XLA that last called (usually the only one), so
   * that EXECUTE finds it without a search. */
  _Atomic(const kc__site_type_entry*) site_type;
} kc__adapter;

static kc__adapter kc__adapters[KC_XLA_FFI_ADAPTER_MAX];
static pthread_mutex_t kc__adapters_mu = PTHREAD_MUTEX_INITIALIZER;

/* One call site, as XLA state. */
typedef struct kc__site {
  const kc__adapter* adapter;
  kc__arena arena; /* attribute names, strings, arrays, dictionaries */
  kc_attr* attrs;  /* targets: in the signature's order (open: XLA's) */
  int32_t num_attrs;
  kc_op_attr* op_attrs; /* ops: values hold references */
  int32_t num_op_attrs;
  /* The target's INSTANTIATE, at the first EXECUTE. */
  pthread_mutex_t mu;
  _Atomic int ready; /* 1 once instantiated (or failed) */
  kc_status_code init_code; /* KC_OK, or why the site cannot run */
  char* init_message;
  void* state;
  void (*state_deleter)(void* state);
  size_t scratch_bytes;
  void* scratch;
  atomic_flag scratch_busy;
} kc__site;

/* ---- errors, made by the calling XLA ----------------------------------------------- */

static XLA_FFI_Error* kc__adapter_error_text(const XLA_FFI_Api* api, kc_status_code code,
                                             const char* text) {
  XLA_FFI_Error_Create_Args a = {
      .struct_size = KC__XLA_SIZE(XLA_FFI_Error_Create_Args, errc),
      .message = text,
      .errc = (XLA_FFI_Error_Code)code,
  };
  return api->XLA_FFI_Error_Create(&a);
}

XLA_FFI_Error* kc__adapter_error(const XLA_FFI_Api* api, kc_status_code code,
                                 const char* fmt, ...) {
  char buf[1024];
  va_list args;
  va_start(args, fmt);
  vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return kc__adapter_error_text(api, code, buf);
}

/* `who: ` (when given) and the status's context and message, without its
 * code's name (an XLA error carries the code): into buf. Returns the code
 * (OK becomes UNKNOWN); `st` is destroyed. */
static kc_status_code kc__status_text(const char* who, kc_status* st, char* buf, size_t cap) {
  char formatted[1024];
  kc_status_format(st, formatted, sizeof formatted);
  kc_status_code code = kc_status_get_code(st);
  kc_status_destroy(st);
  const char* name = kc_status_code_name(code);
  size_t skip = strlen(name);
  const char* text = strncmp(formatted, name, skip) == 0 && formatted[skip] == ':'
                         ? formatted + skip + 2
                         : formatted;
  snprintf(buf, cap, "%s%s%s", who ? who : "", who ? ": " : "", text);
  return code == KC_OK ? KC_UNKNOWN : code;
}

XLA_FFI_Error* kc__adapter_error_from(const XLA_FFI_Api* api, const char* who,
                                      kc_status* st) {
  char message[1400];
  kc_status_code code = kc__status_text(who, st, message, sizeof message);
  return kc__adapter_error_text(api, code, message);
}

/* ---- the API versions the adapter speaks --------------------------------------------- */

/* The XLA FFI API versions the adapter speaks, 0.1 (jaxlib 0.5 to 0.7),
 * 0.2 (jaxlib 0.8) and 0.3 (jaxlib 0.9 and later): every struct it passes
 * is laid out alike in the three, except the state functions' arguments
 * (see xla_ffi_api.h, "the layouts of older API versions"). An XLA of
 * another version is refused: its layouts are not known here. */
#define KC__ADAPTER_MINOR_OLDEST 1

static bool kc__api_version_known(int32_t major, int32_t minor) {
  return major == KC_XLA_FFI_API_MAJOR && minor >= KC__ADAPTER_MINOR_OLDEST &&
         minor <= KC_XLA_FFI_API_MINOR;
}

/* What the adapters answer an XLA that asks for their metadata without
 * passing its API table (before jaxlib 0.9): major << 16 | minor. */
static _Atomic int32_t kc__announced_version =
    (KC_XLA_FFI_API_MAJOR << 16) | KC_XLA_FFI_API_MINOR;

kc_status* kc_xla_ffi_adapter_set_api_version(int32_t major, int32_t minor) {
  if (!kc__api_version_known(major, minor)) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_xla_ffi_adapter_set_api_version: XLA FFI API %d.%d is not "
                            "one the adapter speaks (%d.%d to %d.%d)",
                            (int)major, (int)minor, KC_XLA_FFI_API_MAJOR,
                            KC__ADAPTER_MINOR_OLDEST, KC_XLA_FFI_API_MAJOR,
                            KC_XLA_FFI_API_MINOR);
  }
  atomic_store_explicit(&kc__announced_version, (major << 16) | minor, memory_order_relaxed);
  return NULL;
}

/* The minor version of the calling XLA's table, or -1 when the adapter
 * does not speak it (the caller answers with kc__api_version_error). The
 * version, not the table's struct_size, says which entries it has: XLA
 * 0.1 sizes its table to XLA_FFI_Stream_Get, short of entries it has. */
static inline int32_t kc__api_minor(const XLA_FFI_Api* api) {
  if (KC__UNLIKELY(api->struct_size < KC__XLA_SIZE(XLA_FFI_Api, api_version) ||
                   api->api_version.struct_size < KC__XLA_API_VERSION_SIZE ||
                   !kc__api_version_known(api->api_version.major_version,
                                          api->api_version.minor_version))) {
    return -1;
  }
  return api->api_version.minor_version;
}

__attribute__((cold, noinline)) static XLA_FFI_Error* kc__api_version_error(
    const XLA_FFI_Api* api, const char* who) {
  bool sized = api->api_version.struct_size >= KC__XLA_API_VERSION_SIZE;
  return kc__adapter_error(api, KC_FAILED_PRECONDITION,
                           "%s: XLA FFI API %d.%d is not one kcall's adapter speaks (%d.%d "
                           "to %d.%d, jaxlib 0.5 to 0.10): update kcall",
                           who ? who : "kcall adapter",
                           sized ? api->api_version.major_version : -1,
                           sized ? api->api_version.minor_version : -1, KC_XLA_FFI_API_MAJOR,
                           KC__ADAPTER_MINOR_OLDEST, KC_XLA_FFI_API_MAJOR,
                           KC_XLA_FFI_API_MINOR);
}

/* ---- XLA's metadata query ------------------------------------------------------------ */

/* True when the frame is XLA asking for the handler's metadata, answered
 * here with XLA's own version (no traits): from the API table when the
 * frame carries one (jaxlib 0.9 and later), else the announced one
 * (kc_xla_ffi_adapter_set_api_version). A table of a version the adapter
 * does not speak is refused, so XLA never registers the handler. */
static bool kc__adapter_metadata(const kc__adapter* ad, XLA_FFI_CallFrame* cf,
                                 XLA_FFI_Error** out_err) {
  *out_err = NULL;
  for (XLA_FFI_Extension_Base* e = cf->extension_start; e; e = e->next) {
    if (e->type != XLA_FFI_Extension_Metadata ||
        e->struct_size < KC__XLA_METADATA_EXTENSION_SIZE) {
      continue;
    }
    int32_t major, minor;
    if (cf->api) {
      if (kc__api_minor(cf->api) < 0) {
        *out_err = kc__api_version_error(cf->api, ad->who);
        return true;
      }
      major = cf->api->api_version.major_version;
      minor = cf->api->api_version.minor_version;
    } else {
      int32_t v = atomic_load_explicit(&kc__announced_version, memory_order_relaxed);
      major = v >> 16;
      minor = v & 0xffff;
    }
    XLA_FFI_Metadata* md = ((XLA_FFI_Metadata_Extension*)e)->metadata;
    if (md && md->struct_size >= KC__XLA_METADATA_SIZE) {
      md->api_version = (XLA_FFI_Api_Version){KC__XLA_API_VERSION_SIZE, NULL, major, minor};
      md->traits = 0;
    }
    return true;
  }
  return false;
}

/* ---- the state type, registered with each calling XLA -------------------------------- */

static void kc__site_destroy(void* p);

static const XLA_FFI_TypeInfo kc__site_type_info = {
    .struct_size = KC__XLA_SIZE(XLA_FFI_TypeInfo, deleter),
    .deleter = kc__site_destroy,
};

/* The site type's id in each XLA API table seen (usually one). */
#define KC__MAX_APIS 8
static kc__site_type_entry kc__site_types[KC__MAX_APIS];
static _Atomic int kc__num_site_types;
static pthread_mutex_t kc__site_types_mu = PTHREAD_MUTEX_INITIALIZER;

static XLA_FFI_TypeId* kc__site_type_find(const XLA_FFI_Api* api) {
  int n = atomic_load_explicit(&kc__num_site_types, memory_order_acquire);
  for (int i = 0; i < n; ++i) {
    if (kc__site_types[i].api == api) return &kc__site_types[i].id;
  }
  return NULL;
}

/* The site type's id for `api` as EXECUTE needs it: the adapter's cached
 * entry when `api` is the one it remembers, else a search (NULL when this
 * XLA never instantiated a site). */
static inline XLA_FFI_TypeId* kc__site_type_of(kc__adapter* ad, const XLA_FFI_Api* api) {
  const kc__site_type_entry* e = atomic_load_explicit(&ad->site_type, memory_order_acquire);
  if (KC__LIKELY(e != NULL && e->api == api)) return (XLA_FFI_TypeId*)&e->id;
  XLA_FFI_TypeId* id = kc__site_type_find(api);
  if (id) {
    atomic_store_explicit(&ad->site_type,
                          (const kc__site_type_entry*)((char*)id -
                                                       offsetof(kc__site_type_entry, id)),
                          memory_order_release);
  }
  return id;
}

/* The id, registering the type with `api` the first time. */
static XLA_FFI_Error* kc__site_type(const XLA_FFI_Api* api, XLA_FFI_TypeId** out) {
  if ((*out = kc__site_type_find(api))) return NULL;
  pthread_mutex_lock(&kc__site_types_mu);
  XLA_FFI_Error* err = NULL;
  if (!(*out = kc__site_type_find(api))) {
    int n = atomic_load_explicit(&kc__num_site_types, memory_order_relaxed);
    if (n == KC__MAX_APIS) {
      err = kc__adapter_error(api, KC_RESOURCE_EXHAUSTED,
                              "kcall adapter: more than %d XLA FFI API tables", KC__MAX_APIS);
    } else {
      static const char kName[] = "kcall.xla_ffi_adapter.site";
      kc__site_types[n].api = api;
      kc__site_types[n].id.type_id = 0;
      XLA_FFI_Type_Register_Args a = {
          .struct_size = KC__XLA_SIZE(XLA_FFI_Type_Register_Args, type_id),
          .name = {kName, sizeof kName - 1},
          .type_id = &kc__site_types[n].id,
          .type_info = &kc__site_type_info,
      };
      err = api->XLA_FFI_Type_Register(&a);
      if (!err) {
        atomic_store_explicit(&kc__num_site_types, n + 1, memory_order_release);
        *out = &kc__site_types[n].id;
      }
    }
  }
  pthread_mutex_unlock(&kc__site_types_mu);
  return err;
}

/* ---- call sites ------------------------------------------------------------------------ */

static void kc__site_destroy(void* p) {
  kc__site* site = p;
  if (!site) return;
  if (site->state && site->state_deleter) site->state_deleter(site->state);
  kc__free(site->scratch);
  kc__free(site->init_message);
  for (int32_t i = 0; i < site->num_op_attrs; ++i) kc_any_release(&site->op_attrs[i].value);
  kc__free(site->op_attrs);
  kc__arena_free(&site->arena);
  pthread_mutex_destroy(&site->mu);
  kc__free(site);
}

/* A site for the attributes of XLA's INSTANTIATE frame (or, without that
 * stage, of an EXECUTE frame). */
static XLA_FFI_Error* kc__site_create(const kc__adapter* ad, const XLA_FFI_Api* api,
                                      const XLA_FFI_Attrs* attrs, kc__site** out) {
  *out = NULL;
  kc__site* site = kc__calloc(1, sizeof *site);
  if (!site) {
    return kc__adapter_error(api, KC_RESOURCE_EXHAUSTED, "%s: out of memory", ad->who);
  }
  site->adapter = ad;
  pthread_mutex_init(&site->mu, NULL);
  atomic_flag_clear(&site->scratch_busy);
  kc__decoder d = {.api = api,
                   .arena = &site->arena,
                   .pool = NULL,
                   .pool_left = 0,
                   .budget = KC__ADAPTER_MAX_ATTRS,
                   .who = ad->who};
  XLA_FFI_Error* err =
      atomic_load_explicit(&ad->kind, memory_order_acquire) == KC__BIND_OP
          ? kc__decode_op_attrs(&d, attrs, &site->op_attrs, &site->num_op_attrs)
          : kc__decode_target_attrs(&d, &ad->target->signature, attrs, &site->attrs,
                                    &site->num_attrs);
  if (err) {
    kc__site_destroy(site);
    return err;
  }
  *out = site;
  return NULL;
}

/* ---- XLA state, in the layout of the calling XLA's version -------------------------- */

/* Sets `site` as the call site's INSTANTIATE state. API 0.1 names the
 * deleter here (its types have none); 0.2 has no stage field; 0.3 has. */
static XLA_FFI_Error* kc__state_set(const XLA_FFI_Api* api, XLA_FFI_ExecutionContext* ctx,
                                    XLA_FFI_TypeId* type, kc__site* site) {
  switch (api->api_version.minor_version) {
    case 1: {
      kc__xla_state_set_args_0_1 a = {.struct_size = KC__XLA_STATE_SET_ARGS_0_1_SIZE,
                                      .ctx = ctx,
                                      .type_id = type,
                                      .state = site,
                                      .deleter = kc__site_destroy};
      return api->XLA_FFI_State_Set((XLA_FFI_State_Set_Args*)(void*)&a);
    }
    case 2: {
      kc__xla_state_args_0_2 a = {
          .struct_size = KC__XLA_STATE_ARGS_0_2_SIZE, .ctx = ctx, .type_id = type, .state = site};
      return api->XLA_FFI_State_Set((XLA_FFI_State_Set_Args*)(void*)&a);
    }
    default: {
      XLA_FFI_State_Set_Args a = {.struct_size = KC__XLA_SIZE(XLA_FFI_State_Set_Args, state),
                                  .ctx = ctx,
                                  .stage = XLA_FFI_ExecutionStage_INSTANTIATE,
                                  .type_id = type,
                                  .state = site};
      return api->XLA_FFI_State_Set(&a);
    }
  }
}

/* The call site's INSTANTIATE state into *out. */
static inline XLA_FFI_Error* kc__state_get(const XLA_FFI_Api* api, XLA_FFI_ExecutionContext* ctx,
                                           XLA_FFI_TypeId* type, void** out) {
  if (KC__LIKELY(api->api_version.minor_version >= 3)) {
    XLA_FFI_State_Get_Args g = {.struct_size = KC__XLA_SIZE(XLA_FFI_State_Get_Args, state),
                                .ctx = ctx,
                                .stage = XLA_FFI_ExecutionStage_INSTANTIATE,
                                .type_id = type};
    XLA_FFI_Error* err = api->XLA_FFI_State_Get(&g);
    *out = g.state;
    return err;
  }
  kc__xla_state_args_0_2 g = {.struct_size = KC__XLA_STATE_ARGS_0_2_SIZE, .ctx = ctx, .type_id = type};
  XLA_FFI_Error* err = api->XLA_FFI_State_Get((XLA_FFI_State_Get_Args*)(void*)&g);
  *out = g.state;
  return err;
}

/* ---- buffers ------------------------------------------------------------------------- */

/* DLPack dtypes by XLA element type (bits 0: none), filled before the
 * first adapter is handed out. */
#define KC__XLA_DTYPES_MAX 64
static DLDataType kc__dl_of[KC__XLA_DTYPES_MAX];

static void kc__dl_table_init(void) {
  for (int32_t i = 0; i < KC__XLA_DTYPES_MAX; ++i) {
    if (!kc__xla_dtype_to_dl(i, &kc__dl_of[i])) kc__dl_of[i] = (DLDataType){0, 0, 0};
  }
}

/* XLA's buffers as DLTensors (dims borrowed), each checked against its
 * spec when `specs` is given (the count already matches): the index of
 * the first buffer without a DLPack dtype or off its spec, or -1. */
static inline int64_t kc__to_dltensors(int64_t n, void* const* in, DLTensor* out,
                                               const kc_xcall_buffer_spec* specs) {
  for (int64_t i = 0; i < n; ++i) {
    const XLA_FFI_Buffer* b = in[i];
    uint32_t code = (uint32_t)b->dtype;
    DLDataType dt = code < KC__XLA_DTYPES_MAX ? kc__dl_of[code] : (DLDataType){0, 0, 0};
    if (KC__UNLIKELY(!dt.bits)) return i;
    if (specs) {
      const kc_xcall_buffer_spec* sp = &specs[i];
      if (KC__UNLIKELY((sp->dtype.bits && (sp->dtype.code != dt.code || sp->dtype.bits != dt.bits ||
                                           sp->dtype.lanes != dt.lanes)) ||
                       (sp->rank >= 0 && sp->rank != b->rank))) {
        return i;
      }
    }
    out[i] = (DLTensor){.data = b->data,
                        .device = {kDLCPU, 0},
                        .ndim = (int32_t)b->rank,
                        .dtype = dt,
                        .shape = b->dims};
  }
  return -1;
}

static XLA_FFI_Error* kc__check_buffers(const XLA_FFI_Api* api, const kc__adapter* ad,
                                        const char* what, const DLTensor* ts, int64_t n,
                                        const kc_xcall_buffer_spec* specs, int32_t num_specs);

/* Why kc__to_dltensors stopped, or the counts are off: the error. */
__attribute__((cold, noinline)) static XLA_FFI_Error* kc__buffers_error(
    const XLA_FFI_Api* api, const kc__adapter* ad, const XLA_FFI_CallFrame* cf, bool checked) {
  const struct {
    const char* what;
    int64_t n;
    void* const* in;
  } lists[2] = {{"operand", cf->args.size, cf->args.args},
                {"result", cf->rets.size, cf->rets.rets}};
  for (int k = 0; k < 2; ++k) {
    if (lists[k].n > KC__ADAPTER_MAX_BUFFERS || lists[k].n < 0) {
      return kc__adapter_error(api, KC_INVALID_ARGUMENT, "%s: %lld %ss, at most %d are supported",
                               ad->who, (long long)lists[k].n, lists[k].what,
                               KC__ADAPTER_MAX_BUFFERS);
    }
  }
  DLTensor ts[KC__ADAPTER_MAX_BUFFERS];
  for (int k = 0; k < 2; ++k) {
    int64_t bad = kc__to_dltensors(lists[k].n, lists[k].in, ts, NULL);
    if (bad >= 0) {
      const XLA_FFI_Buffer* b = lists[k].in[bad];
      return kc__adapter_error(api, KC_INVALID_ARGUMENT,
                               "%s: %s %lld: XLA element type %s has no DLPack dtype", ad->who,
                               lists[k].what, (long long)bad, kc__xla_dtype_name(b->dtype));
    }
    if (checked) {
      const kc_xcall_signature* sig = &ad->target->signature;
      XLA_FFI_Error* err = kc__check_buffers(api, ad, lists[k].what, ts, lists[k].n,
                                             k ? sig->results : sig->args,
                                             k ? sig->num_results : sig->num_args);
      if (err) return err;
    }
  }
  return kc__adapter_error(api, KC_INTERNAL, "%s: the buffers were refused", ad->who);
}

static XLA_FFI_Error* kc__check_buffers(const XLA_FFI_Api* api, const kc__adapter* ad,
                                        const char* what, const DLTensor* ts, int64_t n,
                                        const kc_xcall_buffer_spec* specs, int32_t num_specs) {
  if (n != num_specs) {
    return kc__adapter_error(api, KC_INVALID_ARGUMENT,
                             "kcall target %s: expected %d %s buffer%s, got %lld", KC__QS(ad->name),
                             num_specs, what, num_specs == 1 ? "" : "s", (long long)n);
  }
  for (int64_t i = 0; i < n; ++i) {
    if (!kc__xcall_buffer_spec_accepts(&specs[i], ts[i].dtype, ts[i].ndim)) {
      /* As the compiler says it of a program's buffers: "f64[2,3]". */
      char want[64], got[32 + 21 * KC_TENSOR_MAX_NDIM];
      kc__xcall_buffer_spec_describe(&specs[i], NULL, want, sizeof want);
      size_t len = kc_dtype_format(ts[i].dtype, got, sizeof got);
      kc__appendf(got, sizeof got, &len, "[");
      for (int32_t d = 0; d < ts[i].ndim; ++d) {
        kc__appendf(got, sizeof got, &len, "%s%lld", d ? "," : "", (long long)ts[i].shape[d]);
      }
      kc__appendf(got, sizeof got, &len, "]");
      return kc__adapter_error(api, KC_INVALID_ARGUMENT,
                               "kcall target %s: %s %lld: expected %s, got %s",
                               KC__QS(ad->name), what, (long long)i, want, got);
    }
  }
  return NULL;
}

/* ---- running a target --------------------------------------------------------------------- */

static void kc__frame_init(kc_xcall_frame* f, const kc__adapter* ad, int32_t stage,
                           DLTensor* ts, int32_t na, int32_t nr, const kc_attr* attrs,
                           int32_t num_attrs) {
  *f = (kc_xcall_frame){
      .struct_size = sizeof *f,
      .stage = stage,
      .num_args = na,
      .num_results = nr,
      .num_attrs = num_attrs,
      .args = ts,
      .results = ts + na,
      .attrs = attrs,
      .thread_pool = kc__xla_pool_current(ad->pool),
      .user = ad->target->user,
      .instruction_name = ad->target->name,
  };
}

/* The buffers against an open or declared signature. */
static XLA_FFI_Error* kc__check_all(const XLA_FFI_Api* api, const kc__adapter* ad,
                                   const DLTensor* ts, int32_t na, int32_t nr) {
  const kc_xcall_signature* sig = &ad->target->signature;
  if (sig->flags & KC_XCALL_SIG_OPEN) return NULL;
  XLA_FFI_Error* err = kc__check_buffers(api, ad, "operand", ts, na, sig->args, sig->num_args);
  if (!err) err = kc__check_buffers(api, ad, "result", ts + na, nr, sig->results, sig->num_results);
  return err;
}

/* The site's first EXECUTE: check the buffers, run the target's
 * INSTANTIATE, allocate its scratch. Errors are remembered: a site that
 * cannot run fails every time, the same way. */
static void kc__site_instantiate(kc__site* site, const XLA_FFI_Api* api, DLTensor* ts,
                                 int32_t na, int32_t nr) {
  const kc__adapter* ad = site->adapter;
  const kc__xcall_target* t = ad->target;
  kc_status* st = NULL;
  XLA_FFI_Error* err = kc__check_all(api, ad, ts, na, nr);
  if (!err) {
    DLTensor shapes[2 * KC__ADAPTER_MAX_BUFFERS];
    memcpy(shapes, ts, (size_t)(na + nr) * sizeof *ts);
    for (int32_t i = 0; i < na + nr; ++i) shapes[i].data = NULL;
    kc_xcall_frame f;
    kc__frame_init(&f, ad, KC_XCALL_STAGE_INSTANTIATE, shapes, na, nr, site->attrs,
                   site->num_attrs);
    st = t->handler(&f);
    site->state = f.state;
    site->state_deleter = f.state_deleter;
    site->scratch_bytes = f.scratch_bytes;
    if (!st && f.scratch_bytes) {
      site->scratch = kc__aligned_alloc(64, (f.scratch_bytes + 63) & ~(size_t)63);
      if (!site->scratch) {
        st = kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory for %zu bytes of scratch",
                              f.scratch_bytes);
      }
    }
  }
  /* The whole message every later call returns, made once: the target
   * named once, the code only in the error's code. */
  if (err || st) {
    char buf[1400];
    if (err) {
      /* kc__check_all's error, which names the target already. */
      XLA_FFI_Error_GetMessage_Args m = {
          .struct_size = KC__XLA_SIZE(XLA_FFI_Error_GetMessage_Args, message), .error = err};
      api->XLA_FFI_Error_GetMessage(&m);
      snprintf(buf, sizeof buf, "%s", m.message ? m.message : "");
      XLA_FFI_Error_Destroy_Args x = {
          .struct_size = KC__XLA_SIZE(XLA_FFI_Error_Destroy_Args, error), .error = err};
      api->XLA_FFI_Error_Destroy(&x);
      site->init_code = KC_INVALID_ARGUMENT;
    } else {
      site->init_code = kc__status_text(ad->who, st, buf, sizeof buf);
    }
    site->init_message = kc__strdup(buf);
  }
  atomic_store_explicit(&site->ready, 1, memory_order_release);
}

static XLA_FFI_Error* kc__run_target(kc__site* site, const XLA_FFI_Api* api, DLTensor* ts,
                                     int32_t na, int32_t nr) {
  const kc__adapter* ad = site->adapter;
  if (KC__UNLIKELY(!atomic_load_explicit(&site->ready, memory_order_acquire))) {
    pthread_mutex_lock(&site->mu);
    if (!atomic_load_explicit(&site->ready, memory_order_relaxed)) {
      kc__site_instantiate(site, api, ts, na, nr);
    }
    pthread_mutex_unlock(&site->mu);
  }
  if (KC__UNLIKELY(site->init_code != KC_OK)) {
    return site->init_message
               ? kc__adapter_error_text(api, site->init_code, site->init_message)
               : kc__adapter_error(api, site->init_code, "%s: cannot run (out of memory)",
                                   ad->who);
  }
  const kc__xcall_target* t = ad->target;
  kc_xcall_frame f;
  kc__frame_init(&f, ad, KC_XCALL_STAGE_EXECUTE, ts, na, nr, site->attrs, site->num_attrs);
  f.state = site->state;
  f.scratch_bytes = site->scratch_bytes;
  bool own_scratch = false;
  if (site->scratch_bytes) {
    if (!atomic_flag_test_and_set_explicit(&site->scratch_busy, memory_order_acquire)) {
      f.scratch = site->scratch;
    } else {
      f.scratch = kc__aligned_alloc(64, (site->scratch_bytes + 63) & ~(size_t)63);
      if (!f.scratch) {
        return kc__adapter_error(api, KC_RESOURCE_EXHAUSTED,
                                 "kcall target %s: out of memory for scratch", KC__QS(ad->name));
      }
      own_scratch = true;
    }
  }
  kc_status* st = t->handler(&f);
  if (own_scratch) {
    kc__free(f.scratch);
  } else if (site->scratch_bytes) {
    atomic_flag_clear_explicit(&site->scratch_busy, memory_order_release);
  }
  return KC__UNLIKELY(st != NULL) ? kc__adapter_error_from(api, ad->who, st) : NULL;
}

/* A target that does nothing at INSTANTIATE (KC_XCALL_SIG_NO_INSTANTIATE)
 * needs no site: its attributes are decoded from XLA's frame onto the
 * stack, borrowed, on every call, and XLA's state is never looked up. */
static XLA_FFI_Error* kc__run_stateless(const kc__adapter* ad, XLA_FFI_CallFrame* cf,
                                        DLTensor* ts, int32_t na, int32_t nr) {
  const XLA_FFI_Api* api = cf->api;
  const kc__xcall_target* t = ad->target;
  XLA_FFI_Error* err = NULL;
  kc_attr pool[KC__ADAPTER_MAX_ATTRS];
  kc__decoder d = {.api = api,
                   .arena = NULL,
                   .pool = pool + KC__ADAPTER_MAX_ATTRS,
                   .pool_left = KC__ADAPTER_MAX_ATTRS,
                   .budget = KC__ADAPTER_MAX_ATTRS,
                   .who = ad->who};
  kc_attr* attrs = pool;
  int32_t num_attrs = 0;
  if (t->signature.num_attrs || (t->signature.flags & KC_XCALL_SIG_OPEN)) {
    err = kc__decode_target_attrs(&d, &t->signature, &cf->attrs, &attrs, &num_attrs);
    if (KC__UNLIKELY(err != NULL)) return err;
  }
  kc_xcall_frame f;
  kc__frame_init(&f, ad, KC_XCALL_STAGE_EXECUTE, ts, na, nr, attrs, num_attrs);
  kc_status* st = t->handler(&f);
  return KC__UNLIKELY(st != NULL) ? kc__adapter_error_from(api, ad->who, st) : NULL;
}

static XLA_FFI_Error* kc__run_op(kc__site* site, const XLA_FFI_Api* api, DLTensor* ts,
                                 int32_t na, int32_t nr) {
  const DLTensor* ins[KC__ADAPTER_MAX_BUFFERS];
  DLTensor* outs[KC__ADAPTER_MAX_BUFFERS];
  for (int32_t i = 0; i < na; ++i) ins[i] = &ts[i];
  for (int32_t i = 0; i < nr; ++i) outs[i] = &ts[na + i];
  kc_op_call_options options = {.struct_size = sizeof options,
                                .thread_pool = kc__xla_pool_current(NULL)};
  kc_status* st = kc_op_call_into(site->adapter->op, ins, na, site->op_attrs,
                                  site->num_op_attrs, &options, outs, nr);
  return KC__UNLIKELY(st != NULL) ? kc__adapter_error_from(api, NULL, st) : NULL;
}

/* ---- the handler ----------------------------------------------------------------------- */

static XLA_FFI_Error* kc__adapter_execute(kc__adapter* ad, XLA_FFI_CallFrame* cf) {
  const XLA_FFI_Api* api = cf->api;
  DLTensor ts[2 * KC__ADAPTER_MAX_BUFFERS];
  int64_t na = cf->args.size, nr = cf->rets.size;
  /* A stateless target's buffers are checked on every call (there is no
   * call site to remember a check); the others' once per call site. */
  const kc_xcall_signature* sig = ad->stateless ? &ad->target->signature : NULL;
  if (KC__UNLIKELY((uint64_t)na > KC__ADAPTER_MAX_BUFFERS ||
                   (uint64_t)nr > KC__ADAPTER_MAX_BUFFERS ||
                   (sig && (na != sig->num_args || nr != sig->num_results)) ||
                   kc__to_dltensors(na, cf->args.args, ts, sig ? sig->args : NULL) >= 0 ||
                   kc__to_dltensors(nr, cf->rets.rets, ts + na, sig ? sig->results : NULL) >= 0)) {
    return kc__buffers_error(api, ad, cf, sig != NULL);
  }
  if (ad->target && (ad->target->signature.flags & KC_XCALL_SIG_NO_INSTANTIATE)) {
    return kc__run_stateless(ad, cf, ts, (int32_t)na, (int32_t)nr);
  }
  XLA_FFI_Error* err;

  /* The site made at INSTANTIATE; without that stage, one for this call. */
  XLA_FFI_TypeId* type = kc__site_type_of(ad, api);
  kc__site* site = NULL;
  if (KC__LIKELY(type != NULL)) {
    void* state = NULL;
    XLA_FFI_Error* miss = kc__state_get(api, cf->ctx, type, &state);
    if (KC__LIKELY(!miss)) {
      site = state;
    } else {
      XLA_FFI_Error_Destroy_Args x = {
          .struct_size = KC__XLA_SIZE(XLA_FFI_Error_Destroy_Args, error), .error = miss};
      api->XLA_FFI_Error_Destroy(&x);
    }
  }
  bool transient = site == NULL;
  if (transient) {
    err = kc__site_create(ad, api, &cf->attrs, &site);
    if (err) return err;
  }
  err = atomic_load_explicit(&ad->kind, memory_order_relaxed) == KC__BIND_OP
            ? kc__run_op(site, api, ts, (int32_t)na, (int32_t)nr)
            : kc__run_target(site, api, ts, (int32_t)na, (int32_t)nr);
  if (transient) kc__site_destroy(site);
  return err;
}

static XLA_FFI_Error* kc__adapter_instantiate(const kc__adapter* ad, XLA_FFI_CallFrame* cf) {
  const XLA_FFI_Api* api = cf->api;
  if (ad->target && (ad->target->signature.flags & KC_XCALL_SIG_NO_INSTANTIATE)) return NULL;
  XLA_FFI_TypeId* type;
  XLA_FFI_Error* err = kc__site_type(api, &type);
  if (err) return err;
  kc__site* site;
  err = kc__site_create(ad, api, &cf->attrs, &site);
  if (err) return err;
  err = kc__state_set(api, cf->ctx, type, site);
  if (err) kc__site_destroy(site);
  return err;
}

static XLA_FFI_Error* kc__adapter_call(kc__adapter* ad, XLA_FFI_CallFrame* cf) {
  if (KC__UNLIKELY(!cf)) return NULL; /* nothing to answer through */
  if (KC__UNLIKELY(cf->extension_start != NULL)) {
    XLA_FFI_Error* err = NULL;
    if (kc__adapter_metadata(ad, cf, &err)) return err;
  }
  if (KC__UNLIKELY(!cf->api)) return NULL; /* nothing to answer through */
  if (KC__UNLIKELY(kc__api_minor(cf->api) < 0)) return kc__api_version_error(cf->api, ad->who);
  if (KC__UNLIKELY(cf->struct_size < KC__XLA_CALL_FRAME_SIZE)) {
    return kc__adapter_error(cf->api, KC_INVALID_ARGUMENT,
                             "kcall adapter: call frame of %zu bytes, expected at least %zu",
                             cf->struct_size, (size_t)KC__XLA_CALL_FRAME_SIZE);
  }
  switch (cf->stage) {
    case XLA_FFI_ExecutionStage_EXECUTE: {
      /* The kernel's loops on XLA's intra-op pool (xla_pool.c). */
      kc__xla_pool_call saved;
      kc__xla_pool_enter(cf->api, cf->ctx, &saved);
      XLA_FFI_Error* err = kc__adapter_execute(ad, cf);
      kc__xla_pool_leave(&saved);
      return err;
    }
    case XLA_FFI_ExecutionStage_INSTANTIATE: return kc__adapter_instantiate(ad, cf);
    default: return NULL; /* PREPARE, INITIALIZE: nothing to do */
  }
}

/* ---- the trampolines ---------------------------------------------------------------------- */

#define KC__TRAMP(hi, lo)                                                        \
  static XLA_FFI_Error* kc__trampoline_##hi##lo(XLA_FFI_CallFrame* cf) {         \
    return kc__adapter_call(&kc__adapters[0x##hi##lo], cf);                      \
  }
#define KC__TRAMP_PTR(hi, lo) kc__trampoline_##hi##lo,
#define KC__ROW(X, hi) \
  X(hi, 0) X(hi, 1) X(hi, 2) X(hi, 3) X(hi, 4) X(hi, 5) X(hi, 6) X(hi, 7) \
  X(hi, 8) X(hi, 9) X(hi, a) X(hi, b) X(hi, c) X(hi, d) X(hi, e) X(hi, f)
#define KC__ALL(X)                                                              \
  KC__ROW(X, 0) KC__ROW(X, 1) KC__ROW(X, 2) KC__ROW(X, 3) KC__ROW(X, 4)         \
  KC__ROW(X, 5) KC__ROW(X, 6) KC__ROW(X, 7) KC__ROW(X, 8) KC__ROW(X, 9)         \
  KC__ROW(X, a) KC__ROW(X, b) KC__ROW(X, c) KC__ROW(X, d) KC__ROW(X, e)         \
  KC__ROW(X, f)

KC__ALL(KC__TRAMP)
static XLA_FFI_Handler* const kc__trampolines[] = {KC__ALL(KC__TRAMP_PTR)};
_Static_assert(sizeof kc__trampolines / sizeof kc__trampolines[0] == KC_XLA_FFI_ADAPTER_MAX,
               "one trampoline per adapter");

/* ---- binding -------------------------------------------------------------------------- */

/* Binds a free slot (or finds the one bound) to (kind, name, platform);
 * `object` is referenced by the slot when it is new. */
static kc_status* kc__bind_adapter(kc__bind_kind kind, kc_string_view name, kc_platform platform,
                                   kc_object* object, kc_xla_ffi_handler_fn* out) {
  kc_status* st = NULL;
  pthread_mutex_lock(&kc__adapters_mu);
  static bool table_ready = false;
  if (!table_ready) {
    kc__dl_table_init();
    table_ready = true;
  }
  int free_slot = -1;
  for (int i = 0; i < KC_XLA_FFI_ADAPTER_MAX; ++i) {
    kc__adapter* ad = &kc__adapters[i];
    int k = atomic_load_explicit(&ad->kind, memory_order_relaxed);
    if (!k) {
      if (free_slot < 0) free_slot = i;
      continue;
    }
    if (k == (int)kind && ad->platform == platform && strlen(ad->name) == name.size &&
        memcmp(ad->name, name.data, name.size) == 0) {
      *out = (kc_xla_ffi_handler_fn)(void (*)(void))kc__trampolines[i];
      goto done;
    }
  }
  if (free_slot < 0) {
    st = kc_status_create(KC_RESOURCE_EXHAUSTED,
                          "all %d XLA FFI adapters are bound (one per target or op, "
                          "for the life of the process)",
                          KC_XLA_FFI_ADAPTER_MAX);
    goto done;
  }
  kc__adapter* ad = &kc__adapters[free_slot];
  ad->name = kc__malloc(name.size + 1);
  if (ad->name) {
    memcpy(ad->name, name.data, name.size);
    ad->name[name.size] = '\0';
  }
  if (!ad->name) {
    st = kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
    goto done;
  }
  size_t who_cap = 32 + KC_QUOTED_CAP; /* "kcall target " and the name quoted */
  ad->who = kc__malloc(who_cap);
  if (!ad->who) {
    kc__free(ad->name);
    ad->name = NULL;
    st = kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
    goto done;
  }
  snprintf(ad->who, who_cap, "kcall %s %s", kind == KC__BIND_OP ? "op" : "target",
           KC__QS(ad->name));
  ad->pool = kc_thread_pool_get_default();
  ad->platform = platform;
  kc_object_retain(object);
  if (kind == KC__BIND_TARGET) {
    ad->target = (kc__xcall_target*)object;
    uint32_t sig_flags = ad->target->signature.flags;
    ad->stateless = (sig_flags & KC_XCALL_SIG_NO_INSTANTIATE) && !(sig_flags & KC_XCALL_SIG_OPEN);
  } else {
    ad->op = (kc_op*)object;
  }
  atomic_store_explicit(&ad->kind, (int)kind, memory_order_release);
  *out = (kc_xla_ffi_handler_fn)(void (*)(void))kc__trampolines[free_slot];
done:
  pthread_mutex_unlock(&kc__adapters_mu);
  return st;
}

kc_status* kc_xla_ffi_adapter_create(kc_string_view name, kc_platform platform,
                                     kc_xla_ffi_handler_fn* out_handler) {
  if (!out_handler) {
    return kc_status_create(KC_INVALID_ARGUMENT, "kc_xla_ffi_adapter_create: out_handler is NULL");
  }
  *out_handler = NULL;
  if (platform != KC_PLATFORM_HOST && platform != KC_PLATFORM_CUDA) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_xla_ffi_adapter_create: unknown platform %d", (int)platform);
  }
  kc__xcall_target* t = kc__xcall_get(name, platform);
  if (!t) {
    KC_RETURN_IF_ERROR(kc__xcall_not_found(name, platform), "making an XLA FFI adapter");
  }
  kc_status* st = NULL;
  if (t->api != KC_XCALL_API_TYPED || t->xla.execute) {
    st = kc_status_create(KC_FAILED_PRECONDITION,
                          "making an XLA FFI adapter for %s: it is %s, not a kcall "
                          "TYPED target",
                          KC__Q(name),
                          t->xla.execute ? "an XLA FFI handler already"
                                         : kc_xcall_api_name(t->api));
  } else {
    st = kc__bind_adapter(KC__BIND_TARGET, name, platform, KC_OBJECT(t), out_handler);
  }
  kc_object_release(KC_OBJECT(t)); /* the adapter holds its own */
  return st;
}

kc_status* kc_xla_ffi_adapter_create_for_op(kc_string_view op_name,
                                            kc_xla_ffi_handler_fn* out_handler) {
  if (!out_handler) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_xla_ffi_adapter_create_for_op: out_handler is NULL");
  }
  *out_handler = NULL;
  const kc_op* op = NULL;
  KC_RETURN_IF_ERROR(kc_op_registry_lookup_retained(op_name, &op),
                     "making an XLA FFI adapter");
  kc_status* st = kc__bind_adapter(KC__BIND_OP, op_name, KC_PLATFORM_HOST,
                                   KC_OBJECT((kc_op*)(uintptr_t)op), out_handler);
  kc_object_release(KC_OBJECT((kc_op*)(uintptr_t)op)); /* the adapter holds its own */
  return st;
}
