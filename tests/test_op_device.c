/*
 * Eager op calls on a CUDA device, against the fake backend
 * (tests/device/fake_backend.c: "device" memory is host memory), so that
 * the kernels here compute on the pointers they get: the kernel registered
 * for kDLCUDA is selected, outputs and temporaries are device memory, the
 * kernel sees the call's stream, kcall's own stream is waited for, and
 * host inputs and device errors are reported.
 */
#include <stdlib.h>
#include <string.h>

#include "kcall/device.h"
#include "kt_device.h"
#include "kt_ops.h"

static DLDevice kt_gpu(int32_t id) {
  DLDevice d = {kDLCUDA, id};
  return d;
}

/* What the last CUDA kernel saw. */
static struct {
  int calls;
  void* stream;
  DLDevice device;
  void* temp;
} kt_seen;

static void kt_seen_reset(void) { memset(&kt_seen, 0, sizeof kt_seen); }

/* z = x + y + 1000 (so a test tells it from the CPU kernel's x + y), f32,
 * through a temporary of the call, on the fake's host-addressable memory. */
static kc_status* kt_cuda_add(void* k, kc_kernel_ctx* ctx) {
  (void)k;
  kt_seen.calls++;
  kt_seen.stream = kc_kernel_ctx_get_stream(ctx);
  kt_seen.device = kc_kernel_ctx_get_device(ctx);
  const DLTensor* x = kc_kernel_ctx_get_input(ctx, 0);
  const DLTensor* y = kc_kernel_ctx_get_input(ctx, 1);
  DLTensor* z = kc_kernel_ctx_get_output(ctx, 0);
  int64_t n = kc_dltensor_get_numel(z);
  void* mem = NULL;
  kc_status* st = kc_kernel_ctx_allocate_temp(ctx, (size_t)n * sizeof(float) + 1,
                                              256, &mem);
  if (st) return st;
  float* tmp = mem;
  kt_seen.temp = tmp;
  for (int64_t i = 0; i < n; ++i) {
    tmp[i] = ((const float*)x->data)[i] + ((const float*)y->data)[i];
  }
  for (int64_t i = 0; i < n; ++i) ((float*)z->data)[i] = tmp[i] + 1000.0f;
  return NULL;
}

static void kt_register_cuda_kernel(const char* op, kc_kernel_compute_fn fn,
                                    const char* host_arg) {
  kc_kernel_builder* b = NULL;
  KC_CHECK_OK(kc_kernel_builder_create(op, kDLCUDA, NULL, fn, NULL, &b));
  if (host_arg) KC_CHECK_OK(kc_kernel_builder_add_host_memory_arg(b, host_arg));
  KC_CHECK_OK(kc_kernel_registry_register(b));
}

/* The op kt.Add2 (x: T, y: T) -> (z: T) with the CPU kernel x + y and the
 * CUDA one above. */
static const kc_op* kt_add2(void) {
  kt_register_op("kt.Add2", KT_SPECS("x: T", "y: T"), KT_SPECS("z: T"),
                 KT_SPECS("T: {f32}"), kc_shape_fn_unchanged);
  kt_register_kernel("kt.Add2", NULL, kt_add_compute, NULL, NULL, NULL, 0, 0);
  kt_register_cuda_kernel("kt.Add2", kt_cuda_add, NULL);
  return kt_op("kt.Add2");
}

/* A tensor on `device` holding `values`, copied in with the device API. */
static kc_tensor* kt_device_tensor(DLDevice device, const float* values,
                                   int64_t n) {
  kc_tensor* t = NULL;
  KC_CHECK_OK(kc_tensor_create(NULL, &n, 1, kt_f32, device, &t));
  if (!t) return NULL;
  KC_CHECK_OK(kc_device_memcpy(device, kt_dl(t)->data, values,
                               (size_t)n * sizeof(float),
                               KC_MEMCPY_HOST_TO_DEVICE, NULL));
  return t;
}

static void kt_check_values(const kc_tensor* t, const float* want, int64_t n) {
  float got[16];
  KC_CHECK(n <= 16);
  KC_CHECK_OK(kc_device_memcpy(kt_dl(t)->device, got, kt_dl(t)->data,
                               (size_t)n * sizeof(float),
                               KC_MEMCPY_DEVICE_TO_HOST, NULL));
  for (int64_t i = 0; i < n; ++i) KC_CHECK(got[i] == want[i]);
}

KC_TEST(op_device_kernel_on_default_stream) {
  kt_use_fake_cuda();
  const kc_op* op = kt_add2();
  const float xs[3] = {1, 2, 3}, ys[3] = {10, 20, 30};
  kc_tensor* x = kt_device_tensor(kt_gpu(0), xs, 3);
  kc_tensor* y = kt_device_tensor(kt_gpu(0), ys, 3);
  kt_fake_cuda_stats before = kt_fake_cuda_stats_read();
  void* own = NULL;
  KC_CHECK_OK(kc_device_get_default_stream(kt_gpu(0), &own));
  KC_CHECK(own != NULL);
  kt_seen_reset();
  const DLTensor* in[2] = {kt_dl(x), kt_dl(y)};
  kc_tensor* z = NULL;
  int32_t count = 0;
  KC_CHECK_OK(kc_op_call(op, in, 2, NULL, 0, NULL, &z, 1, &count));
  KC_CHECK_INT(count, 1);
  /* The CUDA kernel ran, on kcall's stream, and the call waited for it. */
  KC_CHECK_INT(kt_seen.calls, 1);
  KC_CHECK(kt_seen.stream == own);
  KC_CHECK_INT(kt_seen.device.device_type, kDLCUDA);
  KC_CHECK(((uintptr_t)kt_seen.temp & 255u) == 0);
  kt_fake_cuda_stats after = kt_fake_cuda_stats_read();
  KC_CHECK(after.synchronizes > before.synchronizes);
  KC_CHECK(after.last_stream == own); /* the temporary's free */
  KC_CHECK_INT(kt_dl(z)->device.device_type, kDLCUDA);
  KC_CHECK_INT(kt_dl(z)->device.device_id, 0);
  const float want[3] = {1011, 1022, 1033};
  kt_check_values(z, want, 3);
  /* The temporary is gone; the output is the one allocation the call left. */
  KC_CHECK_INT(after.live_allocations, before.live_allocations + 1);
  kt_release(z);
  KC_CHECK_INT(kt_fake_cuda_stats_read().live_allocations, before.live_allocations);
  /* The same op on host tensors still runs the CPU kernel. */
  kc_tensor* hx = kt_tensor(kt_f32, (int64_t[]){3}, 1, xs);
  kc_tensor* hy = kt_tensor(kt_f32, (int64_t[]){3}, 1, ys);
  kc_tensor* hz = NULL;
  const DLTensor* hin[2] = {kt_dl(hx), kt_dl(hy)};
  kt_seen_reset();
  KC_CHECK_OK(kc_op_call(op, hin, 2, NULL, 0, NULL, &hz, 1, &count));
  KC_CHECK_INT(kt_seen.calls, 0);
  KC_CHECK(((const float*)kt_dl(hz)->data)[2] == 33.0f);
  kt_release(hx);
  kt_release(hy);
  kt_release(hz);
  kt_release(x);
  kt_release(y);
}

KC_TEST(op_device_caller_stream) {
  kt_use_fake_cuda();
  setenv("KCALL_FAKE_CUDA_DEVICES", "2", 1);
  const kc_op* op = kt_add2();
  const float xs[2] = {1, 2}, ys[2] = {3, 4};
  kc_tensor* x = kt_device_tensor(kt_gpu(1), xs, 2);
  kc_tensor* y = kt_device_tensor(kt_gpu(1), ys, 2);
  void* stream = NULL;
  KC_CHECK_OK(kc_device_stream_create(kt_gpu(1), &stream));
  kt_fake_cuda_stats before = kt_fake_cuda_stats_read();
  kc_op_call_options options = {sizeof options, NULL, NULL, stream};
  const DLTensor* in[2] = {kt_dl(x), kt_dl(y)};
  kc_tensor* z = NULL;
  int32_t count = 0;
  kt_seen_reset();
  KC_CHECK_OK(kc_op_call(op, in, 2, NULL, 0, &options, &z, 1, &count));
  KC_CHECK(kt_seen.stream == stream);
  KC_CHECK_INT(kt_seen.device.device_id, 1);
  kt_fake_cuda_stats after = kt_fake_cuda_stats_read();
  /* Queued on the caller's stream, not waited for. */
  KC_CHECK_INT(after.synchronizes, before.synchronizes);
  KC_CHECK(after.last_stream == stream);
  KC_CHECK_INT(kt_dl(z)->device.device_id, 1);
  KC_CHECK_OK(kc_device_stream_synchronize(kt_gpu(1), stream));
  const float want[2] = {1004, 1006};
  kt_check_values(z, want, 2);
  /* An options struct from before the field existed: kcall's stream. */
  kc_op_call_options old = {offsetof(kc_op_call_options, stream), NULL, NULL,
                            stream};
  kc_tensor* z2 = NULL;
  KC_CHECK_OK(kc_op_call(op, in, 2, NULL, 0, &old, &z2, 1, &count));
  void* own = NULL;
  KC_CHECK_OK(kc_device_get_default_stream(kt_gpu(1), &own));
  KC_CHECK(kt_seen.stream == own);
  /* call_into: the caller's device outputs, and one on the wrong device. */
  kc_tensor* into = kt_device_tensor(kt_gpu(1), xs, 2);
  DLTensor* outs[1] = {(DLTensor*)(uintptr_t)kt_dl(into)};
  KC_CHECK_OK(kc_op_call_into(op, in, 2, NULL, 0, &options, outs, 1));
  KC_CHECK_OK(kc_device_stream_synchronize(kt_gpu(1), stream));
  kt_check_values(into, want, 2);
  kc_tensor* wrong = kt_device_tensor(kt_gpu(0), xs, 2);
  outs[0] = (DLTensor*)(uintptr_t)kt_dl(wrong);
  KC_CHECK_CODE(kc_op_call_into(op, in, 2, NULL, 0, &options, outs, 1),
                KC_INVALID_ARGUMENT,
                "calling op 'kt.Add2': output 0: expected a compact f32 "
                "tensor on cuda:1 of the shape the op produces (got one on "
                "cuda:0)");
  kt_release(wrong);
  kt_release(into);
  kt_release(z2);
  kt_release(z);
  kt_release(x);
  kt_release(y);
  kc_device_stream_destroy(kt_gpu(1), stream);
}

/* Reads n (a host-memory input) and writes count (a host-memory output). */
static kc_status* kt_cuda_host_args(void* k, kc_kernel_ctx* ctx) {
  (void)k;
  kt_seen.calls++;
  const DLTensor* n = kc_kernel_ctx_get_input(ctx, 1);
  DLTensor* count = kc_kernel_ctx_get_output(ctx, 1);
  KC_CHECK_INT(n->device.device_type, kDLCPU);
  KC_CHECK_INT(count->device.device_type, kDLCPU);
  KC_CHECK_INT(kc_kernel_ctx_get_output(ctx, 0)->device.device_type, kDLCUDA);
  *(int64_t*)count->data = *(const int64_t*)n->data * 2;
  return NULL;
}

KC_TEST(op_device_host_inputs) {
  kt_use_fake_cuda();
  const kc_op* op = kt_add2();
  const float xs[2] = {1, 2};
  kc_tensor* gx = kt_device_tensor(kt_gpu(0), xs, 2);
  kc_tensor* hy = kt_tensor(kt_f32, (int64_t[]){2}, 1, xs);
  kc_tensor* z = NULL;
  int32_t count = 0;
  /* A host input to a CUDA kernel that did not ask for one, either way
   * round. */
  const DLTensor* in[2] = {kt_dl(gx), kt_dl(hy)};
  KC_CHECK_CODE(kc_op_call(op, in, 2, NULL, 0, NULL, &z, 1, &count),
                KC_INVALID_ARGUMENT,
                "calling op 'kt.Add2': input 1 ('y') is on cpu:0, but the "
                "call runs on cuda:0");
  const DLTensor* swapped[2] = {kt_dl(hy), kt_dl(gx)};
  KC_CHECK_CODE(kc_op_call(op, swapped, 2, NULL, 0, NULL, &z, 1, &count),
                KC_INVALID_ARGUMENT,
                "input 0 ('x') is on cpu:0, but the call runs on cuda:0");
  KC_CHECK(z == NULL);
  /* An op whose CUDA kernel keeps `n` and `count` in host memory. */
  kt_register_op("kt.HostArgs", KT_SPECS("x: f32", "n: i64"),
                 KT_SPECS("y: f32", "count: i64"), NULL, NULL);
  kc_kernel_builder* b = NULL;
  KC_CHECK_OK(kc_kernel_builder_create("kt.HostArgs", kDLCUDA, NULL,
                                       kt_cuda_host_args, NULL, &b));
  KC_CHECK_OK(kc_kernel_builder_add_host_memory_arg(b, "n"));
  KC_CHECK_OK(kc_kernel_builder_add_host_memory_arg(b, "count"));
  KC_CHECK_OK(kc_kernel_builder_set_priority(b, 1));
  KC_CHECK_OK(kc_kernel_registry_register(b));
  int64_t n = 21;
  int64_t scalar = 0;
  DLTensor nt = {&n, {kDLCPU, 0}, 0, kt_i64, &scalar, NULL, 0};
  const DLTensor* hin[2] = {kt_dl(gx), &nt};
  /* Shapes the kernel knows: set them through call_into. */
  kc_tensor* y = kt_device_tensor(kt_gpu(0), xs, 2);
  kc_tensor* c = kt_tensor(kt_i64, NULL, 0, NULL);
  DLTensor* given[2] = {(DLTensor*)(uintptr_t)kt_dl(y),
                        (DLTensor*)(uintptr_t)kt_dl(c)};
  kt_seen_reset();
  KC_CHECK_OK(kc_op_call_into(kt_op("kt.HostArgs"), hin, 2, NULL, 0, NULL,
                              given, 2));
  KC_CHECK_INT(kt_seen.calls, 1);
  KC_CHECK(*(const int64_t*)kt_dl(c)->data == 42);
  /* The host-memory output given on the device is refused. */
  given[1] = (DLTensor*)(uintptr_t)kt_dl(y);
  KC_CHECK_CODE(kc_op_call_into(kt_op("kt.HostArgs"), hin, 2, NULL, 0, NULL,
                                given, 2),
                KC_INVALID_ARGUMENT, "output 1: expected a compact i64 tensor "
                "on cpu:0");
  kt_release(y);
  kt_release(c);
  kt_release(gx);
  kt_release(hy);
}

static kc_status* kt_cuda_fails(void* k, kc_kernel_ctx* ctx) {
  (void)k;
  void* tmp = NULL;
  kc_status* st = kc_kernel_ctx_allocate_temp(ctx, 64, 0, &tmp);
  if (st) return st;
  /* Device temporaries are at most 256-aligned. */
  KC_CHECK_CODE(kc_kernel_ctx_allocate_temp(ctx, 64, 512, &tmp),
                KC_INVALID_ARGUMENT,
                "kc_kernel_ctx_allocate_temp: alignment 512 on cuda:0: "
                "expected a power of two up to 256");
  return kc_status_create(KC_DATA_LOSS, "kt.Fails: the kernel gave up");
}

KC_TEST(op_device_errors) {
  kt_use_fake_cuda();
  const kc_op* op = kt_add2();
  kt_register_op("kt.Fails", KT_SPECS("x: f32"), KT_SPECS("y: f32"), NULL,
                 kc_shape_fn_unchanged);
  kt_register_cuda_kernel("kt.Fails", kt_cuda_fails, NULL);
  const float xs[2] = {1, 2};
  kc_tensor* x = kt_device_tensor(kt_gpu(0), xs, 2);
  kt_fake_cuda_stats before = kt_fake_cuda_stats_read();
  const DLTensor* in[2] = {kt_dl(x), kt_dl(x)};
  kc_tensor* z = NULL;
  int32_t count = 0;
  /* The kernel's failure; its output and temporary are freed, and kcall's
   * stream was still waited for. */
  KC_CHECK_CODE(kc_op_call(kt_op("kt.Fails"), in, 1, NULL, 0, NULL, &z, 1,
                           &count),
                KC_DATA_LOSS, "calling op 'kt.Fails': kt.Fails: the kernel "
                "gave up");
  KC_CHECK(z == NULL);
  kt_fake_cuda_stats after = kt_fake_cuda_stats_read();
  KC_CHECK_INT(after.live_allocations, before.live_allocations);
  KC_CHECK(after.synchronizes > before.synchronizes);
  /* A stray stream: the device refuses the temporary's allocation. */
  int bogus = 0;
  kc_op_call_options options = {sizeof options, NULL, NULL, &bogus};
  KC_CHECK_CODE(kc_op_call(op, in, 2, NULL, 0, &options, &z, 1, &count),
                KC_INTERNAL, "allocating 9 temporary bytes on cuda:0",
                "invalid stream");
  KC_CHECK(z == NULL);
  KC_CHECK_INT(kt_fake_cuda_stats_read().live_allocations,
               before.live_allocations);
  /* A device past the last one. */
  DLTensor far = *kt_dl(x);
  far.device.device_id = 3;
  const DLTensor* far_in[2] = {&far, &far};
  KC_CHECK_CODE(kc_op_call(op, far_in, 2, NULL, 0, NULL, &z, 1, &count),
                KC_OUT_OF_RANGE, "cuda:3");
  kt_release(x);
}

KC_TEST(op_device_no_backend) {
  setenv("KCALL_CUDA_BACKEND", "/nonexistent/libkcall_cuda.so", 1);
  const kc_op* op = kt_add2();
  float fake[2] = {1, 2};
  int64_t shape[1] = {2};
  DLTensor x = {fake, {kDLCUDA, 0}, 1, kt_f32, shape, NULL, 0};
  const DLTensor* in[2] = {&x, &x};
  kc_tensor* z = NULL;
  int32_t count = 0;
  kt_seen_reset();
  KC_CHECK_CODE(kc_op_call(op, in, 2, NULL, 0, NULL, &z, 1, &count),
                KC_FAILED_PRECONDITION,
                "calling op 'kt.Add2': no CUDA device: ");
  KC_CHECK_INT(kt_seen.calls, 0);
  KC_CHECK(z == NULL);
}
