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

/* "f32[3,4]" into buf. */
static const char* kc__tensor_text(DLDataType dtype, int32_t rank,
                                   const int64_t* dims, char* buf, size_t cap) {
  size_t len = 0;
  char name[32];
  kc_dtype_format(dtype, name, sizeof name);
  kc__appendf(buf, cap, &len, "%s[", name);
  for (int32_t i = 0; i < rank; ++i) {
    kc__appendf(buf, cap, &len, i ? ",%lld" : "%lld", (long long)dims[i]);
  }
  kc__appendf(buf, cap, &len, "]");
  return buf;
}

kc_status* kc__xcall_check_op_call(kc_string_view target,
                                   const kc_attr_dict* attrs,
                                   const DLTensor* const* operands,
                                   size_t num_operands,
                                   const DLTensor* const* results,
                                   size_t num_results) {
  const size_t n = sizeof KC__OP_TARGET_PREFIX - 1;
  if (!target.data || target.size <= n ||
      memcmp(target.data, KC__OP_TARGET_PREFIX, n) != 0) {
    return NULL;
  }
  kc_string_view op_name = {target.data + n, target.size - n};
  const kc_op* op = NULL;
  kc_status* st = kc_op_registry_lookup(op_name, &op);
  if (st) {
    kc_status_destroy(st); /* a target of that name, not an op's */
    return NULL;
  }
  if (num_operands > KC_OP_MAX_ARGS || num_results > KC_OP_MAX_ARGS) return NULL;
  size_t count = attrs ? attrs->count : 0;
  kc_op_attr* op_attrs = kc__calloc(count + 1, sizeof *op_attrs);
  if (!op_attrs) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  size_t made = 0;
  for (; !st && made < count; ++made) st = kc__op_attr_from(&attrs->entries[made], &op_attrs[made]);
  kc_op_output_info outs[KC_OP_MAX_ARGS];
  int32_t num_outs = 0;
  if (!st) {
    st = kc_op_infer(op, operands, (int32_t)num_operands, op_attrs, (int32_t)count, outs,
                     KC_OP_MAX_ARGS, &num_outs);
  }
  for (size_t i = 0; i < made; ++i) kc_any_release(&op_attrs[i].value);
  kc__free(op_attrs);
  if (st) return st;
  if ((size_t)num_outs != num_results) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "the op %.*s produces %d outputs, the program declares %zu "
                            "results",
                            (int)op_name.size, op_name.data, num_outs, num_results);
  }
  for (size_t i = 0; i < num_results; ++i) {
    const kc_op_output_info* o = &outs[i];
    const DLTensor* r = results[i];
    bool same = o->rank == KC_RANK_UNKNOWN ||
                (o->rank == r->ndim && kc_dtype_equal(o->dtype, r->dtype));
    for (int32_t d = 0; same && o->rank != KC_RANK_UNKNOWN && d < o->rank; ++d) {
      same = o->dims[d] == KC_DIM_UNKNOWN || o->dims[d] == r->shape[d];
    }
    if (!same) {
      char want[256], got[256];
      return kc_status_create(
          KC_INVALID_ARGUMENT,
          "result %zu: the op %.*s produces %s, the program declares %s", i,
          (int)op_name.size, op_name.data,
          kc__tensor_text(o->dtype, o->rank, o->dims, want, sizeof want),
          kc__tensor_text(r->dtype, r->ndim, r->shape, got, sizeof got));
    }
  }
  return NULL;
}
