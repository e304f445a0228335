/* The custom-call target registry. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/common.h"
#include "internal/registry.h"
#include "kcall/value.h"
#include "kcall/xla_ffi.h"
#include "internal/attrs.h"
#include "op/op_internal.h"
#include "xcall/xcall_internal.h"

/* Keys are "name@Platform"; XLA target names may contain '$'. Lock order 3:
 * after functions (0), ops (1) and kernels (2). */
static kc__registry kc__xcall_registry =
    KC__REGISTRY_INIT_NAMES(kc__kind_custom_call, 3, "$@");

kc__registry* kc__registry_of_targets(void) { return &kc__xcall_registry; }

/* Frozen layouts: these may only grow at the end. */
_Static_assert(offsetof(kc_xcall_signature, attrs) == 48, "kc_xcall_signature layout");
_Static_assert(offsetof(kc_xcall_signature, flags) == 56, "kc_xcall_signature layout");
_Static_assert(offsetof(kc_xcall_signature, gradient) == 72,
               "kc_xcall_signature layout");
_Static_assert(sizeof(kc_xcall_signature) == 80, "kc_xcall_signature layout");
_Static_assert(offsetof(kc_xcall_frame, args) == 24, "kc_xcall_frame layout");
_Static_assert(offsetof(kc_xcall_frame, state) == 48, "kc_xcall_frame layout");
_Static_assert(offsetof(kc_xcall_frame, instruction_name) == 104,
               "kc_xcall_frame layout");
_Static_assert(sizeof(kc_xcall_frame) == 112, "kc_xcall_frame layout");
_Static_assert(sizeof(kc_attr) == 40, "kc_attr layout");
_Static_assert(offsetof(kc_attr, v) == 24, "kc_attr layout");
_Static_assert(sizeof(kc_xla_ffi_handlers) == 40, "kc_xla_ffi_handlers layout");
_Static_assert(offsetof(kc_xla_ffi_handlers, execute) == 32,
               "kc_xla_ffi_handlers layout");

/* The signature as 1.0 first shipped it, without flags. */
#define KC__SIGNATURE_V1_SIZE offsetof(kc_xcall_signature, flags)

const char* kc_platform_name(kc_platform platform) {
  switch (platform) {
    case KC_PLATFORM_HOST: return "Host";
    case KC_PLATFORM_CUDA: return "CUDA";
    default: return "unknown";
  }
}

const char* kc_xcall_api_name(kc_xcall_api api) {
  switch (api) {
    case KC_XCALL_API_ORIGINAL: return "ORIGINAL";
    case KC_XCALL_API_STATUS_RETURNING: return "STATUS_RETURNING";
    case KC_XCALL_API_STATUS_RETURNING_UNIFIED: return "STATUS_RETURNING_UNIFIED";
    case KC_XCALL_API_TYPED: return "TYPED";
    default: return "unknown";
  }
}

static bool kc__ieq(kc_string_view a, const char* b) {
  size_t n = strlen(b);
  if (a.size != n) return false;
  for (size_t i = 0; i < n; ++i) {
    char c = a.data[i];
    if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
    if (c != b[i]) return false;
  }
  return true;
}

kc_status* kc_platform_parse(kc_string_view text, kc_platform* out_platform) {
  if (!out_platform) {
    return kc_status_create(KC_INVALID_ARGUMENT, "kc_platform_parse: out is NULL");
  }
  if (kc__ieq(text, "host") || kc__ieq(text, "cpu")) {
    *out_platform = KC_PLATFORM_HOST;
    return NULL;
  }
  if (kc__ieq(text, "cuda") || kc__ieq(text, "gpu")) {
    *out_platform = KC_PLATFORM_CUDA;
    return NULL;
  }
  return kc_status_create(KC_INVALID_ARGUMENT,
                          "unknown platform %s: expected Host, cpu, CUDA "
                          "or gpu",
                          KC__Q(text));
}

void kc_xcall_status_set_failure(kc_xcall_status* status, const char* message,
                                 size_t size) {
  if (!status) return;
  kc__free(status->message);
  status->failed = true;
  status->message = kc__malloc(size + 1);
  status->size = status->message ? size : 0;
  if (status->message) {
    if (size) memcpy(status->message, message, size);
    status->message[size] = '\0';
  }
}

void kc_xcall_status_set_success(kc_xcall_status* status) {
  if (!status) return;
  kc__free(status->message);
  status->message = NULL;
  status->size = 0;
  status->failed = false;
}

static void kc__target_delete(kc_object* obj) {
  kc__xcall_target* t = (kc__xcall_target*)(void*)obj;
  if (t->user_deleter) t->user_deleter(t->user);
  kc__owned_detach(&t->owned); /* after the plugin's code has run */
  for (int32_t i = 0; i < t->signature.num_attrs; ++i) {
    kc__free((void*)(uintptr_t)t->signature.attrs[i].name);
  }
  kc__free((void*)(uintptr_t)t->signature.args);
  kc__free((void*)(uintptr_t)t->signature.results);
  kc__free((void*)(uintptr_t)t->signature.attrs);
  kc__arena_free(&t->defaults);
  kc__op_gradient_destroy(t->gradient);
  kc__free(t->name);
  kc__free(t);
}

/* Builds the registry key "name@Platform" into buf. */
static kc_status* kc__target_key(kc_string_view name, kc_platform platform, char* buf,
                                 size_t cap, kc_string_view* out_key) {
  const char* pname = kc_platform_name(platform);
  if (platform != KC_PLATFORM_HOST && platform != KC_PLATFORM_CUDA) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "custom-call target %s: unknown platform %d",
                            KC__Q(name), (int)platform);
  }
  if (!name.data || name.size == 0 || name.size > KC__TARGET_NAME_MAX ||
      memchr(name.data, '@', name.size)) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "invalid custom-call target name %s: expected "
                            "1 to %d bytes of [A-Za-z0-9_.:$-]",
                            KC__Q(name), KC__TARGET_NAME_MAX);
  }
  int n = snprintf(buf, cap, "%.*s@%s", (int)name.size, name.data, pname);
  out_key->data = buf;
  out_key->size = n > 0 ? (size_t)n : 0;
  return NULL;
}

/* Creates a target object (without the signature). */
static kc_status* kc__target_create(kc_string_view name, kc_platform platform,
                                    kc_xcall_api api, kc__xcall_target** out) {
  kc__xcall_target* t = kc__calloc(1, sizeof *t);
  if (t) t->name = kc__malloc(name.size + 1);
  if (!t || !t->name) {
    kc__free(t);
    return kc_status_create(KC_RESOURCE_EXHAUSTED,
                            "out of memory registering a custom-call target");
  }
  memcpy(t->name, name.data, name.size);
  t->name[name.size] = '\0';
  t->header.ref_count = 1;
  t->header.type_index = KC__TYPE_XCALL_TARGET;
  t->header.deleter = kc__target_delete;
  t->platform = platform;
  t->api = api;
  *out = t;
  return NULL;
}

/* Publishes (or stages) the target and drops the creator's reference. */
static kc_status* kc__target_register(kc__xcall_target* t, kc_string_view key,
                                      uint32_t flags) {
  if (flags & KC_XCALL_GRAPH_SAFE) t->graph_safe = true;
  if (t->signature.flags & KC_XCALL_SIG_GRAPH_SAFE) t->graph_safe = true;
  flags &= ~(uint32_t)KC_XCALL_GRAPH_SAFE;
  const uintptr_t code[] = {KC__CODE(t->fn), KC__CODE(t->handler),
                            KC__CODE(t->user_deleter), KC__CODE(t->xla.instantiate),
                            KC__CODE(t->xla.prepare), KC__CODE(t->xla.initialize),
                            KC__CODE(t->xla.execute)};
  kc__owned_attach(&t->owned, &t->header, code, KC__ARRAY_SIZE(code));
  kc_status* st = kc__registry_insert(&kc__xcall_registry, key,
                                      KC_OBJECT(t), flags);
  kc_object_release(KC_OBJECT(t));
  return st;
}

kc_status* kc__xcall_target_new(kc_string_view name, kc_platform platform,
                                kc_xcall_api api, char* key_buf,
                                kc_string_view* out_key,
                                kc__xcall_target** out) {
  KC_RETURN_IF_ERROR(kc__target_key(name, platform, key_buf, KC__TARGET_KEY_CAP, out_key));
  return kc__target_create(name, platform, api, out);
}

kc_status* kc__xcall_target_publish(kc__xcall_target* t, kc_string_view key,
                                    uint32_t flags) {
  return kc__target_register(t, key, flags);
}

void* kc_xcall_status_get_user(const kc_xcall_status* status) {
  return status ? status->user : NULL;
}

/* Why (name, platform, api, fn, user) cannot be registered with a legacy
 * convention, or NULL. */
static const char* kc__legacy_refusal(kc_platform platform, kc_xcall_api api,
                                      void (*fn)(void), void* user,
                                      kc_deleter_fn user_deleter) {
  if (!fn) return "fn is NULL";
  if (api == KC_XCALL_API_TYPED) {
    return "API TYPED needs kc_xcall_register_typed";
  }
  if (api < KC_XCALL_API_ORIGINAL ||
      api > KC_XCALL_API_STATUS_RETURNING_UNIFIED) {
    return "api: expected ORIGINAL, STATUS_RETURNING or "
           "STATUS_RETURNING_UNIFIED";
  }
  if (platform != KC_PLATFORM_HOST &&
      api == KC_XCALL_API_STATUS_RETURNING_UNIFIED) {
    return "STATUS_RETURNING_UNIFIED is a host convention";
  }
  if (api == KC_XCALL_API_ORIGINAL && (user || user_deleter)) {
    return "user data needs a convention with a status argument "
           "(STATUS_RETURNING or STATUS_RETURNING_UNIFIED), which "
           "kc_xcall_status_get_user reads it from: ORIGINAL's signature, "
           "fixed by XLA, has no argument to carry it";
  }
  return NULL;
}

kc_status* kc_xcall_register_v2(kc_string_view name, kc_platform platform,
                                kc_xcall_api api, void (*fn)(void), void* user,
                                kc_deleter_fn user_deleter, uint32_t flags) {
  char buf[KC__TARGET_KEY_CAP];
  kc_string_view key;
  kc_status* st = kc__target_key(name, platform, buf, sizeof buf, &key);
  if (st) {
    if (user_deleter) user_deleter(user);
    return kc_status_add_context(st, "registering a custom-call target");
  }
  const char* why = kc__legacy_refusal(platform, api, fn, user, user_deleter);
  kc__xcall_target* t = NULL;
  if (why) {
    st = kc_status_create(KC_INVALID_ARGUMENT,
                          "registering custom-call target '%s': %s", buf, why);
  } else {
    st = kc__target_create(name, platform, api, &t);
    if (st) st = kc_status_add_context(st, "registering '%s'", buf);
  }
  if (st) {
    if (user_deleter) user_deleter(user);
    return st;
  }
  t->fn = fn;
  t->user = user;
  t->user_deleter = user_deleter; /* runs when the target is freed */
  return kc__target_register(t, key, flags);
}

kc_status* kc_xcall_register(kc_string_view name, kc_platform platform,
                             kc_xcall_api api, void (*fn)(void),
                             uint32_t flags) {
  return kc_xcall_register_v2(name, platform, api, fn, NULL, NULL, flags);
}

static bool kc__attr_type_ok(int32_t type) {
  return type >= KC_ATTR_BOOL && type <= KC_ATTR_DICT;
}

/* The signature's attribute defaults, checked against the attributes'
 * types and copied, with the strings and arrays they hold, into the
 * target's arena. */
static kc_status* kc__copy_defaults(kc__xcall_target* t, const kc_attr* given) {
  kc_xcall_signature* s = &t->signature;
  size_t n = (size_t)s->num_attrs;
  kc_attr* out = kc__arena_alloc(&t->defaults, (n + 1) * sizeof *out);
  if (!out) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  for (size_t i = 0; i < n; ++i) {
    const kc_attr* d = &given[i];
    const kc_xcall_attr_spec* spec = &s->attrs[i];
    if (d->type == 0) continue;
    bool ok = d->type == spec->type && d->type != KC_ATTR_DICT &&
              (d->type != KC_ATTR_ARRAY || !spec->elem_type || d->elem_type == spec->elem_type);
    if (!ok) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "signature: attribute %zu ('%s'): the default's type %d is not "
                              "the attribute's (%d)",
                              i, spec->name, d->type, spec->type);
    }
    if (!kc__attr_copy(&t->defaults, d, &out[i])) {
      kc_attr_dict one = {1, d};
      if (kc__attr_dict_well_formed(&one)) {
        return kc_status_create(KC_RESOURCE_EXHAUSTED,
                                "signature: attribute %zu ('%s'): out of memory "
                                "copying its default",
                                i, spec->name);
      }
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "signature: attribute %zu ('%s'): a default with no data or an "
                              "unknown element type",
                              i, spec->name);
    }
    out[i].name = kc_sv(spec->name);
  }
  s->attr_defaults = out;
  return NULL;
}

/* Copies the signature's arrays into t; checks them. */
static kc_status* kc__copy_signature(kc__xcall_target* t,
                                     const kc_xcall_signature* sig) {
  if (!sig || sig->struct_size < KC__SIGNATURE_V1_SIZE) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "signature: expected struct_size >= %zu",
                            (size_t)KC__SIGNATURE_V1_SIZE);
  }
  uint32_t flags = KC_STRUCT_HAS(sig, kc_xcall_signature, flags) ? sig->flags : 0;
  if (flags & ~(KC_XCALL_SIG_OPEN | KC_XCALL_SIG_NO_INSTANTIATE | KC_XCALL_SIG_GRAPH_SAFE |
                KC_XCALL_SIG_BATCH_ELEMENTWISE | KC_XCALL_SIG_BATCH_NONE)) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "signature: unknown flags 0x%x (expected "
                            "KC_XCALL_SIG_OPEN, KC_XCALL_SIG_NO_INSTANTIATE, "
                            "KC_XCALL_SIG_GRAPH_SAFE, KC_XCALL_SIG_BATCH_ELEMENTWISE, "
                            "KC_XCALL_SIG_BATCH_NONE or none)",
                            flags);
  }
  if ((flags & KC_XCALL_SIG_BATCH_ELEMENTWISE) && (flags & KC_XCALL_SIG_BATCH_NONE)) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "signature: KC_XCALL_SIG_BATCH_ELEMENTWISE and "
                            "KC_XCALL_SIG_BATCH_NONE together (expected at most one)");
  }
  if ((flags & KC_XCALL_SIG_OPEN) &&
      (sig->num_args || sig->num_results || sig->num_attrs)) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "signature: an open signature (KC_XCALL_SIG_OPEN) "
                            "declares no buffers or attributes, got %d, %d "
                            "and %d",
                            sig->num_args, sig->num_results, sig->num_attrs);
  }
  if (sig->num_args < 0 || sig->num_results < 0 || sig->num_attrs < 0 ||
      (sig->num_args && !sig->args) || (sig->num_results && !sig->results) ||
      (sig->num_attrs && !sig->attrs)) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "signature: a negative count or a NULL array with "
                            "a positive count");
  }
  kc_xcall_signature* s = &t->signature;
  s->struct_size = sizeof *s;
  s->flags = flags;
  size_t na = (size_t)sig->num_args, nr = (size_t)sig->num_results,
         nt = (size_t)sig->num_attrs;
  kc_xcall_buffer_spec* args = kc__calloc(na + 1, sizeof *args);
  kc_xcall_buffer_spec* results = kc__calloc(nr + 1, sizeof *results);
  kc_xcall_attr_spec* attrs = kc__calloc(nt + 1, sizeof *attrs);
  s->args = args;
  s->results = results;
  s->attrs = attrs;
  if (!args || !results || !attrs) {
    return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  }
  if (na) memcpy(args, sig->args, na * sizeof *args);
  if (nr) memcpy(results, sig->results, nr * sizeof *results);
  s->num_args = sig->num_args;
  s->num_results = sig->num_results;
  for (size_t i = 0; i < nt; ++i) {
    const kc_xcall_attr_spec* a = &sig->attrs[i];
    if (!a->name || !a->name[0] || !kc__attr_type_ok(a->type) ||
        (a->type == KC_ATTR_ARRAY && a->elem_type != 0 &&
         (a->elem_type < KC_ATTR_BOOL || a->elem_type > KC_ATTR_F64))) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "signature: attribute %zu: expected a name and "
                              "a known type",
                              i);
    }
    size_t n = strlen(a->name);
    char* name = kc__malloc(n + 1);
    if (!name) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
    memcpy(name, a->name, n + 1);
    attrs[i] = *a;
    attrs[i].name = name;
    s->num_attrs = (int32_t)(i + 1);
  }
  const kc_attr* defaults = KC_STRUCT_HAS(sig, kc_xcall_signature, attr_defaults)
                                ? sig->attr_defaults
                                : NULL;
  if (defaults) KC_RETURN_IF_ERROR(kc__copy_defaults(t, defaults));
  const char* gradient =
      KC_STRUCT_HAS(sig, kc_xcall_signature, gradient) ? sig->gradient : NULL;
  if (!gradient) return NULL;
  KC_RETURN_IF_ERROR(kc__op_rule_parse(gradient, false, &t->gradient));
  bool open = flags & KC_XCALL_SIG_OPEN;
  KC_RETURN_IF_ERROR(kc__op_gradient_resolve_positional(
      t->gradient, open ? -1 : s->num_args, open ? -1 : s->num_results));
  s->gradient = t->gradient->spec;
  return NULL;
}

kc_status* kc_xcall_register_typed(kc_string_view name, kc_platform platform,
                                   const kc_xcall_signature* signature,
                                   kc_xcall_handler_fn fn, void* user,
                                   kc_deleter_fn user_deleter, uint32_t flags) {
  char buf[KC__TARGET_KEY_CAP];
  kc_string_view key;
  kc_status* st = kc__target_key(name, platform, buf, sizeof buf, &key);
  if (!st && !fn) {
    st = kc_status_create(KC_INVALID_ARGUMENT, "handler fn is NULL");
  }
  kc__xcall_target* t = NULL;
  if (!st) st = kc__target_create(name, platform, KC_XCALL_API_TYPED, &t);
  if (st) {
    if (user_deleter) user_deleter(user);
    return kc_status_add_context(st, "registering typed custom-call target");
  }
  t->handler = fn;
  t->user = user;
  t->user_deleter = user_deleter;
  st = kc__copy_signature(t, signature);
  if (st) {
    kc_object_release(KC_OBJECT(t)); /* runs user_deleter */
    return kc_status_add_context(st, "registering custom-call target %s", KC__QS(buf));
  }
  return kc__target_register(t, key, flags);
}

kc__xcall_target* kc__xcall_get(kc_string_view name, kc_platform platform) {
  char buf[KC__TARGET_KEY_CAP];
  if (name.size == 0 || name.size > KC__TARGET_NAME_MAX || !name.data) return NULL;
  int n = snprintf(buf, sizeof buf, "%.*s@%s", (int)name.size, name.data,
                   kc_platform_name(platform));
  kc_string_view key = {buf, n > 0 ? (size_t)n : 0};
  return (kc__xcall_target*)(void*)kc__registry_get(&kc__xcall_registry, key);
}

kc_status* kc__xcall_not_found(kc_string_view name, kc_platform platform) {
  if (name.size > KC__TARGET_NAME_MAX || !name.data) {
    /* No key can hold it, and a cut one would name another target. */
    return kc_status_create(KC_NOT_FOUND,
                            "no custom-call target named %s is registered for "
                            "%s (names are at most %d bytes)",
                            KC__Q(name), kc_platform_name(platform),
                            KC__TARGET_NAME_MAX);
  }
  char buf[KC__TARGET_KEY_CAP];
  int n = snprintf(buf, sizeof buf, "%.*s@%s", (int)name.size, name.data,
                   kc_platform_name(platform));
  kc_string_view key = {buf, n > 0 ? (size_t)n : 0};
  return kc__registry_not_found(&kc__xcall_registry, key);
}

kc_status* kc_xcall_lookup(kc_string_view name, kc_platform platform,
                           kc_xcall_target_desc* out) {
  if (!out) {
    return kc_status_create(KC_INVALID_ARGUMENT, "kc_xcall_lookup: out is NULL");
  }
  kc__xcall_target* t = kc__xcall_get(name, platform);
  if (!t) return kc__xcall_not_found(name, platform);
  kc_xcall_target_desc d;
  d.struct_size = out->struct_size;
  d.name = kc_sv(t->name);
  d.platform = t->platform;
  d.api = t->api;
  d.signature = t->api == KC_XCALL_API_TYPED ? &t->signature : NULL;
  d.xla_ffi = t->xla.execute != NULL;
  d.xla_ffi_api_major = d.xla_ffi ? t->xla_api_major : 0;
  d.xla_ffi_api_minor = d.xla_ffi ? t->xla_api_minor : 0;
  memcpy(out, &d, out->struct_size < sizeof d ? out->struct_size : sizeof d);
  /* The description borrows from the target, which the registry keeps as
   * long as the name stays registered to it (xcall.h). */
  kc_object_release(KC_OBJECT(t));
  return NULL;
}

kc_status* kc_xcall_get_gradient(kc_string_view name, kc_platform platform,
                                 kc_op_gradient* out, bool* out_declared) {
  if (!out || !out_declared) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_xcall_get_gradient: out or out_declared is "
                            "NULL");
  }
  kc__xcall_target* t = kc__xcall_get(name, platform);
  if (!t) return kc__xcall_not_found(name, platform);
  *out_declared = t->gradient != NULL;
  /* Borrowed from the target, as kc_xcall_lookup's description. */
  if (t->gradient) kc__op_gradient_fill(t->gradient, out);
  kc_object_release(KC_OBJECT(t));
  return NULL;
}

const char* kc_attr_type_name(int32_t type) {
  static const char* const names[] = {
      NULL, "bool", "i8", "i16", "i32", "i64", "u8", "u16",
      "u32", "u64", "f32", "f64", "str", "array", "dict"};
  if (type < 1 || (size_t)type >= KC__ARRAY_SIZE(names)) return "unknown";
  return names[type];
}

const kc_attr* kc_attr_dict_lookup(const kc_attr_dict* dict,
                                   kc_string_view name) {
  if (!dict) return NULL;
  for (size_t i = 0; i < dict->count; ++i) {
    if (kc_sv_equal(dict->entries[i].name, name)) return &dict->entries[i];
  }
  return NULL;
}


size_t kc__xcall_buffer_spec_describe(const kc_xcall_buffer_spec* spec,
                                      const char* dtype_name, char* buf,
                                      size_t cap) {
  size_t len = 0;
  if (cap) buf[0] = '\0';
  char dtype[32];
  if (spec->dtype.bits && dtype_name) {
    snprintf(dtype, sizeof dtype, "%s", dtype_name);
  } else if (spec->dtype.bits) {
    kc_dtype_format(spec->dtype, dtype, sizeof dtype);
  } else {
    snprintf(dtype, sizeof dtype, "%s", spec->rank < 0 ? "any array" : "any dtype");
  }
  if (spec->rank >= 0) {
    kc__appendf(buf, cap, &len, "%s of rank %d", dtype, spec->rank);
  } else if (spec->dtype.bits) {
    kc__appendf(buf, cap, &len, "%s of any rank", dtype);
  } else {
    kc__appendf(buf, cap, &len, "%s", dtype);
  }
  return len;
}

static void kc__put_buffers(char* buf, size_t cap, size_t* len,
                            const kc_xcall_buffer_spec* specs, int32_t n) {
  kc__appendf(buf, cap, len, "(");
  for (int32_t i = 0; i < n; ++i) {
    char dtype[32] = "any";
    if (specs[i].dtype.bits) kc_dtype_format(specs[i].dtype, dtype, sizeof dtype);
    kc__appendf(buf, cap, len, "%s%s[", i ? ", " : "", dtype);
    if (specs[i].rank < 0) kc__appendf(buf, cap, len, "*");
    for (int32_t d = 0; d < specs[i].rank; ++d) {
      kc__appendf(buf, cap, len, d ? ",?" : "?");
    }
    kc__appendf(buf, cap, len, "]");
  }
  kc__appendf(buf, cap, len, ")");
}

/* A float with the fewest digits that read back as the same value. */
static void kc__put_float(char* buf, size_t cap, size_t* len, double v,
                          bool single) {
  char text[40];
  for (int digits = 6; digits <= 17; ++digits) {
    snprintf(text, sizeof text, "%.*g", digits, v);
    double back = strtod(text, NULL);
    if (single ? (float)back == (float)v : back == v) break;
  }
  kc__appendf(buf, cap, len, "%s", text);
}

/* One number of type `type` read from `p` (an array element). */
static void kc__put_number(char* buf, size_t cap, size_t* len, int32_t type,
                           const void* p) {
  union {
    int8_t i8; int16_t i16; int32_t i32; int64_t i64;
    uint8_t u8; uint16_t u16; uint32_t u32; uint64_t u64;
    float f32; double f64; bool b;
  } v;
  memcpy(&v, p, kc__attr_elem_size(type));
  switch (type) {
    case KC_ATTR_BOOL: kc__appendf(buf, cap, len, "%s", v.u8 ? "true" : "false"); break;
    case KC_ATTR_I8: kc__appendf(buf, cap, len, "%d", (int)v.i8); break;
    case KC_ATTR_I16: kc__appendf(buf, cap, len, "%d", (int)v.i16); break;
    case KC_ATTR_I32: kc__appendf(buf, cap, len, "%ld", (long)v.i32); break;
    case KC_ATTR_I64: kc__appendf(buf, cap, len, "%lld", (long long)v.i64); break;
    case KC_ATTR_U8: kc__appendf(buf, cap, len, "%u", (unsigned)v.u8); break;
    case KC_ATTR_U16: kc__appendf(buf, cap, len, "%u", (unsigned)v.u16); break;
    case KC_ATTR_U32: kc__appendf(buf, cap, len, "%lu", (unsigned long)v.u32); break;
    case KC_ATTR_U64: kc__appendf(buf, cap, len, "%llu", (unsigned long long)v.u64); break;
    case KC_ATTR_F32: kc__put_float(buf, cap, len, v.f32, true); break;
    case KC_ATTR_F64: kc__put_float(buf, cap, len, v.f64, false); break;
    default: kc__appendf(buf, cap, len, "?"); break;
  }
}

/* An attribute's default: " = 0.5", " = 'fast'", " = [0, 1]". */
static void kc__put_default(char* buf, size_t cap, size_t* len, const kc_attr* d) {
  enum { kShown = 8 };
  kc__appendf(buf, cap, len, " = ");
  switch (d->type) {
    case KC_ATTR_BOOL: kc__appendf(buf, cap, len, "%s", d->v.b ? "true" : "false"); return;
    case KC_ATTR_I8: case KC_ATTR_I16: case KC_ATTR_I32: case KC_ATTR_I64:
      kc__appendf(buf, cap, len, "%lld", (long long)d->v.i64);
      return;
    case KC_ATTR_U8: case KC_ATTR_U16: case KC_ATTR_U32: case KC_ATTR_U64:
      kc__appendf(buf, cap, len, "%llu", (unsigned long long)d->v.u64);
      return;
    case KC_ATTR_F32: kc__put_float(buf, cap, len, d->v.f32, true); return;
    case KC_ATTR_F64: kc__put_float(buf, cap, len, d->v.f64, false); return;
    case KC_ATTR_STRING: kc__appendf(buf, cap, len, "%s", KC__Q(d->v.str)); return;
    case KC_ATTR_ARRAY: {
      size_t width = kc__attr_elem_size(d->elem_type);
      const char* data = d->v.array.data;
      kc__appendf(buf, cap, len, "[");
      for (size_t k = 0; k < d->v.array.count && k < kShown; ++k) {
        if (k) kc__appendf(buf, cap, len, ", ");
        kc__put_number(buf, cap, len, d->elem_type, data + k * width);
      }
      if (d->v.array.count > kShown) {
        kc__appendf(buf, cap, len, ", ... (%zu items)", d->v.array.count);
      }
      kc__appendf(buf, cap, len, "]");
      return;
    }
    default: kc__appendf(buf, cap, len, "?"); return;
  }
}

size_t kc_xcall_signature_format(const kc_xcall_signature* sig, char* buf,
                                 size_t cap) {
  size_t len = 0;
  if (cap) buf[0] = '\0';
  if (!sig) {
    kc__appendf(buf, cap, &len, "(untyped)");
    return len;
  }
  if (KC_STRUCT_HAS(sig, kc_xcall_signature, flags) && (sig->flags & KC_XCALL_SIG_OPEN)) {
    kc__appendf(buf, cap, &len, "(...) -> (...) {...}");
    return len;
  }
  kc__put_buffers(buf, cap, &len, sig->args, sig->num_args);
  kc__appendf(buf, cap, &len, " -> ");
  kc__put_buffers(buf, cap, &len, sig->results, sig->num_results);
  const kc_attr* defaults = KC_STRUCT_HAS(sig, kc_xcall_signature, attr_defaults)
                                ? sig->attr_defaults
                                : NULL;
  for (int32_t i = 0; i < sig->num_attrs; ++i) {
    const kc_xcall_attr_spec* a = &sig->attrs[i];
    kc__appendf(buf, cap, &len, "%s%s: %s", i ? ", " : " {", a->name,
                kc_attr_type_name(a->type));
    if (a->type == KC_ATTR_ARRAY && a->elem_type) {
      kc__appendf(buf, cap, &len, "<%s>", kc_attr_type_name(a->elem_type));
    }
    if (defaults && defaults[i].type) kc__put_default(buf, cap, &len, &defaults[i]);
  }
  if (sig->num_attrs) kc__appendf(buf, cap, &len, "}");
  return len;
}

kc_status* kc_xcall_registry_list(const kc_allocator* alloc,
                                  kc_array** out_names) {
  if (!out_names) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_xcall_registry_list: out_names is NULL");
  }
  return kc__registry_list(&kc__xcall_registry, alloc, KC_SV_LIT(""), out_names);
}

void kc_xcall_registry_reset(void) { kc__registry_reset(&kc__xcall_registry); }
