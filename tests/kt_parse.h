/* What the HLO text parser's tests share (test_parse*.c): parsing,
 * compiling and running a program, checking shapes, and a typed handler
 * that records the attributes it is instantiated with. */
#ifndef KCALL_TESTS_KT_PARSE_H_
#define KCALL_TESTS_KT_PARSE_H_

#include <string.h>

#include "test.h"

static inline kc_program* kt_parse(const char* text) {
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_parse(kc_sv(text), &p));
  KC_CHECK(p != NULL);
  return p;
}

/* Parsing `text` fails with INVALID_ARGUMENT and a message holding every
 * needle; no program comes back. */
#define KT_PARSE_FAILS(text, ...)                                             \
  do {                                                                        \
    kc_program* kt_p_ = NULL;                                                 \
    KC_CHECK_CODE(kc_program_parse(kc_sv(text), &kt_p_), KC_INVALID_ARGUMENT, \
                  __VA_ARGS__);                                               \
    KC_CHECK(kt_p_ == NULL);                                                  \
  } while (0)

static inline void kt_check_shape(const kc_shape* s, const char* want) {
  char buf[512];
  KC_CHECK(s != NULL);
  kc_shape_format(s, buf, sizeof buf);
  KC_CHECK_STR(buf, want);
}

static inline kc_executable* kt_compile(const kc_program* p) {
  kc_executable* exe = NULL;
  KC_CHECK_OK(kc_program_compile(p, NULL, &exe));
  KC_CHECK(exe != NULL);
  return exe;
}

/* Runs a program without parameters and returns its one output. */
static inline kc_tensor* kt_run_no_inputs(const kc_program* p) {
  kc_executable* exe = kt_compile(p);
  kc_tensor* out = NULL;
  kc_status* st = kc_executable_execute(exe, NULL, 0, NULL, &out);
  kc_executable_destroy(exe);
  KC_CHECK_OK(st);
  KC_CHECK(out != NULL);
  return out;
}

/* Records the typed attributes a handler sees when it is instantiated. */
typedef struct kt_attr_record {
  int calls;
  int32_t num_attrs;
  const kc_attr* attrs;
} kt_attr_record;

static inline kc_status* kt_record_attrs(kc_xcall_frame* frame) {
  kt_attr_record* r = frame->user;
  if (frame->stage == KC_XCALL_STAGE_INSTANTIATE) {
    r->calls++;
    r->num_attrs = frame->num_attrs;
    r->attrs = frame->attrs;
  }
  return NULL;
}

static inline void kt_register_recorder(const char* name, const kc_xcall_attr_spec* attrs,
                                 int32_t num_attrs, int32_t num_args,
                                 int32_t num_results, kt_attr_record* record) {
  kc_xcall_buffer_spec any = {kc_dtype_make(0, 0, 0), -1};
  kc_xcall_buffer_spec specs[4] = {any, any, any, any};
  kc_xcall_signature sig;
  memset(&sig, 0, sizeof sig);
  sig.struct_size = sizeof sig;
  sig.num_args = num_args;
  sig.args = specs;
  sig.num_results = num_results;
  sig.results = specs;
  sig.num_attrs = num_attrs;
  sig.attrs = attrs;
  KC_CHECK_OK(kc_xcall_register_typed(kc_sv(name), KC_PLATFORM_HOST, &sig,
                                      kt_record_attrs, record, NULL, 0));
}

#endif /* KCALL_TESTS_KT_PARSE_H_ */
