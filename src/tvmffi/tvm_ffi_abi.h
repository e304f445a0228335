/* tvm-ffi's C ABI as kcall uses it: the layouts and type indices of
 * apache-tvm-ffi's tvm/ffi/c_api.h (ABI 0.1), declared here so that libkcall
 * builds without tvm-ffi. Only what kcall reads or writes. Never installed. */
#ifndef KCALL_TVMFFI_TVM_FFI_ABI_H_
#define KCALL_TVMFFI_TVM_FFI_ABI_H_

#include <stddef.h>
#include <stdint.h>

#include "kcall/abi.h"

enum {
  KC__TVM_NONE = 0,
  KC__TVM_INT = 1,
  KC__TVM_BOOL = 2,
  KC__TVM_FLOAT = 3,
  KC__TVM_OPAQUE_PTR = 4,
  KC__TVM_DTYPE = 5,
  KC__TVM_DEVICE = 6,
  KC__TVM_DLTENSOR_PTR = 7,
  KC__TVM_RAW_STR = 8,
  KC__TVM_BYTE_ARRAY_PTR = 9,
  KC__TVM_OBJECT_RVALUE_REF = 10,
  KC__TVM_SMALL_STR = 11,
  KC__TVM_SMALL_BYTES = 12,
  KC__TVM_OBJECT_BEGIN = 64,
  KC__TVM_STR = 65,
  KC__TVM_BYTES = 66,
  KC__TVM_ERROR = 67,
  KC__TVM_FUNCTION = 68,
  KC__TVM_SHAPE = 69,
  KC__TVM_TENSOR = 70,
  KC__TVM_ARRAY = 71
};

/* The header of every tvm-ffi object. */
typedef struct kc__tvm_object {
  uint64_t combined_ref_count;
  int32_t type_index;
  uint32_t padding;
  void (*deleter)(void* self, int flags);
} kc__tvm_object;

/* A tagged value: the same 16 bytes as kc_any, with tvm-ffi's indices. */
typedef struct kc__tvm_any {
  int32_t type_index;
  uint32_t small_len; /* small strings and bytes; zero otherwise */
  union {
    int64_t v_int64;
    double v_float64;
    void* v_ptr;
    const char* v_c_str;
    kc__tvm_object* v_obj;
    DLDataType v_dtype;
    DLDevice v_device;
    char v_bytes[8];
  } u;
} kc__tvm_any;

typedef struct kc__tvm_byte_array {
  const char* data;
  size_t size;
} kc__tvm_byte_array;

/* What follows the header of a Shape object. */
typedef struct kc__tvm_shape_cell {
  const int64_t* data;
  size_t size;
} kc__tvm_shape_cell;

/* What follows the header of an Array object. */
typedef struct kc__tvm_seq_cell {
  void* data; /* kc__tvm_any[size] */
  int64_t size;
  int64_t capacity;
  void (*data_deleter)(void*);
} kc__tvm_seq_cell;

typedef struct kc__tvm_error_cell {
  kc__tvm_byte_array kind;
  kc__tvm_byte_array message;
  kc__tvm_byte_array backtrace;
} kc__tvm_error_cell;

typedef int (*kc__tvm_safe_call)(void* self, const kc__tvm_any* args,
                                 int32_t num_args, kc__tvm_any* result);

/* What follows the header of a Function object. */
typedef struct kc__tvm_function_cell {
  kc__tvm_safe_call safe_call;
  void* cpp_call;
} kc__tvm_function_cell;

typedef struct kc__tvm_version {
  uint32_t major, minor, patch;
} kc__tvm_version;

typedef struct kc__tvm_type_info {
  int32_t type_index;
  int32_t type_depth;
  kc__tvm_byte_array type_key;
} kc__tvm_type_info;

/* The cell of an object: what follows its header. */
#define KC__TVM_CELL(obj) ((void*)((char*)(obj) + sizeof(kc__tvm_object)))

#endif /* KCALL_TVMFFI_TVM_FFI_ABI_H_ */
