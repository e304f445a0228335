/* The body of the vector kernels of vmath.h, written once with the
 * compiler's vector extensions and included by each build, which first
 * defines:
 *   KC__VW             lanes of a vector (4: 16 bytes, 8: 32, 16: 64)
 *   KC__VM_ENTRY       the name of the build's entry point
 *   KC__VM_FMA(a,b,c)  a * b + c (fused where the build has FMA)
 *   KC__VM_SQRT(v)     the correctly rounded square root of each lane
 *   KC__VM_BLEND(m,a,b) (optional) m ? a : b in one instruction
 *   KC__VM_MIN(a,b)    (optional) a < b ? a : b in one instruction
 *   KC__VM_MAX(a,b)    (optional) a > b ? a : b in one instruction
 *   KC__VM_PERM4(t,i)  (optional) t[i & 3] for each lane of i (t: 8 floats, the
 *                      4 entries twice), in one instruction
 *   KC__VM_ALL(m)      (optional) whether every lane of the mask m is set
 * No include guard: each build includes it once.
 *
 * The approximations (coefficients fitted for this file, minimax in the
 * relative error over the reduced range):
 *   exp    x = n ln2 + r, |r| <= ln2/2 (ln2 in two parts, so r is exact);
 *          e^r = 1 + r + r^2 P(r); times 2^n in two steps, so that results
 *          in the denormal range are rounded once (a vector whose results
 *          are all normal adds n to e^r's exponent instead: the same bits).
 *   expm1  the same reduction; (expm1(r) + (1 - 2^-n)) 2^n, exact for n = 0.
 *   log    x = 2^e m, m in [sqrt(1/2), sqrt(2)); f = m - 1;
 *          log(1+f) = f - f^2/2 + f^3 R(f); plus e ln2 in two parts.
 *   log1p  log of u = 1 + x, with f = x itself where u has exponent 0, else
 *          with the rounding of u corrected by (x - (u - 1)) / u.
 *   tanh   expm1(2|x|) / (expm1(2|x|) + 2), sign restored; 1 beyond 9.1.
 *   logistic  e = exp(-|x|): 1 / (1 + e) for x >= 0, e / (1 + e) below,
 *          so that large negative x gives e^x, not 0.
 *   erf    |x| < 4 in 4 pieces [k, k + 1): s + s P_k(|x| - k - 1/2), s = x clamped
 *          to [-1, 1], P_k of degree 8 (coefficients picked per lane); +-1 beyond. */

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
/* Whether every lane of m (all ones or zero) is set. */
static inline int kc__v_all(kc__vi m) {
#if defined(KC__VM_ALL)
  return KC__VM_ALL(m);
#else
  for (int i = 0; i < KC__VW; ++i) {
    if (!m[i]) return 0;
  }
  return 1;
#endif
}
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
/* a < b ? a : b, lane by lane: b where either is NaN. */
static inline kc__vf kc__v_min(kc__vf a, kc__vf b) {
#if defined(KC__VM_MIN)
  return KC__VM_MIN(a, b);
#else
  return kc__v_sel(a < b, a, b);
#endif
}
/* a > b ? a : b, lane by lane: b where either is NaN. */
static inline kc__vf kc__v_max(kc__vf a, kc__vf b) {
#if defined(KC__VM_MAX)
  return KC__VM_MAX(a, b);
#else
  return kc__v_sel(a > b, a, b);
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
  /* Where every lane's result is a normal number (none NaN): no clamp,
   * and 2^n added to e^r's exponent, which is the product the general
   * path rounds (exactly) in two steps. n is at least -124 and e^r at
   * least 1/sqrt(2) there, so the exponent stays at -125 or above. */
  if (kc__v_all((x >= -86.0f) & (x <= 88.0f))) {
    kc__vf p = kc__v_expm1_reduced(kc__v_reduce(x, &nf, &n)) + 1.0f;
    return KC__VM_FLT(KC__VM_BITS(p) + (kc__vi)((kc__vu)n << 23));
  }
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

/* Lane l of the result: tab[i[l] & 3], from a table of 8 floats that holds
 * its 4 entries twice (for the in-lane permute of the AVX2 build). */
static inline kc__vf kc__v_perm4(const float* tab, kc__vi i) {
#if defined(KC__VM_PERM4)
  return KC__VM_PERM4(tab, i);
#else
  /* With masks; the compiler shares them between the calls with the same i. */
  kc__vi j = i & 3;
  kc__vi t0 = KC__VM_BITS(kc__v_splat(tab[0]));
  kc__vi r = t0 ^ ((j == 1) & (KC__VM_BITS(kc__v_splat(tab[1])) ^ t0));
  r ^= (j == 2) & (KC__VM_BITS(kc__v_splat(tab[2])) ^ t0);
  r ^= (j == 3) & (KC__VM_BITS(kc__v_splat(tab[3])) ^ t0);
  return KC__VM_FLT(r);
#endif
}

/* erf(a) for a in [0, 4) in 4 pieces [k, k + 1), with t = a - k - 1/2 and
 * s = min(a, 1): erf(a) = s + s p_k(t), p_k of degree 8. Row j: the
 * coefficients of t^j of p_0 to p_3, twice. */
#define KC__VM_ERF_ROW(c0, c1, c2, c3) \
  { c0, c1, c2, c3, c0, c1, c2, c3 }
static const float kc__v_erf_tab[9][8] = {
    KC__VM_ERF_ROW(0.0409997627f, -0.0338948555f, -0.00040695176f, -7.43114754e-07f),
    KC__VM_ERF_ROW(-0.324434102f, 0.118930094f, 0.00217831787f, 5.39730127e-06f),
    KC__VM_ERF_ROW(-0.229914382f, -0.178395346f, -0.00544575322f, -1.88953018e-05f),
    KC__VM_ERF_ROW(0.166887611f, 0.138763025f, 0.00834828988f, 4.24089485e-05f),
    KC__VM_ERF_ROW(0.032368172f, -0.0446002819f, -0.00862119719f, -6.77916687e-05f),
    KC__VM_ERF_ROW(-0.0498935506f, -0.0150300739f, 0.00614334736f, 8.04831652e-05f),
    KC__VM_ERF_ROW(-1.17422196e-05f, 0.0193373617f, -0.00281026331f, -7.70124607e-05f),
    KC__VM_ERF_ROW(0.00974044017f, -0.00384146627f, 0.000403114129f, 6.6886736e-05f),
    KC__VM_ERF_ROW(-0.00102787325f, -0.00240836968f, 0.000310399191f, -3.73037947e-05f),
};
#undef KC__VM_ERF_ROW

static inline kc__vf kc__v_erf(kc__vf x) {
  const float magic = 12582912.0f; /* 1.5 * 2^23: adding it rounds to an integer */
  /* Clamped below 4, where erf rounds to 1; NaN stays NaN. */
  kc__vf a = kc__v_min(kc__v_splat(3.99999976f), kc__v_abs(x));
  kc__vf u = a - 0.5f;
  kc__vf r = u + magic;
  kc__vi k = KC__VM_BITS(r); /* the piece: the low 2 bits */
  kc__vf t = u - (r - magic);
  kc__vf t2 = t * t;
  /* p_k(t): its even and odd terms apart (shorter chains than Horner's) */
#define KC__VM_ERF_C(j) kc__v_perm4(kc__v_erf_tab[j], k)
  kc__vf e = KC__VM_FMA(KC__VM_ERF_C(8), t2, KC__VM_ERF_C(6));
  kc__vf o = KC__VM_FMA(KC__VM_ERF_C(7), t2, KC__VM_ERF_C(5));
  e = KC__VM_FMA(e, t2, KC__VM_ERF_C(4));
  o = KC__VM_FMA(o, t2, KC__VM_ERF_C(3));
  e = KC__VM_FMA(e, t2, KC__VM_ERF_C(2));
  o = KC__VM_FMA(o, t2, KC__VM_ERF_C(1));
  e = KC__VM_FMA(e, t2, KC__VM_ERF_C(0));
#undef KC__VM_ERF_C
  kc__vf p = KC__VM_FMA(o, t, e);
  /* s with the sign of x: x clamped to [-1, 1] (NaN stays NaN) */
  kc__vf s = kc__v_max(kc__v_splat(-1.0f), kc__v_min(kc__v_splat(1.0f), x));
  return KC__VM_FMA(s, p, s);
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
