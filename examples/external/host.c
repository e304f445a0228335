/*
 * host.c — a host program built with pkg-config:
 *
 *   cc host.c $(pkg-config --cflags --libs kcall) -o greet_host
 *   ./greet_host path/to/libgreet.so world
 */
#include <stdio.h>
#include <stdlib.h>

#include <kcall/kcall.h>

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s PLUGIN.so NAME\n", argv[0]);
    return 2;
  }
  kc_plugin* plugin = NULL;
  kc_func* hello = NULL;
  kc_any name = kc_any_cstr(argv[2]);
  kc_any greeting = kc_any_none();
  kc_status* status = kc_plugin_load(argv[1], &plugin);
  if (!status) status = kc_func_registry_lookup(KC_SV_LIT("greet.hello"), &hello);
  if (!status) status = kc_func_call(hello, &name, 1, &greeting);

  kc_string_view text;
  if (!status && kc_any_get_string(&greeting, &text)) {
    printf("%.*s (kcall %s)\n", (int)text.size, text.data, kc_version_string());
  }
  kc_any_release(&greeting);
  if (status) {
    char message[512];
    kc_status_format(status, message, sizeof message);
    fprintf(stderr, "%s\n", message);
    kc_status_destroy(status);
    return 1;
  }
  return 0;
}
