/* Compiled against TensorFlow's own C API headers (from the tensorflow
 * wheel) by tests/python/tf_cases.py: src/tf/tf_abi.h, included
 * after them, redeclares each function it uses, which does not compile
 * where its prototype differs from TensorFlow's, and its constants are
 * checked against TensorFlow's enums here. */
#include <stdbool.h>

#include "tensorflow/c/kernels.h"
/* ops.h declares these only for C++. */
typedef struct TF_OpDefinitionBuilder TF_OpDefinitionBuilder;
typedef struct TF_ShapeInferenceContext TF_ShapeInferenceContext;
typedef struct TF_ShapeHandle TF_ShapeHandle;
typedef struct TF_DimensionHandle TF_DimensionHandle;
#include "tensorflow/c/ops.h"
#include "tensorflow/c/tf_datatype.h"
#include "tensorflow/c/tf_status.h"
#include "tensorflow/c/tf_tensor.h"

#define KCALL_TF_HAVE_TF_HEADERS 1
#include "tf/tf_abi.h"

#define KC__SAME(ours, theirs) _Static_assert((int)(ours) == (int)(theirs), #ours " != " #theirs)
KC__SAME(KC__TF_FLOAT, TF_FLOAT);
KC__SAME(KC__TF_DOUBLE, TF_DOUBLE);
KC__SAME(KC__TF_INT32, TF_INT32);
KC__SAME(KC__TF_UINT8, TF_UINT8);
KC__SAME(KC__TF_INT16, TF_INT16);
KC__SAME(KC__TF_INT8, TF_INT8);
KC__SAME(KC__TF_COMPLEX64, TF_COMPLEX64);
KC__SAME(KC__TF_INT64, TF_INT64);
KC__SAME(KC__TF_BOOL, TF_BOOL);
KC__SAME(KC__TF_BFLOAT16, TF_BFLOAT16);
KC__SAME(KC__TF_UINT16, TF_UINT16);
KC__SAME(KC__TF_COMPLEX128, TF_COMPLEX128);
KC__SAME(KC__TF_HALF, TF_HALF);
KC__SAME(KC__TF_UINT32, TF_UINT32);
KC__SAME(KC__TF_UINT64, TF_UINT64);
KC__SAME(KC__TF_OK, TF_OK);
KC__SAME(KC__TF_UNKNOWN, TF_UNKNOWN);
KC__SAME(KC__TF_INVALID_ARGUMENT, TF_INVALID_ARGUMENT);
KC__SAME(KC__TF_NOT_FOUND, TF_NOT_FOUND);
KC__SAME(KC__TF_RESOURCE_EXHAUSTED, TF_RESOURCE_EXHAUSTED);
KC__SAME(KC__TF_FAILED_PRECONDITION, TF_FAILED_PRECONDITION);
KC__SAME(KC__TF_OUT_OF_RANGE, TF_OUT_OF_RANGE);
KC__SAME(KC__TF_UNIMPLEMENTED, TF_UNIMPLEMENTED);
KC__SAME(KC__TF_INTERNAL, TF_INTERNAL);
_Static_assert(sizeof(TF_Bool) == 1, "TF_Bool is one byte");

int main(void) { return 0; }
