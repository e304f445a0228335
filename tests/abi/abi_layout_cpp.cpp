// tests/abi/abi_layout_cpp.cpp — the frozen layouts, checked by a C++
// compiler, and the C headers used from C++ against the C library.
//
// src/plugin/abi_layout.c is C11 and C++ at once; included here, each of its
// static assertions holds for C++'s view of the public headers (abi.h among
// them) as it does for C's, so a C++ plugin or program and the C library
// agree on every layout. The headers must also be extern "C"-safe: the
// calls below link against libkcall's C symbols and fail to link if a
// declaration got C++ linkage. At run time, values made by abi.h's inline
// functions compiled as C++ go through the library and back.
#include "plugin/abi_layout.c"

#include <cstdio>
#include <cstring>
#include <type_traits>

// Every struct of the ABI is a plain C struct to C++ too: standard layout
// (so offsetof and the C layout rules apply) and trivially copyable (so a
// memcpy or a struct copy is a copy).
#define KT_PLAIN(T)                                                        \
  static_assert(std::is_standard_layout<T>::value, #T " is standard layout"); \
  static_assert(std::is_trivially_copyable<T>::value,                      \
                #T " is trivially copyable");
KT_PLAIN(DLPackVersion)
KT_PLAIN(DLDevice)
KT_PLAIN(DLDataType)
KT_PLAIN(DLTensor)
KT_PLAIN(DLManagedTensorVersioned)
KT_PLAIN(kc_string_view)
KT_PLAIN(kc_allocator)
KT_PLAIN(kc_object)
KT_PLAIN(kc_any)
KT_PLAIN(kc_func_prefix)
KT_PLAIN(kc_attr_dict)
KT_PLAIN(kc_attr)
KT_PLAIN(kc_xcall_frame)
KT_PLAIN(kc_xcall_buffer_spec)
KT_PLAIN(kc_xcall_attr_spec)
KT_PLAIN(kc_xcall_signature)
KT_PLAIN(kc_xla_ffi_handlers)
KT_PLAIN(kc_closure)
KT_PLAIN(kc_func_entry)
KT_PLAIN(kc_plugin_info)
KT_PLAIN(kc_host_api)
KT_PLAIN(kc_alloc_stats)
KT_PLAIN(kc_plugin_desc)
KT_PLAIN(kc_registration)
KT_PLAIN(kc_op_attr)
KT_PLAIN(kc_op_call_options)
KT_PLAIN(kc_op_output_info)
KT_PLAIN(kc_op_cache_stats)
KT_PLAIN(kc_output_operand_alias)
KT_PLAIN(kc_custom_call_desc)
KT_PLAIN(kc_compile_options)
KT_PLAIN(kc_executable_info)
KT_PLAIN(kc_execute_options)
KT_PLAIN(kc_xcall_target_desc)
#undef KT_PLAIN

namespace {

int failures = 0;

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "abi_layout_cpp: FAILED: %s\n", what);
    ++failures;
  }
}

// A packed function compiled as C++: reads an int, a float and a string
// with the C readers of func.h, returns a float.
kc_status* weigh(void* self, const kc_any* args, int32_t nargs, kc_any* ret) {
  (void)self;
  int64_t n = 0;
  double w = 0;
  kc_string_view s = {nullptr, 0};
  kc_status* st = kc_args_check_count("kt.weigh", nargs, 3, 3);
  if (!st) st = kc_args_get_int("kt.weigh", args, nargs, 0, &n);
  if (!st) st = kc_args_get_float("kt.weigh", args, nargs, 1, &w);
  if (!st) st = kc_args_get_string("kt.weigh", args, nargs, 2, &s);
  if (st) return st;
  *ret = kc_any_float(static_cast<double>(n) * w + static_cast<double>(s.size));
  return nullptr;
}

}  // namespace

int main() {
  // The table the library fills in C has the size C++ gives its struct.
  const kc_host_api* host = kc_plugin_get_host_api();
  check(host != nullptr, "kc_plugin_get_host_api returns the table");
  if (!host) return 1;
  check(host->struct_size == sizeof(kc_host_api),
        "kc_host_api.struct_size (C) == sizeof(kc_host_api) (C++)");
  uint32_t major = 0, minor = 0;
  kc_version_query_api(&major, &minor);
  check(host->api_major == major && host->api_minor == minor &&
            major == KC_API_VERSION_MAJOR && minor == KC_API_VERSION_MINOR,
        "the table's version is the library's and the header's");

  // kc_any values made by the inline constructors, compiled as C++, read
  // by the library's C code and back.
  kc_func* f = nullptr;
  check(kc_func_create(nullptr, weigh, nullptr, nullptr, &f) == nullptr,
        "kc_func_create");
  if (!f) return 1;
  const kc_any args[3] = {kc_any_int(6), kc_any_float(0.5),
                          kc_any_cstr("four")};
  kc_any ret = kc_any_none();
  kc_status* st = kc_func_call_noinline(f, args, 3, &ret);
  check(st == nullptr && ret.type_index == KC_TYPE_FLOAT &&
            ret.u.v_float64 == 7.0,
        "a C++ packed function called through the library: 6 * 0.5 + 4");
  kc_status_destroy(st);
  const kc_any wrong[3] = {kc_any_cstr("x"), kc_any_float(0.5),
                           kc_any_cstr("")};
  st = kc_func_call_noinline(f, wrong, 3, &ret);
  check(kc_status_get_code(st) == KC_INVALID_ARGUMENT &&
            std::strstr(kc_status_get_message(st),
                        "kt.weigh: argument 0: expected int, got str"),
        "the library's message for a wrong argument");
  kc_status_destroy(st);
  kc_object_release(KC_OBJECT(f));

  // A DLTensor laid out by C++, measured by the library.
  int64_t shape[3] = {2, 3, 4};
  float data[24] = {};
  DLTensor t = {data, {kDLCPU, 0}, 3, {kDLFloat, 32, 1}, shape, nullptr, 0};
  check(kc_dltensor_get_numel(&t) == 24 && kc_dltensor_is_compact(&t),
        "the library reads a DLTensor C++ laid out");

  // A struct the library fills up to the struct_size C++ gives it.
  kc_tensor* tensor = nullptr;
  check(kc_tensor_create(nullptr, shape, 3, t.dtype, t.device, &tensor) ==
            nullptr,
        "kc_tensor_create");
  if (tensor) {
    const DLTensor* dl = kc_tensor_get_dltensor(tensor);
    check(dl->ndim == 3 && dl->shape[2] == 4 && dl->dtype.bits == 32 &&
              dl->device.device_type == kDLCPU,
          "C++ reads the DLTensor the library made");
    kc_object_release(KC_OBJECT(tensor));
  }

  if (failures) return 1;
  std::printf("abi_layout_cpp: the frozen layouts hold in C++ (%zu-byte "
              "host table); C++ and the C library agree\n",
              sizeof(kc_host_api));
  return 0;
}
