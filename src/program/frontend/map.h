/* map, as both front ends read it (HLO's `map`, StableHLO's
 * `stablehlo.map`): its computation applied to whole arrays. Never
 * installed. */
#ifndef KCALL_PROGRAM_FRONTEND_MAP_H_
#define KCALL_PROGRAM_FRONTEND_MAP_H_

#include "kcall/program.h"

/* Adds to `b` the instructions of `computation` (a program of scalar
 * parameters and scalar instructions) applied element by element to
 * `operands` (n ids, each an array of the result's dims): each parameter
 * is the operand of its number, each scalar constant is broadcast to the
 * result's dims, each element-wise instruction is added again on whole
 * arrays of the result's dims, and *out_id is its ROOT's value. Nothing is
 * run per element. `dimensions` (map's attribute) must be 0, 1, ..., rank
 * - 1, as HLO and StableHLO require. Added instructions are named
 * "NAME/INNER". INVALID_ARGUMENT, naming the instruction, when an operand
 * or the computation does not fit the result, or when the computation
 * holds an instruction that is not element-wise on scalars (a reduce, a
 * custom call, a tuple), which kcall does not map. `computation` is
 * borrowed. */
kc_status* kc__build_map(kc_program_builder* b, const kc_program* computation,
                         const int32_t* operands, const kc_shape* const* operand_shapes,
                         size_t n, const kc_shape* result, const int64_t* dimensions,
                         size_t num_dimensions, kc_string_view name, int32_t* out_id);

#endif /* KCALL_PROGRAM_FRONTEND_MAP_H_ */
