/* What the HLO instruction tests share: running a program written as text,
 * and checking that one fails to compile or to parse. */
#ifndef KCALL_TESTS_KT_HLO_H_
#define KCALL_TESTS_KT_HLO_H_

#include <string.h>

#include "kcall/kcall.h"
#include "test.h"

/* Parses, compiles (with `pool`, NULL: the default) and runs `text` (no
 * parameters); its outputs go to outs[0..n), the caller's to release
 * (kt_release). */
static inline void kt_run_text_on(const char* text, kc_thread_pool* pool,
                                  kc_tensor** outs, size_t n) {
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_parse(kc_sv(text), &p));
  kc_compile_options opts;
  memset(&opts, 0, sizeof opts);
  opts.struct_size = sizeof opts;
  opts.thread_pool = pool;
  kc_executable* exe = NULL;
  KC_CHECK_OK(kc_program_compile(p, &opts, &exe));
  kc_executable_info info;
  info.struct_size = sizeof info;
  kc_executable_query(exe, &info);
  KC_CHECK_INT((int64_t)info.num_outputs, (int64_t)n);
  KC_CHECK_OK(kc_executable_execute(exe, NULL, 0, NULL, outs));
  kc_executable_destroy(exe);
  kc_program_destroy(p);
}

/* kt_run_text_on with the default pool. */
static inline void kt_run_text(const char* text, kc_tensor** outs, size_t n) {
  kt_run_text_on(text, NULL, outs, n);
}

/* Parsing `text` succeeds and compiling it fails with `code` and every
 * needle in the message. */
#define KT_COMPILE_FAILS(text, code, ...)                                     \
  do {                                                                        \
    kc_program* kt_p_ = NULL;                                                 \
    KC_CHECK_OK(kc_program_parse(kc_sv(text), &kt_p_));                       \
    kc_executable* kt_e_ = NULL;                                              \
    KC_CHECK_CODE(kc_program_compile(kt_p_, NULL, &kt_e_), code, __VA_ARGS__); \
    KC_CHECK(kt_e_ == NULL);                                                  \
    kc_program_destroy(kt_p_);                                                \
  } while (0)

/* Parsing `text` fails with INVALID_ARGUMENT and every needle. */
#define KT_PARSE_FAILS(text, ...)                                             \
  do {                                                                        \
    kc_program* kt_p_ = NULL;                                                 \
    KC_CHECK_CODE(kc_program_parse(kc_sv(text), &kt_p_), KC_INVALID_ARGUMENT, \
                  __VA_ARGS__);                                               \
    KC_CHECK(kt_p_ == NULL);                                                  \
  } while (0)

static inline const void* kt_data(kc_tensor* t) {
  return kc_tensor_get_dltensor(t)->data;
}

static inline void kt_release(kc_tensor** outs, size_t n) {
  for (size_t i = 0; i < n; ++i) kc_object_release(KC_OBJECT(outs[i]));
}

#endif /* KCALL_TESTS_KT_HLO_H_ */
