/* complex, real and imag: building complex values and taking them apart;
 * and the c64 and c128 kernels of the math, compare, iota and reduce
 * instructions (instr_types.h). */
#include <complex.h>
#include <math.h>
#include <stdio.h>

#include "internal/common.h"
#include "kernels/elementwise_ops.h"
#include "program/instr/instr.h"
#include "program/instr/instr_types.h"

typedef struct kc__parts_plan {
  int64_t count;
  size_t part; /* bytes of one part: 4 (c64, f32) or 8 */
  bool from_complex; /* real, imag: the operand is complex */
} kc__parts_plan;

static kc_status* kc__parts_read(const kc_program* p, const kc__instr* in, kc__parts_plan* plan) {
  const kc_shape* r = in->shape;
  const kc_shape* x = kc__instr_operand(p, in, 0);
  KC_RETURN_IF_ERROR(kc__instr_expect_array(in, r, "the result"));
  for (size_t i = 0; i < in->num_operands; ++i) {
    KC_RETURN_IF_ERROR(kc__instr_expect_array(in, kc__instr_operand(p, in, i), "an operand"));
  }
  DLDataType tx = kc_shape_get_dtype(x), tr = kc_shape_get_dtype(r);
  plan->count = 1;
  for (int32_t d = 0; d < kc_shape_get_rank(r); ++d) plan->count *= kc_shape_get_dims(r)[d];
  char bx[32], br[32], g[256];
  bool ok;
  if (in->op == KC_OP_COMPLEX) {
    const kc_shape* y = kc__instr_operand(p, in, 1);
    ok = tx.code == kDLFloat && (tx.bits == 32 || tx.bits == 64) && tx.lanes == 1 &&
         kc_shape_equal(x, y) && tr.code == kDLComplex && tr.bits == 2 * tx.bits &&
         kc__shape_same_dims(x, r);
    plan->part = tx.bits / 8;
    if (!ok) {
      kc_shape_format(y, g, sizeof g);
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                        "complex: expected two f32 (or f64) operands of one shape and a c64 "
                        "(or c128) result of their dims, got %s and %s giving %s",
                        kc__instr_dtype_text(tx, bx, sizeof bx), g,
                        kc__instr_dtype_text(tr, br, sizeof br));
    }
    return NULL;
  }
  plan->from_complex = tx.code == kDLComplex;
  bool real_in = tx.code == kDLFloat && (tx.bits == 32 || tx.bits == 64);
  ok = tx.lanes == 1 && (plan->from_complex ? (tx.bits == 64 || tx.bits == 128) : real_in) &&
       tr.code == kDLFloat && tr.bits == (plan->from_complex ? tx.bits / 2 : tx.bits) &&
       kc__shape_same_dims(x, r);
  plan->part = tr.bits / 8;
  if (!ok) {
    const kc__instr_def* def = in->def;
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                      "%s: expected a c64, c128, f32 or f64 operand and a result of its part "
                      "type (f32 for c64) and dims, got %s giving %s",
                      def->name, kc__instr_dtype_text(tx, bx, sizeof bx),
                      kc__instr_dtype_text(tr, br, sizeof br));
  }
  return NULL;
}

static kc_status* kc__parts_verify(const kc_program* p, const kc__instr* in) {
  kc__parts_plan plan;
  return kc__parts_read(p, in, &plan);
}

static kc_status* kc__parts_prepare(const kc_program* p, const kc__instr* in,
                                    const kc__prepare_ctx* ctx, const void** out) {
  kc__parts_plan* plan = kc__arena_alloc(ctx->arena, sizeof *plan);
  if (!plan) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  KC_RETURN_IF_ERROR(kc__parts_read(p, in, plan));
  *out = plan;
  return NULL;
}

static kc_status* kc__parts_kernel(const kc__instr_kernel_ctx* ctx, void* out,
                                   const void* const* ins) {
  const kc__parts_plan* plan = ctx->data;
  size_t w = plan->part;
  char* r = out;
  const char* a = ins[0];
  switch (ctx->instr->op) {
    case KC_OP_COMPLEX: {
      const char* b = ins[1];
      for (int64_t i = 0; i < plan->count; ++i) {
        memcpy(r + (size_t)i * 2 * w, a + (size_t)i * w, w);
        memcpy(r + (size_t)i * 2 * w + w, b + (size_t)i * w, w);
      }
      return NULL;
    }
    default: {
      bool imag = ctx->instr->op == KC_OP_IMAG;
      if (!plan->from_complex) {
        /* real(x) = x and imag(x) = 0 for a real x */
        if (imag) {
          memset(r, 0, (size_t)plan->count * w);
        } else {
          memcpy(r, a, (size_t)plan->count * w);
        }
        return NULL;
      }
      for (int64_t i = 0; i < plan->count; ++i) {
        memcpy(r + (size_t)i * w, a + (size_t)i * 2 * w + (imag ? w : 0), w);
      }
      return NULL;
    }
  }
}

static const char* const kc__no_attrs[] = {NULL};

const kc__instr_def kc__instr_complex[] = {
    {.op = KC_OP_COMPLEX, .name = "complex", .min_operands = 2, .max_operands = 2,
     .num_computations = 0, .attrs = kc__no_attrs, .computation_attrs = NULL,
     .verify = kc__parts_verify, .prepare = kc__parts_prepare, .kernel = kc__parts_kernel,
     .device_elementwise = true},
    {.op = KC_OP_REAL, .name = "real", .min_operands = 1, .max_operands = 1, .num_computations = 0,
     .attrs = kc__no_attrs, .computation_attrs = NULL, .verify = kc__parts_verify,
     .prepare = kc__parts_prepare, .kernel = kc__parts_kernel, .device_elementwise = true},
    {.op = KC_OP_IMAG, .name = "imag", .min_operands = 1, .max_operands = 1, .num_computations = 0,
     .attrs = kc__no_attrs, .computation_attrs = NULL, .verify = kc__parts_verify,
     .prepare = kc__parts_prepare, .kernel = kc__parts_kernel, .device_elementwise = true},
};
const size_t kc__instr_complex_count = KC__ARRAY_SIZE(kc__instr_complex);

/* ---- c64 and c128 kernels of the other families ------------------------------------- */

/* The functions in the part type T (float for c64), as XLA defines them:
 * sign(z) = z / |z| (0 for 0); expm1 and log1p keep their accuracy near 0
 * (expm1(a + bi) = expm1(a) cos b - 2 sin^2(b/2) + i e^a sin b,
 * log1p(z) = log|1 + z| + i arg(1 + z), the modulus through log1p);
 * 0^w = 1 for w = 0 and 0 for a real w > 0, otherwise
 * |z|^w = e^(w log z) through the polar form. */
#define KC__COMPLEX_MATH(sfx, T, F, MK)                                                    \
  static T _Complex kc__cx_sign_##sfx(T _Complex z) {                                      \
    T m = hypot##F(creal##F(z), cimag##F(z));                                              \
    if (m == 0) return z;                                                                  \
    return MK(creal##F(z) / m, cimag##F(z) / m);                                           \
  }                                                                                        \
  static T _Complex kc__cx_expm1_##sfx(T _Complex z) {                                     \
    T a = creal##F(z), b = cimag##F(z), h = sin##F(b / 2);                                 \
    return MK(expm1##F(a) * cos##F(b) - 2 * h * h, exp##F(a) * sin##F(b));                 \
  }                                                                                        \
  static T _Complex kc__cx_log1p_##sfx(T _Complex z) {                                     \
    T a = creal##F(z), b = cimag##F(z);                                                    \
    return MK(log1p##F(a * (2 + a) + b * b) / 2, atan2##F(b, 1 + a));                      \
  }                                                                                        \
  static T _Complex kc__cx_pow_##sfx(T _Complex z, T _Complex w) {                         \
    T a = creal##F(z), b = cimag##F(z), c = creal##F(w), d = cimag##F(w);                  \
    if (a == 0 && b == 0) {                                                                \
      if (c == 0 && d == 0) return MK(1, 0);                                               \
      if (c > 0 && d == 0) return MK(0, 0);                                                \
    }                                                                                      \
    T r2 = a * a + b * b, arg = atan2##F(b, a);                                            \
    T coeff = pow##F(r2, c / 2) * exp##F(-d * arg);                                        \
    T q = c * arg + d / 2 * log##F(r2);                                                    \
    return MK(coeff * cos##F(q), coeff * sin##F(q));                                       \
  }

/* A complex value from its parts, infinities and NaN kept (re + im * I
 * would make NaN of inf * 0; glibc gives clang no CMPLX). C11 lays a
 * complex value out as an array of its two parts. */
static float _Complex kc__cx_make_c64(float re, float im) {
  float parts[2] = {re, im};
  float _Complex z;
  memcpy(&z, parts, sizeof z);
  return z;
}
static double _Complex kc__cx_make_c128(double re, double im) {
  double parts[2] = {re, im};
  double _Complex z;
  memcpy(&z, parts, sizeof z);
  return z;
}
KC__COMPLEX_MATH(c64, float, f, kc__cx_make_c64)
KC__COMPLEX_MATH(c128, double, , kc__cx_make_c128)
#undef KC__COMPLEX_MATH


/* Product and quotient as XLA:CPU computes them, bit for bit where no
 * result is subnormal (XLA flushes those to zero): the product by the
 * schoolbook formula with its multiply-adds fused, (ac - bd) + (bc + ad)i
 * as fma(a, c, -bd) and fma(b, c, ad), with no recovery of infinities
 * from NaN (C's Annex G would give -inf + inf i for (inf + inf i) * i,
 * XLA NaN); the quotient by Smith's algorithm, fused likewise, and where
 * it gives NaN in both parts, XLA's three fix-ups: a zero divisor gives
 * copysign(inf, c) times the dividend, an infinite dividend over a finite
 * divisor an infinity, a finite dividend over an infinite divisor a
 * zero. */
#define KC__COMPLEX_ARITH(sfx, T, F, MK)                                                   \
  static inline T _Complex kc__cx_mul_##sfx(T _Complex x, T _Complex y) {                  \
    T a = creal##F(x), b = cimag##F(x), c = creal##F(y), d = cimag##F(y);                  \
    return MK(fma##F(a, c, -(b * d)), fma##F(b, c, a * d));                                \
  }                                                                                        \
  static T _Complex kc__cx_div_##sfx(T _Complex x, T _Complex y) {                         \
    T a = creal##F(x), b = cimag##F(x), c = creal##F(y), d = cimag##F(y), re, im;          \
    if (fabs##F(c) < fabs##F(d)) {                                                         \
      T t = c / d, den = fma##F(c, t, d);                                                  \
      re = fma##F(a, t, b) / den;                                                          \
      im = fma##F(b, t, -a) / den;                                                         \
    } else {                                                                               \
      T t = d / c, den = fma##F(d, t, c);                                                  \
      re = fma##F(b, t, a) / den;                                                          \
      im = fma##F(-a, t, b) / den;                                                         \
    }                                                                                      \
    if (!isnan(re) || !isnan(im)) return MK(re, im);                                       \
    T inf = (T)INFINITY;                                                                   \
    if (c == 0 && d == 0) {                                                                \
      T s = copysign##F(inf, c);                                                           \
      return MK(s * a, s * b);                                                             \
    }                                                                                      \
    bool x_finite = isfinite(a) && isfinite(b), y_finite = isfinite(c) && isfinite(d);     \
    if ((isinf(a) || isinf(b)) && y_finite) {                                              \
      T p = copysign##F(isinf(a) ? 1 : 0, a), q = copysign##F(isinf(b) ? 1 : 0, b);        \
      return MK(inf * (p * c + q * d), inf * (q * c - p * d));                             \
    }                                                                                      \
    if ((isinf(c) || isinf(d)) && x_finite) {                                              \
      T p = copysign##F(isinf(c) ? 1 : 0, c), q = copysign##F(isinf(d) ? 1 : 0, d);        \
      return MK(0 * (a * p + b * q), 0 * (b * p - a * q));                                 \
    }                                                                                      \
    return MK(re, im);                                                                     \
  }
KC__COMPLEX_ARITH(c64, float, f, kc__cx_make_c64)
KC__COMPLEX_ARITH(c128, double, , kc__cx_make_c128)
#undef KC__COMPLEX_ARITH

/* op on n elements: each row's COMPLEX form (kernels/elementwise_ops.h),
 * KC__C(fn) and KC__CX(fn) naming the functions of the part type; abs
 * (the modulus, of the part type) here. */
#define KC__CX_EACH_1(expr)                                                                \
  for (int64_t i = 0; i < n; ++i) {                                                        \
    z = a[i];                                                                              \
    r[i] = (expr);                                                                         \
  }
#define KC__CX_EACH_2(expr)                                                                \
  for (int64_t i = 0; i < n; ++i) {                                                        \
    z = a[i];                                                                              \
    w = b[i];                                                                              \
    r[i] = (expr);                                                                         \
  }
#define KC__CX_CASE(OP, NAME, N, RES, DOM, VEC, COST, FLT, CPX, INT)                       \
  case KC_OP_##OP:                                                                         \
    if ((DOM) & KC__EW_COMPLEX) KC__CX_EACH_##N(CPX);                                      \
    break;
#define KC__CX_RUN(sfx, T, F)                                                              \
  static void kc__cx_math_##sfx(int32_t op, const T _Complex* a, const T _Complex* b,      \
                                void* out, int64_t n) {                                    \
    T _Complex* r = out;                                                                   \
    T _Complex z = 0, w = 0;                                                               \
    (void)z, (void)w;                                                                      \
    if (op == KC_OP_ABS) {                                                                 \
      T* m = out;                                                                          \
      for (int64_t i = 0; i < n; ++i) m[i] = hypot##F(creal##F(a[i]), cimag##F(a[i]));     \
      return;                                                                              \
    }                                                                                      \
    switch (op) {                                                                          \
      KC__EW_ARITH_OPS(KC__CX_CASE)                                                        \
      KC__EW_MATH_OPS(KC__CX_CASE)                                                         \
      default: break;                                                                      \
    }                                                                                      \
  }
#define KC__C(fn) c##fn##f
#define KC__CX(fn) kc__cx_##fn##_c64
KC__CX_RUN(c64, float, f)
#undef KC__C
#undef KC__CX
#define KC__C(fn) c##fn
#define KC__CX(fn) kc__cx_##fn##_c128
KC__CX_RUN(c128, double, )
#undef KC__C
#undef KC__CX
#undef KC__CX_RUN
#undef KC__CX_CASE
#undef KC__CX_EACH_1
#undef KC__CX_EACH_2

void kc__complex_math_run(int32_t op, bool c128, const void* a, const void* b, void* out,
                          int64_t n) {
  if (c128) {
    kc__cx_math_c128(op, a, b, out, n);
  } else {
    kc__cx_math_c64(op, a, b, out, n);
  }
}

void kc__complex_compare_run(unsigned accept, bool c128, const void* a, const void* b,
                             uint8_t* r, int64_t n) {
  bool ne = !(accept & KC__ORDER_EQ);
  for (int64_t i = 0; i < n; ++i) {
    bool eq;
    if (c128) {
      const double* x = (const double*)a + 2 * i;
      const double* y = (const double*)b + 2 * i;
      eq = x[0] == y[0] && x[1] == y[1];
    } else {
      const float* x = (const float*)a + 2 * i;
      const float* y = (const float*)b + 2 * i;
      eq = x[0] == y[0] && x[1] == y[1];
    }
    r[i] = ne ? !eq : eq;
  }
}

void kc__complex_iota_run(bool c128, void* r, int64_t outer, int64_t len, int64_t inner) {
  int64_t at = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < len; ++k) {
      for (int64_t i = 0; i < inner; ++i, ++at) {
        if (c128) {
          ((double*)r)[2 * at] = (double)k;
          ((double*)r)[2 * at + 1] = 0;
        } else {
          ((float*)r)[2 * at] = (float)k;
          ((float*)r)[2 * at + 1] = 0;
        }
      }
    }
  }
}

#define KC__COMPLEX_REDUCE(sfx, T)                                                         \
  static void kc__cx_reduce_##sfx(int32_t op, T _Complex* acc, bool fold,                  \
                                  const T _Complex* x, int64_t n) {                        \
    bool add = op == KC_OP_ADD;                                                            \
    if (fold) {                                                                            \
      T _Complex a = acc[0];                                                               \
      for (int64_t i = 0; i < n; ++i) a = add ? a + x[i] : kc__cx_mul_##sfx(a, x[i]);      \
      acc[0] = a;                                                                          \
      return;                                                                              \
    }                                                                                      \
    for (int64_t i = 0; i < n; ++i) {                                                      \
      acc[i] = add ? acc[i] + x[i] : kc__cx_mul_##sfx(acc[i], x[i]);                       \
    }                                                                                      \
  }
KC__COMPLEX_REDUCE(c64, float)
KC__COMPLEX_REDUCE(c128, double)
#undef KC__COMPLEX_REDUCE

void kc__complex_reduce_row(int32_t op, bool c128, void* acc, bool fold, const void* x,
                            int64_t n) {
  if (c128) {
    kc__cx_reduce_c128(op, acc, fold, x, n);
  } else {
    kc__cx_reduce_c64(op, acc, fold, x, n);
  }
}
