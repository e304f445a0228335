/* Internals of the HLO-text parser shared between its files and with the
 * tests. Never installed. */
#ifndef KCALL_PROGRAM_PARSE_INTERNAL_H_
#define KCALL_PROGRAM_PARSE_INTERNAL_H_

#include "program/lexer.h"

/*
 * Parses a typed-attribute dictionary as XLA writes a typed FFI call's
 * backend_config (MLIR's attribute-dictionary syntax), starting at the
 * current token, which must be '{', and consuming the closing '}':
 *   {eps = 1.000000e-05 : f32, n = 3 : i64, flag = true, name = "abc",
 *    dims = array<i64: 1, 2, 3>, nested = {a = 1 : i32}}
 * Everything *out refers to lives in `arena` or borrows from the lexer's
 * text (bare names); both must outlive *out. Untyped integers are i64,
 * untyped floats f64; floats may be written as hex bit patterns
 * (0x7F800000 : f32), as MLIR prints infinities and NaNs.
 * INVALID_ARGUMENT citing line and column; RESOURCE_EXHAUSTED.
 */
kc_status* kc__attrs_parse_dict(kc__lexer* lx, kc__arena* arena,
                                kc_attr_dict* out);

#endif /* KCALL_PROGRAM_PARSE_INTERNAL_H_ */
