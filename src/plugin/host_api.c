/* The table of host functions handed to plugins. */
#include "internal/common.h"
#include "kcall/device.h"
#include "kcall/func.h"
#include "kcall/kernel.h"
#include "kcall/op.h"
#include "kcall/plugin.h"
#include "kcall/plugin_api.h"
#include "kcall/runtime.h"
#include "kcall/tensor.h"
#include "kcall/xcall.h"
#include "kcall/xla_ffi.h"

/* Frozen layouts: these may only grow at the end. */
_Static_assert(offsetof(kc_host_api, struct_size) == 0, "kc_host_api layout");
_Static_assert(offsetof(kc_host_api, api_major) == 8, "kc_host_api layout");
_Static_assert(offsetof(kc_host_api, features) == 16, "kc_host_api layout");
_Static_assert(offsetof(kc_host_api, status_create) == 32,
               "kc_host_api layout");
_Static_assert(offsetof(kc_host_api, attr_dict_lookup) == 32 + 110 * sizeof(void*),
               "kc_host_api layout");
/* API 1.0 ends with xla_ffi_get_api, its 115th function. */
_Static_assert(offsetof(kc_host_api, op_builder_add_input_v2) ==
                   32 + 115 * sizeof(void*),
               "kc_host_api v1.0 has 115 functions");
/* API 1.1 ends with sv_format_quoted, its 126th function. */
_Static_assert(offsetof(kc_host_api, device_get_count) == 32 + 126 * sizeof(void*),
               "kc_host_api v1.1 has 126 functions");
/* API 1.2 ends with dltensor_copy, its 139th function. */
_Static_assert(offsetof(kc_host_api, op_builder_set_gradient) ==
                   32 + 139 * sizeof(void*),
               "kc_host_api v1.2 has 139 functions");
/* API 1.3 ends with op_builder_set_gradient, its 140th function. */
_Static_assert(offsetof(kc_host_api, op_builder_set_batching) ==
                   32 + 140 * sizeof(void*),
               "kc_host_api v1.3 has 140 functions");
/* API 1.4 ends with op_builder_set_batching, its 141st function. */
_Static_assert(offsetof(kc_host_api, op_builder_set_jvp) ==
                   32 + 141 * sizeof(void*),
               "kc_host_api v1.4 has 141 functions");
_Static_assert(sizeof(kc_host_api) == 32 + 148 * sizeof(void*),
               "kc_host_api v1.5 has 148 functions");
_Static_assert(sizeof(kc_plugin_info) == 56, "kc_plugin_info layout");

/* KC_HOST_API_FUNCTIONS (kcall/plugin_api.h) names every entry of the
 * table, in order and with its type, and kc_NAME is the library function
 * of that type: so that no entry can be added without its spelling. */
typedef struct kc__host_api_listed {
  size_t struct_size;
  uint32_t api_major;
  uint32_t api_minor;
  const char* const* features;
  const kc_allocator* system_allocator;
#define KC__LISTED(kind, ret, name, params, args) ret(*name) params;
  KC_HOST_API_FUNCTIONS(KC__LISTED)
#undef KC__LISTED
} kc__host_api_listed;
_Static_assert(sizeof(kc__host_api_listed) == sizeof(kc_host_api),
               "kc_host_api has an entry that KC_HOST_API_FUNCTIONS in "
               "kcall/plugin_api.h does not list");
#define KC__CHECK_LISTED(kind, ret, name, params, args)                     \
  _Static_assert(offsetof(kc__host_api_listed, name) ==                     \
                     offsetof(kc_host_api, name),                           \
                 "KC_HOST_API_FUNCTIONS lists '" #name "' out of order");   \
  _Static_assert(_Generic(((kc_host_api*)0)->name, ret(*) params: 1,        \
                          default: 0),                                      \
                 "KC_HOST_API_FUNCTIONS gives '" #name "' another type");   \
  _Static_assert(_Generic(&kc_##name, ret(*) params: 1, default: 0),        \
                 "kc_" #name " is not of the type of its table entry");
KC_HOST_API_FUNCTIONS(KC__CHECK_LISTED)
#undef KC__CHECK_LISTED
_Static_assert(offsetof(kc_plugin_info, init) == 40, "kc_plugin_info layout");
_Static_assert(offsetof(kc_plugin_info, fini) == 48, "kc_plugin_info layout");

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

static const char* const kc__host_features[] = {"functions", "tensors",
                                                "ops", "kernels",
                                                "thread_pool",
                                                "custom_calls", "xla_ffi",
                                                "op_builder_v2", "user_data",
                                                "device", "gradient", "batching",
                                                "target_gradient", "jvp", "shape_fns",
                                                NULL};

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
    .op_builder_create = kc_op_builder_create,
    .op_builder_add_input = kc_op_builder_add_input,
    .op_builder_add_output = kc_op_builder_add_output,
    .op_builder_add_attr = kc_op_builder_add_attr,
    .op_builder_set_flags = kc_op_builder_set_flags,
    .op_builder_set_doc = kc_op_builder_set_doc,
    .op_builder_set_shape_fn = kc_op_builder_set_shape_fn,
    .op_builder_destroy = kc_op_builder_destroy,
    .op_registry_register = kc_op_registry_register,
    .op_attrs_get_int = kc_op_attrs_get_int,
    .op_attrs_get_float = kc_op_attrs_get_float,
    .op_attrs_get_bool = kc_op_attrs_get_bool,
    .op_attrs_get_string = kc_op_attrs_get_string,
    .op_attrs_get_type = kc_op_attrs_get_type,
    .op_attrs_get_shape = kc_op_attrs_get_shape,
    .op_attrs_get_int_list = kc_op_attrs_get_int_list,
    .op_attrs_get_type_list = kc_op_attrs_get_type_list,
    .op_attrs_get_value = kc_op_attrs_get_value,
    .shape_ctx_get_input_count = kc_shape_ctx_get_input_count,
    .shape_ctx_get_output_count = kc_shape_ctx_get_output_count,
    .shape_ctx_get_input = kc_shape_ctx_get_input,
    .shape_ctx_get_input_dtype = kc_shape_ctx_get_input_dtype,
    .shape_ctx_get_output_dtype = kc_shape_ctx_get_output_dtype,
    .shape_ctx_get_attrs = kc_shape_ctx_get_attrs,
    .shape_ctx_set_output = kc_shape_ctx_set_output,
    .shape_ctx_set_output_dtype = kc_shape_ctx_set_output_dtype,
    .shape_handle_get_rank = kc_shape_handle_get_rank,
    .shape_handle_get_dim = kc_shape_handle_get_dim,
    .shape_ctx_make_shape = kc_shape_ctx_make_shape,
    .shape_ctx_with_rank = kc_shape_ctx_with_rank,
    .shape_ctx_with_rank_at_least = kc_shape_ctx_with_rank_at_least,
    .shape_ctx_with_rank_at_most = kc_shape_ctx_with_rank_at_most,
    .shape_ctx_merge = kc_shape_ctx_merge,
    .shape_ctx_broadcast = kc_shape_ctx_broadcast,
    .shape_ctx_concatenate = kc_shape_ctx_concatenate,
    .shape_ctx_subshape = kc_shape_ctx_subshape,
    .shape_ctx_replace_dim = kc_shape_ctx_replace_dim,
    .shape_ctx_merge_dim = kc_shape_ctx_merge_dim,
    .shape_ctx_add_dims = kc_shape_ctx_add_dims,
    .shape_ctx_subtract_dims = kc_shape_ctx_subtract_dims,
    .shape_ctx_multiply_dims = kc_shape_ctx_multiply_dims,
    .shape_ctx_divide_dims = kc_shape_ctx_divide_dims,
    .shape_fn_unchanged = kc_shape_fn_unchanged,
    .kernel_builder_create = kc_kernel_builder_create,
    .kernel_builder_add_type_constraint = kc_kernel_builder_add_type_constraint,
    .kernel_builder_set_priority = kc_kernel_builder_set_priority,
    .kernel_builder_add_host_memory_arg = kc_kernel_builder_add_host_memory_arg,
    .kernel_builder_set_data = kc_kernel_builder_set_data,
    .kernel_builder_destroy = kc_kernel_builder_destroy,
    .kernel_registry_register = kc_kernel_registry_register,
    .kernel_construct_ctx_get_attrs = kc_kernel_construct_ctx_get_attrs,
    .kernel_construct_ctx_get_op_name = kc_kernel_construct_ctx_get_op_name,
    .kernel_construct_ctx_get_device = kc_kernel_construct_ctx_get_device,
    .kernel_construct_ctx_get_input_count = kc_kernel_construct_ctx_get_input_count,
    .kernel_construct_ctx_get_input_dtype = kc_kernel_construct_ctx_get_input_dtype,
    .kernel_construct_ctx_get_output_count = kc_kernel_construct_ctx_get_output_count,
    .kernel_construct_ctx_get_output_dtype = kc_kernel_construct_ctx_get_output_dtype,
    .kernel_construct_ctx_get_data = kc_kernel_construct_ctx_get_data,
    .kernel_ctx_get_input_count = kc_kernel_ctx_get_input_count,
    .kernel_ctx_get_input = kc_kernel_ctx_get_input,
    .kernel_ctx_get_output_count = kc_kernel_ctx_get_output_count,
    .kernel_ctx_get_output = kc_kernel_ctx_get_output,
    .kernel_ctx_get_input_range = kc_kernel_ctx_get_input_range,
    .kernel_ctx_allocate_output = kc_kernel_ctx_allocate_output,
    .kernel_ctx_allocate_temp = kc_kernel_ctx_allocate_temp,
    .kernel_ctx_set_status = kc_kernel_ctx_set_status,
    .kernel_ctx_get_thread_pool = kc_kernel_ctx_get_thread_pool,
    .kernel_ctx_get_stream = kc_kernel_ctx_get_stream,
    .kernel_ctx_get_device = kc_kernel_ctx_get_device,
    .kernel_ctx_get_attrs = kc_kernel_ctx_get_attrs,
    .thread_pool_get_default = kc_thread_pool_get_default,
    .thread_pool_get_size = kc_thread_pool_get_size,
    .thread_pool_schedule = kc_thread_pool_schedule,
    .thread_pool_schedule_with_hint = kc_thread_pool_schedule_with_hint,
    .thread_pool_parallel_for = kc_thread_pool_parallel_for,
    .thread_pool_parallel_for_with_worker_id = kc_thread_pool_parallel_for_with_worker_id,
    .xcall_register = kc_xcall_register,
    .xcall_register_typed = kc_xcall_register_typed,
    .xcall_status_set_failure = kc_xcall_status_set_failure,
    .xcall_status_set_success = kc_xcall_status_set_success,
    .attr_dict_lookup = kc_attr_dict_lookup,
    .xcall_register_xla_ffi = kc_xcall_register_xla_ffi,
    .xcall_register_xla_ffi_handler = kc_xcall_register_xla_ffi_handler,
    .xla_ffi_type_register = kc_xla_ffi_type_register,
    .xla_ffi_get_api = kc_xla_ffi_get_api,
    .op_builder_add_input_v2 = kc_op_builder_add_input_v2,
    .op_builder_add_output_v2 = kc_op_builder_add_output_v2,
    .op_builder_add_attr_v2 = kc_op_builder_add_attr_v2,
    .op_builder_set_flags_v2 = kc_op_builder_set_flags_v2,
    .op_builder_set_doc_v2 = kc_op_builder_set_doc_v2,
    .op_builder_set_shape_fn_v2 = kc_op_builder_set_shape_fn_v2,
    .shape_ctx_get_data = kc_shape_ctx_get_data,
    .xcall_register_v2 = kc_xcall_register_v2,
    .xcall_status_get_user = kc_xcall_status_get_user,
    .any_get_func = kc_any_get_func,
    .sv_format_quoted = kc_sv_format_quoted,
    .device_get_count = kc_device_get_count,
    .device_check = kc_device_check,
    .device_get_properties = kc_device_get_properties,
    .device_allocate = kc_device_allocate,
    .device_free = kc_device_free,
    .device_host_allocate = kc_device_host_allocate,
    .device_host_free = kc_device_host_free,
    .device_memcpy = kc_device_memcpy,
    .device_stream_create = kc_device_stream_create,
    .device_stream_destroy = kc_device_stream_destroy,
    .device_stream_synchronize = kc_device_stream_synchronize,
    .device_get_default_stream = kc_device_get_default_stream,
    .dltensor_copy = kc_dltensor_copy,
    .op_builder_set_gradient = kc_op_builder_set_gradient,
    .op_builder_set_jvp = kc_op_builder_set_jvp,
    .shape_fn_elementwise = kc_shape_fn_elementwise,
    .shape_fn_broadcast = kc_shape_fn_broadcast,
    .shape_fn_matmul = kc_shape_fn_matmul,
    .shape_fn_reduce = kc_shape_fn_reduce,
    .shape_fn_like_inputs = kc_shape_fn_like_inputs,
    .op_builder_create_gradient = kc_op_builder_create_gradient,
    .op_builder_set_batching = kc_op_builder_set_batching,
};

const kc_host_api* kc_plugin_get_host_api(void) { return &kc__host_api; }
