/* host.c */
#include <stdio.h>
#include <kcall/kcall.h>

int main(void) {
  kc_plugin* plugin;
  kc_func* add;
  kc_any args[2] = {kc_any_int(2), kc_any_int(3)};
  kc_any sum = kc_any_none();
  kc_status* st = kc_plugin_load("./libmylib.so", &plugin);
  if (!st) st = kc_func_registry_lookup(KC_SV_LIT("mylib.add"), &add);
  if (!st) st = kc_func_call(add, args, 2, &sum);
  if (st) {
    char msg[256];
    kc_status_format(st, msg, sizeof msg);
    fprintf(stderr, "%s\n", msg);
    kc_status_destroy(st);
    return 1;
  }
  printf("%lld\n", (long long)sum.u.v_int64);
  kc_any_release(&sum); /* a result is owned by the caller */
  return 0;
}
