/* Fusion (src/program/compiler/fusion.c) runs chains of element-wise instructions
 * as one step, a tile at a time; its results must be the bits the unfused
 * steps give. Each program here is compiled twice, with KCALL_FUSION=0 and
 * without it, and run on the same random inputs (NaN, infinities, -0 and
 * denormals among the floats); every output byte must agree. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt_hlo.h"

static uint64_t kt_fu_next(uint64_t* s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* One float value: mostly ordinary numbers of a few magnitudes, one in
 * eight a special. */
static bool kt_fu_specials = true;

static double kt_fu_float(uint64_t* s) {
  uint64_t r = kt_fu_next(s);
  switch (kt_fu_specials ? r % 64 : 63) {
    case 0: return __builtin_nan("");
    case 1: return __builtin_inf();
    case 2: return -__builtin_inf();
    case 3: return -0.0;
    case 4: return 1e-41; /* an f32 denormal */
    case 5: return 0.0;
    case 6: return 3e38;
    case 7: return -1e300;
    default: return ((double)((r >> 8) % 200001) - 100000.0) / 10000.0;
  }
}

static uint16_t kt_fu_f16(float f) {
  /* Truncated: any f16 bit pattern is a valid input. */
  uint32_t b;
  memcpy(&b, &f, sizeof b);
  uint32_t sign = (b >> 16) & 0x8000u;
  int32_t e = (int32_t)((b >> 23) & 0xff) - 127 + 15;
  uint32_t m = (b >> 13) & 0x3ffu;
  if (((b >> 23) & 0xff) == 0xff) return (uint16_t)(sign | 0x7c00u | (m ? 0x200u : 0));
  if (e >= 31) return (uint16_t)(sign | 0x7c00u);
  if (e <= 0) return (uint16_t)sign;
  return (uint16_t)(sign | ((uint32_t)e << 10) | m);
}

/* Fills `n` elements of type t. Integers stay small (indices, counts). */
static void kt_fu_fill(DLDataType t, void* data, size_t n, uint64_t* s) {
  for (size_t i = 0; i < n; ++i) {
    double v = kt_fu_float(s);
    int64_t k = (int64_t)(kt_fu_next(s) % 16) - 3;
    switch (t.code) {
      case kDLFloat:
        if (t.bits == 32) ((float*)data)[i] = (float)v;
        if (t.bits == 64) ((double*)data)[i] = v;
        if (t.bits == 16) ((uint16_t*)data)[i] = kt_fu_f16((float)v);
        break;
      case kDLBfloat: {
        float f = (float)v;
        uint32_t b;
        memcpy(&b, &f, sizeof b);
        ((uint16_t*)data)[i] = (uint16_t)(b >> 16);
        break;
      }
      case kDLComplex:
        if (t.bits == 64) {
          ((float*)data)[2 * i] = (float)v;
          ((float*)data)[2 * i + 1] = (float)kt_fu_float(s);
        } else {
          ((double*)data)[2 * i] = v;
          ((double*)data)[2 * i + 1] = kt_fu_float(s);
        }
        break;
      case kDLBool:
        ((uint8_t*)data)[i] = (uint8_t)(k & 1);
        break;
      default:
        if (t.code == kDLUInt && k < 0) k = -k;
        if (t.bits == 8) ((int8_t*)data)[i] = (int8_t)k;
        if (t.bits == 16) ((int16_t*)data)[i] = (int16_t)k;
        if (t.bits == 32) ((int32_t*)data)[i] = (int32_t)k;
        if (t.bits == 64) ((int64_t*)data)[i] = k;
        break;
    }
  }
}

/* Compiles `p` with fusion off (KCALL_FUSION=0) or on. */
static kc_status* kt_fu_compile(const kc_program* p, bool fuse, kc_executable** out) {
  if (!fuse) setenv("KCALL_FUSION", "0", 1);
  kc_status* st = kc_program_compile(p, NULL, out);
  unsetenv("KCALL_FUSION");
  return st;
}

/* Whether the printed plan shows an instruction computed within a fused
 * step. */
static bool kt_fu_has_fused(const kc_executable* exe) {
  size_t len = kc_executable_format_plan(exe, NULL, 0);
  char* buf = malloc(len + 1);
  KC_CHECK(buf != NULL);
  kc_executable_format_plan(exe, buf, len + 1);
  bool fused = strstr(buf, ": fused") != NULL;
  free(buf);
  return fused;
}

/* Runs `text` fused and unfused on random inputs (seed `seed`); checks the
 * outputs' bytes agree. 1 when compared; 0 when the program does not run
 * here (a custom call without its target), which both compiles report
 * alike. *fused: whether the fused plan has a fused instruction. */
static int kt_fu_same_bits(const char* text, const char* what, uint64_t seed, bool* fused) {
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_parse(kc_sv(text), &p));
  kc_executable* plain = NULL;
  kc_executable* fast = NULL;
  kc_status* a = kt_fu_compile(p, false, &plain);
  kc_status* b = kt_fu_compile(p, true, &fast);
  if (a || b) {
    KC_CHECK(a != NULL && b != NULL);
    KC_CHECK_INT((int64_t)kc_status_get_code(a), (int64_t)kc_status_get_code(b));
    kc_status_destroy(a);
    kc_status_destroy(b);
    kc_executable_destroy(plain);
    kc_executable_destroy(fast);
    kc_program_destroy(p);
    return 0;
  }
  *fused = kt_fu_has_fused(fast);
  KC_CHECK(!kt_fu_has_fused(plain));
  kc_executable_info info;
  info.struct_size = sizeof info;
  kc_executable_query(plain, &info);
  size_t ni = info.num_inputs, no = info.num_outputs;
  DLTensor* ins = calloc(ni + 1, sizeof *ins);
  const DLTensor** in_ptrs = calloc(ni + 1, sizeof *in_ptrs);
  kc_tensor** outs_a = calloc(no + 1, sizeof *outs_a);
  kc_tensor** outs_b = calloc(no + 1, sizeof *outs_b);
  KC_CHECK(ins && in_ptrs && outs_a && outs_b);
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < ni; ++i) {
    const kc_shape* sh = kc_executable_get_input_shape(plain, i);
    size_t n = 1;
    for (int32_t d = 0; d < kc_shape_get_rank(sh); ++d) n *= (size_t)kc_shape_get_dims(sh)[d];
    DLDataType t = kc_shape_get_dtype(sh);
    ins[i].data = calloc(n * kc_dtype_get_size(t) + 16, 1);
    KC_CHECK(ins[i].data != NULL);
    kt_fu_fill(t, ins[i].data, n, &s);
    ins[i].device = (DLDevice){kDLCPU, 0};
    ins[i].ndim = kc_shape_get_rank(sh);
    ins[i].dtype = t;
    ins[i].shape = (int64_t*)(uintptr_t)kc_shape_get_dims(sh);
    in_ptrs[i] = &ins[i];
  }
  a = kc_executable_execute(plain, in_ptrs, ni, NULL, outs_a);
  b = kc_executable_execute(fast, in_ptrs, ni, NULL, outs_b);
  if (a || b) {
    /* Both refuse alike (a library this machine lacks). */
    KC_CHECK(a != NULL && b != NULL);
    KC_CHECK_INT((int64_t)kc_status_get_code(a), (int64_t)kc_status_get_code(b));
    kc_status_destroy(a);
    kc_status_destroy(b);
  } else {
    for (size_t o = 0; o < no; ++o) {
      const DLTensor* x = kc_tensor_get_dltensor(outs_a[o]);
      const DLTensor* y = kc_tensor_get_dltensor(outs_b[o]);
      size_t bytes = kc_shape_get_byte_size(kc_executable_get_output_shape(plain, o));
      if (memcmp(x->data, y->data, bytes) != 0) {
        size_t at = 0;
        while (((const char*)x->data)[at] == ((const char*)y->data)[at]) ++at;
        fprintf(stderr, "%s: output %zu differs at byte %zu of %zu (0x%02x unfused, 0x%02x fused)\n",
                what, o, at, bytes, ((const unsigned char*)x->data)[at],
                ((const unsigned char*)y->data)[at]);
        KC_CHECK(false);
      }
    }
    kt_release(outs_a, no);
    kt_release(outs_b, no);
  }
  for (size_t i = 0; i < ni; ++i) free(ins[i].data);
  free(ins);
  free(in_ptrs);
  free(outs_a);
  free(outs_b);
  kc_executable_destroy(plain);
  kc_executable_destroy(fast);
  kc_program_destroy(p);
  return a ? 0 : 1;
}

static char* kt_fu_read(const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* buf = malloc((size_t)n + 1);
  KC_CHECK(buf != NULL);
  KC_CHECK(fread(buf, 1, (size_t)n, f) == (size_t)n);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

static int kt_fu_name_order(const void* a, const void* b) {
  return strcmp(*(char* const*)a, *(char* const*)b);
}

/* Every program of tests/fixtures/hlo_jax, lowered and optimized. */
KC_TEST(hlo_fusion_fixtures_same_bits) {
  DIR* dir = opendir(KT_HLO_JAX_DIR);
  KC_CHECK(dir != NULL);
  char* names[256];
  size_t num = 0;
  for (struct dirent* e; (e = readdir(dir)) != NULL;) {
    if (e->d_name[0] == '.' || num == 256) continue;
    names[num++] = strdup(e->d_name);
  }
  closedir(dir);
  qsort(names, num, sizeof *names, kt_fu_name_order);
  int compared = 0, fused = 0;
  bool transformer_fused = false;
  for (size_t i = 0; i < num; ++i) {
    for (int v = 0; v < 2; ++v) {
      char path[1024];
      snprintf(path, sizeof path, "%s/%s/%s.hlo", KT_HLO_JAX_DIR, names[i],
               v ? "optimized" : "lowered");
      char* text = kt_fu_read(path);
      /* LAPACK's SVD need not end on NaN: finite inputs for those. */
      kt_fu_specials = strncmp(names[i], "linalg_", 7) != 0;
      if (!text) continue;
      for (uint64_t seed = 1; seed <= 2; ++seed) {
        bool f = false;
        int c = kt_fu_same_bits(text, path, seed + i, &f);
        compared += c;
        fused += c && f;
        if (f && strcmp(names[i], "transformer") == 0) transformer_fused = true;
      }
      free(text);
    }
    free(names[i]);
  }
  kt_fu_specials = true;
  /* The fixtures with custom calls need handlers this test does not
   * register; the rest (over a hundred runs) compare. */
  KC_CHECK(compared >= 100);
  KC_CHECK(fused >= 40);
  KC_CHECK(transformer_fused);
}

/* The element types and shapes of the kernels a group may hold, small
 * (one tile) and large (split over the pool, an odd count so that tiles
 * and ranges end anywhere). */
KC_TEST(hlo_fusion_types_same_bits) {
  static const char* const modules[] = {
      /* f32: broadcasts of both kinds, convert, compare, select, clamp
       * with scalar bounds, math kernels, a reshape within the chain. */
      "HloModule m\nENTRY e {\n"
      "  x = f32[@R,7] parameter(0)\n  y = f32[@R,7] parameter(1)\n"
      "  r = f32[7] parameter(2)\n  c = f32[@R] parameter(3)\n"
      "  br = f32[@R,7] broadcast(r), dimensions={1}\n"
      "  bc = f32[@R,7] broadcast(c), dimensions={0}\n"
      "  a = f32[@R,7] add(x, br)\n  m = f32[@R,7] multiply(a, bc)\n"
      "  t = f32[@R,7] tanh(m)\n  e = f32[@R,7] exponential(y)\n"
      "  q = pred[@R,7] compare(t, e), direction=LT\n"
      "  s = f32[@R,7] select(q, t, e)\n"
      "  lo = f32[] constant(-0.5)\n  hi = f32[] constant(2)\n"
      "  k = f32[@R,7] clamp(lo, s, hi)\n"
      "  rs = f32[@F] reshape(k)\n  sq = f32[@F] sqrt(rs)\n"
      "  d = f64[@F] convert(sq)\n  l = f64[@F] log(d)\n"
      "  fin = pred[@F] is-finite(l)\n"
      "  rp = f64[@F] reduce-precision(l), exponent_bits=5, mantissa_bits=10\n"
      "  bi = s64[@F] bitcast-convert(rp)\n  one = s64[] constant(1)\n"
      "  ob = s64[@F] broadcast(one), dimensions={}\n  ad = s64[@F] add(bi, ob)\n"
      "  ROOT o = (f64[@F], pred[@F], s64[@F]) tuple(l, fin, ad)\n}\n",
      /* f16 and bf16, and integers through converts. */
      "HloModule m\nENTRY e {\n"
      "  x = f16[@R,7] parameter(0)\n  y = bf16[@R,7] parameter(1)\n"
      "  i = s8[@R,7] parameter(2)\n  u = u16[@R,7] parameter(3)\n"
      "  yc = f16[@R,7] convert(y)\n  a = f16[@R,7] multiply(x, yc)\n"
      "  t = f16[@R,7] tanh(a)\n  ic = f16[@R,7] convert(i)\n"
      "  s = f16[@R,7] subtract(t, ic)\n  b = bf16[@R,7] convert(s)\n"
      "  e = bf16[@R,7] exponential(b)\n"
      "  ui = s8[@R,7] convert(u)\n  m = s8[@R,7] multiply(ui, i)\n"
      "  n = s8[@R,7] negate(m)\n  dv = s8[@R,7] divide(n, i)\n"
      "  sh = s8[@R,7] shift-left(dv, i)\n  mx = s8[@R,7] maximum(sh, n)\n"
      "  ROOT o = (bf16[@R,7], s8[@R,7]) tuple(e, mx)\n}\n",
      /* complex: a chain of c64 and its parts, select with a scalar
       * predicate. */
      "HloModule m\nENTRY e {\n"
      "  x = c64[@R,7] parameter(0)\n  y = c64[@R,7] parameter(1)\n"
      "  p = pred[] parameter(2)\n"
      "  a = c64[@R,7] multiply(x, y)\n  d = c64[@R,7] divide(a, x)\n"
      "  s = c64[@R,7] select(p, d, y)\n  e = c64[@R,7] exponential(s)\n"
      "  w = c128[@R,7] convert(e)\n  l = c128[@R,7] log(w)\n"
      "  q = pred[@R,7] compare(e, x), direction=NE\n"
      "  ROOT o = (c128[@R,7], pred[@R,7]) tuple(l, q)\n}\n",
  };
  for (size_t k = 0; k < sizeof modules / sizeof *modules; ++k) {
    static const int rows[] = {1, 5, 42859}; /* 42859 * 7 = 300013 elements */
    for (size_t r = 0; r < sizeof rows / sizeof *rows; ++r) {
      char text[4096];
      int n = rows[r];
      /* @R is the row count, @F the element count (after a reshape). */
      size_t len = 0;
      for (const char* at = modules[k]; *at; ++at) {
        if (at[0] == '@' && (at[1] == 'R' || at[1] == 'F')) {
          len += (size_t)snprintf(text + len, sizeof text - len, "%d", at[1] == 'F' ? n * 7 : n);
          ++at;
        } else if (len + 1 < sizeof text) {
          text[len++] = *at;
          text[len] = '\0';
        }
      }
      char what[64];
      snprintf(what, sizeof what, "module %zu, %d rows", k, n);
      bool fused = false;
      for (uint64_t seed = 1; seed <= 3; ++seed) {
        KC_CHECK_INT(kt_fu_same_bits(text, what, seed * 7 + k, &fused), 1);
        KC_CHECK(fused);
      }
    }
  }
}

/* Chains longer than a group may be (64 instructions), with reshapes every
 * `period` instructions, so that groups end next to reshapes, and one
 * value read twice by its user. */
KC_TEST(hlo_fusion_long_chains_same_bits) {
  for (int period = 2; period <= 5; ++period) {
    static char text[32768];
    size_t len = 0;
    len += (size_t)snprintf(text + len, sizeof text - len,
                            "HloModule m\nENTRY e {\n  v0 = f32[9,7] parameter(0)\n"
                            "  y = f32[9,7] parameter(1)\n");
    bool flat = false;
    for (int i = 1; i <= 200; ++i) {
      const char* shape = flat ? "f32[63]" : "f32[9,7]";
      if (i % period == 0) {
        flat = !flat;
        len += (size_t)snprintf(text + len, sizeof text - len, "  v%d = %s reshape(v%d)\n", i,
                                flat ? "f32[63]" : "f32[9,7]", i - 1);
      } else if (!flat && i % 3 == 0) {
        len += (size_t)snprintf(text + len, sizeof text - len,
                                "  v%d = %s multiply(v%d, v%d)\n", i, shape, i - 1, i - 1);
      } else if (!flat) {
        len += (size_t)snprintf(text + len, sizeof text - len, "  v%d = %s add(v%d, y)\n", i,
                                shape, i - 1);
      } else {
        len += (size_t)snprintf(text + len, sizeof text - len, "  v%d = %s tanh(v%d)\n", i,
                                shape, i - 1);
      }
    }
    len += (size_t)snprintf(text + len, sizeof text - len, "  ROOT r = %s negate(v200)\n}\n",
                            flat ? "f32[63]" : "f32[9,7]");
    KC_CHECK(len < sizeof text - 1);
    char what[32];
    snprintf(what, sizeof what, "period %d", period);
    bool fused = false;
    KC_CHECK_INT(kt_fu_same_bits(text, what, (uint64_t)period, &fused), 1);
    KC_CHECK(fused);
  }
}

/* How many instructions the plan of `text` computes within fused steps,
 * and whether the instruction named `name` is one of them. */
static int kt_fu_count_fused(const char* text, const char* name, bool* name_fused) {
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_parse(kc_sv(text), &p));
  kc_executable* exe = NULL;
  KC_CHECK_OK(kt_fu_compile(p, true, &exe));
  size_t len = kc_executable_format_plan(exe, NULL, 0);
  char* buf = malloc(len + 1);
  KC_CHECK(buf != NULL);
  kc_executable_format_plan(exe, buf, len + 1);
  int count = 0;
  *name_fused = false;
  for (char* line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
    bool fused = strstr(line, ": fused") != NULL;
    count += fused;
    char first[64] = "", second[64] = "";
    if (sscanf(line, "%63s %63s", first, second) == 2 && strcmp(second, name) == 0) {
      *name_fused = fused;
    }
  }
  free(buf);
  kc_executable_destroy(exe);
  kc_program_destroy(p);
  return count;
}

/* A value read by several members is computed once a tile and kept until
 * its last reader (JAX's threefry rounds read each sum three times); one
 * also read outside the group keeps its buffer, and so does a reshape of
 * it. Small (one tile) and large (tiles and ranges over the pool). */
KC_TEST(hlo_fusion_shared_values_same_bits) {
  static const char* const round_module =
      "HloModule m\nENTRY e {\n"
      "  x = u32[@N] parameter(0)\n  k = u32[@N] parameter(1)\n"
      "  a = u32[@N] add(x, k)\n  l = u32[@N] shift-left(a, k)\n"
      "  r = u32[@N] shift-right-logical(a, k)\n  o = u32[@N] or(l, r)\n"
      "  z = u32[@N] xor(a, o)\n  ROOT t = u32[@N] add(z, a)\n}\n";
  static const char* const escape_module =
      "HloModule m\nENTRY e {\n"
      "  x = f32[@N] parameter(0)\n  b = f32[2,@H] parameter(1)\n"
      "  a = f32[@N] exponential(x)\n  ra = f32[2,@H] reshape(a)\n"
      "  m = f32[2,@H] multiply(ra, b)\n  n = f32[2,@H] add(m, m)\n"
      "  s = f32[2,@H] subtract(n, m)\n"
      "  ROOT t = (f32[2,@H], f32[@N]) tuple(s, a)\n}\n";
  static const int halves[] = {3, 150007};
  for (size_t h = 0; h < sizeof halves / sizeof *halves; ++h) {
    for (int which = 0; which < 2; ++which) {
      const char* module = which ? escape_module : round_module;
      char text[1024];
      size_t len = 0;
      for (const char* at = module; *at; ++at) {
        if (at[0] == '@' && (at[1] == 'N' || at[1] == 'H')) {
          len += (size_t)snprintf(text + len, sizeof text - len, "%d",
                                  at[1] == 'N' ? 2 * halves[h] : halves[h]);
          ++at;
        } else if (len + 1 < sizeof text) {
          text[len++] = *at;
          text[len] = '\0';
        }
      }
      bool name_fused = false;
      if (which == 0) {
        /* Every member but the root, which has the output buffer. */
        KC_CHECK_INT(kt_fu_count_fused(text, "a", &name_fused), 5);
        KC_CHECK(name_fused);
      } else {
        /* m and n; a (read by the tuple) and its reshape are not. */
        KC_CHECK_INT(kt_fu_count_fused(text, "ra", &name_fused), 2);
        KC_CHECK(!name_fused);
        kt_fu_count_fused(text, "a", &name_fused);
        KC_CHECK(!name_fused);
      }
      char what[64];
      snprintf(what, sizeof what, "module %d, %d elements", which, 2 * halves[h]);
      bool fused = false;
      for (uint64_t seed = 1; seed <= 2; ++seed) {
        KC_CHECK_INT(kt_fu_same_bits(text, what, seed, &fused), 1);
        KC_CHECK(fused);
      }
    }
  }
}
