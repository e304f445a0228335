/* Programs on a CUDA device, run through the fake backend
 * (tests/device/fake_backend.c): its "device" memory is host memory, so
 * the GPU-convention targets below compute on the pointers they get. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt_device.h"
#include "kt_xla_ffi.h"

static DLDataType kt_f32(void) { return kc_dtype_make(kDLFloat, 32, 1); }
static DLDevice kt_cuda0(void) { return (DLDevice){kDLCUDA, 0}; }

static kc_program* kt_parse(const char* text) {
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_parse(kc_sv(text), &p));
  return p;
}

static kc_status* kt_compile_cuda(kc_program* p, uint32_t flags, kc_executable** out) {
  kc_compile_options co = {.struct_size = sizeof co, .platform = KC_PLATFORM_CUDA,
                           .device_id = 0, .flags = flags};
  return kc_program_compile(p, &co, out);
}

/* A host f32 vector view. */
static DLTensor kt_host_vec(float* data, int64_t* shape) {
  DLTensor t = {data, {kDLCPU, 0}, 1, kt_f32(), shape, NULL, 0};
  return t;
}

/* The floats of a device tensor, copied to the host through the device API. */
static void kt_read(const DLTensor* t, float* out, int64_t n) {
  int64_t shape[1] = {n};
  DLTensor h = kt_host_vec(out, shape);
  h.ndim = t->ndim;
  h.shape = t->shape;
  KC_CHECK_OK(kc_dltensor_copy(t, &h, NULL));
}

/* ---- built-in instructions ---------------------------------------------------------- */

KC_TEST(cuda_program_builtins) {
  kt_use_fake_cuda();
  kt_fake_cuda_stats before;
  {
    KC_CHECK_OK(kc_device_check(kt_cuda0()));
    before = kt_fake_cuda_stats_read();
  }
  kc_program* p = kt_parse(
      "HloModule m\nENTRY main {\n"
      " x = f32[4] parameter(0)\n"
      " s = f32[] parameter(1)\n"
      " k = f32[4] constant({10, 20, 30, 40})\n"
      " b = f32[4] broadcast(s), dimensions={}\n"
      " i = s32[4] iota(), iota_dimension=0\n"
      " f = f32[4] convert(i)\n"
      " a = f32[4] add(x, k)\n"
      " m = f32[4] multiply(a, b)\n"
      " n = f32[4] negate(f)\n"
      " sel = f32[4] maximum(m, n)\n"
      " r = f32[2,2] reshape(sel)\n"
      " ROOT t = (f32[2,2], f32[4]) tuple(r, x)\n}\n");
  kc_executable* exe = NULL;
  KC_CHECK_OK(kt_compile_cuda(p, 0, &exe));
  kc_program_destroy(p);
  float x[4] = {1, 2, 3, 4}, s = 2;
  int64_t shape4[1] = {4};
  DLTensor tx = kt_host_vec(x, shape4);
  DLTensor ts = {&s, {kDLCPU, 0}, 0, kt_f32(), NULL, NULL, 0};
  const DLTensor* in[2] = {&tx, &ts};
  kc_tensor* out[2] = {NULL, NULL};
  kc_execute_options o = {.struct_size = sizeof o, .allocator = kt_alloc()};
  for (int rep = 0; rep < 3; ++rep) {
    KC_CHECK_OK(kc_executable_execute(exe, in, 2, &o, out));
    const DLTensor* r = kc_tensor_get_dltensor(out[0]);
    KC_CHECK(r->device.device_type == kDLCUDA && r->device.device_id == 0);
    KC_CHECK(r->ndim == 2 && r->shape[0] == 2 && r->shape[1] == 2);
    float got[4], back[4];
    kt_read(r, got, 4);
    /* m = (x + k) * 2 = 22, 44, 66, 88, above -iota. */
    KC_CHECK(got[0] == 22 && got[1] == 44 && got[2] == 66 && got[3] == 88);
    kt_read(kc_tensor_get_dltensor(out[1]), back, 4);
    KC_CHECK(memcmp(back, x, sizeof x) == 0);
    kc_object_release(KC_OBJECT(out[0]));
    kc_object_release(KC_OBJECT(out[1]));
  }
  /* A negative s: maximum takes -iota. */
  s = -1;
  KC_CHECK_OK(kc_executable_execute(exe, in, 2, &o, out));
  float got[4];
  kt_read(kc_tensor_get_dltensor(out[0]), got, 4);
  KC_CHECK(got[0] == 0 && got[1] == -1 && got[2] == -2 && got[3] == -3);
  kc_object_release(KC_OBJECT(out[0]));
  kc_object_release(KC_OBJECT(out[1]));
  kt_fake_cuda_stats mid = kt_fake_cuda_stats_read();
  KC_CHECK(mid.kernels > before.kernels);
  kc_executable_destroy(exe);
  kt_fake_cuda_stats after = kt_fake_cuda_stats_read();
  /* Constants, run states, staging: all given back. */
  KC_CHECK(after.live_allocations == before.live_allocations);
}

KC_TEST(cuda_program_refuses_host_only_instructions) {
  kt_use_fake_cuda();
  kc_program* p = kt_parse(
      "HloModule m\nENTRY main {\n"
      " a = f32[2,2] parameter(0)\n"
      " ROOT d = f32[2,2] dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n");
  kc_executable* exe = NULL;
  KC_CHECK_CODE(kt_compile_cuda(p, 0, &exe), KC_UNIMPLEMENTED, "dot is not available on CUDA",
                "instruction 'd'", "line 4");
  KC_CHECK(exe == NULL);
  kc_program_destroy(p);
  p = kt_parse(
      "HloModule m\nENTRY main {\n"
      " a = f32[2,3] parameter(0)\n"
      " ROOT t = f32[3,2] transpose(a), dimensions={1,0}\n}\n");
  KC_CHECK_CODE(kt_compile_cuda(p, 0, &exe), KC_UNIMPLEMENTED,
                "transpose is not available on CUDA", "instruction 't'");
  kc_program_destroy(p);
  p = kt_parse(
      "HloModule m\nENTRY main {\n"
      " a = f32[4,2] parameter(0)\n i = s32[3] parameter(1)\n"
      " ROOT g = f32[3,2] gather(a, i), offset_dims={1}, collapsed_slice_dims={0}, "
      "start_index_map={0}, index_vector_dim=1, slice_sizes={1,2}\n}\n");
  KC_CHECK_CODE(kt_compile_cuda(p, 0, &exe), KC_UNIMPLEMENTED,
                "gather is not available on CUDA", "instruction 'g'");
  kc_program_destroy(p);
  /* A scalar bound of clamp is not what the backend's kernel takes. */
  p = kt_parse(
      "HloModule m\nENTRY main {\n"
      " a = f32[3] parameter(0)\n lo = f32[] constant(0)\n hi = f32[] constant(1)\n"
      " ROOT c = f32[3] clamp(lo, a, hi)\n}\n");
  KC_CHECK_CODE(kt_compile_cuda(p, 0, &exe), KC_UNIMPLEMENTED, "clamp is not available on CUDA",
                "no scalar operands");
  kc_program_destroy(p);
  /* An op the backend has no kernel for, for these dtypes (the fake has
   * none for compare). */
  p = kt_parse(
      "HloModule m\nENTRY main {\n"
      " a = f32[3] parameter(0)\n"
      " ROOT c = pred[3] compare(a, a), direction=GT\n}\n");
  KC_CHECK_CODE(kt_compile_cuda(p, 0, &exe), KC_UNIMPLEMENTED,
                "compare is not available on CUDA for f32 -> pred", "instruction 'c'");
  kc_program_destroy(p);
  /* A device that is not there. */
  p = kt_parse("HloModule m\nENTRY main {\n ROOT a = f32[3] parameter(0)\n}\n");
  kc_compile_options co = {.struct_size = sizeof co, .platform = KC_PLATFORM_CUDA,
                           .device_id = 3};
  KC_CHECK_CODE(kc_program_compile(p, &co, &exe), KC_OUT_OF_RANGE, "CUDA device 3");
  co.device_id = 0;
  co.flags = 0x80;
  KC_CHECK_CODE(kc_program_compile(p, &co, &exe), KC_INVALID_ARGUMENT, "unknown compile flags 0x80");
  kc_program_destroy(p);
}

/* ---- the GPU convention, with XLA's nine-entry example ------------------------------ */

/* What the target saw, for the test to check after the run. */
static struct {
  int calls;
  void* stream;
  void* buffers[9];
  void* param0_table[3];
  void* subtuple_table[2];
} kt_seen;

/* operand 0: (f32[2], (f32[2], f32[2]), f32[2]); result (f32[2], f32[2]):
 * out0 = subbuf0 + subbuf1, out1 = subbuf2 * subbuf3. Fills the root
 * tuple, as the convention asks. */
static void kt_nine(void* stream, void** buffers, const char* opaque, size_t len) {
  (void)opaque;
  (void)len;
  kt_seen.calls++;
  kt_seen.stream = stream;
  memcpy(kt_seen.buffers, buffers, sizeof kt_seen.buffers);
  memcpy(kt_seen.param0_table, buffers[0], sizeof kt_seen.param0_table);
  memcpy(kt_seen.subtuple_table, buffers[2], sizeof kt_seen.subtuple_table);
  const float* s0 = buffers[1];
  const float* s1 = buffers[3];
  const float* s2 = buffers[4];
  const float* s3 = buffers[5];
  float* o0 = buffers[7];
  float* o1 = buffers[8];
  for (int i = 0; i < 2; ++i) {
    o0[i] = s0[i] + s1[i];
    o1[i] = s2[i] * s3[i];
  }
  void** root = buffers[6];
  root[0] = buffers[7];
  root[1] = buffers[8];
}

static const char* const kt_nine_hlo =
    "HloModule nine\nENTRY main {\n"
    " a = f32[2] parameter(0)\n b = f32[2] parameter(1)\n"
    " c = f32[2] parameter(2)\n d = f32[2] parameter(3)\n"
    " sub = (f32[2], f32[2]) tuple(b, c)\n"
    " p0 = (f32[2], (f32[2], f32[2]), f32[2]) tuple(a, sub, d)\n"
    " cc = (f32[2], f32[2]) custom-call(p0), custom_call_target=\"kt.nine\", "
    "api_version=API_VERSION_%s\n"
    " g0 = f32[2] get-tuple-element(cc), index=0\n"
    " g1 = f32[2] get-tuple-element(cc), index=1\n"
    " ROOT r = (f32[2], f32[2]) tuple(g1, g0)\n}\n";

KC_TEST(cuda_program_gpu_call_tuples) {
  kt_use_fake_cuda();
  KC_CHECK_OK(kc_xcall_register(kc_sv("kt.nine"), KC_PLATFORM_CUDA, KC_XCALL_API_ORIGINAL,
                                (void (*)(void))kt_nine, KC_REGISTER_OVERRIDE));
  char text[1024];
  snprintf(text, sizeof text, kt_nine_hlo, "ORIGINAL");
  kc_program* p = kt_parse(text);
  kc_executable* exe = NULL;
  KC_CHECK_OK(kt_compile_cuda(p, 0, &exe));
  kc_program_destroy(p);
  /* Inputs already on the device. */
  float host[4][2] = {{1, 2}, {3, 4}, {5, 6}, {7, 8}};
  int64_t shape[1] = {2};
  kc_tensor* dev[4] = {NULL, NULL, NULL, NULL};
  const DLTensor* in[4];
  for (int i = 0; i < 4; ++i) {
    KC_CHECK_OK(kc_tensor_create(kt_alloc(), shape, 1, kt_f32(), kt_cuda0(), &dev[i]));
    in[i] = kc_tensor_get_dltensor(dev[i]);
    DLTensor h = kt_host_vec(host[i], shape);
    KC_CHECK_OK(kc_dltensor_copy(&h, in[i], NULL));
  }
  memset(&kt_seen, 0, sizeof kt_seen);
  kc_tensor* out[2] = {NULL, NULL};
  KC_CHECK_OK(kc_executable_execute(exe, in, 4, NULL, out));
  KC_CHECK(kt_seen.calls == 1);
  void* stream = NULL;
  KC_CHECK_OK(kc_device_get_default_stream(kt_cuda0(), &stream));
  KC_CHECK(kt_seen.stream == stream && stream != NULL);
  /* Operand leaves are the device inputs, used in place. */
  KC_CHECK(kt_seen.buffers[1] == in[0]->data);
  KC_CHECK(kt_seen.buffers[3] == in[1]->data);
  KC_CHECK(kt_seen.buffers[4] == in[2]->data);
  KC_CHECK(kt_seen.buffers[5] == in[3]->data);
  /* The tuple entries are device tables of their elements' addresses. */
  KC_CHECK(kt_seen.param0_table[0] == kt_seen.buffers[1]);
  KC_CHECK(kt_seen.param0_table[1] == kt_seen.buffers[2]);
  KC_CHECK(kt_seen.param0_table[2] == kt_seen.buffers[5]);
  KC_CHECK(kt_seen.subtuple_table[0] == kt_seen.buffers[3]);
  KC_CHECK(kt_seen.subtuple_table[1] == kt_seen.buffers[4]);
  /* The result's leaves are the outputs (swapped by the root tuple), and
   * the root tuple holds what the callee wrote. */
  const DLTensor* o0 = kc_tensor_get_dltensor(out[0]);
  const DLTensor* o1 = kc_tensor_get_dltensor(out[1]);
  KC_CHECK(kt_seen.buffers[7] == o1->data);
  KC_CHECK(kt_seen.buffers[8] == o0->data);
  KC_CHECK(kt_seen.buffers[6] != NULL);
  void* root[2];
  memcpy(root, kt_seen.buffers[6], sizeof root);
  KC_CHECK(root[0] == kt_seen.buffers[7] && root[1] == kt_seen.buffers[8]);
  float r0[2], r1[2];
  kt_read(o0, r0, 2);
  kt_read(o1, r1, 2);
  KC_CHECK(r0[0] == 5 * 7 && r0[1] == 6 * 8); /* g1 */
  KC_CHECK(r1[0] == 1 + 3 && r1[1] == 2 + 4); /* g0 */
  kc_object_release(KC_OBJECT(out[0]));
  kc_object_release(KC_OBJECT(out[1]));
  for (int i = 0; i < 4; ++i) kc_object_release(KC_OBJECT(dev[i]));
  kc_executable_destroy(exe);
  kc_xcall_registry_reset();
}

static void kt_failing_gpu(void* stream, void** buffers, const char* opaque, size_t len,
                           kc_xcall_status* status) {
  (void)stream;
  (void)buffers;
  kc_xcall_status_set_failure(status, opaque, len);
}

KC_TEST(cuda_program_gpu_call_failure) {
  kt_use_fake_cuda();
  KC_CHECK_OK(kc_device_check(kt_cuda0()));
  kt_fake_cuda_stats before = kt_fake_cuda_stats_read();
  KC_CHECK_OK(kc_xcall_register(kc_sv("kt.fails"), KC_PLATFORM_CUDA,
                                KC_XCALL_API_STATUS_RETURNING, (void (*)(void))kt_failing_gpu,
                                0));
  kc_program* p = kt_parse(
      "HloModule m\nENTRY main {\n a = f32[2] parameter(0)\n"
      " ROOT cc = f32[2] custom-call(a), custom_call_target=\"kt.fails\", "
      "api_version=API_VERSION_STATUS_RETURNING, backend_config=\"bad input\"\n}\n");
  kc_executable* exe = NULL;
  KC_CHECK_OK(kt_compile_cuda(p, 0, &exe));
  kc_program_destroy(p);
  float x[2] = {1, 2};
  int64_t shape[1] = {2};
  DLTensor tx = kt_host_vec(x, shape);
  const DLTensor* in[1] = {&tx};
  kc_tensor* out[1] = {(kc_tensor*)1};
  kc_execute_options o = {.struct_size = sizeof o, .allocator = kt_alloc()};
  KC_CHECK_CODE(kc_executable_execute(exe, in, 1, &o, out), KC_INTERNAL,
                "in custom call 'kt.fails' (instruction 'cc'): bad input");
  KC_CHECK(out[0] == NULL);
  /* The host convention is not looked up for CUDA, and the reverse. */
  p = kt_parse(
      "HloModule m\nENTRY main {\n a = f32[2] parameter(0)\n"
      " ROOT cc = f32[2] custom-call(a), custom_call_target=\"kt.fails\", "
      "api_version=API_VERSION_STATUS_RETURNING\n}\n");
  kc_executable* host = NULL;
  KC_CHECK_CODE(kc_program_compile(p, NULL, &host), KC_NOT_FOUND, "kt.fails@Host");
  kc_program_destroy(p);
  kc_executable_destroy(exe);
  KC_CHECK(kt_fake_cuda_stats_read().live_allocations == before.live_allocations);
  kc_xcall_registry_reset();
}

/* ---- typed handlers ---------------------------------------------------------------------- */

static void* kt_typed_stream;

static kc_status* kt_typed_double(kc_xcall_frame* f) {
  if (f->stage != KC_XCALL_STAGE_EXECUTE) return NULL;
  kt_typed_stream = f->stream;
  const DLTensor* a = &f->args[0];
  const DLTensor* r = &f->results[0];
  if (a->device.device_type != kDLCUDA || a->device.device_id != 0 ||
      r->device.device_type != kDLCUDA) {
    return kc_status_create(KC_FAILED_PRECONDITION, "expected cuda:0 buffers, got type %d",
                            (int)a->device.device_type);
  }
  if (!f->stream) return kc_status_create(KC_FAILED_PRECONDITION, "no stream");
  const float* x = a->data;
  float* y = r->data;
  for (int64_t i = 0; i < a->shape[0]; ++i) y[i] = 2 * x[i];
  return NULL;
}

KC_TEST(cuda_program_typed_stream_and_execute_into) {
  kt_use_fake_cuda();
  KC_CHECK_OK(kc_device_check(kt_cuda0()));
  kt_fake_cuda_stats before = kt_fake_cuda_stats_read();
  kc_xcall_buffer_spec spec = {kt_f32(), 1};
  kc_xcall_signature sig = {.struct_size = sizeof sig, .num_args = 1, .args = &spec,
                            .num_results = 1, .results = &spec};
  KC_CHECK_OK(kc_xcall_register_typed(kc_sv("kt.double"), KC_PLATFORM_CUDA, &sig,
                                      kt_typed_double, NULL, NULL, 0));
  kc_program* p = kt_parse(
      "HloModule m\nENTRY main {\n a = f32[3] parameter(0)\n"
      " cc = f32[3] custom-call(a), custom_call_target=\"kt.double\", "
      "api_version=API_VERSION_TYPED_FFI\n"
      " ROOT n = f32[3] negate(cc)\n}\n");
  kc_executable* exe = NULL;
  KC_CHECK_OK(kt_compile_cuda(p, 0, &exe));
  kc_program_destroy(p);
  float x[3] = {1, 2, 3};
  int64_t shape[1] = {3};
  DLTensor tx = kt_host_vec(x, shape);
  const DLTensor* in[1] = {&tx};
  kc_tensor* dst = NULL;
  KC_CHECK_OK(kc_tensor_create(kt_alloc(), shape, 1, kt_f32(), kt_cuda0(), &dst));
  const DLTensor* outs[1] = {kc_tensor_get_dltensor(dst)};
  /* The caller's stream: the run is queued there and not waited for. */
  void* stream = NULL;
  KC_CHECK_OK(kc_device_stream_create(kt_cuda0(), &stream));
  kt_fake_cuda_stats s0 = kt_fake_cuda_stats_read();
  kc_execute_options o = {.struct_size = sizeof o, .allocator = kt_alloc(), .stream = stream};
  KC_CHECK_OK(kc_executable_execute_into(exe, in, 1, &o, outs, 1));
  kt_fake_cuda_stats s1 = kt_fake_cuda_stats_read();
  KC_CHECK(kt_typed_stream == stream);
  KC_CHECK(s1.last_stream == stream);
  KC_CHECK(s1.synchronizes == s0.synchronizes);
  KC_CHECK_OK(kc_device_stream_synchronize(kt_cuda0(), stream));
  float y[3];
  kt_read(outs[0], y, 3);
  KC_CHECK(y[0] == -2 && y[1] == -4 && y[2] == -6);
  /* Again on the same stream: the run state is reused, in order. */
  x[0] = 10;
  KC_CHECK_OK(kc_executable_execute_into(exe, in, 1, &o, outs, 1));
  KC_CHECK_OK(kc_device_stream_synchronize(kt_cuda0(), stream));
  kt_read(outs[0], y, 3);
  KC_CHECK(y[0] == -20);
  /* kcall's default stream: waited for before returning. */
  o.stream = NULL;
  x[0] = 100;
  KC_CHECK_OK(kc_executable_execute_into(exe, in, 1, &o, outs, 1));
  void* def = NULL;
  KC_CHECK_OK(kc_device_get_default_stream(kt_cuda0(), &def));
  KC_CHECK(kt_typed_stream == def);
  KC_CHECK(kt_fake_cuda_stats_read().synchronizes > s1.synchronizes);
  kt_read(outs[0], y, 3);
  KC_CHECK(y[0] == -200 && y[2] == -6);
  /* Outputs that do not fit. */
  DLTensor host_out = kt_host_vec(y, shape);
  const DLTensor* bad[1] = {&host_out};
  KC_CHECK_CODE(kc_executable_execute_into(exe, in, 1, &o, bad, 1), KC_INVALID_ARGUMENT,
                "output 0: expected f32[3] on the executable's CUDA device",
                "device type 1");
  KC_CHECK_CODE(kc_executable_execute_into(exe, in, 1, &o, outs, 2), KC_INVALID_ARGUMENT,
                "expected 1 outputs, got 2");
  DLTensor wrong_dims = *outs[0];
  int64_t two[1] = {2};
  wrong_dims.shape = two;
  const DLTensor* bad2[1] = {&wrong_dims};
  KC_CHECK_CODE(kc_executable_execute_into(exe, in, 1, &o, bad2, 1), KC_INVALID_ARGUMENT,
                "output 0: expected f32[3]", "got f32[2]");
  kc_device_stream_destroy(kt_cuda0(), stream);
  kc_object_release(KC_OBJECT(dst));
  kc_executable_destroy(exe);
  KC_CHECK(kt_fake_cuda_stats_read().live_allocations == before.live_allocations);
  kc_xcall_registry_reset();
}

KC_TEST(cuda_program_inputs_checked) {
  setenv("KCALL_FAKE_CUDA_DEVICES", "2", 1);
  kt_use_fake_cuda();
  kc_program* p = kt_parse(
      "HloModule m\nENTRY main {\n a = f32[2] parameter(0)\n"
      " ROOT n = f32[2] negate(a)\n}\n");
  kc_executable* exe = NULL;
  KC_CHECK_OK(kt_compile_cuda(p, 0, &exe));
  int64_t shape[1] = {2};
  kc_tensor* on1 = NULL;
  KC_CHECK_OK(kc_tensor_create(kt_alloc(), shape, 1, kt_f32(), (DLDevice){kDLCUDA, 1}, &on1));
  const DLTensor* in[1] = {kc_tensor_get_dltensor(on1)};
  kc_tensor* out[1] = {NULL};
  KC_CHECK_CODE(kc_executable_execute(exe, in, 1, NULL, out), KC_INVALID_ARGUMENT,
                "input 0: expected f32[2], got a tensor on another CUDA device (device type 2, id 1)");
  float x[2] = {1, 2};
  DLTensor vk = kt_host_vec(x, shape);
  vk.device.device_type = kDLVulkan;
  in[0] = &vk;
  KC_CHECK_CODE(kc_executable_execute(exe, in, 1, NULL, out), KC_INVALID_ARGUMENT,
                "input 0", "neither CUDA nor the host");
  int64_t three[1] = {3};
  DLTensor wrong = kt_host_vec(x, three);
  in[0] = &wrong;
  KC_CHECK_CODE(kc_executable_execute(exe, in, 1, NULL, out), KC_INVALID_ARGUMENT,
                "input 0: expected f32[2], got f32[3]");
  KC_CHECK(out[0] == NULL);
  kc_object_release(KC_OBJECT(on1));
  kc_executable_destroy(exe);
  /* The same program on device 1 takes that tensor. */
  kc_compile_options co = {.struct_size = sizeof co, .platform = KC_PLATFORM_CUDA,
                           .device_id = 1};
  KC_CHECK_OK(kc_program_compile(p, &co, &exe));
  KC_CHECK_OK(kc_tensor_create(kt_alloc(), shape, 1, kt_f32(), (DLDevice){kDLCUDA, 1}, &on1));
  DLTensor h = kt_host_vec(x, shape);
  KC_CHECK_OK(kc_dltensor_copy(&h, kc_tensor_get_dltensor(on1), NULL));
  in[0] = kc_tensor_get_dltensor(on1);
  KC_CHECK_OK(kc_executable_execute(exe, in, 1, NULL, out));
  const DLTensor* r = kc_tensor_get_dltensor(out[0]);
  KC_CHECK(r->device.device_id == 1);
  float y[2];
  kt_read(r, y, 2);
  KC_CHECK(y[0] == -1 && y[1] == -2);
  kc_object_release(KC_OBJECT(out[0]));
  kc_object_release(KC_OBJECT(on1));
  kc_executable_destroy(exe);
  kc_program_destroy(p);
}

/* ---- graphs --------------------------------------------------------------------------- */

static int kt_safe_calls;
static void kt_safe_copy(void* stream, void** buffers, const char* opaque, size_t len) {
  (void)stream;
  (void)opaque;
  (void)len;
  kt_safe_calls++;
  memcpy(buffers[1], buffers[0], 2 * sizeof(float));
}

KC_TEST(cuda_program_graph_fallback) {
  kt_use_fake_cuda();
  KC_CHECK_OK(kc_xcall_register(kc_sv("kt.safe"), KC_PLATFORM_CUDA, KC_XCALL_API_ORIGINAL,
                                (void (*)(void))kt_safe_copy, KC_XCALL_GRAPH_SAFE));
  kc_program* p = kt_parse(
      "HloModule m\nENTRY main {\n a = f32[2] parameter(0)\n"
      " cc = f32[2] custom-call(a), custom_call_target=\"kt.safe\"\n"
      " ROOT n = f32[2] negate(cc)\n}\n");
  kc_executable* exe = NULL;
  KC_CHECK_OK(kt_compile_cuda(p, 0, &exe));
  kc_program_destroy(p);
  float x[2] = {1, 2};
  int64_t shape[1] = {2};
  kc_tensor* src = NULL;
  kc_tensor* dst = NULL;
  KC_CHECK_OK(kc_tensor_create(kt_alloc(), shape, 1, kt_f32(), kt_cuda0(), &src));
  KC_CHECK_OK(kc_tensor_create(kt_alloc(), shape, 1, kt_f32(), kt_cuda0(), &dst));
  const DLTensor* in[1] = {kc_tensor_get_dltensor(src)};
  const DLTensor* out[1] = {kc_tensor_get_dltensor(dst)};
  kt_safe_calls = 0;
  /* Run 1 on the stream; run 2 would capture, the fake cannot: it runs
   * on the stream and the executable stops trying; all results right. */
  for (int rep = 0; rep < 4; ++rep) {
    x[0] = (float)rep;
    DLTensor h = kt_host_vec(x, shape);
    KC_CHECK_OK(kc_dltensor_copy(&h, in[0], NULL));
    KC_CHECK_OK(kc_executable_execute_into(exe, in, 1, NULL, out, 1));
    float y[2];
    kt_read(out[0], y, 2);
    KC_CHECK(y[0] == -(float)rep && y[1] == -2);
  }
  KC_CHECK(kt_safe_calls == 4);
  kc_executable_info info = {.struct_size = sizeof info};
  kc_executable_query(exe, &info);
  KC_CHECK(info.cuda_graph_captures == 0 && info.cuda_graph_launches == 0);
  kc_object_release(KC_OBJECT(src));
  kc_object_release(KC_OBJECT(dst));
  kc_executable_destroy(exe);
  kc_xcall_registry_reset();
}

/* ---- the host ------------------------------------------------------------------------- */

KC_TEST(program_execute_into_host) {
  kc_program* p = kt_parse(
      "HloModule m\nENTRY main {\n a = f32[2] parameter(0)\n"
      " n = f32[2] negate(a)\n ROOT t = (f32[2], f32[2]) tuple(n, a)\n}\n");
  kc_executable* exe = NULL;
  KC_CHECK_OK(kc_program_compile(p, NULL, &exe));
  kc_program_destroy(p);
  float x[2] = {1, 2}, y[2] = {0, 0}, z[2] = {0, 0};
  int64_t shape[1] = {2};
  DLTensor tx = kt_host_vec(x, shape), ty = kt_host_vec(y, shape), tz = kt_host_vec(z, shape);
  const DLTensor* in[1] = {&tx};
  const DLTensor* out[2] = {&ty, &tz};
  KC_CHECK_OK(kc_executable_execute_into(exe, in, 1, NULL, out, 2));
  KC_CHECK(y[0] == -1 && y[1] == -2 && z[0] == 1 && z[1] == 2);
  DLTensor dev = ty;
  dev.device = kt_cuda0();
  out[0] = &dev;
  KC_CHECK_CODE(kc_executable_execute_into(exe, in, 1, NULL, out, 2), KC_INVALID_ARGUMENT,
                "output 0: expected f32[2] on the CPU, got a tensor on device type 2");
  out[0] = NULL;
  KC_CHECK_CODE(kc_executable_execute_into(exe, in, 1, NULL, out, 2), KC_INVALID_ARGUMENT,
                "output 0", "NULL");
  /* Outputs sharing memory with an input or with each other are refused,
   * partial overlaps too; adjacent ones are fine. */
  out[0] = &ty;
  out[1] = &tx;
  KC_CHECK_CODE(kc_executable_execute_into(exe, in, 1, NULL, out, 2), KC_INVALID_ARGUMENT,
                "output 1 overlaps input 0");
  float both[3] = {0, 0, 0};
  DLTensor lo = kt_host_vec(both, shape), hi = kt_host_vec(both + 1, shape);
  out[0] = &lo;
  out[1] = &hi;
  KC_CHECK_CODE(kc_executable_execute_into(exe, in, 1, NULL, out, 2), KC_INVALID_ARGUMENT,
                "output 1 overlaps output 0");
  float four[4] = {0, 0, 0, 0};
  lo = kt_host_vec(four, shape);
  hi = kt_host_vec(four + 2, shape);
  KC_CHECK_OK(kc_executable_execute_into(exe, in, 1, NULL, out, 2));
  KC_CHECK(four[0] == -1 && four[1] == -2 && four[2] == 1 && four[3] == 2);
  kc_executable_destroy(exe);
}

/* ---- XLA FFI handlers and graph-safety flags ------------------------------------------- */

static void* kt_xla_seen_stream;
static int64_t kt_xla_seen_ordinal;
static char kt_xla_alloc_message[256];

/* y = x + 1 on "device" memory, after asking for the stream and device. */
static void* kt_xla_add_one(void* frame) {
  XLA_FFI_CallFrame* f = frame;
  XLA_FFI_Stream_Get_Args s;
  memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  s.ctx = f->ctx;
  XLA_FFI_Error* e = f->api->XLA_FFI_Stream_Get(&s);
  if (e) return e;
  kt_xla_seen_stream = s.stream;
  XLA_FFI_DeviceOrdinal_Get_Args d;
  memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.ctx = f->ctx;
  if ((e = f->api->XLA_FFI_DeviceOrdinal_Get(&d))) return e;
  kt_xla_seen_ordinal = d.device_ordinal;
  /* Host memory from DeviceMemory_Allocate would be a wrong pointer here. */
  XLA_FFI_DeviceMemory_Allocate_Args m;
  memset(&m, 0, sizeof m);
  m.struct_size = sizeof m;
  m.ctx = f->ctx;
  m.size = 64;
  XLA_FFI_Error* refused = f->api->XLA_FFI_DeviceMemory_Allocate(&m);
  kt_xla_alloc_message[0] = '\0';
  if (refused) {
    XLA_FFI_Error_GetMessage_Args g = {sizeof g, NULL, refused, NULL};
    f->api->XLA_FFI_Error_GetMessage(&g);
    snprintf(kt_xla_alloc_message, sizeof kt_xla_alloc_message, "%s", g.message);
    XLA_FFI_Error_Destroy_Args x = {sizeof x, NULL, refused};
    f->api->XLA_FFI_Error_Destroy(&x);
  }
  const float* x = kt_xla_arg(f, 0)->data;
  float* y = kt_xla_ret(f, 0)->data;
  for (int64_t i = 0; i < kt_xla_count(kt_xla_arg(f, 0)); ++i) y[i] = x[i] + 1;
  return NULL;
}

static kc_status* kt_noop_typed(kc_xcall_frame* f) {
  (void)f;
  return NULL;
}

KC_TEST(cuda_program_xla_ffi_stream_and_graph_flags) {
  setenv("KCALL_FAKE_CUDA_DEVICES", "2", 1);
  kt_use_fake_cuda();
  KC_CHECK_OK(kc_xcall_register_xla_ffi_handler(
      kc_sv("kt.xla_add_one"), KC_PLATFORM_CUDA, kt_xla_add_one,
      KC_XLA_FFI_NO_METADATA | KC_XCALL_GRAPH_SAFE));
  kc_program* p = kt_parse(
      "HloModule m\nENTRY main {\n a = f32[2] parameter(0)\n"
      " ROOT cc = f32[2] custom-call(a), custom_call_target=\"kt.xla_add_one\", "
      "api_version=API_VERSION_TYPED_FFI\n}\n");
  kc_compile_options co = {.struct_size = sizeof co, .platform = KC_PLATFORM_CUDA,
                           .device_id = 1};
  kc_executable* exe = NULL;
  KC_CHECK_OK(kc_program_compile(p, &co, &exe));
  kc_program_destroy(p);
  float x[2] = {1, 2};
  int64_t shape[1] = {2};
  DLTensor tx = kt_host_vec(x, shape);
  const DLTensor* in[1] = {&tx};
  kc_tensor* out[1] = {NULL};
  kt_xla_seen_stream = NULL;
  KC_CHECK_OK(kc_executable_execute(exe, in, 1, NULL, out));
  void* def = NULL;
  KC_CHECK_OK(kc_device_get_default_stream((DLDevice){kDLCUDA, 1}, &def));
  KC_CHECK(kt_xla_seen_stream == def && def != NULL);
  KC_CHECK(kt_xla_seen_ordinal == 1);
  KC_CHECK(strstr(kt_xla_alloc_message, "not available in a run on CUDA device 1") != NULL);
  float y[2];
  kt_read(kc_tensor_get_dltensor(out[0]), y, 2);
  KC_CHECK(y[0] == 2 && y[1] == 3);
  kc_object_release(KC_OBJECT(out[0]));
  kc_executable_destroy(exe);
  /* Unknown flags are still refused, and the typed signature flag is one. */
  KC_CHECK_CODE(kc_xcall_register_xla_ffi_handler(kc_sv("kt.bad_flags"), KC_PLATFORM_CUDA,
                                                  kt_xla_add_one, 1u << 12),
                KC_INVALID_ARGUMENT, "unknown flags 0x1000");
  kc_xcall_signature sig = {.struct_size = sizeof sig, .flags = KC_XCALL_SIG_GRAPH_SAFE};
  KC_CHECK_OK(kc_xcall_register_typed(kc_sv("kt.typed_safe"), KC_PLATFORM_CUDA, &sig,
                                      kt_noop_typed, NULL, NULL, 0));
  kc_xcall_target_desc desc = {.struct_size = sizeof desc};
  KC_CHECK_OK(kc_xcall_lookup(kc_sv("kt.typed_safe"), KC_PLATFORM_CUDA, &desc));
  KC_CHECK(desc.signature && (desc.signature->flags & KC_XCALL_SIG_GRAPH_SAFE));
  sig.flags = 32u;
  KC_CHECK_CODE(kc_xcall_register_typed(kc_sv("kt.typed_bad"), KC_PLATFORM_CUDA, &sig,
                                        kt_noop_typed, NULL, NULL, 0),
                KC_INVALID_ARGUMENT, "unknown flags 0x20");
  /* The registration flag is not a registry flag: it does not override. */
  KC_CHECK_OK(kc_xcall_register(kc_sv("kt.legacy_safe"), KC_PLATFORM_CUDA,
                                KC_XCALL_API_ORIGINAL, (void (*)(void))kt_safe_copy,
                                KC_XCALL_GRAPH_SAFE));
  KC_CHECK_CODE(kc_xcall_register(kc_sv("kt.legacy_safe"), KC_PLATFORM_CUDA,
                                  KC_XCALL_API_ORIGINAL, (void (*)(void))kt_safe_copy,
                                  KC_XCALL_GRAPH_SAFE),
                KC_ALREADY_EXISTS, "kt.legacy_safe");
  kc_xcall_registry_reset();
}

/* Concurrent runs of one executable share only the pool of run states. */
typedef struct kt_conc {
  kc_executable* exe;
  float base;
  int bad;
} kt_conc;

static void* kt_conc_main(void* arg) {
  kt_conc* c = arg;
  int64_t shape[1] = {2};
  for (int i = 0; i < 50; ++i) {
    float x[2] = {c->base + (float)i, 1};
    DLTensor tx = kt_host_vec(x, shape);
    const DLTensor* in[1] = {&tx};
    kc_tensor* out[1] = {NULL};
    kc_status* st = kc_executable_execute(c->exe, in, 1, NULL, out);
    if (st) {
      kc_status_destroy(st);
      c->bad++;
      continue;
    }
    float y[2];
    const DLTensor* o = kc_tensor_get_dltensor(out[0]);
    memcpy(y, o->data, sizeof y); /* the fake's device memory is host memory */
    if (y[0] != -(c->base + (float)i) * 2 || y[1] != -2) c->bad++;
    kc_object_release(KC_OBJECT(out[0]));
  }
  return NULL;
}

KC_TEST(cuda_program_concurrent_runs) {
  kt_use_fake_cuda();
  kc_program* p = kt_parse(
      "HloModule m\nENTRY main {\n a = f32[2] parameter(0)\n"
      " s = f32[2] add(a, a)\n ROOT n = f32[2] negate(s)\n}\n");
  kc_executable* exe = NULL;
  KC_CHECK_OK(kt_compile_cuda(p, 0, &exe));
  kc_program_destroy(p);
  pthread_t th[4];
  kt_conc c[4];
  for (int i = 0; i < 4; ++i) {
    c[i] = (kt_conc){exe, (float)(1000 * i), 0};
    KC_CHECK(pthread_create(&th[i], NULL, kt_conc_main, &c[i]) == 0);
  }
  for (int i = 0; i < 4; ++i) {
    pthread_join(th[i], NULL);
    KC_CHECK(c[i].bad == 0);
  }
  kc_executable_destroy(exe);
}

/* ---- aliasing and per-instruction times ------------------------------------------------ */

static void* kt_inc_buffers[2];
static void kt_inc_in_place(void* stream, void** buffers, const char* opaque, size_t len) {
  (void)stream;
  (void)opaque;
  (void)len;
  memcpy(kt_inc_buffers, buffers, sizeof kt_inc_buffers);
  float* y = buffers[1];
  for (int i = 0; i < 2; ++i) y[i] += 1;
}

KC_TEST(cuda_program_aliasing_and_times) {
  kt_use_fake_cuda();
  KC_CHECK_OK(kc_xcall_register(kc_sv("kt.inc"), KC_PLATFORM_CUDA, KC_XCALL_API_ORIGINAL,
                                (void (*)(void))kt_inc_in_place, 0));
  kc_program* p = kt_parse(
      "HloModule m\nENTRY main {\n a = f32[2] parameter(0)\n"
      " ROOT cc = f32[2] custom-call(a), custom_call_target=\"kt.inc\", "
      "output_to_operand_aliasing={{}: (0, {})}\n}\n");
  kc_executable* exe = NULL;
  KC_CHECK_OK(kt_compile_cuda(p, 0, &exe));
  kc_program_destroy(p);
  float x[2] = {1, 2};
  int64_t shape[1] = {2};
  DLTensor tx = kt_host_vec(x, shape);
  const DLTensor* in[1] = {&tx};
  kc_tensor* out[1] = {NULL};
  kc_executable_info info = {.struct_size = sizeof info};
  kc_executable_query(exe, &info);
  uint64_t times[4] = {~0ull, ~0ull, ~0ull, ~0ull};
  KC_CHECK(info.num_live_instructions == 2);
  kt_fake_cuda_stats s0 = kt_fake_cuda_stats_read();
  kc_execute_options o = {.struct_size = sizeof o, .instruction_ns = times};
  KC_CHECK_OK(kc_executable_execute(exe, in, 1, &o, out));
  /* The operand was copied into the result, and the callee sees one
   * buffer for both: the output. */
  KC_CHECK(kt_inc_buffers[0] == kt_inc_buffers[1]);
  KC_CHECK(kt_inc_buffers[1] == kc_tensor_get_dltensor(out[0])->data);
  float y[2];
  kt_read(kc_tensor_get_dltensor(out[0]), y, 2);
  KC_CHECK(y[0] == 2 && y[1] == 3 && x[0] == 1);
  /* Timed: each step is waited for (a step's time is its device work). */
  KC_CHECK(times[0] != ~0ull && times[1] != ~0ull && times[2] == ~0ull);
  KC_CHECK(kt_fake_cuda_stats_read().synchronizes >= s0.synchronizes + 3);
  kc_object_release(KC_OBJECT(out[0]));
  kc_executable_destroy(exe);
  kc_xcall_registry_reset();
}
