/*
 * Ready-made shape functions (op.h, "Ready-made shape functions"): the
 * shapes most ops have, written once. Each computes only through the
 * kc_shape_ctx helpers, so it is right on symbolic dims too, and an op
 * that uses one is registered with KC_OP_SYMBOLIC_SHAPES (op.c).
 */
#include <stdio.h>

#include "op/op_internal.h"

/* "[2,3]" or "[?,3]" (unknown and symbolic dims as '?'), or "[...]"
 * for an unknown rank, into buf. */
static const char* kc__dims_of(const kc_shape_handle* s, char* buf, size_t cap) {
  size_t len = 0;
  int32_t rank = kc_shape_handle_get_rank(s);
  if (rank == KC_RANK_UNKNOWN) {
    kc__appendf(buf, cap, &len, "[...]");
    return buf;
  }
  kc__appendf(buf, cap, &len, "[");
  for (int32_t i = 0; i < rank; ++i) {
    int64_t d = kc_shape_handle_get_dim(s, i);
    if (d >= 0) {
      kc__appendf(buf, cap, &len, "%s%lld", i ? "," : "", (long long)d);
    } else {
      kc__appendf(buf, cap, &len, "%s?", i ? "," : "");
    }
  }
  kc__appendf(buf, cap, &len, "]");
  return buf;
}

static kc_status* kc__no_inputs(const kc_shape_ctx* ctx, const char* fn, int32_t need) {
  return kc_status_create(KC_INVALID_ARGUMENT, "%s: op %s has %d inputs, it needs %d", fn,
                          KC__QS(ctx->def->name), ctx->num_inputs, need);
}

/* Sets every output to `shape`. */
static kc_status* kc__set_all(kc_shape_ctx* ctx, const kc_shape_handle* shape) {
  for (int32_t i = 0; i < ctx->num_outputs; ++i) {
    KC_RETURN_IF_ERROR(kc_shape_ctx_set_output(ctx, i, shape));
  }
  return NULL;
}

kc_status* kc_shape_fn_elementwise(kc_shape_ctx* ctx) {
  if (!ctx) return kc_status_create(KC_INVALID_ARGUMENT, "kc_shape_fn_elementwise: NULL ctx");
  if (ctx->num_inputs < 1) return kc__no_inputs(ctx, "kc_shape_fn_elementwise", 1);
  const kc_shape_handle* shape = kc_shape_ctx_get_input(ctx, 0);
  for (int32_t i = 1; i < ctx->num_inputs; ++i) {
    const kc_shape_handle* in = kc_shape_ctx_get_input(ctx, i);
    kc_status* st = kc_shape_ctx_merge(ctx, shape, in, &shape);
    if (st) {
      char a[128], b[128];
      return kc_status_add_context(st, "input %d has shape %s, input 0 %s: the op's inputs "
                                   "must all have one shape",
                                   i, kc__dims_of(in, b, sizeof b),
                                   kc__dims_of(kc_shape_ctx_get_input(ctx, 0), a, sizeof a));
    }
  }
  return kc__set_all(ctx, shape);
}

kc_status* kc_shape_fn_like_inputs(kc_shape_ctx* ctx) {
  if (!ctx) return kc_status_create(KC_INVALID_ARGUMENT, "kc_shape_fn_like_inputs: NULL ctx");
  if (ctx->num_inputs < ctx->num_outputs) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_shape_fn_like_inputs: op %s has %d outputs but %d inputs: "
                            "output i takes input i's shape",
                            KC__QS(ctx->def->name), ctx->num_outputs, ctx->num_inputs);
  }
  for (int32_t i = 0; i < ctx->num_outputs; ++i) {
    KC_RETURN_IF_ERROR(kc_shape_ctx_set_output(ctx, i, kc_shape_ctx_get_input(ctx, i)));
  }
  return NULL;
}

kc_status* kc_shape_fn_broadcast(kc_shape_ctx* ctx) {
  if (!ctx) return kc_status_create(KC_INVALID_ARGUMENT, "kc_shape_fn_broadcast: NULL ctx");
  if (ctx->num_inputs < 1) return kc__no_inputs(ctx, "kc_shape_fn_broadcast", 1);
  const kc_shape_handle* shape = kc_shape_ctx_get_input(ctx, 0);
  for (int32_t i = 1; i < ctx->num_inputs; ++i) {
    const kc_shape_handle* in = kc_shape_ctx_get_input(ctx, i);
    /* The helper's message names both shapes. */
    kc_status* st = kc_shape_ctx_broadcast(ctx, shape, in, &shape);
    if (st) return kc_status_add_context(st, "input %d", i);
  }
  return kc__set_all(ctx, shape);
}

kc_status* kc_shape_fn_matmul(kc_shape_ctx* ctx) {
  if (!ctx) return kc_status_create(KC_INVALID_ARGUMENT, "kc_shape_fn_matmul: NULL ctx");
  if (ctx->num_inputs < 2) return kc__no_inputs(ctx, "kc_shape_fn_matmul", 2);
  const kc_shape_handle *a = NULL, *b = NULL, *out = NULL;
  kc_status* st = kc_shape_ctx_with_rank_at_least(ctx, kc_shape_ctx_get_input(ctx, 0), 2, &a);
  if (st) return kc_status_add_context(st, "kc_shape_fn_matmul: input 0 ([..., M, K])");
  st = kc_shape_ctx_with_rank_at_least(ctx, kc_shape_ctx_get_input(ctx, 1), 2, &b);
  if (st) return kc_status_add_context(st, "kc_shape_fn_matmul: input 1 ([..., K, N])");
  if (kc_shape_handle_get_rank(a) == KC_RANK_UNKNOWN ||
      kc_shape_handle_get_rank(b) == KC_RANK_UNKNOWN) {
    KC_RETURN_IF_ERROR(kc_shape_ctx_make_shape(ctx, KC_RANK_UNKNOWN, NULL, &out));
    return kc__set_all(ctx, out);
  }
  int64_t k = 0;
  st = kc_shape_ctx_merge_dim(ctx, kc_shape_handle_get_dim(a, -1), kc_shape_handle_get_dim(b, -2),
                              &k);
  if (st) {
    char sa[128], sb[128];
    return kc_status_add_context(st, "kc_shape_fn_matmul: the inner dims of %s and %s",
                                 kc__dims_of(a, sa, sizeof sa), kc__dims_of(b, sb, sizeof sb));
  }
  const kc_shape_handle *batch_a = NULL, *batch_b = NULL, *batch = NULL, *mn = NULL;
  KC_RETURN_IF_ERROR(kc_shape_ctx_subshape(ctx, a, 0, -2, &batch_a));
  KC_RETURN_IF_ERROR(kc_shape_ctx_subshape(ctx, b, 0, -2, &batch_b));
  st = kc_shape_ctx_broadcast(ctx, batch_a, batch_b, &batch);
  if (st) {
    char sa[128], sb[128];
    return kc_status_add_context(st, "kc_shape_fn_matmul: the batch dims of %s and %s",
                                 kc__dims_of(a, sa, sizeof sa), kc__dims_of(b, sb, sizeof sb));
  }
  const int64_t dims[2] = {kc_shape_handle_get_dim(a, -2), kc_shape_handle_get_dim(b, -1)};
  KC_RETURN_IF_ERROR(kc_shape_ctx_make_shape(ctx, 2, dims, &mn));
  KC_RETURN_IF_ERROR(kc_shape_ctx_concatenate(ctx, batch, mn, &out));
  return kc__set_all(ctx, out);
}

/* The axes of a reduction: attr `axis` (an int) or `axes` (a list), each
 * in [-rank, rank), none twice, into reduced[0..rank). */
static kc_status* kc__reduced_axes(kc_shape_ctx* ctx, int32_t rank, bool* reduced) {
  const kc_op_attrs* attrs = kc_shape_ctx_get_attrs(ctx);
  int64_t axes[KC_TENSOR_MAX_NDIM];
  int32_t count = 0;
  /* Which of the two the op declares is asked of its definition, not
   * found by a failed read: a NOT_FOUND status lists the op's attrs, and
   * formatting it at every call cost a small reduction a third of its
   * time. */
  kc_status* st = NULL;
  if (kc__op_find_attr(ctx->def, kc_sv("axis")) >= 0) {
    st = kc_op_attrs_get_int(attrs, "axis", &axes[0]);
    count = 1;
  } else {
    st = kc_op_attrs_get_int_list(attrs, "axes", axes, KC_TENSOR_MAX_NDIM, &count);
    if (st && kc_status_get_code(st) == KC_NOT_FOUND) {
      kc_status_destroy(st);
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "kc_shape_fn_reduce: op %s declares neither an attr 'axis' (int) "
                              "nor 'axes' (list(int))",
                              KC__QS(ctx->def->name));
    }
    if (!st && count > KC_TENSOR_MAX_NDIM) {
      st = kc_status_create(KC_INVALID_ARGUMENT, "kc_shape_fn_reduce: %d axes for rank %d", count,
                            rank);
    }
  }
  if (st) return st;
  for (int32_t i = 0; i < rank; ++i) reduced[i] = false;
  for (int32_t i = 0; i < count; ++i) {
    int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (axis < 0 || axis >= rank) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "kc_shape_fn_reduce: axis %lld is out of range for rank %d "
                              "(expected -%d to %d)",
                              (long long)axes[i], rank, rank, rank - 1);
    }
    if (reduced[axis]) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "kc_shape_fn_reduce: axis %lld is given twice", (long long)axis);
    }
    reduced[axis] = true;
  }
  return NULL;
}

kc_status* kc_shape_fn_reduce(kc_shape_ctx* ctx) {
  if (!ctx) return kc_status_create(KC_INVALID_ARGUMENT, "kc_shape_fn_reduce: NULL ctx");
  if (ctx->num_inputs < 1) return kc__no_inputs(ctx, "kc_shape_fn_reduce", 1);
  const kc_shape_handle* in = kc_shape_ctx_get_input(ctx, 0);
  bool keepdims = false;
  kc_status* st = kc_op_attrs_get_bool(kc_shape_ctx_get_attrs(ctx), "keepdims", &keepdims);
  if (st && kc_status_get_code(st) != KC_NOT_FOUND) return st;
  kc_status_destroy(st);
  const kc_shape_handle* out = NULL;
  int32_t rank = kc_shape_handle_get_rank(in);
  if (rank == KC_RANK_UNKNOWN) {
    KC_RETURN_IF_ERROR(kc_shape_ctx_make_shape(ctx, KC_RANK_UNKNOWN, NULL, &out));
    return kc__set_all(ctx, out);
  }
  bool reduced[KC_TENSOR_MAX_NDIM];
  KC_RETURN_IF_ERROR(kc__reduced_axes(ctx, rank, reduced));
  int64_t dims[KC_TENSOR_MAX_NDIM];
  int32_t n = 0;
  for (int32_t i = 0; i < rank; ++i) {
    if (!reduced[i]) {
      dims[n++] = kc_shape_handle_get_dim(in, i);
    } else if (keepdims) {
      dims[n++] = 1;
    }
  }
  KC_RETURN_IF_ERROR(kc_shape_ctx_make_shape(ctx, n, dims, &out));
  return kc__set_all(ctx, out);
}
