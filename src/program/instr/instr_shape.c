/* Moving elements: transpose, slice, concatenate, pad, reverse,
 * dynamic-slice and dynamic-update-slice. Each is one strided copy of a
 * box of elements, so every element type works (by its size). */
#include <stdio.h>
#include <stdlib.h>

#include "internal/common.h"
#include "program/instr/instr.h"

#define KC__MAX_RANK KC_TENSOR_MAX_NDIM

/* ---- plans -------------------------------------------------------------------- */

typedef struct kc__move_plan {
  size_t esize;
  kc__box box;          /* transpose, slice, reverse, pad's operand */
  /* transpose, slice, reverse: the box's bytes when it is one contiguous
   * run (a slice of leading rows, of one element), else 0 */
  size_t run_bytes;
  size_t out_bytes;     /* pad: filled first; dynamic-update-slice: copied */
  /* dynamic-slice and dynamic-update-slice: the start operands and the
   * limit each start is clamped to. */
  int32_t num_starts;
  int32_t first_start; /* operand of the first start index */
  DLDataType start_type;
  int64_t start_limit[KC__MAX_RANK];
  int64_t start_stride[KC__MAX_RANK]; /* of the sliced or updated array */
  /* concatenate: one box per operand */
  kc__box* boxes;
  size_t num_boxes;
} kc__move_plan;

static kc_status* kc__dims_error(const kc__instr* in, const char* what, const int64_t* want,
                                 int32_t rank, const kc_shape* got_shape) {
  kc_shape* w = NULL;
  KC_RETURN_IF_ERROR(kc_shape_create_array(kc_shape_get_dtype(got_shape), want, rank, &w));
  char ws[256], gs[256];
  kc_shape_format(w, ws, sizeof ws);
  kc_shape_format(got_shape, gs, sizeof gs);
  kc_shape_destroy(w);
  return kc__instr_error(in, KC_INVALID_ARGUMENT, "%s: expected %s, got %s", what, ws, gs);
}

/* The result must be `dims` of the operand's element type. */
static kc_status* kc__expect_result(const kc__instr* in, const kc_shape* operand,
                                    const int64_t* dims, int32_t rank) {
  const kc_shape* r = in->shape;
  bool ok = !kc_shape_is_tuple(r) && kc_shape_get_rank(r) == rank &&
            kc_dtype_equal(kc_shape_get_dtype(r), kc_shape_get_dtype(operand)) &&
            (rank == 0 || memcmp(kc_shape_get_dims(r), dims, (size_t)rank * sizeof(int64_t)) == 0);
  if (ok) return NULL;
  kc_shape* w = NULL;
  KC_RETURN_IF_ERROR(kc_shape_create_array(kc_shape_get_dtype(operand), dims, rank, &w));
  char ws[256], gs[256];
  kc_shape_format(w, ws, sizeof ws);
  kc_shape_format(r, gs, sizeof gs);
  kc_shape_destroy(w);
  return kc__instr_error(in, KC_INVALID_ARGUMENT, "expected a result of %s, got %s", ws, gs);
}

/* An I64 list attribute of exactly `rank` entries. */
static kc_status* kc__ints_of_rank(const kc__instr* in, const char* name, int32_t rank,
                                   bool optional, const int64_t** out) {
  size_t n;
  KC_RETURN_IF_ERROR(kc__instr_attr_ints(in, name, optional, out, &n));
  if (optional && n == 0 && !kc__instr_attr(in, name)) return NULL;
  if (n != (size_t)rank) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                      "attribute %s: expected %d entries (the operand's rank), got %zu", name,
                      rank, n);
  }
  return NULL;
}

static kc_status* kc__transpose_read(const kc_program* p, const kc__instr* in,
                                     kc__move_plan* plan) {
  const kc_shape* o = kc__instr_operand(p, in, 0);
  KC_RETURN_IF_ERROR(kc__instr_expect_array(in, o, "operand 0"));
  int32_t rank = kc_shape_get_rank(o);
  const int64_t* perm;
  KC_RETURN_IF_ERROR(kc__ints_of_rank(in, "dimensions", rank, false, &perm));
  bool seen[KC__MAX_RANK] = {false};
  int64_t in_stride[KC__MAX_RANK], dims[KC__MAX_RANK];
  kc__instr_strides(o, in_stride);
  for (int32_t k = 0; k < rank; ++k) {
    if (perm[k] < 0 || perm[k] >= rank || seen[perm[k]]) {
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                        "attribute dimensions: expected a permutation of 0 to %d, got %lld "
                        "at entry %d",
                        rank - 1, (long long)perm[k], k);
    }
    seen[perm[k]] = true;
    dims[k] = kc_shape_get_dims(o)[perm[k]];
    plan->box.src_stride[k] = in_stride[perm[k]];
  }
  KC_RETURN_IF_ERROR(kc__expect_result(in, o, dims, rank));
  plan->box.rank = rank;
  memcpy(plan->box.dims, dims, (size_t)rank * sizeof *dims);
  kc__instr_strides(in->shape, plan->box.dst_stride);
  return NULL;
}

static kc_status* kc__slice_read(const kc_program* p, const kc__instr* in, kc__move_plan* plan) {
  const kc_shape* o = kc__instr_operand(p, in, 0);
  KC_RETURN_IF_ERROR(kc__instr_expect_array(in, o, "operand 0"));
  int32_t rank = kc_shape_get_rank(o);
  const int64_t *start, *limit, *stride;
  KC_RETURN_IF_ERROR(kc__ints_of_rank(in, "start_indices", rank, false, &start));
  KC_RETURN_IF_ERROR(kc__ints_of_rank(in, "limit_indices", rank, false, &limit));
  KC_RETURN_IF_ERROR(kc__ints_of_rank(in, "strides", rank, true, &stride));
  int64_t in_stride[KC__MAX_RANK], dims[KC__MAX_RANK];
  kc__instr_strides(o, in_stride);
  plan->box.src_offset = 0;
  for (int32_t d = 0; d < rank; ++d) {
    int64_t st = stride ? stride[d] : 1;
    int64_t size = kc_shape_get_dims(o)[d];
    if (start[d] < 0 || limit[d] < start[d] || limit[d] > size || st < 1) {
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                        "slice of dimension %d: expected 0 <= start <= limit <= %lld and a "
                        "stride of at least 1, got [%lld:%lld:%lld]",
                        d, (long long)size, (long long)start[d], (long long)limit[d],
                        (long long)st);
    }
    dims[d] = limit[d] == start[d] ? 0 : (limit[d] - start[d] - 1) / st + 1;
    /* With one element or none the stride is never taken (and may be
     * larger than any offset); otherwise it is less than the dimension. */
    plan->box.src_stride[d] = in_stride[d] * (dims[d] <= 1 ? 1 : st);
    plan->box.src_offset += start[d] * in_stride[d];
  }
  KC_RETURN_IF_ERROR(kc__expect_result(in, o, dims, rank));
  plan->box.rank = rank;
  memcpy(plan->box.dims, dims, (size_t)rank * sizeof *dims);
  kc__instr_strides(in->shape, plan->box.dst_stride);
  return NULL;
}

static kc_status* kc__reverse_read(const kc_program* p, const kc__instr* in,
                                   kc__move_plan* plan) {
  const kc_shape* o = kc__instr_operand(p, in, 0);
  KC_RETURN_IF_ERROR(kc__instr_expect_array(in, o, "operand 0"));
  int32_t rank = kc_shape_get_rank(o);
  const int64_t* rev;
  size_t n;
  KC_RETURN_IF_ERROR(kc__instr_attr_ints(in, "dimensions", false, &rev, &n));
  KC_RETURN_IF_ERROR(kc__expect_result(in, o, kc_shape_get_dims(o), rank));
  plan->box.rank = rank;
  kc__instr_strides(o, plan->box.src_stride);
  kc__instr_strides(o, plan->box.dst_stride);
  memcpy(plan->box.dims, kc_shape_get_dims(o), (size_t)rank * sizeof(int64_t));
  bool seen[KC__MAX_RANK] = {false};
  for (size_t i = 0; i < n; ++i) {
    if (rev[i] < 0 || rev[i] >= rank || seen[rev[i]]) {
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                        "attribute dimensions: entry %zu: expected a distinct dimension of 0 "
                        "to %d, got %lld",
                        i, rank - 1, (long long)rev[i]);
    }
    seen[rev[i]] = true;
    int64_t d = rev[i];
    plan->box.src_offset += (plan->box.dims[d] - 1) * plan->box.src_stride[d];
    plan->box.src_stride[d] = -plan->box.src_stride[d];
  }
  return NULL;
}

static kc_status* kc__pad_read(const kc_program* p, const kc__instr* in, kc__move_plan* plan) {
  const kc_shape* o = kc__instr_operand(p, in, 0);
  const kc_shape* v = kc__instr_operand(p, in, 1);
  KC_RETURN_IF_ERROR(kc__instr_expect_array(in, o, "operand 0"));
  if (kc_shape_is_tuple(v) || kc_shape_get_rank(v) != 0 ||
      !kc_dtype_equal(kc_shape_get_dtype(v), kc_shape_get_dtype(o))) {
    char g[256];
    kc_shape_format(v, g, sizeof g);
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                      "operand 1 (the padding value): expected a scalar of the operand's "
                      "type, got %s",
                      g);
  }
  int32_t rank = kc_shape_get_rank(o);
  const int64_t *low, *high, *interior;
  KC_RETURN_IF_ERROR(kc__ints_of_rank(in, "edge_padding_low", rank, false, &low));
  KC_RETURN_IF_ERROR(kc__ints_of_rank(in, "edge_padding_high", rank, false, &high));
  KC_RETURN_IF_ERROR(kc__ints_of_rank(in, "interior_padding", rank, true, &interior));
  int64_t dims[KC__MAX_RANK], out_stride[KC__MAX_RANK], in_stride[KC__MAX_RANK];
  kc__instr_strides(o, in_stride);
  for (int32_t d = 0; d < rank; ++d) {
    int64_t size = kc_shape_get_dims(o)[d];
    int64_t gap = interior ? interior[d] : 0;
    if (gap < 0) {
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                        "interior padding of dimension %d: expected at least 0, got %lld", d,
                        (long long)gap);
    }
    /* Each term is bounded (a quarter of the int64 range) so that neither the
     * sum nor the placement arithmetic below can overflow; a result this
     * large could never be allocated anyway. */
    const int64_t bound = INT64_MAX / 4;
    if (low[d] < -bound || low[d] > bound || high[d] < -bound || high[d] > bound ||
        gap > bound || (size > 0 && size - 1 > bound / (gap + 1))) {
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                        "padding of dimension %d: low %lld, high %lld and interior %lld are "
                        "too large for a dimension of %lld",
                        d, (long long)low[d], (long long)high[d], (long long)gap,
                        (long long)size);
    }
    dims[d] = low[d] + high[d] + size + (size > 0 ? (size - 1) * gap : 0);
    if (dims[d] < 0) {
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                        "padding of dimension %d: the result would have %lld elements", d,
                        (long long)dims[d]);
    }
  }
  KC_RETURN_IF_ERROR(kc__expect_result(in, o, dims, rank));
  kc__instr_strides(in->shape, out_stride);
  /* The operand's elements that land inside the result (negative padding
   * crops): element i goes to low + i * (gap + 1). */
  plan->box.rank = rank;
  for (int32_t d = 0; d < rank; ++d) {
    int64_t gap = interior ? interior[d] : 0, step = gap + 1;
    int64_t size = kc_shape_get_dims(o)[d];
    int64_t first = low[d] >= 0 ? 0 : (-low[d] + step - 1) / step;
    int64_t last = size - 1; /* the last i with low + i * step < dims[d] */
    if (low[d] + last * step >= dims[d]) last = (dims[d] - 1 - low[d]) / step;
    if (dims[d] - 1 - low[d] < 0) last = -1;
    plan->box.dims[d] = last >= first ? last - first + 1 : 0;
    plan->box.src_stride[d] = in_stride[d];
    /* One element or none needs no stride; a huge gap must not overflow it. */
    plan->box.dst_stride[d] = plan->box.dims[d] > 1 ? out_stride[d] * step : 0;
    plan->box.src_offset += first * in_stride[d];
    plan->box.dst_offset += (low[d] + first * step) * out_stride[d];
  }
  plan->out_bytes = kc_shape_get_byte_size(in->shape);
  return NULL;
}

static kc_status* kc__concatenate_read(const kc_program* p, const kc__instr* in,
                                       kc__move_plan* plan) {
  const kc_shape* first = kc__instr_operand(p, in, 0);
  KC_RETURN_IF_ERROR(kc__instr_expect_array(in, first, "operand 0"));
  int32_t rank = kc_shape_get_rank(first);
  const int64_t* dimv;
  size_t n;
  KC_RETURN_IF_ERROR(kc__instr_attr_ints(in, "dimensions", false, &dimv, &n));
  if (n != 1 || dimv[0] < 0 || dimv[0] >= rank) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                      "attribute dimensions: expected one dimension of 0 to %d", rank - 1);
  }
  int64_t axis = dimv[0];
  int64_t dims[KC__MAX_RANK];
  memcpy(dims, kc_shape_get_dims(first), (size_t)rank * sizeof *dims);
  dims[axis] = 0;
  for (size_t i = 0; i < in->num_operands; ++i) {
    const kc_shape* o = kc__instr_operand(p, in, i);
    bool ok = !kc_shape_is_tuple(o) && kc_shape_get_rank(o) == rank &&
              kc_dtype_equal(kc_shape_get_dtype(o), kc_shape_get_dtype(first));
    for (int32_t d = 0; ok && d < rank; ++d) {
      ok = d == axis || kc_shape_get_dims(o)[d] == kc_shape_get_dims(first)[d];
    }
    if (!ok) {
      char what[96];
      snprintf(what, sizeof what, "operand %zu (dims other than %lld as operand 0's)", i,
               (long long)axis);
      int64_t want[KC__MAX_RANK];
      memcpy(want, kc_shape_get_dims(first), (size_t)rank * sizeof *want);
      if (!kc_shape_is_tuple(o) && kc_shape_get_rank(o) == rank) {
        want[axis] = kc_shape_get_dims(o)[axis];
      }
      return kc__dims_error(in, what, want, rank, o);
    }
    dims[axis] += kc_shape_get_dims(o)[axis];
  }
  KC_RETURN_IF_ERROR(kc__expect_result(in, first, dims, rank));
  if (!plan) return NULL;
  int64_t out_stride[KC__MAX_RANK];
  kc__instr_strides(in->shape, out_stride);
  int64_t at = 0;
  for (size_t i = 0; i < in->num_operands; ++i) {
    const kc_shape* o = kc__instr_operand(p, in, i);
    kc__box* b = &plan->boxes[i];
    b->rank = rank;
    memcpy(b->dims, kc_shape_get_dims(o), (size_t)rank * sizeof(int64_t));
    kc__instr_strides(o, b->src_stride);
    memcpy(b->dst_stride, out_stride, (size_t)rank * sizeof(int64_t));
    b->dst_offset = at * out_stride[axis];
    at += kc_shape_get_dims(o)[axis];
  }
  plan->num_boxes = in->num_operands;
  return NULL;
}

/* dynamic-slice(x, i0, i1, ...), dynamic_slice_sizes={...}, and
 * dynamic-update-slice(x, update, i0, i1, ...): scalar integer starts. */
static kc_status* kc__dynamic_read(const kc_program* p, const kc__instr* in,
                                   kc__move_plan* plan) {
  bool update = in->op == KC_OP_DYNAMIC_UPDATE_SLICE;
  const kc_shape* o = kc__instr_operand(p, in, 0);
  KC_RETURN_IF_ERROR(kc__instr_expect_array(in, o, "operand 0"));
  int32_t rank = kc_shape_get_rank(o);
  int32_t first_start = update ? 2 : 1;
  if (in->num_operands != (size_t)(first_start + rank)) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                      "expected %d operands (%s and one start index per dimension), got %zu",
                      first_start + rank, update ? "the operand, the update" : "the operand",
                      in->num_operands);
  }
  int64_t sizes[KC__MAX_RANK];
  const kc_shape* u = update ? kc__instr_operand(p, in, 1) : NULL;
  if (update) {
    bool ok = !kc_shape_is_tuple(u) && kc_shape_get_rank(u) == rank &&
              kc_dtype_equal(kc_shape_get_dtype(u), kc_shape_get_dtype(o));
    if (!ok) {
      char g[256];
      kc_shape_format(u, g, sizeof g);
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                        "operand 1 (the update): expected an array of the operand's rank and "
                        "type, got %s",
                        g);
    }
    memcpy(sizes, kc_shape_get_dims(u), (size_t)rank * sizeof *sizes);
    KC_RETURN_IF_ERROR(kc__expect_result(in, o, kc_shape_get_dims(o), rank));
  } else {
    const int64_t* s;
    KC_RETURN_IF_ERROR(kc__ints_of_rank(in, "dynamic_slice_sizes", rank, false, &s));
    memcpy(sizes, s, (size_t)rank * sizeof *sizes);
    KC_RETURN_IF_ERROR(kc__expect_result(in, o, sizes, rank));
  }
  DLDataType t0 = {0, 0, 0};
  for (int32_t d = 0; d < rank; ++d) {
    const kc_shape* s = kc__instr_operand(p, in, (size_t)(first_start + d));
    DLDataType t = kc_shape_get_dtype(s);
    bool ok = !kc_shape_is_tuple(s) && kc_shape_get_rank(s) == 0 &&
              (t.code == kDLInt || t.code == kDLUInt) && t.lanes == 1 &&
              (d == 0 || kc_dtype_equal(t, t0));
    if (!ok) {
      char g[256];
      kc_shape_format(s, g, sizeof g);
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                        "operand %d (start of dimension %d): expected an integer scalar of "
                        "one type for all starts, got %s",
                        first_start + d, d, g);
    }
    if (d == 0) t0 = t;
    int64_t size = kc_shape_get_dims(o)[d];
    if (sizes[d] < 0 || sizes[d] > size) {
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                        "dimension %d: expected a %s of 0 to %lld elements, got %lld", d,
                        update ? "update" : "slice", (long long)size, (long long)sizes[d]);
    }
    plan->start_limit[d] = size - sizes[d];
  }
  plan->num_starts = rank;
  plan->first_start = first_start;
  plan->start_type = t0;
  plan->box.rank = rank;
  memcpy(plan->box.dims, sizes, (size_t)rank * sizeof *sizes);
  kc__instr_strides(o, plan->start_stride);
  if (update) {
    kc__instr_strides(u, plan->box.src_stride);
    memcpy(plan->box.dst_stride, plan->start_stride, (size_t)rank * sizeof(int64_t));
  } else {
    memcpy(plan->box.src_stride, plan->start_stride, (size_t)rank * sizeof(int64_t));
    kc__instr_strides(in->shape, plan->box.dst_stride);
  }
  plan->out_bytes = kc_shape_get_byte_size(in->shape);
  return NULL;
}

static kc_status* kc__move_read(const kc_program* p, const kc__instr* in, kc__move_plan* plan) {
  plan->esize = kc_dtype_get_size(kc_shape_get_dtype(in->shape));
  switch (in->op) {
    case KC_OP_TRANSPOSE: return kc__transpose_read(p, in, plan);
    case KC_OP_SLICE: return kc__slice_read(p, in, plan);
    case KC_OP_REVERSE: return kc__reverse_read(p, in, plan);
    case KC_OP_PAD: return kc__pad_read(p, in, plan);
    case KC_OP_CONCATENATE: return kc__concatenate_read(p, in, plan->boxes ? plan : NULL);
    default: return kc__dynamic_read(p, in, plan);
  }
}

static kc_status* kc__move_verify(const kc_program* p, const kc__instr* in) {
  kc__move_plan plan;
  memset(&plan, 0, sizeof plan);
  return kc__move_read(p, in, &plan);
}

static kc_status* kc__move_prepare(const kc_program* p, const kc__instr* in,
                                   const kc__prepare_ctx* ctx, const void** out) {
  kc__move_plan* plan = kc__arena_alloc(ctx->arena, sizeof *plan);
  if (plan && in->op == KC_OP_CONCATENATE) {
    plan->boxes = kc__arena_alloc(ctx->arena, in->num_operands * sizeof *plan->boxes);
  }
  if (!plan || (in->op == KC_OP_CONCATENATE && !plan->boxes)) {
    return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  }
  KC_RETURN_IF_ERROR(kc__move_read(p, in, plan));
  int64_t run = kc__box_run(&plan->box);
  bool one_box = in->op == KC_OP_TRANSPOSE || in->op == KC_OP_SLICE || in->op == KC_OP_REVERSE;
  if (one_box && run > 0) plan->run_bytes = (size_t)run * plan->esize;
  *out = plan;
  return NULL;
}

/* ---- kernels ------------------------------------------------------------------- */

static kc_status* kc__move_kernel(const kc__instr_kernel_ctx* ctx, void* out,
                                  const void* const* ins) {
  const kc__move_plan* plan = ctx->data;
  switch (ctx->instr->op) {
    case KC_OP_CONCATENATE:
      for (size_t i = 0; i < plan->num_boxes; ++i) {
        kc__box_copy(&plan->boxes[i], ins[i], out, plan->esize);
      }
      return NULL;
    case KC_OP_PAD: {
      char* r = out;
      for (size_t at = 0; at < plan->out_bytes; at += plan->esize) {
        memcpy(r + at, ins[1], plan->esize);
      }
      kc__box_copy(&plan->box, ins[0], out, plan->esize);
      return NULL;
    }
    case KC_OP_DYNAMIC_SLICE:
    case KC_OP_DYNAMIC_UPDATE_SLICE: {
      /* Starts are clamped so that the box lies inside, as XLA does. */
      kc__box box = plan->box;
      int64_t offset = 0;
      for (int32_t d = 0; d < plan->num_starts; ++d) {
        int64_t s = kc__instr_load_index(ins[plan->first_start + d], plan->start_type);
        s = s < 0 ? 0 : s > plan->start_limit[d] ? plan->start_limit[d] : s;
        offset += s * plan->start_stride[d];
      }
      if (ctx->instr->op == KC_OP_DYNAMIC_SLICE) {
        box.src_offset = offset;
        kc__box_copy(&box, ins[0], out, plan->esize);
      } else {
        if (out != ins[0]) memcpy(out, ins[0], plan->out_bytes);
        box.dst_offset = offset;
        kc__box_copy(&box, ins[1], out, plan->esize);
      }
      return NULL;
    }
    default:
      if (plan->run_bytes) {
        memcpy((char*)out + plan->box.dst_offset * (int64_t)plan->esize,
               (const char*)ins[0] + plan->box.src_offset * (int64_t)plan->esize, plan->run_bytes);
      } else {
        kc__box_copy(&plan->box, ins[0], out, plan->esize);
      }
      return NULL;
  }
}

static const char* const kc__transpose_attrs[] = {"dimensions", NULL};
static const char* const kc__slice_attrs[] = {"start_indices", "limit_indices", "strides",
                                              NULL};
static const char* const kc__pad_attrs[] = {"edge_padding_low", "edge_padding_high",
                                            "interior_padding", NULL};
static const char* const kc__dynamic_slice_attrs[] = {"dynamic_slice_sizes", NULL};
static const char* const kc__no_attrs[] = {NULL};

#define KC__MOVE(OP, NAME, MIN, MAX, ATTRS)                                              \
  {.op = (OP), .name = (NAME), .min_operands = (MIN), .max_operands = (MAX), .attrs = (ATTRS), \
   .verify = kc__move_verify, .prepare = kc__move_prepare, .kernel = kc__move_kernel}

const kc__instr_def kc__instr_shape[] = {
    KC__MOVE(KC_OP_TRANSPOSE, "transpose", 1, 1, kc__transpose_attrs),
    KC__MOVE(KC_OP_SLICE, "slice", 1, 1, kc__slice_attrs),
    KC__MOVE(KC_OP_REVERSE, "reverse", 1, 1, kc__transpose_attrs),
    KC__MOVE(KC_OP_PAD, "pad", 2, 2, kc__pad_attrs),
    KC__MOVE(KC_OP_CONCATENATE, "concatenate", 1, -1, kc__transpose_attrs),
    KC__MOVE(KC_OP_DYNAMIC_SLICE, "dynamic-slice", 1, -1, kc__dynamic_slice_attrs),
    KC__MOVE(KC_OP_DYNAMIC_UPDATE_SLICE, "dynamic-update-slice", 2, -1, kc__no_attrs),
};
const size_t kc__instr_shape_count = KC__ARRAY_SIZE(kc__instr_shape);
#undef KC__MOVE

/* ---- broadcast ------------------------------------------------------------------ */

/* n copies of the element at `src` from `dst` on, by its size. */
static void kc__fill_elements(char* dst, const char* src, int64_t n, size_t esize) {
#define KC__FILL(ctype)                                   \
  do {                                                    \
    ctype v;                                              \
    memcpy(&v, src, sizeof v);                            \
    for (int64_t i = 0; i < n; ++i) {                     \
      memcpy(dst + (size_t)i * sizeof v, &v, sizeof v);   \
    }                                                     \
  } while (0)
  switch (esize) {
    case 1: memset(dst, *(const unsigned char*)src, (size_t)n); break;
    case 2: KC__FILL(uint16_t); break;
    case 4: KC__FILL(uint32_t); break;
    case 8: KC__FILL(uint64_t); break;
    default:
      for (int64_t i = 0; i < n; ++i) memcpy(dst + (size_t)i * esize, src, esize);
  }
#undef KC__FILL
}

/* n elements at src, stride `step` elements apart, into dst contiguously. */
static void kc__gather_strided(char* dst, const char* src, int64_t n, int64_t step, size_t esize) {
#define KC__GATHER(ctype)                                                          \
  for (int64_t i = 0; i < n; ++i) {                                                \
    ctype v;                                                                       \
    memcpy(&v, src + (size_t)(i * step) * sizeof v, sizeof v);                     \
    memcpy(dst + (size_t)i * sizeof v, &v, sizeof v);                              \
  }
  switch (esize) {
    case 2: KC__GATHER(uint16_t) break;
    case 4: KC__GATHER(uint32_t) break;
    case 8: KC__GATHER(uint64_t) break;
    default:
      for (int64_t i = 0; i < n; ++i) {
        memcpy(dst + (size_t)i * esize, src + (size_t)(i * step) * esize, esize);
      }
  }
#undef KC__GATHER
}

typedef struct kc__bcast {
  int32_t rank;
  int64_t dims[KC__MAX_RANK];
  int64_t src_stride[KC__MAX_RANK]; /* in elements; 0 along a broadcast dimension */
  size_t block[KC__MAX_RANK];       /* bytes of the result below each dimension */
  size_t esize;
} kc__bcast;

/* Dimension d and those inside it: a broadcast dimension is written once
 * and then copied from the result itself. */
static void kc__bcast_level(const kc__bcast* b, int32_t d, const char* src, char* dst) {
  int64_t n = b->dims[d];
  if (d == b->rank - 1) {
    if (b->src_stride[d] == 0) {
      kc__fill_elements(dst, src, n, b->esize);
    } else if (b->src_stride[d] == 1) {
      memcpy(dst, src, (size_t)n * b->esize);
    } else {
      kc__gather_strided(dst, src, n, b->src_stride[d], b->esize);
    }
    return;
  }
  size_t blk = b->block[d];
  if (b->src_stride[d] == 0) {
    kc__bcast_level(b, d + 1, src, dst);
    /* Doubling: each copy reads what is already written. */
    int64_t done = 1;
    while (done < n) {
      int64_t k = done < n - done ? done : n - done;
      memcpy(dst + (size_t)done * blk, dst, (size_t)k * blk);
      done += k;
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    kc__bcast_level(b, d + 1, src + (size_t)(i * b->src_stride[d]) * b->esize,
                    dst + (size_t)i * blk);
  }
}

void kc__broadcast_copy(const void* operand, int32_t in_rank, const int64_t* in_dims,
                        void* result, int32_t out_rank, const int64_t* out_dims,
                        const int64_t* map, size_t esize) {
  /* Nothing is zeroed whole: KC__MAX_RANK is large next to a small
   * broadcast's cost. */
  int64_t stride[KC__MAX_RANK];
  for (int32_t d = 0; d < out_rank; ++d) stride[d] = 0;
  int64_t running = 1;
  for (int32_t i = in_rank - 1; i >= 0; --i) {
    stride[map[i]] = in_dims[i] == 1 ? 0 : running;
    running *= in_dims[i];
  }
  /* Dimensions of one element dropped; neighbours merged when both are
   * broadcast or both walk the operand contiguously. */
  kc__bcast b;
  b.rank = 0;
  b.esize = esize;
  for (int32_t d = 0; d < out_rank; ++d) {
    if (out_dims[d] == 0) return;
    if (out_dims[d] == 1) continue;
    int32_t r = b.rank;
    if (r > 0 && ((stride[d] == 0 && b.src_stride[r - 1] == 0) ||
                  (stride[d] != 0 && b.src_stride[r - 1] == stride[d] * out_dims[d]))) {
      b.dims[r - 1] *= out_dims[d];
      b.src_stride[r - 1] = stride[d];
      continue;
    }
    b.dims[r] = out_dims[d];
    b.src_stride[r] = stride[d];
    b.rank++;
  }
  if (b.rank == 0) {
    memcpy(result, operand, esize);
    return;
  }
  size_t bytes = esize;
  for (int32_t d = b.rank - 1; d >= 0; --d) {
    b.block[d] = bytes;
    bytes *= (size_t)b.dims[d];
  }
  kc__bcast_level(&b, 0, operand, result);
}
