/*
 * abi/kcall_abi_h.c — every type of kcall/abi.h, in a shared object of its
 * own, for the ABI check (make abi-check, docs/abi.md).
 *
 * abi.h is the plugin ABI, but it is a header: nothing in libkcall's debug
 * information is bound to carry all of its types (a type no exported
 * function reaches is left out), and a plugin compiles it into itself.
 * This library exports one function per type, taking a pointer to it, so
 * that abidw records each type with its full layout and abidiff compares
 * each on its own: a change to a type shows up as a change to the function
 * named after it. Appending a type to the list is an addition, which the
 * check allows; removing one, or changing its layout, fails it.
 *
 * tests/abi/check_types_listed.sh checks that the list names every type
 * abi.h declares (structs, enums, opaque handles, function types), and
 * every type of kcall/abi_helpers.h, which abi.h includes (kc_func_entry,
 * which plugins compile into their tables of functions).
 */
#include <kcall/abi.h>

#define KC_ABI_H_TYPES(X)                                                     \
  /* DLPack 1.x */                                                            \
  X(DLPackVersion)                                                            \
  X(DLDeviceType)                                                             \
  X(DLDevice)                                                                 \
  X(DLDataTypeCode)                                                           \
  X(DLDataType)                                                               \
  X(DLTensor)                                                                 \
  X(DLManagedTensorVersioned)                                                 \
  /* status, strings, allocators */                                           \
  X(kc_status_code)                                                           \
  X(kc_status)                                                                \
  X(kc_string_view)                                                           \
  X(kc_allocator)                                                             \
  /* values and objects */                                                    \
  X(kc_type_index)                                                            \
  X(kc_object)                                                                \
  X(kc_any)                                                                   \
  X(kc_str)                                                                   \
  X(kc_bytes)                                                                 \
  X(kc_array)                                                                 \
  X(kc_tensor)                                                                \
  X(kc_func)                                                                  \
  X(kc_thread_pool)                                                           \
  /* packed functions */                                                      \
  X(kc_packed_fn)                                                             \
  X(kc_deleter_fn)                                                            \
  X(kc_func_prefix)                                                           \
  X(kc_func_entry)                                                            \
  /* devices */                                                               \
  X(kc_memcpy_kind)                                                           \
  X(kc_device_properties)                                                     \
  /* custom calls */                                                          \
  X(kc_platform)                                                              \
  X(kc_xcall_api)                                                             \
  X(kc_xcall_status)                                                          \
  X(kc_xcall_cpu_fn)                                                          \
  X(kc_xcall_cpu_status_fn)                                                   \
  X(kc_xcall_cpu_unified_fn)                                                  \
  X(kc_xcall_gpu_fn)                                                          \
  X(kc_xcall_gpu_status_fn)                                                   \
  X(kc_attr_type)                                                             \
  X(kc_attr)                                                                  \
  X(kc_attr_dict)                                                             \
  X(kc_xcall_stage)                                                           \
  X(kc_xcall_frame)                                                           \
  X(kc_xcall_handler_fn)                                                      \
  X(kc_xcall_buffer_spec)                                                     \
  X(kc_xcall_attr_spec)                                                       \
  X(kc_xcall_signature)                                                       \
  X(kc_xla_ffi_handler_fn)                                                    \
  X(kc_xla_ffi_handlers)                                                      \
  /* ops, kernels, the thread pool */                                         \
  X(kc_op)                                                                    \
  X(kc_op_builder)                                                            \
  X(kc_op_attrs)                                                              \
  X(kc_op_batching)                                                           \
  X(kc_shape_handle)                                                          \
  X(kc_shape_ctx)                                                             \
  X(kc_kernel_builder)                                                        \
  X(kc_kernel_construct_ctx)                                                  \
  X(kc_kernel_ctx)                                                            \
  X(kc_shape_fn)                                                              \
  X(kc_kernel_create_fn)                                                      \
  X(kc_kernel_compute_fn)                                                     \
  X(kc_range_fn)                                                              \
  X(kc_range_worker_fn)                                                       \
  X(kc_closure)                                                               \
  /* the host table and the entry point */                                    \
  X(kc_host_api)                                                              \
  X(kc_plugin_info)                                                           \
  X(kc_plugin_entry_fn)

/* kc_abi_h_TYPE(TYPE*): does nothing; it exists for its parameter's type. */
#define KC__ABI_H_USE(type)                                                   \
  KC_API void kc_abi_h_##type(type* value);                                   \
  void kc_abi_h_##type(type* value) { (void)value; }
KC_ABI_H_TYPES(KC__ABI_H_USE)
#undef KC__ABI_H_USE
