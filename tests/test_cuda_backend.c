/* The CUDA backend library as the core loads it: its entry point, its
 * table, and init where there is no usable device (this is the path every
 * machine without a GPU takes). The kernels themselves are tested on a GPU
 * by tests/cuda/cuda_kernels.c. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/backend.h"
#include "test.h"

#ifdef KC_CUDA_BACKEND_PATH
static const kc__backend_core kt_core = {sizeof(kc__backend_core), kc_status_create};

static void* kt_open_backend(void) {
  void* h = dlopen(KC_CUDA_BACKEND_PATH, RTLD_NOW | RTLD_LOCAL);
  if (!h) kt__fail(__FILE__, __LINE__, "dlopen(%s): %s", KC_CUDA_BACKEND_PATH, dlerror());
  return h;
}

static kc__backend_entry_fn kt_entry(void* h) {
  kc__backend_entry_fn fn;
  void* sym = dlsym(h, KC__BACKEND_ENTRY_SYMBOL);
  KC_CHECK(sym != NULL);
  memcpy(&fn, &sym, sizeof fn);
  return fn;
}
#endif

KC_TEST(cuda_backend_entry_checks_the_version) {
#ifndef KC_CUDA_BACKEND_PATH
  kt_skip("libkcall_cuda is not built (no CUDA compiler, or KCALL_CUDA=OFF)");
#else
  void* h = kt_open_backend();
  kc__backend_entry_fn entry = kt_entry(h);
  KC_CHECK(entry(KC__BACKEND_ABI_VERSION + 1, &kt_core) == NULL);
  KC_CHECK(entry(0, &kt_core) == NULL);
  KC_CHECK(entry(KC__BACKEND_ABI_VERSION, NULL) == NULL);
  kc__backend_core short_core = {sizeof(size_t), kc_status_create};
  KC_CHECK(entry(KC__BACKEND_ABI_VERSION, &short_core) == NULL);

  const kc__backend* b = entry(KC__BACKEND_ABI_VERSION, &kt_core);
  KC_CHECK(b != NULL);
  KC_CHECK_INT(b->struct_size, sizeof(kc__backend));
  KC_CHECK_INT(b->abi_version, KC__BACKEND_ABI_VERSION);
  KC_CHECK_STR(b->name, "CUDA");
  KC_CHECK_INT(b->device_type, kDLCUDA);
  /* Every entry is there: the table from init to graph_destroy is all
   * function pointers. */
  const char* first = (const char*)&b->init;
  const char* end = (const char*)b + sizeof *b;
  for (const char* p = first; p < end; p += sizeof(void (*)(void))) {
    void (*fn)(void);
    memcpy(&fn, p, sizeof fn);
    if (!fn) kt__fail(__FILE__, __LINE__, "table entry at offset %zu is NULL", (size_t)(p - (const char*)b));
  }
  /* Asked again by the same core: the same table. */
  KC_CHECK(entry(KC__BACKEND_ABI_VERSION, &kt_core) == b);
#endif
}

KC_TEST(cuda_backend_init_says_why_there_is_no_device) {
#ifndef KC_CUDA_BACKEND_PATH
  kt_skip("libkcall_cuda is not built (no CUDA compiler, or KCALL_CUDA=OFF)");
#else
  void* h = kt_open_backend();
  const kc__backend* b = kt_entry(h)(KC__BACKEND_ABI_VERSION, &kt_core);
  KC_CHECK(b != NULL);
  KC_CHECK_CODE(b->init(NULL), KC_INVALID_ARGUMENT, "out_count is NULL");
  int32_t count = -1;
  kc_status* s = b->init(&count);
  /* KT_EXPECT_CUDA_ERROR: the error this run must meet (ctest sets it for
   * the run with the toolkit's stub driver). */
  const char* expect = getenv("KT_EXPECT_CUDA_ERROR");
  if (!s) {
    if (expect) kt__fail(__FILE__, __LINE__, "init succeeded, expected %s", expect);
    KC_CHECK(count >= 1);
    kt_skip("a CUDA device is present (%d): the no-device path is not taken here", (int)count);
  }
  char text[1024];
  kt_status_text(s, text, sizeof text);
  KC_CHECK_INT(count, 0);
  /* KC_CHECK_CODE takes `s` and destroys it. */
  if (expect) {
    KC_CHECK_CODE(s, KC_FAILED_PRECONDITION, expect, "stub");
  } else if (strstr(text, "cudaErrorNoDevice")) {
    KC_CHECK_CODE(s, KC_FAILED_PRECONDITION, "no device (cudaErrorNoDevice");
  } else {
    KC_CHECK_CODE(s, KC_FAILED_PRECONDITION,
                  "the CUDA driver is not installed or too old (cudaErrorInsufficientDriver",
                  "needs a driver for CUDA ");
  }
  /* Settled once: a second init says the same. */
  kc_status* again = b->init(&count);
  char text2[1024];
  kt_status_text(again, text2, sizeof text2);
  KC_CHECK_STR(text2, text);
  kc_status_destroy(again);

  /* Nothing can run, but the checks that need no device still answer. */
  int64_t dims[2] = {2, 3};
  DLDataType f32 = {kDLFloat, 32, 1};
  KC_CHECK_CODE(b->iota(0, NULL, NULL, f32, 2, dims, 2), KC_INVALID_ARGUMENT,
                "iota on cuda:0: dim: expected 0 to 1 (the rank is 2), got 2");
  DLDataType c64 = {kDLComplex, 64, 1};
  KC_CHECK_CODE(b->iota(0, NULL, NULL, c64, 2, dims, 0), KC_UNIMPLEMENTED, "iota on cuda:0");
  kc__elementwise_desc d = {0};
  d.op = KC_OP_ADD;
  d.arity = 1;
  d.in_dtype = d.out_dtype = f32;
  d.count = 4;
  KC_CHECK_CODE(b->elementwise(0, NULL, &d), KC_INVALID_ARGUMENT,
                "elementwise add on cuda:0: arity: expected 2, got 1");
  d.arity = 2;
  d.in_dtype = c64;
  d.out_dtype = c64;
  KC_CHECK_CODE(b->elementwise(0, NULL, &d), KC_UNIMPLEMENTED,
                "op 1 (add) is not implemented for c64 -> c64");
  d.op = KC_OP_COMPARE;
  d.in_dtype = (DLDataType){kDLInt, 32, 1};
  d.out_dtype = (DLDataType){kDLBool, 8, 1};
  d.direction = 7;
  KC_CHECK_CODE(b->elementwise(0, NULL, &d), KC_INVALID_ARGUMENT, "direction", "got 7");
  d.direction = KC__CMP_LT | KC__CMP_TOTAL_ORDER;
  KC_CHECK_CODE(b->elementwise(0, NULL, &d), KC_INVALID_ARGUMENT, "for f32 and f64 only");
  int64_t in_dims[1] = {3}, out_dims[2] = {2, 4}, map[1] = {1};
  kc__broadcast_desc bd = {NULL, NULL, 1, 2, in_dims, out_dims, map, 4};
  KC_CHECK_CODE(b->broadcast(0, NULL, &bd), KC_INVALID_ARGUMENT,
                "in_dims[0]: expected 4 (out_dims[1]), got 3");
  /* A call that needs the device reports the driver's error. */
  void* p = NULL;
  KC_CHECK_CODE(b->alloc(0, 16, NULL, &p), KC_INTERNAL, "cudaSetDevice(0)");
  KC_CHECK(p == NULL);
  KC_CHECK_OK(b->alloc(0, 0, NULL, &p));
  KC_CHECK_OK(b->free(0, NULL, NULL));
  /* The runtime never started: every call that reaches it says why. */
  KC_CHECK_CODE(b->check_launch(0), KC_INTERNAL, "a kernel launch on cuda:0: ",
                expect ? expect : "cudaError");
#endif
}

KC_TEST(cuda_backend_supported_is_exact) {
#ifndef KC_CUDA_BACKEND_PATH
  kt_skip("libkcall_cuda is not built (no CUDA compiler, or KCALL_CUDA=OFF)");
#else
  void* h = kt_open_backend();
  const kc__backend* b = kt_entry(h)(KC__BACKEND_ABI_VERSION, &kt_core);
  KC_CHECK(b != NULL);
  DLDataType f16 = {kDLFloat, 16, 1}, bf16 = {kDLBfloat, 16, 1}, f32 = {kDLFloat, 32, 1};
  DLDataType f64 = {kDLFloat, 64, 1}, s8 = {kDLInt, 8, 1}, u64 = {kDLUInt, 64, 1};
  DLDataType pred = {kDLBool, 8, 1}, c64 = {kDLComplex, 64, 1}, c128 = {kDLComplex, 128, 1};
  DLDataType f32x2 = {kDLFloat, 32, 2};
  KC_CHECK(b->elementwise_supported(KC_OP_ADD, f32, f32));
  KC_CHECK(b->elementwise_supported(KC_OP_DIVIDE, s8, s8));
  KC_CHECK(b->elementwise_supported(KC_OP_MAXIMUM, bf16, bf16));
  KC_CHECK(!b->elementwise_supported(KC_OP_ADD, pred, pred));
  KC_CHECK(!b->elementwise_supported(KC_OP_ADD, f32, f64));
  KC_CHECK(!b->elementwise_supported(KC_OP_ADD, c64, c64));
  KC_CHECK(!b->elementwise_supported(KC_OP_ADD, f32x2, f32x2));
  KC_CHECK(b->elementwise_supported(KC_OP_EXPONENTIAL, f16, f16));
  KC_CHECK(!b->elementwise_supported(KC_OP_LOG, s8, s8));
  KC_CHECK(b->elementwise_supported(KC_OP_CONVERT, f16, u64));
  KC_CHECK(b->elementwise_supported(KC_OP_CONVERT, pred, bf16));
  KC_CHECK(!b->elementwise_supported(KC_OP_CONVERT, f32, c64));
  KC_CHECK(b->elementwise_supported(KC_OP_SINE, f64, f64));
  KC_CHECK(!b->elementwise_supported(KC_OP_SINE, f16, f16));
  KC_CHECK(!b->elementwise_supported(KC_OP_SINE, s8, s8));
  KC_CHECK(b->elementwise_supported(KC_OP_ABS, s8, s8));
  KC_CHECK(b->elementwise_supported(KC_OP_IS_FINITE, f32, pred));
  KC_CHECK(!b->elementwise_supported(KC_OP_IS_FINITE, f32, f32));
  KC_CHECK(b->elementwise_supported(KC_OP_NOT, pred, pred));
  KC_CHECK(!b->elementwise_supported(KC_OP_NOT, f32, f32));
  KC_CHECK(!b->elementwise_supported(KC_OP_SHIFT_LEFT, pred, pred));
  KC_CHECK(b->elementwise_supported(KC_OP_SHIFT_RIGHT_ARITHMETIC, u64, u64));
  KC_CHECK(b->elementwise_supported(KC_OP_COMPARE, pred, pred));
  KC_CHECK(!b->elementwise_supported(KC_OP_COMPARE, f16, pred));
  KC_CHECK(!b->elementwise_supported(KC_OP_COMPARE, f32, f32));
  KC_CHECK(b->elementwise_supported(KC_OP_SELECT, c128, c128));
  KC_CHECK(b->elementwise_supported(KC_OP_SELECT, f32x2, f32x2));
  KC_CHECK(!b->elementwise_supported(KC_OP_SELECT, f32, s8));
  KC_CHECK(b->elementwise_supported(KC_OP_CLAMP, pred, pred));
  KC_CHECK(!b->elementwise_supported(KC_OP_CLAMP, bf16, bf16));
  KC_CHECK(!b->elementwise_supported(KC_OP_RESHAPE, f32, f32));
  KC_CHECK(!b->elementwise_supported(KC_OP_REAL, c64, f32));
#endif
}
