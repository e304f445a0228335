/* Kernels of the built-in instructions (element-wise, convert, broadcast,
 * copy) on host memory. Never installed. */
#ifndef KCALL_PROGRAM_ELEMENTWISE_H_
#define KCALL_PROGRAM_ELEMENTWISE_H_

#include "kcall/program.h"
#include "program/instr/instr.h"

/* True when the instruction of entry `def` (KC__INSTR_ELEMENTWISE) is
 * implemented for operands of `in` and a result of `out`, as its
 * elementwise_types say. */
bool kc__elementwise_supported(const kc__instr_def* def, DLDataType in, DLDataType out);

/* out[i] = op(a[i], b[i]) (b ignored for unary ops and convert), n
 * elements. Integer division by zero gives -1 (all bits set for unsigned)
 * and INT_MIN / -1 gives INT_MIN, as XLA defines; float to integer
 * conversion saturates and maps NaN to 0. */
void kc__elementwise_run(int32_t op, DLDataType in, DLDataType out,
                         const void* a, const void* b, void* result,
                         int64_t n);

/* result (rank out_rank, dims out_dims) from operand (rank in_rank):
 * operand dim i is result dim map[i]. esize is the element size. */
void kc__broadcast_run(const void* operand, int32_t in_rank,
                       const int64_t* in_dims, void* result, int32_t out_rank,
                       const int64_t* out_dims, const int64_t* map,
                       size_t esize);

#endif /* KCALL_PROGRAM_ELEMENTWISE_H_ */
