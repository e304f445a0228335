/*
 * Ops called from programs as JAX calls them: kcall.jax.call_op("OP", ...)
 * lowers to custom_call_target="kcall.OP" (API_VERSION_TYPED_FFI). A
 * program that names such a target, where none is registered under that
 * name and the op OP is, gets one made on first use: the op's XLA FFI
 * adapter (kc_xla_ffi_adapter_create_for_op) registered as an XLA FFI
 * target for the host. So an op's attributes are declared once, in its
 * spec, and serve kcall.ops, torch, JAX and programs alike.
 */
#include <string.h>

#include "internal/common.h"
#include "kcall/op.h"
#include "kcall/xla_ffi.h"
#include "xcall/xcall_internal.h"

#define KC__OP_TARGET_PREFIX "kcall."

kc_status* kc__xcall_get_for_program(kc_string_view name, kc_platform platform,
                                     kc__xcall_target** out) {
  *out = kc__xcall_get(name, platform);
  if (*out) return NULL;
  const size_t n = sizeof KC__OP_TARGET_PREFIX - 1;
  if (platform != KC_PLATFORM_HOST || !name.data || name.size <= n ||
      memcmp(name.data, KC__OP_TARGET_PREFIX, n) != 0) {
    return kc__xcall_not_found(name, platform);
  }
  kc_string_view op_name = {name.data + n, name.size - n};
  const kc_op* op = NULL;
  kc_status* st = kc_op_registry_lookup(op_name, &op);
  if (st) {
    /* Neither a target nor an op: the target is what the program named,
     * and the op's plugin is what is most likely missing. */
    kc_status_destroy(st);
    kc_status* missing = kc__xcall_not_found(name, platform);
    kc_status* hinted = kc_status_create(
        KC_NOT_FOUND,
        "%s; the op %.*s, which a target named %s calls, is not registered "
        "either: load the plugin that defines it (kcall run --plugin FILE, "
        "kc_plugin_load, kcall.load_plugin)",
        kc_status_get_message(missing), (int)op_name.size, op_name.data, KC__Q(name));
    kc_status_destroy(missing);
    return hinted;
  }
  kc_xla_ffi_handler_fn handler = NULL;
  st = kc_xla_ffi_adapter_create_for_op(op_name, &handler);
  if (!st) st = kc_xcall_register_xla_ffi_handler(name, platform, handler, 0);
  if (st && kc_status_get_code(st) == KC_ALREADY_EXISTS) {
    kc_status_destroy(st); /* another thread made it meanwhile */
    st = NULL;
  }
  if (st) {
    return kc_status_add_context(st, "calling op %s as the custom-call target %s",
                                 KC__Q(op_name), KC__Q(name));
  }
  *out = kc__xcall_get(name, platform);
  return *out ? NULL : kc__xcall_not_found(name, platform);
}
