/* The body of the vector kernels of vmath.h, written once with the
 * compiler's vector extensions and included by each build, which first
 * defines:
 *   KC__VW             lanes of a vector (4: 16 bytes, 8: 32 bytes)
 *   KC__VM_ENTRY       the name of the build's entry point
 *   KC__VM_FMA(a,b,c)  a * b + c (fused where the build has FMA)
 *   KC__VM_SQRT(v)     the correctly rounded square root of each lane
 *   KC__VM_ANY(m)      (optional) whether any lane of the mask m is set
 *   KC__VM_BLEND(m,a,b) (optional) m ? a : b in one instruction
 * No include guard: each build includes it once.
 *
 * The approximations (coefficients fitted for this file, minimax in the
 * relative error over the reduced range):
 *   exp    x = n ln2 + r, |r| <= ln2/2 (ln2 in two parts, so r is exact);
 *          e^r = 1 + r + r^2 P(r); times 2^n in two steps, so that results
 *          in the denormal range are rounded once.
 *   expm1  the same reduction; (expm1(r) + (1 - 2^-n)) 2^n, exact for n = 0.
 *   log    x = 2^e m, m in [sqrt(1/2), sqrt(2)); f = m - 1;
 *          log(1+f) = f - f^2/2 + f^3 R(f); plus e ln2 in two parts.
 *   log1p  log of u = 1 + x, with f = x itself where u has exponent 0, else
 *          with the rounding of u corrected by (x - (u - 1)) / u.
 *   tanh   expm1(2|x|) / (expm1(2|x|) + 2), sign restored; 1 beyond 9.1.
 *   logistic  e = exp(-|x|): 1 / (1 + e) for x >= 0, e / (1 + e) below,
 *          so that large negative x gives e^x, not 0.
 *   erf    |x| < 1: x S(x^2); below 4: 1 - exp(-x^2) Q(1/|x|); 1 beyond. */

typedef float kc__vf __attribute__((vector_size(KC__VW * 4)));
typedef int32_t kc__vi __attribute__((vector_size(KC__VW * 4)));
typedef uint32_t kc__vu __attribute__((vector_size(KC__VW * 4)));

#define KC__VM_BITS(v) ((kc__vi)(v))
#define KC__VM_FLT(v) ((kc__vf)(v))

static inline kc__vf kc__v_splat(float c) { return (kc__vf){0} + c; }

/* m ? a : b, lane by lane (m: all ones or zero). */
static inline kc__vf kc__v_sel(kc__vi m, kc__vf a, kc__vf b) {
#if defined(KC__VM_BLEND)
  return KC__VM_BLEND(m, a, b);
#else
  return KC__VM_FLT((m & KC__VM_BITS(a)) | (~m & KC__VM_BITS(b)));
#endif
}
static inline kc__vi kc__v_seli(kc__vi m, kc__vi a, kc__vi b) { return (m & a) | (~m & b); }
static inline kc__vf kc__v_abs(kc__vf x) {
  return KC__VM_FLT(KC__VM_BITS(x) & 0x7fffffff);
}
/* |a| with the sign of s. */
static inline kc__vf kc__v_copysign(kc__vf a, kc__vf s) {
  return KC__VM_FLT((KC__VM_BITS(a) & 0x7fffffff) | (KC__VM_BITS(s) & (int32_t)0x80000000));
}
/* Clamps to [lo, hi]; NaN becomes lo (the callers put NaN back). */
static inline kc__vf kc__v_clamp(kc__vf x, float lo, float hi) {
  kc__vf l = kc__v_splat(lo), h = kc__v_splat(hi);
  x = kc__v_sel(x > l, x, l);
  return kc__v_sel(x < h, x, h);
}
/* Whether any lane of m is set: the build's KC__VM_ANY (one movemask
 * on x86) when it has one, else lane by lane. */
static inline int kc__v_any(kc__vi m) {
#if defined(KC__VM_ANY)
  return KC__VM_ANY(m);
#else
  int32_t acc = 0;
  for (int i = 0; i < KC__VW; ++i) acc |= m[i];
  return acc != 0;
#endif
}
/* 2^k for -126 <= k <= 127. */
static inline kc__vf kc__v_pow2(kc__vi k) { return KC__VM_FLT((k + 127) << 23); }

#define KC__VM_INF (__builtin_inff())
#define KC__VM_NAN (__builtin_nanf(""))

/* x = n ln2 + r; returns r and n (as a float and as an integer). Valid for
 * |x| < 2^21 ln2. */
static inline kc__vf kc__v_reduce(kc__vf x, kc__vf* nf, kc__vi* n) {
  const float magic = 12582912.0f; /* 1.5 * 2^23: adding it rounds to an integer */
  kc__vf t = KC__VM_FMA(x, kc__v_splat(1.44269504088896341f), kc__v_splat(magic));
  *n = KC__VM_BITS(t) - KC__VM_BITS(kc__v_splat(magic));
  *nf = t - magic;
  kc__vf r = KC__VM_FMA(*nf, kc__v_splat(-0.693145751953125f), x);   /* ln2 high bits */
  return KC__VM_FMA(*nf, kc__v_splat(-1.42860682030941723212e-6f), r); /* ln2 rest */
}

/* expm1(r) for |r| <= ln2/2 (and 0 for r = +-0). */
static inline kc__vf kc__v_expm1_reduced(kc__vf r) {
  kc__vf p = kc__v_splat(0.001381461f);
  p = KC__VM_FMA(p, r, kc__v_splat(0.00836871f));
  p = KC__VM_FMA(p, r, kc__v_splat(0.04166839f));
  p = KC__VM_FMA(p, r, kc__v_splat(0.16666521f));
  p = KC__VM_FMA(p, r, kc__v_splat(0.49999994f));
  return KC__VM_FMA(p, r * r, r);
}

/* v 2^n for -150 <= n <= 128, rounded once. */
static inline kc__vf kc__v_scale(kc__vf v, kc__vi n) {
  kc__vi k1 = n >> 1;
  return v * kc__v_pow2(k1) * kc__v_pow2(n - k1);
}

static inline kc__vf kc__v_exp(kc__vf x) {
  kc__vf nf;
  kc__vi n;
  kc__vf r = kc__v_reduce(kc__v_clamp(x, -104.0f, 89.0f), &nf, &n);
  kc__vf y = kc__v_scale(kc__v_expm1_reduced(r) + 1.0f, n);
  return kc__v_sel(x != x, x + x, y);
}

static inline kc__vf kc__v_expm1(kc__vf x) {
  kc__vf nf;
  kc__vi n;
  kc__vf r = kc__v_reduce(kc__v_clamp(x, -30.0f, 89.0f), &nf, &n);
  /* 2^-n, with -n >= -100: 1 - 2^-100 rounds to 1 anyway. */
  kc__vi neg = -n;
  neg = kc__v_seli(neg > -100, neg, (kc__vi){0} - 100);
  kc__vf y = kc__v_scale(kc__v_expm1_reduced(r) + (1.0f - kc__v_pow2(neg)), n);
  y = kc__v_sel(x == 0, x, y); /* -0 */
  return kc__v_sel(x != x, x + x, y);
}

/* log(1 + f) - f for f in [sqrt(1/2) - 1, sqrt(2) - 1]. */
static inline kc__vf kc__v_log1p_reduced_rest(kc__vf f) {
  kc__vf p = kc__v_splat(-0.0763443f);
  p = KC__VM_FMA(p, f, kc__v_splat(0.1276155f));
  p = KC__VM_FMA(p, f, kc__v_splat(-0.13160194f));
  p = KC__VM_FMA(p, f, kc__v_splat(0.14201762f));
  p = KC__VM_FMA(p, f, kc__v_splat(-0.16623357f));
  p = KC__VM_FMA(p, f, kc__v_splat(0.20001227f));
  p = KC__VM_FMA(p, f, kc__v_splat(-0.25000823f));
  p = KC__VM_FMA(p, f, kc__v_splat(0.3333333f));
  kc__vf f2 = f * f;
  return KC__VM_FMA(p, f2 * f, f2 * -0.5f);
}

/* Splits x > 0 (finite, normal or denormal) into 2^e m with m in
 * [sqrt(1/2), sqrt(2)); returns m - 1, and e as a float. */
static inline kc__vf kc__v_log_split(kc__vf x, kc__vf* ef) {
  kc__vi den = x < 1.17549435e-38f; /* denormal: scale by 2^23 first */
  x = kc__v_sel(den, x * 8388608.0f, x);
  /* Adding 1 - sqrt(1/2) to the bits carries into the exponent exactly
   * when the mantissa is at least sqrt(2)'s. */
  kc__vu ix = (kc__vu)x + (0x3f800000u - 0x3f3504f3u);
  kc__vi e = (kc__vi)(ix >> 23) - 127 - (den & 23);
  kc__vf m = KC__VM_FLT((ix & 0x007fffffu) + 0x3f3504f3u);
  *ef = __builtin_convertvector(e, kc__vf);
  return m - 1.0f;
}

/* log(x) from the split: e ln2 + f + rest(f), ln2 in two parts. */
static inline kc__vf kc__v_log_join(kc__vf ef, kc__vf f, kc__vf rest) {
  kc__vf y = KC__VM_FMA(ef, kc__v_splat(-2.12194440e-4f), rest); /* ln2 - 0.693359375 */
  y = y + f;
  return KC__VM_FMA(ef, kc__v_splat(0.693359375f), y);
}

/* The special values of log, where x is not a positive finite number. */
static inline kc__vf kc__v_log_special(kc__vf x, kc__vf y) {
  y = kc__v_sel(x == KC__VM_INF, x, y);
  y = kc__v_sel(x < 0, kc__v_splat(KC__VM_NAN), y);
  y = kc__v_sel(x == 0, kc__v_splat(-KC__VM_INF), y);
  return kc__v_sel(x != x, x + x, y);
}

static inline kc__vf kc__v_log(kc__vf x) {
  kc__vf ef;
  kc__vf f = kc__v_log_split(x, &ef);
  return kc__v_log_special(x, kc__v_log_join(ef, f, kc__v_log1p_reduced_rest(f)));
}

static inline kc__vf kc__v_log1p(kc__vf x) {
  kc__vf u = x + 1.0f;
  kc__vf ef;
  kc__vf f = kc__v_log_split(u, &ef);
  /* Where e = 0, f = u - 1 would only round x: take x. Elsewhere the
   * rounding of u is corrected to first order. */
  kc__vi e0 = ef == 0;
  f = kc__v_sel(e0, x, f);
  kc__vf c = kc__v_sel(e0, kc__v_splat(0), (x - (u - 1.0f)) / u);
  kc__vf y = kc__v_log_join(ef, f, kc__v_log1p_reduced_rest(f) + c);
  y = kc__v_sel(x == 0, x, y); /* -0 */
  return kc__v_log_special(u, y);
}

static inline kc__vf kc__v_tanh(kc__vf x) {
  kc__vf a = kc__v_clamp(kc__v_abs(x), 0.0f, 9.1f);
  kc__vf nf;
  kc__vi n;
  kc__vf r = kc__v_reduce(a + a, &nf, &n);
  /* expm1(2a) as in kc__v_expm1: 0 <= n <= 27, so 2^n and 2^-n are normal. */
  kc__vf e = (kc__v_expm1_reduced(r) + (1.0f - kc__v_pow2(-n))) * kc__v_pow2(n);
  kc__vf y = kc__v_copysign(e / (e + 2.0f), x);
  return kc__v_sel(x != x, x + x, y);
}

static inline kc__vf kc__v_logistic(kc__vf x) {
  kc__vf e = kc__v_exp(-kc__v_abs(x));
  kc__vf y = kc__v_sel(x >= 0, kc__v_splat(1.0f), e) / (e + 1.0f);
  return kc__v_sel(x != x, x + x, y);
}

static inline kc__vf kc__v_erf(kc__vf x) {
  kc__vf a = kc__v_abs(x);
  kc__vi small = a < 1.0f;
  kc__vf x2 = x * x;
  kc__vf s = kc__v_splat(7.8540266e-05f);
  s = KC__VM_FMA(s, x2, kc__v_splat(-0.0008010248f));
  s = KC__VM_FMA(s, x2, kc__v_splat(0.0051883347f));
  s = KC__VM_FMA(s, x2, kc__v_splat(-0.026853817f));
  s = KC__VM_FMA(s, x2, kc__v_splat(0.112835854f));
  s = KC__VM_FMA(s, x2, kc__v_splat(-0.37612626f));
  s = KC__VM_FMA(s, x2, kc__v_splat(1.1283791f));
  kc__vf y = x * s;
  if (kc__v_any(~small)) {
    kc__vf b = kc__v_clamp(a, 1.0f, 4.0f);
    kc__vf u = 1.0f / b;
    kc__vf q = kc__v_splat(0.024265017f);
    q = KC__VM_FMA(q, u, kc__v_splat(-0.1336044f));
    q = KC__VM_FMA(q, u, kc__v_splat(0.2988481f));
    q = KC__VM_FMA(q, u, kc__v_splat(-0.30011967f));
    q = KC__VM_FMA(q, u, kc__v_splat(-0.03943816f));
    q = KC__VM_FMA(q, u, kc__v_splat(0.5794886f));
    q = KC__VM_FMA(q, u, kc__v_splat(-0.0018558863f));
    kc__vf big = 1.0f - kc__v_exp(-(b * b)) * q;
    big = kc__v_sel(a >= 4.0f, kc__v_splat(1.0f), big);
    y = kc__v_sel(small, y, kc__v_copysign(big, x));
  }
  return kc__v_sel(x != x, x + x, y);
}

static inline kc__vf kc__v_sqrt(kc__vf x) { return KC__VM_SQRT(x); }
static inline kc__vf kc__v_rsqrt(kc__vf x) { return 1.0f / KC__VM_SQRT(x); }

/* y[i] = f(x[i]): whole vectors, then the rest through a padded one. x may
 * be y: each vector is loaded before it is stored. */
#define KC__VM_LOOP(f)                                             \
  do {                                                             \
    int64_t i = 0;                                                 \
    for (; i + KC__VW <= n; i += KC__VW) {                         \
      kc__vf v;                                                    \
      memcpy(&v, x + i, sizeof v);                                 \
      v = f(v);                                                    \
      memcpy(y + i, &v, sizeof v);                                 \
    }                                                              \
    if (i < n) {                                                   \
      float tmp[KC__VW] = {0};                                     \
      size_t rest = (size_t)(n - i);                               \
      memcpy(tmp, x + i, rest * sizeof *tmp);                      \
      kc__vf v;                                                    \
      memcpy(&v, tmp, sizeof v);                                   \
      v = f(v);                                                    \
      memcpy(tmp, &v, sizeof v);                                   \
      memcpy(y + i, tmp, rest * sizeof *tmp);                      \
    }                                                              \
  } while (0)

void KC__VM_ENTRY(kc__vmath_fn fn, const float* x, float* y, int64_t n) {
  switch (fn) {
    case KC__VM_EXP: KC__VM_LOOP(kc__v_exp); break;
    case KC__VM_EXPM1: KC__VM_LOOP(kc__v_expm1); break;
    case KC__VM_LOG: KC__VM_LOOP(kc__v_log); break;
    case KC__VM_LOG1P: KC__VM_LOOP(kc__v_log1p); break;
    case KC__VM_TANH: KC__VM_LOOP(kc__v_tanh); break;
    case KC__VM_LOGISTIC: KC__VM_LOOP(kc__v_logistic); break;
    case KC__VM_ERF: KC__VM_LOOP(kc__v_erf); break;
    case KC__VM_SQRT: KC__VM_LOOP(kc__v_sqrt); break;
    case KC__VM_RSQRT: KC__VM_LOOP(kc__v_rsqrt); break;
    default: break;
  }
}

#undef KC__VM_LOOP
