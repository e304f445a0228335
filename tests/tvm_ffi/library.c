/*
 * library.c — which libtvm_ffi kcall finds, in a process that has none
 * loaded: prints the path kc_tvm_ffi_library gives, or its error.
 * tests/python/test_tvm_ffi.py runs it with and without
 * KCALL_TVM_FFI_LIBRARY.
 */
#include <stdio.h>

#include <kcall/kcall.h>
#include <kcall/tvm_ffi.h>

int main(void) {
  const char* path = NULL;
  kc_status* status = kc_tvm_ffi_library(&path);
  if (status) {
    printf("%s: %s\n", kc_status_code_name(kc_status_get_code(status)),
           kc_status_get_message(status));
    kc_status_destroy(status);
    return 1;
  }
  printf("%s\n", path);
  return 0;
}
