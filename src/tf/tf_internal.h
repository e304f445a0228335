/* What the files of libkcall_tf share: an op as TensorFlow sees it.
 * kcall_tf.c is the library's entry point (registration when TensorFlow
 * loads it), shape functions and kernels; tf_specs.c writes an op's specs
 * in TensorFlow's spelling and says what each attr is. */
#ifndef KCALL_TF_INTERNAL_H_
#define KCALL_TF_INTERNAL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kcall/kcall.h"
#include "tf/tf_abi.h"

#define KC__TF_EXPORT __attribute__((visibility("default")))
#define KC__TF_MAX_ATTRS 32
#define KC__TF_MAX_ARGS 64
#define KC__TF_SPEC_CAP 512

/* How an attr's value is read from a TensorFlow node. */
typedef enum kc__tf_attr_kind {
  KC__TF_KIND_INT = 1,
  KC__TF_KIND_FLOAT,
  KC__TF_KIND_BOOL,
  KC__TF_KIND_STRING,
  KC__TF_KIND_TYPE,
  KC__TF_KIND_INTS,
  KC__TF_KIND_FLOATS,
  KC__TF_KIND_BOOLS,
  KC__TF_KIND_TYPES
} kc__tf_attr_kind;

typedef struct kc__tf_attr {
  char name[64];
  kc__tf_attr_kind kind;
  /* Typed by an input ("x: T", "xs: N * T", "xs: L") or the length of
   * an input list ("N"): kcall infers it from the inputs, so the kernel
   * does not pass it on. */
  bool inferred;
} kc__tf_attr;

/* One kcall op registered as a TensorFlow op. */
typedef struct kc__tf_op {
  const kc_op* op; /* a reference, for the process's life */
  char name[128];  /* kcall's */
  char tf_name[160];
  int32_t num_args; /* input args as declared ("N * T" counts once) */
  int32_t num_attrs;
  kc__tf_attr attrs[KC__TF_MAX_ATTRS];
  /* The dtype of each input arg: fixed (code 0 bits 0: typed by an attr,
   * whose index is arg_attr[i]). */
  DLDataType arg_dtype[KC__TF_MAX_ARGS];
  int8_t arg_attr[KC__TF_MAX_ARGS];
  bool arg_list[KC__TF_MAX_ARGS];
  /* Whether graph-time shapes can come from the shape function: every
   * attr it could read is one TensorFlow's shape context gives (a type)
   * or one inferred from the inputs, and at most one input is a list. */
  bool static_shapes;
} kc__tf_op;

/* An op's specs in TensorFlow's spelling, for its op definition. */
typedef struct kc__tf_specs {
  int32_t num_inputs, num_outputs, num_attrs;
  char inputs[KC__TF_MAX_ARGS][KC__TF_SPEC_CAP];
  char outputs[KC__TF_MAX_ARGS][KC__TF_SPEC_CAP];
  char attrs[KC__TF_MAX_ATTRS][KC__TF_SPEC_CAP];
} kc__tf_specs;

/* tf_specs.c */
/* TensorFlow's name of a dtype ("float", "int32"); NULL for one
 * TensorFlow has no dtype for. And the TF_DataType of a dtype (0: none),
 * and back (false: kcall has none). */
const char* kc__tf_type_name(DLDataType t);
int kc__tf_type_of(DLDataType t);
bool kc__tf_dtype_of(int tf, DLDataType* out);
/* The TensorFlow op name of a kcall op name: "Kcall" and the name with
 * the first letter of each dotted part upper-cased and the dots dropped
 * ("Add" -> "KcallAdd", "my.ops.rms_norm" -> "KcallMyOpsRms_norm").
 * False (why in `why`) for a name that gives no valid TensorFlow name. */
bool kc__tf_op_name(const char* name, char* out, size_t cap, char* why, size_t why_cap);
/* Fills `o` and `specs` from the op (its reference is the caller's);
 * false, why in `why`, for an op TensorFlow cannot take as kcall defines
 * it. */
bool kc__tf_op_make(const kc_op* op, kc__tf_op* o, kc__tf_specs* specs, char* why, size_t cap);

#endif /* KCALL_TF_INTERNAL_H_ */
