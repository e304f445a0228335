// add_one_plugin.cc: the handler of add_one.cc (linked in) as a kcall
// plugin, registered through the host table when the plugin loads.
#include <kcall/abi.h>

#include "xla/ffi/api/ffi.h"

XLA_FFI_DECLARE_HANDLER_SYMBOL(AddOne);

static kc_status* add_one_init(const kc_host_api* host) {
  return host->xcall_register_xla_ffi_handler(
      kc_sv("add_one"), KC_PLATFORM_HOST,
      reinterpret_cast<kc_xla_ffi_handler_fn>(AddOne), 0);
}

static const char* const required[] = {"xla_ffi", nullptr};

static const kc_plugin_info info = {
    sizeof(kc_plugin_info), KC_API_VERSION_MAJOR, KC_API_VERSION_MINOR,
    "add_one", nullptr, required, add_one_init, nullptr};

KC_PLUGIN_ENTRY(host) {
  (void)host;
  return &info;
}
