/*
 * run_print.c — how `kcall run` prints an output tensor: nested brackets
 * as NumPy prints them, summarised past NumPy's threshold, each float in
 * the shortest text that reads back as the same value of its own type.
 */
#include <inttypes.h>
#include <string.h>

#include "cli.h"
#include "kernels/half.h"
#include "run.h"

/* NumPy's print options: past `threshold` elements, show `edge` items at
 * each end of every dimension; wrap rows at `linewidth` columns. */
enum { PRINT_THRESHOLD = 1000, PRINT_EDGE = 3, PRINT_LINEWIDTH = 75 };

typedef struct printer {
  FILE* out;
  const DLTensor* t;
  const unsigned char* data;
  size_t elem_size;
  bool summarise;
  size_t column; /* where the next character lands on the current line */
} printer;

static void put_text(printer* pr, const char* text) {
  fputs(text, pr->out);
  pr->column += strlen(text);
}

static void new_line(printer* pr, size_t indent) {
  fputc('\n', pr->out);
  for (size_t i = 0; i < indent; ++i) fputc(' ', pr->out);
  pr->column = indent;
}

static double float_value(DLDataType dt, const void* p) {
  if (dt.bits == 64) {
    double d;
    memcpy(&d, p, sizeof d);
    return d;
  }
  if (dt.bits == 32) {
    float f;
    memcpy(&f, p, sizeof f);
    return f;
  }
  uint16_t h;
  memcpy(&h, p, sizeof h);
  return kc__half_to_f32(dt.code == kDLBfloat, h);
}

static void format_element(const printer* pr, size_t index, char* buf,
                           size_t cap) {
  const unsigned char* p = pr->data + index * pr->elem_size;
  DLDataType dt = pr->t->dtype;
  if (dt.code == kDLFloat || dt.code == kDLBfloat) {
    cli_format_float(float_value(dt, p), dt, buf, cap);
  } else if (dt.code == kDLComplex && (dt.bits == 64 || dt.bits == 128)) {
    /* As Python writes a complex: real part, signed imaginary part, 'j';
     * each part the shortest text of its own type. */
    DLDataType part = kc_dtype_make(kDLFloat, (uint8_t)(dt.bits / 2), 1);
    char re[32], im[32];
    cli_format_float(float_value(part, p), part, re, sizeof re);
    cli_format_float(float_value(part, p + dt.bits / 16), part, im, sizeof im);
    snprintf(buf, cap, "%s%s%sj", re, im[0] == '-' ? "" : "+", im);
  } else if (dt.code == kDLBool) {
    snprintf(buf, cap, "%s", *p ? "true" : "false");
  } else if (dt.code == kDLInt) {
    int64_t v = 0;
    if (dt.bits == 8) v = (int8_t)*p;
    if (dt.bits == 16) { int16_t x; memcpy(&x, p, sizeof x); v = x; }
    if (dt.bits == 32) { int32_t x; memcpy(&x, p, sizeof x); v = x; }
    if (dt.bits == 64) memcpy(&v, p, sizeof v);
    snprintf(buf, cap, "%" PRId64, v);
  } else if (dt.code == kDLUInt) {
    uint64_t v = 0;
    if (dt.bits == 8) v = *p;
    if (dt.bits == 16) { uint16_t x; memcpy(&x, p, sizeof x); v = x; }
    if (dt.bits == 32) { uint32_t x; memcpy(&x, p, sizeof x); v = x; }
    if (dt.bits == 64) memcpy(&v, p, sizeof v);
    snprintf(buf, cap, "%" PRIu64, v);
  } else {
    snprintf(buf, cap, "?");
  }
}

/* Between two items of dimension `dim` that is not the last: the next
 * starts on a new line under its bracket, after a blank line per level of
 * nesting beyond the second, as NumPy does. */
static void outer_separator(printer* pr, int32_t dim) {
  put_text(pr, ",");
  for (int32_t i = dim + 1; i < pr->t->ndim - 1; ++i) fputc('\n', pr->out);
  new_line(pr, (size_t)dim + 1);
}

/* An item of the last dimension, wrapped onto a new line when it would
 * cross the line width (room is kept for the ',' or ']' after it). */
static void put_item(printer* pr, const char* text, bool first, int32_t dim) {
  if (!first) {
    if (pr->column + 2 + strlen(text) + 1 > PRINT_LINEWIDTH) {
      put_text(pr, ",");
      new_line(pr, (size_t)dim + 1);
    } else {
      put_text(pr, ", ");
    }
  }
  put_text(pr, text);
}

static void print_dim(printer* pr, int32_t dim, size_t first, size_t stride) {
  int64_t n = pr->t->shape[dim];
  bool last = dim == pr->t->ndim - 1;
  size_t inner = last ? 1 : stride / (size_t)pr->t->shape[dim + 1];
  put_text(pr, "[");
  for (int64_t i = 0; i < n; ++i) {
    if (pr->summarise && n > 2 * PRINT_EDGE && i == PRINT_EDGE) {
      if (last) {
        put_item(pr, "...", false, dim);
      } else {
        outer_separator(pr, dim);
        put_text(pr, "...");
      }
      i = n - PRINT_EDGE;
    }
    size_t at = first + (size_t)i * stride;
    if (last) {
      char text[72];
      format_element(pr, at, text, sizeof text);
      put_item(pr, text, i == 0, dim);
    } else {
      if (i > 0) outer_separator(pr, dim);
      print_dim(pr, dim + 1, at, inner);
    }
  }
  put_text(pr, "]");
}

void run_print_tensor(FILE* out, const DLTensor* t) {
  int64_t numel = kc_dltensor_get_numel(t);
  printer pr = {out, t, (const unsigned char*)t->data + t->byte_offset,
                kc_dtype_get_size(t->dtype), numel > PRINT_THRESHOLD, 0};
  if (t->ndim == 0) {
    char text[72];
    format_element(&pr, 0, text, sizeof text);
    put_text(&pr, text);
    return;
  }
  if (numel == 0) {
    put_text(&pr, "[]");
    return;
  }
  /* Elements per step of dimension 0, in a compact row-major tensor. */
  size_t stride = (size_t)numel / (size_t)t->shape[0];
  print_dim(&pr, 0, 0, stride);
}
