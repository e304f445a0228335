/*
 * kcall/plugin_api.h — one spelling for plugins and hosts.
 *
 * Code that includes this header calls kcall by the library's own names
 * (kc_func_create, kc_status_create, kc_op_builder_add_input_v2,
 * kc_kernel_ctx_get_input, ...), and the same source compiles unchanged
 * two ways. What the file includes picks the mode; no define is needed:
 *
 *   as a plugin   the default: a file that includes kcall/abi.h and this
 *                 header only. Each name is then a static inline function
 *                 that calls the kc_host_api entry of the same name
 *                 without its prefix (kc_func_create calls
 *                 host->func_create). The header includes only
 *                 kcall/abi.h, so the plugin links nothing of kcall: it
 *                 loads into the kcall tool, a C host and Python alike.
 *                 -DKC_BUILDING_PLUGIN, which older kcall headers needed
 *                 for this mode, still asks for it explicitly.
 *   in a host     when the host's headers (kcall/kcall.h, kcall/base.h,
 *                 ...) are included before this one, or when
 *                 KC_PLUGIN_API_HOST is defined (-DKC_PLUGIN_API_HOST: a
 *                 source shared between a plugin and a host, compiled into
 *                 the host). The header then includes kcall/kcall.h, and
 *                 the names are the library's own functions, linked from
 *                 libkcall.
 *
 * A plugin-mode file that includes a host header after this one, or that
 * defines both KC_BUILDING_PLUGIN and KC_PLUGIN_API_HOST, stops at an
 * #error. A plugin compiled in host mode calls libkcall's functions
 * without linking libkcall; kc_plugin_load (kcall/plugin.h) refuses it,
 * naming the function and saying how to build it.
 *
 * The plugin's calls go through the table given to kc_plugin_set_host. A
 * plugin whose entry point is written with KC_PLUGIN_ENTRY needs no line
 * for it: in plugin mode this header makes KC_PLUGIN_ENTRY set the table
 * before the body runs (the loader calls the entry point before init).
 * Code that shares one source between a plugin and a host puts what it
 * registers in a function of its own, which the plugin's init and the host
 * both call:
 *
 *   #include <kcall/plugin_api.h>
 *
 *   kc_status* mylib_register(void) {
 *     kc_func* f = NULL;
 *     KC_RETURN_IF_ERROR(kc_func_create(NULL, mylib_add, NULL, NULL, &f),
 *                        "creating mylib.add");
 *     kc_status* st = kc_func_registry_register(KC_SV_LIT("mylib.add"), f, 0);
 *     kc_object_release(KC_OBJECT(f));
 *     return st;
 *   }
 *
 * Every entry of kc_host_api has its name here: KC_HOST_API_FUNCTIONS
 * lists them, in the table's order, and the library checks at build time
 * that the list and the table agree (count, order and types), so an entry
 * cannot be added without it. The list's first column says how plugin mode
 * spells each entry:
 *   R, V  a call through the table (R returns its result, V nothing);
 *   A     an argument reader: the inline check of kcall/abi_helpers.h
 *         (kc_host_args_*), the table only when the check fails;
 *   M     written out below: kc_status_create and kc_status_add_context
 *         are macros (variadic, format-checked), kc_func_call releases
 *         *out_ret after a failing callee as the host's inline does;
 *   N     new in API 1.1, written out below. On a host whose table is too
 *         short for the entry (API 1.0) it never reads past the table: the
 *         _v2 builder calls do what their 1.0 forms do (the 1.0 builder also
 *         keeps the first error), set_shape_fn_v2 with data fails the
 *         builder (the op is refused at registration, naming the call),
 *         kc_xcall_register_v2 with user data runs the deleter and returns
 *         FAILED_PRECONDITION, and kc_shape_ctx_get_data and
 *         kc_xcall_status_get_user return NULL. A plugin that cannot do
 *         without them lists the features "op_builder_v2" and "user_data"
 *         in required_features, and an older host refuses to load it.
 *   S, W  new in API 1.2 (the device functions of kcall/device.h): a call
 *         through the table; on an older host, S returns UNIMPLEMENTED
 *         ("kc_device_allocate needs host API 1.2, this host offers 1.1")
 *         and W does nothing. A plugin that needs them lists the feature
 *         "device" in required_features.
 *   G     new in API 1.3 (kc_op_builder_set_gradient): on an older host it
 *         fails the builder, so that the op is refused at registration
 *         with a message saying the host is too old, rather than
 *         registered without its gradient. A plugin may instead list the
 *         feature "gradient" in required_features.
 *   B     new in API 1.4 (kc_op_builder_set_batching): on an older host,
 *         KC_OP_BATCH_NONE fails the builder ("kc_op_builder_set_batching
 *         needs host API 1.4"), so that an op that must not be batched is
 *         refused rather than batched; the other rules do nothing there
 *         (the op batches one element at a time, which is always right).
 *         A plugin may instead list the feature "batching".
 *   J     new in API 1.5 (kc_op_builder_set_jvp): on an older host it
 *         fails the builder ("kc_op_builder_set_jvp needs host API 1.5"),
 *         so that the op is refused rather than registered without its
 *         forward-mode rule. A plugin may instead list the feature "jvp".
 *   F     new in API 1.5 (the ready-made shape functions after
 *         kc_shape_fn_unchanged, and kc_op_builder_create_gradient):
 *         given to kc_op_builder_set_shape_fn_v2 on an older host, a shape
 *         function fails the builder ("kc_shape_fn_matmul needs host API
 *         1.5"); called there, each returns UNIMPLEMENTED. A plugin may
 *         instead list the feature "shape_fns".
 * Plugin mode also spells the table's system_allocator as
 * kc_allocator_system(). The inline helpers of kcall/abi_helpers.h (kc_sv,
 * kc_any_int, kc_dtype_make, kc_device_cpu, KC_RETURN_IF_ERROR, ...) are
 * the same in both modes. Functions of the library that are not in the
 * table (kc_op_call, kc_program_*, ...) exist only in host mode.
 *
 * Contracts (ownership, lifetimes, thread safety, status codes) are the
 * library functions', in their headers. Plugin mode adds one rule: the
 * table must be set before any other call, and is read without a lock
 * afterwards. The entry point sets it when the file that defines it with
 * KC_PLUGIN_ENTRY includes this header; an entry point written otherwise
 * calls kc_plugin_set_host(host) first. A call made before the table is
 * set dereferences NULL: there is no table to report the error through.
 * So a host that compiles a shared source into itself defines
 * KC_PLUGIN_API_HOST for that file (or includes kcall/kcall.h first).
 */
#ifndef KCALL_PLUGIN_API_H_
#define KCALL_PLUGIN_API_H_

#include "kcall/abi.h"

/* Every entry of kc_host_api, in order:
 * X(KIND, RETURN_TYPE, NAME, (PARAMETERS), (ARGUMENTS)); kc_NAME is its
 * spelling. KIND is explained above. */
#define KC_HOST_API_FUNCTIONS(X) \
  X(M, kc_status*, status_create, \
    (kc_status_code code, const char* fmt, ...), \
    (code, fmt, ...)) \
  X(M, kc_status*, status_add_context, \
    (kc_status* status, const char* fmt, ...), \
    (status, fmt, ...)) \
  X(R, kc_status_code, status_get_code, (const kc_status* status), (status)) \
  X(R, const char*, status_get_message, (const kc_status* status), (status)) \
  X(V, void, status_destroy, (kc_status* status), (status)) \
  X(V, void, object_retain, (kc_object* obj), (obj)) \
  X(V, void, object_release, (kc_object* obj), (obj)) \
  X(V, void, any_retain, (const kc_any* value), (value)) \
  X(V, void, any_release, (kc_any* value), (value)) \
  X(R, kc_status*, any_from_string, \
    (const kc_allocator* alloc, kc_string_view s, kc_any* out_value), \
    (alloc, s, out_value)) \
  X(R, bool, any_get_string, \
    (const kc_any* value, kc_string_view* out_view), \
    (value, out_view)) \
  X(R, kc_status*, str_create, \
    (const kc_allocator* alloc, kc_string_view s, kc_str** out_str), \
    (alloc, s, out_str)) \
  X(R, kc_status*, bytes_create, \
    (const kc_allocator* alloc, const void* data, size_t size, \
     kc_bytes** out_bytes), \
    (alloc, data, size, out_bytes)) \
  X(R, kc_status*, array_create, \
    (const kc_allocator* alloc, const kc_any* items, size_t count, \
     kc_array** out_array), \
    (alloc, items, count, out_array)) \
  X(R, size_t, array_get_size, (const kc_array* array), (array)) \
  X(R, const kc_any*, array_get_item, \
    (const kc_array* array, size_t index), \
    (array, index)) \
  X(R, kc_status*, tensor_create, \
    (const kc_allocator* alloc, const int64_t* shape, int32_t ndim, \
     DLDataType dtype, DLDevice device, kc_tensor** out_tensor), \
    (alloc, shape, ndim, dtype, device, out_tensor)) \
  X(R, const DLTensor*, tensor_get_dltensor, \
    (const kc_tensor* tensor), \
    (tensor)) \
  X(R, kc_status*, func_create, \
    (const kc_allocator* alloc, kc_packed_fn fn, void* self, \
     kc_deleter_fn self_deleter, kc_func** out_func), \
    (alloc, fn, self, self_deleter, out_func)) \
  X(M, kc_status*, func_call, \
    (const kc_func* func, const kc_any* args, int32_t nargs, kc_any* out_ret), \
    (func, args, nargs, out_ret)) \
  X(R, kc_status*, func_registry_register, \
    (kc_string_view name, kc_func* func, uint32_t flags), \
    (name, func, flags)) \
  X(R, kc_status*, func_registry_lookup, \
    (kc_string_view name, kc_func** out_func), \
    (name, out_func)) \
  X(A, kc_status*, args_check_count, \
    (const char* fn_name, int32_t nargs, int32_t min_count, \
     int32_t max_count), \
    (fn_name, nargs, min_count, max_count)) \
  X(A, kc_status*, args_get_int, \
    (const char* fn_name, const kc_any* args, int32_t nargs, int32_t index, \
     int64_t* out_value), \
    (fn_name, args, nargs, index, out_value)) \
  X(A, kc_status*, args_get_float, \
    (const char* fn_name, const kc_any* args, int32_t nargs, int32_t index, \
     double* out_value), \
    (fn_name, args, nargs, index, out_value)) \
  X(A, kc_status*, args_get_bool, \
    (const char* fn_name, const kc_any* args, int32_t nargs, int32_t index, \
     bool* out_value), \
    (fn_name, args, nargs, index, out_value)) \
  X(A, kc_status*, args_get_string, \
    (const char* fn_name, const kc_any* args, int32_t nargs, int32_t index, \
     kc_string_view* out_value), \
    (fn_name, args, nargs, index, out_value)) \
  X(A, kc_status*, args_get_func, \
    (const char* fn_name, const kc_any* args, int32_t nargs, int32_t index, \
     kc_func** out_value), \
    (fn_name, args, nargs, index, out_value)) \
  X(A, kc_status*, args_get_dltensor, \
    (const char* fn_name, const kc_any* args, int32_t nargs, int32_t index, \
     DLTensor** out_value), \
    (fn_name, args, nargs, index, out_value)) \
  X(A, kc_status*, args_get_opaque, \
    (const char* fn_name, const kc_any* args, int32_t nargs, int32_t index, \
     void** out_value), \
    (fn_name, args, nargs, index, out_value)) \
  X(R, kc_status*, op_builder_create, \
    (const char* name, kc_op_builder** out_builder), \
    (name, out_builder)) \
  X(R, kc_status*, op_builder_add_input, \
    (kc_op_builder* builder, const char* spec), \
    (builder, spec)) \
  X(R, kc_status*, op_builder_add_output, \
    (kc_op_builder* builder, const char* spec), \
    (builder, spec)) \
  X(R, kc_status*, op_builder_add_attr, \
    (kc_op_builder* builder, const char* spec), \
    (builder, spec)) \
  X(R, kc_status*, op_builder_set_flags, \
    (kc_op_builder* builder, uint32_t flags), \
    (builder, flags)) \
  X(R, kc_status*, op_builder_set_doc, \
    (kc_op_builder* builder, const char* doc), \
    (builder, doc)) \
  X(R, kc_status*, op_builder_set_shape_fn, \
    (kc_op_builder* builder, kc_shape_fn fn), \
    (builder, fn)) \
  X(V, void, op_builder_destroy, (kc_op_builder* builder), (builder)) \
  X(R, kc_status*, op_registry_register, \
    (kc_op_builder* builder, uint32_t flags), \
    (builder, flags)) \
  X(R, kc_status*, op_attrs_get_int, \
    (const kc_op_attrs* attrs, const char* name, int64_t* out_value), \
    (attrs, name, out_value)) \
  X(R, kc_status*, op_attrs_get_float, \
    (const kc_op_attrs* attrs, const char* name, double* out_value), \
    (attrs, name, out_value)) \
  X(R, kc_status*, op_attrs_get_bool, \
    (const kc_op_attrs* attrs, const char* name, bool* out_value), \
    (attrs, name, out_value)) \
  X(R, kc_status*, op_attrs_get_string, \
    (const kc_op_attrs* attrs, const char* name, kc_string_view* out_value), \
    (attrs, name, out_value)) \
  X(R, kc_status*, op_attrs_get_type, \
    (const kc_op_attrs* attrs, const char* name, DLDataType* out_value), \
    (attrs, name, out_value)) \
  X(R, kc_status*, op_attrs_get_shape, \
    (const kc_op_attrs* attrs, const char* name, int64_t* out_dims, \
     int32_t capacity, int32_t* out_rank), \
    (attrs, name, out_dims, capacity, out_rank)) \
  X(R, kc_status*, op_attrs_get_int_list, \
    (const kc_op_attrs* attrs, const char* name, int64_t* out_values, \
     int32_t capacity, int32_t* out_count), \
    (attrs, name, out_values, capacity, out_count)) \
  X(R, kc_status*, op_attrs_get_type_list, \
    (const kc_op_attrs* attrs, const char* name, DLDataType* out_values, \
     int32_t capacity, int32_t* out_count), \
    (attrs, name, out_values, capacity, out_count)) \
  X(R, kc_status*, op_attrs_get_value, \
    (const kc_op_attrs* attrs, const char* name, const kc_any** out_value), \
    (attrs, name, out_value)) \
  X(R, int32_t, shape_ctx_get_input_count, (const kc_shape_ctx* ctx), (ctx)) \
  X(R, int32_t, shape_ctx_get_output_count, (const kc_shape_ctx* ctx), (ctx)) \
  X(R, const kc_shape_handle*, shape_ctx_get_input, \
    (const kc_shape_ctx* ctx, int32_t index), \
    (ctx, index)) \
  X(R, DLDataType, shape_ctx_get_input_dtype, \
    (const kc_shape_ctx* ctx, int32_t index), \
    (ctx, index)) \
  X(R, DLDataType, shape_ctx_get_output_dtype, \
    (const kc_shape_ctx* ctx, int32_t index), \
    (ctx, index)) \
  X(R, const kc_op_attrs*, shape_ctx_get_attrs, \
    (const kc_shape_ctx* ctx), \
    (ctx)) \
  X(R, kc_status*, shape_ctx_set_output, \
    (kc_shape_ctx* ctx, int32_t index, const kc_shape_handle* shape), \
    (ctx, index, shape)) \
  X(R, kc_status*, shape_ctx_set_output_dtype, \
    (kc_shape_ctx* ctx, int32_t index, DLDataType dtype), \
    (ctx, index, dtype)) \
  X(R, int32_t, shape_handle_get_rank, \
    (const kc_shape_handle* shape), \
    (shape)) \
  X(R, int64_t, shape_handle_get_dim, \
    (const kc_shape_handle* shape, int32_t index), \
    (shape, index)) \
  X(R, kc_status*, shape_ctx_make_shape, \
    (kc_shape_ctx* ctx, int32_t rank, const int64_t* dims, \
     const kc_shape_handle** out_shape), \
    (ctx, rank, dims, out_shape)) \
  X(R, kc_status*, shape_ctx_with_rank, \
    (kc_shape_ctx* ctx, const kc_shape_handle* shape, int32_t rank, \
     const kc_shape_handle** out_shape), \
    (ctx, shape, rank, out_shape)) \
  X(R, kc_status*, shape_ctx_with_rank_at_least, \
    (kc_shape_ctx* ctx, const kc_shape_handle* shape, int32_t rank, \
     const kc_shape_handle** out_shape), \
    (ctx, shape, rank, out_shape)) \
  X(R, kc_status*, shape_ctx_with_rank_at_most, \
    (kc_shape_ctx* ctx, const kc_shape_handle* shape, int32_t rank, \
     const kc_shape_handle** out_shape), \
    (ctx, shape, rank, out_shape)) \
  X(R, kc_status*, shape_ctx_merge, \
    (kc_shape_ctx* ctx, const kc_shape_handle* a, const kc_shape_handle* b, \
     const kc_shape_handle** out_shape), \
    (ctx, a, b, out_shape)) \
  X(R, kc_status*, shape_ctx_broadcast, \
    (kc_shape_ctx* ctx, const kc_shape_handle* a, const kc_shape_handle* b, \
     const kc_shape_handle** out_shape), \
    (ctx, a, b, out_shape)) \
  X(R, kc_status*, shape_ctx_concatenate, \
    (kc_shape_ctx* ctx, const kc_shape_handle* a, const kc_shape_handle* b, \
     const kc_shape_handle** out_shape), \
    (ctx, a, b, out_shape)) \
  X(R, kc_status*, shape_ctx_subshape, \
    (kc_shape_ctx* ctx, const kc_shape_handle* shape, int32_t start, \
     int32_t end, const kc_shape_handle** out_shape), \
    (ctx, shape, start, end, out_shape)) \
  X(R, kc_status*, shape_ctx_replace_dim, \
    (kc_shape_ctx* ctx, const kc_shape_handle* shape, int32_t index, \
     int64_t dim, const kc_shape_handle** out_shape), \
    (ctx, shape, index, dim, out_shape)) \
  X(R, kc_status*, shape_ctx_merge_dim, \
    (kc_shape_ctx* ctx, int64_t a, int64_t b, int64_t* out_dim), \
    (ctx, a, b, out_dim)) \
  X(R, kc_status*, shape_ctx_add_dims, \
    (kc_shape_ctx* ctx, int64_t a, int64_t b, int64_t* out_dim), \
    (ctx, a, b, out_dim)) \
  X(R, kc_status*, shape_ctx_subtract_dims, \
    (kc_shape_ctx* ctx, int64_t a, int64_t b, int64_t* out_dim), \
    (ctx, a, b, out_dim)) \
  X(R, kc_status*, shape_ctx_multiply_dims, \
    (kc_shape_ctx* ctx, int64_t a, int64_t b, int64_t* out_dim), \
    (ctx, a, b, out_dim)) \
  X(R, kc_status*, shape_ctx_divide_dims, \
    (kc_shape_ctx* ctx, int64_t a, int64_t b, bool evenly, int64_t* out_dim), \
    (ctx, a, b, evenly, out_dim)) \
  X(R, kc_status*, shape_fn_unchanged, (kc_shape_ctx* ctx), (ctx)) \
  X(R, kc_status*, kernel_builder_create, \
    (const char* op_name, DLDeviceType device_type, \
     kc_kernel_create_fn create, kc_kernel_compute_fn compute, \
     kc_deleter_fn delete_fn, kc_kernel_builder** out_builder), \
    (op_name, device_type, create, compute, delete_fn, out_builder)) \
  X(R, kc_status*, kernel_builder_add_type_constraint, \
    (kc_kernel_builder* builder, const char* attr_name, \
     const DLDataType* dtypes, int32_t count), \
    (builder, attr_name, dtypes, count)) \
  X(R, kc_status*, kernel_builder_set_priority, \
    (kc_kernel_builder* builder, int32_t priority), \
    (builder, priority)) \
  X(R, kc_status*, kernel_builder_add_host_memory_arg, \
    (kc_kernel_builder* builder, const char* arg_name), \
    (builder, arg_name)) \
  X(R, kc_status*, kernel_builder_set_data, \
    (kc_kernel_builder* builder, void* data, kc_deleter_fn data_deleter), \
    (builder, data, data_deleter)) \
  X(V, void, kernel_builder_destroy, (kc_kernel_builder* builder), (builder)) \
  X(R, kc_status*, kernel_registry_register, \
    (kc_kernel_builder* builder), \
    (builder)) \
  X(R, const kc_op_attrs*, kernel_construct_ctx_get_attrs, \
    (const kc_kernel_construct_ctx* ctx), \
    (ctx)) \
  X(R, kc_string_view, kernel_construct_ctx_get_op_name, \
    (const kc_kernel_construct_ctx* ctx), \
    (ctx)) \
  X(R, DLDevice, kernel_construct_ctx_get_device, \
    (const kc_kernel_construct_ctx* ctx), \
    (ctx)) \
  X(R, int32_t, kernel_construct_ctx_get_input_count, \
    (const kc_kernel_construct_ctx* ctx), \
    (ctx)) \
  X(R, DLDataType, kernel_construct_ctx_get_input_dtype, \
    (const kc_kernel_construct_ctx* ctx, int32_t index), \
    (ctx, index)) \
  X(R, int32_t, kernel_construct_ctx_get_output_count, \
    (const kc_kernel_construct_ctx* ctx), \
    (ctx)) \
  X(R, DLDataType, kernel_construct_ctx_get_output_dtype, \
    (const kc_kernel_construct_ctx* ctx, int32_t index), \
    (ctx, index)) \
  X(R, void*, kernel_construct_ctx_get_data, \
    (const kc_kernel_construct_ctx* ctx), \
    (ctx)) \
  X(R, int32_t, kernel_ctx_get_input_count, (const kc_kernel_ctx* ctx), (ctx)) \
  X(R, const DLTensor*, kernel_ctx_get_input, \
    (const kc_kernel_ctx* ctx, int32_t index), \
    (ctx, index)) \
  X(R, int32_t, kernel_ctx_get_output_count, \
    (const kc_kernel_ctx* ctx), \
    (ctx)) \
  X(R, DLTensor*, kernel_ctx_get_output, \
    (const kc_kernel_ctx* ctx, int32_t index), \
    (ctx, index)) \
  X(R, kc_status*, kernel_ctx_get_input_range, \
    (const kc_kernel_ctx* ctx, const char* arg_name, int32_t* out_start, \
     int32_t* out_stop), \
    (ctx, arg_name, out_start, out_stop)) \
  X(R, kc_status*, kernel_ctx_allocate_output, \
    (kc_kernel_ctx* ctx, int32_t index, const int64_t* shape, int32_t ndim, \
     DLTensor** out_tensor), \
    (ctx, index, shape, ndim, out_tensor)) \
  X(R, kc_status*, kernel_ctx_allocate_temp, \
    (kc_kernel_ctx* ctx, size_t size, size_t alignment, void** out_ptr), \
    (ctx, size, alignment, out_ptr)) \
  X(V, void, kernel_ctx_set_status, \
    (kc_kernel_ctx* ctx, kc_status* status), \
    (ctx, status)) \
  X(R, kc_thread_pool*, kernel_ctx_get_thread_pool, \
    (const kc_kernel_ctx* ctx), \
    (ctx)) \
  X(R, void*, kernel_ctx_get_stream, (const kc_kernel_ctx* ctx), (ctx)) \
  X(R, DLDevice, kernel_ctx_get_device, (const kc_kernel_ctx* ctx), (ctx)) \
  X(R, const kc_op_attrs*, kernel_ctx_get_attrs, \
    (const kc_kernel_ctx* ctx), \
    (ctx)) \
  X(R, kc_thread_pool*, thread_pool_get_default, (void), ()) \
  X(R, int32_t, thread_pool_get_size, (const kc_thread_pool* pool), (pool)) \
  X(R, kc_status*, thread_pool_schedule, \
    (kc_thread_pool* pool, const kc_closure* closure), \
    (pool, closure)) \
  X(R, kc_status*, thread_pool_schedule_with_hint, \
    (kc_thread_pool* pool, const kc_closure* closure, int32_t start, \
     int32_t limit), \
    (pool, closure, start, limit)) \
  X(V, void, thread_pool_parallel_for, \
    (kc_thread_pool* pool, int64_t total, int64_t cost_per_unit, \
     kc_range_fn fn, void* ctx), \
    (pool, total, cost_per_unit, fn, ctx)) \
  X(V, void, thread_pool_parallel_for_with_worker_id, \
    (kc_thread_pool* pool, int64_t total, int64_t cost_per_unit, \
     kc_range_worker_fn fn, void* ctx), \
    (pool, total, cost_per_unit, fn, ctx)) \
  X(R, kc_status*, xcall_register, \
    (kc_string_view name, kc_platform platform, kc_xcall_api api, \
     void (*fn)(void), uint32_t flags), \
    (name, platform, api, fn, flags)) \
  X(R, kc_status*, xcall_register_typed, \
    (kc_string_view name, kc_platform platform, \
     const kc_xcall_signature* signature, kc_xcall_handler_fn fn, void* user, \
     kc_deleter_fn user_deleter, uint32_t flags), \
    (name, platform, signature, fn, user, user_deleter, flags)) \
  X(V, void, xcall_status_set_failure, \
    (kc_xcall_status* status, const char* message, size_t size), \
    (status, message, size)) \
  X(V, void, xcall_status_set_success, (kc_xcall_status* status), (status)) \
  X(R, const kc_attr*, attr_dict_lookup, \
    (const kc_attr_dict* dict, kc_string_view name), \
    (dict, name)) \
  X(R, kc_status*, xcall_register_xla_ffi, \
    (kc_string_view name, kc_platform platform, \
     const kc_xla_ffi_handlers* handlers, uint32_t flags), \
    (name, platform, handlers, flags)) \
  X(R, kc_status*, xcall_register_xla_ffi_handler, \
    (kc_string_view name, kc_platform platform, kc_xla_ffi_handler_fn execute, \
     uint32_t flags), \
    (name, platform, execute, flags)) \
  X(R, kc_status*, xla_ffi_type_register, \
    (kc_string_view name, void* type_id, const void* type_info), \
    (name, type_id, type_info)) \
  X(R, const void*, xla_ffi_get_api, (void), ()) \
  X(N, void, op_builder_add_input_v2, \
    (kc_op_builder* builder, const char* spec), \
    (builder, spec)) \
  X(N, void, op_builder_add_output_v2, \
    (kc_op_builder* builder, const char* spec), \
    (builder, spec)) \
  X(N, void, op_builder_add_attr_v2, \
    (kc_op_builder* builder, const char* spec), \
    (builder, spec)) \
  X(N, void, op_builder_set_flags_v2, \
    (kc_op_builder* builder, uint32_t flags), \
    (builder, flags)) \
  X(N, void, op_builder_set_doc_v2, \
    (kc_op_builder* builder, const char* doc), \
    (builder, doc)) \
  X(N, void, op_builder_set_shape_fn_v2, \
    (kc_op_builder* builder, kc_shape_fn fn, void* data, \
     kc_deleter_fn data_deleter), \
    (builder, fn, data, data_deleter)) \
  X(N, void*, shape_ctx_get_data, (const kc_shape_ctx* ctx), (ctx)) \
  X(N, kc_status*, xcall_register_v2, \
    (kc_string_view name, kc_platform platform, kc_xcall_api api, \
     void (*fn)(void), void* user, kc_deleter_fn user_deleter, \
     uint32_t flags), \
    (name, platform, api, fn, user, user_deleter, flags)) \
  X(N, void*, xcall_status_get_user, \
    (const kc_xcall_status* status), \
    (status)) \
  X(N, bool, any_get_func, (const kc_any* value, kc_func** out_func), \
    (value, out_func)) \
  X(N, size_t, sv_format_quoted, \
    (kc_string_view text, char* buf, size_t cap), (text, buf, cap)) \
  X(S, kc_status*, device_get_count, \
    (DLDeviceType type, int32_t* out_count), (type, out_count)) \
  X(S, kc_status*, device_check, (DLDevice device), (device)) \
  X(S, kc_status*, device_get_properties, \
    (DLDevice device, kc_device_properties* out), (device, out)) \
  X(S, kc_status*, device_allocate, \
    (DLDevice device, size_t bytes, void* stream, void** out_ptr), \
    (device, bytes, stream, out_ptr)) \
  X(S, kc_status*, device_free, (DLDevice device, void* ptr, void* stream), \
    (device, ptr, stream)) \
  X(S, kc_status*, device_host_allocate, \
    (DLDevice device, size_t bytes, void** out_ptr), (device, bytes, out_ptr)) \
  X(W, void, device_host_free, (DLDevice device, void* ptr), (device, ptr)) \
  X(S, kc_status*, device_memcpy, \
    (DLDevice device, void* dst, const void* src, size_t bytes, \
     kc_memcpy_kind kind, void* stream), \
    (device, dst, src, bytes, kind, stream)) \
  X(S, kc_status*, device_stream_create, (DLDevice device, void** out_stream), \
    (device, out_stream)) \
  X(W, void, device_stream_destroy, (DLDevice device, void* stream), \
    (device, stream)) \
  X(S, kc_status*, device_stream_synchronize, (DLDevice device, void* stream), \
    (device, stream)) \
  X(S, kc_status*, device_get_default_stream, \
    (DLDevice device, void** out_stream), (device, out_stream)) \
  X(S, kc_status*, dltensor_copy, \
    (const DLTensor* from, const DLTensor* to, void* stream), \
    (from, to, stream)) \
  X(G, void, op_builder_set_gradient, \
    (kc_op_builder* builder, const char* spec), (builder, spec)) \
  X(B, void, op_builder_set_batching, \
    (kc_op_builder* builder, kc_op_batching rule), (builder, rule)) \
  X(J, void, op_builder_set_jvp, \
    (kc_op_builder* builder, const char* spec), (builder, spec)) \
  X(F, kc_status*, shape_fn_elementwise, (kc_shape_ctx* ctx), (ctx)) \
  X(F, kc_status*, shape_fn_broadcast, (kc_shape_ctx* ctx), (ctx)) \
  X(F, kc_status*, shape_fn_matmul, (kc_shape_ctx* ctx), (ctx)) \
  X(F, kc_status*, shape_fn_reduce, (kc_shape_ctx* ctx), (ctx)) \
  X(F, kc_status*, shape_fn_like_inputs, (kc_shape_ctx* ctx), (ctx)) \
  X(F, kc_status*, op_builder_create_gradient, \
    (const char* op_name, kc_op_builder** out_builder), (op_name, out_builder))

/* The mode (see the top of this file): plugin mode unless the host's
 * headers came first or KC_PLUGIN_API_HOST asks for host mode;
 * KC_BUILDING_PLUGIN asks for plugin mode whatever came first. */
#if defined(KC_BUILDING_PLUGIN) && defined(KC_PLUGIN_API_HOST)
#error "kcall/plugin_api.h: KC_BUILDING_PLUGIN (plugin mode) and KC_PLUGIN_API_HOST (host mode) are both defined: a plugin defines neither (plugin mode is the default), a host that compiles a plugin's source in defines KC_PLUGIN_API_HOST"
#endif
#if defined(KC_BUILDING_PLUGIN) || \
    (!defined(KC_PLUGIN_API_HOST) && !defined(KCALL_BASE_H_))
#define KC__PLUGIN_API_PLUGIN_MODE 1
#endif

#if defined(KC__PLUGIN_API_PLUGIN_MODE)

/* ---- plugin mode ------------------------------------------------------- */

#if defined(KCALL_BASE_H_)
#error "kcall/plugin_api.h in plugin mode (KC_BUILDING_PLUGIN is defined) cannot be combined with the host's headers (kcall/kcall.h, kcall/base.h, ...): a plugin includes kcall/abi.h and kcall/plugin_api.h only"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The host's table. One per shared object: a weak, hidden definition that
 * every translation unit including this header shares, and that no other
 * shared object sees. */
extern const kc_host_api* kc__plugin_host;
__attribute__((weak, visibility("hidden"))) const kc_host_api*
    kc__plugin_host = 0;

/* Sets the table every kc_* call of this shared object goes through. Call
 * it before any other (KC_PLUGIN_ENTRY does); the host hands every plugin
 * the same table, so calling it again is harmless. */
static inline void kc_plugin_set_host(const kc_host_api* host) {
  kc__plugin_host = host;
}

/* The table set by kc_plugin_set_host: to read api_minor, features or
 * KC_STRUCT_HAS. */
static inline const kc_host_api* kc_plugin_get_host(void) {
  return kc__plugin_host;
}

/* The entry point, setting the table before its body runs. */
#undef KC_PLUGIN_ENTRY
#define KC_PLUGIN_ENTRY(host_param)                                        \
  static const kc_plugin_info* kc__plugin_entry_body(const kc_host_api*);  \
  KC_PLUGIN_EXPORT const kc_plugin_info* KC_PLUGIN_ENTRY_NAME(              \
      const kc_host_api* kc__host) {                                       \
    kc_plugin_set_host(kc__host);                                          \
    return kc__plugin_entry_body(kc__host);                                \
  }                                                                        \
  static const kc_plugin_info* kc__plugin_entry_body(                      \
      const kc_host_api* host_param)

static inline const kc_allocator* kc_allocator_system(void) {
  return kc__plugin_host->system_allocator;
}

#define KC__PLUGIN_UNPAREN(...) __VA_ARGS__
#define KC__PLUGIN_FN_R(ret, name, params, args) \
  static inline ret kc_##name params { return kc__plugin_host->name args; }
#define KC__PLUGIN_FN_V(ret, name, params, args) \
  static inline void kc_##name params { kc__plugin_host->name args; }
#define KC__PLUGIN_FN_A(ret, name, params, args)                  \
  static inline ret kc_##name params {                            \
    return kc_host_##name(kc__plugin_host, KC__PLUGIN_UNPAREN args); \
  }
#define KC__PLUGIN_FN_M(ret, name, params, args)
#define KC__PLUGIN_FN_N(ret, name, params, args)
#define KC__PLUGIN_FN_S(ret, name, params, args)
#define KC__PLUGIN_FN_W(ret, name, params, args)
#define KC__PLUGIN_FN_G(ret, name, params, args)
#define KC__PLUGIN_FN_B(ret, name, params, args)
#define KC__PLUGIN_FN_J(ret, name, params, args)
#define KC__PLUGIN_FN_F(ret, name, params, args)
#define KC__PLUGIN_FN(kind, ret, name, params, args) \
  KC__PLUGIN_FN_##kind(ret, name, params, args)
KC_HOST_API_FUNCTIONS(KC__PLUGIN_FN)
#undef KC__PLUGIN_FN
#undef KC__PLUGIN_FN_R
#undef KC__PLUGIN_FN_V
#undef KC__PLUGIN_FN_A
#undef KC__PLUGIN_FN_M
#undef KC__PLUGIN_FN_N
#undef KC__PLUGIN_FN_S
#undef KC__PLUGIN_FN_W
#undef KC__PLUGIN_FN_G
#undef KC__PLUGIN_FN_B
#undef KC__PLUGIN_FN_J
#undef KC__PLUGIN_FN_F
#undef KC__PLUGIN_UNPAREN

/* ---- M: variadic, and the call ------------------------------------------ */

/* Never called: lets the compiler check a format against its arguments. */
static inline void kc__plugin_format(const char* fmt, ...) KC_PRINTF(1, 2);
static inline void kc__plugin_format(const char* fmt, ...) { (void)fmt; }

/* The table's entries are variadic, so these are macros; each evaluates
 * its arguments once. */
#define kc_status_create(code, ...)                  \
  ((void)(0 ? kc__plugin_format(__VA_ARGS__) : (void)0), \
   kc__plugin_host->status_create((code), __VA_ARGS__))
#define kc_status_add_context(status, ...)           \
  ((void)(0 ? kc__plugin_format(__VA_ARGS__) : (void)0), \
   kc__plugin_host->status_add_context((status), __VA_ARGS__))

static inline kc_status* kc_func_call(const kc_func* func, const kc_any* args,
                                      int32_t nargs, kc_any* out_ret) {
  kc_status* st = kc__plugin_host->func_call(func, args, nargs, out_ret);
  if (st && out_ret) kc__plugin_host->any_release(out_ret);
  return st;
}

/* ---- N: API 1.1 --------------------------------------------------------- */

#define KC__PLUGIN_HAS(entry) KC_STRUCT_HAS(kc__plugin_host, kc_host_api, entry)

#define KC__PLUGIN_BUILDER_V2(name, type, arg)                              \
  static inline void kc_op_builder_##name##_v2(kc_op_builder* builder,      \
                                               type arg) {                  \
    if (KC__PLUGIN_HAS(op_builder_##name##_v2)) {                           \
      kc__plugin_host->op_builder_##name##_v2(builder, arg);                \
    } else {                                                                \
      kc__plugin_host->status_destroy(                                      \
          kc__plugin_host->op_builder_##name(builder, arg));                \
    }                                                                       \
  }
KC__PLUGIN_BUILDER_V2(add_input, const char*, spec)
KC__PLUGIN_BUILDER_V2(add_output, const char*, spec)
KC__PLUGIN_BUILDER_V2(add_attr, const char*, spec)
KC__PLUGIN_BUILDER_V2(set_flags, uint32_t, flags)
KC__PLUGIN_BUILDER_V2(set_doc, const char*, doc)
#undef KC__PLUGIN_BUILDER_V2

/* The F wrappers (API 1.5), defined below. */
static inline kc_status* kc_shape_fn_elementwise(kc_shape_ctx* ctx);
static inline kc_status* kc_shape_fn_broadcast(kc_shape_ctx* ctx);
static inline kc_status* kc_shape_fn_matmul(kc_shape_ctx* ctx);
static inline kc_status* kc_shape_fn_reduce(kc_shape_ctx* ctx);
static inline kc_status* kc_shape_fn_like_inputs(kc_shape_ctx* ctx);

static inline void kc_op_builder_set_shape_fn_v2(kc_op_builder* builder,
                                                 kc_shape_fn fn, void* data,
                                                 kc_deleter_fn data_deleter) {
  const kc_host_api* host = kc__plugin_host;
  /* The host's ready-made shape functions rather than this file's
   * wrappers of them: the host recognises its own, whose ops are symbolic
   * (op.h, "Symbolic dims"). A host too old for one fails the builder, so
   * that the op is refused, not registered with a shape function that
   * fails every call. */
  if (fn == kc_shape_fn_unchanged) fn = host->shape_fn_unchanged;
  const char* missing = NULL;
#define KC__PLUGIN_HOST_SHAPE_FN(name)                                      \
  if (fn == kc_##name) {                                                    \
    if (KC__PLUGIN_HAS(name)) {                                             \
      fn = host->name;                                                      \
    } else {                                                                \
      missing = "(kc_" #name " needs host API 1.5)";                        \
    }                                                                       \
  }
  KC__PLUGIN_HOST_SHAPE_FN(shape_fn_elementwise)
  KC__PLUGIN_HOST_SHAPE_FN(shape_fn_broadcast)
  KC__PLUGIN_HOST_SHAPE_FN(shape_fn_matmul)
  KC__PLUGIN_HOST_SHAPE_FN(shape_fn_reduce)
  KC__PLUGIN_HOST_SHAPE_FN(shape_fn_like_inputs)
#undef KC__PLUGIN_HOST_SHAPE_FN
  if (missing) {
    if (data_deleter) data_deleter(data);
    host->status_destroy(host->op_builder_add_attr(builder, missing));
    return;
  }
  if (KC__PLUGIN_HAS(op_builder_set_shape_fn_v2)) {
    host->op_builder_set_shape_fn_v2(builder, fn, data, data_deleter);
  } else if (!data && !data_deleter) {
    host->status_destroy(host->op_builder_set_shape_fn(builder, fn));
  } else {
    /* An API 1.0 builder cannot hold the data: fail it with a spec that
     * says why (its column 1 is an error), so that the op is refused. */
    if (data_deleter) data_deleter(data);
    host->status_destroy(host->op_builder_add_attr(
        builder, "(kc_op_builder_set_shape_fn_v2 with data needs host API "
                 "1.1)"));
  }
}

static inline void* kc_shape_ctx_get_data(const kc_shape_ctx* ctx) {
  return KC__PLUGIN_HAS(shape_ctx_get_data)
             ? kc__plugin_host->shape_ctx_get_data(ctx)
             : 0;
}

static inline kc_status* kc_xcall_register_v2(
    kc_string_view name, kc_platform platform, kc_xcall_api api,
    void (*fn)(void), void* user, kc_deleter_fn user_deleter,
    uint32_t flags) {
  const kc_host_api* host = kc__plugin_host;
  if (KC__PLUGIN_HAS(xcall_register_v2)) {
    return host->xcall_register_v2(name, platform, api, fn, user,
                                   user_deleter, flags);
  }
  if (!user && !user_deleter) {
    return host->xcall_register(name, platform, api, fn, flags);
  }
  if (user_deleter) user_deleter(user);
  return host->status_create(KC_FAILED_PRECONDITION,
                             "registering custom-call target '%.*s': user "
                             "data needs host API 1.1, this host offers "
                             "%u.%u",
                             (int)name.size, name.data ? name.data : "",
                             host->api_major, host->api_minor);
}

static inline void* kc_xcall_status_get_user(const kc_xcall_status* status) {
  return KC__PLUGIN_HAS(xcall_status_get_user)
             ? kc__plugin_host->xcall_status_get_user(status)
             : 0;
}

/* On an API 1.0 host: read from the value itself (a function's kc_any
 * holds the object in its payload), and quote the first 80 bytes without
 * the escapes. */
static inline bool kc_any_get_func(const kc_any* value, kc_func** out_func) {
  if (KC__PLUGIN_HAS(any_get_func)) return kc__plugin_host->any_get_func(value, out_func);
  if (!value || !out_func || value->type_index != KC_TYPE_FUNC) return false;
  *out_func = (kc_func*)(void*)value->u.v_obj;
  return true;
}

static inline size_t kc_sv_format_quoted(kc_string_view text, char* buf, size_t cap) {
  if (KC__PLUGIN_HAS(sv_format_quoted)) {
    return kc__plugin_host->sv_format_quoted(text, buf, cap);
  }
  size_t shown = text.data ? (text.size > 80 ? 80 : text.size) : 0;
  size_t len = 0;
  for (size_t i = 0; i < shown + 2; ++i, ++len) {
    char c = i == 0 || i == shown + 1 ? '\'' : text.data[i - 1];
    if (len + 1 < cap) buf[len] = c;
  }
  if (cap) buf[len < cap ? len : cap - 1] = '\0';
  return len;
}

/* ---- S, W: API 1.2 ------------------------------------------------------ */

#define KC__PLUGIN_FN2_R(ret, name, params, args)
#define KC__PLUGIN_FN2_V(ret, name, params, args)
#define KC__PLUGIN_FN2_A(ret, name, params, args)
#define KC__PLUGIN_FN2_M(ret, name, params, args)
#define KC__PLUGIN_FN2_N(ret, name, params, args)
#define KC__PLUGIN_FN2_S(ret, name, params, args)                           \
  static inline ret kc_##name params {                                      \
    if (KC__PLUGIN_HAS(name)) return kc__plugin_host->name args;            \
    return kc__plugin_host->status_create(                                  \
        KC_UNIMPLEMENTED, "kc_" #name " needs host API 1.2, this host offers " \
        "%u.%u", kc__plugin_host->api_major, kc__plugin_host->api_minor);   \
  }
#define KC__PLUGIN_FN2_W(ret, name, params, args)                           \
  static inline void kc_##name params {                                     \
    if (KC__PLUGIN_HAS(name)) kc__plugin_host->name args;                   \
  }
#define KC__PLUGIN_FN2_G(ret, name, params, args)
#define KC__PLUGIN_FN2_B(ret, name, params, args)
#define KC__PLUGIN_FN2_J(ret, name, params, args)
#define KC__PLUGIN_FN2_F(ret, name, params, args)                           \
  static inline ret kc_##name params {                                      \
    if (KC__PLUGIN_HAS(name)) return kc__plugin_host->name args;            \
    return kc__plugin_host->status_create(                                  \
        KC_UNIMPLEMENTED, "kc_" #name " needs host API 1.5, this host offers " \
        "%u.%u", kc__plugin_host->api_major, kc__plugin_host->api_minor);   \
  }
#define KC__PLUGIN_FN2(kind, ret, name, params, args) \
  KC__PLUGIN_FN2_##kind(ret, name, params, args)
KC_HOST_API_FUNCTIONS(KC__PLUGIN_FN2)
#undef KC__PLUGIN_FN2
#undef KC__PLUGIN_FN2_R
#undef KC__PLUGIN_FN2_V
#undef KC__PLUGIN_FN2_A
#undef KC__PLUGIN_FN2_M
#undef KC__PLUGIN_FN2_N
#undef KC__PLUGIN_FN2_S
#undef KC__PLUGIN_FN2_W
#undef KC__PLUGIN_FN2_G
#undef KC__PLUGIN_FN2_B
#undef KC__PLUGIN_FN2_J
#undef KC__PLUGIN_FN2_F

/* ---- G: API 1.3 ------------------------------------------------------ */

static inline void kc_op_builder_set_gradient(kc_op_builder* builder,
                                              const char* spec) {
  const kc_host_api* host = kc__plugin_host;
  if (KC__PLUGIN_HAS(op_builder_set_gradient)) {
    host->op_builder_set_gradient(builder, spec);
  } else {
    /* Fail the builder with a spec that says why (column 1 is an error),
     * so that the op is refused, not registered without its gradient. */
    host->status_destroy(host->op_builder_add_attr(
        builder, "(kc_op_builder_set_gradient needs host API 1.3)"));
  }
}

/* ---- B: API 1.4 ------------------------------------------------------ */

static inline void kc_op_builder_set_batching(kc_op_builder* builder,
                                              kc_op_batching rule) {
  const kc_host_api* host = kc__plugin_host;
  if (KC__PLUGIN_HAS(op_builder_set_batching)) {
    host->op_builder_set_batching(builder, rule);
  } else if (rule != KC_OP_BATCH_SEQUENTIAL && rule != KC_OP_BATCH_ELEMENTWISE) {
    /* A refusal the host cannot honour fails the builder (column 1 is an
     * error), so that the op is refused, not batched. */
    host->status_destroy(host->op_builder_add_attr(
        builder, "(kc_op_builder_set_batching needs host API 1.4)"));
  }
}

/* ---- J: API 1.5 ------------------------------------------------------ */

static inline void kc_op_builder_set_jvp(kc_op_builder* builder,
                                         const char* spec) {
  const kc_host_api* host = kc__plugin_host;
  if (KC__PLUGIN_HAS(op_builder_set_jvp)) {
    host->op_builder_set_jvp(builder, spec);
  } else {
    /* Fail the builder (column 1 is an error), so that the op is refused,
     * not registered without its forward-mode rule. */
    host->status_destroy(host->op_builder_add_attr(
        builder, "(kc_op_builder_set_jvp needs host API 1.5)"));
  }
}

#undef KC__PLUGIN_HAS

#ifdef __cplusplus
} /* extern "C" */
#endif

#else /* !KC__PLUGIN_API_PLUGIN_MODE */

/* ---- host mode ----------------------------------------------------------- */

#include "kcall/kcall.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Does nothing: a host calls the library directly. */
static inline void kc_plugin_set_host(const kc_host_api* host) { (void)host; }

/* The library's table (kc_plugin_get_host_api). */
static inline const kc_host_api* kc_plugin_get_host(void) {
  return kc_plugin_get_host_api();
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KC__PLUGIN_API_PLUGIN_MODE */

#endif /* KCALL_PLUGIN_API_H_ */
