/* What the built-in ops' files share (README.md). Never installed. */
#ifndef KCALL_BUILTIN_BUILTIN_INTERNAL_H_
#define KCALL_BUILTIN_BUILTIN_INTERNAL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kcall/kernel.h"
#include "kcall/op.h"
#include "kcall/runtime.h"

/* The largest rank the kernels take; the shape functions refuse more. */
#define KC__BI_MAX_RANK 16

/* One built-in op: the spec strings a plugin would hand the op builder,
 * and its CPU kernel for f32 and f64 (the type attr `T`; f16 and bf16
 * through f32 when T is KC__BI_T). */
typedef struct kc__bi_op {
  const char* name;
  const char* inputs[7]; /* NULL-terminated, as are the next two */
  const char* outputs[4];
  const char* attrs[8];
  const char* doc;
  kc_shape_fn shape_fn;
  const char* gradient; /* NULL: none */
  const char* jvp;      /* NULL: none */
  kc_op_batching batching;
  kc_kernel_compute_fn compute;
  /* What the kernel's instance is: `code` (an operation of a family that
   * shares one compute function) unless `create` reads the attributes. */
  kc_kernel_create_fn create;
  intptr_t code;
} kc__bi_op;

/* The type attr of the ops: f32 and f64 kernels of their own, f16 and
 * bf16 through f32 (bi_half.c). */
#define KC__BI_T "T: {f32, f64, f16, bf16}"

/* The attr a gradient op declares to be told which of its outputs the
 * caller uses (kcall/op.h, "Gradients": a mask, -1 for all), and which
 * they are: need[i] for each of its `count` outputs. */
#define KC__BI_NEEDED "kc_needed: int = -1"
kc_status* kc__bi_needed(kc_kernel_ctx* ctx, bool* need, int32_t count);

/* Registers the f16 and bf16 kernel of `op` (bi_half.c). */
kc_status* kc__bi_register_half_kernel(const kc__bi_op* op);

/* A row's inputs or outputs: KC__BI_LIST("x: T", "y: T"). */
#define KC__BI_LIST(...) \
  { __VA_ARGS__, NULL }

/* The families (bi_matmul.c, bi_elementwise.c, bi_reduce.c, bi_nn.c,
 * bi_index.c, bi_conv.c, bi_pool.c). */
extern const kc__bi_op kc__bi_matmul_ops[];
extern const size_t kc__bi_matmul_op_count;
extern const kc__bi_op kc__bi_elementwise_ops[];
extern const size_t kc__bi_elementwise_op_count;
extern const kc__bi_op kc__bi_reduce_ops[];
extern const size_t kc__bi_reduce_op_count;
extern const kc__bi_op kc__bi_nn_ops[];
extern const size_t kc__bi_nn_op_count;
extern const kc__bi_op kc__bi_index_ops[];
extern const size_t kc__bi_index_op_count;
extern const kc__bi_op kc__bi_conv_ops[];
extern const size_t kc__bi_conv_op_count;
extern const kc__bi_op kc__bi_pool_ops[];
extern const size_t kc__bi_pool_op_count;

static inline int64_t kc__bi_numel(const DLTensor* t) {
  int64_t n = 1;
  for (int32_t i = 0; i < t->ndim; ++i) n *= t->shape[i];
  return n;
}

static inline void* kc__bi_data(const DLTensor* t) { return (char*)t->data + t->byte_offset; }

static inline bool kc__bi_is_f32(const DLTensor* t) { return t->dtype.bits == 32; }

/* Element i of an f32 (f32) or f64 array, as a double; and stored. */
static inline double kc__bi_get(const void* p, bool f32, int64_t i) {
  return f32 ? (double)((const float*)p)[i] : ((const double*)p)[i];
}

static inline void kc__bi_set(void* p, bool f32, int64_t i, double v) {
  if (f32) {
    ((float*)p)[i] = (float)v;
  } else {
    ((double*)p)[i] = v;
  }
}

/* An operand of kc__bi_products: its storage and whether it is read
 * transposed. */
typedef struct kc__bi_operand {
  const void* p;
  bool t;
} kc__bi_operand;

/* `batch` products C[i] = op(A[i]) op(B[i]) in f32 (on the GEMM of
 * src/kernels/gemm_f32.c) or f64 (a loop of bi_matmul.c), each operand
 * dense and one after another in memory, a_step and b_step elements apart
 * (0: one operand for every product); op(A) m x k, op(B) k x n, C[i]
 * m x n. RESOURCE_EXHAUSTED when the GEMM's scratch cannot be had. */
kc_status* kc__bi_products(bool f32, kc__bi_operand a, int64_t a_step, kc__bi_operand b,
                           int64_t b_step, void* c, int64_t batch, int64_t m, int64_t n,
                           int64_t k, kc_thread_pool* pool);

/* The operation code a kernel instance stands for (kc__bi_op.code). */
static inline int kc__bi_code(const void* kernel) { return (int)(intptr_t)kernel; }

/* Element strides of `t` (row-major, dense) against an output of rank
 * `rank` with dims `out`: 0 along the dims `t` is broadcast over (its
 * missing leading dims and its dims of 1 where the output's differ). */
void kc__bi_broadcast_strides(const DLTensor* t, int32_t rank, const int64_t* out,
                              int64_t* strides);

/* The offset of element `index` (row-major in `dims`) through `strides`. */
static inline int64_t kc__bi_offset(int64_t index, int32_t rank, const int64_t* dims,
                                    const int64_t* strides) {
  int64_t off = 0;
  for (int32_t d = rank - 1; d >= 0 && index; --d) {
    off += (index % dims[d]) * strides[d];
    index /= dims[d];
  }
  return off;
}

#endif /* KCALL_BUILTIN_BUILTIN_INTERNAL_H_ */
