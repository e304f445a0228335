/* The f32 matrix product behind the program runtime's dot: a blocked GEMM
 * with both operands packed into panels and a register-blocked micro-kernel
 * picked for the CPU at run time. Never installed.
 *
 * Kernels, by name:
 *   "avx512"  12 x 32 tile (24 zmm accumulators), needs AVX-512F;
 *   "avx2"    6 x 16 tile (12 ymm accumulators), needs AVX2 and FMA;
 *   "plain"   4 x 16 tile in portable C, runs anywhere.
 * Every function here is thread-safe. */
#ifndef KCALL_KERNELS_GEMM_F32_H_
#define KCALL_KERNELS_GEMM_F32_H_

#include <stdbool.h>
#include <stdint.h>

#include "kcall/runtime.h"

typedef struct kc__gemm_f32_kernel kc__gemm_f32_kernel;

/* The fastest kernel this CPU runs, chosen once (under pthread_once, not
 * with target_clones, whose ifunc resolver runs before ThreadSanitizer's
 * runtime has started). Never NULL; static storage. */
const kc__gemm_f32_kernel* kc__gemm_f32_kernel_best(void);

/* The kernel called `name` (see above), NULL when there is none by that
 * name. It may not run on this CPU: ask kc__gemm_f32_kernel_supported. */
const kc__gemm_f32_kernel* kc__gemm_f32_kernel_lookup(const char* name);

/* Whether this CPU (and its operating system) runs `kernel`. */
bool kc__gemm_f32_kernel_supported(const kc__gemm_f32_kernel* kernel);

/* The kernel's name, static storage. */
const char* kc__gemm_f32_kernel_name(const kc__gemm_f32_kernel* kernel);

/* C[m x n] = A[m x k] B[k x n], all three row-major and dense, with
 * `kernel` (which must be supported). Runs on `pool` (NULL: on the
 * caller, or on the default pool when the product is large enough to
 * gain from it). k == 0 gives zeros. Scratch space for the packed panels
 * is allocated here and freed before returning: RESOURCE_EXHAUSTED when
 * it cannot be, with C unspecified. */
kc_status* kc__gemm_f32(const kc__gemm_f32_kernel* kernel, const float* a, const float* b,
                        float* c, int64_t m, int64_t n, int64_t k, kc_thread_pool* pool);

/* `batch` such products, one after another in memory: C[i] = A[i] B[i]
 * for i < batch, each A[i] m x k (or, when a_trans, its transpose: k x m
 * row-major, read in place), each B[i] k x n (or, when b_trans, n x k
 * row-major), each C[i] m x n. The strips of rows of every product are
 * shared out over the pool at once, so that many small products keep
 * every thread busy. Errors as kc__gemm_f32. */
kc_status* kc__gemm_f32_batched(const kc__gemm_f32_kernel* kernel, const float* a,
                                bool a_trans, const float* b, bool b_trans, float* c,
                                int64_t batch, int64_t m, int64_t n, int64_t k,
                                kc_thread_pool* pool);

#endif /* KCALL_KERNELS_GEMM_F32_H_ */
