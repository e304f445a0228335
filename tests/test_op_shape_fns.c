/* The ready-made shape functions (op.h): elementwise, broadcast, matmul
 * and reduce, on numbers (kc_op_infer) and on symbolic dims
 * (kc_op_infer_symbolic), each refusal naming the inputs and shapes; an
 * op using one is registered symbolic. */
#include "kt_ops.h"

static DLTensor kt_f32_desc(int32_t ndim, int64_t* shape) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.device = kc_device_cpu();
  t.ndim = ndim;
  t.dtype = kc_dtype_make(kDLFloat, 32, 1);
  t.shape = shape;
  return t;
}

/* Infers `op` on inputs of the given shapes (rank -1 ends the list) and
 * writes output 0's dims as "[2,3]" into buf; returns the status. */
static kc_status* kt_infer(const char* op, const kc_op_attr* attrs, int32_t num_attrs,
                           int32_t r0, int64_t* s0, int32_t r1, int64_t* s1, char* buf,
                           size_t cap) {
  DLTensor t[2] = {kt_f32_desc(r0, s0), kt_f32_desc(r1, s1)};
  const DLTensor* in[2] = {&t[0], &t[1]};
  kc_op_output_info out[2];
  int32_t n = 0;
  kc_status* st = kc_op_infer(kt_op(op), in, r1 < 0 ? 1 : 2, attrs, num_attrs, out, 2, &n);
  buf[0] = '\0';
  if (st) return st;
  size_t len = (size_t)snprintf(buf, cap, "[");
  for (int32_t i = 0; i < out[0].rank; ++i) {
    len += (size_t)snprintf(buf + len, cap - len, "%s%lld", i ? "," : "",
                            (long long)out[0].dims[i]);
  }
  snprintf(buf + len, cap - len, "]");
  return NULL;
}

KC_TEST(op_shape_fns_elementwise) {
  kt_register_op("kt.Mul", KT_SPECS("x: f32", "y: f32"), KT_SPECS("z: f32"), NULL,
                 kc_shape_fn_elementwise);
  KC_CHECK(kc_op_get_flags(kt_op("kt.Mul")) & KC_OP_SYMBOLIC_SHAPES);
  char out[64];
  KC_CHECK_OK(kt_infer("kt.Mul", NULL, 0, 2, (int64_t[]){2, 3}, 2, (int64_t[]){2, 3}, out,
                       sizeof out));
  KC_CHECK_STR(out, "[2,3]");
  KC_CHECK_CODE(kt_infer("kt.Mul", NULL, 0, 2, (int64_t[]){2, 3}, 1, (int64_t[]){3}, out,
                         sizeof out),
                KC_INVALID_ARGUMENT, "op 'kt.Mul'",
                "input 1 has shape [3], input 0 [2,3]: the op's inputs must all have one "
                "shape");
  kc_op_registry_reset();
}

KC_TEST(op_shape_fns_broadcast) {
  kt_register_op("kt.Add", KT_SPECS("x: f32", "y: f32"), KT_SPECS("z: f32"), NULL,
                 kc_shape_fn_broadcast);
  KC_CHECK(kc_op_get_flags(kt_op("kt.Add")) & KC_OP_SYMBOLIC_SHAPES);
  char out[64];
  KC_CHECK_OK(kt_infer("kt.Add", NULL, 0, 2, (int64_t[]){4, 1}, 1, (int64_t[]){3}, out,
                       sizeof out));
  KC_CHECK_STR(out, "[4,3]");
  KC_CHECK_CODE(kt_infer("kt.Add", NULL, 0, 2, (int64_t[]){4, 2}, 1, (int64_t[]){3}, out,
                         sizeof out),
                KC_INVALID_ARGUMENT, "input 1: cannot broadcast [4,2] with [3]");
  kc_op_registry_reset();
}

KC_TEST(op_shape_fns_matmul) {
  kt_register_op("kt.MatMul", KT_SPECS("a: f32", "b: f32"), KT_SPECS("c: f32"), NULL,
                 kc_shape_fn_matmul);
  char out[64];
  KC_CHECK_OK(kt_infer("kt.MatMul", NULL, 0, 2, (int64_t[]){2, 3}, 2, (int64_t[]){3, 5}, out,
                       sizeof out));
  KC_CHECK_STR(out, "[2,5]");
  /* Batch dims broadcast: [7, 1, 2, 3] x [4, 3, 5]. */
  KC_CHECK_OK(kt_infer("kt.MatMul", NULL, 0, 4, (int64_t[]){7, 1, 2, 3}, 3,
                       (int64_t[]){4, 3, 5}, out, sizeof out));
  KC_CHECK_STR(out, "[7,4,2,5]");
  KC_CHECK_CODE(kt_infer("kt.MatMul", NULL, 0, 2, (int64_t[]){2, 3}, 2, (int64_t[]){4, 5},
                         out, sizeof out),
                KC_INVALID_ARGUMENT, "kc_shape_fn_matmul: the inner dims of [2,3] and [4,5]");
  KC_CHECK_CODE(kt_infer("kt.MatMul", NULL, 0, 1, (int64_t[]){3}, 2, (int64_t[]){3, 5}, out,
                         sizeof out),
                KC_INVALID_ARGUMENT, "kc_shape_fn_matmul: input 0 ([..., M, K])");
  /* Symbolic: a batch of b rows. */
  int64_t a[3] = {KC_DIM_SYMBOL(0), 2, 3}, b[2] = {3, 5};
  DLTensor t[2] = {kt_f32_desc(3, a), kt_f32_desc(2, b)};
  const DLTensor* in[2] = {&t[0], &t[1]};
  kc_symbolic_shapes* s = NULL;
  KC_CHECK_OK(kc_op_infer_symbolic(kt_op("kt.MatMul"), in, 2, NULL, 0, &s));
  DLDataType dtype;
  int32_t rank = 0;
  const int64_t* dims = NULL;
  KC_CHECK_OK(kc_symbolic_shapes_get_output(s, 0, &dtype, &rank, &dims));
  KC_CHECK_INT(rank, 3);
  KC_CHECK(dims[0] < KC_DIM_UNKNOWN); /* symbolic: the batch */
  KC_CHECK_INT(dims[1], 2);
  KC_CHECK_INT(dims[2], 5);
  kc_symbolic_shapes_destroy(s);
  kc_op_registry_reset();
}

KC_TEST(op_shape_fns_reduce) {
  kt_register_op("kt.Sum", KT_SPECS("x: f32"), KT_SPECS("y: f32"),
                 KT_SPECS("axes: list(int)", "keepdims: bool = false"), kc_shape_fn_reduce);
  kt_register_op("kt.Max", KT_SPECS("x: f32"), KT_SPECS("y: f32"), KT_SPECS("axis: int = -1"),
                 kc_shape_fn_reduce);
  kt_register_op("kt.NoAxis", KT_SPECS("x: f32"), KT_SPECS("y: f32"), NULL,
                 kc_shape_fn_reduce);
  char out[64];
  int64_t axes[2] = {0, -1};
  kc_any list[2] = {kc_any_int(axes[0]), kc_any_int(axes[1])};
  kc_array* arr = NULL;
  KC_CHECK_OK(kc_array_create(kt_alloc(), list, 2, &arr));
  kc_op_attr sum_attrs[2] = {{KC_SV_LIT("axes"), kc_any_object(KC_OBJECT(arr))},
                             {KC_SV_LIT("keepdims"), kc_any_bool(true)}};
  KC_CHECK_OK(kt_infer("kt.Sum", sum_attrs, 1, 3, (int64_t[]){2, 3, 4}, -1, NULL, out,
                       sizeof out));
  KC_CHECK_STR(out, "[3]");
  KC_CHECK_OK(kt_infer("kt.Sum", sum_attrs, 2, 3, (int64_t[]){2, 3, 4}, -1, NULL, out,
                       sizeof out));
  KC_CHECK_STR(out, "[1,3,1]");
  KC_CHECK_OK(kt_infer("kt.Max", NULL, 0, 2, (int64_t[]){2, 3}, -1, NULL, out, sizeof out));
  KC_CHECK_STR(out, "[2]");
  kc_op_attr far = {KC_SV_LIT("axis"), kc_any_int(2)};
  KC_CHECK_CODE(kt_infer("kt.Max", &far, 1, 2, (int64_t[]){2, 3}, -1, NULL, out, sizeof out),
                KC_INVALID_ARGUMENT, "axis 2 is out of range for rank 2 (expected -2 to 1)");
  kc_any twice[2] = {kc_any_int(1), kc_any_int(-2)};
  kc_array* twice_arr = NULL;
  KC_CHECK_OK(kc_array_create(kt_alloc(), twice, 2, &twice_arr));
  kc_op_attr dup = {KC_SV_LIT("axes"), kc_any_object(KC_OBJECT(twice_arr))};
  KC_CHECK_CODE(kt_infer("kt.Sum", &dup, 1, 3, (int64_t[]){2, 3, 4}, -1, NULL, out,
                         sizeof out),
                KC_INVALID_ARGUMENT, "axis 1 is given twice");
  KC_CHECK_CODE(kt_infer("kt.NoAxis", NULL, 0, 1, (int64_t[]){2}, -1, NULL, out, sizeof out),
                KC_INVALID_ARGUMENT,
                "op 'kt.NoAxis' declares neither an attr 'axis' (int) nor 'axes'");
  kc_object_release(KC_OBJECT(arr));
  kc_object_release(KC_OBJECT(twice_arr));
  kc_op_registry_reset();
}

KC_TEST(op_shape_fns_like_inputs) {
  /* A gradient op: (x, w, dy) -> (dx, dw), dx like x and dw like w. */
  kt_register_op("kt.NormGrad", KT_SPECS("x: f32", "w: f32", "dy: f32"),
                 KT_SPECS("dx: f32", "dw: f32"), NULL, kc_shape_fn_like_inputs);
  KC_CHECK(kc_op_get_flags(kt_op("kt.NormGrad")) & KC_OP_SYMBOLIC_SHAPES);
  int64_t x[2] = {4, 8}, w[1] = {8}, dy[2] = {4, 8};
  DLTensor t[3] = {kt_f32_desc(2, x), kt_f32_desc(1, w), kt_f32_desc(2, dy)};
  const DLTensor* in[3] = {&t[0], &t[1], &t[2]};
  kc_op_output_info out[2];
  int32_t n = 0;
  KC_CHECK_OK(kc_op_infer(kt_op("kt.NormGrad"), in, 3, NULL, 0, out, 2, &n));
  KC_CHECK_INT(n, 2);
  KC_CHECK_INT(out[0].rank, 2);
  KC_CHECK_INT(out[0].dims[1], 8);
  KC_CHECK_INT(out[1].rank, 1);
  KC_CHECK_INT(out[1].dims[0], 8);
  kt_register_op("kt.TooMany", KT_SPECS("x: f32"), KT_SPECS("a: f32", "b: f32"), NULL,
                 kc_shape_fn_like_inputs);
  KC_CHECK_CODE(kc_op_infer(kt_op("kt.TooMany"), in, 1, NULL, 0, out, 2, &n),
                KC_INVALID_ARGUMENT, "op 'kt.TooMany' has 2 outputs but 1 inputs");
  kc_op_registry_reset();
}
