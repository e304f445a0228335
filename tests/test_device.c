/* Tests of kcall/device.h: the CPU, the loading of the CUDA backend and
 * its failures, and device memory, streams, tensors and copies through the
 * fake backend (tests/device/fake_backend.c). */
#include <stdlib.h>
#include <string.h>

#include "kt_device.h"

static DLDataType kt_f32(void) { return kc_dtype_make(kDLFloat, 32, 1); }
static DLDevice kt_cuda(int32_t id) { return (DLDevice){kDLCUDA, id}; }

KC_TEST(device_cpu) {
  int32_t n = -1;
  KC_CHECK_OK(kc_device_get_count(kDLCPU, &n));
  KC_CHECK(n == 1);
  KC_CHECK_OK(kc_device_check(kc_device_cpu()));
  KC_CHECK_CODE(kc_device_check((DLDevice){kDLCPU, 1}), KC_OUT_OF_RANGE,
                "device cpu:1: expected cpu:0");
  KC_CHECK_CODE(kc_device_get_count(kDLVulkan, &n), KC_UNIMPLEMENTED,
                "no backend serves it");
  KC_CHECK_CODE(kc_device_get_count(kDLCPU, NULL), KC_INVALID_ARGUMENT, "out_count is NULL");

  kc_device_properties p;
  memset(&p, 0xab, sizeof p);
  p.struct_size = sizeof p;
  KC_CHECK_OK(kc_device_get_properties(kc_device_cpu(), &p));
  KC_CHECK(strcmp(p.name, "cpu") == 0);
  KC_CHECK(p.multiprocessor_count >= 1);
  KC_CHECK(p.total_memory_bytes > 0);
  KC_CHECK(p.compute_capability_major == 0);
  /* A caller that knows fewer fields gets only those. */
  kc_device_properties small;
  memset(&small, 0xab, sizeof small);
  small.struct_size = offsetof(kc_device_properties, name) + 8;
  KC_CHECK_OK(kc_device_get_properties(kc_device_cpu(), &small));
  KC_CHECK(small.device.device_type == kDLCPU);
  KC_CHECK(((unsigned char*)&small)[small.struct_size] == 0xab);

  void* stream = (void*)1;
  KC_CHECK_OK(kc_device_stream_create(kc_device_cpu(), &stream));
  KC_CHECK(stream == NULL);
  KC_CHECK_OK(kc_device_get_default_stream(kc_device_cpu(), &stream));
  KC_CHECK(stream == NULL);
  KC_CHECK_OK(kc_device_stream_synchronize(kc_device_cpu(), NULL));

  void* a = NULL;
  void* b = NULL;
  KC_CHECK_OK(kc_device_allocate(kc_device_cpu(), 100, NULL, &a));
  KC_CHECK(a != NULL && (uintptr_t)a % 64 == 0);
  KC_CHECK_OK(kc_device_host_allocate(kc_device_cpu(), 100, &b));
  memset(a, 7, 100);
  KC_CHECK_OK(kc_device_memcpy(kc_device_cpu(), b, a, 100, KC_MEMCPY_DEVICE_TO_HOST, NULL));
  KC_CHECK(((unsigned char*)b)[99] == 7);
  KC_CHECK_CODE(kc_device_memcpy(kc_device_cpu(), b, a, 100, (kc_memcpy_kind)9, NULL),
                KC_INVALID_ARGUMENT, "kind: expected 1 (host to device)", "got 9");
  KC_CHECK_CODE(kc_device_memcpy(kc_device_cpu(), NULL, a, 100, KC_MEMCPY_DEVICE_TO_HOST, NULL),
                KC_INVALID_ARGUMENT, "dst is NULL");
  kc_device_host_free(kc_device_cpu(), b);
  KC_CHECK_OK(kc_device_free(kc_device_cpu(), a, NULL));
  KC_CHECK_OK(kc_device_allocate(kc_device_cpu(), 0, NULL, &a));
  KC_CHECK(a == NULL);
}

KC_TEST(device_cuda_backend_missing) {
  setenv("KCALL_CUDA_BACKEND", "/nonexistent/libkcall_cuda.so", 1);
  int32_t n = -1;
  for (int i = 0; i < 2; ++i) { /* settled once, said every time */
    KC_CHECK_CODE(kc_device_get_count(kDLCUDA, &n), KC_FAILED_PRECONDITION,
                  "no CUDA device: cannot load the CUDA backend "
                  "'/nonexistent/libkcall_cuda.so' named by KCALL_CUDA_BACKEND");
  }
  KC_CHECK(n == 0);
  kc_tensor* t = NULL;
  int64_t shape[1] = {4};
  KC_CHECK_CODE(kc_tensor_create(NULL, shape, 1, kt_f32(), kt_cuda(0), &t),
                KC_FAILED_PRECONDITION, "kc_tensor_create: no CUDA device: ");
  KC_CHECK(t == NULL);
  void* p = (void*)1;
  KC_CHECK_CODE(kc_device_allocate(kt_cuda(0), 8, NULL, &p), KC_FAILED_PRECONDITION,
                "no CUDA device");
  KC_CHECK(p == NULL);
  kc_device_host_free(kt_cuda(0), NULL);
}

KC_TEST(device_cuda_backend_not_a_backend) {
  setenv("KCALL_CUDA_BACKEND", KC_FIXTURE_DIR "/kt_plugin_good.so", 1);
  KC_CHECK_CODE(kc_device_check(kt_cuda(0)), KC_FAILED_PRECONDITION,
                "no CUDA device: ", "kt_plugin_good.so' is not a kcall backend: it has no "
                "kc_backend_entry");
}

/* Whatever this build has (libkcall_cuda beside libkcall or not), a machine
 * without a GPU answers with the reason, and one with a GPU counts it. */
KC_TEST(device_cuda_default_search) {
  unsetenv("KCALL_CUDA_BACKEND");
  int32_t n = 0;
  kc_status* st = kc_device_get_count(kDLCUDA, &n);
  if (st) {
    char buf[1024];
    KC_CHECK(kc_status_get_code(st) == KC_FAILED_PRECONDITION);
    KC_CHECK(strncmp(kc_status_get_message(st), "no CUDA device: ", 16) == 0);
    kt_status_text(st, buf, sizeof buf);
    kc_status_destroy(st);
    kt_skip("%s", buf);
  }
  KC_CHECK(n >= 1);
}

KC_TEST(device_cuda_init_fails) {
  kt_use_fake_cuda();
  setenv("KCALL_FAKE_CUDA_FAIL_INIT", "the CUDA driver is not installed (cudaErrorInsufficientDriver)", 1);
  KC_CHECK_CODE(kc_device_check(kt_cuda(0)), KC_FAILED_PRECONDITION,
                "no CUDA device: the CUDA driver is not installed (cudaErrorInsufficientDriver)");
  KC_CHECK_CODE(kc_device_check(kt_cuda(0)), KC_FAILED_PRECONDITION, "no CUDA device: ");
}

KC_TEST(device_cuda_memory_and_streams) {
  kt_use_fake_cuda();
  setenv("KCALL_FAKE_CUDA_DEVICES", "2", 1);
  int32_t n = 0;
  KC_CHECK_OK(kc_device_get_count(kDLCUDA, &n));
  KC_CHECK(n == 2);
  KC_CHECK_OK(kc_device_check(kt_cuda(1)));
  KC_CHECK_CODE(kc_device_check(kt_cuda(2)), KC_OUT_OF_RANGE,
                "device cuda:2: expected a CUDA ordinal in [0, 2), got 2",
                "has 2 CUDA devices");
  KC_CHECK_CODE(kc_device_check(kt_cuda(-1)), KC_OUT_OF_RANGE, "got -1");

  kc_device_properties p;
  memset(&p, 0, sizeof p);
  p.struct_size = sizeof p;
  KC_CHECK_OK(kc_device_get_properties(kt_cuda(1), &p));
  KC_CHECK(strcmp(p.name, "Fake CUDA device 1") == 0);
  KC_CHECK(p.device.device_type == kDLCUDA && p.device.device_id == 1);
  KC_CHECK(p.compute_capability_major == 9 && p.warp_size == 32);
  KC_CHECK(p.total_memory_bytes == ((size_t)1 << 30));

  void* s0 = NULL;
  void* again = NULL;
  KC_CHECK_OK(kc_device_get_default_stream(kt_cuda(0), &s0));
  KC_CHECK(s0 != NULL);
  KC_CHECK_OK(kc_device_get_default_stream(kt_cuda(0), &again));
  KC_CHECK(again == s0);
  void* mine = NULL;
  KC_CHECK_OK(kc_device_stream_create(kt_cuda(0), &mine));
  KC_CHECK(mine != NULL && mine != s0);

  /* Stream-ordered and synchronous device memory, pinned staging, and a
   * round trip through the device. */
  float host[4] = {1, 2, 3, 4};
  void* d = NULL;
  void* pinned = NULL;
  KC_CHECK_OK(kc_device_allocate(kt_cuda(0), sizeof host, mine, &d));
  KC_CHECK(d != NULL && (uintptr_t)d % 256 == 0);
  KC_CHECK_OK(kc_device_host_allocate(kt_cuda(0), sizeof host, &pinned));
  KC_CHECK_OK(kc_device_memcpy(kt_cuda(0), d, host, sizeof host, KC_MEMCPY_HOST_TO_DEVICE, mine));
  KC_CHECK(kt_fake_cuda_stats_read().last_stream == mine);
  KC_CHECK_OK(kc_device_memcpy(kt_cuda(0), pinned, d, sizeof host, KC_MEMCPY_DEVICE_TO_HOST, mine));
  KC_CHECK_OK(kc_device_stream_synchronize(kt_cuda(0), mine));
  KC_CHECK(((float*)pinned)[3] == 4.0f);
  /* The backend checks the streams it is given. */
  KC_CHECK_CODE(kc_device_memcpy(kt_cuda(1), pinned, d, 4, KC_MEMCPY_DEVICE_TO_HOST, mine),
                KC_INTERNAL, "invalid stream");
  KC_CHECK(kt_fake_cuda_stats_read().live_allocations == 2);
  KC_CHECK_OK(kc_device_free(kt_cuda(0), d, mine));
  kc_device_host_free(kt_cuda(0), pinned);
  KC_CHECK_CODE(kc_device_allocate(kt_cuda(0), (size_t)1 << 50, NULL, &d), KC_RESOURCE_EXHAUSTED,
                "out of memory");
  KC_CHECK(d == NULL);
  kc_device_stream_destroy(kt_cuda(0), mine);
  kt_fake_cuda_stats st = kt_fake_cuda_stats_read();
  KC_CHECK(st.live_allocations == 0);
  KC_CHECK(st.live_streams == 1); /* the default stream lives on */
}

KC_TEST(device_cuda_tensors_and_copies) {
  kt_use_fake_cuda();
  int64_t shape[2] = {2, 3};
  kc_tensor* dev = NULL;
  kc_tensor* host = NULL;
  kc_tensor* back = NULL;
  kc_tensor* pinned = NULL;
  KC_CHECK_OK(kc_tensor_create(kt_alloc(), shape, 2, kt_f32(), kt_cuda(0), &dev));
  KC_CHECK_OK(kc_tensor_create(kt_alloc(), shape, 2, kt_f32(), kc_device_cpu(), &host));
  KC_CHECK_OK(kc_tensor_create(kt_alloc(), shape, 2, kt_f32(), kc_device_cpu(), &back));
  KC_CHECK_OK(kc_tensor_create(kt_alloc(), shape, 2, kt_f32(), (DLDevice){kDLCUDAHost, 0}, &pinned));
  const DLTensor* d = kc_tensor_get_dltensor(dev);
  KC_CHECK(d->device.device_type == kDLCUDA && d->device.device_id == 0);
  KC_CHECK(d->data != NULL && (uintptr_t)d->data % 256 == 0);
  KC_CHECK(kc_tensor_get_dltensor(pinned)->device.device_type == kDLCUDAHost);
  KC_CHECK(kt_fake_cuda_stats_read().live_allocations == 2);

  float* h = kc_tensor_get_dltensor(host)->data;
  for (int i = 0; i < 6; ++i) h[i] = (float)i * 1.5f;
  KC_CHECK_OK(kc_dltensor_copy(kc_tensor_get_dltensor(host), d, NULL));
  KC_CHECK_OK(kc_dltensor_copy(d, kc_tensor_get_dltensor(pinned), NULL));
  KC_CHECK_OK(kc_dltensor_copy(kc_tensor_get_dltensor(pinned), kc_tensor_get_dltensor(back), NULL));
  KC_CHECK(memcmp(kc_tensor_get_dltensor(back)->data, h, 6 * sizeof(float)) == 0);

  /* What a copy refuses. */
  DLTensor wrong = *kc_tensor_get_dltensor(back);
  wrong.dtype = kc_dtype_make(kDLInt, 32, 1);
  KC_CHECK_CODE(kc_dltensor_copy(d, &wrong, NULL), KC_INVALID_ARGUMENT,
                "from (on cuda:0) and to (on cpu:0): dtypes differ: f32 and i32");
  wrong = *kc_tensor_get_dltensor(back);
  int64_t other[2] = {3, 2};
  wrong.shape = other;
  KC_CHECK_CODE(kc_dltensor_copy(d, &wrong, NULL), KC_INVALID_ARGUMENT, "dims differ");
  int64_t strides[2] = {1, 2};
  wrong = *kc_tensor_get_dltensor(back);
  wrong.strides = strides;
  KC_CHECK_CODE(kc_dltensor_copy(d, &wrong, NULL), KC_INVALID_ARGUMENT, "compact row-major");
  KC_CHECK_CODE(kc_dltensor_copy(NULL, d, NULL), KC_INVALID_ARGUMENT, "from is NULL");

  kc_object_release(KC_OBJECT(dev));
  kc_object_release(KC_OBJECT(pinned));
  kc_object_release(KC_OBJECT(host));
  kc_object_release(KC_OBJECT(back));
  KC_CHECK(kt_fake_cuda_stats_read().live_allocations == 0);
  KC_CHECK(kt_live_blocks() == 0);

  /* A device the backend does not have. */
  kc_tensor* t = NULL;
  KC_CHECK_CODE(kc_tensor_create(NULL, shape, 2, kt_f32(), kt_cuda(3), &t), KC_OUT_OF_RANGE,
                "cuda:3");
  KC_CHECK_CODE(kc_tensor_create(NULL, shape, 2, kt_f32(), (DLDevice){kDLROCM, 0}, &t),
                KC_UNIMPLEMENTED, "expected cpu, cuda or cuda_host");
}
