/* The kernels of add .. log and convert on host memory, and the
 * instructions' prepare, kernel and tile over them. Never installed. */
#ifndef KCALL_PROGRAM_ELEMENTWISE_H_
#define KCALL_PROGRAM_ELEMENTWISE_H_

#include "kcall/program.h"
#include "program/instr/instr.h"

/* True when the instruction of entry `def` (KC__INSTR_ELEMENTWISE) is
 * implemented for operands of `in` and a result of `out`, as its
 * elementwise_types say. */
bool kc__elementwise_supported(const kc__instr_def* def, DLDataType in, DLDataType out);

/* The prepare, kernel, tile and tile cost of the KC__INSTR_ELEMENTWISE
 * entries (add .. log, convert): the instruction's operation and types,
 * run by kc__elementwise_run, split across the pool. */
kc_status* kc__elementwise_prepare(const kc_program* p, const kc__instr* in,
                                   const kc__prepare_ctx* ctx, const void** out_data);
kc_status* kc__elementwise_kernel(const kc__instr_kernel_ctx* ctx, void* out,
                                  const void* const* ins);
void kc__elementwise_tile(const void* data, void* out, const void* const* ins, int64_t n);
double kc__elementwise_tile_cost(const void* data);
kc__instr_loop_fn kc__elementwise_tile_loop(const void* data);

/* out[i] = op(a[i], b[i]) (b ignored for unary ops and convert), n
 * elements. Integer division by zero gives -1 (all bits set for unsigned)
 * and INT_MIN / -1 gives INT_MIN, as XLA defines; float to integer
 * conversion saturates and maps NaN to 0. */
void kc__elementwise_run(int32_t op, DLDataType in, DLDataType out,
                         const void* a, const void* b, void* result,
                         int64_t n);

#endif /* KCALL_PROGRAM_ELEMENTWISE_H_ */
