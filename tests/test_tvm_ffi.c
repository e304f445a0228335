/* Tests of kcall/tvm_ffi.h that need no tvm-ffi installed: modules refused
 * without libtvm_ffi (saying what to install), nothing left registered,
 * arguments checked. The tests against the real apache-tvm-ffi are
 * tests/python/test_tvm_ffi.py (make test EXTRAS=tvm). */
#include <stdlib.h>
#include <string.h>

#include "test.h"

#define KT_FIXTURE(name) KC_FIXTURE_DIR "/kt_plugin_" name ".so"

/* No libtvm_ffi can be found: the variable names a file that is not
 * there (and none is in this process). */
static void kt_no_runtime(void) {
  setenv("KCALL_TVM_FFI_LIBRARY", "/nonexistent/libtvm_ffi.so", 1);
}

static void kt_check_absent(const char* name) {
  kc_func* f = NULL;
  KC_CHECK_CODE(kc_func_registry_lookup(kc_sv(name), &f), KC_NOT_FOUND, name);
  kc_xcall_target_desc d = {.struct_size = sizeof d};
  KC_CHECK_CODE(kc_xcall_lookup(kc_sv(name), KC_PLATFORM_HOST, &d),
                KC_NOT_FOUND, "");
}

KC_TEST(tvm_ffi_module_without_runtime_is_refused) {
  kt_no_runtime();
  kc_plugin* p = NULL;
  KC_CHECK_CODE(kc_plugin_load(KT_FIXTURE("tvm_pod"), &p),
                KC_FAILED_PRECONDITION, "kt_plugin_tvm_pod.so",
                "pip install apache-tvm-ffi", "KCALL_TVM_FFI_LIBRARY");
  KC_CHECK(p == NULL);
  kt_check_absent("kt_plugin_tvm_pod.add");
  KC_CHECK_CODE(kc_tvm_ffi_load_module(KT_FIXTURE("tvm_pod"), "pod", &p),
                KC_FAILED_PRECONDITION, "tvm-ffi module",
                "pip install apache-tvm-ffi");
  kt_check_absent("pod.add");
}

KC_TEST(tvm_ffi_module_calling_the_missing_runtime_is_refused) {
  kt_no_runtime();
  kc_plugin* p = NULL;
  /* dlopen itself fails on the undefined TVMFFI function: the status says
   * why in tvm-ffi's terms. */
  KC_CHECK_CODE(kc_plugin_load(KT_FIXTURE("tvm_needs_runtime"), &p),
                KC_FAILED_PRECONDITION, "it is a tvm-ffi module",
                "pip install apache-tvm-ffi");
  KC_CHECK(p == NULL);
}

KC_TEST(tvm_ffi_load_module_checks_its_arguments) {
  kc_plugin* p = NULL;
  KC_CHECK_CODE(kc_tvm_ffi_load_module(KT_FIXTURE("tvm_pod"), "bad prefix!", &p),
                KC_INVALID_ARGUMENT, "prefix 'bad prefix!'", "[A-Za-z0-9_.]");
  KC_CHECK_CODE(kc_tvm_ffi_load_module(KT_FIXTURE("tvm_pod"), "", &p),
                KC_INVALID_ARGUMENT, "prefix ''");
  KC_CHECK_CODE(kc_tvm_ffi_load_module(NULL, "x", &p), KC_INVALID_ARGUMENT,
                "path is NULL");
  KC_CHECK_CODE(kc_tvm_ffi_load_module(KT_FIXTURE("nothing_here"), "x", &p),
                KC_NOT_FOUND, "nothing_here");
  /* A kcall plugin is not a tvm-ffi module, nor is a library exporting
   * neither kind of entry; neither is left loaded. */
  KC_CHECK_CODE(kc_tvm_ffi_load_module(KT_FIXTURE("good"), "x", &p),
                KC_INVALID_ARGUMENT, "not a tvm-ffi module");
  KC_CHECK_CODE(kc_tvm_ffi_load_module(KT_FIXTURE("no_entry"), "x", &p),
                KC_INVALID_ARGUMENT, "not a tvm-ffi module",
                "TVM_FFI_DLL_EXPORT_TYPED_FUNC");
  KC_CHECK(p == NULL);
  /* The good plugin still loads as what it is. */
  KC_CHECK_OK(kc_plugin_load(KT_FIXTURE("good"), &p));
}

KC_TEST(tvm_ffi_plugin_without_entry_or_functions_says_both) {
  kc_plugin* p = NULL;
  KC_CHECK_CODE(kc_plugin_load(KT_FIXTURE("no_entry"), &p),
                KC_INVALID_ARGUMENT, "kc_plugin_entry", "__tvm_ffi_NAME");
}

KC_TEST(tvm_ffi_export_and_targets_without_runtime) {
  kt_no_runtime();
  size_t n = 7;
  KC_CHECK_CODE(kc_tvm_ffi_export("anything.", false, &n),
                KC_FAILED_PRECONDITION, "pip install apache-tvm-ffi");
  KC_CHECK_INT(n, 0);
  KC_CHECK_CODE(kc_tvm_ffi_export("", false, &n), KC_INVALID_ARGUMENT,
                "expected a function name");
  KC_CHECK_CODE(kc_tvm_ffi_export(NULL, false, NULL), KC_INVALID_ARGUMENT,
                "NULL");
  const char* path = "x";
  KC_CHECK_CODE(kc_tvm_ffi_library(&path), KC_FAILED_PRECONDITION,
                "/nonexistent/libtvm_ffi.so");
  KC_CHECK(path == NULL);
  KC_CHECK_CODE(kc_tvm_ffi_register_target(kc_sv("t"), KC_PLATFORM_CUDA,
                                           kc_sv("f"), 0),
                KC_INVALID_ARGUMENT, "host only");
  KC_CHECK_CODE(kc_tvm_ffi_register_target(kc_sv("t"), KC_PLATFORM_HOST,
                                           kc_sv("no.such.func"), 0),
                KC_NOT_FOUND, "no.such.func");
}
