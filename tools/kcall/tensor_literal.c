/*
 * tensor_literal.c — tensors written on the command line, and printed back
 * the same way: DTYPE[DIMS]:VALUES, e.g. f32[2,2]:1,2,3,4 (docs/cli.md).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Most elements a result prints in full; past it, only its shape. */
#define LITERAL_PRINT_MAX 256

/* The element types a literal can hold. */
static bool literal_dtype(DLDataType t) {
  if (t.lanes != 1) return false;
  switch (t.code) {
    case kDLBool:
      return t.bits == 8;
    case kDLInt:
    case kDLUInt:
      return t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64;
    case kDLFloat:
      return t.bits == 32 || t.bits == 64;
    default:
      return false;
  }
}

static kc_status* literal_error(int position, const char* text,
                                const char* what) {
  return kc_status_create(KC_INVALID_ARGUMENT,
                          "argument %d: tensor literal %s: %s", position,
                          CLI_QS(text), what);
}

/* Stores element `i` of `t` from the `n` bytes at `word`, which end at a
 * ',' or the end of the text. The word is read where it lies, however
 * long: strtod and strtoll stop at the ',' (no number contains one), and
 * must stop exactly there. */
static bool literal_store(DLTensor* t, int64_t i, const char* word, size_t n) {
  if (n == 0) return false;
  char* end = NULL;
  errno = 0;
  unsigned char* p = (unsigned char*)t->data + (size_t)i * (t->dtype.bits / 8);
  switch (t->dtype.code) {
    case kDLBool:
      if ((n == 4 && memcmp(word, "true", 4) == 0) || (n == 1 && word[0] == '1')) {
        *p = 1;
      } else if ((n == 5 && memcmp(word, "false", 5) == 0) ||
                 (n == 1 && word[0] == '0')) {
        *p = 0;
      } else {
        return false;
      }
      return true;
    case kDLFloat: {
      double d = strtod(word, &end);
      if (end != word + n) return false;
      if (t->dtype.bits == 32) {
        float f = (float)d;
        memcpy(p, &f, sizeof f);
      } else {
        memcpy(p, &d, sizeof d);
      }
      return true;
    }
    case kDLInt: {
      long long v = strtoll(word, &end, 10);
      int bits = t->dtype.bits;
      if (end != word + n || errno ||
          (bits < 64 &&
           (v < -(1LL << (bits - 1)) || v >= (1LL << (bits - 1))))) {
        return false;
      }
      int64_t w = v; /* little-endian: the low bytes are the value */
      memcpy(p, &w, (size_t)bits / 8);
      return true;
    }
    default: { /* kDLUInt */
      if (word[0] == '-') return false;
      unsigned long long v = strtoull(word, &end, 10);
      int bits = t->dtype.bits;
      if (end != word + n || errno || (bits < 64 && v >= (1ULL << bits))) return false;
      uint64_t w = v;
      memcpy(p, &w, (size_t)bits / 8);
      return true;
    }
  }
}

/* Splits "[d0,d1,...]" after `open` into dims; returns the byte after ']'
 * or NULL when malformed. */
static const char* literal_dims(const char* open, int64_t* dims,
                                int32_t* ndim) {
  const char* p = open + 1;
  *ndim = 0;
  if (*p == ']') return p + 1;
  for (;;) {
    char* end = NULL;
    if (*p < '0' || *p > '9' || *ndim == KC_TENSOR_MAX_NDIM) return NULL;
    errno = 0;
    long long d = strtoll(p, &end, 10);
    if (errno || d < 0) return NULL;
    dims[(*ndim)++] = d;
    p = end;
    if (*p == ']') return p + 1;
    if (*p != ',') return NULL;
    ++p;
  }
}

bool cli_parse_tensor_literal(const char* text, int position, kc_any* out_value,
                              kc_status** out_status) {
  const char* open = strchr(text, '[');
  if (!open || open == text) return false;
  DLDataType dtype;
  kc_string_view name = {text, (size_t)(open - text)};
  kc_status* st = kc_dtype_parse(name, &dtype);
  if (st) { /* not a literal: an ordinary string */
    kc_status_destroy(st);
    return false;
  }
  *out_status = NULL;
  if (!literal_dtype(dtype)) {
    *out_status = literal_error(position, text,
                                "literals hold bool, i8..i64, u8..u64, f32 "
                                "or f64");
    return true;
  }
  int64_t dims[KC_TENSOR_MAX_NDIM];
  int32_t ndim = 0;
  const char* rest = literal_dims(open, dims, &ndim);
  if (!rest || *rest != ':') {
    *out_status = literal_error(position, text,
                                "expected DTYPE[DIMS]:VALUES, such as "
                                "f32[2,2]:1,2,3,4");
    return true;
  }
  kc_tensor* tensor = NULL;
  st = kc_tensor_create(NULL, dims, ndim, dtype, kc_device_cpu(), &tensor);
  if (st) {
    *out_status = kc_status_add_context(st, "argument %d", position);
    return true;
  }
  DLTensor* t = (DLTensor*)(uintptr_t)kc_tensor_get_dltensor(tensor);
  int64_t numel = kc_dltensor_get_numel(t);
  /* Values: as many as the shape holds, or one to fill it with. */
  const char* values = rest + 1;
  int64_t given = *values ? 1 : 0;
  for (const char* c = values; *c; ++c) given += *c == ',';
  if (given != numel && !(given == 1 && numel > 0)) {
    char msg[128];
    snprintf(msg, sizeof msg,
             "the shape holds %" PRId64 " value(s), %" PRId64
             " given (one "
             "value fills it)",
             numel, given);
    *out_status = literal_error(position, text, msg);
  }
  const char* p = values;
  for (int64_t i = 0; !*out_status && i < given; ++i) {
    size_t n = strcspn(p, ",");
    if (!literal_store(t, i, p, n)) {
      char msg[256];
      char dt[32];
      kc_dtype_format(dtype, dt, sizeof dt);
      bool an = dtype.code == kDLInt || dtype.code == kDLFloat;
      snprintf(msg, sizeof msg, "value %" PRId64 " (%s) is not %s %s", i,
               CLI_Q(((kc_string_view){p, n})), an ? "an" : "a", dt);
      *out_status = literal_error(position, text, msg);
    }
    p += n + (p[n] == ',');
  }
  size_t elem = dtype.bits / 8u;
  for (int64_t i = 1; !*out_status && given == 1 && i < numel; ++i) {
    memcpy((char*)t->data + (size_t)i * elem, t->data, elem);
  }
  if (*out_status) {
    kc_object_release(KC_OBJECT(tensor));
    return true;
  }
  *out_value = kc_any_object(KC_OBJECT(tensor));
  return true;
}

/* One element as a literal writes it: floats at their own precision
 * without a redundant ".0" (the dtype says they are floats). */
static void literal_element(FILE* out, const DLTensor* t, int64_t i) {
  const unsigned char* p = (const unsigned char*)t->data + t->byte_offset +
                           (size_t)i * (t->dtype.bits / 8);
  char buf[64];
  if (t->dtype.code == kDLFloat) {
    double d;
    if (t->dtype.bits == 32) {
      float f;
      memcpy(&f, p, sizeof f);
      d = f;
    } else {
      memcpy(&d, p, sizeof d);
    }
    cli_format_float(d, t->dtype, buf, sizeof buf);
    size_t n = strlen(buf);
    if (n > 2 && strcmp(buf + n - 2, ".0") == 0) buf[n - 2] = '\0';
    fputs(buf, out);
  } else if (t->dtype.code == kDLBool) {
    fputs(*p ? "true" : "false", out);
  } else if (t->dtype.code == kDLInt) {
    int64_t v = 0;
    memcpy(&v, p, t->dtype.bits / 8u);
    int shift = 64 - t->dtype.bits; /* sign-extend the low bytes */
    v = (int64_t)((uint64_t)v << shift) >> shift;
    fprintf(out, "%" PRId64, v);
  } else {
    uint64_t v = 0;
    memcpy(&v, p, t->dtype.bits / 8u);
    fprintf(out, "%" PRIu64, v);
  }
}

bool cli_print_tensor_literal(FILE* out, const DLTensor* t) {
  if (!t || (t->ndim > 0 && !t->shape) || !literal_dtype(t->dtype) ||
      t->device.device_type != kDLCPU || !kc_dltensor_is_compact(t)) {
    return false;
  }
  int64_t n = kc_dltensor_get_numel(t);
  if (n < 0 || n > LITERAL_PRINT_MAX || (n > 0 && !t->data)) return false;
  char dtype[32];
  kc_dtype_format(t->dtype, dtype, sizeof dtype);
  fprintf(out, "%s[", dtype);
  for (int32_t i = 0; i < t->ndim; ++i) {
    fprintf(out, "%s%" PRId64, i ? "," : "", t->shape[i]);
  }
  fputs("]:", out);
  for (int64_t i = 0; i < n; ++i) {
    if (i) fputc(',', out);
    literal_element(out, t, i);
  }
  return true;
}
