/* while runs its body on two sets of state buffers in turn: the result
 * is right after an even and an odd number of iterations, with zero
 * iterations, and with a leaf of no elements in the state. A small body
 * holds one run state per set for the loop, a large one (its temporaries
 * over 256 KiB) one for both, whose addresses then change every
 * iteration: both are run, each executable several times (its run states
 * back in the pool and taken again, the scratch set at a new address),
 * and from four threads at once. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt_hlo.h"

/* The loop doubles x (of n elements: 1, -1, 0.5, 1, -1, ...) `limit`
 * times; its body reverses x twice first, so that it has 8n bytes of
 * temporaries. */
static void kt_loop_text(char* text, size_t size, int32_t limit, int n) {
  snprintf(text, size,
           "HloModule m\n"
           "%%cond (s: (s32[], f32[%d], f32[0])) -> pred[] {\n"
           "  %%s = (s32[], f32[%d], f32[0]) parameter(0)\n"
           "  %%i = s32[] get-tuple-element(%%s), index=0\n"
           "  %%n = s32[] constant(%d)\n"
           "  ROOT %%lt = pred[] compare(%%i, %%n), direction=LT\n}\n"
           "%%body (s: (s32[], f32[%d], f32[0])) -> (s32[], f32[%d], f32[0]) {\n"
           "  %%s = (s32[], f32[%d], f32[0]) parameter(0)\n"
           "  %%i = s32[] get-tuple-element(%%s), index=0\n"
           "  %%x = f32[%d] get-tuple-element(%%s), index=1\n"
           "  %%e = f32[0] get-tuple-element(%%s), index=2\n"
           "  %%one = s32[] constant(1)\n  %%j = s32[] add(%%i, %%one)\n"
           "  %%v = f32[%d] reverse(%%x), dimensions={0}\n"
           "  %%w = f32[%d] reverse(%%v), dimensions={0}\n"
           "  %%two = f32[] constant(2)\n  %%tb = f32[%d] broadcast(%%two), dimensions={}\n"
           "  %%y = f32[%d] multiply(%%w, %%tb)\n"
           "  ROOT %%t = (s32[], f32[%d], f32[0]) tuple(%%j, %%y, %%e)\n}\n"
           "ENTRY e {\n  %%z = s32[] constant(0)\n  %%x = f32[%d] parameter(0)\n"
           "  %%e = f32[0] constant({})\n"
           "  %%s = (s32[], f32[%d], f32[0]) tuple(%%z, %%x, %%e)\n"
           "  %%w = (s32[], f32[%d], f32[0]) while(%%s), condition=%%cond, body=%%body\n"
           "  %%i = s32[] get-tuple-element(%%w), index=0\n"
           "  %%r = f32[%d] get-tuple-element(%%w), index=1\n"
           "  ROOT %%t = (s32[], f32[%d]) tuple(%%i, %%r)\n}\n",
           n, n, (int)limit, n, n, n, n, n, n, n, n, n, n, n, n, n, n);
}

static void kt_count_to(int32_t limit, int n, int32_t want_i, float want_x) {
  char text[4096];
  kt_loop_text(text, sizeof text, limit, n);
  float* x0 = malloc((size_t)n * sizeof *x0);
  KC_CHECK(x0 != NULL);
  static const float pattern[] = {1, -1, 0.5f};
  for (int k = 0; k < n; ++k) x0[k] = pattern[k % 3];
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_parse(kc_sv(text), &p));
  kc_executable* exe = NULL;
  KC_CHECK_OK(kc_program_compile(p, NULL, &exe));
  int64_t dims[1] = {n};
  DLTensor in = {
      .data = x0, .device = {kDLCPU, 0}, .ndim = 1, .dtype = {kDLFloat, 32, 1}, .shape = dims};
  const DLTensor* ins[1] = {&in};
  for (int round = 0; round < 3; ++round) {
    kc_tensor* outs[2];
    KC_CHECK_OK(kc_executable_execute(exe, ins, 1, NULL, outs));
    KC_CHECK_INT(*(const int32_t*)kt_data(outs[0]), want_i);
    const float* x = kt_data(outs[1]);
    for (int k = 0; k < n; ++k) {
      if (x[k] != pattern[k % 3] * want_x) {
        fprintf(stderr, "limit %d, n %d, round %d: x[%d] = %g, expected %g\n", (int)limit, n, round,
                k, (double)x[k], (double)(pattern[k % 3] * want_x));
        KC_CHECK(false);
      }
    }
    kt_release(outs, 2);
  }
  kc_executable_destroy(exe);
  kc_program_destroy(p);
  free(x0);
}

KC_TEST(hlo_while_even_odd_and_no_iterations) {
  /* 3 elements: a run per set; 40000 (320 KB of temporaries): one run. */
  static const int sizes[] = {3, 40000};
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; ++s) {
    kt_count_to(0, sizes[s], 0, 1);
    kt_count_to(1, sizes[s], 1, 2);
    kt_count_to(2, sizes[s], 2, 4);
    kt_count_to(4, sizes[s], 4, 16);
    kt_count_to(7, sizes[s], 7, 128);
  }
}

/* ---- one executable, four threads ----------------------------------------------- */

typedef struct kt_while_thread {
  const kc_executable* exe;
  int n;
  float scale;
  int ok;
} kt_while_thread;

/* Runs the loop of 5 iterations 20 times on x0 * scale; checks x * 32. */
static void* kt_while_thread_main(void* arg) {
  kt_while_thread* t = arg;
  float* x0 = malloc((size_t)t->n * sizeof *x0);
  if (!x0) return NULL;
  for (int k = 0; k < t->n; ++k) x0[k] = t->scale * (float)(k % 7);
  int64_t dims[1] = {t->n};
  DLTensor in = {
      .data = x0, .device = {kDLCPU, 0}, .ndim = 1, .dtype = {kDLFloat, 32, 1}, .shape = dims};
  const DLTensor* ins[1] = {&in};
  t->ok = 1;
  for (int round = 0; round < 20 && t->ok; ++round) {
    kc_tensor* outs[2];
    kc_status* st = kc_executable_execute(t->exe, ins, 1, NULL, outs);
    if (st) {
      kc_status_destroy(st);
      t->ok = 0;
      break;
    }
    const float* x = kc_tensor_get_dltensor(outs[1])->data;
    if (*(const int32_t*)kc_tensor_get_dltensor(outs[0])->data != 5) t->ok = 0;
    for (int k = 0; k < t->n; ++k) {
      if (x[k] != 32 * x0[k]) t->ok = 0;
    }
    kc_object_release(KC_OBJECT(outs[0]));
    kc_object_release(KC_OBJECT(outs[1]));
  }
  free(x0);
  return NULL;
}

/* Threads share the executable's run states: each loop holds its own for
 * its length and gives them back. */
KC_TEST(hlo_while_four_threads_one_executable) {
  static const int sizes[] = {3, 40000};
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; ++s) {
    char text[4096];
    kt_loop_text(text, sizeof text, 5, sizes[s]);
    kc_program* p = NULL;
    KC_CHECK_OK(kc_program_parse(kc_sv(text), &p));
    kc_executable* exe = NULL;
    KC_CHECK_OK(kc_program_compile(p, NULL, &exe));
    pthread_t threads[4];
    kt_while_thread ctx[4];
    for (int i = 0; i < 4; ++i) {
      ctx[i] = (kt_while_thread){.exe = exe, .n = sizes[s], .scale = (float)(i + 1), .ok = 0};
      KC_CHECK_INT(pthread_create(&threads[i], NULL, kt_while_thread_main, &ctx[i]), 0);
    }
    for (int i = 0; i < 4; ++i) pthread_join(threads[i], NULL);
    for (int i = 0; i < 4; ++i) KC_CHECK_INT(ctx[i].ok, 1);
    kc_executable_destroy(exe);
    kc_program_destroy(p);
  }
}
