/* The baseline of bench/python/bench_tf.py: the example plugin's Add
 * (same signature: x: T, y: T -> z: T, T in {float, double, int32})
 * written directly against TensorFlow's C API, as a kernel author would
 * without kcall (the op "BenchDirectAdd"; f32 of one shape computed, its
 * shape the first input's). Built at benchmark time against the installed
 * TensorFlow's headers and libtensorflow_framework. */
#include <stdint.h>
#include <string.h>

#include "tensorflow/c/kernels.h"
typedef struct TF_OpDefinitionBuilder TF_OpDefinitionBuilder;
typedef struct TF_ShapeInferenceContext TF_ShapeInferenceContext;
typedef struct TF_ShapeHandle TF_ShapeHandle;
typedef struct TF_DimensionHandle TF_DimensionHandle;
#include "tensorflow/c/ops.h"

static void shape(TF_ShapeInferenceContext* ctx, TF_Status* status) {
  TF_ShapeHandle* x = TF_NewShapeHandle();
  TF_ShapeInferenceContextGetInput(ctx, 0, x, status);
  if (TF_GetCode(status) == TF_OK) TF_ShapeInferenceContextSetOutput(ctx, 0, x, status);
  TF_DeleteShapeHandle(x);
}

static void* create(TF_OpKernelConstruction* ctx) {
  (void)ctx;
  return NULL;
}

static void destroy(void* kernel) { (void)kernel; }

static void compute(void* kernel, TF_OpKernelContext* ctx) {
  (void)kernel;
  TF_Status* status = TF_NewStatus();
  TF_Tensor *x = NULL, *y = NULL, *z = NULL;
  TF_GetInput(ctx, 0, &x, status);
  if (TF_GetCode(status) == TF_OK) TF_GetInput(ctx, 1, &y, status);
  if (TF_GetCode(status) == TF_OK &&
      (TF_TensorType(x) != TF_FLOAT || TF_TensorByteSize(x) != TF_TensorByteSize(y))) {
    TF_SetStatus(status, TF_INVALID_ARGUMENT, "BenchDirectAdd: f32 inputs of one shape only");
  }
  if (TF_GetCode(status) == TF_OK) {
    int64_t dims[8];
    int rank = TF_NumDims(x);
    for (int d = 0; d < rank && d < 8; ++d) dims[d] = TF_Dim(x, d);
    z = TF_AllocateOutput(ctx, 0, TF_FLOAT, dims, rank, TF_TensorByteSize(x), status);
  }
  if (TF_GetCode(status) == TF_OK) {
    const float* a = TF_TensorData(x);
    const float* b = TF_TensorData(y);
    float* c = TF_TensorData(z);
    int64_t n = (int64_t)(TF_TensorByteSize(x) / sizeof(float));
    for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
  } else {
    TF_OpKernelContext_Failure(ctx, status);
  }
  TF_DeleteTensor(x);
  TF_DeleteTensor(y);
  TF_DeleteTensor(z);
  TF_DeleteStatus(status);
}

__attribute__((constructor)) static void load(void) {
  TF_Status* status = TF_NewStatus();
  TF_OpDefinitionBuilder* b = TF_NewOpDefinitionBuilder("BenchDirectAdd");
  TF_OpDefinitionBuilderAddAttr(b, "T: {float, double, int32}");
  TF_OpDefinitionBuilderAddInput(b, "x: T");
  TF_OpDefinitionBuilderAddInput(b, "y: T");
  TF_OpDefinitionBuilderAddOutput(b, "z: T");
  TF_OpDefinitionBuilderSetShapeInferenceFunction(b, shape);
  TF_RegisterOpDefinition(b, status);
  TF_KernelBuilder* k = TF_NewKernelBuilder("BenchDirectAdd", "CPU", create, compute, destroy);
  TF_RegisterKernelBuilder("BenchDirectAdd", k, status);
  TF_DeleteStatus(status);
}
