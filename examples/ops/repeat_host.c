/* repeat_host.c: a host program with repeat.c linked in. It registers the
 * ops itself and calls them eagerly: no plugin, no table. */
#include <kcall/kcall.h>
#include <stdio.h>

kc_status* repeat_register(void); /* repeat.c */

static int fail(kc_status* st) {
  char msg[512];
  kc_status_format(st, msg, sizeof msg);
  printf("error: %s\n", msg);
  kc_status_destroy(st);
  return 1;
}

int main(void) {
  const kc_op* thrice = NULL;
  kc_status* st = repeat_register();
  if (!st) st = kc_op_registry_lookup(KC_SV_LIT("Thrice"), &thrice);
  if (st) return fail(st);

  float v[2] = {1.5f, 2.5f};
  int64_t shape[2] = {1, 2};
  DLTensor x = {v, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, NULL, 0};
  const DLTensor* in = &x;
  kc_tensor* y = NULL;
  int32_t n = 0;
  st = kc_op_call(thrice, &in, 1, NULL, 0, NULL, &y, 1, &n);
  if (st) return fail(st);
  const DLTensor* out = kc_tensor_get_dltensor(y);
  printf("Thrice: [%lld, %lld]:", (long long)out->shape[0],
         (long long)out->shape[1]);
  for (int i = 0; i < 6; ++i) printf(" %g", ((const float*)out->data)[i]);
  printf("\n");
  kc_object_release(KC_OBJECT(y));

  /* A scalar has no first dim: the shape function refuses it. */
  x.ndim = 0;
  st = kc_op_call(thrice, &in, 1, NULL, 0, NULL, &y, 1, &n);
  return st ? fail(st) : 1;
}
