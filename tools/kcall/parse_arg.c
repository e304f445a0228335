/*
 * parse_arg.c — how `kcall call` types its command-line arguments.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef enum int_form { NOT_INT, INT_OK, INT_OVERFLOW } int_form;

static int digit_value(char c, int base) {
  int d = -1;
  if (c >= '0' && c <= '9') d = c - '0';
  if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
  if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
  return d < base ? d : -1;
}

/* [+-]DIGITS or [+-]0xHEXDIGITS. Written by hand rather than with strtoll
 * because base 0 would read "010" as octal, and strtoll also accepts
 * leading blanks. */
static int_form parse_int(const char* text, int64_t* out_value) {
  const char* p = text;
  bool negative = false;
  if (*p == '+' || *p == '-') negative = *p++ == '-';
  int base = 10;
  if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
    base = 16;
    p += 2;
  }
  if (*p == '\0') return NOT_INT;
  uint64_t magnitude = 0;
  bool overflow = false;
  for (; *p; ++p) {
    int d = digit_value(*p, base);
    if (d < 0) return NOT_INT;
    if (magnitude > (UINT64_MAX - (uint64_t)d) / (uint64_t)base) {
      overflow = true;
    } else {
      magnitude = magnitude * (uint64_t)base + (uint64_t)d;
    }
  }
  uint64_t limit = negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
  if (overflow || magnitude > limit) return INT_OVERFLOW;
  if (!negative) {
    *out_value = (int64_t)magnitude;
  } else if (magnitude == limit) {
    *out_value = INT64_MIN;
  } else {
    *out_value = -(int64_t)magnitude;
  }
  return INT_OK;
}

/* Anything strtod reads in full, including inf and nan, but not text that
 * starts with a blank (strtod would skip it). */
static bool parse_float(const char* text, double* out_value) {
  if (*text == '\0' || strchr(" \t\n\v\f\r", *text)) return false;
  char* end = NULL;
  double d = strtod(text, &end);
  if (*end != '\0') return false;
  *out_value = d; /* out-of-range text gives inf or 0, as in Python */
  return true;
}

static bool parse_bool(const char* text, bool numeric_ok, bool* out_value) {
  if (strcmp(text, "true") == 0 || (numeric_ok && strcmp(text, "1") == 0)) {
    *out_value = true;
    return true;
  }
  if (strcmp(text, "false") == 0 || (numeric_ok && strcmp(text, "0") == 0)) {
    *out_value = false;
    return true;
  }
  return false;
}

static kc_status* int_overflow(const char* text, int position) {
  return kc_status_create(KC_OUT_OF_RANGE,
                          "argument %d: %s does not fit in a 64-bit int "
                          "(give it a float: or str: prefix to pass it as "
                          "one of those)",
                          position, CLI_QS(text));
}

static kc_status* not_a(const char* what, const char* text, int position) {
  return kc_status_create(KC_INVALID_ARGUMENT,
                          "argument %d: %s is not %s", position, CLI_QS(text),
                          what);
}

/* func:NAME, the function registered as NAME. The registry's pointer is
 * borrowed; the argument takes a reference of its own, so that it is
 * released like every other argument. */
static kc_status* parse_func(const char* name, int position,
                             kc_any* out_value) {
  if (*name == '\0') {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "argument %d: 'func:' needs a function name "
                            "(func:NAME)",
                            position);
  }
  kc_func* func = NULL;
  kc_status* status = kc_func_registry_lookup(kc_sv(name), &func);
  if (status) return kc_status_add_context(status, "argument %d", position);
  kc_object_retain(KC_OBJECT(func));
  *out_value = kc_any_object(KC_OBJECT(func));
  return NULL;
}

/* The value of a word with an explicit type prefix; false when `text` has
 * no known prefix. */
static bool parse_prefixed(const char* text, int position, kc_any* out_value,
                           kc_status** out_status) {
  const char* colon = strchr(text, ':');
  if (!colon) return false;
  size_t len = (size_t)(colon - text);
  const char* rest = colon + 1;
  *out_status = NULL;
  if (len == 3 && strncmp(text, "int", len) == 0) {
    int64_t i = 0;
    int_form form = parse_int(rest, &i);
    if (form == INT_OK) *out_value = kc_any_int(i);
    if (form == INT_OVERFLOW) *out_status = int_overflow(rest, position);
    if (form == NOT_INT) *out_status = not_a("an int", rest, position);
  } else if (len == 5 && strncmp(text, "float", len) == 0) {
    double d = 0;
    if (parse_float(rest, &d)) {
      *out_value = kc_any_float(d);
    } else {
      *out_status = not_a("a float", rest, position);
    }
  } else if (len == 4 && strncmp(text, "bool", len) == 0) {
    bool b = false;
    if (parse_bool(rest, true, &b)) {
      *out_value = kc_any_bool(b);
    } else {
      *out_status = not_a("a bool (true, false, 1 or 0)", rest, position);
    }
  } else if (len == 3 && strncmp(text, "str", len) == 0) {
    *out_value = kc_any_cstr(rest);
  } else if (len == 4 && strncmp(text, "func", len) == 0) {
    *out_status = parse_func(rest, position, out_value);
  } else {
    return false;
  }
  return true;
}

kc_status* cli_parse_arg(const char* text, int position, kc_any* out_value) {
  *out_value = kc_any_none();
  kc_status* status = NULL;
  if (parse_prefixed(text, position, out_value, &status)) return status;
  if (cli_parse_tensor_literal(text, position, out_value, &status)) {
    return status;
  }

  bool b = false;
  int64_t i = 0;
  double d = 0;
  if (parse_bool(text, false, &b)) {
    *out_value = kc_any_bool(b);
    return NULL;
  }
  switch (parse_int(text, &i)) {
    case INT_OK:
      *out_value = kc_any_int(i);
      return NULL;
    case INT_OVERFLOW:
      return int_overflow(text, position);
    case NOT_INT:
      break;
  }
  if (parse_float(text, &d)) {
    *out_value = kc_any_float(d);
    return NULL;
  }
  /* Borrowed: argv outlives the call. */
  *out_value = kc_any_cstr(text);
  return NULL;
}
