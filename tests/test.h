/*
 * tests/test.h — the C test runner's interface.
 *
 * A test is a function declared with KC_TEST(name) at the start of a line in
 * a tests/test_*.c file. CMake finds these lines at configure time, makes one
 * ctest test per name and generates the runner's table from the same list,
 * so there is no registration code to forget and nothing runs at load time.
 *
 * Each test gets a fresh counting allocator (kt_alloc()). After the body the
 * runner resets the function registry and fails the test if any block of that
 * allocator is still live, so a test that creates its objects with kt_alloc()
 * is also a leak and reference-count check.
 *
 * Checks are fatal on the thread that runs the test (the rest of the body is
 * skipped, so a failed create never leads to a NULL dereference) and merely
 * recorded on other threads, which cannot be unwound safely.
 *
 * A test whose subject is missing on this machine (another compiler, say)
 * calls kt_skip with the reason: the runner prints it and exits with
 * KT_SKIP_STATUS, which ctest reports as a skip, never as a pass.
 *
 * Tests may also be written in C++ (tests/test_*.cpp): the same KC_TEST,
 * checks and kt_skip, except that a failed check or a skip on the test's
 * thread throws instead of jumping, so that destructors run.
 */
#ifndef KCALL_TESTS_TEST_H_
#define KCALL_TESTS_TEST_H_

#include <stdint.h>
#include <string.h>

#include "kcall/kcall.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef __cplusplus
#define KC_TEST(name)          \
  void kt_test_##name(void);   \
  void kt_test_##name(void)
#endif

/* The allocator of the running test, and its counter. */
const kc_allocator* kt_alloc(void);
kc_counting_allocator* kt_counter(void);
/* Blocks of kt_alloc() not yet freed. */
int64_t kt_live_blocks(void);

/* Formats a status into buf ("OK" for NULL) and returns buf. */
const char* kt_status_text(const kc_status* status, char* buf, size_t cap);

/* The exit status of a skipped test (ctest's SKIP_RETURN_CODE). */
#define KT_SKIP_STATUS 77

/* Ends the running test as skipped, printing why. Only on the thread that
 * runs the test, and before any check has failed (a failure stands). */
void kt_skip(const char* fmt, ...) KC_PRINTF(1, 2);

/* Reports a failure (see above for when it returns). */
void kt__fail(const char* file, int line, const char* fmt, ...)
    KC_PRINTF(3, 4);
/* Checks `status` against `code` (KC_OK: must be NULL) and that its formatted
 * text contains every string of the NULL-terminated `needles`; destroys it. */
void kt__check_status(const char* file, int line, const char* expr,
                      kc_status* status, kc_status_code code,
                      const char* const* needles);
void kt__check_int(const char* file, int line, const char* a_text,
                   const char* b_text, int64_t a, int64_t b);
void kt__check_str(const char* file, int line, const char* a_text,
                   const char* b_text, const char* a, const char* b);
void kt__check_contains(const char* file, int line, const char* h_text,
                        const char* haystack, const char* needle);

/* For C++ tests: while on, a failure on the test's thread is recorded and
 * kt__fail returns; kt__failure_count tells whether one happened. */
void kt__set_soft_failures(bool on);
int kt__failure_count(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#ifndef __cplusplus

#define KC_CHECK(cond)                                              \
  do {                                                              \
    if (!(cond)) kt__fail(__FILE__, __LINE__, "check failed: %s", #cond); \
  } while (0)

#define KC_CHECK_OK(expr)                                                    \
  kt__check_status(__FILE__, __LINE__, #expr, (expr), KC_OK,               \
                   (const char* const[]){NULL})

/* KC_CHECK_CODE(expr, KC_NOT_FOUND, "substring", ...): one or more strings
 * that the formatted status must contain ("" when any text will do). */
#define KC_CHECK_CODE(expr, code, ...)                                       \
  kt__check_status(__FILE__, __LINE__, #expr, (expr), (code),              \
                   (const char* const[]){__VA_ARGS__, NULL})

#define KC_CHECK_INT(a, b) \
  kt__check_int(__FILE__, __LINE__, #a, #b, (int64_t)(a), (int64_t)(b))

#define KC_CHECK_STR(a, b) kt__check_str(__FILE__, __LINE__, #a, #b, (a), (b))

#define KC_CHECK_CONTAINS(haystack, needle) \
  kt__check_contains(__FILE__, __LINE__, #haystack, (haystack), (needle))

#else /* C++ */

#include <exception>
#include <initializer_list>

/* Thrown by a failed check, after the failure is recorded. */
struct kt_abort {};

/* Runs a C++ test body: failed checks unwind it by exception; an exception
 * it lets escape is a failure too. */
inline void kt_run_cpp(void (*body)(), const char* file, int line) {
  kt__set_soft_failures(true);
  try {
    body();
  } catch (const kt_abort&) {
  } catch (const std::exception& e) {
    kt__fail(file, line, "uncaught exception: %s", e.what());
  } catch (...) {
    kt__fail(file, line, "uncaught exception of an unknown type");
  }
  kt__set_soft_failures(false);
}

#define KC_TEST(name)                                                \
  static void kt_body_##name();                                      \
  extern "C" void kt_test_##name(void);                              \
  extern "C" void kt_test_##name(void) {                             \
    kt_run_cpp(kt_body_##name, __FILE__, __LINE__);                  \
  }                                                                  \
  static void kt_body_##name()

/* kt_skip records the skip and returns in a C++ test: unwind from here. */
#define kt_skip(...) ((kt_skip)(__VA_ARGS__), throw kt_abort{})

/* Runs `stmt`, a check, and throws kt_abort if it recorded a failure. */
#define KT__CPP_CHECKED(stmt)                            \
  do {                                                   \
    int kt__before = kt__failure_count();                \
    stmt;                                                \
    if (kt__failure_count() != kt__before) throw kt_abort{}; \
  } while (0)

#define KC_CHECK(cond)                                                      \
  KT__CPP_CHECKED(if (!(cond)) kt__fail(__FILE__, __LINE__,                 \
                                        "check failed: %s", #cond))

#define KC_CHECK_OK(expr)                                                   \
  KT__CPP_CHECKED(kt__check_status(                                         \
      __FILE__, __LINE__, #expr, (expr), KC_OK,                             \
      std::initializer_list<const char*>{nullptr}.begin()))

#define KC_CHECK_CODE(expr, code, ...)                                      \
  KT__CPP_CHECKED(kt__check_status(                                         \
      __FILE__, __LINE__, #expr, (expr), (code),                            \
      std::initializer_list<const char*>{__VA_ARGS__, nullptr}.begin()))

#define KC_CHECK_INT(a, b)                                     \
  KT__CPP_CHECKED(kt__check_int(__FILE__, __LINE__, #a, #b,    \
                                static_cast<int64_t>(a),       \
                                static_cast<int64_t>(b)))

#define KC_CHECK_STR(a, b) \
  KT__CPP_CHECKED(kt__check_str(__FILE__, __LINE__, #a, #b, (a), (b)))

#define KC_CHECK_CONTAINS(haystack, needle)                            \
  KT__CPP_CHECKED(kt__check_contains(__FILE__, __LINE__, #haystack,   \
                                     (haystack), (needle)))

#endif /* __cplusplus */

/* True when the view holds exactly the NUL-terminated text `s`. */
static inline bool kt_sv_is(kc_string_view v, const char* s) {
  size_t n = strlen(s);
  return v.size == n && (n == 0 || memcmp(v.data, s, n) == 0);
}

#endif /* KCALL_TESTS_TEST_H_ */
