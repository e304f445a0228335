/* What the files of libkcall_ort share: an op as ONNX Runtime sees it,
 * the attribute values of a node, and the helpers more than one file
 * uses. kcall_ort.c is the library's entry point, kernels and
 * registration; ort_attrs.c reads specs and attributes; ort_shapes.c runs
 * shape functions when a session is created. */
#ifndef KCALL_ORT_INTERNAL_H_
#define KCALL_ORT_INTERNAL_H_

#include <stdbool.h>
#include <stdint.h>

#include "kcall/kcall.h"
#include "ort/ort_abi.h"

#define KC__ORT_EXPORT __attribute__((visibility("default")))
#define KC__ORT_MAX_ATTRS 32
#define KC__ORT_MAX_ARGS 64

/* ---- what a kcall op is, as ONNX Runtime sees it ------------------------ */

typedef enum kc__ort_attr_kind {
  KC__ORT_KIND_SKIP = 0, /* kinds ONNX attributes cannot give */
  KC__ORT_KIND_INT,
  KC__ORT_KIND_BOOL,
  KC__ORT_KIND_FLOAT,
  KC__ORT_KIND_STRING,
  KC__ORT_KIND_INTS,
  KC__ORT_KIND_FLOATS,
  KC__ORT_KIND_TYPE /* a dtype's name, when the node gives one ("f32") */
} kc__ort_attr_kind;

#define KC__ORT_MAX_CHOICES 16

typedef struct kc__ort_attr_decl {
  char name[64];
  kc__ort_attr_kind kind;
  /* A type attr whose allowed set names dtypes ("T: {f32, f64}"): their
   * ONNX types, one overload of the op each. 0: not such an attr. */
  int32_t num_choices;
  int choices[KC__ORT_MAX_CHOICES];
} kc__ort_attr_decl;

/* One custom op: ONNX Runtime's struct first, so the pointer it hands
 * back is this record's. */
typedef struct kc__ort_op {
  kc__ort_custom_op ort;
  const kc__ort_api* api;
  const kc_op* op; /* a reference */
  char name[128];
  int32_t num_inputs, num_outputs;
  bool variadic_input;  /* the last input is "N * T" or a list */
  bool homogeneous;     /* "N * T": one type for all of them */
  int input_types[KC__ORT_MAX_ARGS];
  int output_types[KC__ORT_MAX_ARGS];
  /* The type attr each input and output is typed by (an index into
   * attrs), or -1 for a fixed dtype. */
  int8_t input_attr[KC__ORT_MAX_ARGS];
  int8_t output_attr[KC__ORT_MAX_ARGS];
  int32_t num_attrs;
  kc__ort_attr_decl attrs[KC__ORT_MAX_ATTRS];
} kc__ort_op;

/* The attribute values of one node, in kc_op_attr form. */
typedef struct kc__ort_attrs {
  int32_t count;
  kc_op_attr items[KC__ORT_MAX_ATTRS];
  void* owned[KC__ORT_MAX_ATTRS]; /* strings and arrays read for them */
} kc__ort_attrs;

/* A kernel: the op and the node's attributes. */
typedef struct kc__ort_kernel {
  const kc__ort_op* op;
  kc__ort_attrs attrs;
} kc__ort_kernel;

#define KC__ORT_OP(p) ((const kc__ort_op*)(p))

/* kcall_ort.c */
/* The ONNX element type of a dtype (UNDEFINED: none), and the dtype of
 * an ONNX element type (false: kcall has none). */
int kc__ort_type_of(DLDataType t);
bool kc__ort_dtype_of(int onnx, DLDataType* out);
/* An OrtStatus carrying kcall's message after "kcall op 'NAME': " (takes
 * `st`), or a plain failure. */
kc__ort_status* kc__ort_error(const kc__ort_api* api, const kc__ort_op* op, kc_status* st);
kc__ort_status* kc__ort_fail(const kc__ort_api* api, const char* what);

/* ort_attrs.c */
int kc__ort_arg_type(const char* spec, bool* list, bool* homogeneous, const char** type_word);
int8_t kc__ort_attr_index(const kc__ort_op* o, const char* word);
void kc__ort_attr_choices(const char* spec, kc__ort_attr_decl* d);
bool kc__ort_attr_kind_of(const char* spec, char* name, size_t cap, kc__ort_attr_kind* kind);
kc__ort_status* kc__ort_attrs_read(const kc__ort_op* op, const kc__ort_kernel_info* info,
                                   const kc__ort_shape_ctx* shape_ctx, kc__ort_attrs* out);
void kc__ort_attrs_release(kc__ort_attrs* a);

/* ort_shapes.c */
kc__ort_status* kc__ort_infer_shape(const void* op, kc__ort_shape_ctx* ctx);
kc__ort_status* kc__ort_check_node(const kc__ort_op* o, const kc__ort_kernel_info* info,
                                   const kc__ort_attrs* attrs);

#endif /* KCALL_ORT_INTERNAL_H_ */
