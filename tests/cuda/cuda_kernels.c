/*
 * libkcall_cuda on a GPU: every element-wise op on every dtype it accepts
 * against the host's kernels (kc__elementwise_run) or a reference written
 * here from the host's semantics (src/program/instr/instr_math.c, instr_select.c),
 * broadcast, iota, stream-ordered memory, copies, graphs, and the errors
 * of an allocation the device cannot hold. Without a device it prints
 * "skipped: no CUDA device: ..." and exits 77, which ctest shows as a
 * skip. Every mismatch is printed; any makes the run fail.
 */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/half.h"
#include "kcall/kcall.h"
#include "program/instr/elementwise.h"
#include "program/instr/instr.h"
#include "runtime/backend.h"

static const kc__backend* B;
static void* S; /* the stream the tests run on */
static int failures;
static int cases;

#define FAIL(...)                                      \
  do {                                                 \
    fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__);                      \
    fputc('\n', stderr);                               \
    ++failures;                                        \
  } while (0)

/* Checks a status is NULL, printing and freeing it otherwise. */
static bool ok(kc_status* s, const char* what) {
  if (!s) return true;
  char buf[1024];
  kc_status_format(s, buf, sizeof buf);
  FAIL("%s: %s", what, buf);
  kc_status_destroy(s);
  return false;
}
#define OK(expr) ok((expr), #expr)

/* ---- types ------------------------------------------------------------------------- */

typedef struct kt_type {
  const char* name;
  DLDataType dt;
} kt_type;

enum { PRED, S8, S16, S32, S64, U8, U16, U32, U64, F16, BF16, F32, F64, C64, C128, NTYPES };
static const kt_type T[NTYPES] = {
    {"pred", {kDLBool, 8, 1}},    {"s8", {kDLInt, 8, 1}},      {"s16", {kDLInt, 16, 1}},
    {"s32", {kDLInt, 32, 1}},     {"s64", {kDLInt, 64, 1}},    {"u8", {kDLUInt, 8, 1}},
    {"u16", {kDLUInt, 16, 1}},    {"u32", {kDLUInt, 32, 1}},   {"u64", {kDLUInt, 64, 1}},
    {"f16", {kDLFloat, 16, 1}},   {"bf16", {kDLBfloat, 16, 1}}, {"f32", {kDLFloat, 32, 1}},
    {"f64", {kDLFloat, 64, 1}},   {"c64", {kDLComplex, 64, 1}}, {"c128", {kDLComplex, 128, 1}},
};
static size_t esize(int t) { return T[t].dt.bits / 8u; }
static bool is_fl(int t) { return t >= F16 && t <= F64; }
static bool is_signed_t(int t) { return t >= S8 && t <= S64; }

static double ld_f(int t, const void* p, size_t i) {
  switch (t) {
    case F16: return kc__f16_to_f32(((const uint16_t*)p)[i]);
    case BF16: return kc__bf16_to_f32(((const uint16_t*)p)[i]);
    case F32: return ((const float*)p)[i];
    case F64: return ((const double*)p)[i];
    default: return 0;
  }
}
static int64_t ld_s(int t, const void* p, size_t i) {
  switch (esize(t)) {
    case 1: return t == PRED || t == U8 ? ((const uint8_t*)p)[i] : ((const int8_t*)p)[i];
    case 2: return t == U16 ? ((const uint16_t*)p)[i] : ((const int16_t*)p)[i];
    case 4: return t == U32 ? (int64_t)((const uint32_t*)p)[i] : ((const int32_t*)p)[i];
    default: return ((const int64_t*)p)[i];
  }
}
static void st_bits(int t, void* p, size_t i, uint64_t v) {
  switch (esize(t)) {
    case 1: ((uint8_t*)p)[i] = (uint8_t)v; break;
    case 2: ((uint16_t*)p)[i] = (uint16_t)v; break;
    case 4: ((uint32_t*)p)[i] = (uint32_t)v; break;
    default: ((uint64_t*)p)[i] = v; break;
  }
}
static void st_f(int t, void* p, size_t i, double v) {
  switch (t) {
    case F16: ((uint16_t*)p)[i] = kc__f64_to_f16(v); break;
    case BF16: ((uint16_t*)p)[i] = kc__f64_to_bf16(v); break;
    case F32: ((float*)p)[i] = (float)v; break;
    case F64: ((double*)p)[i] = v; break;
    default: break;
  }
}

/* ---- inputs: special values first, then pseudo-random ones ---------------------- */

static uint64_t rng_state;
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

static void fill(int t, void* p, size_t n, uint64_t seed) {
  rng_state = seed * 0x9E3779B97F4A7C15ull + 1;
  static const double fspecial[] = {0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 2.5, 3.5, -3.5,
                                    1e-3, 65504.0, 70000.0, 1e30, -1e30, INFINITY,
                                    -INFINITY, NAN, -NAN, 1e-40, 7.0, 100.25, 3.0e38,
                                    1e-310, 0.75};
  size_t nf = sizeof fspecial / sizeof fspecial[0];
  unsigned bits = T[t].dt.bits;
  for (size_t i = 0; i < n; ++i) {
    size_t k = (i + seed) % (nf + 40);
    if (t == PRED) {
      st_bits(t, p, i, rnd() & 1);
    } else if (is_fl(t)) {
      double v = k < nf ? fspecial[k]
                        : ((double)(rnd() % 2000001) - 1000000.0) / 1000.0 *
                              (i % 3 == 0 ? 1.0 : i % 3 == 1 ? 0.01 : 100.0);
      st_f(t, p, i, v);
    } else {
      uint64_t v;
      uint64_t sign_bit = 1ull << (bits - 1);
      switch (k % 12) {
        case 0: v = 0; break;
        case 1: v = 1; break;
        case 2: v = ~0ull; break; /* -1 */
        case 3: v = sign_bit; break; /* INT_MIN */
        case 4: v = sign_bit - 1; break; /* INT_MAX */
        case 5: v = bits - 1; break;
        case 6: v = bits; break;
        case 7: v = 2; break;
        default: v = rnd() >> (rnd() % 64); break;
      }
      st_bits(t, p, i, v);
    }
  }
}

/* ---- references of the ops kc__elementwise_run does not cover ------------------- */

static uint64_t ipow(uint64_t base, int64_t exp, bool is_signed) {
  if (exp < 0) {
    int64_t b = (int64_t)base;
    if (!is_signed) return 0;
    return b == 1 ? 1 : b == -1 ? ((exp & 1) ? (uint64_t)-1 : 1) : 0;
  }
  uint64_t r = 1;
  while (exp) {
    if (exp & 1) r *= base;
    base *= base;
    exp >>= 1;
  }
  return r;
}

static uint64_t int_ref(int32_t op, int t, int64_t sa, int64_t sb) {
  bool sg = is_signed_t(t);
  unsigned bits = T[t].dt.bits;
  uint64_t mask = bits == 64 ? ~0ull : ((1ull << bits) - 1);
  uint64_t a = (uint64_t)sa & mask, b = (uint64_t)sb & mask; /* the bits */
  switch (op) {
    case KC_OP_ABS: return sg && sa < 0 ? 0 - (uint64_t)sa : a;
    case KC_OP_SIGN: return sg ? (uint64_t)(sa > 0 ? 1 : sa < 0 ? -1 : 0) : a != 0;
    case KC_OP_NOT: return t == PRED ? (~a & 1) : ~a;
    case KC_OP_POPCNT: return (uint64_t)__builtin_popcountll(a);
    case KC_OP_COUNT_LEADING_ZEROS: return a == 0 ? bits : (uint64_t)(__builtin_clzll(a) - (int)(64 - bits));
    case KC_OP_AND: return a & b;
    case KC_OP_OR: return a | b;
    case KC_OP_XOR: return a ^ b;
    case KC_OP_POWER: return ipow(sg ? (uint64_t)sa : a, sg ? sb : (int64_t)(b & 0x7FFFFFFFFFFFFFFFull), sg);
    case KC_OP_REMAINDER:
      if (b == 0) return a;
      if (sg) return sb == -1 ? 0 : (uint64_t)(sa % sb);
      return a % b;
    case KC_OP_SHIFT_LEFT: return b >= bits ? 0 : a << b;
    case KC_OP_SHIFT_RIGHT_LOGICAL: return b >= bits ? 0 : a >> b;
    case KC_OP_SHIFT_RIGHT_ARITHMETIC: {
      /* The bits as the signed type of the width (XLA's semantics for
       * unsigned operands too). */
      int64_t s = (a & (1ull << (bits - 1))) ? (int64_t)(a | ~mask) : (int64_t)a;
      if (b >= bits) return s < 0 ? ~0ull : 0;
      return (uint64_t)(s >> b);
    }
    default: return 0xDEAD;
  }
}

#define KT_FLOAT_REF(F, sfx)                                                               \
  static F float_ref_##sfx(int32_t op, F x, F y) {                                         \
    switch (op) {                                                                          \
      case KC_OP_ABS: return fabs##sfx(x);                                                  \
      case KC_OP_SIGN: return x > 0 ? (F)1 : x < 0 ? (F)-1 : x;                             \
      case KC_OP_SQRT: return sqrt##sfx(x);                                                 \
      case KC_OP_RSQRT: return (F)1 / sqrt##sfx(x);                                         \
      case KC_OP_CBRT: return cbrt##sfx(x);                                                 \
      case KC_OP_TANH: return tanh##sfx(x);                                                 \
      case KC_OP_LOGISTIC: return (F)1 / ((F)1 + exp##sfx(-x));                             \
      case KC_OP_SINE: return sin##sfx(x);                                                  \
      case KC_OP_COSINE: return cos##sfx(x);                                                \
      case KC_OP_TAN: return tan##sfx(x);                                                   \
      case KC_OP_FLOOR: return floor##sfx(x);                                               \
      case KC_OP_CEIL: return ceil##sfx(x);                                                 \
      case KC_OP_ROUND_NEAREST_AFZ: return round##sfx(x);                                   \
      case KC_OP_ROUND_NEAREST_EVEN: return nearbyint##sfx(x);                              \
      case KC_OP_LOG_PLUS_ONE: return log1p##sfx(x);                                        \
      case KC_OP_EXPONENTIAL_MINUS_ONE: return expm1##sfx(x);                               \
      case KC_OP_ERF: return erf##sfx(x);                                                   \
      case KC_OP_POWER: return pow##sfx(x, y);                                              \
      case KC_OP_REMAINDER: return fmod##sfx(x, y);                                         \
      case KC_OP_ATAN2: return atan2##sfx(x, y);                                            \
      default: return (F)-12345;                                                            \
    }                                                                                      \
  }
KT_FLOAT_REF(float, f)
KT_FLOAT_REF(double, )

static int64_t total_key(int t, const void* p, size_t i) {
  if (t == F32) {
    int32_t b;
    memcpy(&b, (const float*)p + i, 4);
    return b < 0 ? (int32_t)((uint32_t)b ^ 0x7FFFFFFFu) : b;
  }
  int64_t b;
  memcpy(&b, (const double*)p + i, 8);
  return b < 0 ? (int64_t)((uint64_t)b ^ 0x7FFFFFFFFFFFFFFFull) : b;
}

/* -1, 0, 1 for a < b, a == b, a > b; 2 when unordered (NaN). */
static int order(int t, const void* a, const void* b, size_t i, bool total) {
  if (is_fl(t)) {
    if (total) {
      int64_t x = total_key(t, a, i), y = total_key(t, b, i);
      return x < y ? -1 : x > y;
    }
    double x = ld_f(t, a, i), y = ld_f(t, b, i);
    if (x != x || y != y) return 2;
    return x < y ? -1 : x > y;
  }
  if (t == U64) {
    uint64_t x = ((const uint64_t*)a)[i], y = ((const uint64_t*)b)[i];
    return x < y ? -1 : x > y;
  }
  int64_t x = ld_s(t, a, i), y = ld_s(t, b, i);
  return x < y ? -1 : x > y;
}

static bool cmp_ref(int dir, int o) {
  if (o == 2) return dir == KC__CMP_NE;
  switch (dir) {
    case KC__CMP_EQ: return o == 0;
    case KC__CMP_NE: return o != 0;
    case KC__CMP_LT: return o < 0;
    case KC__CMP_LE: return o <= 0;
    case KC__CMP_GT: return o > 0;
    default: return o >= 0;
  }
}

/* The reference of one instruction into `r`. */
static void reference(int32_t op, int dir, int t, int rt, const void* const* in, void* r,
                      size_t n) {
  bool host = (op >= KC_OP_ADD && op <= KC_OP_CONVERT);
  if (host) {
    kc__elementwise_run(op, T[t].dt, T[rt].dt, in[0], in[1], r, (int64_t)n);
    return;
  }
  size_t es = esize(t);
  for (size_t i = 0; i < n; ++i) {
    if (op == KC_OP_SELECT) {
      const uint8_t* p = in[0];
      memcpy((char*)r + i * es, (const char*)(p[i] ? in[1] : in[2]) + i * es, es);
    } else if (op == KC_OP_COMPARE) {
      int o = order(t, in[0], in[1], i, (dir & KC__CMP_TOTAL_ORDER) != 0);
      ((uint8_t*)r)[i] = cmp_ref(dir & 7, o);
    } else if (op == KC_OP_CLAMP) {
      /* v = x < lo ? lo : x; v > hi ? hi : v */
      const void* pick = order(t, in[1], in[0], i, false) == -1 ? in[0] : in[1];
      size_t at = i;
      const void* v = pick;
      if (order(t, v, in[2], at, false) == 1) v = in[2];
      memcpy((char*)r + i * es, (const char*)v + i * es, es);
    } else if (op == KC_OP_IS_FINITE) {
      ((uint8_t*)r)[i] = isfinite(ld_f(t, in[0], i)) ? 1 : 0;
    } else if (t == F32) {
      float y = in[1] ? ((const float*)in[1])[i] : 0;
      ((float*)r)[i] = float_ref_f(op, ((const float*)in[0])[i], y);
    } else if (t == F64) {
      double y = in[1] ? ((const double*)in[1])[i] : 0;
      ((double*)r)[i] = float_ref_(op, ((const double*)in[0])[i], y);
    } else {
      int64_t b = in[1] ? ld_s(t, in[1], i) : 0;
      if (t == PRED && in[1]) b &= 1;
      st_bits(t, r, i, int_ref(op, t, ld_s(t, in[0], i), b) & (t == PRED ? 1 : ~0ull));
    }
  }
}

/* ---- comparing -------------------------------------------------------------------- */

static bool approximate(int32_t op) {
  switch (op) {
    case KC_OP_EXPONENTIAL: case KC_OP_LOG: case KC_OP_CBRT: case KC_OP_TANH:
    case KC_OP_LOGISTIC: case KC_OP_SINE: case KC_OP_COSINE: case KC_OP_TAN:
    case KC_OP_LOG_PLUS_ONE: case KC_OP_EXPONENTIAL_MINUS_ONE: case KC_OP_ERF:
    case KC_OP_POWER: case KC_OP_ATAN2:
      return true;
    default:
      return false;
  }
}

/* Floats: NaN where the reference has NaN, otherwise the same bits, or,
 * for the transcendental functions (whose CUDA and C library versions
 * each round differently), within a few units in the last place. */
static int compare(const char* what, int32_t op, int rt, const void* got, const void* want,
                   size_t n) {
  int bad = 0;
  size_t es = esize(rt);
  for (size_t i = 0; i < n && bad < 5; ++i) {
    const char* g = (const char*)got + i * es;
    const char* w = (const char*)want + i * es;
    bool same;
    if (is_fl(rt)) {
      double x = ld_f(rt, got, i), y = ld_f(rt, want, i);
      if (x != x || y != y) {
        same = (x != x) == (y != y);
      } else if (approximate(op) && x != y) {
        double ulp = rt == F64 ? 0x1p-52 : rt == F32 ? 0x1p-23 : rt == F16 ? 0x1p-10 : 0x1p-7;
        double tiny = rt == F64 ? 1e-300 : rt == F32 ? 1e-37 : 1e-7;
        double tol = (rt == F16 || rt == BF16 ? 1.0 : 4.0) * ulp * fmax(fabs(y), tiny);
        same = !isinf(x) && !isinf(y) && fabs(x - y) <= tol;
      } else {
        same = memcmp(g, w, es) == 0;
      }
    } else {
      same = memcmp(g, w, es) == 0;
    }
    if (!same) {
      uint64_t gb = 0, wb = 0;
      memcpy(&gb, g, es < 8 ? es : 8);
      memcpy(&wb, w, es < 8 ? es : 8);
      FAIL("%s: element %zu: got bits 0x%llx (%.17g), expected 0x%llx (%.17g)", what, i,
           (unsigned long long)gb, is_fl(rt) ? ld_f(rt, got, i) : 0.0,
           (unsigned long long)wb, is_fl(rt) ? ld_f(rt, want, i) : 0.0);
      ++bad;
    }
  }
  return bad;
}

/* ---- running on the device ---------------------------------------------------------- */

enum { N = 4099 }; /* not a multiple of a block */

static void* dev_alloc(size_t bytes) {
  void* p = NULL;
  if (!OK(B->alloc(0, bytes, S, &p))) exit(1);
  return p;
}

/* Runs (op, dir) on inputs of type t into a result of type rt and checks
 * it against the reference. */
static void run_case(int32_t op, int arity, int dir, int t, int rt) {
  char what[96];
  snprintf(what, sizeof what, "op %d dir %d %s -> %s", (int)op, dir, T[t].name, T[rt].name);
  size_t es = esize(t), rs = esize(rt);
  void* host_in[3] = {NULL, NULL, NULL};
  const void* dev_in[3] = {NULL, NULL, NULL};
  for (int k = 0; k < arity; ++k) {
    int kt = op == KC_OP_SELECT && k == 0 ? PRED : t;
    host_in[k] = malloc(N * esize(kt));
    fill(kt, host_in[k], N, (uint64_t)(k * 7 + 3));
    void* d = dev_alloc(N * esize(kt));
    OK(B->memcpy(0, d, host_in[k], N * esize(kt), KC__COPY_HOST_TO_DEVICE, S));
    dev_in[k] = d;
  }
  void* dev_out = dev_alloc(N * rs);
  OK(B->memset(0, dev_out, 0xA5, N * rs, S));
  kc__elementwise_desc d = {op, arity, dir, T[t].dt, T[rt].dt, N,
                            {dev_in[0], dev_in[1], dev_in[2]}, dev_out};
  void* got = malloc(N * rs);
  void* want = malloc(N * rs);
  ++cases;
  if (OK(B->elementwise(0, S, &d))) {
    OK(B->memcpy(0, got, dev_out, N * rs, KC__COPY_DEVICE_TO_HOST, S));
    if (OK(B->stream_synchronize(0, S))) {
      reference(op, dir, t, rt, (const void* const*)host_in, want, N);
      compare(what, op, rt, got, want, N);
    }
  }
  (void)es;
  for (int k = 0; k < arity; ++k) {
    OK(B->free(0, (void*)dev_in[k], S));
    free(host_in[k]);
  }
  OK(B->free(0, dev_out, S));
  free(got);
  free(want);
}

static int arity_of(int32_t op) {
  if (op == KC_OP_SELECT || op == KC_OP_CLAMP) return 3;
  if ((op >= KC_OP_NEGATE && op <= KC_OP_CONVERT) ||
      (op >= KC_OP_ABS && op <= KC_OP_COUNT_LEADING_ZEROS)) {
    return 1;
  }
  return 2;
}

static void test_elementwise(void) {
  int32_t ops[64];
  int nops = 0;
  for (int32_t op = KC_OP_ADD; op <= KC_OP_LOG; ++op) ops[nops++] = op;
  for (int32_t op = KC_OP_ABS; op <= KC_OP_COUNT_LEADING_ZEROS; ++op) ops[nops++] = op;
  for (int32_t op = KC_OP_POWER; op <= KC_OP_SHIFT_RIGHT_LOGICAL; ++op) ops[nops++] = op;
  ops[nops++] = KC_OP_SELECT;
  ops[nops++] = KC_OP_CLAMP;
  int before = cases;
  for (int i = 0; i < nops; ++i) {
    for (int t = 0; t < NTYPES; ++t) {
      int rt = ops[i] == KC_OP_IS_FINITE ? PRED : t;
      if (B->elementwise_supported(ops[i], T[t].dt, T[rt].dt)) {
        run_case(ops[i], arity_of(ops[i]), 0, t, rt);
      }
    }
  }
  for (int t = 0; t < NTYPES; ++t) {
    if (!B->elementwise_supported(KC_OP_COMPARE, T[t].dt, T[PRED].dt)) continue;
    for (int dir = KC__CMP_EQ; dir <= KC__CMP_GE; ++dir) {
      run_case(KC_OP_COMPARE, 2, dir, t, PRED);
      if (t == F32 || t == F64) run_case(KC_OP_COMPARE, 2, dir | KC__CMP_TOTAL_ORDER, t, PRED);
    }
  }
  for (int t = 0; t < C64; ++t) {
    for (int rt = 0; rt < C64; ++rt) {
      if (!B->elementwise_supported(KC_OP_CONVERT, T[t].dt, T[rt].dt)) {
        FAIL("convert %s -> %s is not supported", T[t].name, T[rt].name);
        continue;
      }
      run_case(KC_OP_CONVERT, 1, 0, t, rt);
    }
  }
  printf("elementwise: %d cases\n", cases - before);
  if (cases - before < 400) FAIL("only %d element-wise cases ran", cases - before);
}

/* One large instruction: more elements than one pass of the grid. */
static void test_large(void) {
  size_t n = (size_t)3 << 21;
  float* a = malloc(n * 4);
  float* r = malloc(n * 4);
  for (size_t i = 0; i < n; ++i) a[i] = (float)i;
  float* d = dev_alloc(n * 4);
  OK(B->memcpy(0, d, a, n * 4, KC__COPY_HOST_TO_DEVICE, S));
  kc__elementwise_desc desc = {KC_OP_ADD, 2, 0, T[F32].dt, T[F32].dt, (int64_t)n, {d, d, NULL}, d};
  OK(B->elementwise(0, S, &desc));
  OK(B->memcpy(0, r, d, n * 4, KC__COPY_DEVICE_TO_HOST, S));
  OK(B->stream_synchronize(0, S));
  for (size_t i = 0; i < n; ++i) {
    if (r[i] != 2.0f * (float)i) {
      FAIL("large add: element %zu: got %g, expected %g", i, (double)r[i], 2.0 * (double)i);
      break;
    }
  }
  OK(B->free(0, d, S));
  free(a);
  free(r);
}

static void test_broadcast(void) {
  static const struct {
    int32_t in_rank, out_rank;
    int64_t in_dims[3], out_dims[4], map[3];
  } cs[] = {
      {0, 2, {0}, {3, 5}, {0}},
      {1, 2, {5}, {3, 5}, {1}},
      {1, 2, {3}, {3, 5}, {0}},
      {2, 3, {4, 6}, {4, 7, 6}, {0, 2}},
      {2, 4, {3, 2}, {2, 3, 65, 2}, {1, 3}},
      {3, 3, {2, 3, 4}, {2, 3, 4}, {0, 1, 2}},
  };
  size_t sizes[] = {1, 2, 4, 8, 16};
  for (size_t c = 0; c < sizeof cs / sizeof cs[0]; ++c) {
    for (size_t s = 0; s < 5; ++s) {
      size_t es = sizes[s];
      int64_t in_n = 1, out_n = 1;
      for (int i = 0; i < cs[c].in_rank; ++i) in_n *= cs[c].in_dims[i];
      for (int i = 0; i < cs[c].out_rank; ++i) out_n *= cs[c].out_dims[i];
      unsigned char* in = malloc((size_t)in_n * es);
      for (size_t i = 0; i < (size_t)in_n * es; ++i) in[i] = (unsigned char)(i * 37 + 11);
      unsigned char* got = malloc((size_t)out_n * es);
      unsigned char* want = malloc((size_t)out_n * es);
      void* din = dev_alloc((size_t)in_n * es);
      void* dout = dev_alloc((size_t)out_n * es);
      OK(B->memcpy(0, din, in, (size_t)in_n * es, KC__COPY_HOST_TO_DEVICE, S));
      kc__broadcast_desc d = {din, dout, cs[c].in_rank, cs[c].out_rank, cs[c].in_dims,
                              cs[c].out_dims, cs[c].map, es};
      ++cases;
      OK(B->broadcast(0, S, &d));
      OK(B->memcpy(0, got, dout, (size_t)out_n * es, KC__COPY_DEVICE_TO_HOST, S));
      OK(B->stream_synchronize(0, S));
      kc__broadcast_copy(in, cs[c].in_rank, cs[c].in_dims, want, cs[c].out_rank,
                         cs[c].out_dims, cs[c].map, es);
      if (memcmp(got, want, (size_t)out_n * es) != 0) {
        FAIL("broadcast case %zu, %zu-byte elements: result differs from the host's", c, es);
      }
      OK(B->free(0, din, S));
      OK(B->free(0, dout, S));
      free(in);
      free(got);
      free(want);
    }
  }
}

static void test_iota(void) {
  int64_t dims[3] = {3, 300, 5};
  int64_t n = 3 * 300 * 5;
  for (int t = S8; t <= F64; ++t) {
    for (int32_t dim = 0; dim < 3; ++dim) {
      size_t es = esize(t);
      void* d = dev_alloc((size_t)n * es);
      void* got = malloc((size_t)n * es);
      void* want = malloc((size_t)n * es);
      ++cases;
      OK(B->iota(0, S, d, T[t].dt, 3, dims, dim));
      OK(B->memcpy(0, got, d, (size_t)n * es, KC__COPY_DEVICE_TO_HOST, S));
      OK(B->stream_synchronize(0, S));
      for (int64_t e = 0; e < n; ++e) {
        int64_t idx[3] = {e / 1500, (e / 5) % 300, e % 5};
        int64_t k = idx[dim];
        if (is_fl(t)) {
          st_f(t, want, (size_t)e, (double)k);
        } else {
          st_bits(t, want, (size_t)e, (uint64_t)k);
        }
      }
      if (memcmp(got, want, (size_t)n * es) != 0) {
        FAIL("iota %s along %d: result differs", T[t].name, (int)dim);
      }
      OK(B->free(0, d, S));
      free(got);
      free(want);
    }
  }
}

/* Stream-ordered and synchronous memory, pinned staging, every copy
 * direction. */
static void test_memory(void) {
  enum { M = 1 << 20 };
  uint8_t* pinned = NULL;
  if (!OK(B->host_alloc(0, M, (void**)&pinned))) return;
  void* p = NULL;
  OK(B->alloc(0, 0, S, &p));
  if (p) FAIL("alloc of 0 bytes gave %p, expected NULL", p);
  for (int i = 0; i < M; ++i) pinned[i] = (uint8_t)(i * 131 + 7);
  void* a = NULL; /* synchronous */
  void* b = NULL; /* stream-ordered */
  OK(B->alloc(0, M, NULL, &a));
  OK(B->alloc(0, M, S, &b));
  if (((uintptr_t)a | (uintptr_t)b) % 256) FAIL("device memory is not 256-byte aligned");
  OK(B->memcpy(0, a, pinned, M, KC__COPY_HOST_TO_DEVICE, S));
  OK(B->memcpy(0, b, a, M, KC__COPY_DEVICE_TO_DEVICE, S));
  OK(B->memset(0, a, 0, M, S));
  uint8_t* back = malloc(M);
  OK(B->memcpy(0, back, b, M, KC__COPY_DEVICE_TO_HOST, S));
  OK(B->stream_synchronize(0, S));
  for (int i = 0; i < M; ++i) {
    if (back[i] != (uint8_t)(i * 131 + 7)) {
      FAIL("memcpy round trip: byte %d: got %u", i, back[i]);
      break;
    }
  }
  OK(B->memcpy(0, back, a, M, KC__COPY_DEVICE_TO_HOST, NULL));
  for (int i = 0; i < M; ++i) {
    if (back[i] != 0) {
      FAIL("memset: byte %d: got %u", i, back[i]);
      break;
    }
  }
  /* Freed on a stream whatever way they were made, and the other way. */
  OK(B->free(0, a, S));
  OK(B->free(0, b, NULL));
  OK(B->stream_synchronize(0, S));
  B->host_free(0, pinned);
  free(back);
}

/* Capture two kernels and a copy, replay the graph on new inputs. */
static void test_graph(void) {
  enum { G = 10000 };
  float* h = malloc(G * 4);
  for (int i = 0; i < G; ++i) h[i] = (float)i;
  float* x = dev_alloc(G * 4);
  float* y = dev_alloc(G * 4);
  float* z = dev_alloc(G * 4);
  OK(B->memcpy(0, x, h, G * 4, KC__COPY_HOST_TO_DEVICE, S));
  OK(B->stream_synchronize(0, S));
  if (!OK(B->capture_begin(0, S))) return;
  kc__elementwise_desc add = {KC_OP_ADD, 2, 0, T[F32].dt, T[F32].dt, G, {x, x, NULL}, y};
  kc__elementwise_desc mul = {KC_OP_MULTIPLY, 2, 0, T[F32].dt, T[F32].dt, G, {y, x, NULL}, z};
  OK(B->elementwise(0, S, &add));
  OK(B->elementwise(0, S, &mul));
  OK(B->memcpy(0, y, z, G * 4, KC__COPY_DEVICE_TO_DEVICE, S));
  void* graph = NULL;
  if (!OK(B->capture_end(0, S, &graph)) || !graph) {
    FAIL("capture_end gave no graph");
    return;
  }
  for (int round = 1; round <= 2; ++round) {
    for (int i = 0; i < G; ++i) h[i] = (float)(i % 100) * (float)round;
    OK(B->memcpy(0, x, h, G * 4, KC__COPY_HOST_TO_DEVICE, S));
    OK(B->graph_launch(0, graph, S));
    OK(B->memcpy(0, h, y, G * 4, KC__COPY_DEVICE_TO_HOST, S));
    OK(B->stream_synchronize(0, S));
    ++cases;
    for (int i = 0; i < G; ++i) {
      float v = (float)(i % 100) * (float)round;
      if (h[i] != (v + v) * v) {
        FAIL("graph replay %d: element %d: got %g, expected %g", round, i, (double)h[i],
             (double)((v + v) * v));
        break;
      }
    }
  }
  B->graph_destroy(0, graph);
  /* A capture broken by a call it cannot hold (waiting for the stream
   * being captured) fails at capture_end, and the stream works
   * afterwards. */
  OK(B->capture_begin(0, S));
  OK(B->elementwise(0, S, &add));
  kc_status* s = B->stream_synchronize(0, S);
  if (!s) FAIL("stream_synchronize during a capture succeeded");
  if (s) kc_status_destroy(s);
  graph = (void*)1;
  s = B->capture_end(0, S, &graph);
  if (!s) FAIL("capture_end of an invalidated capture succeeded");
  if (s) {
    char buf[512];
    kc_status_format(s, buf, sizeof buf);
    if (!strstr(buf, "cudaStreamEndCapture") && !strstr(buf, "cudaGraphInstantiate")) {
      FAIL("capture_end error does not name the call: %s", buf);
    }
    kc_status_destroy(s);
  }
  if (graph) FAIL("a failed capture_end left out_graph %p", graph);
  OK(B->elementwise(0, S, &add));
  OK(B->stream_synchronize(0, S));
  OK(B->check_launch(0));
  OK(B->free(0, x, S));
  OK(B->free(0, y, S));
  OK(B->free(0, z, S));
  free(h);
}

static void expect_oom(kc_status* s, const char* call) {
  char buf[512];
  if (!s) {
    FAIL("%s of 2^50 bytes succeeded", call);
    return;
  }
  kc_status_format(s, buf, sizeof buf);
  if (kc_status_get_code(s) != KC_RESOURCE_EXHAUSTED || !strstr(buf, call) ||
      !strstr(buf, "1125899906842624 bytes on cuda:0") ||
      !strstr(buf, "cudaErrorMemoryAllocation")) {
    FAIL("out of memory: expected RESOURCE_EXHAUSTED naming %s, the size and "
         "cudaErrorMemoryAllocation, got %s",
         call, buf);
  }
  kc_status_destroy(s);
}

static void test_out_of_memory(void) {
  void* p = NULL;
  expect_oom(B->alloc(0, (size_t)1 << 50, NULL, &p), "cudaMalloc");
  expect_oom(B->alloc(0, (size_t)1 << 50, S, &p), "cudaMalloc");
  if (p) FAIL("a failed alloc left %p", p);
  /* The failure is not reported again as a launch error. */
  OK(B->check_launch(0));
  OK(B->stream_synchronize(0, S));
}

static void test_properties(int32_t count) {
  kc__device_props p;
  for (int32_t i = 0; i < count; ++i) {
    if (!OK(B->get_properties(i, &p))) continue;
    printf("cuda:%d: %s, sm_%d%d, %d SMs, %zu MiB, driver %d, runtime %d\n", (int)i, p.name,
           (int)p.compute_major, (int)p.compute_minor, (int)p.multiprocessor_count,
           p.total_memory >> 20, (int)p.driver_version, (int)p.runtime_version);
    if (!p.name[0] || p.compute_major < 5 || p.warp_size != 32 || p.total_memory == 0 ||
        p.max_threads_per_block < 256 || p.runtime_version < 12000 || p.driver_version <= 0) {
      FAIL("cuda:%d: implausible properties", (int)i);
    }
  }
}

int main(void) {
  void* h = dlopen(KC_CUDA_BACKEND_PATH, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "dlopen(%s): %s\n", KC_CUDA_BACKEND_PATH, dlerror());
    return 1;
  }
  kc__backend_entry_fn entry;
  void* sym = dlsym(h, KC__BACKEND_ENTRY_SYMBOL);
  memcpy(&entry, &sym, sizeof entry);
  static const kc__backend_core core = {sizeof(kc__backend_core), kc_status_create};
  B = entry ? entry(KC__BACKEND_ABI_VERSION, &core) : NULL;
  if (!B) {
    fprintf(stderr, "%s: no table\n", KC_CUDA_BACKEND_PATH);
    return 1;
  }
  int32_t count = 0;
  kc_status* s = B->init(&count);
  if (s) {
    char buf[1024];
    kc_status_format(s, buf, sizeof buf);
    printf("skipped: no CUDA device: %s\n", buf);
    kc_status_destroy(s);
    return 77;
  }
  test_properties(count);
  if (!OK(B->stream_create(0, &S))) return 1;
  test_elementwise();
  test_large();
  test_broadcast();
  test_iota();
  test_memory();
  test_graph();
  test_out_of_memory();
  OK(B->check_launch(0));
  B->stream_destroy(0, S);
  printf("%d cases, %d failures\n", cases, failures);
  return failures ? 1 : 0;
}
