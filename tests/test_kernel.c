/* Kernels (kcall/kernel.h): the builder and its errors, checks against the
 * op, the construction context, listing, devices and host-memory args. */
#include <stdio.h>
#include <stdlib.h>

#include "kt_device.h"
#include "kt_ops.h"

static kc_status* kt_nop_compute(void* k, kc_kernel_ctx* ctx) {
  (void)k;
  (void)ctx;
  return NULL;
}

KC_TEST(kernel_builder_errors) {
  kc_kernel_builder* b = NULL;
  KC_CHECK_CODE(kc_kernel_builder_create("kt.Op", kDLCPU, NULL, NULL, NULL, &b),
                KC_INVALID_ARGUMENT, "kernel of op 'kt.Op': compute is NULL");
  KC_CHECK_CODE(kc_kernel_builder_create("bad op", kDLCPU, NULL, kt_nop_compute,
                                         NULL, &b),
                KC_INVALID_ARGUMENT, "invalid kernel name 'bad op'");
  KC_CHECK_CODE(kc_kernel_builder_create("kt.Op", kDLCPU, NULL, kt_nop_compute,
                                         NULL, NULL),
                KC_INVALID_ARGUMENT, "out_builder is NULL");
  KC_CHECK_OK(kc_kernel_builder_create("kt.Op", kDLCPU, NULL, kt_nop_compute,
                                       NULL, &b));
  KC_CHECK_CODE(kc_kernel_builder_add_type_constraint(b, "T", &kt_f32, 0),
                KC_INVALID_ARGUMENT,
                "type constraint on 'T': expected at least one dtype");
  KC_CHECK_CODE(kc_kernel_builder_add_type_constraint(b, "1T", &kt_f32, 1),
                KC_INVALID_ARGUMENT, "'1T': not an attr name");
  DLDataType vec = {kDLFloat, 32, 4};
  KC_CHECK_CODE(kc_kernel_builder_add_type_constraint(b, "T", &vec, 1),
                KC_INVALID_ARGUMENT, "f32x4 is not a scalar dtype");
  KC_CHECK_CODE(kc_kernel_builder_add_host_memory_arg(b, "a b"),
                KC_INVALID_ARGUMENT, "host memory arg 'a b': not an arg name");
  /* The first error comes back at registration. */
  KC_CHECK_CODE(kc_kernel_registry_register(b), KC_INVALID_ARGUMENT,
                "registering a kernel of op 'kt.Op' on cpu",
                "expected at least one dtype");
  KC_CHECK_OK(kc_kernel_builder_create("kt.Op", kDLCPU, NULL, kt_nop_compute,
                                       NULL, &b));
  KC_CHECK_OK(kc_kernel_builder_add_type_constraint(b, "T", &kt_f32, 1));
  KC_CHECK_CODE(kc_kernel_builder_add_type_constraint(b, "T", &kt_i32, 1),
                KC_INVALID_ARGUMENT, "a second type constraint on 'T'");
  kc_kernel_builder_destroy(b);
  kc_kernel_builder_destroy(NULL);
}

KC_TEST(kernel_checked_against_a_registered_op) {
  kt_register_op("kt.Op", KT_SPECS("x: T"), KT_SPECS("y: T"),
                 KT_SPECS("T: {f32, f64}", "n: int = 1"),
                 kc_shape_fn_unchanged);
  kc_kernel_builder* b = NULL;
  KC_CHECK_OK(kc_kernel_builder_create("kt.Op", kDLCPU, NULL, kt_nop_compute,
                                       NULL, &b));
  KC_CHECK_OK(kc_kernel_builder_add_type_constraint(b, "U", &kt_f32, 1));
  KC_CHECK_CODE(kc_kernel_registry_register(b), KC_INVALID_ARGUMENT,
                "type constraint on 'U': op 'kt.Op' has no type or list(type) "
                "attr of that name");
  KC_CHECK_OK(kc_kernel_builder_create("kt.Op", kDLCPU, NULL, kt_nop_compute,
                                       NULL, &b));
  KC_CHECK_OK(kc_kernel_builder_add_type_constraint(b, "n", &kt_f32, 1));
  KC_CHECK_CODE(kc_kernel_registry_register(b), KC_INVALID_ARGUMENT,
                "type constraint on 'n'");
  DLDataType types[2] = {kt_f32, kt_i32};
  KC_CHECK_OK(kc_kernel_builder_create("kt.Op", kDLCPU, NULL, kt_nop_compute,
                                       NULL, &b));
  KC_CHECK_OK(kc_kernel_builder_add_type_constraint(b, "T", types, 2));
  KC_CHECK_CODE(kc_kernel_registry_register(b), KC_INVALID_ARGUMENT,
                "type constraint on 'T': {i32} not allowed by op 'kt.Op' (T: "
                "{f32, f64})");
  KC_CHECK_OK(kc_kernel_builder_create("kt.Op", kDLCPU, NULL, kt_nop_compute,
                                       NULL, &b));
  KC_CHECK_OK(kc_kernel_builder_add_host_memory_arg(b, "z"));
  KC_CHECK_CODE(kc_kernel_registry_register(b), KC_INVALID_ARGUMENT,
                "host memory arg 'z': op 'kt.Op' has no input or output of "
                "that name");
  kc_array* list = NULL;
  KC_CHECK_OK(kc_kernel_registry_list(kt_alloc(), KC_SV_LIT("kt.Op"), &list));
  KC_CHECK_INT(kc_array_get_size(list), 0);
  kc_object_release(KC_OBJECT(list));
}

KC_TEST(kernel_registered_before_its_op) {
  kt_register_kernel("kt.Late", NULL, kt_add_compute, NULL, "T", &kt_f32, 1, 0);
  kt_register_kernel("kt.Late", NULL, kt_add_compute, NULL, "T", &kt_i32, 1, 3);
  kt_register_op("kt.Late", KT_SPECS("x: T", "y: T"), KT_SPECS("z: T"),
                 KT_SPECS("T: {f32, i32}"), kt_same_shape_fn);
  kc_tensor* in[2] = {kt_tensor(kt_i32, (int64_t[]){2}, 1, (int32_t[]){1, 2}),
                      kt_tensor(kt_i32, (int64_t[]){2}, 1, (int32_t[]){3, 4})};
  kc_tensor* out = NULL;
  KC_CHECK_OK(kt_call1(kt_op("kt.Late"), (const kc_tensor* const*)in, 2, NULL,
                       0, &out));
  KC_CHECK_INT(((int32_t*)kt_dl(out)->data)[1], 6);
  kt_release(out);
  kt_release(in[0]);
  kt_release(in[1]);
  kc_array* list = NULL;
  KC_CHECK_OK(kc_kernel_registry_list(kt_alloc(), KC_SV_LIT("kt.Late"), &list));
  KC_CHECK_INT(kc_array_get_size(list), 2);
  kc_string_view d;
  KC_CHECK(kc_any_get_string(kc_array_get_item(list, 0), &d));
  KC_CHECK(kt_sv_is(d, "cpu: T in {f32}"));
  KC_CHECK(kc_any_get_string(kc_array_get_item(list, 1), &d));
  KC_CHECK(kt_sv_is(d, "cpu: T in {i32} (priority 3)"));
  kc_object_release(KC_OBJECT(list));
}

/* ---- the construction context
 * ------------------------------------------------- */

static struct {
  char op[32];
  int device_type;
  int32_t inputs, outputs;
  int in_bits, out_bits, bad_bits;
  void* data;
  int data_deletes;
} kt_saw;

static kc_status* kt_inspect_create(kc_kernel_construct_ctx* ctx, void** out) {
  kc_string_view op = kc_kernel_construct_ctx_get_op_name(ctx);
  snprintf(kt_saw.op, sizeof kt_saw.op, "%.*s", (int)op.size, op.data);
  kt_saw.device_type = (int)kc_kernel_construct_ctx_get_device(ctx).device_type;
  kt_saw.inputs = kc_kernel_construct_ctx_get_input_count(ctx);
  kt_saw.outputs = kc_kernel_construct_ctx_get_output_count(ctx);
  kt_saw.in_bits = kc_kernel_construct_ctx_get_input_dtype(ctx, 1).bits;
  kt_saw.out_bits = kc_kernel_construct_ctx_get_output_dtype(ctx, 0).bits;
  kt_saw.bad_bits = kc_kernel_construct_ctx_get_input_dtype(ctx, 7).bits;
  kt_saw.data = kc_kernel_construct_ctx_get_data(ctx);
  *out = NULL; /* no state is fine */
  return NULL;
}

static void kt_data_delete(void* data) {
  (void)data;
  kt_saw.data_deletes++;
}

KC_TEST(kernel_construct_ctx_and_data) {
  memset(&kt_saw, 0, sizeof kt_saw);
  kt_register_op("kt.Look", KT_SPECS("x: T", "y: T"), KT_SPECS("z: T"),
                 KT_SPECS("T: {f64}"), kt_same_shape_fn);
  kc_kernel_builder* b = NULL;
  KC_CHECK_OK(kc_kernel_builder_create("kt.Look", kDLCPU, kt_inspect_create,
                                       kt_add_compute, NULL, &b));
  static int first, second;
  KC_CHECK_OK(kc_kernel_builder_set_data(b, &first, kt_data_delete));
  KC_CHECK_OK(kc_kernel_builder_set_data(b, &second, kt_data_delete));
  KC_CHECK_INT(kt_saw.data_deletes, 1); /* the replaced data */
  KC_CHECK_OK(kc_kernel_registry_register(b));
  kc_tensor* in[2] = {kt_tensor(kt_f64, (int64_t[]){1}, 1, NULL),
                      kt_tensor(kt_f64, (int64_t[]){1}, 1, NULL)};
  kc_tensor* out = NULL;
  KC_CHECK_OK(kt_call1(kt_op("kt.Look"), (const kc_tensor* const*)in, 2, NULL,
                       0, &out));
  KC_CHECK_STR(kt_saw.op, "kt.Look");
  KC_CHECK_INT(kt_saw.device_type, kDLCPU);
  KC_CHECK_INT(kt_saw.inputs, 2);
  KC_CHECK_INT(kt_saw.outputs, 1);
  KC_CHECK_INT(kt_saw.in_bits, 64);
  KC_CHECK_INT(kt_saw.out_bits, 64);
  KC_CHECK_INT(kt_saw.bad_bits, 0);
  KC_CHECK(kt_saw.data == &second);
  kt_release(out);
  kt_release(in[0]);
  kt_release(in[1]);
  /* The data's deleter runs when the kernel goes: after both resets (the
   * cache holds the kernel too); the op reset empties the cache without
   * a function registry reset. */
  kc_kernel_registry_reset();
  KC_CHECK_INT(kt_saw.data_deletes, 1);
  kc_op_registry_reset();
  KC_CHECK_INT(kt_saw.data_deletes, 2);
  /* A builder destroyed unregistered runs it too. */
  KC_CHECK_OK(kc_kernel_builder_create("kt.Look", kDLCPU, NULL, kt_nop_compute,
                                       NULL, &b));
  KC_CHECK_OK(kc_kernel_builder_set_data(b, &first, kt_data_delete));
  kc_kernel_builder_destroy(b);
  KC_CHECK_INT(kt_saw.data_deletes, 3);
}

/* ---- devices
 * -------------------------------------------------------------------- */

static DLDevice kt_ran_on;
static kc_status* kt_device_compute(void* k, kc_kernel_ctx* ctx) {
  (void)k;
  kt_ran_on = kc_kernel_ctx_get_device(ctx);
  if (kc_kernel_ctx_get_stream(ctx) == NULL) {
    return kc_status_create(KC_INTERNAL, "no stream on a CUDA device");
  }
  return NULL;
}

KC_TEST(kernel_device_and_host_memory_args) {
  /* A device kernel that reads `n` from host memory; nothing here touches
   * the device data. The fake backend serves cuda:1. */
  kt_use_fake_cuda();
  setenv("KCALL_FAKE_CUDA_DEVICES", "2", 1);
  kt_register_op("kt.Dev", KT_SPECS("x: f32", "n: i64"), NULL, NULL, NULL);
  kc_kernel_builder* b = NULL;
  KC_CHECK_OK(kc_kernel_builder_create("kt.Dev", kDLCUDA, NULL,
                                       kt_device_compute, NULL, &b));
  KC_CHECK_OK(kc_kernel_builder_add_host_memory_arg(b, "n"));
  KC_CHECK_OK(kc_kernel_registry_register(b));
  int64_t one[1] = {1};
  float fake;
  int64_t n = 4;
  DLTensor x = {&fake, {kDLCUDA, 1}, 1, {kDLFloat, 32, 1}, one, NULL, 0};
  DLTensor nt = {&n, {kDLCPU, 0}, 0, {kDLInt, 64, 1}, NULL, NULL, 0};
  const DLTensor* in[2] = {&x, &nt};
  int32_t count = -1;
  KC_CHECK_OK(
      kc_op_call(kt_op("kt.Dev"), in, 2, NULL, 0, NULL, NULL, 0, &count));
  KC_CHECK_INT(count, 0);
  KC_CHECK_INT(kt_ran_on.device_type, kDLCUDA);
  KC_CHECK_INT(kt_ran_on.device_id, 1);
  /* Without the host-memory declaration the mix is refused. */
  kt_register_op("kt.Dev2", KT_SPECS("x: f32", "n: i64"), NULL, NULL, NULL);
  KC_CHECK_OK(kc_kernel_builder_create("kt.Dev2", kDLCUDA, NULL,
                                       kt_device_compute, NULL, &b));
  KC_CHECK_OK(kc_kernel_registry_register(b));
  KC_CHECK_CODE(
      kc_op_call(kt_op("kt.Dev2"), in, 2, NULL, 0, NULL, NULL, 0, &count),
      KC_INVALID_ARGUMENT,
      "input 1 ('n') is on cpu:0, but the call runs on cuda:1");
  /* No CPU kernel: the message names the device asked for. */
  x.device.device_type = kDLCPU;
  x.device.device_id = 0;
  KC_CHECK_CODE(
      kc_op_call(kt_op("kt.Dev2"), in, 2, NULL, 0, NULL, NULL, 0, &count),
      KC_NOT_FOUND,
      "no kernel for cpu; the kernels of op 'kt.Dev2' "
      "are: cuda: any dtypes");
}

KC_TEST(kernel_none_registered) {
  kt_register_op("kt.Bare", KT_SPECS("x: T"), KT_SPECS("y: T"),
                 KT_SPECS("T: type"), kc_shape_fn_unchanged);
  kc_tensor* in = kt_tensor(kt_f32, (int64_t[]){1}, 1, NULL);
  kc_tensor* out = NULL;
  KC_CHECK_CODE(kt_call1(kt_op("kt.Bare"), (const kc_tensor* const*)&in, 1,
                         NULL, 0, &out),
                KC_NOT_FOUND,
                "no kernel for cpu, T=f32: op 'kt.Bare' has no kernels "
                "registered");
  kt_release(in);
}
