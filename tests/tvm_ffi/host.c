/*
 * host.c — a C host calling a tvm-ffi module through kcall alone: it
 * includes only kcall's headers and links only libkcall; libtvm_ffi comes
 * in with the module.
 *
 *   host MODULE.so COPY.so
 *
 * MODULE is loaded with kc_tvm_ffi_load_module under the prefix "ch",
 * COPY (another file of the same module) with kc_plugin_load, which takes
 * the default prefix from the file's name. Each step prints one line;
 * tests/python/test_tvm_ffi.py compares them. Exits 1 on the first
 * unexpected result.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kcall/kcall.h>
#include <kcall/tvm_ffi.h>

static int fail(const char* what, kc_status* status) {
  char text[1024] = "(no status)";
  if (status) {
    kc_status_format(status, text, sizeof text);
    kc_status_destroy(status);
  }
  printf("FAIL %s: %s\n", what, text);
  return 1;
}

static kc_status* call(const char* name, const kc_any* args, int32_t nargs,
                       kc_any* out_ret) {
  kc_func* func = NULL;
  kc_status* status = kc_func_registry_lookup(kc_sv(name), &func);
  if (status) return status;
  return kc_func_call(func, args, nargs, out_ret);
}

/* Prints "CODE | MESSAGE" of an expected failure. */
static int expect_error(const char* what, kc_status* status) {
  if (!status) {
    printf("FAIL %s: succeeded\n", what);
    return 1;
  }
  printf("%s: %s | %s\n", what, kc_status_code_name(kc_status_get_code(status)),
         kc_status_get_message(status));
  kc_status_destroy(status);
  return 0;
}

static int scalars(void) {
  kc_any args[2] = {kc_any_int(40), kc_any_int(2)};
  kc_any ret = kc_any_none();
  kc_status* status = call("ch.add_ints", args, 2, &ret);
  if (status) return fail("ch.add_ints", status);
  printf("ch.add_ints(40, 2) = %" PRId64 "\n", ret.u.v_int64);

  kc_any s[2] = {kc_any_cstr("tvm-"), kc_any_cstr("ffi strings")};
  status = call("ch.concat", s, 2, &ret);
  if (status) return fail("ch.concat", status);
  kc_string_view view;
  if (!kc_any_get_string(&ret, &view)) return fail("ch.concat: not a string", NULL);
  printf("ch.concat = %.*s\n", (int)view.size, view.data);
  kc_any_release(&ret);
  return 0;
}

static int tensors(void) {
  float x[4] = {1, 2, 3, 4};
  float y[4] = {0};
  int64_t shape[1] = {4};
  DLTensor tx = {.data = x,
                 .device = {kDLCPU, 0},
                 .ndim = 1,
                 .dtype = {kDLFloat, 32, 1},
                 .shape = shape};
  DLTensor ty = tx;
  ty.data = y;
  kc_any args[3] = {kc_any_dltensor(&tx), kc_any_dltensor(&ty), kc_any_float(0.5)};
  kc_any ret = kc_any_none();
  kc_status* status = call("ch.add_one", args, 2, &ret);
  if (status) return fail("ch.add_one", status);
  printf("ch.add_one: %g %g %g %g\n", (double)y[0], (double)y[1], (double)y[2],
         (double)y[3]);
  status = call("ch.scale", args, 3, &ret);
  if (status) return fail("ch.scale", status);
  printf("ch.scale: %g %g %g %g\n", (double)y[0], (double)y[1], (double)y[2],
         (double)y[3]);
  return 0;
}

static int errors(void) {
  kc_any v = kc_any_int(-3);
  kc_any ret = kc_any_none();
  if (expect_error("ch.raise_value_error", call("ch.raise_value_error", &v, 1, &ret))) {
    return 1;
  }
  kc_any m = kc_any_cstr("the kernel broke");
  if (expect_error("ch.raise_custom", call("ch.raise_custom", &m, 1, &ret))) return 1;
  return expect_error("ch.noop(-3)", call("ch.noop", &v, 1, &ret));
}

static int held_by_tvm_ffi_or_a_target(const char* copy, const char* prefix);

/* The copy is loaded by kc_plugin_load, without a prefix; unloading it is
 * refused while a function of it is held, and done once it is not. */
static int plugin_load_and_unload(const char* copy) {
  kc_plugin* plugin = NULL;
  kc_status* status = kc_plugin_load(copy, &plugin);
  if (status) return fail("kc_plugin_load", status);
  kc_plugin_desc desc = {.struct_size = sizeof desc};
  status = kc_plugin_get_desc(plugin, &desc);
  if (status) return fail("kc_plugin_get_desc", status);
  printf("plugin %s, version %s\n", desc.name, desc.version);
  /* desc's strings live only until the unload. */
  char prefix[128];
  snprintf(prefix, sizeof prefix, "%s", desc.name);

  char name[256];
  snprintf(name, sizeof name, "%s.add_ints", prefix);
  kc_func* held = NULL;
  status = kc_func_registry_lookup_retained(kc_sv(name), &held);
  if (status) return fail("lookup", status);
  kc_any args[2] = {kc_any_int(1), kc_any_int(2)};
  kc_any ret = kc_any_none();
  status = kc_func_call(held, args, 2, &ret);
  if (status) return fail(name, status);
  printf("%s(1, 2) = %" PRId64 "\n", name, ret.u.v_int64);

  status = kc_plugin_unload(plugin);
  if (!status) return fail("kc_plugin_unload succeeded while a function is held", NULL);
  printf("unload while held: %s, names %s: %s\n",
         kc_status_code_name(kc_status_get_code(status)), name,
         strstr(kc_status_get_message(status), name) ? "yes" : "no");
  kc_status_destroy(status);
  status = kc_func_call(held, args, 2, &ret);
  if (status) return fail("call after a refused unload", status);
  printf("still callable: %" PRId64 "\n", ret.u.v_int64);

  kc_object_release(KC_OBJECT(held));
  status = kc_plugin_unload(plugin);
  if (status) return fail("kc_plugin_unload", status);
  kc_func* gone = NULL;
  status = kc_func_registry_lookup(kc_sv(name), &gone);
  printf("after unload: %s\n",
         status ? kc_status_code_name(kc_status_get_code(status)) : "still there");
  kc_status_destroy(status);
  return held_by_tvm_ffi_or_a_target(copy, prefix);
}

/* Loaded again, a function exported to tvm-ffi (which holds nothing of
 * kcall's), then a function made a custom-call target (which holds it, and
 * the unload says so). */
static int held_by_tvm_ffi_or_a_target(const char* copy, const char* prefix) {
  kc_plugin* plugin = NULL;
  kc_status* status = kc_plugin_load(copy, &plugin);
  if (status) return fail("kc_plugin_load again", status);
  char exported[256], target_func[256];
  snprintf(exported, sizeof exported, "%s.add_ints", prefix);
  snprintf(target_func, sizeof target_func, "%s.add_one", prefix);
  size_t count = 0;
  status = kc_tvm_ffi_export(exported, false, &count);
  if (status) return fail("kc_tvm_ffi_export", status);
  /* A tvm-ffi function exported back is tvm-ffi's own (not a wrapper
   * holding kcall's): it holds nothing of kcall's, and its file stays
   * mapped. The unload goes through; the export still works. */
  status = kc_plugin_unload(plugin);
  printf("exported %zu; unload: %s\n", count,
         status ? kc_status_code_name(kc_status_get_code(status)) : "done");
  if (status) kc_status_destroy(status);
  status = kc_plugin_load(copy, &plugin);
  if (status) return fail("kc_plugin_load a third time", status);
  status = kc_tvm_ffi_register_target(kc_sv("host.t.add_one"), KC_PLATFORM_HOST,
                                      kc_sv(target_func), 0);
  if (status) return fail("kc_tvm_ffi_register_target", status);
  status = kc_plugin_unload(plugin);
  if (!status) return fail("kc_plugin_unload succeeded while exported", NULL);
  const char* msg = kc_status_get_message(status);
  printf("target; unload: %s, names %s: %s\n",
         kc_status_code_name(kc_status_get_code(status)), target_func,
         strstr(msg, target_func) ? "yes" : "no");
  kc_status_destroy(status);
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: host MODULE.so COPY.so\n");
    return 2;
  }
  kc_plugin* plugin = NULL;
  kc_status* status = kc_tvm_ffi_load_module(argv[1], "ch", &plugin);
  if (status) return fail("kc_tvm_ffi_load_module", status);
  const char* lib = NULL;
  status = kc_tvm_ffi_library(&lib);
  if (status) return fail("kc_tvm_ffi_library", status);
  printf("libtvm_ffi: %s\n", strrchr(lib, '/') ? strrchr(lib, '/') + 1 : lib);
  if (scalars() || tensors() || errors() || plugin_load_and_unload(argv[2])) return 1;
  printf("done\n");
  return 0;
}
