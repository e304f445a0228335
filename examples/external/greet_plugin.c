/*
 * greet_plugin.c — the smallest useful kcall plugin: one function,
 * greet.hello(name: str) -> str.
 */
#include <kcall/abi.h>

static kc_status* greet_hello(void* self, const kc_any* args, int32_t nargs,
                              kc_any* ret) {
  const kc_host_api* host = self;
  kc_string_view name;
  kc_status* status = kc_host_args_check_count(host, "greet.hello", nargs, 1, 1);
  if (!status) status = kc_host_args_get_string(host, "greet.hello", args, nargs, 0,
                                              &name);
  if (status) return status;

  static const char kHello[] = "Hello, ";
  char text[256];
  if (name.size > sizeof text - sizeof kHello) {
    return host->status_create(KC_INVALID_ARGUMENT,
                               "greet.hello: argument 0: a name of %zu bytes "
                               "is longer than %zu",
                               name.size, sizeof text - sizeof kHello);
  }
  size_t n = 0;
  for (size_t i = 0; kHello[i]; ++i) text[n++] = kHello[i];
  for (size_t i = 0; i < name.size; ++i) text[n++] = name.data[i];
  text[n++] = '!';
  kc_string_view greeting = {text, n};
  return host->any_from_string(NULL, greeting, ret);
}

static kc_status* greet_init(const kc_host_api* host) {
  kc_func* func = NULL;
  kc_status* status =
      host->func_create(NULL, greet_hello, (void*)host, NULL, &func);
  if (status) return status;
  status = host->func_registry_register(KC_SV_LIT("greet.hello"), func, 0);
  host->object_release(KC_OBJECT(func)); /* the registry keeps its own */
  return status;
}

static const kc_plugin_info kGreetInfo = {
    .struct_size = sizeof(kc_plugin_info),
    .api_major = KC_API_VERSION_MAJOR,
    .api_minor = KC_API_VERSION_MINOR,
    .name = "greet",
    .version = "0.1",
    .required_features = NULL,
    .init = greet_init,
};

KC_PLUGIN_ENTRY(host) {
  (void)host;
  return &kGreetInfo;
}
