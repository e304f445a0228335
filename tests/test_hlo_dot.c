/* The f32 dot (src/kernels/gemm_f32.c) on every kernel this CPU runs,
 * chosen with KCALL_DOT_KERNEL, against a reference computed here in
 * double: sizes that leave partial tiles in every dimension, contracted
 * dimensions that cross the 256-element slices, column counts that cross
 * the column blocks, batches, transposed operands, and pools of several
 * sizes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kcall/kcall.h"
#include "test.h"

static const char* const kt_kernels[] = {"avx512", "avx2", "plain"};

/* Whether this CPU runs the kernel `name`, asked independently of the
 * library. */
static bool kt_cpu_runs(const char* name) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  if (strcmp(name, "avx512") == 0) return __builtin_cpu_supports("avx512f");
  if (strcmp(name, "avx2") == 0) {
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }
#else
  if (strcmp(name, "avx512") == 0 || strcmp(name, "avx2") == 0) return false;
#endif
  return true;
}

/* Uniform in [-1, 1), from a fixed sequence. */
static float kt_next(uint64_t* state) {
  *state = *state * 6364136223846793005ull + 1442695040888963407ull;
  return (float)((double)(*state >> 40) / (double)(1ull << 23) - 1.0);
}

typedef struct kt_dot_case {
  int64_t batch; /* 0: no batch dimension */
  int64_t m, n, k;
  bool lhs_t, rhs_t; /* lhs [k, m] instead of [m, k]; rhs [n, k] instead of [k, n] */
} kt_dot_case;

static void kt_dims(const kt_dot_case* c, bool lhs, int64_t* dims, int* rank) {
  int r = 0;
  if (c->batch) dims[r++] = c->batch;
  bool t = lhs ? c->lhs_t : c->rhs_t;
  int64_t outer = lhs ? c->m : c->k, inner = lhs ? c->k : c->n;
  dims[r++] = t ? inner : outer;
  dims[r++] = t ? outer : inner;
  *rank = r;
}

/* Compiles the dot of `c` with KCALL_DOT_KERNEL=kernel (NULL: unset) on
 * `pool` (NULL: the default pool). */
static kc_status* kt_dot_compile(const kt_dot_case* c, const char* kernel, kc_thread_pool* pool,
                                 kc_program** out_p, kc_executable** out_exe) {
  int64_t da[3], db[3];
  int ra, rb;
  kt_dims(c, true, da, &ra);
  kt_dims(c, false, db, &rb);
  char sa[64], sb[64], sr[64];
  int b = c->batch ? 1 : 0;
  if (b) {
    snprintf(sa, sizeof sa, "%lld,%lld,%lld", (long long)da[0], (long long)da[1],
             (long long)da[2]);
    snprintf(sb, sizeof sb, "%lld,%lld,%lld", (long long)db[0], (long long)db[1],
             (long long)db[2]);
    snprintf(sr, sizeof sr, "%lld,%lld,%lld", (long long)c->batch, (long long)c->m,
             (long long)c->n);
  } else {
    snprintf(sa, sizeof sa, "%lld,%lld", (long long)da[0], (long long)da[1]);
    snprintf(sb, sizeof sb, "%lld,%lld", (long long)db[0], (long long)db[1]);
    snprintf(sr, sizeof sr, "%lld,%lld", (long long)c->m, (long long)c->n);
  }
  char text[512];
  snprintf(text, sizeof text,
           "HloModule m\nENTRY e {\n a = f32[%s] parameter(0)\n b = f32[%s] parameter(1)\n"
           " ROOT d = f32[%s] dot(a, b), %slhs_contracting_dims={%d}, "
           "%srhs_contracting_dims={%d}\n}\n",
           sa, sb, sr, b ? "lhs_batch_dims={0}, " : "", b + (c->lhs_t ? 0 : 1),
           b ? "rhs_batch_dims={0}, " : "", b + (c->rhs_t ? 1 : 0));
  KC_CHECK_OK(kc_program_parse(kc_sv(text), out_p));
  kc_compile_options opts;
  memset(&opts, 0, sizeof opts);
  opts.struct_size = sizeof opts;
  opts.thread_pool = pool;
  if (kernel) setenv("KCALL_DOT_KERNEL", kernel, 1);
  kc_status* st = kc_program_compile(*out_p, &opts, out_exe);
  if (kernel) unsetenv("KCALL_DOT_KERNEL");
  return st;
}

/* Runs the dot of `c` and checks every element against the product in
 * double. Bound: any order of summing k products with f32 roundings (one
 * for each product, one for each addition, fused or not) is within
 * (k + 1) u sum |a b| of the exact sum, u = 2^-24; a lost, doubled or
 * misplaced product is far larger for these values. */
static void kt_dot_check(const kt_dot_case* c, const char* kernel, kc_thread_pool* pool) {
  kc_program* p = NULL;
  kc_executable* exe = NULL;
  KC_CHECK_OK(kt_dot_compile(c, kernel, pool, &p, &exe));
  int64_t nb = c->batch ? c->batch : 1, m = c->m, n = c->n, k = c->k;
  size_t na = (size_t)(nb * m * k), nbv = (size_t)(nb * k * n);
  float* a = malloc(na * sizeof *a + 4);
  float* b = malloc(nbv * sizeof *b + 4);
  KC_CHECK(a && b);
  uint64_t seed = (uint64_t)(m * 1000003 + n * 1009 + k);
  for (size_t i = 0; i < na; ++i) a[i] = kt_next(&seed);
  for (size_t i = 0; i < nbv; ++i) b[i] = kt_next(&seed);
  int64_t da[3], db[3];
  int ra, rb;
  kt_dims(c, true, da, &ra);
  kt_dims(c, false, db, &rb);
  DLTensor ta, tb;
  memset(&ta, 0, sizeof ta);
  memset(&tb, 0, sizeof tb);
  ta.data = a;
  tb.data = b;
  ta.device.device_type = tb.device.device_type = kDLCPU;
  ta.ndim = ra;
  tb.ndim = rb;
  ta.dtype = tb.dtype = (DLDataType){kDLFloat, 32, 1};
  ta.shape = da;
  tb.shape = db;
  const DLTensor* ins[2] = {&ta, &tb};
  kc_tensor* out = NULL;
  KC_CHECK_OK(kc_executable_execute(exe, ins, 2, NULL, &out));
  const float* got = kc_tensor_get_dltensor(out)->data;
  int failures = 0;
  for (int64_t bi = 0; bi < nb && failures < 5; ++bi) {
    const float* ab = a + bi * m * k;
    const float* bb = b + bi * k * n;
    for (int64_t i = 0; i < m && failures < 5; ++i) {
      for (int64_t j = 0; j < n && failures < 5; ++j) {
        double want = 0, mag = 0;
        for (int64_t q = 0; q < k; ++q) {
          double x = c->lhs_t ? ab[q * m + i] : ab[i * k + q];
          double y = c->rhs_t ? bb[j * k + q] : bb[q * n + j];
          want += x * y;
          mag += fabs(x * y);
        }
        double bound = (double)(k + 1) * ldexp(1.0, -24) * mag * 1.01;
        double have = got[(bi * m + i) * n + j];
        if (!(fabs(have - want) <= bound)) {
          fprintf(stderr,
                  "kernel %s, batch %lld, %lld x %lld x %lld%s%s: element [%lld,%lld,%lld]: "
                  "expected %.9g (within %.3g), got %.9g\n",
                  kernel ? kernel : "(default)", (long long)c->batch, (long long)m,
                  (long long)n, (long long)k, c->lhs_t ? ", lhs transposed" : "",
                  c->rhs_t ? ", rhs transposed" : "", (long long)bi, (long long)i,
                  (long long)j, want, bound, have);
          ++failures;
        }
      }
    }
  }
  KC_CHECK(failures == 0);
  kc_object_release(KC_OBJECT(out));
  free(a);
  free(b);
  kc_executable_destroy(exe);
  kc_program_destroy(p);
}

/* The kernels this CPU runs, each with `fn`; at least "plain" always. */
static int kt_each_kernel(void (*fn)(const char* kernel, kc_thread_pool* pool),
                          kc_thread_pool* pool) {
  int ran = 0;
  for (size_t i = 0; i < sizeof kt_kernels / sizeof kt_kernels[0]; ++i) {
    if (!kt_cpu_runs(kt_kernels[i])) {
      fprintf(stderr, "note: this CPU does not run the %s kernel\n", kt_kernels[i]);
      continue;
    }
    fn(kt_kernels[i], pool);
    ++ran;
  }
  return ran;
}

/* Every combination of sizes around the tiles (MR 4, 6 or 12 rows; NR 16
 * or 32 columns), each smaller than, just under or just over one. */
static void kt_small_sizes(const char* kernel, kc_thread_pool* pool) {
  static const int64_t sizes[] = {1, 5, 7, 13, 31, 33};
  for (size_t i = 0; i < 6; ++i) {
    for (size_t j = 0; j < 6; ++j) {
      for (size_t q = 0; q < 6; ++q) {
        kt_dot_case c = {0, sizes[i], sizes[j], sizes[q], false, false};
        kt_dot_check(&c, kernel, pool);
      }
    }
  }
}

KC_TEST(hlo_dot_f32_edge_tiles_every_kernel) {
  KC_CHECK(kt_each_kernel(kt_small_sizes, NULL) >= 1);
}

/* Larger sizes: contracted dimensions across the 256-element slices (255,
 * 256, 257, 513, 1100), columns across the 1024-column blocks, rows
 * spread over the pool, and odd sizes in every dimension at once. */
static void kt_large_sizes(const char* kernel, kc_thread_pool* pool) {
  static const kt_dot_case cases[] = {
      {0, 257, 33, 513, false, false}, {0, 513, 257, 7, false, false},
      {0, 33, 513, 257, false, false}, {0, 7, 7, 1100, false, false},
      {0, 31, 47, 255, false, false},  {0, 31, 47, 256, false, false},
      {0, 13, 1100, 300, false, false}, {0, 1, 513, 513, false, false},
      {0, 513, 1, 33, false, false},   {0, 100, 100, 100, false, false},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    kt_dot_check(&cases[i], kernel, pool);
  }
}

KC_TEST(hlo_dot_f32_large_every_kernel) {
  KC_CHECK(kt_each_kernel(kt_large_sizes, NULL) >= 1);
}

/* Pools of 1, 3 and 4 threads (more than this machine may have cores):
 * each split of the rows and of the packing gives the same products. */
KC_TEST(hlo_dot_f32_pools_of_several_sizes) {
  static const int32_t sizes[] = {1, 3, 4};
  for (size_t i = 0; i < 3; ++i) {
    kc_thread_pool* pool = NULL;
    KC_CHECK_OK(kc_thread_pool_create(sizes[i], &pool));
    KC_CHECK(kt_each_kernel(kt_large_sizes, pool) >= 1);
    kc_thread_pool_destroy(pool);
  }
}

/* Batches, with either operand transposed (read in place by the packing)
 * or both. */
static void kt_batched(const char* kernel, kc_thread_pool* pool) {
  static const kt_dot_case cases[] = {
      {3, 5, 33, 257, false, false}, {2, 13, 7, 31, true, false},
      {4, 7, 31, 300, false, true},  {2, 33, 17, 513, true, true},
      {1, 1, 1, 1, true, true},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    kt_dot_check(&cases[i], kernel, pool);
  }
}

KC_TEST(hlo_dot_f32_batched_and_transposed_every_kernel) {
  KC_CHECK(kt_each_kernel(kt_batched, NULL) >= 1);
}

/* Operands read in place from their transposes ([k, m] lhs, [n, k] rhs),
 * batched in one job: rows across the 96-row groups of packed A (97,
 * 193), contracted dimensions across the 256-element slices, columns
 * across the 1024-column blocks and odd sizes in every dimension. */
static void kt_transposed_large(const char* kernel, kc_thread_pool* pool) {
  static const kt_dot_case cases[] = {
      {0, 97, 33, 257, true, false},   {0, 193, 47, 300, false, true},
      {0, 200, 1100, 5, true, true},   {3, 97, 129, 513, true, false},
      {5, 13, 31, 64, false, true},    {4, 128, 128, 64, false, true},
      {2, 96, 17, 256, true, true},    {7, 3, 5, 2, true, false},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    kt_dot_check(&cases[i], kernel, pool);
  }
}

KC_TEST(hlo_dot_f32_transposed_in_place_every_kernel) {
  KC_CHECK(kt_each_kernel(kt_transposed_large, NULL) >= 1);
}

/* Many small batch elements shared out over pools of 1, 2, 3 and 4
 * threads at once: every split of the strips across the batch (claims
 * that end inside one element and go on into the next) gives the same
 * products. */
static void kt_batched_pools(const char* kernel, kc_thread_pool* pool) {
  static const kt_dot_case cases[] = {
      {16, 7, 20, 33, false, false}, {9, 31, 17, 70, false, true},
      {6, 128, 64, 128, false, false}, {12, 13, 40, 9, true, true},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    kt_dot_check(&cases[i], kernel, pool);
  }
}

KC_TEST(hlo_dot_f32_batched_over_pools) {
  static const int32_t sizes[] = {1, 2, 3, 4};
  for (size_t i = 0; i < 4; ++i) {
    kc_thread_pool* pool = NULL;
    KC_CHECK_OK(kc_thread_pool_create(sizes[i], &pool));
    KC_CHECK(kt_each_kernel(kt_batched_pools, pool) >= 1);
    kc_thread_pool_destroy(pool);
  }
}

/* An empty contracted dimension gives zeros, on every kernel. */
static void kt_empty_k(const char* kernel, kc_thread_pool* pool) {
  kt_dot_case c = {0, 3, 5, 0, false, false};
  kt_dot_check(&c, kernel, pool);
}

KC_TEST(hlo_dot_f32_empty_contraction_gives_zeros) {
  KC_CHECK(kt_each_kernel(kt_empty_k, NULL) >= 1);
}

/* KCALL_DOT_KERNEL naming no kernel is refused at compile, as is one the
 * CPU cannot run; nothing is left behind. */
KC_TEST(hlo_dot_kernel_variable_refusals) {
  kt_dot_case c = {0, 2, 2, 2, false, false};
  kc_program* p = NULL;
  kc_executable* exe = NULL;
  KC_CHECK_CODE(kt_dot_compile(&c, "avx1024", NULL, &p, &exe), KC_INVALID_ARGUMENT,
                "instruction 'd'", "KCALL_DOT_KERNEL: expected avx512, avx2 or plain, got 'avx1024'");
  KC_CHECK(exe == NULL);
  kc_program_destroy(p);
  for (size_t i = 0; i < sizeof kt_kernels / sizeof kt_kernels[0]; ++i) {
    p = NULL;
    exe = NULL;
    kc_status* st = kt_dot_compile(&c, kt_kernels[i], NULL, &p, &exe);
    if (kt_cpu_runs(kt_kernels[i])) {
      KC_CHECK_OK(st);
      KC_CHECK(exe != NULL);
    } else {
      KC_CHECK_CODE(st, KC_FAILED_PRECONDITION, "this CPU cannot run the", kt_kernels[i]);
      KC_CHECK(exe == NULL);
    }
    kc_executable_destroy(exe);
    kc_program_destroy(p);
  }
}
