/* libkcall_tf: kcall ops as TensorFlow ops (docs/tensorflow.md).
 *
 * TensorFlow loads this library (tf.load_op_library, or TF_LoadLibrary
 * from C) into a process where kcall has its ops registered (plugins
 * loaded); as it loads, the library defines each of them as a TensorFlow
 * op, through TensorFlow's C API (tensorflow/c/ops.h, kernels.h), and
 * registers a CPU kernel for it:
 *   - the name: "Kcall" and kcall's name, dotted parts capitalised and
 *     joined (kc__tf_op_name), so none shadows one of TensorFlow's;
 *   - inputs, outputs and attrs from the op's specs in TensorFlow's
 *     spelling (tf_specs.c), so TensorFlow types and checks a node
 *     itself; stateful and commutative flags as the op's;
 *   - a shape function that runs kcall's on what the graph knows: the
 *     inputs' shapes, unknown dims as symbols (an output dim that is an
 *     input's dim stays that dim, known or not), and type attrs; an op
 *     whose shape function could read another attr (the shape context
 *     gives no other) has outputs of unknown shape in graphs;
 *   - a kernel that lends TensorFlow's tensors to kcall as DLTensors (no
 *     copies), allocates the outputs the shape function gives, or hands
 *     over those kcall's kernel allocates, and reports kcall's errors
 *     as TensorFlow's, naming the op.
 * The environment variable KCALL_TF_OPS, when set, names the ops to
 * register (comma-separated kcall names); kcall.tf uses it to add ops
 * registered after a first load. What was registered and what was left
 * out, and why, are kcall_tf_registered() and kcall_tf_skipped().
 * TensorFlow's C API offers a kernel no thread pool: kcall's own runs
 * the loops. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tf/tf_internal.h"

/* TensorFlow's callbacks carry no data, so each op has a shape function
 * and a kernel factory of its own: KC__TF_MAX_OPS of each, made below. */
#define KC__TF_MAX_OPS 256

static kc__tf_op kc__tf_ops[KC__TF_MAX_OPS];
static int32_t kc__tf_num_ops;
static char* kc__tf_registered_text;
static char* kc__tf_skipped_text;

/* One "NAME\tTF_NAME\tSHAPES" line per op registered (empty: none), SHAPES
 * "static" where the op's shape function gives graph shapes here, "attrs"
 * where it could read an attr TensorFlow's shape context does not give. */
KC__TF_EXPORT const char* kcall_tf_registered(void);
const char* kcall_tf_registered(void) {
  return kc__tf_registered_text ? kc__tf_registered_text : "";
}

/* One "NAME: why" line per op left out (empty: none). */
KC__TF_EXPORT const char* kcall_tf_skipped(void);
const char* kcall_tf_skipped(void) { return kc__tf_skipped_text ? kc__tf_skipped_text : ""; }

/* ---- statuses ----------------------------------------------------------------- */

static bool kc__tf_ok(const TF_Status* status) { return (int)TF_GetCode(status) == KC__TF_OK; }

/* Sets `out` from kcall's `st` (taken), the message naming the op. */
static void kc__tf_error(TF_Status* out, const kc__tf_op* o, kc_status* st) {
  char message[2048];
  int used = snprintf(message, sizeof message, "kcall op '%s' (TensorFlow op %s): ", o->name,
                      o->tf_name);
  for (size_t i = 0; i < kc_status_get_context_count(st) && used < (int)sizeof message; ++i) {
    used += snprintf(message + used, sizeof message - (size_t)used, "%s: ",
                     kc_status_get_context(st, i));
  }
  if (used < (int)sizeof message) {
    snprintf(message + used, sizeof message - (size_t)used, "%s", kc_status_get_message(st));
  }
  TF_SetStatus(out, (TF_Code)kc_status_get_code(st), message);
  kc_status_destroy(st);
}

/* ---- shape functions ---------------------------------------------------------- */

/* A rank-1 shape [?]: an unknown shape given rank 1. */
static void kc__tf_unknown_dim(TF_ShapeInferenceContext* ctx, TF_ShapeHandle* out,
                               TF_Status* status) {
  TF_ShapeHandle* unknown = TF_NewShapeHandle();
  TF_ShapeInferenceContextWithRank(ctx, unknown, 1, out, status);
  TF_DeleteShapeHandle(unknown);
}

/* The output shape of `rank` dims: dims[d] >= 0 known, an input's dim
 * where exprs says so, else unknown. */
static void kc__tf_make_shape(TF_ShapeInferenceContext* ctx, TF_ShapeHandle** in_handles,
                              const kc_symbolic_shapes* shapes, const int64_t* dims,
                              int32_t rank, bool dims_known, TF_ShapeHandle** out,
                              TF_Status* status) {
  TF_ShapeHandle* shape = TF_ShapeInferenceContextScalar(ctx);
  for (int32_t d = 0; d < rank && kc__tf_ok(status); ++d) {
    int64_t v = dims_known ? dims[d] : -1;
    TF_ShapeHandle* piece = NULL;
    if (v >= 0) {
      piece = TF_ShapeInferenceContextVectorFromSize(ctx, (size_t)v);
    } else {
      piece = TF_NewShapeHandle();
      int32_t kind = 0;
      int64_t a = -1, b = -1;
      kc_status* e = v < -1 && shapes ? kc_symbolic_shapes_get_expr(shapes, v, &kind, &a, &b)
                                      : kc_status_create(KC_NOT_FOUND, "no symbol");
      if (!e && kind == KC_DIM_EXPR_INPUT && a >= 0 && b >= 0 &&
          a < (int64_t)TF_ShapeInferenceContextNumInputs(ctx)) {
        TF_ShapeInferenceContextSubshape(ctx, in_handles[a], b, b + 1, piece, status);
      } else {
        kc__tf_unknown_dim(ctx, piece, status);
      }
      kc_status_destroy(e);
    }
    TF_ShapeHandle* joined = TF_NewShapeHandle();
    if (kc__tf_ok(status)) {
      TF_ShapeInferenceContextConcatenateShapes(ctx, shape, piece, joined, status);
    }
    TF_DeleteShapeHandle(piece);
    TF_DeleteShapeHandle(shape);
    shape = joined;
  }
  *out = shape;
}

/* kcall's shape function on the graph's view of a node. */
static void kc__tf_shape(int32_t index, TF_ShapeInferenceContext* ctx, TF_Status* status) {
  const kc__tf_op* o = &kc__tf_ops[index];
  TF_SetStatus(status, (TF_Code)KC__TF_OK, "");
  int64_t n = TF_ShapeInferenceContextNumInputs(ctx);
  if (!o->static_shapes || n > KC__TF_MAX_ARGS) {
    TF_ShapeInferenceContextSetUnknownShape(ctx, status);
    return;
  }
  TF_ShapeHandle* handles[KC__TF_MAX_ARGS] = {0};
  int64_t dims[KC__TF_MAX_ARGS][KC_TENSOR_MAX_NDIM], ones[KC__TF_MAX_ARGS][KC_TENSOR_MAX_NDIM];
  DLTensor views[KC__TF_MAX_ARGS], one_views[KC__TF_MAX_ARGS];
  const DLTensor *ins[KC__TF_MAX_ARGS], *one_ins[KC__TF_MAX_ARGS];
  kc_op_attr attrs[KC__TF_MAX_ATTRS];
  int32_t num_attrs = 0, symbols = 0;
  bool unknown = false;
  /* The flat inputs by arg: the one list arg takes what the others leave. */
  int64_t list_len = n - (o->num_args - 1);
  int64_t k = 0;
  for (int32_t arg = 0; arg < o->num_args && kc__tf_ok(status); ++arg) {
    int64_t count = o->arg_list[arg] ? list_len : 1;
    DLDataType dtype = o->arg_dtype[arg];
    if (o->arg_attr[arg] >= 0) {
      TF_DataType t = 0;
      TF_ShapeInferenceContext_GetAttrType(ctx, o->attrs[o->arg_attr[arg]].name, &t, status);
      if (!kc__tf_ok(status) || !kc__tf_dtype_of((int)t, &dtype)) unknown = true;
    }
    for (int64_t j = 0; j < count && k < n && kc__tf_ok(status); ++j, ++k) {
      handles[k] = TF_NewShapeHandle();
      TF_ShapeInferenceContextGetInput(ctx, (int)k, handles[k], status);
      if (!kc__tf_ok(status)) break;
      if (!TF_ShapeInferenceContextRankKnown(ctx, handles[k])) {
        unknown = true;
        continue;
      }
      int64_t rank = TF_ShapeInferenceContextRank(ctx, handles[k]);
      if (rank > KC_TENSOR_MAX_NDIM) {
        unknown = true;
        continue;
      }
      for (int64_t d = 0; d < rank; ++d) {
        TF_DimensionHandle* dim = TF_NewDimensionHandle();
        TF_ShapeInferenceContextDim(ctx, handles[k], d, dim);
        bool known = TF_DimensionHandleValueKnown(dim);
        dims[k][d] = known ? TF_DimensionHandleValue(dim) : KC_DIM_SYMBOL(symbols++);
        ones[k][d] = known ? dims[k][d] : 1;
        TF_DeleteDimensionHandle(dim);
      }
      views[k] = (DLTensor){.device = {kDLCPU, 0}, .ndim = (int32_t)rank, .dtype = dtype,
                            .shape = dims[k]};
      one_views[k] = views[k];
      one_views[k].shape = ones[k];
      ins[k] = &views[k];
      one_ins[k] = &one_views[k];
    }
  }
  for (int32_t i = 0; i < o->num_attrs && kc__tf_ok(status); ++i) {
    if (o->attrs[i].inferred) continue; /* kcall infers it from the inputs */
    TF_DataType t = 0;
    DLDataType dtype;
    TF_ShapeInferenceContext_GetAttrType(ctx, o->attrs[i].name, &t, status);
    if (!kc__tf_ok(status) || !kc__tf_dtype_of((int)t, &dtype)) {
      unknown = true;
      break;
    }
    attrs[num_attrs++] = (kc_op_attr){.name = kc_sv(o->attrs[i].name), .value = kc_any_dtype(dtype)};
  }
  if (!kc__tf_ok(status) || unknown || k != n) {
    /* Not enough is known: every output's shape is (TensorFlow's status
     * stays as it was, an error of the context's own). */
    if (kc__tf_ok(status)) TF_ShapeInferenceContextSetUnknownShape(ctx, status);
    for (int64_t i = 0; i < n; ++i) {
      if (handles[i]) TF_DeleteShapeHandle(handles[i]);
    }
    return;
  }
  kc_symbolic_shapes* shapes = NULL;
  kc_op_output_info infos[KC__TF_MAX_ARGS];
  int32_t num_out = 0;
  bool dims_known = true;
  kc_status* st =
      kc_op_infer_symbolic(o->op, ins, (int32_t)n, attrs, num_attrs, &shapes);
  if (st && symbols > 0 && kc_status_get_code(st) == KC_FAILED_PRECONDITION) {
    /* A shape function that needs every dim: ranks (and dtypes) hold. */
    kc_status_destroy(st);
    dims_known = false;
    st = kc_op_infer(o->op, one_ins, (int32_t)n, attrs, num_attrs, infos, KC__TF_MAX_ARGS,
                     &num_out);
    if (st) {
      /* Refused with the unknown dims as 1, which they need not be: the
       * kernel checks the real ones. */
      kc_status_destroy(st);
      st = NULL;
      num_out = 0;
    }
  } else if (!st) {
    num_out = kc_symbolic_shapes_get_output_count(shapes);
  }
  if (st) {
    kc__tf_error(status, o, st);
  } else {
    TF_ShapeInferenceContextSetUnknownShape(ctx, status);
  }
  for (int32_t i = 0; i < num_out && i < KC__TF_MAX_ARGS && kc__tf_ok(status);
       ++i) {
    DLDataType dtype = infos[i].dtype;
    int32_t rank = dims_known ? -1 : infos[i].rank;
    const int64_t* out_dims = infos[i].dims;
    if (shapes) {
      st = kc_symbolic_shapes_get_output(shapes, i, &dtype, &rank, &out_dims);
      if (st) {
        kc__tf_error(status, o, st);
        break;
      }
    }
    if (rank < 0) continue; /* unknown, as set above */
    TF_ShapeHandle* shape = NULL;
    kc__tf_make_shape(ctx, handles, shapes, out_dims, rank, dims_known, &shape, status);
    if (kc__tf_ok(status)) TF_ShapeInferenceContextSetOutput(ctx, i, shape, status);
    TF_DeleteShapeHandle(shape);
  }
  kc_symbolic_shapes_destroy(shapes);
  for (int64_t i = 0; i < n; ++i) TF_DeleteShapeHandle(handles[i]);
}

/* ---- kernels ------------------------------------------------------------------ */

typedef struct kc__tf_kernel {
  const kc__tf_op* op;
  int32_t num_attrs;
  kc_op_attr attrs[KC__TF_MAX_ATTRS];
  char* text[KC__TF_MAX_ATTRS]; /* strings read for them */
} kc__tf_kernel;

static void kc__tf_kernel_delete(void* kernel) {
  kc__tf_kernel* k = kernel;
  if (!k) return;
  for (int32_t i = 0; i < k->num_attrs; ++i) {
    kc_any_release(&k->attrs[i].value);
    free(k->text[i]);
  }
  free(k);
}

/* A list attr's values as a kc_array of `kind`. */
static kc_status* kc__tf_read_list(TF_OpKernelConstruction* ctx, const kc__tf_attr* a,
                                   int32_t size, kc_any* out, TF_Status* status) {
  size_t n = size > 0 ? (size_t)size : 0;
  void* raw = calloc(n ? n : 1, 8);
  kc_any* items = calloc(n ? n : 1, sizeof *items);
  kc_status* st = NULL;
  if (!raw || !items) {
    st = kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory reading attr '%s'", a->name);
  } else {
    switch (a->kind) {
      case KC__TF_KIND_INTS:
        TF_OpKernelConstruction_GetAttrInt64List(ctx, a->name, raw, size, status);
        for (size_t i = 0; i < n; ++i) items[i] = kc_any_int(((int64_t*)raw)[i]);
        break;
      case KC__TF_KIND_FLOATS:
        TF_OpKernelConstruction_GetAttrFloatList(ctx, a->name, raw, size, status);
        for (size_t i = 0; i < n; ++i) items[i] = kc_any_float(((float*)raw)[i]);
        break;
      case KC__TF_KIND_BOOLS:
        TF_OpKernelConstruction_GetAttrBoolList(ctx, a->name, raw, size, status);
        for (size_t i = 0; i < n; ++i) items[i] = kc_any_bool(((TF_Bool*)raw)[i] != 0);
        break;
      default: {
        TF_OpKernelConstruction_GetAttrTypeList(ctx, a->name, raw, size, status);
        for (size_t i = 0; i < n && !st; ++i) {
          DLDataType t = {0, 0, 0};
          if (!kc__tf_dtype_of((int)((TF_DataType*)raw)[i], &t)) {
            st = kc_status_create(KC_INVALID_ARGUMENT,
                                  "attr '%s': item %zu is a TensorFlow dtype kcall has none for",
                                  a->name, i);
          }
          items[i] = kc_any_dtype(t);
        }
        break;
      }
    }
    kc_array* array = NULL;
    if (!st && kc__tf_ok(status)) st = kc_array_create(NULL, items, n, &array);
    if (array) *out = kc_any_object(KC_OBJECT(array));
  }
  free(raw);
  free(items);
  return st;
}

/* The node's value of attr `a` (TensorFlow gives every attr a value: set,
 * defaulted or inferred). */
static kc_status* kc__tf_read_attr(TF_OpKernelConstruction* ctx, const kc__tf_attr* a,
                                   kc_any* out, char** text, TF_Status* status) {
  switch (a->kind) {
    case KC__TF_KIND_INT: {
      int64_t v = 0;
      TF_OpKernelConstruction_GetAttrInt64(ctx, a->name, &v, status);
      *out = kc_any_int(v);
      return NULL;
    }
    case KC__TF_KIND_FLOAT: {
      float v = 0;
      TF_OpKernelConstruction_GetAttrFloat(ctx, a->name, &v, status);
      *out = kc_any_float(v);
      return NULL;
    }
    case KC__TF_KIND_BOOL: {
      TF_Bool v = 0;
      TF_OpKernelConstruction_GetAttrBool(ctx, a->name, &v, status);
      *out = kc_any_bool(v != 0);
      return NULL;
    }
    case KC__TF_KIND_TYPE: {
      TF_DataType v = 0;
      DLDataType t;
      TF_OpKernelConstruction_GetAttrType(ctx, a->name, &v, status);
      if (!kc__tf_ok(status)) return NULL;
      if (!kc__tf_dtype_of((int)v, &t)) {
        return kc_status_create(KC_INVALID_ARGUMENT,
                                "attr '%s': TensorFlow dtype %d, which kcall has no dtype for",
                                a->name, (int)v);
      }
      *out = kc_any_dtype(t);
      return NULL;
    }
    default: break;
  }
  int32_t list_size = 0, total = 0;
  TF_OpKernelConstruction_GetAttrSize(ctx, a->name, &list_size, &total, status);
  if (!kc__tf_ok(status)) return NULL;
  if (a->kind != KC__TF_KIND_STRING) return kc__tf_read_list(ctx, a, list_size, out, status);
  *text = calloc((size_t)(total > 0 ? total : 0) + 1, 1);
  if (!*text) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory reading attr '%s'", a->name);
  TF_OpKernelConstruction_GetAttrString(ctx, a->name, *text, (size_t)total, status);
  *out = kc_any_cstr(*text);
  return NULL;
}

static void* kc__tf_kernel_create(int32_t index, TF_OpKernelConstruction* ctx) {
  const kc__tf_op* o = &kc__tf_ops[index];
  TF_Status* status = TF_NewStatus();
  kc__tf_kernel* k = calloc(1, sizeof *k);
  kc_status* st = k ? NULL
                    : kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory making a kernel");
  if (k) k->op = o;
  for (int32_t i = 0; k && i < o->num_attrs && !st; ++i) {
    if (o->attrs[i].inferred) continue; /* kcall infers it from the inputs */
    kc_any value = {0};
    char* text = NULL;
    st = kc__tf_read_attr(ctx, &o->attrs[i], &value, &text, status);
    if (st || !kc__tf_ok(status)) {
      kc_any_release(&value);
      free(text);
      break;
    }
    k->attrs[k->num_attrs] = (kc_op_attr){.name = kc_sv(o->attrs[i].name), .value = value};
    k->text[k->num_attrs++] = text;
  }
  if (st) kc__tf_error(status, o, st);
  if (!kc__tf_ok(status)) {
    TF_OpKernelConstruction_Failure(ctx, status);
    kc__tf_kernel_delete(k);
    k = NULL;
  }
  TF_DeleteStatus(status);
  return k;
}

/* TensorFlow's tensor as a DLTensor (borrowed; dims into `dims`). */
static kc_status* kc__tf_view(const TF_Tensor* t, int64_t* dims, DLTensor* out) {
  memset(out, 0, sizeof *out);
  int rank = TF_NumDims(t);
  if (rank > KC_TENSOR_MAX_NDIM) {
    return kc_status_create(KC_INVALID_ARGUMENT, "a tensor of %d dims, more than kcall takes",
                            rank);
  }
  if (!kc__tf_dtype_of((int)TF_TensorType(t), &out->dtype)) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "a tensor of TensorFlow dtype %d, which kcall has no dtype for",
                            (int)TF_TensorType(t));
  }
  for (int d = 0; d < rank; ++d) dims[d] = TF_Dim(t, d);
  out->data = TF_TensorData(t);
  out->device = (DLDevice){.device_type = kDLCPU, .device_id = 0};
  out->ndim = rank;
  out->shape = dims;
  return NULL;
}

static void kc__tf_free_output(void* data, size_t len, void* arg) {
  (void)data;
  (void)len;
  kc_object_release(KC_OBJECT(arg));
}

/* Outputs kcall's kernel allocates (the shape function leaves a shape
 * unknown): handed to TensorFlow, which frees them through kcall. */
static kc_status* kc__tf_call_allocating(const kc__tf_kernel* k, TF_OpKernelContext* ctx,
                                         const DLTensor* const* ins, int32_t n,
                                         TF_Status* status) {
  kc_tensor* made[KC__TF_MAX_ARGS] = {0};
  int32_t num_out = 0;
  kc_status* st = kc_op_call(k->op->op, ins, n, k->attrs, k->num_attrs, NULL, made,
                             KC__TF_MAX_ARGS, &num_out);
  for (int32_t i = 0; i < num_out; ++i) {
    if (st || !kc__tf_ok(status)) {
      kc_object_release(KC_OBJECT(made[i]));
      continue;
    }
    const DLTensor* t = kc_tensor_get_dltensor(made[i]);
    size_t bytes = (size_t)(t->dtype.bits / 8) * t->dtype.lanes;
    for (int32_t d = 0; d < t->ndim; ++d) bytes *= (size_t)t->shape[d];
    TF_Tensor* out = TF_NewTensor((TF_DataType)kc__tf_type_of(t->dtype), t->shape, t->ndim,
                                  (char*)t->data + t->byte_offset, bytes, kc__tf_free_output,
                                  made[i]);
    if (!out) {
      kc_object_release(KC_OBJECT(made[i]));
      st = kc_status_create(KC_RESOURCE_EXHAUSTED, "output %d: TensorFlow made no tensor", i);
      continue;
    }
    TF_SetOutput(ctx, i, out, status);
    TF_DeleteTensor(out);
  }
  return st;
}

static void kc__tf_compute(void* kernel, TF_OpKernelContext* ctx) {
  const kc__tf_kernel* k = kernel;
  const kc__tf_op* o = k->op;
  TF_Status* status = TF_NewStatus();
  int n = TF_NumInputs(ctx);
  TF_Tensor* tensors[2 * KC__TF_MAX_ARGS] = {0};
  int held = 0;
  int64_t in_dims[KC__TF_MAX_ARGS][KC_TENSOR_MAX_NDIM];
  DLTensor in_views[KC__TF_MAX_ARGS];
  const DLTensor* ins[KC__TF_MAX_ARGS];
  kc_status* st = n > KC__TF_MAX_ARGS
                      ? kc_status_create(KC_INVALID_ARGUMENT, "%d inputs, more than %d", n,
                                         KC__TF_MAX_ARGS)
                      : NULL;
  for (int i = 0; i < n && !st && kc__tf_ok(status); ++i) {
    TF_GetInput(ctx, i, &tensors[held], status);
    if (!kc__tf_ok(status)) break;
    st = kc__tf_view(tensors[held++], in_dims[i], &in_views[i]);
    st = kc_status_add_context(st, "input %d", i);
    ins[i] = &in_views[i];
  }
  kc_op_output_info infos[KC__TF_MAX_ARGS];
  int32_t num_out = 0;
  bool allocating = false;
  if (!st && kc__tf_ok(status)) {
    st = kc_op_infer(o->op, ins, n, k->attrs, k->num_attrs, infos, KC__TF_MAX_ARGS, &num_out);
  }
  if (!st && kc__tf_ok(status) && num_out != TF_NumOutputs(ctx)) {
    st = kc_status_create(KC_INTERNAL, "%d outputs, where TensorFlow's op has %d", num_out,
                          TF_NumOutputs(ctx));
  }
  for (int32_t i = 0; i < num_out && !st; ++i) {
    allocating = allocating || infos[i].rank < 0;
    if (kc__tf_type_of(infos[i].dtype) != (int)TF_ExpectedOutputDataType(ctx, i)) {
      char got[32];
      kc_dtype_format(infos[i].dtype, got, sizeof got);
      st = kc_status_create(KC_INVALID_ARGUMENT,
                            "output %d is %s, where TensorFlow's node expects TensorFlow dtype %d",
                            i, got, (int)TF_ExpectedOutputDataType(ctx, i));
    }
  }
  if (!st && kc__tf_ok(status) && allocating) {
    st = kc__tf_call_allocating(k, ctx, ins, n, status);
  } else if (!st && kc__tf_ok(status)) {
    int64_t out_dims[KC__TF_MAX_ARGS][KC_TENSOR_MAX_NDIM];
    DLTensor out_views[KC__TF_MAX_ARGS];
    DLTensor* outs[KC__TF_MAX_ARGS];
    for (int32_t i = 0; i < num_out && !st; ++i) {
      size_t bytes = (size_t)(infos[i].dtype.bits / 8) * infos[i].dtype.lanes;
      for (int32_t d = 0; d < infos[i].rank; ++d) bytes *= (size_t)infos[i].dims[d];
      tensors[held] = TF_AllocateOutput(ctx, i, (TF_DataType)kc__tf_type_of(infos[i].dtype),
                                        infos[i].dims, infos[i].rank, bytes, status);
      if (!kc__tf_ok(status)) break;
      st = kc__tf_view(tensors[held++], out_dims[i], &out_views[i]);
      outs[i] = &out_views[i];
    }
    if (!st && kc__tf_ok(status)) {
      st = kc_op_call_into(o->op, ins, n, k->attrs, k->num_attrs, NULL, outs, num_out);
    }
  }
  if (st) kc__tf_error(status, o, st);
  if (!kc__tf_ok(status)) TF_OpKernelContext_Failure(ctx, status);
  for (int i = 0; i < held; ++i) TF_DeleteTensor(tensors[i]);
  TF_DeleteStatus(status);
}

/* ---- one shape function and one kernel factory per op -------------------------- */

/* Slot i (an octal literal, 0000 .. 0377: 0 .. 255) serves op i. */
#define KC__TF_8(M, i) M(i##0) M(i##1) M(i##2) M(i##3) M(i##4) M(i##5) M(i##6) M(i##7)
#define KC__TF_64(M, i)                                                                   \
  KC__TF_8(M, i##0) KC__TF_8(M, i##1) KC__TF_8(M, i##2) KC__TF_8(M, i##3) KC__TF_8(M, i##4) \
  KC__TF_8(M, i##5) KC__TF_8(M, i##6) KC__TF_8(M, i##7)
#define KC__TF_256(M) KC__TF_64(M, 00) KC__TF_64(M, 01) KC__TF_64(M, 02) KC__TF_64(M, 03)

#define KC__TF_SLOT(i)                                                                  \
  static void kc__tf_shape_##i(TF_ShapeInferenceContext* ctx, TF_Status* status) {      \
    kc__tf_shape(i, ctx, status);                                                       \
  }                                                                                     \
  static void* kc__tf_create_##i(TF_OpKernelConstruction* ctx) {                        \
    return kc__tf_kernel_create(i, ctx);                                                \
  }
#define KC__TF_SHAPE_FN(i) kc__tf_shape_##i,
#define KC__TF_CREATE_FN(i) kc__tf_create_##i,
KC__TF_256(KC__TF_SLOT)

static void (*const kc__tf_shape_fns[KC__TF_MAX_OPS])(TF_ShapeInferenceContext*, TF_Status*) = {
    KC__TF_256(KC__TF_SHAPE_FN)};
static void* (*const kc__tf_create_fns[KC__TF_MAX_OPS])(TF_OpKernelConstruction*) = {
    KC__TF_256(KC__TF_CREATE_FN)};

/* ---- registration ------------------------------------------------------------- */

/* Appends a line to *text (grown); false when out of memory. */
static bool kc__tf_say(char** text, const char* a, const char* sep, const char* b) {
  size_t used = *text ? strlen(*text) : 0;
  size_t need = used + strlen(a) + strlen(sep) + strlen(b) + 2;
  char* grown = realloc(*text, need);
  if (!grown) return false;
  snprintf(grown + used, need - used, "%s%s%s\n", a, sep, b);
  *text = grown;
  return true;
}

/* Whether KCALL_TF_OPS (when set) names `name`. */
static bool kc__tf_wanted(const char* list, const char* name) {
  if (!list) return true;
  size_t len = strlen(name);
  for (const char* p = list; *p;) {
    size_t n = strcspn(p, ",");
    if (n == len && strncmp(p, name, n) == 0) return true;
    p += n;
    if (*p == ',') ++p;
  }
  return false;
}

/* Defines op `o` (slot kc__tf_num_ops) in TensorFlow, with its kernel. */
static bool kc__tf_define(kc__tf_op* o, const kc__tf_specs* specs, char* why, size_t cap) {
  int32_t slot = kc__tf_num_ops;
  TF_Status* status = TF_NewStatus();
  TF_OpDefinitionBuilder* b = TF_NewOpDefinitionBuilder(o->tf_name);
  for (int32_t i = 0; i < specs->num_attrs; ++i) TF_OpDefinitionBuilderAddAttr(b, specs->attrs[i]);
  for (int32_t i = 0; i < specs->num_inputs; ++i) TF_OpDefinitionBuilderAddInput(b, specs->inputs[i]);
  for (int32_t i = 0; i < specs->num_outputs; ++i) {
    TF_OpDefinitionBuilderAddOutput(b, specs->outputs[i]);
  }
  uint32_t flags = kc_op_get_flags(o->op);
  /* TensorFlow sets either property whatever the value says: only called
   * to set it. */
  if (flags & KC_OP_STATEFUL) TF_OpDefinitionBuilderSetIsStateful(b, true);
  if (flags & KC_OP_COMMUTATIVE) TF_OpDefinitionBuilderSetIsCommutative(b, true);
  TF_OpDefinitionBuilderSetShapeInferenceFunction(b, kc__tf_shape_fns[slot]);
  TF_RegisterOpDefinition(b, status); /* takes the builder */
  bool ok = kc__tf_ok(status);
  if (ok) {
    TF_KernelBuilder* kb = TF_NewKernelBuilder(o->tf_name, "CPU", kc__tf_create_fns[slot],
                                               kc__tf_compute, kc__tf_kernel_delete);
    TF_RegisterKernelBuilder(o->tf_name, kb, status); /* takes the builder */
    ok = kc__tf_ok(status);
  }
  if (!ok) snprintf(why, cap, "TensorFlow refused it: %s", TF_Message(status));
  TF_DeleteStatus(status);
  return ok;
}

/* Registers the kcall ops (those KCALL_TF_OPS names, when set) as
 * TensorFlow ops as TensorFlow loads the library. */
__attribute__((constructor)) static void kc__tf_load(void) {
  const char* list = getenv("KCALL_TF_OPS");
  kc_array* names = NULL;
  kc_status* st = kc_op_registry_list(NULL, kc_sv(""), &names);
  kc__tf_specs* specs = malloc(sizeof *specs);
  if (st || !specs) {
    kc_status_destroy(st);
    kc_object_release(KC_OBJECT(names));
    free(specs);
    kc__tf_say(&kc__tf_skipped_text, "*", ": ", "out of memory listing kcall's ops");
    return;
  }
  size_t count = kc_array_get_size(names);
  for (size_t i = 0; i < count; ++i) {
    kc_string_view name = {0};
    if (!kc_any_get_string(kc_array_get_item(names, i), &name)) continue;
    char text[256];
    snprintf(text, sizeof text, "%.*s", (int)name.size, name.data);
    if (!kc__tf_wanted(list, text)) continue;
    const kc_op* op = NULL;
    st = kc_op_registry_lookup_retained(name, &op);
    if (st) { /* unregistered meanwhile */
      kc_status_destroy(st);
      continue;
    }
    char why[512] = "";
    kc__tf_op* o = &kc__tf_ops[kc__tf_num_ops];
    bool made = kc__tf_num_ops < KC__TF_MAX_OPS;
    if (!made) {
      snprintf(why, sizeof why,
               "more than %d ops in one load (load again: kcall.tf.load adds the rest)",
               KC__TF_MAX_OPS);
    }
    made = made && kc__tf_op_make(op, o, specs, why, sizeof why) &&
           kc__tf_define(o, specs, why, sizeof why);
    if (made) {
      ++kc__tf_num_ops; /* the op's reference stays, for the process's life */
      char tf[sizeof o->tf_name + 16];
      snprintf(tf, sizeof tf, "%s\t%s", o->tf_name, o->static_shapes ? "static" : "attrs");
      kc__tf_say(&kc__tf_registered_text, text, "\t", tf);
    } else {
      kc_object_release(KC_OBJECT(op));
      memset(o, 0, sizeof *o);
      kc__tf_say(&kc__tf_skipped_text, text, ": ", why);
    }
  }
  free(specs);
  kc_object_release(KC_OBJECT(names));
}
