/* Tests of devices: pointing the core at the fake backend
 * (tests/device/fake_backend.c) and reading what it counted. */
#ifndef KCALL_TESTS_KT_DEVICE_H_
#define KCALL_TESTS_KT_DEVICE_H_

#include <dlfcn.h>
#include <stdlib.h>

#include "test.h"

/* Must run before the process first uses a CUDA device: the backend is
 * settled once per process. */
static inline void kt_use_fake_cuda(void) {
  setenv("KCALL_CUDA_BACKEND", KT_FAKE_CUDA_PATH, 1);
}

/* As tests/device/fake_backend.c counts. */
typedef struct kt_fake_cuda_stats {
  int64_t live_allocations;
  int64_t live_streams;
  int64_t kernels;
  int64_t copies;
  int64_t synchronizes;
  void* last_stream;
} kt_fake_cuda_stats;

/* What the fake backend counted so far (it must be loaded already). */
static inline kt_fake_cuda_stats kt_fake_cuda_stats_read(void) {
  kt_fake_cuda_stats s;
  memset(&s, 0, sizeof s);
  void* h = dlopen(KT_FAKE_CUDA_PATH, RTLD_NOW | RTLD_NOLOAD);
  KC_CHECK(h != NULL);
  if (!h) return s;
  void* sym = dlsym(h, "kt_fake_cuda_stats_get");
  KC_CHECK(sym != NULL);
  if (!sym) return s;
  void (*get)(kt_fake_cuda_stats*);
  memcpy(&get, &sym, sizeof get);
  get(&s);
  dlclose(h);
  return s;
}

#endif /* KCALL_TESTS_KT_DEVICE_H_ */
