/* abi_struct_has.c: docs/abi.md's check of a host table entry before a
 * call (KC_STRUCT_HAS), run on the library's table and on a copy whose
 * struct_size ends before the entry, as an older library's table would. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <kcall/kcall.h>

static int past_the_end_calls;

static const void* past_the_end(void) {
  ++past_the_end_calls;
  return "never";
}

/* kcall's XLA_FFI_Api table when `host` has the entry, else NULL. */
static const void* xla_ffi_api_of(const kc_host_api* host) {
  const void* api = NULL;
  if (KC_STRUCT_HAS(host, kc_host_api, xla_ffi_get_api)) {
    api = host->xla_ffi_get_api();
  }
  return api;
}

int main(void) {
  const kc_host_api* host = kc_plugin_get_host_api();
  kc_host_api older;
  memcpy(&older, host, sizeof older);
  older.struct_size = offsetof(kc_host_api, xla_ffi_get_api);
  older.xla_ffi_get_api = past_the_end; /* beyond struct_size: not read */

  const void* api = xla_ffi_api_of(host);
  if (api == NULL || api != kc_xla_ffi_get_api()) {
    fprintf(stderr, "abi_struct_has: the library's table has "
                    "xla_ffi_get_api, but it was not called\n");
    return 1;
  }
  if (xla_ffi_api_of(&older) != NULL || past_the_end_calls != 0) {
    fprintf(stderr, "abi_struct_has: an entry past struct_size was "
                    "called\n");
    return 1;
  }
  printf("entries are read only inside struct_size\n");
  return 0;
}
