/* register.c: registers an XLA FFI handler from the shared object that
 * holds it, then runs a program that calls it.
 * Usage: register LIB.so SYMBOL */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <kcall/kcall.h>

static const char program_text[] =
    "HloModule jit_add_one\n"
    "ENTRY main {\n"
    "  x = f32[4]{0} parameter(0)\n"
    "  ROOT y = f32[4]{0} custom-call(x), custom_call_target=\"add_one\", "
    "api_version=API_VERSION_TYPED_FFI, backend_config={delta = 1.0 : f32}\n"
    "}\n";

static kc_status* run(const char* lib_path, const char* symbol) {
  void* lib = dlopen(lib_path, RTLD_NOW); /* stays loaded: the target uses it */
  void* sym = lib ? dlsym(lib, symbol) : NULL;
  if (!sym) return kc_status_create(KC_NOT_FOUND, "%s", dlerror());
  kc_xla_ffi_handler_fn handler;
  memcpy(&handler, &sym, sizeof handler); /* data to function pointer (POSIX) */
  kc_status* st = kc_xcall_register_xla_ffi_handler(KC_SV_LIT("add_one"),
                                                    KC_PLATFORM_HOST, handler, 0);
  kc_program* program = NULL;
  kc_executable* exe = NULL;
  kc_tensor* x = NULL;
  kc_tensor* y = NULL;
  int64_t n = 4;
  if (!st) st = kc_program_parse(KC_SV_LIT(program_text), &program);
  if (!st) st = kc_program_compile(program, NULL, &exe);
  if (!st) st = kc_tensor_create(NULL, &n, 1, kc_dtype_make(kDLFloat, 32, 1),
                                 kc_device_cpu(), &x);
  if (!st) {
    float* in = kc_tensor_get_dltensor(x)->data;
    for (int i = 0; i < 4; ++i) in[i] = (float)(i + 1);
    const DLTensor* inputs[1] = {kc_tensor_get_dltensor(x)};
    st = kc_executable_execute(exe, inputs, 1, NULL, &y);
  }
  if (!st) {
    const float* out = kc_tensor_get_dltensor(y)->data;
    printf("[%g, %g, %g, %g]\n", out[0], out[1], out[2], out[3]);
  }
  if (y) kc_object_release(KC_OBJECT(y));
  if (x) kc_object_release(KC_OBJECT(x));
  kc_executable_destroy(exe);
  kc_program_destroy(program);
  return st;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: register LIB.so SYMBOL\n");
    return 2;
  }
  kc_status* st = run(argv[1], argv[2]);
  if (st) {
    char msg[512];
    kc_status_format(st, msg, sizeof msg);
    fprintf(stderr, "%s\n", msg);
    kc_status_destroy(st);
    return 1;
  }
  return 0;
}
