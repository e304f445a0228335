/* Element-wise math beyond the arithmetic of elementwise.c: transcendental
 * functions, rounding, abs and sign, power, remainder, atan2 and the
 * bitwise and logical operations. */
#include <math.h>
#include <stdio.h>

#include "internal/common.h"
#include "kernels/elementwise_ops.h"
#include "kernels/split.h"
#include "kernels/vmath.h"
#include "program/instr/instr.h"
#include "program/instr/instr_types.h"

typedef struct kc__math_plan {
  int32_t op;
  bool binary; /* two operands (its entry's count) */
  kc__etype type; /* f16, bf16, c64 and c128 run in instr_half.c and instr_complex.c */
  int64_t count;
} kc__math_plan;

/* The element types of a domain (KC__EW_*), for a refusal: "f16, bf16,
 * f32, f64 and the integer types". */
static const char* kc__domain_text(int domain, char* buf, size_t cap) {
  const char* parts[8];
  int n = 0;
  if (domain & KC__EW_FLOAT) {
    parts[n++] = "f16";
    parts[n++] = "bf16";
    parts[n++] = "f32";
    parts[n++] = "f64";
  }
  if (domain & KC__EW_COMPLEX) {
    parts[n++] = "c64";
    parts[n++] = "c128";
  }
  if (domain & KC__EW_PRED) parts[n++] = "pred";
  if (domain & KC__EW_INT) parts[n++] = "the integer types";
  size_t at = 0;
  buf[0] = '\0';
  for (int i = 0; i < n && at < cap; ++i) {
    const char* sep = i == 0 ? "" : i == n - 1 ? " and " : ", ";
    int w = snprintf(buf + at, cap - at, "%s%s", sep, parts[i]);
    if (w < 0) break;
    at += (size_t)w;
  }
  return n ? buf : "no element type";
}

static kc_status* kc__math_read(const kc_program* p, const kc__instr* in, kc__math_plan* plan) {
  const kc_shape* r = in->shape;
  KC_RETURN_IF_ERROR(kc__instr_expect_array(in, r, "the result"));
  for (size_t i = 0; i < in->num_operands; ++i) {
    const kc_shape* o = kc__instr_operand(p, in, i);
    bool pred_result = kc__ew_pred_result(in->op);
    /* abs of a complex value is its modulus, of the part type. */
    DLDataType ot = kc_shape_get_dtype(o);
    bool part_result = in->op == KC_OP_ABS && ot.code == kDLComplex && ot.lanes == 1;
    bool same = pred_result ? !kc_shape_is_tuple(o) && kc__shape_same_dims(o, r)
                : part_result
                    ? !kc_shape_is_tuple(o) && kc__shape_same_dims(o, r) &&
                          kc_dtype_equal(kc_shape_get_dtype(r),
                                         (DLDataType){kDLFloat, (uint8_t)(ot.bits / 2), 1})
                    : kc_shape_equal(o, r);
    if (!same) {
      char w[256], g[256];
      kc_shape_format(r, w, sizeof w);
      kc_shape_format(o, g, sizeof g);
      if (part_result) {
        return kc__instr_error(in, KC_INVALID_ARGUMENT,
                               "abs of %s: expected a result of its part type f%d and the "
                               "operand's dims, got %s",
                               g, ot.bits / 2, w);
      }
      return kc__instr_error(in, KC_INVALID_ARGUMENT, "operand %zu: expected %s%s, got %s", i,
                        pred_result ? "the dims of " : "", w, g);
    }
  }
  DLDataType t = kc_shape_get_dtype(kc__instr_operand(p, in, 0));
  if (kc__ew_pred_result(in->op) && kc_shape_get_dtype(r).code != kDLBool) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT, "%s: expected a pred result",
                           in->def->name);
  }
  plan->op = in->op;
  plan->binary = in->def->min_operands == 2;
  plan->type = kc__etype_of(t);
  plan->count = kc__shape_elements(r);
  int domain = kc__ew_math_domain(in->op);
  int have = kc__etype_is_float(plan->type)     ? KC__EW_FLOAT
             : kc__etype_is_complex(plan->type) ? KC__EW_COMPLEX
             : plan->type == KC__E_pred         ? KC__EW_PRED
             : kc__etype_is_int(plan->type)     ? KC__EW_INT
                                                : 0;
  if (!(domain & have)) {
    char buf[32], text[96];
    const kc__instr_def* def = in->def;
    return kc__instr_error(in, KC_UNIMPLEMENTED, "%s: element type %s is not supported (%s)",
                      def->name, kc__instr_dtype_text(t, buf, sizeof buf),
                      kc__domain_text(domain, text, sizeof text));
  }
  return NULL;
}

static kc_status* kc__math_verify(const kc_program* p, const kc__instr* in) {
  kc__math_plan plan;
  return kc__math_read(p, in, &plan);
}

typedef struct kc__math_data {
  kc__math_plan plan;
  size_t esize, out_esize; /* an operand's element and the result's */
  kc__instr_loop_fn int_loop; /* the typed loop of a bitwise op or shift, or NULL */
  double cost;                /* nanoseconds an element, for the split */
} kc__math_data;

static kc__instr_loop_fn kc__int_loop_of(int32_t op, size_t esize, bool pred);

/* Rough nanoseconds an element, for the split across the pool: a vector
 * kernel 1, a float op its row's COST, an integer op 1. */
static double kc__math_cost(const kc__math_plan* plan) {
  bool is_float = plan->type == KC__E_f32 || plan->type == KC__E_f64;
  if (!is_float) return 1.0;
  if (plan->type == KC__E_f32 && kc__ew_vector_fn(plan->op) >= 0) return 1.0;
  return kc__ew_cost(plan->op);
}

static kc_status* kc__math_prepare(const kc_program* p, const kc__instr* in,
                                   const kc__prepare_ctx* ctx, const void** out) {
  kc__math_data* d = kc__arena_alloc(ctx->arena, sizeof *d);
  if (!d) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  KC_RETURN_IF_ERROR(kc__math_read(p, in, &d->plan));
  d->esize = kc_dtype_get_size(kc_shape_get_dtype(kc__instr_operand(p, in, 0)));
  d->int_loop = kc__etype_is_int(d->plan.type) || d->plan.type == KC__E_pred
                    ? kc__int_loop_of(d->plan.op, d->esize, d->plan.type == KC__E_pred)
                    : NULL;
  d->out_esize = kc__ew_pred_result(d->plan.op) ? 1 : d->esize;
  d->cost = d->int_loop ? 0.25 : kc__math_cost(&d->plan);
  *out = d;
  return NULL;
}

/* ---- floats ----------------------------------------------------------------------- */

/* op on n elements of a (and b): each row's FLOAT form
 * (kernels/elementwise_ops.h), one loop per row and type; a PRED row
 * writes bytes. */
#define KC__LOOP_1_SAME(fn) for (int64_t i = 0; i < n; ++i) r[i] = fn(a[i], a[i])
#define KC__LOOP_2_SAME(fn) for (int64_t i = 0; i < n; ++i) r[i] = fn(a[i], b[i])
#define KC__LOOP_1_PRED(fn) for (int64_t i = 0; i < n; ++i) p[i] = fn(a[i], a[i]) != 0
#define KC__FLOAT_CASE(sfx, OP, N, RES, DOM)                             \
  case KC_OP_##OP:                                                       \
    if ((DOM) & KC__EW_FLOAT) KC__LOOP_##N##_##RES(kc__ew_##sfx##_##OP); \
    break;
#define KC__CASE_F32(OP, NAME, N, RES, DOM, ...) KC__FLOAT_CASE(f32, OP, N, RES, DOM)
#define KC__CASE_F64(OP, NAME, N, RES, DOM, ...) KC__FLOAT_CASE(f64, OP, N, RES, DOM)
#define KC__FLOAT_RUN(sfx, T)                                                             \
  static void kc__float_##sfx(int32_t op, const T* a, const T* b, void* out, int64_t n) { \
    T* r = out;                                                                           \
    uint8_t* p = out;                                                                     \
    (void)b, (void)r, (void)p;                                                            \
    switch (op) {                                                                         \
      KC__EW_MATH_OPS(KC__CASE_##sfx)                                                     \
      default: break;                                                                     \
    }                                                                                     \
  }
KC__FLOAT_RUN(F32, float)
KC__FLOAT_RUN(F64, double)
#undef KC__FLOAT_RUN
#undef KC__CASE_F32
#undef KC__CASE_F64
#undef KC__FLOAT_CASE
#undef KC__LOOP_1_SAME
#undef KC__LOOP_2_SAME
#undef KC__LOOP_1_PRED

/* ---- integers and pred -------------------------------------------------------------- */

/* Signed and unsigned integers of every width, through int64/uint64 with
 * wrapping as XLA's: shifts by the width or more give 0 (or the sign for
 * arithmetic right shifts), x % 0 = x, x ** negative = 0 except for 1
 * and -1. */
static int64_t kc__load_s(const void* p, size_t i, size_t es) {
  switch (es) {
    case 1: return ((const int8_t*)p)[i];
    case 2: return ((const int16_t*)p)[i];
    case 4: return ((const int32_t*)p)[i];
    default: return ((const int64_t*)p)[i];
  }
}
static uint64_t kc__load_u(const void* p, size_t i, size_t es) {
  switch (es) {
    case 1: return ((const uint8_t*)p)[i];
    case 2: return ((const uint16_t*)p)[i];
    case 4: return ((const uint32_t*)p)[i];
    default: return ((const uint64_t*)p)[i];
  }
}
static void kc__store(void* p, size_t i, size_t es, uint64_t v) {
  switch (es) {
    case 1: ((uint8_t*)p)[i] = (uint8_t)v; break;
    case 2: ((uint16_t*)p)[i] = (uint16_t)v; break;
    case 4: ((uint32_t*)p)[i] = (uint32_t)v; break;
    default: ((uint64_t*)p)[i] = v; break;
  }
}

/* A row's INT form (kernels/elementwise_ops.h). */
typedef uint64_t (*kc__int_fn)(uint64_t a, uint64_t b, int64_t sa, int64_t sb, bool S,
                               unsigned BITS, uint64_t M);

static kc__int_fn kc__int_fn_of(int32_t op) {
  switch (op) {
#define KC__INT_CASE(OP, ...) \
  case KC_OP_##OP:            \
    return kc__ew_int_##OP;
    KC__EW_MATH_OPS(KC__INT_CASE)
#undef KC__INT_CASE
    default:
      return NULL;
  }
}

static void kc__int_kernel(const kc__math_data* d, void* out, const void* const* ins, int64_t n) {
  const kc__math_plan* plan = &d->plan;
  size_t es = d->esize;
  bool is_signed = kc__etype_is_sint(plan->type);
  unsigned bits = (unsigned)(es * 8);
  uint64_t mask = bits == 64 ? ~0ull : ((1ull << bits) - 1);
  bool binary = plan->binary;
  kc__int_fn fn = kc__int_fn_of(plan->op);
  for (int64_t i = 0; i < n; ++i) {
    size_t k = (size_t)i;
    int64_t sa = is_signed ? kc__load_s(ins[0], k, es) : 0;
    uint64_t a = is_signed ? (uint64_t)sa : kc__load_u(ins[0], k, es);
    int64_t sb = binary && is_signed ? kc__load_s(ins[1], k, es) : 0;
    uint64_t b = binary ? (is_signed ? (uint64_t)sb : kc__load_u(ins[1], k, es)) : 0;
    uint64_t r = fn(a, b, sa, sb, is_signed, bits, mask);
    if (plan->type == KC__E_pred) r &= 1; /* not, and, or, xor of 0/1 */
    kc__store(out, k, es, r);
  }
}

/* The bitwise operations and shifts, one loop per (op, width) that the
 * compiler can vectorise; the same bits whatever the signedness (an
 * arithmetic right shift reads the bits as the signed type of the width).
 * A shift amount is read as unsigned: one of the width or more (a negative
 * one included) gives 0, or the sign for an arithmetic right shift. The
 * shift is done by an amount below the width and the result chosen after,
 * so that no C shift is undefined. */
#define KC__INT_LOOPS(W, UT, ST, WT)                                                    \
  static void kc__and_u##W(const void* a, const void* b, void* r, int64_t n) { \
    const UT* x = a;                                                                    \
    const UT* y = b;                                                                    \
    UT* z = r;                                                                          \
    for (int64_t i = 0; i < n; ++i) z[i] = (UT)(x[i] & y[i]);                           \
  }                                                                                     \
  static void kc__or_u##W(const void* a, const void* b, void* r, int64_t n) {           \
    const UT* x = a;                                                                    \
    const UT* y = b;                                                                    \
    UT* z = r;                                                                          \
    for (int64_t i = 0; i < n; ++i) z[i] = (UT)(x[i] | y[i]);                           \
  }                                                                                     \
  static void kc__xor_u##W(const void* a, const void* b, void* r, int64_t n) { \
    const UT* x = a;                                                                    \
    const UT* y = b;                                                                    \
    UT* z = r;                                                                          \
    for (int64_t i = 0; i < n; ++i) z[i] = (UT)(x[i] ^ y[i]);                           \
  }                                                                                     \
  static void kc__not_u##W(const void* a, const void* b, void* r, int64_t n) { \
    (void)b;                                                                            \
    const UT* x = a;                                                                    \
    UT* z = r;                                                                          \
    for (int64_t i = 0; i < n; ++i) z[i] = (UT)~x[i];                                   \
  }
KC__INT_LOOPS(8, uint8_t, int8_t, uint32_t)
KC__INT_LOOPS(16, uint16_t, int16_t, uint32_t)
KC__INT_LOOPS(32, uint32_t, int32_t, uint32_t)
KC__INT_LOOPS(64, uint64_t, int64_t, uint64_t)
#undef KC__INT_LOOPS

/* The shifts, named by `tag`, with attributes `attr`. */
#define KC__SHIFT_LOOPS(W, UT, ST, WT, tag, attr)                                       \
  attr static void kc__shl_##tag(const void* a, const void* b, void* r, int64_t n) { \
    const UT* x = a;                                                                    \
    const UT* y = b;                                                                    \
    UT* z = r;                                                                          \
    for (int64_t i = 0; i < n; ++i) {                                                   \
      UT s = y[i];                                                                      \
      UT v = (UT)((WT)x[i] << (s & (W - 1)));                                           \
      z[i] = s < (W) ? v : (UT)0;                                                       \
    }                                                                                   \
  }                                                                                     \
  attr static void kc__srl_##tag(const void* a, const void* b, void* r, int64_t n) { \
    const UT* x = a;                                                                    \
    const UT* y = b;                                                                    \
    UT* z = r;                                                                          \
    for (int64_t i = 0; i < n; ++i) {                                                   \
      UT s = y[i];                                                                      \
      UT v = (UT)((WT)x[i] >> (s & (W - 1)));                                           \
      z[i] = s < (W) ? v : (UT)0;                                                       \
    }                                                                                   \
  }                                                                                     \
  attr static void kc__sra_##tag(const void* a, const void* b, void* r, int64_t n) { \
    const ST* x = a;                                                                    \
    const UT* y = b;                                                                    \
    UT* z = r;                                                                          \
    for (int64_t i = 0; i < n; ++i) {                                                   \
      UT s = y[i] < (W) ? y[i] : (UT)((W) - 1);                                         \
      z[i] = (UT)(ST)(x[i] >> s);                                                       \
    }                                                                                   \
  }
KC__SHIFT_LOOPS(8, uint8_t, int8_t, uint32_t, u8, )
KC__SHIFT_LOOPS(16, uint16_t, int16_t, uint32_t, u16, )
KC__SHIFT_LOOPS(32, uint32_t, int32_t, uint32_t, u32, )
KC__SHIFT_LOOPS(64, uint64_t, int64_t, uint64_t, u64, )
/* AVX2 shifts each lane by its own amount: a build of the 32- and 64-bit
 * loops for it, taken when the processor has it (kc__vmath_levels). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define KC__HAVE_SHIFT_AVX2 1
#define KC__AVX2 __attribute__((target("avx2")))
KC__SHIFT_LOOPS(32, uint32_t, int32_t, uint32_t, u32_avx2, KC__AVX2)
KC__SHIFT_LOOPS(64, uint64_t, int64_t, uint64_t, u64_avx2, KC__AVX2)
#undef KC__AVX2
#endif
#undef KC__SHIFT_LOOPS

/* pred: the low bit of the result, as the integer path gives. */
#define KC__PRED_LOOP(name, expr)                                                       \
  static void kc__##name##_pred(const void* a, const void* b, void* r, int64_t n) {     \
    const uint8_t* x = a;                                                               \
    const uint8_t* y = b ? b : a;                                                       \
    uint8_t* z = r;                                                                     \
    (void)y;                                                                            \
    for (int64_t i = 0; i < n; ++i) z[i] = (uint8_t)((expr) & 1u);                      \
  }
KC__PRED_LOOP(and, x[i] & y[i])
KC__PRED_LOOP(or, x[i] | y[i])
KC__PRED_LOOP(xor, x[i] ^ y[i])
KC__PRED_LOOP(not, ~(unsigned)x[i])
#undef KC__PRED_LOOP

/* The loop of `op` on elements of `esize` bytes (pred when `pred`); NULL
 * for the operations the general integer path computes. */
static kc__instr_loop_fn kc__int_loop_of(int32_t op, size_t esize, bool pred) {
#define KC__PICK(name)                                                   \
  return pred ? kc__##name##_pred                                        \
         : esize == 1 ? kc__##name##_u8                                  \
         : esize == 2 ? kc__##name##_u16                                 \
         : esize == 4 ? kc__##name##_u32                                 \
                      : kc__##name##_u64
#define KC__PICK_INT(name)                                               \
  return pred ? NULL                                                     \
         : esize == 1 ? kc__##name##_u8                                  \
         : esize == 2 ? kc__##name##_u16                                 \
         : esize == 4 ? kc__##name##_u32                                 \
                      : kc__##name##_u64
#if defined(KC__HAVE_SHIFT_AVX2)
  if (!pred && (esize == 4 || esize == 8) && kc__vmath_levels() >= 2) {
    bool w = esize == 4;
    switch (op) {
      case KC_OP_SHIFT_LEFT: return w ? kc__shl_u32_avx2 : kc__shl_u64_avx2;
      case KC_OP_SHIFT_RIGHT_LOGICAL: return w ? kc__srl_u32_avx2 : kc__srl_u64_avx2;
      case KC_OP_SHIFT_RIGHT_ARITHMETIC: return w ? kc__sra_u32_avx2 : kc__sra_u64_avx2;
      default: break;
    }
  }
#endif
  switch (op) {
    case KC_OP_AND: KC__PICK(and);
    case KC_OP_OR: KC__PICK(or);
    case KC_OP_XOR: KC__PICK(xor);
    case KC_OP_NOT: KC__PICK(not);
    case KC_OP_SHIFT_LEFT: KC__PICK_INT(shl);
    case KC_OP_SHIFT_RIGHT_LOGICAL: KC__PICK_INT(srl);
    case KC_OP_SHIFT_RIGHT_ARITHMETIC: KC__PICK_INT(sra);
    default: return NULL;
  }
#undef KC__PICK
#undef KC__PICK_INT
}

/* f16, bf16, c64 and c128: instr_half.c's and instr_complex.c's. */
static bool kc__math_other_type(kc__etype t) {
  return t == KC__E_f16 || t == KC__E_bf16 || kc__etype_is_complex(t);
}

/* f16, bf16, c64 and c128, n elements. */
static void kc__math_other_run(const kc__math_plan* plan, void* out, const void* const* ins,
                               int64_t n) {
  const void* b = plan->binary ? ins[1] : NULL;
  if (plan->type == KC__E_f16 || plan->type == KC__E_bf16) {
    kc__half_math_run(plan->op, plan->type == KC__E_bf16, ins[0], b, out, n);
  } else {
    kc__complex_math_run(plan->op, plan->type == KC__E_c128, ins[0], b, out, n);
  }
}

/* Elements [0, n) of the operands and result given. */
static void kc__math_run(const kc__math_data* d, void* out, const void* const* ins, int64_t n) {
  const kc__math_plan* plan = &d->plan;
  bool binary = plan->binary;
  if (plan->type == KC__E_f32) {
    int vfn = binary ? -1 : kc__ew_vector_fn(plan->op);
    if (vfn >= 0) {
      kc__vmath_f32((kc__vmath_fn)vfn, ins[0], out, n);
    } else {
      kc__float_F32(plan->op, ins[0], binary ? ins[1] : NULL, out, n);
    }
  } else if (plan->type == KC__E_f64) {
    kc__float_F64(plan->op, ins[0], binary ? ins[1] : NULL, out, n);
  } else if (d->int_loop) {
    d->int_loop(ins[0], binary ? ins[1] : NULL, out, n);
  } else {
    kc__int_kernel(d, out, ins, n);
  }
}

typedef struct kc__math_job {
  const kc__math_data* d;
  void* out;
  const void* const* ins;
} kc__math_job;

static void kc__math_range(void* p, int64_t begin, int64_t end) {
  const kc__math_job* job = p;
  const kc__math_data* d = job->d;
  size_t in_es = d->esize, out_es = d->out_esize;
  const void* ins[2];
  ins[0] = (const char*)job->ins[0] + (size_t)begin * in_es;
  ins[1] = d->plan.binary ? (const char*)job->ins[1] + (size_t)begin * in_es : NULL;
  kc__math_run(d, (char*)job->out + (size_t)begin * out_es, ins, end - begin);
}

static void kc__math_tile(const void* data, void* out, const void* const* ins, int64_t n) {
  const kc__math_data* d = data;
  if (kc__math_other_type(d->plan.type)) {
    kc__math_other_run(&d->plan, out, ins, n);
  } else {
    kc__math_run(d, out, ins, n);
  }
}

/* An integer's bitwise op or shift: its typed loop. */
static kc__instr_loop_fn kc__math_tile_loop(const void* data) {
  const kc__math_data* d = data;
  return kc__math_other_type(d->plan.type) ? NULL : d->int_loop;
}

static kc_status* kc__math_kernel(const kc__instr_kernel_ctx* ctx, void* out,
                                  const void* const* ins) {
  const kc__math_data* d = ctx->data;
  if (kc__math_other_type(d->plan.type)) {
    kc__math_other_run(&d->plan, out, ins, d->plan.count);
    return NULL;
  }
  kc__math_job job = {d, out, ins};
  kc__split_run(ctx->pool, d->plan.count, d->cost, kc__math_range, &job);
  return NULL;
}

static const char* const kc__no_attrs[] = {NULL};

/* One entry per row of KC__EW_MATH_OPS; the CUDA backend has each as an
 * element-wise kernel. */
const kc__instr_def kc__instr_math[] = {
#define KC__MATH_DEF(OP, NAME, N, ...)                                                     \
  {.op = KC_OP_##OP, .name = (NAME), .min_operands = (N), .max_operands = (N),            \
   .attrs = kc__no_attrs, .verify = kc__math_verify, .prepare = kc__math_prepare,          \
   .kernel = kc__math_kernel, .tile = kc__math_tile, .tile_loop = kc__math_tile_loop,      \
   .device_elementwise = true},
    KC__EW_MATH_OPS(KC__MATH_DEF)
#undef KC__MATH_DEF
};
const size_t kc__instr_math_count = KC__ARRAY_SIZE(kc__instr_math);
