/*
 * The exported packed call of kcall next to tvm-ffi's, in one C loop each:
 * kc_func_call_noinline on a kcall no-op and TVMFFIFunctionCall on a
 * tvm-ffi no-op made with TVMFFIFunctionCreate. Both are called through
 * function pointers the compiler cannot see through, as a binding calls
 * them. tvm-ffi is measured twice: without a `self` (its fastest form: the
 * no-op is the object's entry) and with one (a closure: tvm-ffi then goes
 * through a trampoline; a kcall function always carries its `self`).
 *
 * Built and run by run_bench.py, which has the tvm-ffi and kcall include
 * and library paths; prints one "key value" line per figure (ns per call)
 * for run_bench.py to read. Usage: bench_ffi_call [ITERS [ROUNDS]].
 */
#define _POSIX_C_SOURCE 200809L
/* tvm-ffi's header first: it includes the official dlpack.h, whose
 * declarations kcall's abi.h then uses instead of its own. */
#include <tvm/ffi/c_api.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kcall/kcall.h"

static kc_status* kcall_nop(void* self, const kc_any* args, int32_t nargs,
                            kc_any* ret) {
  (void)self;
  (void)args;
  (void)nargs;
  (void)ret;
  return NULL;
}

static int tvm_nop(void* handle, const TVMFFIAny* args, int32_t nargs,
                   TVMFFIAny* result) {
  (void)handle;
  (void)args;
  (void)nargs;
  (void)result;
  return 0;
}

static kc_status* (*volatile kcall_call)(const kc_func*, const kc_any*,
                                         int32_t, kc_any*) =
    kc_func_call_noinline;
static int (*volatile tvm_call)(TVMFFIObjectHandle, TVMFFIAny*, int32_t,
                                TVMFFIAny*) = TVMFFIFunctionCall;

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The two loops are kept out of line and aligned alike, and run_bench.py
 * compiles this file with -falign-loops=64, so that where the compiler
 * happens to place them does not favour one: a call costs a few cycles,
 * and a loop straddling a 64-byte fetch block costs one more. */
#define KB_LOOP __attribute__((noinline, aligned(64)))

KB_LOOP static double time_kcall(const kc_func* f, int64_t iters) {
  double start = now_ns();
  for (int64_t i = 0; i < iters; ++i) {
    kc_any ret;
    if (kcall_call(f, NULL, 0, &ret)) abort();
  }
  return (now_ns() - start) / (double)iters;
}

/* tvm-ffi's caller must set the result to none; kcall's call does it.
 * Both with one 16-byte store (none is all zeros in both), so that the
 * compiler's choice of stores does not tell the two apart. */
_Static_assert(kTVMFFINone == 0, "an all-zero TVMFFIAny is none");

KB_LOOP static double time_tvm(TVMFFIObjectHandle f, int64_t iters) {
  double start = now_ns();
  for (int64_t i = 0; i < iters; ++i) {
    TVMFFIAny ret;
    memset(&ret, 0, sizeof ret);
    if (tvm_call(f, NULL, 0, &ret)) abort();
  }
  return (now_ns() - start) / (double)iters;
}

static double min2(double best, double t) {
  return best < 0 || t < best ? t : best;
}

int main(int argc, char** argv) {
  /* Many short rounds rather than a few long ones: on a busy machine the
   * minimum then more likely falls in a quiet spell. */
  int64_t iters = argc > 1 ? atoll(argv[1]) : 2 * 1000 * 1000;
  int rounds = argc > 2 ? atoi(argv[2]) : 31;
  if (iters < 1 || rounds < 1) {
    fprintf(stderr, "usage: %s [ITERS [ROUNDS]]\n", argv[0]);
    return 2;
  }
  kc_func* kf = NULL;
  if (kc_func_create(NULL, kcall_nop, NULL, NULL, &kf)) abort();
  TVMFFIObjectHandle tf = NULL;
  TVMFFIObjectHandle tf_self = NULL;
  static int some_state;
  if (TVMFFIFunctionCreate(NULL, tvm_nop, NULL, &tf) ||
      TVMFFIFunctionCreate(&some_state, tvm_nop, NULL, &tf_self)) {
    fprintf(stderr, "TVMFFIFunctionCreate failed\n");
    return 1;
  }
  /* Warm up, then alternate, so that a slow spell of the machine is as
   * likely to hit one as the other; the minimum of each is kept. */
  time_kcall(kf, iters / 10 + 1);
  time_tvm(tf, iters / 10 + 1);
  time_tvm(tf_self, iters / 10 + 1);
  double k = -1, t = -1, ts = -1;
  for (int r = 0; r < rounds; ++r) {
    k = min2(k, time_kcall(kf, iters));
    t = min2(t, time_tvm(tf, iters));
    ts = min2(ts, time_tvm(tf_self, iters));
  }
  printf("kc_func_call_noinline_ns %.4f\n", k);
  printf("tvmffi_function_call_ns %.4f\n", t);
  printf("tvmffi_function_call_with_self_ns %.4f\n", ts);
  kc_object_release(KC_OBJECT(kf));
  TVMFFIObjectDecRef(tf);
  TVMFFIObjectDecRef(tf_self);
  return 0;
}
