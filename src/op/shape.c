/* Shape inference: the context a shape function sees, and the shape
 * algebra it works with. Shapes live in the context's arena and die with
 * it, so a shape function never frees anything. */
#include <stdio.h>
#include <stdlib.h>

#include "op/op_internal.h"

/* ---- the arena --------------------------------------------------------- */

#define KC__ARENA_BLOCK 4096

void* kc__shape_ctx_alloc(kc_shape_ctx* ctx, size_t size) {
  size = (size + 7) & ~(size_t)7;
  if (ctx->inline_cap - ctx->inline_used >= size) {
    void* p = ctx->inline_buf + ctx->inline_used;
    ctx->inline_used += size;
    return p;
  }
  kc__arena_block* b = ctx->blocks;
  if (!b || b->cap - b->used < size) {
    size_t cap = size > KC__ARENA_BLOCK ? size : KC__ARENA_BLOCK;
    b = kc__malloc(sizeof *b + cap);
    if (!b) return NULL;
    b->next = ctx->blocks;
    b->used = 0;
    b->cap = cap;
    ctx->blocks = b;
  }
  void* p = (unsigned char*)b->data + b->used;
  b->used += size;
  return p;
}

void kc__shape_ctx_free_all(kc_shape_ctx* ctx) {
  while (ctx->blocks) {
    kc__arena_block* next = ctx->blocks->next;
    kc__free(ctx->blocks);
    ctx->blocks = next;
  }
}

/* ---- formatting, for messages ------------------------------------------ */

static const char* kc__shape_text(const kc_shape_ctx* ctx,
                                  const kc_shape_handle* s, char* buf,
                                  size_t cap) {
  if (s->rank < 0) {
    snprintf(buf, cap, "<unknown rank>");
    return buf;
  }
  size_t n = (size_t)snprintf(buf, cap, "[");
  for (int32_t i = 0; i < s->rank && n < cap; ++i) {
    if (s->dims[i] < KC_DIM_UNKNOWN) {
      char dim[200];
      kc__dim_format(ctx ? ctx->sym : NULL, s->dims[i], dim, sizeof dim);
      kc__appendf(buf, cap, &n, "%s%s", i ? "," : "", dim);
    } else if (s->dims[i] < 0) {
      kc__appendf(buf, cap, &n, "%s?", i ? "," : "");
    } else {
      kc__appendf(buf, cap, &n, "%s%lld", i ? "," : "", (long long)s->dims[i]);
    }
  }
  kc__appendf(buf, cap, &n, "]");
  return buf;
}

static kc_status* kc__bad_shape(const char* what) {
  return kc_status_create(KC_INVALID_ARGUMENT, "%s is NULL", what);
}

/* ---- the context ------------------------------------------------------- */

int32_t kc_shape_ctx_get_input_count(const kc_shape_ctx* ctx) {
  return ctx ? ctx->num_inputs : 0;
}

int32_t kc_shape_ctx_get_output_count(const kc_shape_ctx* ctx) {
  return ctx ? ctx->num_outputs : 0;
}

const kc_shape_handle* kc_shape_ctx_get_input(const kc_shape_ctx* ctx,
                                              int32_t index) {
  if (!ctx || index < 0 || index >= ctx->num_inputs) return NULL;
  return &ctx->inputs[index];
}

DLDataType kc_shape_ctx_get_input_dtype(const kc_shape_ctx* ctx,
                                        int32_t index) {
  if (!ctx || index < 0 || index >= ctx->num_inputs) {
    return kc_dtype_make(0, 0, 0);
  }
  return ctx->input_dtypes[index];
}

DLDataType kc_shape_ctx_get_output_dtype(const kc_shape_ctx* ctx,
                                         int32_t index) {
  if (!ctx || index < 0 || index >= ctx->num_outputs) {
    return kc_dtype_make(0, 0, 0);
  }
  return ctx->output_dtypes[index];
}

const kc_op_attrs* kc_shape_ctx_get_attrs(const kc_shape_ctx* ctx) {
  return ctx ? ctx->attrs : NULL;
}

void* kc_shape_ctx_get_data(const kc_shape_ctx* ctx) {
  return ctx ? ctx->def->shape_data : NULL;
}

kc_status* kc_shape_ctx_set_output(kc_shape_ctx* ctx, int32_t index,
                                   const kc_shape_handle* shape) {
  if (!ctx || !shape) return kc__bad_shape(ctx ? "shape" : "ctx");
  if (index < 0 || index >= ctx->num_outputs) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "setting output %d: the op has %d output "
                            "tensor(s) here",
                            index, ctx->num_outputs);
  }
  ctx->outputs[index] = shape;
  return NULL;
}

kc_status* kc_shape_ctx_set_output_dtype(kc_shape_ctx* ctx, int32_t index,
                                         DLDataType dtype) {
  if (!ctx) return kc__bad_shape("ctx");
  if (index < 0 || index >= ctx->num_outputs) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "setting the dtype of output %d: the op has %d "
                            "output tensor(s) here",
                            index, ctx->num_outputs);
  }
  if (!kc_dtype_equal(dtype, ctx->output_dtypes[index])) {
    char want[64], got[64];
    kc_dtype_format(ctx->output_dtypes[index], want, sizeof want);
    kc_dtype_format(dtype, got, sizeof got);
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "output %d: the definition makes it %s, the "
                            "shape function says %s",
                            index, want, got);
  }
  return NULL;
}

/* ---- shapes ------------------------------------------------------------ */

int32_t kc_shape_handle_get_rank(const kc_shape_handle* shape) {
  return shape ? shape->rank : KC_RANK_UNKNOWN;
}

int64_t kc_shape_handle_get_dim(const kc_shape_handle* shape, int32_t index) {
  if (!shape || shape->rank < 0) return KC_DIM_UNKNOWN;
  if (index < 0) index += shape->rank;
  if (index < 0 || index >= shape->rank) return KC_DIM_UNKNOWN;
  return shape->dims[index];
}

/* A new shape of `rank` (>= 0) dims, all unknown. */
static kc_status* kc__new_shape(kc_shape_ctx* ctx, int32_t rank,
                                kc_shape_handle** out) {
  if (rank > KC_TENSOR_MAX_NDIM) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "a shape has at most %d dims, got %d",
                            KC_TENSOR_MAX_NDIM, rank);
  }
  size_t size = sizeof(kc_shape_handle) + (size_t)(rank > 0 ? rank : 0) * 8;
  kc_shape_handle* s = kc__shape_ctx_alloc(ctx, size);
  if (!s) {
    return kc_status_create(KC_RESOURCE_EXHAUSTED,
                            "out of memory in shape inference");
  }
  int64_t* dims = (int64_t*)(void*)(s + 1);
  for (int32_t i = 0; i < rank; ++i) dims[i] = KC_DIM_UNKNOWN;
  s->rank = rank;
  s->dims = rank >= 0 ? dims : NULL;
  *out = s;
  return NULL;
}

static int64_t* kc__dims(kc_shape_handle* s) {
  return (int64_t*)(uintptr_t)s->dims;
}

kc_status* kc_shape_ctx_make_shape(kc_shape_ctx* ctx, int32_t rank,
                                   const int64_t* dims,
                                   const kc_shape_handle** out_shape) {
  if (!ctx || !out_shape) return kc__bad_shape(ctx ? "out_shape" : "ctx");
  if (rank < KC_RANK_UNKNOWN) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "making a shape: rank %d (expected >= 0, or "
                            "KC_RANK_UNKNOWN)",
                            rank);
  }
  for (int32_t i = 0; dims && i < rank; ++i) {
    size_t sym;
    if (dims[i] < KC_DIM_UNKNOWN && !kc__sym_decode(ctx->sym, dims[i], &sym)) {
      if (ctx->sym) return kc__dim_check(ctx, dims[i], "making a shape");
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "making a shape: dim %d is %lld (expected >= 0, "
                              "or KC_DIM_UNKNOWN)",
                              i, (long long)dims[i]);
    }
  }
  kc_shape_handle* s = NULL;
  KC_RETURN_IF_ERROR(kc__new_shape(ctx, rank, &s));
  if (dims && rank > 0) memcpy(kc__dims(s), dims, (size_t)rank * 8);
  *out_shape = s;
  return NULL;
}

static kc_status* kc__rank_check(kc_shape_ctx* ctx,
                                 const kc_shape_handle* shape, int32_t rank,
                                 int which, const kc_shape_handle** out) {
  if (!ctx || !shape || !out) return kc__bad_shape("a shape argument");
  if (rank < 0 || rank > KC_TENSOR_MAX_NDIM) {
    return kc_status_create(KC_INVALID_ARGUMENT, "rank %d: expected 0 to %d",
                            rank, KC_TENSOR_MAX_NDIM);
  }
  if (shape->rank < 0) {
    if (which != 0) {
      *out = shape;
      return NULL;
    }
    kc_shape_handle* s;
    KC_RETURN_IF_ERROR(kc__new_shape(ctx, rank, &s));
    *out = s;
    return NULL;
  }
  bool ok = which == 0  ? shape->rank == rank
            : which > 0 ? shape->rank >= rank
                        : shape->rank <= rank;
  if (!ok) {
    char text[400];
    return kc_status_create(
        KC_INVALID_ARGUMENT, "expected rank %s%d, got rank %d (shape %s)",
        which == 0  ? ""
        : which > 0 ? ">= "
                    : "<= ",
        rank, shape->rank, kc__shape_text(ctx, shape, text, sizeof text));
  }
  *out = shape;
  return NULL;
}

kc_status* kc_shape_ctx_with_rank(kc_shape_ctx* ctx,
                                  const kc_shape_handle* shape, int32_t rank,
                                  const kc_shape_handle** out_shape) {
  return kc__rank_check(ctx, shape, rank, 0, out_shape);
}

kc_status* kc_shape_ctx_with_rank_at_least(kc_shape_ctx* ctx,
                                           const kc_shape_handle* shape,
                                           int32_t rank,
                                           const kc_shape_handle** out_shape) {
  return kc__rank_check(ctx, shape, rank, 1, out_shape);
}

kc_status* kc_shape_ctx_with_rank_at_most(kc_shape_ctx* ctx,
                                          const kc_shape_handle* shape,
                                          int32_t rank,
                                          const kc_shape_handle** out_shape) {
  return kc__rank_check(ctx, shape, rank, -1, out_shape);
}

/* merge in a symbolic run: dim by dim, as kc_shape_ctx_merge_dim. */
static kc_status* kc__merge_symbolic(kc_shape_ctx* ctx,
                                     const kc_shape_handle* a,
                                     const kc_shape_handle* b,
                                     const kc_shape_handle** out_shape) {
  kc_shape_handle* s = NULL;
  KC_RETURN_IF_ERROR(kc__new_shape(ctx, a->rank, &s));
  bool a_enough = true;
  for (int32_t i = 0; i < a->rank; ++i) {
    kc_status* st = kc_shape_ctx_merge_dim(ctx, a->dims[i], b->dims[i],
                                           &kc__dims(s)[i]);
    if (st) {
      char ta[400], tb[400];
      return kc_status_add_context(st, "cannot merge %s with %s: dimension %d",
                                   kc__shape_text(ctx, a, ta, sizeof ta),
                                   kc__shape_text(ctx, b, tb, sizeof tb), i);
    }
    if (s->dims[i] != a->dims[i]) a_enough = false;
  }
  *out_shape = a_enough ? a : s;
  return NULL;
}

kc_status* kc_shape_ctx_merge(kc_shape_ctx* ctx, const kc_shape_handle* a,
                              const kc_shape_handle* b,
                              const kc_shape_handle** out_shape) {
  if (!ctx || !a || !b || !out_shape) return kc__bad_shape("a shape argument");
  if (a->rank < 0 || b->rank < 0) {
    *out_shape = a->rank < 0 ? b : a;
    return NULL;
  }
  char ta[400], tb[400];
  if (a->rank != b->rank) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "cannot merge %s with %s: rank %d != %d",
                            kc__shape_text(ctx, a, ta, sizeof ta),
                            kc__shape_text(ctx, b, tb, sizeof tb), a->rank, b->rank);
  }
  if (ctx->sym) return kc__merge_symbolic(ctx, a, b, out_shape);
  bool a_enough = true;
  for (int32_t i = 0; i < a->rank; ++i) {
    int64_t x = a->dims[i], y = b->dims[i];
    if (x >= 0 && y >= 0 && x != y) {
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "cannot merge %s with %s: dimension %d: %lld != "
                              "%lld",
                              kc__shape_text(ctx, a, ta, sizeof ta),
                              kc__shape_text(ctx, b, tb, sizeof tb), i, (long long)x,
                              (long long)y);
    }
    if (x < 0 && y >= 0) a_enough = false;
  }
  if (a_enough) {
    *out_shape = a;
    return NULL;
  }
  kc_shape_handle* s = NULL;
  KC_RETURN_IF_ERROR(kc__new_shape(ctx, a->rank, &s));
  for (int32_t i = 0; i < a->rank; ++i) {
    kc__dims(s)[i] = a->dims[i] >= 0 ? a->dims[i] : b->dims[i];
  }
  *out_shape = s;
  return NULL;
}

kc_status* kc_shape_ctx_broadcast(kc_shape_ctx* ctx, const kc_shape_handle* a,
                                  const kc_shape_handle* b,
                                  const kc_shape_handle** out_shape) {
  if (!ctx || !a || !b || !out_shape) return kc__bad_shape("a shape argument");
  kc_shape_handle* s = NULL;
  if (a->rank < 0 || b->rank < 0) {
    KC_RETURN_IF_ERROR(kc__new_shape(ctx, KC_RANK_UNKNOWN, &s));
    *out_shape = s;
    return NULL;
  }
  int32_t rank = a->rank > b->rank ? a->rank : b->rank;
  KC_RETURN_IF_ERROR(kc__new_shape(ctx, rank, &s));
  for (int32_t i = 0; i < rank; ++i) {
    /* Aligned from the right; a missing dim acts as 1. */
    int32_t ia = i - (rank - a->rank), ib = i - (rank - b->rank);
    int64_t x = ia >= 0 ? a->dims[ia] : 1;
    int64_t y = ib >= 0 ? b->dims[ib] : 1;
    int64_t d;
    if (ctx->sym && (x < KC_DIM_UNKNOWN || y < KC_DIM_UNKNOWN)) {
      KC_RETURN_IF_ERROR(kc__sym_broadcast_dim(ctx, x, y, &d));
    } else if (x == 1) {
      d = y;
    } else if (y == 1) {
      d = x;
    } else if (x < 0 || y < 0) {
      /* Unknown against a known dim other than 1: the known one, or the
       * call fails at run time; both unknown stays unknown. */
      d = x < 0 ? y : x;
    } else if (x == y) {
      d = x;
    } else {
      char ta[400], tb[400];
      return kc_status_create(KC_INVALID_ARGUMENT,
                              "cannot broadcast %s with %s: dimension %d of "
                              "the result: %lld vs %lld",
                              kc__shape_text(ctx, a, ta, sizeof ta),
                              kc__shape_text(ctx, b, tb, sizeof tb), i, (long long)x,
                              (long long)y);
    }
    kc__dims(s)[i] = d;
  }
  *out_shape = s;
  return NULL;
}

kc_status* kc_shape_ctx_concatenate(kc_shape_ctx* ctx, const kc_shape_handle* a,
                                    const kc_shape_handle* b,
                                    const kc_shape_handle** out_shape) {
  if (!ctx || !a || !b || !out_shape) return kc__bad_shape("a shape argument");
  kc_shape_handle* s = NULL;
  int32_t rank =
      a->rank < 0 || b->rank < 0 ? KC_RANK_UNKNOWN : a->rank + b->rank;
  KC_RETURN_IF_ERROR(kc__new_shape(ctx, rank, &s));
  if (rank > 0) {
    if (a->rank) memcpy(kc__dims(s), a->dims, (size_t)a->rank * 8);
    if (b->rank) memcpy(kc__dims(s) + a->rank, b->dims, (size_t)b->rank * 8);
  }
  *out_shape = s;
  return NULL;
}

kc_status* kc_shape_ctx_subshape(kc_shape_ctx* ctx,
                                 const kc_shape_handle* shape, int32_t start,
                                 int32_t end,
                                 const kc_shape_handle** out_shape) {
  if (!ctx || !shape || !out_shape) return kc__bad_shape("a shape argument");
  if (shape->rank < 0) {
    if (start == 0 && end >= KC_TENSOR_MAX_NDIM) {
      *out_shape = shape;
      return NULL;
    }
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "dims [%d, %d) of a shape of unknown rank", start,
                            end);
  }
  int32_t r = shape->rank;
  if (start < 0) start = start + r < 0 ? 0 : start + r;
  if (end < 0) end = end + r < 0 ? 0 : end + r;
  if (start > r) start = r;
  if (end > r) end = r;
  if (end < start) end = start;
  kc_shape_handle* s = NULL;
  KC_RETURN_IF_ERROR(kc__new_shape(ctx, end - start, &s));
  if (end > start) {
    memcpy(kc__dims(s), shape->dims + start, (size_t)(end - start) * 8);
  }
  *out_shape = s;
  return NULL;
}

kc_status* kc_shape_ctx_replace_dim(kc_shape_ctx* ctx,
                                    const kc_shape_handle* shape, int32_t index,
                                    int64_t dim,
                                    const kc_shape_handle** out_shape) {
  if (!ctx || !shape || !out_shape) return kc__bad_shape("a shape argument");
  char text[400];
  int32_t i = index < 0 ? index + shape->rank : index;
  if (shape->rank < 0 || i < 0 || i >= shape->rank) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "replacing dim %d of shape %s: out of range", index,
                            kc__shape_text(ctx, shape, text, sizeof text));
  }
  size_t sym;
  if (dim < KC_DIM_UNKNOWN && !kc__sym_decode(ctx->sym, dim, &sym)) {
    if (ctx->sym) return kc__dim_check(ctx, dim, "replacing a dim");
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "replacing dim %d: %lld is not a dimension", index,
                            (long long)dim);
  }
  kc_shape_handle* s = NULL;
  KC_RETURN_IF_ERROR(kc__new_shape(ctx, shape->rank, &s));
  memcpy(kc__dims(s), shape->dims, (size_t)shape->rank * 8);
  kc__dims(s)[i] = dim;
  *out_shape = s;
  return NULL;
}

/* ---- dimension arithmetic ---------------------------------------------- */

/* Both operands are dims of this context: numbers, KC_DIM_UNKNOWN, or (in
 * a symbolic run) its symbolic dims. */
static kc_status* kc__dims_in(const kc_shape_ctx* ctx, int64_t a, int64_t b,
                              int64_t* out, const char* what) {
  if (!out) return kc__bad_shape("out_dim");
  if (ctx && ctx->sym) {
    KC_RETURN_IF_ERROR(kc__dim_check(ctx, a, what));
    return kc__dim_check(ctx, b, what);
  }
  if (a < KC_DIM_UNKNOWN || b < KC_DIM_UNKNOWN) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "%s %lld and %lld: not dimensions", what,
                            (long long)a, (long long)b);
  }
  return NULL;
}

kc_status* kc_shape_ctx_merge_dim(kc_shape_ctx* ctx, int64_t a, int64_t b,
                                  int64_t* out_dim) {
  KC_RETURN_IF_ERROR(kc__dims_in(ctx, a, b, out_dim, "merging"));
  if (a < KC_DIM_UNKNOWN || b < KC_DIM_UNKNOWN) {
    return kc__sym_merge_dim(ctx, a, b, out_dim);
  }
  if (a >= 0 && b >= 0 && a != b) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "dimensions do not match: %lld != %lld",
                            (long long)a, (long long)b);
  }
  *out_dim = a >= 0 ? a : b;
  return NULL;
}

kc_status* kc_shape_ctx_add_dims(kc_shape_ctx* ctx, int64_t a, int64_t b,
                                 int64_t* out_dim) {
  KC_RETURN_IF_ERROR(kc__dims_in(ctx, a, b, out_dim, "adding"));
  if (a == KC_DIM_UNKNOWN || b == KC_DIM_UNKNOWN) {
    *out_dim = KC_DIM_UNKNOWN;
    return NULL;
  }
  if (a < 0 || b < 0) {  /* symbolic */
    return kc__sym_binary(ctx, KC_DIM_EXPR_ADD, a, b, false, out_dim);
  }
  if (__builtin_add_overflow(a, b, out_dim)) {
    return kc_status_create(KC_OUT_OF_RANGE, "%lld + %lld overflows",
                            (long long)a, (long long)b);
  }
  return NULL;
}

kc_status* kc_shape_ctx_subtract_dims(kc_shape_ctx* ctx, int64_t a, int64_t b,
                                      int64_t* out_dim) {
  KC_RETURN_IF_ERROR(kc__dims_in(ctx, a, b, out_dim, "subtracting"));
  if (a == KC_DIM_UNKNOWN || b == KC_DIM_UNKNOWN) {
    *out_dim = KC_DIM_UNKNOWN;
    return NULL;
  }
  if (a < 0 || b < 0) {  /* symbolic */
    return kc__sym_binary(ctx, KC_DIM_EXPR_SUBTRACT, a, b, false, out_dim);
  }
  if (b > a) {
    return kc_status_create(KC_INVALID_ARGUMENT, "%lld - %lld is negative",
                            (long long)a, (long long)b);
  }
  *out_dim = a - b;
  return NULL;
}

kc_status* kc_shape_ctx_multiply_dims(kc_shape_ctx* ctx, int64_t a, int64_t b,
                                      int64_t* out_dim) {
  KC_RETURN_IF_ERROR(kc__dims_in(ctx, a, b, out_dim, "multiplying"));
  /* 0 times anything is 0, even unknown. */
  if (a == 0 || b == 0) {
    *out_dim = 0;
    return NULL;
  }
  if (a == KC_DIM_UNKNOWN || b == KC_DIM_UNKNOWN) {
    *out_dim = KC_DIM_UNKNOWN;
    return NULL;
  }
  if (a < 0 || b < 0) {  /* symbolic */
    return kc__sym_binary(ctx, KC_DIM_EXPR_MULTIPLY, a, b, false, out_dim);
  }
  if (__builtin_mul_overflow(a, b, out_dim)) {
    return kc_status_create(KC_OUT_OF_RANGE, "%lld * %lld overflows",
                            (long long)a, (long long)b);
  }
  return NULL;
}

kc_status* kc_shape_ctx_divide_dims(kc_shape_ctx* ctx, int64_t a, int64_t b,
                                    bool evenly, int64_t* out_dim) {
  KC_RETURN_IF_ERROR(kc__dims_in(ctx, a, b, out_dim, "dividing"));
  if (b == 0) {
    char text[200];
    kc__dim_format(ctx ? ctx->sym : NULL, a, text, sizeof text);
    return kc_status_create(KC_INVALID_ARGUMENT, "dividing %s by zero", text);
  }
  if (a == KC_DIM_UNKNOWN || b == KC_DIM_UNKNOWN) {
    *out_dim = KC_DIM_UNKNOWN;
    return NULL;
  }
  if (a < 0 || b < 0) {  /* symbolic */
    return kc__sym_binary(ctx, KC_DIM_EXPR_DIVIDE, a, b, evenly, out_dim);
  }
  if (evenly && a % b != 0) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "%lld is not evenly divisible by %lld",
                            (long long)a, (long long)b);
  }
  *out_dim = a / b;
  return NULL;
}

kc_status* kc_shape_fn_unchanged(kc_shape_ctx* ctx) {
  if (!ctx) return kc__bad_shape("ctx");
  if (ctx->num_inputs < 1) {
    return kc_status_create(KC_INVALID_ARGUMENT,
                            "kc_shape_fn_unchanged: op %s has no input to "
                            "copy the shape of",
                            KC__QS(ctx->def->name));
  }
  for (int32_t i = 0; i < ctx->num_outputs; ++i)
    ctx->outputs[i] = &ctx->inputs[0];
  return NULL;
}
