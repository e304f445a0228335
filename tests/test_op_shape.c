/* Shape inference: the context and the shape algebra. The helpers need a
 * live context, so a shape function runs them during a call and records
 * what each gave; the test compares after the call (no check fails inside
 * the library's frames). */
#include <stdio.h>

#include "kt_ops.h"

#define KT_MAX_RESULTS 64

static struct {
  char text[KT_MAX_RESULTS][160];
  int count;
} kt_results;

static void kt_format(const kc_shape_handle* s, char* buf, size_t cap) {
  int32_t rank = kc_shape_handle_get_rank(s);
  if (rank < 0) {
    snprintf(buf, cap, "<unknown rank>");
    return;
  }
  size_t n = (size_t)snprintf(buf, cap, "[");
  for (int32_t i = 0; i < rank && n < cap; ++i) {
    int64_t d = kc_shape_handle_get_dim(s, i);
    n += (size_t)(d < 0 ? snprintf(buf + n, cap - n, "%s?", i ? "," : "")
                        : snprintf(buf + n, cap - n, "%s%lld", i ? "," : "",
                                   (long long)d));
  }
  if (n < cap) snprintf(buf + n, cap - n, "]");
}

/* Records a shape, or the message of the status that replaced it. */
static void kt_note(kc_status* st, const kc_shape_handle* s) {
  char* out = kt_results.text[kt_results.count++];
  if (st) {
    snprintf(out, 160, "error: %s", kc_status_get_message(st));
    kc_status_destroy(st);
  } else {
    kt_format(s, out, 160);
  }
}

static void kt_note_dim(kc_status* st, int64_t d) {
  char* out = kt_results.text[kt_results.count++];
  if (st) {
    snprintf(out, 160, "%s: %s", kc_status_code_name(kc_status_get_code(st)),
             kc_status_get_message(st));
    kc_status_destroy(st);
  } else {
    snprintf(out, 160, "%lld", (long long)d);
  }
}

/* Runs `call` first, then records `out` (argument order is unspecified,
 * so the two must not share one call's argument list). */
#define KT_NOTE(call, out)      \
  do {                          \
    kc_status* kt_st_ = (call); \
    kt_note(kt_st_, out);       \
  } while (0)
#define KT_NOTE_DIM(call, out)  \
  do {                          \
    kc_status* kt_st_ = (call); \
    kt_note_dim(kt_st_, out);   \
  } while (0)

/* Inputs: a [2,3], b [6], c [1,3], d [2,1,3]. */
static kc_status* kt_battery(kc_shape_ctx* ctx) {
  const kc_shape_handle* a = kc_shape_ctx_get_input(ctx, 0);
  const kc_shape_handle* b = kc_shape_ctx_get_input(ctx, 1);
  const kc_shape_handle* c = kc_shape_ctx_get_input(ctx, 2);
  const kc_shape_handle* d = kc_shape_ctx_get_input(ctx, 3);
  const kc_shape_handle *s = NULL, *u = NULL, *p = NULL, *q = NULL;
  int64_t dim = 0;
  kt_results.count = 0;
  KT_NOTE(kc_shape_ctx_make_shape(ctx, 2, NULL, &s), s); /* 0 */
  KT_NOTE(kc_shape_ctx_make_shape(ctx, KC_RANK_UNKNOWN, NULL, &u), u);
  KT_NOTE(kc_shape_ctx_make_shape(ctx, 2, (int64_t[]){2, -1}, &p), p);
  KT_NOTE(kc_shape_ctx_make_shape(ctx, 2, (int64_t[]){2, -5}, &s), s);
  KT_NOTE(kc_shape_ctx_make_shape(ctx, 2, (int64_t[]){-1, 3}, &q), q);
  KT_NOTE(kc_shape_ctx_with_rank(ctx, a, 2, &s), s); /* 5 */
  KT_NOTE(kc_shape_ctx_with_rank(ctx, a, 3, &s), s);
  KT_NOTE(kc_shape_ctx_with_rank(ctx, u, 2, &s), s);
  KT_NOTE(kc_shape_ctx_with_rank_at_least(ctx, a, 1, &s), s);
  KT_NOTE(kc_shape_ctx_with_rank_at_least(ctx, a, 3, &s), s);
  KT_NOTE(kc_shape_ctx_with_rank_at_most(ctx, a, 1, &s), s); /* 10 */
  KT_NOTE(kc_shape_ctx_merge(ctx, p, q, &s), s);
  KT_NOTE(kc_shape_ctx_merge(ctx, a, p, &s), s);
  KT_NOTE(kc_shape_ctx_merge(ctx, a, d, &s), s);
  KT_NOTE(kc_shape_ctx_merge(ctx, u, a, &s), s);
  KT_NOTE(kc_shape_ctx_broadcast(ctx, a, b, &s), s); /* 15 */
  KT_NOTE(kc_shape_ctx_broadcast(ctx, c, d, &s), s);
  const kc_shape_handle* four = NULL;
  kc_status* made = kc_shape_ctx_make_shape(ctx, 1, (int64_t[]){4}, &four);
  if (made) return made;
  KT_NOTE(kc_shape_ctx_broadcast(ctx, a, four, &s), s);
  KT_NOTE(kc_shape_ctx_broadcast(ctx, q, d, &s), s);
  KT_NOTE(kc_shape_ctx_broadcast(ctx, u, a, &s), s);
  KT_NOTE(kc_shape_ctx_concatenate(ctx, a, b, &s), s); /* 20 */
  KT_NOTE(kc_shape_ctx_subshape(ctx, d, 1, 3, &s), s);
  KT_NOTE(kc_shape_ctx_subshape(ctx, d, -2, 100, &s), s);
  KT_NOTE(kc_shape_ctx_subshape(ctx, d, 2, 1, &s), s);
  KT_NOTE(kc_shape_ctx_replace_dim(ctx, a, -1, 7, &s), s);
  KT_NOTE(kc_shape_ctx_replace_dim(ctx, a, 2, 1, &s), s); /* 25 */
  KT_NOTE_DIM(kc_shape_ctx_merge_dim(ctx, 2, -1, &dim), dim);
  KT_NOTE_DIM(kc_shape_ctx_merge_dim(ctx, 2, 3, &dim), dim);
  KT_NOTE_DIM(kc_shape_ctx_add_dims(ctx, 2, 3, &dim), dim);
  KT_NOTE_DIM(kc_shape_ctx_add_dims(ctx, -1, 3, &dim), dim);
  KT_NOTE_DIM(kc_shape_ctx_add_dims(ctx, INT64_MAX, 1, &dim), dim); /* 30 */
  KT_NOTE_DIM(kc_shape_ctx_subtract_dims(ctx, 2, 3, &dim), dim);
  KT_NOTE_DIM(kc_shape_ctx_multiply_dims(ctx, 0, -1, &dim), dim);
  KT_NOTE_DIM(kc_shape_ctx_multiply_dims(ctx, -1, 4, &dim), dim);
  KT_NOTE_DIM(kc_shape_ctx_divide_dims(ctx, 6, 4, true, &dim), dim);
  KT_NOTE_DIM(kc_shape_ctx_divide_dims(ctx, 6, 4, false, &dim), dim); /* 35 */
  KT_NOTE_DIM(kc_shape_ctx_divide_dims(ctx, 6, 0, false, &dim), dim);
  kt_note_dim(NULL, kc_shape_handle_get_dim(a, -1));
  kt_note_dim(NULL, kc_shape_handle_get_dim(a, 5));
  kt_note_dim(NULL, kc_shape_handle_get_rank(NULL));
  kt_note_dim(NULL, kc_shape_ctx_get_input_count(ctx)); /* 40 */
  kt_note_dim(NULL, kc_shape_ctx_get_input_dtype(ctx, 0).bits);
  kt_note_dim(NULL, kc_shape_ctx_get_input_dtype(ctx, 9).bits);
  KT_NOTE_DIM(kc_shape_ctx_set_output(ctx, 1, a), 0);
  KT_NOTE_DIM(kc_shape_ctx_set_output_dtype(ctx, 0, kt_i32), 0);
  KT_NOTE_DIM(kc_shape_ctx_set_output_dtype(ctx, 0, kt_f32), 0); /* 45 */
  KT_NOTE(kc_shape_ctx_with_rank(ctx, NULL, 2, &s), s);
  /* A long chain spills out of the context's first block. */
  s = a;
  for (int i = 0; i < 200; ++i) {
    kc_status* st = kc_shape_ctx_concatenate(ctx, s, b, &s);
    if (st) return st;
    if (kc_shape_handle_get_rank(s) == KC_TENSOR_MAX_NDIM - 1) s = a;
  }
  return kc_shape_ctx_set_output(ctx, 0, a);
}

KC_TEST(op_shape_algebra) {
  kt_register_op("kt.Shapes", KT_SPECS("a: f32", "b: f32", "c: f32", "d: f32"),
                 KT_SPECS("y: f32"), NULL, kt_battery);
  kt_register_kernel("kt.Shapes", NULL, kt_add_compute, NULL, NULL, NULL, 0, 0);
  kc_tensor* in[4] = {kt_tensor(kt_f32, (int64_t[]){2, 3}, 2, NULL),
                      /* as many elements as a: the kernel adds them */
                      kt_tensor(kt_f32, (int64_t[]){6}, 1, NULL),
                      kt_tensor(kt_f32, (int64_t[]){1, 3}, 2, NULL),
                      kt_tensor(kt_f32, (int64_t[]){2, 1, 3}, 3, NULL)};
  kc_tensor* out = NULL;
  kc_status* st = kt_call1(kt_op("kt.Shapes"), (const kc_tensor* const*)in, 4,
                           NULL, 0, &out);
  kt_release(out);
  for (int i = 0; i < 4; ++i) kt_release(in[i]);
  KC_CHECK_OK(st);
  static const char* const want[] = {
      "[?,?]",
      "<unknown rank>",
      "[2,?]",
      "error: making a shape: dim 1 is -5 (expected >= 0, or KC_DIM_UNKNOWN)",
      "[?,3]",
      "[2,3]",
      "error: expected rank 3, got rank 2 (shape [2,3])",
      "[?,?]",
      "[2,3]",
      "error: expected rank >= 3, got rank 2 (shape [2,3])",
      "error: expected rank <= 1, got rank 2 (shape [2,3])",
      "[2,3]",
      "[2,3]",
      "error: cannot merge [2,3] with [2,1,3]: rank 2 != 3",
      "[2,3]",
      "error: cannot broadcast [2,3] with [6]: dimension 1 of the result: 3 "
      "vs 6",
      "[2,1,3]",
      "error: cannot broadcast [2,3] with [4]: dimension 1 of the result: 3 "
      "vs 4",
      "[2,?,3]",
      "<unknown rank>",
      "[2,3,6]",
      "[1,3]",
      "[1,3]",
      "[]",
      "[2,7]",
      "error: replacing dim 2 of shape [2,3]: out of range",
      "2",
      "INVALID_ARGUMENT: dimensions do not match: 2 != 3",
      "5",
      "-1",
      "OUT_OF_RANGE: 9223372036854775807 + 1 overflows",
      "INVALID_ARGUMENT: 2 - 3 is negative",
      "0",
      "-1",
      "INVALID_ARGUMENT: 6 is not evenly divisible by 4",
      "1",
      "INVALID_ARGUMENT: dividing 6 by zero",
      "3",
      "-1",
      "-1",
      "4",
      "32",
      "0",
      "INVALID_ARGUMENT: setting output 1: the op has 1 output tensor(s) here",
      "INVALID_ARGUMENT: output 0: the definition makes it f32, the shape "
      "function says i32",
      "0",
      "error: a shape argument is NULL",
  };
  KC_CHECK_INT(kt_results.count, (int64_t)(sizeof want / sizeof *want));
  for (int i = 0; i < kt_results.count; ++i) {
    if (strcmp(kt_results.text[i], want[i]) != 0) {
      kt__fail(__FILE__, __LINE__, "result %d: \"%s\", wanted \"%s\"", i,
               kt_results.text[i], want[i]);
    }
  }
}

static kc_status* kt_bitcast_like(kc_shape_ctx* ctx) {
  /* Output: the input shape with its last dim split in two. */
  const kc_shape_handle* in = kc_shape_ctx_get_input(ctx, 0);
  const kc_shape_handle *head = NULL, *out = NULL, *pair = NULL;
  int64_t last = 0;
  kc_status* st = kc_shape_ctx_with_rank_at_least(ctx, in, 1, &in);
  if (!st)
    st = kc_shape_ctx_divide_dims(ctx, kc_shape_handle_get_dim(in, -1), 2, true,
                                  &last);
  if (!st) st = kc_shape_ctx_subshape(ctx, in, 0, -1, &head);
  if (!st) st = kc_shape_ctx_make_shape(ctx, 2, (int64_t[]){last, 2}, &pair);
  if (!st) st = kc_shape_ctx_concatenate(ctx, head, pair, &out);
  if (!st) st = kc_shape_ctx_set_output(ctx, 0, out);
  return st;
}

static kc_status* kt_zero_compute(void* k, kc_kernel_ctx* ctx) {
  (void)k;
  DLTensor* y = kc_kernel_ctx_get_output(ctx, 0);
  memset(y->data, 0, (size_t)kc_dltensor_get_numel(y) * 4);
  return NULL;
}

KC_TEST(op_shape_fn_sets_output_shape) {
  kt_register_op("kt.Split", KT_SPECS("x: f32"), KT_SPECS("y: f32"), NULL,
                 kt_bitcast_like);
  kt_register_kernel("kt.Split", NULL, kt_zero_compute, NULL, NULL, NULL, 0, 0);
  kc_tensor* in = kt_tensor(kt_f32, (int64_t[]){3, 4}, 2, NULL);
  kc_tensor* out = NULL;
  KC_CHECK_OK(kt_call1(kt_op("kt.Split"), (const kc_tensor* const*)&in, 1, NULL,
                       0, &out));
  const DLTensor* y = kt_dl(out);
  KC_CHECK_INT(y->ndim, 3);
  KC_CHECK_INT(y->shape[0], 3);
  KC_CHECK_INT(y->shape[1], 2);
  KC_CHECK_INT(y->shape[2], 2);
  kt_release(out);
  kt_release(in);
  in = kt_tensor(kt_f32, (int64_t[]){3}, 1, NULL);
  KC_CHECK_CODE(kt_call1(kt_op("kt.Split"), (const kc_tensor* const*)&in, 1,
                         NULL, 0, &out),
                KC_INVALID_ARGUMENT,
                "in the shape function: 3 is not evenly divisible by 2");
  kt_release(in);
}

KC_TEST(op_shape_fn_unchanged_needs_an_input) {
  kt_register_op("kt.Nothing", NULL, KT_SPECS("y: f32"), NULL,
                 kc_shape_fn_unchanged);
  kt_register_kernel("kt.Nothing", NULL, kt_zero_compute, NULL, NULL, NULL, 0,
                     0);
  kc_tensor* outs[1];
  int32_t n = 0;
  KC_CHECK_CODE(
      kc_op_call(kt_op("kt.Nothing"), NULL, 0, NULL, 0, NULL, outs, 1, &n),
      KC_INVALID_ARGUMENT,
      "kc_shape_fn_unchanged: op 'kt.Nothing' has no input");
}
