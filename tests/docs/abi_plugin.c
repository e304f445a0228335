/* abi_plugin.c: the plugin code docs/abi.md shows (the entry point, the
 * required features, an init that registers two functions), in a plugin
 * the tests load and call (tests/docs/CMakeLists.txt). */
#include <kcall/abi.h>

/* mylib.add(a, b) and mylib.sub(a, b): int64, refusing results that do
 * not fit. */
static kc_status* my_binary(const kc_host_api* host, const char* name,
                            const kc_any* args, int32_t nargs, int64_t sign,
                            kc_any* ret) {
  int64_t a = 0, b = 0, r = 0;
  kc_status* st = kc_host_args_check_count(host, name, nargs, 2, 2);
  if (!st) st = kc_host_args_get_int(host, name, args, nargs, 0, &a);
  if (!st) st = kc_host_args_get_int(host, name, args, nargs, 1, &b);
  if (st) return st;
  bool overflow = sign > 0 ? __builtin_add_overflow(a, b, &r)
                           : __builtin_sub_overflow(a, b, &r);
  if (overflow) {
    return host->status_create(KC_OUT_OF_RANGE, "%s: the result of %lld and "
                               "%lld does not fit in 64 bits", name,
                               (long long)a, (long long)b);
  }
  *ret = kc_any_int(r);
  return NULL;
}

static kc_status* my_add(void* self, const kc_any* args, int32_t nargs,
                         kc_any* ret) {
  return my_binary(self, "mylib.add", args, nargs, 1, ret);
}

static kc_status* my_sub(void* self, const kc_any* args, int32_t nargs,
                         kc_any* ret) {
  return my_binary(self, "mylib.sub", args, nargs, -1, ret);
}

static kc_status* my_init(const kc_host_api* host) {
  static const kc_func_entry fns[] = {
      {"mylib.add", my_add},
      {"mylib.sub", my_sub},
  };
  /* Stops at the first failure; the earlier ones are rolled back. */
  return kc_host_register_functions(host, fns, 2, (void*)host);
}

static const char* const kRequired[] = {"tensors", NULL};
static const kc_plugin_info info = {
    .struct_size = sizeof(kc_plugin_info),
    .api_major = KC_API_VERSION_MAJOR,
    .api_minor = KC_API_VERSION_MINOR,
    .name = "abi_doc",
    .version = "1.0",
    .init = my_init,
    .required_features = kRequired,
};

KC_PLUGIN_ENTRY(host) {
  (void)host;
  return &info;
}
