/* Internals of the HLO-text parser shared between its files and with the
 * tests. Never installed. */
#ifndef KCALL_PROGRAM_PARSE_INTERNAL_H_
#define KCALL_PROGRAM_PARSE_INTERNAL_H_

#include "kcall/program.h"
#include "program/lexer.h"

/* ---- shapes (parse_shape.c) ---------------------------------------------- */

/* The layouts of a shape's array leaves as written. kcall computes on
 * logical values, so a layout matters only where bytes are reinterpreted:
 * a bitcast, and the buffers a custom call sees. */
typedef struct kc__layouts {
  size_t leaves;     /* array leaves seen, in pre-order */
  size_t nondefault; /* of them, with a layout other than row-major */
  /* minor_to_major of the first leaf (the array, for an array shape) */
  int8_t first[KC_TENSOR_MAX_NDIM];
  bool first_nondefault;
} kc__layouts;

/* An array shape as written, before it becomes a kc_shape: operands
 * repeat the shapes of their instructions, and comparing those needs no
 * allocation. */
typedef struct kc__array_text {
  kc__token start;
  DLDataType dtype;
  int32_t rank;
  int64_t dims[KC_TENSOR_MAX_NDIM];
} kc__array_text;

/* A shape at the current token: an array, or a tuple nested at most
 * KC__PARSE_MAX_DEPTH - depth deep. Layouts other than row-major are
 * recorded in `layouts`, or refused when it is NULL. */
kc_status* kc__parse_shape(kc__lexer* lx, int depth, kc__layouts* layouts,
                           kc_shape** out);

/* An array shape as written, without making it. */
kc_status* kc__parse_array_text(kc__lexer* lx, kc__layouts* layouts,
                                kc__array_text* out);

/* The kc_shape of an array shape as written; messages cite where it was. */
kc_status* kc__array_text_create(const kc__lexer* lx, const kc__array_text* a,
                                 kc_shape** out);

/* True when the array shape as written is `s` (layouts aside). */
bool kc__array_text_equal(const kc__array_text* a, const kc_shape* s);

/* ---- typed attributes (attrs_parse.c) ------------------------------------ */

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
