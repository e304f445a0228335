/*
 * print_value.c — how `kcall call` shows a result.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void print_float(FILE* out, double d) {
  char buf[48];
  cli_format_float(d, kc_dtype_make(kDLFloat, 64, 1), buf, sizeof buf);
  fputs(buf, out);
}

/* Bytes between quotes, with the escapes Python uses for them. */
static void print_quoted(FILE* out, kc_string_view s, bool escape_high) {
  fputc('\'', out);
  for (size_t i = 0; i < s.size; ++i) {
    unsigned char c = (unsigned char)s.data[i];
    switch (c) {
      case '\\': fputs("\\\\", out); break;
      case '\'': fputs("\\'", out); break;
      case '\n': fputs("\\n", out); break;
      case '\r': fputs("\\r", out); break;
      case '\t': fputs("\\t", out); break;
      default:
        if (c < 0x20 || c == 0x7f || (escape_high && c >= 0x80)) {
          fprintf(out, "\\x%02x", (unsigned)c);
        } else {
          fputc(c, out);
        }
    }
  }
  fputc('\'', out);
}

static void print_tensor(FILE* out, const DLTensor* t) {
  if (cli_print_tensor_literal(out, t)) return;
  if (!t || (t->ndim > 0 && !t->shape)) {
    fputs("<tensor ?>", out);
    return;
  }
  char dtype[64];
  char device[64];
  kc_dtype_format(t->dtype, dtype, sizeof dtype);
  kc_device_format(t->device, device, sizeof device);
  fprintf(out, "<tensor %s[", dtype);
  for (int32_t i = 0; i < t->ndim; ++i) {
    fprintf(out, "%s%" PRId64, i ? "," : "", t->shape[i]);
  }
  fprintf(out, "] %s>", device);
}

static void print_any(FILE* out, const kc_any* value, bool nested);

static void print_array(FILE* out, const kc_array* array) {
  size_t n = kc_array_get_size(array);
  fputc('[', out);
  for (size_t i = 0; i < n; ++i) {
    if (i) fputs(", ", out);
    print_any(out, kc_array_get_item(array, i), true);
  }
  fputc(']', out);
}

/* Inside an array strings are quoted, so that [a, b] and ['a, b'] differ;
 * a top-level string prints as it is, for use in scripts. */
static void print_any(FILE* out, const kc_any* value, bool nested) {
  kc_string_view text;
  if (kc_any_get_string(value, &text)) {
    if (nested) {
      print_quoted(out, text, false);
    } else {
      if (text.size) fwrite(text.data, 1, text.size, out);
    }
    return;
  }
  char buf[64];
  switch (value->type_index) {
    case KC_TYPE_NONE: fputs("None", out); break;
    case KC_TYPE_BOOL: fputs(value->u.v_int64 ? "true" : "false", out); break;
    case KC_TYPE_INT: fprintf(out, "%" PRId64, value->u.v_int64); break;
    case KC_TYPE_FLOAT: print_float(out, value->u.v_float64); break;
    case KC_TYPE_OPAQUE_PTR: fprintf(out, "<opaque %p>", value->u.v_ptr); break;
    case KC_TYPE_DTYPE:
      kc_dtype_format(value->u.v_dtype, buf, sizeof buf);
      fputs(buf, out);
      break;
    case KC_TYPE_DEVICE:
      kc_device_format(value->u.v_device, buf, sizeof buf);
      fputs(buf, out);
      break;
    case KC_TYPE_DLTENSOR_PTR: print_tensor(out, value->u.v_dltensor); break;
    case KC_TYPE_TENSOR:
      print_tensor(out, kc_tensor_get_dltensor((const kc_tensor*)(void*)
                                                   value->u.v_obj));
      break;
    case KC_TYPE_BYTES:
      fputc('b', out);
      print_quoted(out, kc_bytes_get_view((const kc_bytes*)(void*)
                                              value->u.v_obj),
                   true);
      break;
    case KC_TYPE_ARRAY:
      print_array(out, (const kc_array*)(void*)value->u.v_obj);
      break;
    case KC_TYPE_FUNC: fputs("<function>", out); break;
    default: fprintf(out, "<%s>", kc_type_name(value->type_index)); break;
  }
}

void cli_print_value(FILE* out, const kc_any* value) {
  print_any(out, value, false);
}
