/* The part of TensorFlow's C API (tensorflow/c/ops.h, kernels.h,
 * tf_tensor.h, tf_status.h) that libkcall_tf uses, declared here so that
 * kcall builds without TensorFlow: the functions are TensorFlow's own,
 * resolved when TensorFlow loads the library (tf.load_op_library, or
 * TF_LoadLibrary from C), from libtensorflow_framework.so.2, which the
 * process has loaded by then.
 *
 * The prototypes are TensorFlow's, as its headers (2.x) declare them;
 * tests/tf/check_tf_abi.c includes TensorFlow's headers first and this
 * file after them (KCALL_TF_HAVE_TF_HEADERS), so a prototype that
 * disagrees with TensorFlow's does not compile, and checks the constants
 * below against TensorFlow's enums (`make test EXTRAS=tf`). */
#ifndef KCALL_TF_ABI_H_
#define KCALL_TF_ABI_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifndef KCALL_TF_HAVE_TF_HEADERS
typedef struct TSL_Status TF_Status;
typedef struct TF_Tensor TF_Tensor;
typedef struct TF_OpDefinitionBuilder TF_OpDefinitionBuilder;
typedef struct TF_ShapeInferenceContext TF_ShapeInferenceContext;
typedef struct TF_ShapeHandle TF_ShapeHandle;
typedef struct TF_DimensionHandle TF_DimensionHandle;
typedef struct TF_KernelBuilder TF_KernelBuilder;
typedef struct TF_OpKernelConstruction TF_OpKernelConstruction;
typedef struct TF_OpKernelContext TF_OpKernelContext;
/* Enums of the size TensorFlow's have; their values are KC__TF_* below. */
typedef enum TF_DataType { KC__TF_DATATYPE_SIZE_ = 0x7fffffff } TF_DataType;
typedef enum TSL_Code { KC__TSL_CODE_SIZE_ = 0x7fffffff } TSL_Code;
typedef TSL_Code TF_Code;
typedef unsigned char TF_Bool;
#endif

/* TF_DataType's values (tensorflow/c/tf_datatype.h). */
enum {
  KC__TF_FLOAT = 1,
  KC__TF_DOUBLE = 2,
  KC__TF_INT32 = 3,
  KC__TF_UINT8 = 4,
  KC__TF_INT16 = 5,
  KC__TF_INT8 = 6,
  KC__TF_COMPLEX64 = 8,
  KC__TF_INT64 = 9,
  KC__TF_BOOL = 10,
  KC__TF_BFLOAT16 = 14,
  KC__TF_UINT16 = 17,
  KC__TF_COMPLEX128 = 18,
  KC__TF_HALF = 19,
  KC__TF_UINT32 = 22,
  KC__TF_UINT64 = 23
};

/* TF_Code's values (absl's status codes). */
enum {
  KC__TF_OK = 0,
  KC__TF_UNKNOWN = 2,
  KC__TF_INVALID_ARGUMENT = 3,
  KC__TF_NOT_FOUND = 5,
  KC__TF_RESOURCE_EXHAUSTED = 8,
  KC__TF_FAILED_PRECONDITION = 9,
  KC__TF_OUT_OF_RANGE = 11,
  KC__TF_UNIMPLEMENTED = 12,
  KC__TF_INTERNAL = 13
};

/* tf_status.h */
extern TF_Status* TF_NewStatus(void);
extern void TF_DeleteStatus(TF_Status*);
extern void TF_SetStatus(TF_Status* s, TF_Code code, const char* msg);
extern TF_Code TF_GetCode(const TF_Status* s);
extern const char* TF_Message(const TF_Status* s);

/* tf_tensor.h */
extern TF_Tensor* TF_NewTensor(TF_DataType, const int64_t* dims, int num_dims, void* data,
                               size_t len, void (*deallocator)(void* data, size_t len, void* arg),
                               void* deallocator_arg);
extern void TF_DeleteTensor(TF_Tensor*);
extern TF_DataType TF_TensorType(const TF_Tensor*);
extern int TF_NumDims(const TF_Tensor*);
extern int64_t TF_Dim(const TF_Tensor* tensor, int dim_index);
extern size_t TF_TensorByteSize(const TF_Tensor*);
extern void* TF_TensorData(const TF_Tensor*);

/* ops.h */
extern TF_OpDefinitionBuilder* TF_NewOpDefinitionBuilder(const char* op_name);
extern void TF_RegisterOpDefinition(TF_OpDefinitionBuilder* builder, TF_Status* status);
extern void TF_DeleteOpDefinitionBuilder(TF_OpDefinitionBuilder* builder);
extern void TF_OpDefinitionBuilderAddAttr(TF_OpDefinitionBuilder* builder, const char* attr_spec);
extern void TF_OpDefinitionBuilderAddInput(TF_OpDefinitionBuilder* builder,
                                           const char* input_spec);
extern void TF_OpDefinitionBuilderAddOutput(TF_OpDefinitionBuilder* builder,
                                            const char* output_spec);
extern void TF_OpDefinitionBuilderSetIsCommutative(TF_OpDefinitionBuilder* builder,
                                                   bool is_commutative);
extern void TF_OpDefinitionBuilderSetIsStateful(TF_OpDefinitionBuilder* builder,
                                                bool is_stateful);
extern void TF_OpDefinitionBuilderSetShapeInferenceFunction(
    TF_OpDefinitionBuilder* builder,
    void (*shape_inference_func)(TF_ShapeInferenceContext* ctx, TF_Status* status));
extern int64_t TF_ShapeInferenceContextNumInputs(TF_ShapeInferenceContext* ctx);
extern TF_ShapeHandle* TF_NewShapeHandle(void);
extern void TF_ShapeInferenceContextGetInput(TF_ShapeInferenceContext* ctx, int i,
                                             TF_ShapeHandle* handle, TF_Status* status);
extern void TF_ShapeInferenceContextSetOutput(TF_ShapeInferenceContext* ctx, int i,
                                              TF_ShapeHandle* handle, TF_Status* status);
extern TF_ShapeHandle* TF_ShapeInferenceContextScalar(TF_ShapeInferenceContext* ctx);
extern TF_ShapeHandle* TF_ShapeInferenceContextVectorFromSize(TF_ShapeInferenceContext* ctx,
                                                              size_t size);
extern TF_DimensionHandle* TF_NewDimensionHandle(void);
extern void TF_ShapeInferenceContext_GetAttrType(TF_ShapeInferenceContext* ctx,
                                                 const char* attr_name, TF_DataType* val,
                                                 TF_Status* status);
extern int64_t TF_ShapeInferenceContextRank(TF_ShapeInferenceContext* ctx,
                                            TF_ShapeHandle* handle);
extern int TF_ShapeInferenceContextRankKnown(TF_ShapeInferenceContext* ctx,
                                             TF_ShapeHandle* handle);
extern void TF_ShapeInferenceContextWithRank(TF_ShapeInferenceContext* ctx,
                                             TF_ShapeHandle* handle, int64_t rank,
                                             TF_ShapeHandle* result, TF_Status* status);
extern void TF_ShapeInferenceContextDim(TF_ShapeInferenceContext* ctx,
                                        TF_ShapeHandle* shape_handle, int64_t i,
                                        TF_DimensionHandle* result);
extern void TF_ShapeInferenceContextSubshape(TF_ShapeInferenceContext* ctx,
                                             TF_ShapeHandle* shape_handle, int64_t start,
                                             int64_t end, TF_ShapeHandle* result,
                                             TF_Status* status);
extern void TF_ShapeInferenceContextSetUnknownShape(TF_ShapeInferenceContext* ctx,
                                                    TF_Status* status);
extern int TF_DimensionHandleValueKnown(TF_DimensionHandle* dim_handle);
extern int64_t TF_DimensionHandleValue(TF_DimensionHandle* dim_handle);
extern void TF_ShapeInferenceContextConcatenateShapes(TF_ShapeInferenceContext* ctx,
                                                      TF_ShapeHandle* first,
                                                      TF_ShapeHandle* second,
                                                      TF_ShapeHandle* result, TF_Status* status);
extern void TF_DeleteShapeHandle(TF_ShapeHandle* handle);
extern void TF_DeleteDimensionHandle(TF_DimensionHandle* handle);

/* kernels.h */
extern TF_KernelBuilder* TF_NewKernelBuilder(const char* op_name, const char* device_name,
                                             void* (*create_func)(TF_OpKernelConstruction*),
                                             void (*compute_func)(void*, TF_OpKernelContext*),
                                             void (*delete_func)(void*));
extern void TF_RegisterKernelBuilder(const char* kernel_name, TF_KernelBuilder* builder,
                                     TF_Status* status);
extern void TF_DeleteKernelBuilder(TF_KernelBuilder* builder);
extern int TF_NumInputs(TF_OpKernelContext* ctx);
extern int TF_NumOutputs(TF_OpKernelContext* ctx);
extern void TF_GetInput(TF_OpKernelContext* ctx, int i, TF_Tensor** tensor, TF_Status* status);
extern void TF_SetOutput(TF_OpKernelContext* ctx, int i, const TF_Tensor* tensor,
                         TF_Status* status);
extern void TF_OpKernelConstruction_Failure(TF_OpKernelConstruction* ctx, TF_Status* status);
extern void TF_OpKernelContext_Failure(TF_OpKernelContext* ctx, TF_Status* status);
extern TF_DataType TF_ExpectedOutputDataType(TF_OpKernelContext* ctx, int i);
extern void TF_OpKernelConstruction_GetAttrSize(TF_OpKernelConstruction* ctx,
                                                const char* attr_name, int32_t* list_size,
                                                int32_t* total_size, TF_Status* status);
extern void TF_OpKernelConstruction_GetAttrType(TF_OpKernelConstruction* ctx,
                                                const char* attr_name, TF_DataType* val,
                                                TF_Status* status);
extern void TF_OpKernelConstruction_GetAttrInt64(TF_OpKernelConstruction* ctx,
                                                 const char* attr_name, int64_t* val,
                                                 TF_Status* status);
extern void TF_OpKernelConstruction_GetAttrFloat(TF_OpKernelConstruction* ctx,
                                                 const char* attr_name, float* val,
                                                 TF_Status* status);
extern void TF_OpKernelConstruction_GetAttrBool(TF_OpKernelConstruction* ctx,
                                                const char* attr_name, TF_Bool* val,
                                                TF_Status* status);
extern void TF_OpKernelConstruction_GetAttrString(TF_OpKernelConstruction* ctx,
                                                  const char* attr_name, char* val,
                                                  size_t max_length, TF_Status* status);
extern void TF_OpKernelConstruction_GetAttrTypeList(TF_OpKernelConstruction* ctx,
                                                    const char* attr_name, TF_DataType* vals,
                                                    int max_vals, TF_Status* status);
extern void TF_OpKernelConstruction_GetAttrInt64List(TF_OpKernelConstruction* ctx,
                                                     const char* attr_name, int64_t* vals,
                                                     int max_vals, TF_Status* status);
extern void TF_OpKernelConstruction_GetAttrFloatList(TF_OpKernelConstruction* ctx,
                                                     const char* attr_name, float* vals,
                                                     int max_vals, TF_Status* status);
extern void TF_OpKernelConstruction_GetAttrBoolList(TF_OpKernelConstruction* ctx,
                                                    const char* attr_name, TF_Bool* vals,
                                                    int max_vals, TF_Status* status);
extern TF_Tensor* TF_AllocateOutput(TF_OpKernelContext* context, int index, TF_DataType dtype,
                                    const int64_t* dims, int num_dims, size_t len,
                                    TF_Status* status);

#endif /* KCALL_TF_ABI_H_ */
