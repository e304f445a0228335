/*
 * call_ops.c — a host program calling ops eagerly from C: it loads the ops
 * plugin, then calls Add (broadcasting a row over a matrix), MatMul on the
 * thread pool, and Counter, whose state outlives each call.
 *
 *   call_ops path/to/libops_plugin.so
 */
#include <stdio.h>

#include <kcall/kcall.h>

static int fail(kc_status* st) {
  char msg[512];
  kc_status_format(st, msg, sizeof msg);
  fprintf(stderr, "call_ops: %s\n", msg);
  kc_status_destroy(st);
  return 1;
}

static void print_matrix(const char* label, const kc_tensor* t) {
  const DLTensor* d = kc_tensor_get_dltensor(t);
  const float* v = d->data;
  printf("%s =\n", label);
  for (int64_t i = 0; i < d->shape[0]; ++i) {
    printf(" ");
    for (int64_t j = 0; j < d->shape[1]; ++j)
      printf(" %g", v[i * d->shape[1] + j]);
    printf("\n");
  }
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: call_ops PLUGIN.so\n");
    return 2;
  }
  kc_plugin* plugin = NULL;
  const kc_op *add = NULL, *matmul = NULL, *counter = NULL;
  kc_status* st = kc_plugin_load(argv[1], &plugin);
  if (!st) st = kc_op_registry_lookup(KC_SV_LIT("Add"), &add);
  if (!st) st = kc_op_registry_lookup(KC_SV_LIT("MatMul"), &matmul);
  if (!st) st = kc_op_registry_lookup(KC_SV_LIT("Counter"), &counter);
  if (st) return fail(st);

  /* Borrowed views of the caller's own arrays. */
  float m[6] = {1, 2, 3, 4, 5, 6}, row[3] = {10, 20, 30};
  int64_t m_shape[2] = {2, 3}, row_shape[1] = {3};
  DLTensor a = {m, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, m_shape, NULL, 0};
  DLTensor b = {row, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, row_shape, NULL, 0};
  const DLTensor* add_in[2] = {&a, &b};
  kc_tensor* sum = NULL;
  int32_t n = 0;
  st = kc_op_call(add, add_in, 2, NULL, 0, NULL, &sum, 1, &n);
  if (st) return fail(st);
  print_matrix("Add(m, row)", sum);

  /* m [2,3] times its sum's transpose-free partner: a [3,2] of ones. */
  float ones[6] = {1, 1, 1, 1, 1, 1};
  int64_t ones_shape[2] = {3, 2};
  DLTensor o = {ones, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, ones_shape, NULL, 0};
  const DLTensor* mm_in[2] = {kc_tensor_get_dltensor(sum), &o};
  kc_tensor* product = NULL;
  st = kc_op_call(matmul, mm_in, 2, NULL, 0, NULL, &product, 1, &n);
  if (st) return fail(st);
  print_matrix("MatMul(sum, ones)", product);

  /* The same attrs find the same kernel instance, and its count. */
  kc_op_attr step = {KC_SV_LIT("step"), kc_any_int(10)};
  for (int i = 0; i < 3; ++i) {
    kc_tensor* count = NULL;
    st = kc_op_call(counter, NULL, 0, &step, 1, NULL, &count, 1, &n);
    if (st) return fail(st);
    printf("Counter(step=10) = %lld\n",
           (long long)*(int64_t*)kc_tensor_get_dltensor(count)->data);
    kc_object_release(KC_OBJECT(count));
  }
  kc_object_release(KC_OBJECT(sum));
  kc_object_release(KC_OBJECT(product));
  return 0;
}
