/*
 * src/plugin/abi_layout.c — the frozen layouts: every struct that crosses
 * the plugin boundary (kcall/abi.h) or the library's (the other public
 * headers), with the values of the enums and flags they carry, as
 * compile-time assertions. A plugin or program compiled against an older
 * header relies on each of these numbers; a change that moves one fails
 * the build here, naming the field. (make abi-check compares the same with
 * the recorded ABI, docs/abi.md.)
 *
 *   KC__SIZE(T, size, align)       T is frozen whole: no field may be added
 *                                  (it is embedded, in arrays, or by value)
 *   KC__GROWS(T, size, align)      T starts with struct_size and may grow at
 *                                  its end: `size` is what it shipped with,
 *                                  sizeof(T) may only be larger
 *   KC__FIELD(T, field, offset, size)   every shipped field, in bytes
 *   KC__VALUE(name, value)         an enumerator or flag
 *
 * When a field is appended to a growable struct, its KC__FIELD line is
 * added when its API version ships, inside `#if KC_API_VERSION_MINOR >= N`
 * for abi.h's structs, so that this file still compiles against the
 * frozen headers of older versions (tests/abi compiles it against
 * tests/abi/v1.0). A line here is never edited to make a build pass: a
 * failure means the change breaks every plugin or program built before it.
 *
 * The numbers are those of 64-bit targets (LP64), the only ones kcall is
 * built for. The file is C11 and C++ at once: tests/abi/abi_layout_cpp.cpp
 * compiles it as C++, to check that a C++ compiler sees the same layouts
 * (and that the headers are extern "C"-safe). With KC_ABI_LAYOUT_PLUGIN_ONLY
 * it checks abi.h's part alone, against abi.h alone.
 */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#ifdef KC_ABI_LAYOUT_PLUGIN_ONLY
#include "kcall/abi.h"
#else
#include "kcall/kcall.h"
#endif

#if UINTPTR_MAX != UINT64_MAX || SIZE_MAX != UINT64_MAX
#error "the frozen layouts are those of 64-bit targets; kcall builds for no other"
#endif

#ifdef __cplusplus
#define KC__ALIGNOF(T) alignof(T)
#else
#define KC__ALIGNOF(T) _Alignof(T)
#endif

#define KC__SIZE(T, size, align)                                              \
  static_assert(sizeof(T) == (size) && KC__ALIGNOF(T) == (align),             \
                #T " is frozen at " #size " bytes, aligned to " #align);
#define KC__GROWS(T, size, align)                                             \
  static_assert(offsetof(T, struct_size) == 0 &&                              \
                    sizeof(((T*)0)->struct_size) == sizeof(size_t),           \
                #T " starts with size_t struct_size");                        \
  static_assert(sizeof(T) >= (size) && KC__ALIGNOF(T) == (align),             \
                #T " shipped at " #size " bytes, aligned to " #align          \
                   ", and may only grow at its end");
#define KC__FIELD(T, field, offset, size)                                     \
  static_assert(offsetof(T, field) == (offset) &&                             \
                    sizeof(((T*)0)->field) == (size),                         \
                #T "." #field " is frozen at offset " #offset ", " #size      \
                   " bytes");
#define KC__VALUE(name, value) \
  static_assert((name) == (value), #name " is frozen at " #value);

/* ======================================================================== */
/* kcall/abi.h: the plugin boundary                                         */
/* ======================================================================== */

/* ---- DLPack 1.x ---------------------------------------------------------- */

KC__SIZE(DLPackVersion, 8, 4)
KC__FIELD(DLPackVersion, major, 0, 4)
KC__FIELD(DLPackVersion, minor, 4, 4)

KC__SIZE(DLDevice, 8, 4)
KC__FIELD(DLDevice, device_type, 0, 4)
KC__FIELD(DLDevice, device_id, 4, 4)

KC__SIZE(DLDataType, 4, 2)
KC__FIELD(DLDataType, code, 0, 1)
KC__FIELD(DLDataType, bits, 1, 1)
KC__FIELD(DLDataType, lanes, 2, 2)

KC__SIZE(DLTensor, 48, 8)
KC__FIELD(DLTensor, data, 0, 8)
KC__FIELD(DLTensor, device, 8, 8)
KC__FIELD(DLTensor, ndim, 16, 4)
KC__FIELD(DLTensor, dtype, 20, 4)
KC__FIELD(DLTensor, shape, 24, 8)
KC__FIELD(DLTensor, strides, 32, 8)
KC__FIELD(DLTensor, byte_offset, 40, 8)

KC__SIZE(DLManagedTensorVersioned, 80, 8)
KC__FIELD(DLManagedTensorVersioned, version, 0, 8)
KC__FIELD(DLManagedTensorVersioned, manager_ctx, 8, 8)
KC__FIELD(DLManagedTensorVersioned, deleter, 16, 8)
KC__FIELD(DLManagedTensorVersioned, flags, 24, 8)
KC__FIELD(DLManagedTensorVersioned, dl_tensor, 32, 48)

/* ---- strings, allocators, values ----------------------------------------- */

KC__SIZE(kc_string_view, 16, 8)
KC__FIELD(kc_string_view, data, 0, 8)
KC__FIELD(kc_string_view, size, 8, 8)

KC__SIZE(kc_allocator, 16, 8)
KC__FIELD(kc_allocator, self, 0, 8)
KC__FIELD(kc_allocator, fn, 8, 8)

KC__SIZE(kc_object, 24, 8)
KC__FIELD(kc_object, ref_count, 0, 8)
KC__FIELD(kc_object, type_index, 8, 4)
KC__FIELD(kc_object, reserved, 12, 4)
KC__FIELD(kc_object, deleter, 16, 8)

KC__SIZE(kc_any, 16, 8)
KC__FIELD(kc_any, type_index, 0, 4)
KC__FIELD(kc_any, small_len, 4, 4)
KC__FIELD(kc_any, u, 8, 8)
KC__FIELD(kc_any, u.v_int64, 8, 8)
KC__FIELD(kc_any, u.v_float64, 8, 8)
KC__FIELD(kc_any, u.v_ptr, 8, 8)
KC__FIELD(kc_any, u.v_obj, 8, 8)
KC__FIELD(kc_any, u.v_c_str, 8, 8)
KC__FIELD(kc_any, u.v_dltensor, 8, 8)
KC__FIELD(kc_any, u.v_dtype, 8, 4)
KC__FIELD(kc_any, u.v_device, 8, 8)
KC__FIELD(kc_any, u.v_small, 8, 8)

/* ---- packed functions and custom calls ------------------------------------ */

KC__SIZE(kc_func_prefix, 40, 8)
KC__FIELD(kc_func_prefix, header, 0, 24)
KC__FIELD(kc_func_prefix, fn, 24, 8)
KC__FIELD(kc_func_prefix, self, 32, 8)

KC__SIZE(kc_attr_dict, 16, 8)
KC__FIELD(kc_attr_dict, count, 0, 8)
KC__FIELD(kc_attr_dict, entries, 8, 8)

KC__SIZE(kc_attr, 40, 8)
KC__FIELD(kc_attr, name, 0, 16)
KC__FIELD(kc_attr, type, 16, 4)
KC__FIELD(kc_attr, elem_type, 20, 4)
KC__FIELD(kc_attr, v, 24, 16)
KC__FIELD(kc_attr, v.b, 24, 1)
KC__FIELD(kc_attr, v.i64, 24, 8)
KC__FIELD(kc_attr, v.u64, 24, 8)
KC__FIELD(kc_attr, v.f32, 24, 4)
KC__FIELD(kc_attr, v.f64, 24, 8)
KC__FIELD(kc_attr, v.str, 24, 16)
KC__FIELD(kc_attr, v.array, 24, 16)
KC__FIELD(kc_attr, v.array.data, 24, 8)
KC__FIELD(kc_attr, v.array.count, 32, 8)
KC__FIELD(kc_attr, v.dict, 24, 16)

KC__GROWS(kc_xcall_frame, 112, 8)
KC__FIELD(kc_xcall_frame, struct_size, 0, 8)
KC__FIELD(kc_xcall_frame, stage, 8, 4)
KC__FIELD(kc_xcall_frame, num_args, 12, 4)
KC__FIELD(kc_xcall_frame, num_results, 16, 4)
KC__FIELD(kc_xcall_frame, num_attrs, 20, 4)
KC__FIELD(kc_xcall_frame, args, 24, 8)
KC__FIELD(kc_xcall_frame, results, 32, 8)
KC__FIELD(kc_xcall_frame, attrs, 40, 8)
KC__FIELD(kc_xcall_frame, state, 48, 8)
KC__FIELD(kc_xcall_frame, state_deleter, 56, 8)
KC__FIELD(kc_xcall_frame, scratch_bytes, 64, 8)
KC__FIELD(kc_xcall_frame, scratch, 72, 8)
KC__FIELD(kc_xcall_frame, thread_pool, 80, 8)
KC__FIELD(kc_xcall_frame, stream, 88, 8)
KC__FIELD(kc_xcall_frame, user, 96, 8)
KC__FIELD(kc_xcall_frame, instruction_name, 104, 8)

KC__SIZE(kc_xcall_buffer_spec, 8, 4)
KC__FIELD(kc_xcall_buffer_spec, dtype, 0, 4)
KC__FIELD(kc_xcall_buffer_spec, rank, 4, 4)

KC__SIZE(kc_xcall_attr_spec, 16, 8)
KC__FIELD(kc_xcall_attr_spec, name, 0, 8)
KC__FIELD(kc_xcall_attr_spec, type, 8, 4)
KC__FIELD(kc_xcall_attr_spec, elem_type, 12, 4)

KC__GROWS(kc_xcall_signature, 64, 8)
KC__FIELD(kc_xcall_signature, struct_size, 0, 8)
KC__FIELD(kc_xcall_signature, num_args, 8, 4)
KC__FIELD(kc_xcall_signature, args, 16, 8)
KC__FIELD(kc_xcall_signature, num_results, 24, 4)
KC__FIELD(kc_xcall_signature, results, 32, 8)
KC__FIELD(kc_xcall_signature, num_attrs, 40, 4)
KC__FIELD(kc_xcall_signature, attrs, 48, 8)
KC__FIELD(kc_xcall_signature, flags, 56, 4)

KC__GROWS(kc_xla_ffi_handlers, 40, 8)
KC__FIELD(kc_xla_ffi_handlers, struct_size, 0, 8)
KC__FIELD(kc_xla_ffi_handlers, instantiate, 8, 8)
KC__FIELD(kc_xla_ffi_handlers, prepare, 16, 8)
KC__FIELD(kc_xla_ffi_handlers, initialize, 24, 8)
KC__FIELD(kc_xla_ffi_handlers, execute, 32, 8)

/* ---- the thread pool, the entry point and the host table ----------------- */

KC__GROWS(kc_closure, 32, 8)
KC__FIELD(kc_closure, struct_size, 0, 8)
KC__FIELD(kc_closure, fn, 8, 8)
KC__FIELD(kc_closure, self, 16, 8)
KC__FIELD(kc_closure, deleter, 24, 8)

KC__SIZE(kc_func_entry, 16, 8)
KC__FIELD(kc_func_entry, name, 0, 8)
KC__FIELD(kc_func_entry, fn, 8, 8)

KC__GROWS(kc_plugin_info, 48, 8)
KC__FIELD(kc_plugin_info, struct_size, 0, 8)
KC__FIELD(kc_plugin_info, api_major, 8, 4)
KC__FIELD(kc_plugin_info, api_minor, 12, 4)
KC__FIELD(kc_plugin_info, name, 16, 8)
KC__FIELD(kc_plugin_info, version, 24, 8)
KC__FIELD(kc_plugin_info, required_features, 32, 8)
KC__FIELD(kc_plugin_info, init, 40, 8)

/* API 1.0: 115 functions after the five fixed fields. Entries appended
 * in 1.N go after the 1.0 block, under #if KC_API_VERSION_MINOR >= N. */
KC__GROWS(kc_host_api, 952, 8)
KC__FIELD(kc_host_api, struct_size, 0, 8)
KC__FIELD(kc_host_api, api_major, 8, 4)
KC__FIELD(kc_host_api, api_minor, 12, 4)
KC__FIELD(kc_host_api, features, 16, 8)
KC__FIELD(kc_host_api, system_allocator, 24, 8)
KC__FIELD(kc_host_api, status_create, 32, 8)
KC__FIELD(kc_host_api, status_add_context, 40, 8)
KC__FIELD(kc_host_api, status_get_code, 48, 8)
KC__FIELD(kc_host_api, status_get_message, 56, 8)
KC__FIELD(kc_host_api, status_destroy, 64, 8)
KC__FIELD(kc_host_api, object_retain, 72, 8)
KC__FIELD(kc_host_api, object_release, 80, 8)
KC__FIELD(kc_host_api, any_retain, 88, 8)
KC__FIELD(kc_host_api, any_release, 96, 8)
KC__FIELD(kc_host_api, any_from_string, 104, 8)
KC__FIELD(kc_host_api, any_get_string, 112, 8)
KC__FIELD(kc_host_api, str_create, 120, 8)
KC__FIELD(kc_host_api, bytes_create, 128, 8)
KC__FIELD(kc_host_api, array_create, 136, 8)
KC__FIELD(kc_host_api, array_get_size, 144, 8)
KC__FIELD(kc_host_api, array_get_item, 152, 8)
KC__FIELD(kc_host_api, tensor_create, 160, 8)
KC__FIELD(kc_host_api, tensor_get_dltensor, 168, 8)
KC__FIELD(kc_host_api, func_create, 176, 8)
KC__FIELD(kc_host_api, func_call, 184, 8)
KC__FIELD(kc_host_api, func_registry_register, 192, 8)
KC__FIELD(kc_host_api, func_registry_lookup, 200, 8)
KC__FIELD(kc_host_api, args_check_count, 208, 8)
KC__FIELD(kc_host_api, args_get_int, 216, 8)
KC__FIELD(kc_host_api, args_get_float, 224, 8)
KC__FIELD(kc_host_api, args_get_bool, 232, 8)
KC__FIELD(kc_host_api, args_get_string, 240, 8)
KC__FIELD(kc_host_api, args_get_func, 248, 8)
KC__FIELD(kc_host_api, args_get_dltensor, 256, 8)
KC__FIELD(kc_host_api, args_get_opaque, 264, 8)
KC__FIELD(kc_host_api, op_builder_create, 272, 8)
KC__FIELD(kc_host_api, op_builder_add_input, 280, 8)
KC__FIELD(kc_host_api, op_builder_add_output, 288, 8)
KC__FIELD(kc_host_api, op_builder_add_attr, 296, 8)
KC__FIELD(kc_host_api, op_builder_set_flags, 304, 8)
KC__FIELD(kc_host_api, op_builder_set_doc, 312, 8)
KC__FIELD(kc_host_api, op_builder_set_shape_fn, 320, 8)
KC__FIELD(kc_host_api, op_builder_destroy, 328, 8)
KC__FIELD(kc_host_api, op_registry_register, 336, 8)
KC__FIELD(kc_host_api, op_attrs_get_int, 344, 8)
KC__FIELD(kc_host_api, op_attrs_get_float, 352, 8)
KC__FIELD(kc_host_api, op_attrs_get_bool, 360, 8)
KC__FIELD(kc_host_api, op_attrs_get_string, 368, 8)
KC__FIELD(kc_host_api, op_attrs_get_type, 376, 8)
KC__FIELD(kc_host_api, op_attrs_get_shape, 384, 8)
KC__FIELD(kc_host_api, op_attrs_get_int_list, 392, 8)
KC__FIELD(kc_host_api, op_attrs_get_type_list, 400, 8)
KC__FIELD(kc_host_api, op_attrs_get_value, 408, 8)
KC__FIELD(kc_host_api, shape_ctx_get_input_count, 416, 8)
KC__FIELD(kc_host_api, shape_ctx_get_output_count, 424, 8)
KC__FIELD(kc_host_api, shape_ctx_get_input, 432, 8)
KC__FIELD(kc_host_api, shape_ctx_get_input_dtype, 440, 8)
KC__FIELD(kc_host_api, shape_ctx_get_output_dtype, 448, 8)
KC__FIELD(kc_host_api, shape_ctx_get_attrs, 456, 8)
KC__FIELD(kc_host_api, shape_ctx_set_output, 464, 8)
KC__FIELD(kc_host_api, shape_ctx_set_output_dtype, 472, 8)
KC__FIELD(kc_host_api, shape_handle_get_rank, 480, 8)
KC__FIELD(kc_host_api, shape_handle_get_dim, 488, 8)
KC__FIELD(kc_host_api, shape_ctx_make_shape, 496, 8)
KC__FIELD(kc_host_api, shape_ctx_with_rank, 504, 8)
KC__FIELD(kc_host_api, shape_ctx_with_rank_at_least, 512, 8)
KC__FIELD(kc_host_api, shape_ctx_with_rank_at_most, 520, 8)
KC__FIELD(kc_host_api, shape_ctx_merge, 528, 8)
KC__FIELD(kc_host_api, shape_ctx_broadcast, 536, 8)
KC__FIELD(kc_host_api, shape_ctx_concatenate, 544, 8)
KC__FIELD(kc_host_api, shape_ctx_subshape, 552, 8)
KC__FIELD(kc_host_api, shape_ctx_replace_dim, 560, 8)
KC__FIELD(kc_host_api, shape_ctx_merge_dim, 568, 8)
KC__FIELD(kc_host_api, shape_ctx_add_dims, 576, 8)
KC__FIELD(kc_host_api, shape_ctx_subtract_dims, 584, 8)
KC__FIELD(kc_host_api, shape_ctx_multiply_dims, 592, 8)
KC__FIELD(kc_host_api, shape_ctx_divide_dims, 600, 8)
KC__FIELD(kc_host_api, shape_fn_unchanged, 608, 8)
KC__FIELD(kc_host_api, kernel_builder_create, 616, 8)
KC__FIELD(kc_host_api, kernel_builder_add_type_constraint, 624, 8)
KC__FIELD(kc_host_api, kernel_builder_set_priority, 632, 8)
KC__FIELD(kc_host_api, kernel_builder_add_host_memory_arg, 640, 8)
KC__FIELD(kc_host_api, kernel_builder_set_data, 648, 8)
KC__FIELD(kc_host_api, kernel_builder_destroy, 656, 8)
KC__FIELD(kc_host_api, kernel_registry_register, 664, 8)
KC__FIELD(kc_host_api, kernel_construct_ctx_get_attrs, 672, 8)
KC__FIELD(kc_host_api, kernel_construct_ctx_get_op_name, 680, 8)
KC__FIELD(kc_host_api, kernel_construct_ctx_get_device, 688, 8)
KC__FIELD(kc_host_api, kernel_construct_ctx_get_input_count, 696, 8)
KC__FIELD(kc_host_api, kernel_construct_ctx_get_input_dtype, 704, 8)
KC__FIELD(kc_host_api, kernel_construct_ctx_get_output_count, 712, 8)
KC__FIELD(kc_host_api, kernel_construct_ctx_get_output_dtype, 720, 8)
KC__FIELD(kc_host_api, kernel_construct_ctx_get_data, 728, 8)
KC__FIELD(kc_host_api, kernel_ctx_get_input_count, 736, 8)
KC__FIELD(kc_host_api, kernel_ctx_get_input, 744, 8)
KC__FIELD(kc_host_api, kernel_ctx_get_output_count, 752, 8)
KC__FIELD(kc_host_api, kernel_ctx_get_output, 760, 8)
KC__FIELD(kc_host_api, kernel_ctx_get_input_range, 768, 8)
KC__FIELD(kc_host_api, kernel_ctx_allocate_output, 776, 8)
KC__FIELD(kc_host_api, kernel_ctx_allocate_temp, 784, 8)
KC__FIELD(kc_host_api, kernel_ctx_set_status, 792, 8)
KC__FIELD(kc_host_api, kernel_ctx_get_thread_pool, 800, 8)
KC__FIELD(kc_host_api, kernel_ctx_get_stream, 808, 8)
KC__FIELD(kc_host_api, kernel_ctx_get_device, 816, 8)
KC__FIELD(kc_host_api, kernel_ctx_get_attrs, 824, 8)
KC__FIELD(kc_host_api, thread_pool_get_default, 832, 8)
KC__FIELD(kc_host_api, thread_pool_get_size, 840, 8)
KC__FIELD(kc_host_api, thread_pool_schedule, 848, 8)
KC__FIELD(kc_host_api, thread_pool_schedule_with_hint, 856, 8)
KC__FIELD(kc_host_api, thread_pool_parallel_for, 864, 8)
KC__FIELD(kc_host_api, thread_pool_parallel_for_with_worker_id, 872, 8)
KC__FIELD(kc_host_api, xcall_register, 880, 8)
KC__FIELD(kc_host_api, xcall_register_typed, 888, 8)
KC__FIELD(kc_host_api, xcall_status_set_failure, 896, 8)
KC__FIELD(kc_host_api, xcall_status_set_success, 904, 8)
KC__FIELD(kc_host_api, attr_dict_lookup, 912, 8)
KC__FIELD(kc_host_api, xcall_register_xla_ffi, 920, 8)
KC__FIELD(kc_host_api, xcall_register_xla_ffi_handler, 928, 8)
KC__FIELD(kc_host_api, xla_ffi_type_register, 936, 8)
KC__FIELD(kc_host_api, xla_ffi_get_api, 944, 8)

/* ---- enums and flags ------------------------------------------------------ */

KC__SIZE(kc_status_code, 4, 4)
KC__VALUE(KC_OK, 0)
KC__VALUE(KC_CANCELLED, 1)
KC__VALUE(KC_UNKNOWN, 2)
KC__VALUE(KC_INVALID_ARGUMENT, 3)
KC__VALUE(KC_DEADLINE_EXCEEDED, 4)
KC__VALUE(KC_NOT_FOUND, 5)
KC__VALUE(KC_ALREADY_EXISTS, 6)
KC__VALUE(KC_PERMISSION_DENIED, 7)
KC__VALUE(KC_RESOURCE_EXHAUSTED, 8)
KC__VALUE(KC_FAILED_PRECONDITION, 9)
KC__VALUE(KC_ABORTED, 10)
KC__VALUE(KC_OUT_OF_RANGE, 11)
KC__VALUE(KC_UNIMPLEMENTED, 12)
KC__VALUE(KC_INTERNAL, 13)
KC__VALUE(KC_UNAVAILABLE, 14)
KC__VALUE(KC_DATA_LOSS, 15)
KC__VALUE(KC_UNAUTHENTICATED, 16)

KC__SIZE(kc_type_index, 4, 4)
KC__VALUE(KC_TYPE_NONE, 0)
KC__VALUE(KC_TYPE_BOOL, 1)
KC__VALUE(KC_TYPE_INT, 2)
KC__VALUE(KC_TYPE_FLOAT, 3)
KC__VALUE(KC_TYPE_OPAQUE_PTR, 4)
KC__VALUE(KC_TYPE_DTYPE, 5)
KC__VALUE(KC_TYPE_DEVICE, 6)
KC__VALUE(KC_TYPE_RAW_STR, 7)
KC__VALUE(KC_TYPE_DLTENSOR_PTR, 8)
KC__VALUE(KC_TYPE_SMALL_STR, 9)
KC__VALUE(KC_TYPE_STR, 64)
KC__VALUE(KC_TYPE_BYTES, 65)
KC__VALUE(KC_TYPE_FUNC, 66)
KC__VALUE(KC_TYPE_ARRAY, 67)
KC__VALUE(KC_TYPE_TENSOR, 68)
KC__VALUE(KC_TYPE_MODULE, 69)
KC__VALUE(KC_TYPE_OBJECT_BEGIN, 64)
KC__VALUE(KC_SMALL_STR_MAX, 7)

KC__SIZE(DLDeviceType, 4, 4)
KC__VALUE(kDLCPU, 1)
KC__VALUE(kDLCUDA, 2)
KC__VALUE(kDLCUDAHost, 3)
KC__VALUE(kDLOpenCL, 4)
KC__VALUE(kDLVulkan, 7)
KC__VALUE(kDLMetal, 8)
KC__VALUE(kDLVPI, 9)
KC__VALUE(kDLROCM, 10)
KC__VALUE(kDLROCMHost, 11)
KC__VALUE(kDLExtDev, 12)
KC__VALUE(kDLCUDAManaged, 13)
KC__VALUE(kDLOneAPI, 14)
KC__VALUE(kDLWebGPU, 15)
KC__VALUE(kDLHexagon, 16)
KC__VALUE(kDLMAIA, 17)

KC__SIZE(DLDataTypeCode, 4, 4)
KC__VALUE(kDLInt, 0)
KC__VALUE(kDLUInt, 1)
KC__VALUE(kDLFloat, 2)
KC__VALUE(kDLOpaqueHandle, 3)
KC__VALUE(kDLBfloat, 4)
KC__VALUE(kDLComplex, 5)
KC__VALUE(kDLBool, 6)
KC__VALUE(kDLFloat8_e3m4, 7)
KC__VALUE(kDLFloat8_e4m3, 8)
KC__VALUE(kDLFloat8_e4m3b11fnuz, 9)
KC__VALUE(kDLFloat8_e4m3fn, 10)
KC__VALUE(kDLFloat8_e4m3fnuz, 11)
KC__VALUE(kDLFloat8_e5m2, 12)
KC__VALUE(kDLFloat8_e5m2fnuz, 13)
KC__VALUE(kDLFloat8_e8m0fnu, 14)
KC__VALUE(kDLFloat6_e2m3fn, 15)
KC__VALUE(kDLFloat6_e3m2fn, 16)
KC__VALUE(kDLFloat4_e2m1fn, 17)
KC__VALUE(DLPACK_FLAG_BITMASK_READ_ONLY, 1)
KC__VALUE(DLPACK_FLAG_BITMASK_IS_COPIED, 2)
KC__VALUE(DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED, 4)

/* Devices: API 1.2. */
#if KC_API_VERSION_MINOR >= 2
KC__SIZE(kc_memcpy_kind, 4, 4)
KC__VALUE(KC_MEMCPY_HOST_TO_DEVICE, 1)
KC__VALUE(KC_MEMCPY_DEVICE_TO_HOST, 2)
KC__VALUE(KC_MEMCPY_DEVICE_TO_DEVICE, 3)

KC__GROWS(kc_device_properties, 328, 8)
KC__FIELD(kc_device_properties, struct_size, 0, 8)
KC__FIELD(kc_device_properties, device, 8, 8)
KC__FIELD(kc_device_properties, name, 16, 256)
KC__FIELD(kc_device_properties, compute_capability_major, 272, 4)
KC__FIELD(kc_device_properties, compute_capability_minor, 276, 4)
KC__FIELD(kc_device_properties, multiprocessor_count, 280, 4)
KC__FIELD(kc_device_properties, max_threads_per_block, 284, 4)
KC__FIELD(kc_device_properties, warp_size, 288, 4)
KC__FIELD(kc_device_properties, total_memory_bytes, 296, 8)
KC__FIELD(kc_device_properties, shared_memory_per_block_bytes, 304, 8)
KC__FIELD(kc_device_properties, driver_version, 312, 4)
KC__FIELD(kc_device_properties, runtime_version, 316, 4)
KC__FIELD(kc_device_properties, pci_bus_id, 320, 4)
KC__FIELD(kc_device_properties, pci_device_id, 324, 4)
#endif

KC__SIZE(kc_platform, 4, 4)
KC__VALUE(KC_PLATFORM_HOST, 1)
KC__VALUE(KC_PLATFORM_CUDA, 2)

KC__SIZE(kc_xcall_api, 4, 4)
KC__VALUE(KC_XCALL_API_ORIGINAL, 1)
KC__VALUE(KC_XCALL_API_STATUS_RETURNING, 2)
KC__VALUE(KC_XCALL_API_STATUS_RETURNING_UNIFIED, 3)
KC__VALUE(KC_XCALL_API_TYPED, 4)

KC__SIZE(kc_attr_type, 4, 4)
KC__VALUE(KC_ATTR_BOOL, 1)
KC__VALUE(KC_ATTR_I8, 2)
KC__VALUE(KC_ATTR_I16, 3)
KC__VALUE(KC_ATTR_I32, 4)
KC__VALUE(KC_ATTR_I64, 5)
KC__VALUE(KC_ATTR_U8, 6)
KC__VALUE(KC_ATTR_U16, 7)
KC__VALUE(KC_ATTR_U32, 8)
KC__VALUE(KC_ATTR_U64, 9)
KC__VALUE(KC_ATTR_F32, 10)
KC__VALUE(KC_ATTR_F64, 11)
KC__VALUE(KC_ATTR_STRING, 12)
KC__VALUE(KC_ATTR_ARRAY, 13)
KC__VALUE(KC_ATTR_DICT, 14)

KC__SIZE(kc_xcall_stage, 4, 4)
KC__VALUE(KC_XCALL_STAGE_INSTANTIATE, 0)
KC__VALUE(KC_XCALL_STAGE_EXECUTE, 1)

KC__VALUE(KC_API_VERSION_MAJOR, 1)
KC__VALUE(KC_REGISTER_OVERRIDE, 1)
KC__VALUE(KC_XCALL_SIG_OPEN, 1)
KC__VALUE(KC_XCALL_SIG_NO_INSTANTIATE, 2)
KC__VALUE(KC_XLA_FFI_NO_METADATA, 256)
KC__VALUE(KC_OP_COMMUTATIVE, 1)
KC__VALUE(KC_OP_AGGREGATE, 2)
KC__VALUE(KC_OP_STATEFUL, 4)
#ifdef KC_OP_SYMBOLIC_SHAPES /* a flag, not a table entry: no minor version */
KC__VALUE(KC_OP_SYMBOLIC_SHAPES, 8)
#endif
KC__VALUE(KC_DIM_UNKNOWN, -1)
KC__VALUE(KC_RANK_UNKNOWN, -1)

#ifndef KC_ABI_LAYOUT_PLUGIN_ONLY
/* ======================================================================== */
/* The other public headers: the library boundary                           */
/* ======================================================================== */

KC__GROWS(kc_alloc_stats, 64, 8)
KC__FIELD(kc_alloc_stats, struct_size, 0, 8)
KC__FIELD(kc_alloc_stats, live_blocks, 8, 8)
KC__FIELD(kc_alloc_stats, live_bytes, 16, 8)
KC__FIELD(kc_alloc_stats, peak_bytes, 24, 8)
KC__FIELD(kc_alloc_stats, total_allocs, 32, 8)
KC__FIELD(kc_alloc_stats, total_frees, 40, 8)
KC__FIELD(kc_alloc_stats, failed_allocs, 48, 8)
KC__FIELD(kc_alloc_stats, bad_frees, 56, 8)

KC__GROWS(kc_plugin_desc, 56, 8)
KC__FIELD(kc_plugin_desc, struct_size, 0, 8)
KC__FIELD(kc_plugin_desc, path, 8, 8)
KC__FIELD(kc_plugin_desc, name, 16, 8)
KC__FIELD(kc_plugin_desc, version, 24, 8)
KC__FIELD(kc_plugin_desc, built_api_major, 32, 4)
KC__FIELD(kc_plugin_desc, built_api_minor, 36, 4)
KC__FIELD(kc_plugin_desc, api_major, 40, 4)
KC__FIELD(kc_plugin_desc, api_minor, 44, 4)
KC__FIELD(kc_plugin_desc, registration_count, 48, 8)

KC__GROWS(kc_registration, 32, 8)
KC__FIELD(kc_registration, struct_size, 0, 8)
KC__FIELD(kc_registration, kind, 8, 8)
KC__FIELD(kc_registration, name, 16, 16)

KC__SIZE(kc_op_attr, 32, 8)
KC__FIELD(kc_op_attr, name, 0, 16)
KC__FIELD(kc_op_attr, value, 16, 16)

KC__GROWS(kc_op_call_options, 24, 8)
KC__FIELD(kc_op_call_options, struct_size, 0, 8)
KC__FIELD(kc_op_call_options, allocator, 8, 8)
KC__FIELD(kc_op_call_options, thread_pool, 16, 8)
KC__FIELD(kc_op_call_options, stream, 24, 8)

KC__SIZE(kc_op_output_info, 264, 8)
KC__FIELD(kc_op_output_info, dtype, 0, 4)
KC__FIELD(kc_op_output_info, rank, 4, 4)
KC__FIELD(kc_op_output_info, dims, 8, 256)

KC__GROWS(kc_op_cache_stats, 32, 8)
KC__FIELD(kc_op_cache_stats, struct_size, 0, 8)
KC__FIELD(kc_op_cache_stats, entries, 8, 8)
KC__FIELD(kc_op_cache_stats, constructions, 16, 8)
KC__FIELD(kc_op_cache_stats, reselections, 24, 8)

KC__SIZE(kc_output_operand_alias, 40, 8)
KC__FIELD(kc_output_operand_alias, output_index, 0, 8)
KC__FIELD(kc_output_operand_alias, output_index_size, 8, 8)
KC__FIELD(kc_output_operand_alias, operand, 16, 4)
KC__FIELD(kc_output_operand_alias, operand_index, 24, 8)
KC__FIELD(kc_output_operand_alias, operand_index_size, 32, 8)

KC__GROWS(kc_custom_call_desc, 104, 8)
KC__FIELD(kc_custom_call_desc, struct_size, 0, 8)
KC__FIELD(kc_custom_call_desc, target, 8, 16)
KC__FIELD(kc_custom_call_desc, operands, 24, 8)
KC__FIELD(kc_custom_call_desc, num_operands, 32, 8)
KC__FIELD(kc_custom_call_desc, result_shape, 40, 8)
KC__FIELD(kc_custom_call_desc, opaque, 48, 8)
KC__FIELD(kc_custom_call_desc, opaque_size, 56, 8)
KC__FIELD(kc_custom_call_desc, has_side_effect, 64, 1)
KC__FIELD(kc_custom_call_desc, aliases, 72, 8)
KC__FIELD(kc_custom_call_desc, num_aliases, 80, 8)
KC__FIELD(kc_custom_call_desc, schedule, 88, 4)
KC__FIELD(kc_custom_call_desc, api_version, 92, 4)
KC__FIELD(kc_custom_call_desc, attrs, 96, 8)

KC__GROWS(kc_compile_options, 24, 8)
KC__FIELD(kc_compile_options, struct_size, 0, 8)
KC__FIELD(kc_compile_options, platform, 8, 4)
KC__FIELD(kc_compile_options, thread_pool, 16, 8)

KC__GROWS(kc_executable_info, 80, 8)
KC__FIELD(kc_executable_info, struct_size, 0, 8)
KC__FIELD(kc_executable_info, num_instructions, 8, 8)
KC__FIELD(kc_executable_info, num_live_instructions, 16, 8)
KC__FIELD(kc_executable_info, num_inputs, 24, 8)
KC__FIELD(kc_executable_info, num_outputs, 32, 8)
KC__FIELD(kc_executable_info, num_buffers, 40, 8)
KC__FIELD(kc_executable_info, temp_bytes, 48, 8)
KC__FIELD(kc_executable_info, temp_bytes_unshared, 56, 8)
KC__FIELD(kc_executable_info, output_bytes, 64, 8)
KC__FIELD(kc_executable_info, peak_bytes, 72, 8)

KC__GROWS(kc_execute_options, 24, 8)
KC__FIELD(kc_execute_options, struct_size, 0, 8)
KC__FIELD(kc_execute_options, allocator, 8, 8)
KC__FIELD(kc_execute_options, instruction_ns, 16, 8)

KC__GROWS(kc_xcall_target_desc, 56, 8)
KC__FIELD(kc_xcall_target_desc, struct_size, 0, 8)
KC__FIELD(kc_xcall_target_desc, name, 8, 16)
KC__FIELD(kc_xcall_target_desc, platform, 24, 4)
KC__FIELD(kc_xcall_target_desc, api, 28, 4)
KC__FIELD(kc_xcall_target_desc, signature, 32, 8)
KC__FIELD(kc_xcall_target_desc, xla_ffi, 40, 1)
KC__FIELD(kc_xcall_target_desc, xla_ffi_api_major, 44, 4)
KC__FIELD(kc_xcall_target_desc, xla_ffi_api_minor, 48, 4)
#endif /* KC_ABI_LAYOUT_PLUGIN_ONLY */
