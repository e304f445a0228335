/* libkcall_ort: the op's shape function on a node's inputs as ONNX
 * Runtime knows them when a session is created: output types and shapes
 * (InferOutputShapeFn), and the check of the node when its kernel is made. */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ort/ort_internal.h"

/* The node's inputs as ONNX Runtime knows them when the session is
 * created, as DLTensors without data for kcall's shape inference. A dim
 * ONNX does not know (a symbolic dim "batch", or none) becomes a kcall
 * symbol: names[k] is the name symbol k stands for (NULL: unnamed, its
 * own). `ones` is the same with every unknown dim 1. */
typedef struct kc__ort_node_inputs {
  size_t count;
  bool symbolic; /* some dim is unknown */
  int64_t dims[KC__ORT_MAX_ARGS][KC_TENSOR_MAX_NDIM];
  int64_t ones[KC__ORT_MAX_ARGS][KC_TENSOR_MAX_NDIM];
  DLTensor views[KC__ORT_MAX_ARGS], one_views[KC__ORT_MAX_ARGS];
  const DLTensor* ins[KC__ORT_MAX_ARGS];
  const DLTensor* one_ins[KC__ORT_MAX_ARGS];
  const char* names[KC__ORT_MAX_ARGS * KC_TENSOR_MAX_NDIM]; /* into text */
  int32_t num_names;
  char text[8192]; /* the names, copied: ONNX Runtime's may go before use */
  size_t text_used;
} kc__ort_node_inputs;

/* Adds input i, described by `info` (borrowed). */
static kc__ort_status* kc__ort_node_input(const kc__ort_op* o, const kc__ort_tensor_info* info,
                                          kc__ort_node_inputs* in) {
  const kc__ort_api* api = o->api;
  size_t i = in->count;
  int type = 0;
  size_t rank = 0;
  kc__ort_status* st = api->get_tensor_element_type(info, &type);
  if (!st) st = api->get_dimensions_count(info, &rank);
  if (!st && rank > KC_TENSOR_MAX_NDIM) {
    st = kc__ort_fail(api, "kcall: a tensor of more dimensions than kcall takes");
  }
  const char* dim_names[KC_TENSOR_MAX_NDIM] = {0};
  if (!st) st = api->get_dimensions(info, in->dims[i], rank);
  if (!st) st = api->get_symbolic_dimensions(info, dim_names, rank);
  if (st) return st;
  DLTensor* v = &in->views[i];
  memset(v, 0, sizeof *v);
  if (!kc__ort_dtype_of(type, &v->dtype)) {
    char message[320];
    snprintf(message, sizeof message,
             "kcall op '%s': input %zu has ONNX element type %d, which kcall has no dtype for",
             o->name, i, type);
    return api->create_status(KC__ORT_INVALID_ARGUMENT, message);
  }
  for (size_t d = 0; d < rank; ++d) {
    in->ones[i][d] = in->dims[i][d] >= 0 ? in->dims[i][d] : 1;
    if (in->dims[i][d] >= 0) continue;
    in->symbolic = true;
    int32_t k = in->num_names;
    const char* name = dim_names[d] && *dim_names[d] ? dim_names[d] : NULL;
    for (int32_t j = 0; name && j < in->num_names; ++j) {
      if (in->names[j] && strcmp(in->names[j], name) == 0) k = j;
    }
    if (k == in->num_names) {
      /* A name that does not fit is left unnamed: a symbol of its own. */
      size_t len = name ? strlen(name) + 1 : 0;
      const char* copy = NULL;
      if (len && len <= sizeof in->text - in->text_used) {
        copy = memcpy(in->text + in->text_used, name, len);
        in->text_used += len;
      }
      in->names[in->num_names++] = copy;
    }
    in->dims[i][d] = KC_DIM_SYMBOL(k);
  }
  v->device = (DLDevice){.device_type = kDLCPU, .device_id = 0};
  v->ndim = (int32_t)rank;
  v->shape = in->dims[i];
  in->one_views[i] = *v;
  in->one_views[i].shape = in->ones[i];
  in->ins[i] = v;
  in->one_ins[i] = &in->one_views[i];
  in->count = i + 1;
  return NULL;
}

/* The op's shape function on the node's inputs: *out_shapes (symbolic)
 * when it ran on the symbols, else infos[0 .. *num_out) from the dims
 * ONNX knows with unknown ones as 1 (*dims_known false: only dtypes and
 * ranks hold), for an op whose shape function is not symbolic. */
static kc_status* kc__ort_node_infer(const kc__ort_op* o, const kc__ort_node_inputs* in,
                                     const kc__ort_attrs* attrs, kc_symbolic_shapes** out_shapes,
                                     kc_op_output_info* infos, int32_t* num_out,
                                     bool* dims_known) {
  *out_shapes = NULL;
  *num_out = 0;
  *dims_known = true;
  kc_status* st = kc_op_infer_symbolic(o->op, in->ins, (int32_t)in->count, attrs->items,
                                       attrs->count, out_shapes);
  if (st && in->symbolic && kc_status_get_code(st) == KC_FAILED_PRECONDITION) {
    kc_status_destroy(st);
    *dims_known = false;
    return kc_op_infer(o->op, in->one_ins, (int32_t)in->count, attrs->items, attrs->count,
                       infos, KC__ORT_MAX_ARGS, num_out);
  }
  if (!st) {
    *num_out = kc_symbolic_shapes_get_output_count(*out_shapes);
    if (*num_out > KC__ORT_MAX_ARGS) *num_out = KC__ORT_MAX_ARGS;
  }
  return st;
}

/* Output types and shapes when the session is created (ONNX Runtime
 * ignores a failure here: kernel creation, which sees the same inputs,
 * is where a node kcall refuses fails the session). An op whose shape
 * function is symbolic gives the dim names of its inputs back; any
 * other op gives its outputs' types and ranks, dims unknown. */
kc__ort_status* kc__ort_infer_shape(const void* op, kc__ort_shape_ctx* ctx) {
  const kc__ort_op* o = KC__ORT_OP(op);
  const kc__ort_api* api = o->api;
  size_t n = 0;
  kc__ort_status* st = api->shape_ctx_get_input_count(ctx, &n);
  if (st) return st;
  if (n > KC__ORT_MAX_ARGS) return kc__ort_fail(api, "kcall: more than 64 inputs");
  kc__ort_node_inputs* in = calloc(1, sizeof *in);
  if (!in) return kc__ort_fail(api, "kcall: out of memory inferring shapes");
  for (size_t i = 0; i < n && !st; ++i) {
    kc__ort_tensor_info* info = NULL; /* the context's */
    st = api->shape_ctx_get_input_type_shape(ctx, i, &info);
    if (!st) st = kc__ort_node_input(o, info, in);
  }
  kc__ort_attrs attrs = {0};
  if (!st) st = kc__ort_attrs_read(o, NULL, ctx, &attrs);
  kc_symbolic_shapes* shapes = NULL;
  kc_op_output_info infos[KC__ORT_MAX_ARGS];
  int32_t num_out = 0;
  bool dims_known = true;
  if (!st) {
    kc_status* kst = kc__ort_node_infer(o, in, &attrs, &shapes, infos, &num_out, &dims_known);
    kc__ort_attrs_release(&attrs);
    /* A node kcall refuses is refused when its kernel is made, with the
     * message; ONNX Runtime would ignore (and not free) a status here. */
    kc_status_destroy(kst);
  }
  for (int32_t i = 0; i < num_out && !st; ++i) {
    DLDataType dtype = infos[i].dtype;
    int32_t rank = infos[i].rank;
    const int64_t* out_dims = infos[i].dims;
    if (shapes) {
      kc_status* kst = kc_symbolic_shapes_get_output(shapes, i, &dtype, &rank, &out_dims);
      if (kst) {
        st = kc__ort_error(api, o, kst);
        break;
      }
    }
    if (rank < 0) continue; /* unknown: ONNX Runtime's own guess stands */
    int64_t values[KC_TENSOR_MAX_NDIM];
    const char* value_names[KC_TENSOR_MAX_NDIM];
    for (int32_t d = 0; d < rank; ++d) {
      int64_t v = dims_known ? out_dims[d] : -1;
      value_names[d] = "";
      if (v < -1) {
        /* A symbol: the input dim it is keeps its name; an expression of
         * symbols is unknown. */
        int32_t kind = 0;
        int64_t a = 0, b = 0;
        kc_status* e = kc_symbolic_shapes_get_expr(shapes, v, &kind, &a, &b);
        v = -1;
        if (!e && kind == KC_DIM_EXPR_INPUT && a >= 0 && (size_t)a < in->count && b >= 0 &&
            b < in->views[a].ndim) {
          int64_t sym = in->dims[a][b];
          if (sym < -1 && -2 - sym < in->num_names && in->names[-2 - sym]) {
            value_names[d] = in->names[-2 - sym];
          }
        }
        kc_status_destroy(e);
      } else if (v < 0) {
        v = -1;
      }
      values[d] = v;
    }
    kc__ort_tensor_info* info = NULL;
    st = api->create_tensor_info(&info);
    if (!st) st = api->set_tensor_element_type(info, kc__ort_type_of(dtype));
    if (!st) st = api->set_dimensions(info, values, (size_t)rank);
    if (!st) st = api->set_symbolic_dimensions(info, value_names, (size_t)rank);
    if (!st) st = api->shape_ctx_set_output_type_shape(ctx, (size_t)i, info);
    api->release_tensor_info(info);
  }
  kc_symbolic_shapes_destroy(shapes);
  free(in);
  return st;
}

/* Kernel creation checks the node against the op (input count and types,
 * attributes, the shape function on what ONNX knows of the shapes), so
 * that a node kcall would refuse fails when the session is created,
 * naming the op. */
kc__ort_status* kc__ort_check_node(const kc__ort_op* o, const kc__ort_kernel_info* info,
                                          const kc__ort_attrs* attrs) {
  const kc__ort_api* api = o->api;
  size_t n = 0;
  kc__ort_status* st = api->kernel_info_get_input_count(info, &n);
  if (st) return st;
  if (n > KC__ORT_MAX_ARGS) return kc__ort_fail(api, "kcall: more than 64 inputs");
  kc__ort_node_inputs* in = calloc(1, sizeof *in);
  if (!in) return kc__ort_fail(api, "kcall: out of memory creating a kernel");
  for (size_t i = 0; i < n && !st; ++i) {
    kc__ort_type_info* type = NULL;
    const kc__ort_tensor_info* tensor = NULL; /* the type info's */
    st = api->kernel_info_get_input_type_info(info, i, &type);
    if (!st) st = api->cast_type_info_to_tensor_info(type, &tensor);
    if (!st && !tensor) {
      char message[320];
      snprintf(message, sizeof message, "kcall op '%s': input %zu is not a tensor", o->name, i);
      st = api->create_status(KC__ORT_INVALID_ARGUMENT, message);
    }
    if (!st) st = kc__ort_node_input(o, tensor, in);
    api->release_type_info(type);
  }
  if (!st) {
    kc_symbolic_shapes* shapes = NULL;
    kc_op_output_info infos[KC__ORT_MAX_ARGS];
    int32_t num_out = 0;
    bool dims_known = true;
    kc_status* kst = kc__ort_node_infer(o, in, attrs, &shapes, infos, &num_out, &dims_known);
    kc_symbolic_shapes_destroy(shapes);
    if (kst) st = kc__ort_error(api, o, kst);
  }
  free(in);
  return st;
}
