/* The part of ONNX Runtime's C ABI that libkcall_ort uses, declared here
 * from ONNX Runtime's public C API documentation (no ONNX Runtime header
 * is needed to build). The function table (OrtApi) is an array of
 * function pointers appended to with each API version and never
 * reordered, so each function is read at its fixed index, with the
 * signature below. The indices are those of ONNX Runtime's public header;
 * every one used is present from API 17 (ORT 1.17), the version the
 * bridge asks for. */
#ifndef KCALL_ORT_ABI_H_
#define KCALL_ORT_ABI_H_

#include <stddef.h>
#include <stdint.h>

typedef struct kc__ort_status kc__ort_status; /* OrtStatus */
typedef struct kc__ort_session_options kc__ort_session_options;
typedef struct kc__ort_domain kc__ort_domain; /* OrtCustomOpDomain */
typedef struct kc__ort_kernel_info kc__ort_kernel_info;
typedef struct kc__ort_kernel_context kc__ort_kernel_context;
typedef struct kc__ort_value kc__ort_value;
typedef struct kc__ort_tensor_info kc__ort_tensor_info; /* OrtTensorTypeAndShapeInfo */
typedef struct kc__ort_shape_ctx kc__ort_shape_ctx;     /* OrtShapeInferContext */
typedef struct kc__ort_op_attr kc__ort_op_attr;
typedef struct kc__ort_type_info kc__ort_type_info; /* OrtTypeInfo */

/* The version the bridge asks GetApi for and writes in its custom ops. */
#define KC__ORT_API_VERSION 17

/* OrtApiBase: what RegisterCustomOps is given. */
typedef struct kc__ort_api_base {
  const void* const* (*get_api)(uint32_t version); /* NULL: not supported */
  const char* (*get_version_string)(void);
} kc__ort_api_base;

/* OrtErrorCode (the ones used). */
enum { KC__ORT_FAIL = 1, KC__ORT_INVALID_ARGUMENT = 2, KC__ORT_RUNTIME_EXCEPTION = 6,
       KC__ORT_NOT_IMPLEMENTED = 9 };

/* ONNXTensorElementDataType. */
enum {
  KC__ONNX_UNDEFINED = 0, KC__ONNX_FLOAT = 1, KC__ONNX_UINT8 = 2, KC__ONNX_INT8 = 3,
  KC__ONNX_UINT16 = 4, KC__ONNX_INT16 = 5, KC__ONNX_INT32 = 6, KC__ONNX_INT64 = 7,
  KC__ONNX_STRING = 8, KC__ONNX_BOOL = 9, KC__ONNX_FLOAT16 = 10, KC__ONNX_DOUBLE = 11,
  KC__ONNX_UINT32 = 12, KC__ONNX_UINT64 = 13, KC__ONNX_COMPLEX64 = 14,
  KC__ONNX_COMPLEX128 = 15, KC__ONNX_BFLOAT16 = 16
};

/* OrtCustomOpInputOutputCharacteristic. */
enum { KC__ORT_REQUIRED = 0, KC__ORT_OPTIONAL = 1, KC__ORT_VARIADIC = 2 };

/* OrtOpAttrType (ReadOpAttr). */
enum { KC__ORT_ATTR_INT = 1, KC__ORT_ATTR_INTS = 2, KC__ORT_ATTR_FLOAT = 3,
       KC__ORT_ATTR_FLOATS = 4, KC__ORT_ATTR_STRING = 5 };

/* OrtApi indices and signatures. */
#define KC__ORT_FUNCTIONS(X)                                                          \
  X(0, create_status, kc__ort_status*, (int code, const char* msg))                   \
  X(2, get_error_message, const char*, (const kc__ort_status* status))                \
  X(26, create_custom_op_domain, kc__ort_status*, (const char* domain,                \
                                                   kc__ort_domain** out))             \
  X(27, custom_op_domain_add, kc__ort_status*, (kc__ort_domain* domain,               \
                                                const void* op))                      \
  X(28, add_custom_op_domain, kc__ort_status*, (kc__ort_session_options* options,     \
                                                kc__ort_domain* domain))              \
  X(51, get_tensor_mutable_data, kc__ort_status*, (kc__ort_value* value, void** out)) \
  X(55, cast_type_info_to_tensor_info, kc__ort_status*,                                \
    (const kc__ort_type_info* type, const kc__ort_tensor_info** out))                 \
  X(57, create_tensor_info, kc__ort_status*, (kc__ort_tensor_info** out))             \
  X(58, set_tensor_element_type, kc__ort_status*, (kc__ort_tensor_info* info,         \
                                                   int type))                         \
  X(59, set_dimensions, kc__ort_status*, (kc__ort_tensor_info* info,                  \
                                          const int64_t* dims, size_t count))         \
  X(60, get_tensor_element_type, kc__ort_status*, (const kc__ort_tensor_info* info,   \
                                                   int* out))                         \
  X(61, get_dimensions_count, kc__ort_status*, (const kc__ort_tensor_info* info,      \
                                                size_t* out))                         \
  X(62, get_dimensions, kc__ort_status*, (const kc__ort_tensor_info* info,            \
                                          int64_t* dims, size_t count))               \
  X(63, get_symbolic_dimensions, kc__ort_status*, (const kc__ort_tensor_info* info,   \
                                                   const char** names, size_t count)) \
  X(65, get_tensor_type_and_shape, kc__ort_status*, (const kc__ort_value* value,      \
                                                     kc__ort_tensor_info** out))      \
  X(85, kernel_info_get_float, kc__ort_status*, (const kc__ort_kernel_info* info,     \
                                                 const char* name, float* out))       \
  X(86, kernel_info_get_int64, kc__ort_status*, (const kc__ort_kernel_info* info,     \
                                                 const char* name, int64_t* out))     \
  X(87, kernel_info_get_string, kc__ort_status*, (const kc__ort_kernel_info* info,    \
                                                  const char* name, char* out,        \
                                                  size_t* size))                      \
  X(88, kernel_context_get_input_count, kc__ort_status*,                              \
    (const kc__ort_kernel_context* ctx, size_t* out))                                 \
  X(90, kernel_context_get_input, kc__ort_status*, (const kc__ort_kernel_context* ctx, \
                                                    size_t index,                     \
                                                    const kc__ort_value** out))       \
  X(91, kernel_context_get_output, kc__ort_status*, (kc__ort_kernel_context* ctx,     \
                                                     size_t index,                    \
                                                     const int64_t* dims,             \
                                                     size_t count,                    \
                                                     kc__ort_value** out))            \
  X(93, release_status, void, (kc__ort_status* status))                               \
  X(98, release_type_info, void, (kc__ort_type_info* info))                           \
  X(99, release_tensor_info, void, (kc__ort_tensor_info* info))                       \
  X(162, kernel_info_get_floats, kc__ort_status*, (const kc__ort_kernel_info* info,   \
                                                   const char* name, float* out,      \
                                                   size_t* size))                     \
  X(163, kernel_info_get_int64s, kc__ort_status*, (const kc__ort_kernel_info* info,   \
                                                   const char* name, int64_t* out,    \
                                                   size_t* size))                     \
  X(230, kernel_info_get_input_count, kc__ort_status*,                                 \
    (const kc__ort_kernel_info* info, size_t* out))                                   \
  X(234, kernel_info_get_input_type_info, kc__ort_status*,                             \
    (const kc__ort_kernel_info* info, size_t index, kc__ort_type_info** out))         \
  X(267, shape_ctx_get_input_count, kc__ort_status*, (const kc__ort_shape_ctx* ctx,   \
                                                      size_t* out))                   \
  X(268, shape_ctx_get_input_type_shape, kc__ort_status*,                             \
    (const kc__ort_shape_ctx* ctx, size_t index, kc__ort_tensor_info** out))          \
  X(269, shape_ctx_get_attribute, kc__ort_status*, (const kc__ort_shape_ctx* ctx,     \
                                                    const char* name,                 \
                                                    const kc__ort_op_attr** out))     \
  X(270, shape_ctx_set_output_type_shape, kc__ort_status*,                            \
    (const kc__ort_shape_ctx* ctx, size_t index, const kc__ort_tensor_info* info))    \
  X(271, set_symbolic_dimensions, kc__ort_status*, (kc__ort_tensor_info* info,        \
                                                    const char** names, size_t count)) \
  X(272, read_op_attr, kc__ort_status*, (const kc__ort_op_attr* attr, int type,       \
                                         void* data, size_t len, size_t* out))         \
  X(274, kernel_context_parallel_for, kc__ort_status*,                                 \
    (const kc__ort_kernel_context* ctx, void (*fn)(void* data, size_t i), size_t total, \
     size_t num_batch, void* data))

/* The table, read once: one typed pointer a function. */
typedef struct kc__ort_api {
#define KC__ORT_FIELD(index, name, ret, params) ret(*name) params;
  KC__ORT_FUNCTIONS(KC__ORT_FIELD)
#undef KC__ORT_FIELD
} kc__ort_api;

/* OrtCustomOp as of API 17 and later: the version, then function pointers
 * in this order (ONNX Runtime reads a member only when `version` says the
 * op has it). */
typedef struct kc__ort_custom_op {
  uint32_t version;
  void* (*create_kernel)(const void* op, const void* api, const kc__ort_kernel_info* info);
  const char* (*get_name)(const void* op);
  const char* (*get_execution_provider_type)(const void* op);
  int (*get_input_type)(const void* op, size_t index);
  size_t (*get_input_type_count)(const void* op);
  int (*get_output_type)(const void* op, size_t index);
  size_t (*get_output_type_count)(const void* op);
  void (*kernel_compute)(void* kernel, kc__ort_kernel_context* ctx);
  void (*kernel_destroy)(void* kernel);
  int (*get_input_characteristic)(const void* op, size_t index);  /* API 8 */
  int (*get_output_characteristic)(const void* op, size_t index); /* API 8 */
  int (*get_input_memory_type)(const void* op, size_t index);     /* API 13 */
  int (*get_variadic_input_min_arity)(const void* op);             /* API 14 */
  int (*get_variadic_input_homogeneity)(const void* op);
  int (*get_variadic_output_min_arity)(const void* op);
  int (*get_variadic_output_homogeneity)(const void* op);
  kc__ort_status* (*create_kernel_v2)(const void* op, const void* api,
                                      const kc__ort_kernel_info* info, void** kernel); /* 16 */
  kc__ort_status* (*kernel_compute_v2)(void* kernel, kc__ort_kernel_context* ctx);
  kc__ort_status* (*infer_output_shape)(const void* op, kc__ort_shape_ctx* ctx); /* 17 */
  int (*get_start_version)(const void* op);
  int (*get_end_version)(const void* op);
  size_t (*get_may_inplace)(int** input_index, int** output_index); /* API 18 */
  void (*release_may_inplace)(int* input_index, int* output_index);
  size_t (*get_alias_map)(int** input_index, int** output_index);
  void (*release_alias_map)(int* input_index, int* output_index);
} kc__ort_custom_op;

_Static_assert(sizeof(void*) != 8 || sizeof(kc__ort_custom_op) == 208,
               "OrtCustomOp: a uint32 and 25 function pointers");

#endif /* KCALL_ORT_ABI_H_ */
