/*
 * tvm-ffi interop in C loops: what kcall adds to a call crossing between
 * kcall and tvm-ffi, each next to the call that does not cross.
 *
 *   import   kc_func_call of `noop` from a tvm-ffi module (kernels.cc),
 *            loaded with kc_tvm_ffi_load_module, next to tvm-ffi calling
 *            the same symbol itself (TVMFFIFunctionCall of a function made
 *            from `__tvm_ffi_noop` with TVMFFIFunctionCreate, as tvm-ffi's
 *            module loader makes it).
 *   export   TVMFFIFunctionCall of a kcall no-op exported with
 *            kc_tvm_ffi_export and fetched from tvm-ffi's global registry,
 *            next to the module's `noop` registered there as a native
 *            tvm-ffi function and fetched the same way, and next to a
 *            plain C no-op registered likewise (the floor).
 *
 * Built and run by bench_tvm_ffi.py: bench_tvm_ffi_call MODULE.so [ITERS
 * [ROUNDS]]. Prints one "key value" line per figure (ns per call).
 */
#define _POSIX_C_SOURCE 200809L
/* tvm-ffi's header first: it includes the official dlpack.h, whose
 * declarations kcall's abi.h then uses instead of its own. */
#include <tvm/ffi/c_api.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kcall/kcall.h"
#include "kcall/tvm_ffi.h"

static kc_status* kcall_nop(void* self, const kc_any* args, int32_t nargs,
                            kc_any* ret) {
  (void)self;
  (void)args;
  (void)nargs;
  (void)ret;
  return NULL;
}

static int c_nop(void* handle, const TVMFFIAny* args, int32_t nargs,
                 TVMFFIAny* result) {
  (void)handle;
  (void)args;
  (void)nargs;
  (void)result;
  return 0;
}

/* Through pointers the compiler cannot see through, as a binding calls. */
static kc_status* (*volatile kcall_call)(const kc_func*, const kc_any*,
                                         int32_t, kc_any*) =
    kc_func_call_noinline;
static int (*volatile tvm_call)(TVMFFIObjectHandle, TVMFFIAny*, int32_t,
                                TVMFFIAny*) = TVMFFIFunctionCall;

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

#define KB_LOOP __attribute__((noinline, aligned(64)))

KB_LOOP static double time_kcall(const kc_func* f, int64_t iters) {
  double start = now_ns();
  for (int64_t i = 0; i < iters; ++i) {
    kc_any ret;
    if (kcall_call(f, NULL, 0, &ret)) abort();
  }
  return (now_ns() - start) / (double)iters;
}

_Static_assert(kTVMFFINone == 0, "an all-zero TVMFFIAny is none");

KB_LOOP static double time_tvm(TVMFFIObjectHandle f, int64_t iters) {
  double start = now_ns();
  for (int64_t i = 0; i < iters; ++i) {
    TVMFFIAny ret;
    memset(&ret, 0, sizeof ret);
    if (tvm_call(f, NULL, 0, &ret)) abort();
  }
  return (now_ns() - start) / (double)iters;
}

static double min2(double best, double t) {
  return best < 0 || t < best ? t : best;
}

static void die_status(const char* what, kc_status* status) {
  char text[1024];
  kc_status_format(status, text, sizeof text);
  fprintf(stderr, "bench_tvm_ffi_call: %s: %s\n", what, text);
  exit(1);
}

static TVMFFIObjectHandle global(const char* name) {
  TVMFFIByteArray n = {name, strlen(name)};
  TVMFFIObjectHandle f = NULL;
  if (TVMFFIFunctionGetGlobal(&n, &f) || f == NULL) {
    fprintf(stderr, "bench_tvm_ffi_call: no tvm-ffi global %s\n", name);
    exit(1);
  }
  return f;
}

static void set_global(const char* name, TVMFFISafeCallType fn) {
  TVMFFIObjectHandle f = NULL;
  TVMFFIByteArray n = {name, strlen(name)};
  if (TVMFFIFunctionCreate(NULL, fn, NULL, &f) ||
      TVMFFIFunctionSetGlobal(&n, f, 1)) {
    fprintf(stderr, "bench_tvm_ffi_call: registering %s failed\n", name);
    exit(1);
  }
  TVMFFIObjectDecRef(f);
}

/* The function `name` of the module at `path` as tvm-ffi loads it. */
static TVMFFIObjectHandle module_function(const char* path, const char* name) {
  TVMFFIAny args[3];
  TVMFFIAny module, fn;
  memset(args, 0, sizeof args);
  memset(&module, 0, sizeof module);
  memset(&fn, 0, sizeof fn);
  args[0].type_index = kTVMFFIRawStr;
  args[0].v_c_str = path;
  if (TVMFFIFunctionCall(global("ffi.ModuleLoadFromFile"), args, 1, &module) ||
      module.type_index != kTVMFFIModule) {
    fprintf(stderr, "bench_tvm_ffi_call: tvm-ffi cannot load %s\n", path);
    exit(1);
  }
  args[0] = module;
  args[1].type_index = kTVMFFIRawStr;
  args[1].v_c_str = name;
  args[2].type_index = kTVMFFIBool;
  args[2].v_int64 = 0; /* query_imports */
  if (TVMFFIFunctionCall(global("ffi.ModuleGetFunction"), args, 3, &fn) ||
      fn.type_index != kTVMFFIFunction) {
    fprintf(stderr, "bench_tvm_ffi_call: the module has no %s\n", name);
    exit(1);
  }
  TVMFFIObjectDecRef(module.v_obj); /* the function holds the module */
  return fn.v_obj;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODULE.so [ITERS [ROUNDS]]\n", argv[0]);
    return 2;
  }
  int64_t iters = argc > 2 ? atoll(argv[2]) : 2 * 1000 * 1000;
  int rounds = argc > 3 ? atoi(argv[3]) : 31;
  if (iters < 1 || rounds < 1) return 2;

  /* import: the module's noop, through kcall and through tvm-ffi. */
  kc_plugin* plugin = NULL;
  kc_status* status = kc_tvm_ffi_load_module(argv[1], "bench_tk", &plugin);
  if (status) die_status("loading the module", status);
  kc_func* imported = NULL;
  status = kc_func_registry_lookup_retained(kc_sv("bench_tk.noop"), &imported);
  if (status) die_status("bench_tk.noop", status);
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  void* sym = lib ? dlsym(lib, "__tvm_ffi_noop") : NULL;
  if (!sym) {
    fprintf(stderr, "bench_tvm_ffi_call: %s\n", dlerror());
    return 1;
  }
  TVMFFISafeCallType module_noop;
  memcpy(&module_noop, &sym, sizeof module_noop);
  TVMFFIObjectHandle direct = NULL;
  if (TVMFFIFunctionCreate(NULL, module_noop, NULL, &direct)) return 1;
  /* What a tvm-ffi user calls: the module as tvm-ffi loads it
   * (ffi.ModuleLoadFromFile), its function from ffi.ModuleGetFunction. */
  TVMFFIObjectHandle via_module = module_function(argv[1], "noop");

  /* export: a kcall no-op in tvm-ffi's registry, next to native ones. */
  kc_func* knop = NULL;
  status = kc_func_create(NULL, kcall_nop, NULL, NULL, &knop);
  if (!status) status = kc_func_registry_register(kc_sv("bench.kcall_nop"), knop, 0);
  if (!status) status = kc_tvm_ffi_export("bench.kcall_nop", true, NULL);
  if (status) die_status("exporting bench.kcall_nop", status);
  kc_object_release(KC_OBJECT(knop));
  set_global("bench.module_nop", module_noop);
  set_global("bench.c_nop", c_nop);
  TVMFFIObjectHandle exported = global("bench.kcall_nop");
  TVMFFIObjectHandle native = global("tvm_kernels.global_noop");
  TVMFFIObjectHandle native_symbol = global("bench.module_nop");
  TVMFFIObjectHandle floor = global("bench.c_nop");

  int64_t warm = iters / 10 + 1;
  time_kcall(imported, warm);
  time_tvm(direct, warm);
  time_tvm(via_module, warm);
  time_tvm(exported, warm);
  time_tvm(native, warm);
  time_tvm(native_symbol, warm);
  time_tvm(floor, warm);
  double ki = -1, ti = -1, tm = -1, te = -1, tn = -1, ts = -1, tf = -1;
  for (int r = 0; r < rounds; ++r) {
    ki = min2(ki, time_kcall(imported, iters));
    ti = min2(ti, time_tvm(direct, iters));
    tm = min2(tm, time_tvm(via_module, iters));
    te = min2(te, time_tvm(exported, iters));
    tn = min2(tn, time_tvm(native, iters));
    ts = min2(ts, time_tvm(native_symbol, iters));
    tf = min2(tf, time_tvm(floor, iters));
  }
  printf("kcall_calls_tvm_ffi_noop_ns %.4f\n", ki);
  printf("tvm_ffi_calls_tvm_ffi_noop_ns %.4f\n", tm);
  printf("tvm_ffi_calls_tvm_ffi_noop_symbol_ns %.4f\n", ti);
  printf("tvm_ffi_calls_kcall_noop_ns %.4f\n", te);
  printf("tvm_ffi_calls_native_noop_ns %.4f\n", tn);
  printf("tvm_ffi_calls_native_noop_symbol_ns %.4f\n", ts);
  printf("tvm_ffi_calls_c_noop_ns %.4f\n", tf);

  kc_object_release(KC_OBJECT(imported));
  TVMFFIObjectDecRef(direct);
  TVMFFIObjectDecRef(via_module);
  TVMFFIObjectDecRef(exported);
  TVMFFIObjectDecRef(native);
  TVMFFIObjectDecRef(native_symbol);
  TVMFFIObjectDecRef(floor);
  return 0;
}
