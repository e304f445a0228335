/*
 * call_hello.c — a host program that loads the hello plugin and calls its
 * functions from C.
 *
 *   call_hello path/to/libhello_plugin.so
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <kcall/kcall.h>

/* Prints the whole status chain and frees it. */
static int report(kc_status* status) {
  size_t size = kc_status_format(status, NULL, 0) + 1;
  char* text = malloc(size);
  if (text) kc_status_format(status, text, size);
  fprintf(stderr, "call_hello: %s\n", text ? text : "out of memory");
  free(text);
  kc_status_destroy(status);
  return EXIT_FAILURE;
}

/* Looks `name` up and calls it. The function is borrowed from the
 * registry; *out_ret is owned by the caller. */
static kc_status* call(const char* name, const kc_any* args, int32_t nargs,
                       kc_any* out_ret) {
  kc_func* func = NULL;
  kc_status* status = kc_func_registry_lookup(kc_sv(name), &func);
  if (status) return status;
  return kc_func_call(func, args, nargs, out_ret);
}

static kc_status* add_two_ints(void) {
  kc_any args[2] = {kc_any_int(2), kc_any_int(3)};
  kc_any sum = kc_any_none();
  kc_status* status = call("hello.add", args, 2, &sum);
  if (status) return status;
  printf("hello.add(2, 3) = %" PRId64 "\n", sum.u.v_int64);
  return NULL;
}

/* A function returned by a function: the closure keeps 10 until the last
 * reference to it goes. */
static kc_status* use_closure(void) {
  kc_any ten = kc_any_int(10);
  kc_any adder = kc_any_none();
  kc_status* status = call("hello.make_adder", &ten, 1, &adder);
  if (status) return status;

  if (adder.type_index != KC_TYPE_FUNC) {
    status = kc_status_create(KC_INTERNAL, "hello.make_adder returned a %s",
                              kc_type_name(adder.type_index));
    kc_any_release(&adder);
    return status;
  }
  kc_any five = kc_any_int(5);
  kc_any sum = kc_any_none();
  status = kc_func_call((const kc_func*)(void*)adder.u.v_obj, &five, 1, &sum);
  if (!status) printf("hello.make_adder(10)(5) = %" PRId64 "\n", sum.u.v_int64);
  kc_any_release(&adder);
  return status;
}

static void print_matrix(const DLTensor* t) {
  const float* data = t->data;
  for (int64_t i = 0; i < t->shape[0]; ++i) {
    printf("  [");
    for (int64_t j = 0; j < t->shape[1]; ++j) {
      printf("%s%g", j ? ", " : "", (double)data[i * t->shape[1] + j]);
    }
    printf("]\n");
  }
}

/* A tensor made here, changed in place by the plugin. */
static kc_status* scale_tensor(void) {
  const int64_t shape[2] = {2, 3};
  kc_tensor* tensor = NULL;
  kc_status* status =
      kc_tensor_create(NULL, shape, 2, kc_dtype_make(kDLFloat, 32, 1),
                       kc_device_cpu(), &tensor);
  if (status) return status;
  const DLTensor* t = kc_tensor_get_dltensor(tensor);
  float* data = t->data;
  for (int i = 0; i < 6; ++i) data[i] = (float)i;

  /* The tensor is passed borrowed; the call takes no reference. */
  kc_any args[2] = {kc_any_object(KC_OBJECT(tensor)), kc_any_float(0.5)};
  kc_any none = kc_any_none();
  status = call("hello.scale", args, 2, &none);
  if (!status) {
    printf("hello.scale(t, 0.5), t a 2x3 f32 tensor holding 0..5:\n");
    print_matrix(t);
  }
  kc_object_release(KC_OBJECT(tensor));
  return status;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: call_hello PLUGIN.so\n");
    return 2;
  }
  kc_plugin* plugin = NULL;
  kc_status* status = kc_plugin_load(argv[1], &plugin);
  if (!status) status = add_two_ints();
  if (!status) status = use_closure();
  if (!status) status = scale_tensor();
  return status ? report(status) : EXIT_SUCCESS;
}
