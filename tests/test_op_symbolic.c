/* Symbolic shape inference (op.h, "Symbolic dims"): shape functions run on
 * symbolic input dims, the expressions and assumptions they record, and
 * kc_op_infer_symbolic's result. */
#include <stdarg.h>
#include <stdio.h>

#include "kt_ops.h"

#define S0 KC_DIM_SYMBOL(0)
#define S1 KC_DIM_SYMBOL(1)

static void kt_register_flagged(const char* name, const char* const* inputs,
                                const char* const* outputs, kc_shape_fn fn,
                                uint32_t flags) {
  kc_op_builder* b = NULL;
  KC_CHECK_OK(kc_op_builder_create(name, &b));
  for (size_t i = 0; inputs && inputs[i]; ++i) {
    kc_op_builder_add_input_v2(b, inputs[i]);
  }
  for (size_t i = 0; outputs && outputs[i]; ++i) {
    kc_op_builder_add_output_v2(b, outputs[i]);
  }
  kc_op_builder_set_flags_v2(b, flags);
  kc_op_builder_set_shape_fn_v2(b, fn, NULL, NULL);
  KC_CHECK_OK(kc_op_registry_register(b, 0));
}

static DLTensor kt_desc(int32_t ndim, int64_t* shape) {
  return (DLTensor){.data = NULL,
                    .device = {kDLCPU, 0},
                    .ndim = ndim,
                    .dtype = kt_f32,
                    .shape = shape,
                    .strides = NULL,
                    .byte_offset = 0};
}

static void kt_appendf(char* buf, size_t cap, size_t* n, const char* fmt,
                       ...) {
  va_list ap;
  va_start(ap, fmt);
  if (*n < cap) *n += (size_t)vsnprintf(buf + *n, cap - *n, fmt, ap);
  va_end(ap);
}

/* A dim of a result as text: "3", "?", "in0[1]", "(in0[0] + 3)". */
static void kt_dim_text(const kc_symbolic_shapes* s, int64_t dim, char* buf,
                        size_t cap) {
  static const char* const ops[] = {"", "", "+", "-", "*", "//"};
  int32_t kind = 0;
  int64_t a = 0, b = 0;
  if (dim >= 0) {
    snprintf(buf, cap, "%lld", (long long)dim);
    return;
  }
  if (dim == KC_DIM_UNKNOWN) {
    snprintf(buf, cap, "?");
    return;
  }
  KC_CHECK_OK(kc_symbolic_shapes_get_expr(s, dim, &kind, &a, &b));
  if (kind == KC_DIM_EXPR_INPUT) {
    snprintf(buf, cap, "in%lld[%lld]", (long long)a, (long long)b);
    return;
  }
  char ta[200], tb[200];
  kt_dim_text(s, a, ta, sizeof ta);
  kt_dim_text(s, b, tb, sizeof tb);
  size_t n = 0;
  kt_appendf(buf, cap, &n, "(%s %s %s)", ta, ops[kind], tb);
}

/* Output `index` as "[d0,d1]", and the assumptions as "a == b; ...". */
static void kt_output_text(const kc_symbolic_shapes* s, int32_t index,
                           char* buf, size_t cap) {
  DLDataType dtype;
  int32_t rank = 0;
  const int64_t* dims = NULL;
  KC_CHECK_OK(kc_symbolic_shapes_get_output(s, index, &dtype, &rank, &dims));
  size_t n = (size_t)snprintf(buf, cap, "[");
  for (int32_t i = 0; i < rank && n < cap; ++i) {
    char d[200];
    kt_dim_text(s, dims[i], d, sizeof d);
    n += (size_t)snprintf(buf + n, cap - n, "%s%s", i ? "," : "", d);
  }
  if (n < cap) snprintf(buf + n, cap - n, "]");
}

static void kt_assumptions_text(const kc_symbolic_shapes* s, char* buf,
                                size_t cap) {
  static const char* const rel[] = {"", "==", ">=", "divisible by"};
  size_t n = 0;
  buf[0] = '\0';
  for (int32_t i = 0; i < kc_symbolic_shapes_get_assumption_count(s); ++i) {
    int32_t kind = 0;
    int64_t l = 0, r = 0;
    char tl[200], tr[200];
    KC_CHECK_OK(kc_symbolic_shapes_get_assumption(s, i, &kind, &l, &r));
    kt_dim_text(s, l, tl, sizeof tl);
    kt_dim_text(s, r, tr, sizeof tr);
    n += (size_t)snprintf(buf + n, cap - n, "%s%s %s %s", i ? "; " : "", tl,
                          rel[kind], tr);
  }
}

static kc_status* kt_broadcast_shape(kc_shape_ctx* ctx) {
  const kc_shape_handle* out = NULL;
  kc_status* st = kc_shape_ctx_broadcast(ctx, kc_shape_ctx_get_input(ctx, 0),
                                         kc_shape_ctx_get_input(ctx, 1), &out);
  if (!st) st = kc_shape_ctx_set_output(ctx, 0, out);
  return st;
}

/* Infers kt.SymAdd on x and y; checks the output and assumptions text. */
static void kt_check_add(int32_t rx, int64_t* x, int32_t ry, int64_t* y,
                         const char* want, const char* want_assumed) {
  DLTensor tx = kt_desc(rx, x), ty = kt_desc(ry, y);
  const DLTensor* in[2] = {&tx, &ty};
  kc_symbolic_shapes* s = NULL;
  KC_CHECK_OK(kc_op_infer_symbolic(kt_op("kt.SymAdd"), in, 2, NULL, 0, &s));
  char text[400], assumed[400];
  KC_CHECK_INT(kc_symbolic_shapes_get_output_count(s), 1);
  kt_output_text(s, 0, text, sizeof text);
  kt_assumptions_text(s, assumed, sizeof assumed);
  KC_CHECK_STR(text, want);
  KC_CHECK_STR(assumed, want_assumed);
  kc_symbolic_shapes_destroy(s);
}

KC_TEST(op_symbolic_broadcast) {
  kt_register_flagged("kt.SymAdd", KT_SPECS("x: f32", "y: f32"),
                      KT_SPECS("z: f32"), kt_broadcast_shape,
                      KC_OP_SYMBOLIC_SHAPES);
  kt_check_add(2, (int64_t[]){S0, 3}, 1, (int64_t[]){3}, "[in0[0],3]", "");
  kt_check_add(2, (int64_t[]){S0, S1}, 1, (int64_t[]){S1}, "[in0[0],in0[1]]",
               "");
  kt_check_add(1, (int64_t[]){S0}, 1, (int64_t[]){1}, "[in0[0]]", "");
  /* A symbol against 5 can only be 1 or 5: 5 either way. */
  kt_check_add(1, (int64_t[]){S0}, 1, (int64_t[]){5}, "[5]", "");
  /* Two symbols: which, if either, is 1 is not known: assumed equal. */
  kt_check_add(1, (int64_t[]){S0}, 1, (int64_t[]){S1}, "[in0[0]]",
               "in0[0] == in1[0]");
  kt_check_add(2, (int64_t[]){2, S0}, 2, (int64_t[]){S1, 1}, "[2,in0[1]]",
               "");
  /* Numbers alone: the usual answer (and its error). */
  kt_check_add(1, (int64_t[]){4}, 2, (int64_t[]){2, 1}, "[2,4]", "");
  DLTensor tx = kt_desc(1, (int64_t[]){S0}), ty = kt_desc(2, (int64_t[]){2, 3});
  int64_t bad[1] = {4};
  tx.shape = bad;
  const DLTensor* in[2] = {&tx, &ty};
  kc_symbolic_shapes* s = NULL;
  KC_CHECK_CODE(kc_op_infer_symbolic(kt_op("kt.SymAdd"), in, 2, NULL, 0, &s),
                KC_INVALID_ARGUMENT, "calling op 'kt.SymAdd'",
                "cannot broadcast [4] with [2,3]");
  KC_CHECK(s == NULL);
}

/* Inputs: x [a, b] with a and b symbols, m [3, 4]. Records every helper's
 * answer on symbols into output 0 and 1 and makes the misuse checks. */
static struct {
  char errors[8][200];
  int count;
} kt_errors;

static void kt_error(kc_status* st) {
  char* out = kt_errors.errors[kt_errors.count++];
  snprintf(out, 200, "%s: %s", st ? kc_status_code_name(kc_status_get_code(st))
                                  : "OK",
           st ? kc_status_get_message(st) : "");
  kc_status_destroy(st);
}

static kc_status* kt_arith_shape(kc_shape_ctx* ctx) {
  const kc_shape_handle* x = kc_shape_ctx_get_input(ctx, 0);
  int64_t a = kc_shape_handle_get_dim(x, 0), b = kc_shape_handle_get_dim(x, 1);
  int64_t d[10];
  KC_RETURN_IF_ERROR(kc_shape_ctx_add_dims(ctx, a, 3, &d[0]));
  KC_RETURN_IF_ERROR(kc_shape_ctx_add_dims(ctx, a, 0, &d[1]));
  KC_RETURN_IF_ERROR(kc_shape_ctx_subtract_dims(ctx, a, b, &d[2]));
  KC_RETURN_IF_ERROR(kc_shape_ctx_subtract_dims(ctx, a, a, &d[3]));
  KC_RETURN_IF_ERROR(kc_shape_ctx_multiply_dims(ctx, a, b, &d[4]));
  KC_RETURN_IF_ERROR(kc_shape_ctx_multiply_dims(ctx, 0, b, &d[5]));
  KC_RETURN_IF_ERROR(kc_shape_ctx_divide_dims(ctx, a, 2, true, &d[6]));
  KC_RETURN_IF_ERROR(kc_shape_ctx_divide_dims(ctx, 12, b, false, &d[7]));
  /* b * a is a * b: the same expression, so merging assumes nothing. */
  int64_t ba = 0;
  KC_RETURN_IF_ERROR(kc_shape_ctx_multiply_dims(ctx, b, a, &ba));
  KC_RETURN_IF_ERROR(kc_shape_ctx_merge_dim(ctx, d[4], ba, &d[8]));
  KC_RETURN_IF_ERROR(kc_shape_ctx_merge_dim(ctx, b, 7, &d[9]));
  const kc_shape_handle* out = NULL;
  KC_RETURN_IF_ERROR(kc_shape_ctx_make_shape(ctx, 10, d, &out));
  KC_RETURN_IF_ERROR(kc_shape_ctx_set_output(ctx, 0, out));
  /* Shapes carry symbols through. */
  const kc_shape_handle *tail = NULL, *both = NULL, *rep = NULL;
  KC_RETURN_IF_ERROR(kc_shape_ctx_subshape(ctx, x, 1, 2, &tail));
  KC_RETURN_IF_ERROR(kc_shape_ctx_concatenate(ctx, tail, x, &both));
  KC_RETURN_IF_ERROR(kc_shape_ctx_replace_dim(ctx, both, 0, d[0], &rep));
  KC_RETURN_IF_ERROR(kc_shape_ctx_set_output(ctx, 1, rep));
  /* Misuse: C arithmetic on a symbolic dim, and foreign values. */
  kt_errors.count = 0;
  const kc_shape_handle* junk = NULL;
  int64_t j = 0;
  kt_error(kc_shape_ctx_make_shape(ctx, 1, (int64_t[]){a + 1}, &junk));
  kt_error(kc_shape_ctx_add_dims(ctx, a - 1, 2, &j));
  kt_error(kc_shape_ctx_replace_dim(ctx, x, 0, -5, &junk));
  kt_error(kc_shape_ctx_merge_dim(ctx, KC_DIM_SYMBOL(0), a, &j));
  kt_error(kc_shape_ctx_divide_dims(ctx, a, 0, false, &j));
  /* A rank error names the symbols. */
  kt_error(kc_shape_ctx_with_rank(ctx, x, 3, &junk));
  return NULL;
}

KC_TEST(op_symbolic_dim_arithmetic) {
  kt_register_flagged("kt.SymArith", KT_SPECS("x: f32"),
                      KT_SPECS("y: f32", "z: f32"), kt_arith_shape,
                      KC_OP_SYMBOLIC_SHAPES);
  DLTensor tx = kt_desc(2, (int64_t[]){S0, S1});
  const DLTensor* in[1] = {&tx};
  kc_symbolic_shapes* s = NULL;
  KC_CHECK_OK(kc_op_infer_symbolic(kt_op("kt.SymArith"), in, 1, NULL, 0, &s));
  char text[800];
  kt_output_text(s, 0, text, sizeof text);
  KC_CHECK_STR(text,
               "[(in0[0] + 3),in0[0],(in0[0] - in0[1]),0,(in0[0] * in0[1]),0,"
               "(in0[0] // 2),(12 // in0[1]),(in0[0] * in0[1]),7]");
  kt_output_text(s, 1, text, sizeof text);
  KC_CHECK_STR(text, "[(in0[0] + 3),in0[0],in0[1]]");
  kt_assumptions_text(s, text, sizeof text);
  KC_CHECK_STR(text,
               "in0[0] >= in0[1]; in0[0] divisible by 2; in0[1] >= 1; "
               "in0[1] == 7");
  static const char* const want[] = {
      "INVALID_ARGUMENT: making a shape: dim",
      "INVALID_ARGUMENT: adding: dim",
      ("INVALID_ARGUMENT: replacing a dim: dim -5 is neither a size, "
       "KC_DIM_UNKNOWN nor a symbolic dim of this context"),
      "INVALID_ARGUMENT: merging: dim -2 is neither",
      "INVALID_ARGUMENT: dividing",
      "INVALID_ARGUMENT: expected rank 3, got rank 2 (shape [in0[0],in0[1]])",
  };
  KC_CHECK_INT(kt_errors.count, 6);
  for (int i = 0; i < kt_errors.count; ++i) {
    KC_CHECK_CONTAINS(kt_errors.errors[i], want[i]);
  }
  KC_CHECK_CONTAINS(kt_errors.errors[0], "nor a symbolic dim of this context");
  KC_CHECK_CONTAINS(kt_errors.errors[4], "dividing in0[0] by zero");
  kc_symbolic_shapes_destroy(s);
}

static kc_status* kt_matmul_shape(kc_shape_ctx* ctx) {
  const kc_shape_handle *a = NULL, *b = NULL, *out = NULL;
  int64_t k = 0;
  KC_RETURN_IF_ERROR(
      kc_shape_ctx_with_rank(ctx, kc_shape_ctx_get_input(ctx, 0), 2, &a));
  KC_RETURN_IF_ERROR(
      kc_shape_ctx_with_rank(ctx, kc_shape_ctx_get_input(ctx, 1), 2, &b));
  KC_RETURN_IF_ERROR(kc_shape_ctx_merge_dim(ctx, kc_shape_handle_get_dim(a, 1),
                                            kc_shape_handle_get_dim(b, 0), &k),
                     "inner dimensions");
  int64_t dims[2] = {kc_shape_handle_get_dim(a, 0),
                     kc_shape_handle_get_dim(b, 1)};
  KC_RETURN_IF_ERROR(kc_shape_ctx_make_shape(ctx, 2, dims, &out));
  return kc_shape_ctx_set_output(ctx, 0, out);
}

KC_TEST(op_symbolic_matmul_and_merge) {
  kt_register_flagged("kt.SymMatMul", KT_SPECS("a: f32", "b: f32"),
                      KT_SPECS("c: f32"), kt_matmul_shape,
                      KC_OP_SYMBOLIC_SHAPES);
  DLTensor ta = kt_desc(2, (int64_t[]){S0, S1}),
           tb = kt_desc(2, (int64_t[]){S1, 5});
  const DLTensor* in[2] = {&ta, &tb};
  kc_symbolic_shapes* s = NULL;
  KC_CHECK_OK(kc_op_infer_symbolic(kt_op("kt.SymMatMul"), in, 2, NULL, 0, &s));
  char text[400];
  kt_output_text(s, 0, text, sizeof text);
  KC_CHECK_STR(text, "[in0[0],5]");
  KC_CHECK_INT(kc_symbolic_shapes_get_assumption_count(s), 0);
  kc_symbolic_shapes_destroy(s);
  /* Distinct inner symbols: assumed equal, not guessed. */
  tb.shape = (int64_t[]){KC_DIM_SYMBOL(7), 5};
  KC_CHECK_OK(kc_op_infer_symbolic(kt_op("kt.SymMatMul"), in, 2, NULL, 0, &s));
  kt_assumptions_text(s, text, sizeof text);
  KC_CHECK_STR(text, "in0[1] == in1[0]");
  kc_symbolic_shapes_destroy(s);
  /* Whole shapes merge dim by dim, and the message shows the symbols. */
  ta.ndim = 1;
  KC_CHECK_CODE(kc_op_infer_symbolic(kt_op("kt.SymMatMul"), in, 2, NULL, 0, &s),
                KC_INVALID_ARGUMENT, "expected rank 2, got rank 1 (shape "
                "[in0[0]])");
}

static kc_status* kt_merge_shape(kc_shape_ctx* ctx) {
  const kc_shape_handle* out = NULL;
  KC_RETURN_IF_ERROR(kc_shape_ctx_merge(ctx, kc_shape_ctx_get_input(ctx, 0),
                                        kc_shape_ctx_get_input(ctx, 1), &out));
  return kc_shape_ctx_set_output(ctx, 0, out);
}

KC_TEST(op_symbolic_merge_shapes) {
  kt_register_flagged("kt.SymMerge", KT_SPECS("a: f32", "b: f32"),
                      KT_SPECS("c: f32"), kt_merge_shape,
                      KC_OP_SYMBOLIC_SHAPES);
  DLTensor ta = kt_desc(2, (int64_t[]){S0, 4}),
           tb = kt_desc(2, (int64_t[]){3, S1});
  const DLTensor* in[2] = {&ta, &tb};
  kc_symbolic_shapes* s = NULL;
  KC_CHECK_OK(kc_op_infer_symbolic(kt_op("kt.SymMerge"), in, 2, NULL, 0, &s));
  char text[400];
  kt_output_text(s, 0, text, sizeof text);
  KC_CHECK_STR(text, "[3,4]");
  kt_assumptions_text(s, text, sizeof text);
  KC_CHECK_STR(text, "in0[0] == 3; in1[1] == 4");
  kc_symbolic_shapes_destroy(s);
  tb.shape = (int64_t[]){S0, 5};
  KC_CHECK_CODE(kc_op_infer_symbolic(kt_op("kt.SymMerge"), in, 2, NULL, 0, &s),
                KC_INVALID_ARGUMENT,
                "cannot merge [in0[0],4] with [in0[0],5]: dimension 1",
                "dimensions do not match: 4 != 5");
}

KC_TEST(op_symbolic_refuses_ops_that_do_not_declare_it) {
  kt_register_flagged("kt.NumAdd", KT_SPECS("x: f32", "y: f32"),
                      KT_SPECS("z: f32"), kt_broadcast_shape, 0);
  DLTensor tx = kt_desc(1, (int64_t[]){S0}), ty = kt_desc(1, (int64_t[]){1});
  const DLTensor* in[2] = {&tx, &ty};
  kc_symbolic_shapes* s = NULL;
  KC_CHECK_CODE(
      kc_op_infer_symbolic(kt_op("kt.NumAdd"), in, 2, NULL, 0, &s),
      KC_FAILED_PRECONDITION,
      "op 'kt.NumAdd': its shape function is not symbolic (the op does not "
      "declare KC_OP_SYMBOLIC_SHAPES)");
  KC_CHECK(s == NULL);
  /* Numbers alone run it, flag or not. */
  tx.shape = (int64_t[]){4};
  KC_CHECK_OK(kc_op_infer_symbolic(kt_op("kt.NumAdd"), in, 2, NULL, 0, &s));
  char text[100];
  kt_output_text(s, 0, text, sizeof text);
  KC_CHECK_STR(text, "[4]");
  kc_symbolic_shapes_destroy(s);
}

KC_TEST(op_symbolic_shape_fn_unchanged_is_symbolic) {
  kt_register_flagged("kt.SymSame", KT_SPECS("x: f32"), KT_SPECS("y: f32"),
                      kc_shape_fn_unchanged, KC_OP_COMMUTATIVE);
  KC_CHECK_INT(kc_op_get_flags(kt_op("kt.SymSame")),
               KC_OP_COMMUTATIVE | KC_OP_SYMBOLIC_SHAPES);
  DLTensor tx = kt_desc(3, (int64_t[]){S1, 2, S0});
  const DLTensor* in[1] = {&tx};
  kc_symbolic_shapes* s = NULL;
  KC_CHECK_OK(kc_op_infer_symbolic(kt_op("kt.SymSame"), in, 1, NULL, 0, &s));
  char text[100];
  kt_output_text(s, 0, text, sizeof text);
  KC_CHECK_STR(text, "[in0[0],2,in0[2]]");
  kc_symbolic_shapes_destroy(s);
}

KC_TEST(op_symbolic_bad_input) {
  kt_register_flagged("kt.SymBad", KT_SPECS("x: f32"), KT_SPECS("y: f32"),
                      kc_shape_fn_unchanged, 0);
  kt_register_flagged("kt.NoShape", KT_SPECS("x: f32"), KT_SPECS("y: f32"),
                      NULL, KC_OP_SYMBOLIC_SHAPES);
  const kc_op* op = kt_op("kt.SymBad");
  DLTensor tx = kt_desc(1, (int64_t[]){S0});
  const DLTensor* in[1] = {&tx};
  kc_symbolic_shapes* s = NULL;
  KC_CHECK_CODE(kc_op_infer_symbolic(NULL, in, 1, NULL, 0, &s),
                KC_INVALID_ARGUMENT, "op is NULL");
  KC_CHECK_CODE(kc_op_infer_symbolic(op, in, 1, NULL, 0, NULL),
                KC_INVALID_ARGUMENT, "out_shapes is NULL");
  tx.shape = (int64_t[]){KC_DIM_UNKNOWN};
  KC_CHECK_CODE(kc_op_infer_symbolic(op, in, 1, NULL, 0, &s),
                KC_INVALID_ARGUMENT,
                "input 0: dimension 0 is -1: expected a size (>= 0) or "
                "KC_DIM_SYMBOL(k)");
  tx.shape = (int64_t[]){KC_DIM_SYMBOL(KC_DIM_SYMBOL_COUNT)};
  KC_CHECK_CODE(kc_op_infer_symbolic(op, in, 1, NULL, 0, &s),
                KC_INVALID_ARGUMENT, "input 0: dimension 0 is");
  KC_CHECK_CODE(kc_op_infer_symbolic(op, NULL, 1, NULL, 0, &s),
                KC_INVALID_ARGUMENT, "a bad count or a NULL array");
  const DLTensor* none[1] = {NULL};
  KC_CHECK_CODE(kc_op_infer_symbolic(op, none, 1, NULL, 0, &s),
                KC_INVALID_ARGUMENT, "input 0 is NULL");
  DLTensor ti = tx;
  ti.dtype = kt_i32;
  ti.shape = (int64_t[]){S0};
  in[0] = &ti;
  KC_CHECK_CODE(kc_op_infer_symbolic(op, in, 1, NULL, 0, &s),
                KC_INVALID_ARGUMENT, "expected f32");
  KC_CHECK(s == NULL);
  /* No shape function: the output's rank is unknown. */
  tx.shape = (int64_t[]){S0};
  in[0] = &tx;
  KC_CHECK_OK(kc_op_infer_symbolic(kt_op("kt.NoShape"), in, 1, NULL, 0, &s));
  DLDataType dtype;
  int32_t rank = 0;
  const int64_t* dims = NULL;
  KC_CHECK_OK(kc_symbolic_shapes_get_output(s, 0, &dtype, &rank, &dims));
  KC_CHECK_INT(rank, KC_RANK_UNKNOWN);
  KC_CHECK(dims == NULL);
  kc_symbolic_shapes_destroy(s);
  /* The result's accessors. */
  KC_CHECK_OK(kc_op_infer_symbolic(op, in, 1, NULL, 0, &s));
  KC_CHECK_OK(kc_symbolic_shapes_get_output(s, 0, &dtype, &rank, &dims));
  int32_t kind = 0;
  int64_t a = 0, b = 0;
  KC_CHECK_OK(kc_symbolic_shapes_get_expr(s, dims[0], &kind, &a, &b));
  KC_CHECK_INT(kind, KC_DIM_EXPR_INPUT);
  KC_CHECK_INT(a, 0);
  KC_CHECK_INT(b, 0);
  KC_CHECK_CODE(kc_symbolic_shapes_get_output(s, 1, &dtype, &rank, &dims),
                KC_INVALID_ARGUMENT, "output 1: expected 0 to 0");
  KC_CHECK_CODE(kc_symbolic_shapes_get_output(s, 0, NULL, &rank, &dims),
                KC_INVALID_ARGUMENT, "an out pointer is NULL");
  KC_CHECK_CODE(kc_symbolic_shapes_get_output(NULL, 0, &dtype, &rank, &dims),
                KC_INVALID_ARGUMENT, "shapes is NULL");
  KC_CHECK_CODE(kc_symbolic_shapes_get_expr(s, 3, &kind, &a, &b),
                KC_INVALID_ARGUMENT, "dim 3 is not a symbolic dim",
                "it is a number");
  KC_CHECK_CODE(kc_symbolic_shapes_get_expr(s, dims[0] + 1, &kind, &a, &b),
                KC_INVALID_ARGUMENT, "no such symbol");
  KC_CHECK_CODE(kc_symbolic_shapes_get_expr(s, KC_DIM_UNKNOWN, &kind, &a, &b),
                KC_INVALID_ARGUMENT, "it is unknown");
  KC_CHECK_CODE(kc_symbolic_shapes_get_expr(NULL, dims[0], &kind, &a, &b),
                KC_INVALID_ARGUMENT, "shapes is NULL");
  KC_CHECK_INT(kc_symbolic_shapes_get_assumption_count(s), 0);
  KC_CHECK_CODE(kc_symbolic_shapes_get_assumption(s, 0, &kind, &a, &b),
                KC_INVALID_ARGUMENT, "assumption 0: there are 0");
  KC_CHECK_CODE(kc_symbolic_shapes_get_assumption(s, 0, NULL, &a, &b),
                KC_INVALID_ARGUMENT, "an out pointer is NULL");
  KC_CHECK_INT(kc_symbolic_shapes_get_output_count(NULL), 0);
  KC_CHECK_INT(kc_symbolic_shapes_get_assumption_count(NULL), 0);
  kc_symbolic_shapes_destroy(s);
  kc_symbolic_shapes_destroy(NULL);
  /* A bit past the flags stays refused. */
  kc_op_builder* bld = NULL;
  KC_CHECK_OK(kc_op_builder_create("kt.BadFlag", &bld));
  KC_CHECK_CODE(kc_op_builder_set_flags(bld, KC_OP_SYMBOLIC_SHAPES << 1),
                KC_INVALID_ARGUMENT, "unknown flag bits 0x10");
  kc_op_builder_destroy(bld);
}

static kc_status* kt_zero_compute_any(void* k, kc_kernel_ctx* ctx) {
  (void)k;
  DLTensor* z = kc_kernel_ctx_get_output(ctx, 0);
  memset(z->data, 0, (size_t)kc_dltensor_get_numel(z) * 4);
  return NULL;
}

/* The eager path ignores the flag: the shape function runs on numbers. */
KC_TEST(op_symbolic_ops_still_call_eagerly) {
  kt_register_flagged("kt.SymAddCall", KT_SPECS("x: f32", "y: f32"),
                      KT_SPECS("z: f32"), kt_broadcast_shape,
                      KC_OP_SYMBOLIC_SHAPES);
  kt_register_kernel("kt.SymAddCall", NULL, kt_zero_compute_any, NULL, NULL,
                     NULL, 0, 0);
  kc_tensor* in[2] = {kt_tensor(kt_f32, (int64_t[]){2, 3}, 2, NULL),
                      kt_tensor(kt_f32, (int64_t[]){3}, 1, NULL)};
  kc_tensor* out = NULL;
  KC_CHECK_OK(kt_call1(kt_op("kt.SymAddCall"), (const kc_tensor* const*)in, 2,
                       NULL, 0, &out));
  KC_CHECK_INT(kt_dl(out)->ndim, 2);
  KC_CHECK_INT(kt_dl(out)->shape[0], 2);
  KC_CHECK_INT(kt_dl(out)->shape[1], 3);
  kt_release(out);
  kt_release(in[0]);
  kt_release(in[1]);
}
