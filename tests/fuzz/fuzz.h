/*
 * tests/fuzz/fuzz.h — what the fuzz harnesses share.
 *
 * Each harness (fuzz_<name>.c) defines LLVMFuzzerTestOneInput, libFuzzer's
 * entry point. Built with -DKCALL_FUZZ=ON (clang), it is linked with
 * libFuzzer and the address and undefined-behaviour sanitizers, and
 * `make fuzz` runs it; otherwise it is linked with run_corpus.c, a small
 * main that calls it once per file of its checked-in corpus, so that the
 * corpus is a regression suite of every `make test` (docs/fuzzing.md).
 *
 * A harness states what must hold for every input and aborts when it does
 * not: sanitizers catch memory errors, leaks and undefined behaviour, and
 * kf_refused/KF_ASSERT catch answers that are wrong without crashing.
 */
#ifndef KCALL_TESTS_FUZZ_FUZZ_H_
#define KCALL_TESTS_FUZZ_FUZZ_H_

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kcall/kcall.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

/* Aborts, after saying which check failed: libFuzzer then records the
 * input as a crash, and the corpus runner's test fails. */
#define KF_ASSERT(cond)                                                   \
  do {                                                                    \
    if (!(cond)) {                                                        \
      fprintf(stderr, "%s:%d: fuzz check failed: %s\n", __FILE__,         \
              __LINE__, #cond);                                           \
      abort();                                                            \
    }                                                                     \
  } while (0)

/* True when `st` is an error, which is then checked and destroyed: a
 * refusal must be a real status (not OK, not INTERNAL: malformed input is
 * the caller's mistake, never the library's) with a message that formats.
 * False for NULL (success). */
static inline bool kf_refused(kc_status* st) {
  if (!st) return false;
  kc_status_code code = kc_status_get_code(st);
  const char* message = kc_status_get_message(st);
  char text[512];
  size_t n = kc_status_format(st, text, sizeof text);
  if (code == KC_OK || code == KC_INTERNAL || !message || !message[0] ||
      n == 0) {
    fprintf(stderr, "fuzz check failed: a refusal that is not one: %s\n",
            text);
    abort();
  }
  kc_status_destroy(st);
  return true;
}

/* A NUL-terminated copy of the input (the parsers under test take C
 * strings); the caller frees it. */
static inline char* kf_cstr(const uint8_t* data, size_t size) {
  char* text = malloc(size + 1);
  KF_ASSERT(text != NULL);
  if (size) memcpy(text, data, size);
  text[size] = '\0';
  return text;
}

#endif /* KCALL_TESTS_FUZZ_FUZZ_H_ */
