/* The table of host functions handed to plugins. */
#include "internal/common.h"
#include "kcall/func.h"
#include "kcall/plugin.h"
#include "kcall/tensor.h"

/* Frozen layouts: these may only grow at the end. */
_Static_assert(offsetof(kc_host_api, struct_size) == 0, "kc_host_api layout");
_Static_assert(offsetof(kc_host_api, api_major) == 8, "kc_host_api layout");
_Static_assert(offsetof(kc_host_api, features) == 16, "kc_host_api layout");
_Static_assert(offsetof(kc_host_api, status_create) == 32,
               "kc_host_api layout");
_Static_assert(sizeof(kc_host_api) == 32 + 30 * sizeof(void*),
               "kc_host_api v1.0 has 30 functions");
_Static_assert(sizeof(kc_plugin_info) == 48, "kc_plugin_info layout");
_Static_assert(offsetof(kc_plugin_info, init) == 40, "kc_plugin_info layout");

/* Out-of-line copies of the inline readers in func.h: a table needs
 * addresses. */
#define KC__READER(name, type)                                              \
  static kc_status* kc__##name(const char* fn_name, const kc_any* args,     \
                               int32_t nargs, int32_t index, type out) {    \
    return kc_##name(fn_name, args, nargs, index, out);                     \
  }
KC__READER(args_get_int, int64_t*)
KC__READER(args_get_float, double*)
KC__READER(args_get_bool, bool*)
KC__READER(args_get_string, kc_string_view*)
KC__READER(args_get_func, kc_func**)
KC__READER(args_get_dltensor, DLTensor**)
KC__READER(args_get_opaque, void**)
#undef KC__READER

static kc_status* kc__args_check_count(const char* fn_name, int32_t nargs,
                                       int32_t min_count, int32_t max_count) {
  return kc_args_check_count(fn_name, nargs, min_count, max_count);
}

static const char* const kc__host_features[] = {"functions", "tensors", NULL};

static const kc_host_api kc__host_api = {
    .struct_size = sizeof(kc_host_api),
    .api_major = KC_API_VERSION_MAJOR,
    .api_minor = KC_API_VERSION_MINOR,
    .features = kc__host_features,
    .system_allocator = &kc__system_allocator,
    .status_create = kc_status_create,
    .status_add_context = kc_status_add_context,
    .status_get_code = kc_status_get_code,
    .status_get_message = kc_status_get_message,
    .status_destroy = kc_status_destroy,
    .object_retain = kc_object_retain,
    .object_release = kc_object_release,
    .any_retain = kc_any_retain,
    .any_release = kc_any_release,
    .any_from_string = kc_any_from_string,
    .any_get_string = kc_any_get_string,
    .str_create = kc_str_create,
    .bytes_create = kc_bytes_create,
    .array_create = kc_array_create,
    .array_get_size = kc_array_get_size,
    .array_get_item = kc_array_get_item,
    .tensor_create = kc_tensor_create,
    .tensor_get_dltensor = kc_tensor_get_dltensor,
    .func_create = kc_func_create,
    .func_call = kc_func_call_noinline,
    .func_registry_register = kc_func_registry_register,
    .func_registry_lookup = kc_func_registry_lookup,
    .args_check_count = kc__args_check_count,
    .args_get_int = kc__args_get_int,
    .args_get_float = kc__args_get_float,
    .args_get_bool = kc__args_get_bool,
    .args_get_string = kc__args_get_string,
    .args_get_func = kc__args_get_func,
    .args_get_dltensor = kc__args_get_dltensor,
    .args_get_opaque = kc__args_get_opaque,
};

const kc_host_api* kc_plugin_get_host_api(void) { return &kc__host_api; }
