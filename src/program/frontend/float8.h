/* The f8, f6 and f4 floats (f8E4M3FN, f8E5M2, ... f4E2M1FN; HLO writes
 * them in lower case), which both front ends hold as their bits in u8
 * (float8.c): each format's values and rounding, and their decoding to
 * f32 and encoding from it built from instructions. Never installed. */
#ifndef KCALL_PROGRAM_FRONTEND_FLOAT8_H_
#define KCALL_PROGRAM_FRONTEND_FLOAT8_H_

#include "program/frontend/expr.h"

/* One of the formats. */
typedef struct kc__f8_format kc__f8_format;

/* The format of an MLIR type name ("f8E4M3FN"), or of an HLO one
 * ("f8e4m3fn"); NULL for none. */
const kc__f8_format* kc__f8_find(kc_string_view mlir);
const kc__f8_format* kc__f8_find_hlo(kc_string_view name);
/* Its MLIR name. */
const char* kc__f8_name(const kc__f8_format* f);
/* Its place in the table of formats, and the format at a place. */
int32_t kc__f8_index(const kc__f8_format* f);
const kc__f8_format* kc__f8_at(int32_t i);

/* The value of the bits (the low 8, 6 or 4) in format f. */
double kc__f8_decode(const kc__f8_format* f, unsigned bits);

/* x rounded to format f (to nearest, ties to even; past the largest
 * finite value: infinity, NaN or the largest value, as the format has
 * them) into *out; false for a NaN in a format without NaNs. */
bool kc__f8_encode(const kc__f8_format* f, double x, unsigned* out);

/* x (u8 bits of format f, of `shape`) decoded to f32: a gather from the
 * format's table of values. */
int32_t kc__e_f8_decode(kc__expr* e, int32_t x, const kc_shape* shape, const kc__f8_format* f);

/* x (f32 of like's dims) rounded to format f, as its bits in u8 (like's
 * dims): the same rounding as kc__f8_encode, in instructions. */
int32_t kc__e_f8_encode(kc__expr* e, int32_t x, const kc_shape* like, const kc__f8_format* f);

#endif /* KCALL_PROGRAM_FRONTEND_FLOAT8_H_ */
