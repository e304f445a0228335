/* The typed loops of the bitwise operations, the shifts and convert: every
 * (op, integer type) and every convert pair between f32, f64, the integers
 * and pred, against references computed here bit by bit (shifts by the
 * width or more, negative amounts, the sign fill) and value by value
 * (NaN, infinities, -0, out of range, rounding). Element counts are not a
 * multiple of any vector width, so the loops' tails run too. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt_hlo.h"

typedef struct kt_itype {
  const char* name;
  int bits;
  bool is_signed;
} kt_itype;

static const kt_itype kt_itypes[] = {
    {"s8", 8, true},   {"s16", 16, true},  {"s32", 32, true},  {"s64", 64, true},
    {"u8", 8, false},  {"u16", 16, false}, {"u32", 32, false}, {"u64", 64, false},
};

static uint64_t kt_mask(int bits) { return bits == 64 ? ~0ull : (1ull << bits) - 1; }

/* Appends the bit pattern v of a `bits`-wide integer as HLO text. */
static void kt_put_int(char* buf, size_t cap, uint64_t v, int bits, bool is_signed) {
  size_t at = strlen(buf);
  v &= kt_mask(bits);
  if (is_signed && bits < 64 && (v >> (bits - 1)) & 1) v |= ~kt_mask(bits);
  if (is_signed) {
    snprintf(buf + at, cap - at, "%s%lld", at && buf[at - 1] != '(' ? ", " : "", (long long)v);
  } else {
    snprintf(buf + at, cap - at, "%s%llu", at && buf[at - 1] != '(' ? ", " : "",
             (unsigned long long)v);
  }
}

static uint64_t kt_read_bits(const void* data, int i, int bits) {
  switch (bits) {
    case 8: return ((const uint8_t*)data)[i];
    case 16: return ((const uint16_t*)data)[i];
    case 32: return ((const uint32_t*)data)[i];
    default: return ((const uint64_t*)data)[i];
  }
}

/* The result of `op` on the bit patterns a and b (masked to the width),
 * as XLA defines it. */
static uint64_t kt_ref(const char* op, uint64_t a, uint64_t b, int bits) {
  uint64_t m = kt_mask(bits);
  a &= m;
  b &= m;
  bool neg = (a >> (bits - 1)) & 1;
  if (!strcmp(op, "and")) return a & b;
  if (!strcmp(op, "or")) return a | b;
  if (!strcmp(op, "xor")) return a ^ b;
  if (!strcmp(op, "not")) return ~a & m;
  if (!strcmp(op, "shift-left")) return b >= (uint64_t)bits ? 0 : (a << b) & m;
  if (!strcmp(op, "shift-right-logical")) return b >= (uint64_t)bits ? 0 : a >> b;
  /* shift-right-arithmetic */
  if (b >= (uint64_t)bits) return neg ? m : 0;
  uint64_t r = a >> b;
  if (neg && b > 0) r |= m & ~(m >> b);
  return r;
}

static const uint64_t kt_values[] = {
    0, 1, 2, 3, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF, 0x7FFFFFFF, 0x80000000u,
    0xFFFFFFFFu, 0x5555555555555555ull, 0xAAAAAAAAAAAAAAAAull, 0x8000000000000000ull,
    0x7FFFFFFFFFFFFFFFull, ~0ull, 0x0123456789ABCDEFull, 0xFEDCBA9876543210ull,
    0x9E3779B97F4A7C15ull};

/* The shift amounts for a width: every one up to the width and past it,
 * and large and negative (all bits set) ones. */
static int kt_amounts(int bits, uint64_t* out) {
  int n = 0;
  for (int s = 0; s <= bits + 2; ++s) out[n++] = (uint64_t)s;
  out[n++] = (uint64_t)(2 * bits);
  out[n++] = 0x7F;
  out[n++] = 0x80;
  out[n++] = ~0ull; /* -1 for the signed types */
  out[n++] = 0x8000000000000000ull;
  return n;
}

static void kt_check_int_op(const kt_itype* t, const char* op) {
  bool unary = !strcmp(op, "not");
  bool shift = !strncmp(op, "shift", 5);
  uint64_t amounts[80];
  int na = shift ? kt_amounts(t->bits, amounts) : 0;
  int nv = (int)(sizeof kt_values / sizeof kt_values[0]);
  int n = shift ? nv * na : nv * nv;
  if (unary) n = nv;
  uint64_t* a = malloc(sizeof(uint64_t) * (size_t)n);
  uint64_t* b = malloc(sizeof(uint64_t) * (size_t)n);
  size_t cap = (size_t)n * 48 + 1024;
  char* ta = malloc(cap);
  char* tb = malloc(cap);
  char* text = malloc(3 * cap);
  KC_CHECK(a && b && ta && tb && text);
  ta[0] = tb[0] = 0;
  for (int i = 0; i < n; ++i) {
    a[i] = unary ? kt_values[i] : kt_values[i % nv];
    b[i] = shift ? amounts[i / nv] : unary ? 0 : kt_values[(i / nv + i) % nv];
    kt_put_int(ta, cap, a[i], t->bits, t->is_signed);
    kt_put_int(tb, cap, b[i], t->bits, t->is_signed);
  }
  if (unary) {
    snprintf(text, 3 * cap,
             "HloModule m\nENTRY e {\n  a = %s[%d] constant({%s})\n  ROOT r = %s[%d] %s(a)\n}\n",
             t->name, n, ta, t->name, n, op);
  } else {
    snprintf(text, 3 * cap,
             "HloModule m\nENTRY e {\n  a = %s[%d] constant({%s})\n  b = %s[%d] constant({%s})\n"
             "  ROOT r = %s[%d] %s(a, b)\n}\n",
             t->name, n, ta, t->name, n, tb, t->name, n, op);
  }
  kc_tensor* out = NULL;
  kt_run_text(text, &out, 1);
  const void* data = kt_data(out);
  for (int i = 0; i < n; ++i) {
    uint64_t want = kt_ref(op, a[i], b[i], t->bits);
    uint64_t got = kt_read_bits(data, i, t->bits);
    if (got != want) {
      kt__fail(__FILE__, __LINE__, "%s %s element %d: a=%#llx b=%#llx: expected %#llx, got %#llx",
               t->name, op, i, (unsigned long long)(a[i] & kt_mask(t->bits)),
               (unsigned long long)(b[i] & kt_mask(t->bits)), (unsigned long long)want,
               (unsigned long long)got);
    }
  }
  kt_release(&out, 1);
  free(a);
  free(b);
  free(ta);
  free(tb);
  free(text);
}

static const char* const kt_int_ops[] = {"and", "or", "xor", "not", "shift-left",
                                         "shift-right-logical", "shift-right-arithmetic"};

KC_TEST(hlo_int_fast_bitwise_and_shifts_every_type) {
  for (size_t t = 0; t < sizeof kt_itypes / sizeof kt_itypes[0]; ++t) {
    for (size_t o = 0; o < sizeof kt_int_ops / sizeof kt_int_ops[0]; ++o) {
      kt_check_int_op(&kt_itypes[t], kt_int_ops[o]);
    }
  }
}

KC_TEST(hlo_int_fast_pred_bitwise) {
  static const char* const ops[] = {"and", "or", "xor", "not"};
  static const char* const want[] = {"0001", "0111", "0110", "1100"};
  for (int o = 0; o < 4; ++o) {
    char text[512];
    bool unary = o == 3;
    snprintf(text, sizeof text,
             "HloModule m\nENTRY e {\n  a = pred[4] constant({false, false, true, true})\n"
             "  b = pred[4] constant({false, true, false, true})\n"
             "  ROOT r = pred[4] %s(a%s)\n}\n",
             ops[o], unary ? "" : ", b");
    kc_tensor* out = NULL;
    kt_run_text(text, &out, 1);
    const uint8_t* r = kt_data(out);
    for (int i = 0; i < 4; ++i) KC_CHECK_INT(r[i], want[o][i] - '0');
    kt_release(&out, 1);
  }
}

/* ---- convert ------------------------------------------------------------------- */

typedef struct kt_ctype {
  const char* name;
  int kind; /* 0 float, 1 signed, 2 unsigned, 3 pred */
  int bits;
} kt_ctype;

static const kt_ctype kt_ctypes[] = {
    {"f32", 0, 32}, {"f64", 0, 64}, {"s8", 1, 8},   {"s16", 1, 16},
    {"s32", 1, 32}, {"s64", 1, 64}, {"u8", 2, 8},   {"u16", 2, 16},
    {"u32", 2, 32}, {"u64", 2, 64}, {"pred", 3, 8},
};

/* A source value: its double (floats), or its bit pattern (integers, pred). */
typedef struct kt_src {
  double f;
  uint64_t bits;
} kt_src;

static const double kt_float_values[] = {
    0.0, -0.0, 0.5, -0.5, 1.5, -1.7, 127.5, 128.0, -128.5, -129.0, 255.9, 256.0,
    32767.5, -32769.0, 65535.9, 65536.0, 2147483520.0, 2147483648.0, -2147483648.0,
    -2147483904.0, 4294967040.0, 4294967296.0, 16777217.0, 9.2233720368547758e18,
    -9.2233720368547758e18, 1.8446744073709552e19, 1e30, -1e30, 1e-45, -3.0, 42.0,
    INFINITY, -INFINITY, NAN, -NAN,
    /* beyond f32 */
    2147483647.5, 4294967295.5, 1e300, -1e300, 3.4028235677973366e38, 1e-320};

static const uint64_t kt_int_values[] = {
    0, 1, ~0ull, 2, 0x7F, 0x80, 0xFF, 0x100, ~0x80ull, 0x7FFF, 0x8000, 0xFFFF, 0x10000,
    0x7FFFFFFF, 0x80000000u, 0xFFFFFFFFu, 0x100000000ull, 16777217, 0x20000000000001ull,
    0x7FFFFFFFFFFFFFFFull, 0x8000000000000000ull, 0xFFFFFFFFFFFFFFFEull, 0x123456789ull};

/* The value of an integer source as a double (rounded past 2^53, as the
 * conversion to a float rounds it). */
static double kt_src_double(const kt_ctype* t, uint64_t v) {
  if (t->kind == 3) return v ? 1.0 : 0.0;
  if (t->kind == 1) return (double)(int64_t)v;
  return (double)v;
}

/* Sign- or zero-extends the pattern to 64 bits as the type reads it. */
static uint64_t kt_extend(const kt_ctype* t, uint64_t v) {
  v &= kt_mask(t->bits);
  if (t->kind == 1 && t->bits < 64 && (v >> (t->bits - 1)) & 1) v |= ~kt_mask(t->bits);
  return v;
}

/* Float to integer as XLA:CPU: NaN 0, saturating, truncating. */
static uint64_t kt_float_to_int(double v, const kt_ctype* t) {
  if (v != v) return 0;
  if (t->kind == 1) {
    double lo = -ldexp(1.0, t->bits - 1), top = ldexp(1.0, t->bits - 1);
    if (v <= lo) return (uint64_t)(int64_t)lo & kt_mask(t->bits);
    if (v >= top - 1) return (kt_mask(t->bits) >> 1);
    return (uint64_t)(int64_t)trunc(v) & kt_mask(t->bits);
  }
  double top = ldexp(1.0, t->bits);
  if (v <= 0) return 0;
  if (v >= top - 1) return kt_mask(t->bits);
  return (uint64_t)trunc(v);
}

static void kt_put_float(char* buf, size_t cap, double v, bool f32) {
  size_t at = strlen(buf);
  const char* sep = at ? ", " : "";
  if (v != v) {
    snprintf(buf + at, cap - at, "%s%s", sep, signbit(v) ? "-nan" : "nan");
  } else if (isinf(v)) {
    snprintf(buf + at, cap - at, "%s%s", sep, v < 0 ? "-inf" : "inf");
  } else {
    snprintf(buf + at, cap - at, f32 ? "%s%.9g" : "%s%.17g", sep, v);
  }
}

static void kt_check_convert(const kt_ctype* from, const kt_ctype* to) {
  enum { MAX = 64 };
  kt_src src[MAX];
  int n = 0;
  if (from->kind == 0) {
    for (size_t i = 0; i < sizeof kt_float_values / sizeof kt_float_values[0]; ++i) {
      double v = kt_float_values[i];
      if (from->bits == 32) {
        /* f32 sources: the nearest f32, without the values past its range. */
        if (v == v && !isinf(v) && fabs(v) > 3.5e38) continue;
        v = (double)(float)v;
      }
      src[n++] = (kt_src){v, 0};
    }
  } else if (from->kind == 3) {
    for (int i = 0; i < 5; ++i) src[n++] = (kt_src){0, (uint64_t)(i % 2)};
  } else {
    for (size_t i = 0; i < sizeof kt_int_values / sizeof kt_int_values[0]; ++i) {
      uint64_t v = kt_extend(from, kt_int_values[i]);
      src[n++] = (kt_src){kt_src_double(from, v), v};
    }
  }
  char values[4096] = "";
  for (int i = 0; i < n; ++i) {
    if (from->kind == 0) {
      kt_put_float(values, sizeof values, src[i].f, from->bits == 32);
    } else if (from->kind == 3) {
      size_t at = strlen(values);
      snprintf(values + at, sizeof values - at, "%s%s", at ? ", " : "",
               src[i].bits ? "true" : "false");
    } else {
      kt_put_int(values, sizeof values, src[i].bits, from->bits, from->kind == 1);
    }
  }
  char text[8192];
  snprintf(text, sizeof text,
           "HloModule m\nENTRY e {\n  a = %s[%d] constant({%s})\n  ROOT r = %s[%d] convert(a)\n}\n",
           from->name, n, values, to->name, n);
  kc_tensor* out = NULL;
  kt_run_text(text, &out, 1);
  const void* data = kt_data(out);
  for (int i = 0; i < n; ++i) {
    double fv = from->kind == 0 ? src[i].f : kt_src_double(from, src[i].bits);
    char what[160];
    snprintf(what, sizeof what, "convert %s -> %s element %d (%.17g)", from->name, to->name, i,
             fv);
    if (to->kind == 0) {
      /* Through double, then rounded once more for f32 (a 64-bit
       * integer may round twice, as documented). */
      double want = to->bits == 32 ? (double)(float)fv : fv;
      double got = to->bits == 32 ? (double)((const float*)data)[i] : ((const double*)data)[i];
      bool same = want != want ? got != got : got == want && signbit(got) == signbit(want);
      if (!same) kt__fail(__FILE__, __LINE__, "%s: expected %.17g, got %.17g", what, want, got);
      continue;
    }
    uint64_t want;
    if (to->kind == 3) {
      want = from->kind == 0 ? fv != 0 : src[i].bits != 0;
    } else if (from->kind == 0) {
      want = kt_float_to_int(fv, to);
    } else if (from->kind == 3) {
      want = src[i].bits;
    } else {
      want = src[i].bits & kt_mask(to->bits); /* wraps */
    }
    uint64_t got = kt_read_bits(data, i, to->bits);
    if (got != want) {
      kt__fail(__FILE__, __LINE__, "%s: expected %#llx, got %#llx", what,
               (unsigned long long)want, (unsigned long long)got);
    }
  }
  kt_release(&out, 1);
}

KC_TEST(hlo_int_fast_convert_every_pair) {
  size_t nt = sizeof kt_ctypes / sizeof kt_ctypes[0];
  for (size_t f = 0; f < nt; ++f) {
    for (size_t t = 0; t < nt; ++t) kt_check_convert(&kt_ctypes[f], &kt_ctypes[t]);
  }
}

/* Spot values written out by hand, so that the references above are
 * checked too. */
KC_TEST(hlo_int_fast_convert_edges_by_hand) {
  kc_tensor* o[3] = {NULL};
  kt_run_text("HloModule m\nENTRY e {\n"
              "  a = f32[8] constant({nan, -nan, inf, -inf, -0, 2147483648, -2147483904, -1.9})\n"
              "  s = s32[8] convert(a)\n"
              "  u = u32[8] convert(a)\n"
              "  b = u32[4] constant({4294967295, 16777217, 2147483648, 0})\n"
              "  f = f32[4] convert(b)\n"
              "  ROOT t = (s32[8], u32[8], f32[4]) tuple(s, u, f)\n}\n",
              o, 3);
  const int32_t* s = kt_data(o[0]);
  const uint32_t* u = kt_data(o[1]);
  const float* f = kt_data(o[2]);
  static const int32_t want_s[8] = {0, 0, INT32_MAX, INT32_MIN, 0, INT32_MAX, INT32_MIN, -1};
  static const uint32_t want_u[8] = {0, 0, UINT32_MAX, 0, 0, 2147483648u, 0, 0};
  for (int i = 0; i < 8; ++i) {
    KC_CHECK_INT(s[i], want_s[i]);
    KC_CHECK_INT(u[i], want_u[i]);
  }
  KC_CHECK(f[0] == 4294967296.0f);
  KC_CHECK(f[1] == 16777216.0f); /* ties to even */
  KC_CHECK(f[2] == 2147483648.0f);
  KC_CHECK(f[3] == 0.0f && !signbit(f[3]));
  kt_release(o, 3);
}
