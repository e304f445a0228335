/*
 * format_float.c — the text of a float, shared by `kcall call` and
 * `kcall run`.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "kernels/half.h"
#include "run.h"

/* True when `text` reads back as `value` at the precision of `dtype`. */
static bool reads_back(const char* text, double value, DLDataType dtype) {
  if (dtype.bits == 64) return strtod(text, NULL) == value;
  if (dtype.bits == 32) return strtof(text, NULL) == (float)value;
  /* f16 and bf16: the text rounded once, as an input literal is. */
  double d = strtod(text, NULL);
  if (dtype.code == kDLBfloat) return kc__f64_to_bf16(d) == kc__f64_to_bf16(value);
  return kc__f64_to_f16(d) == kc__f64_to_f16(value);
}

void cli_format_float(double value, DLDataType dtype, char* buf, size_t cap) {
  if (isnan(value) || isinf(value)) {
    snprintf(buf, cap, "%s", isnan(value) ? "nan" : value < 0 ? "-inf" : "inf");
    return;
  }
  /* The fewest significant digits that read back... */
  char sci[40];
  int digits = 1;
  for (; digits < 17; ++digits) {
    snprintf(sci, sizeof sci, "%.*e", digits - 1, value);
    if (reads_back(sci, value, dtype)) break;
  }
  snprintf(sci, sizeof sci, "%.*e", digits - 1, value);
  int exponent = atoi(strchr(sci, 'e') + 1);
  /* ...written out positionally where NumPy does (1e-4 <= |v| < 1e16),
   * else as %g writes exponents. */
  if (value == 0 || (exponent >= -4 && exponent < 16)) {
    int decimals = digits - 1 - exponent;
    snprintf(buf, cap, "%.*f", decimals > 0 ? decimals : 0, value);
  } else {
    snprintf(buf, cap, "%.*g", digits, value);
  }
  /* A float that looks like an int gets ".0", so the two stay apart. */
  size_t n = strlen(buf);
  if (strspn(buf, "-0123456789") == n && n + 3 <= cap) memcpy(buf + n, ".0", 3);
}
