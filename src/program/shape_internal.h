/* Shapes: internals shared by the program module. Never installed. */
#ifndef KCALL_PROGRAM_SHAPE_INTERNAL_H_
#define KCALL_PROGRAM_SHAPE_INTERNAL_H_

#include "kcall/program.h"

struct kc_shape {
  bool is_tuple;
  DLDataType dtype;
  int32_t rank;
  const int64_t* dims; /* into `storage`; NULL for rank 0 and tuples */
  size_t count;        /* tuple elements */
  kc_shape** elements;
  size_t leaf_count;
  size_t byte_size;
  int64_t storage[];
};

/* The array leaves of `s` in pre-order, appended at out[*n] (its
 * leaf_count entries). */
void kc__shape_leaves(const kc_shape* s, const kc_shape** out, size_t* n);

/* True when two array shapes have the same dims (dtypes aside). */
bool kc__shape_same_dims(const kc_shape* a, const kc_shape* b);

/* The element count of an array shape. */
int64_t kc__shape_elements(const kc_shape* s);

/* The HLO name of a dtype ("f32", "s32", "pred"), or NULL if it has none. */
const char* kc__hlo_dtype_name(DLDataType dtype);

/* Parses an HLO element type name (or a kcall dtype name); false if it is
 * neither. */
bool kc__hlo_dtype_parse(kc_string_view text, DLDataType* out);

#endif /* KCALL_PROGRAM_SHAPE_INTERNAL_H_ */
