/* gather and scatter, in XLA's general form: every dimension number
 * (offset/window dimensions, collapsed/inserted dimensions, the map from
 * the index vector to operand dimensions, index_vector_dim, batching
 * dimensions, slice sizes). gather clamps each start so that its slice
 * lies inside the operand; scatter skips the whole window of an index
 * whose window would not lie inside. scatter's update computation runs
 * as a native loop where it is one add, multiply, maximum or minimum of
 * its two parameters (and or or for pred) or returns the update (an
 * assignment, of any element type); any other, or one on complex
 * elements, runs per element. */
#include <stdio.h>
#include <stdlib.h>

#include "internal/common.h"
#include "kernels/half.h"
#include "kernels/xla_arith.h"
#include "program/instr/instr.h"

#define KC__GS_RANK KC_TENSOR_MAX_NDIM
#define KC__GS_MAX_ARRAYS 32 /* arrays one scatter updates together */

typedef struct kc__gs_plan {
  bool scatter;
  size_t n; /* gather: 1; scatter: the arrays updated */
  size_t esize[KC__GS_MAX_ARRAYS];
  size_t operand_bytes[KC__GS_MAX_ARRAYS];
  /* The operand and where an index may start along each of its
   * dimensions: 0 to start_limit[d]. */
  int32_t operand_rank;
  int64_t operand_stride[KC__GS_RANK];
  int64_t start_limit[KC__GS_RANK];
  /* The index vector: index_len entries index_step apart, entry j the
   * start along operand dimension index_dim[j]. */
  DLDataType index_type;
  size_t index_esize;
  int64_t index_len;
  int64_t index_step;
  int32_t index_dim[KC__GS_RANK];
  /* The batch positions (the indices' dimensions but index_vector_dim):
   * their sizes, strides in the indices and in the result (gather) or
   * updates (scatter), and the operand batching dimension each sets
   * (-1: none). */
  int32_t batch_rank;
  int64_t batch_dims[KC__GS_RANK];
  int64_t batch_index_stride[KC__GS_RANK];
  int64_t batch_data_stride[KC__GS_RANK];
  int32_t batch_operand_dim[KC__GS_RANK];
  int64_t batch_count;
  /* One slice or window: from the operand to the result (gather), from
   * the updates to the result (scatter); offsets set per index. */
  kc__box window;
  int64_t window_count;
  /* scatter's update: a native op (and its operand order), an
   * assignment, or the computation compiled. */
  int32_t op;
  bool swapped; /* op(update, current) */
  bool assign;
  int type;
  int half; /* 1: f16, 2: bf16, computed in f32 and rounded once per update */
  kc_executable* combiner;
  const kc_shape* scalars[2 * KC__GS_MAX_ARRAYS];
} kc__gs_plan;

/* ---- reading and checking ------------------------------------------------------------- */

/* The list attribute `name`: entries in [0, bound), distinct, and
 * ascending where `ascending`; `what` names the dimensions' owner. */
static kc_status* kc__gs_dims(const kc__instr* in, const char* name, bool optional,
                              int32_t bound, const char* what, bool ascending,
                              const int64_t** out, size_t* out_count) {
  KC_RETURN_IF_ERROR(kc__instr_attr_ints(in, name, optional, out, out_count));
  const int64_t* v = *out;
  for (size_t i = 0; i < *out_count; ++i) {
    if (v[i] < 0 || v[i] >= bound) {
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                             "attribute %s: entry %zu: expected a dimension of %s (0 to %d), "
                             "got %lld",
                             name, i, what, bound - 1, (long long)v[i]);
    }
    for (size_t j = 0; j < i; ++j) {
      if (v[j] == v[i]) {
        return kc__instr_error(in, KC_INVALID_ARGUMENT,
                               "attribute %s: entry %zu: expected distinct dimensions, got %lld "
                               "again",
                               name, i, (long long)v[i]);
      }
    }
    if (ascending && i > 0 && v[i] < v[i - 1]) {
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                             "attribute %s: entry %zu: expected ascending dimensions, got %lld "
                             "after %lld",
                             name, i, (long long)v[i], (long long)v[i - 1]);
    }
  }
  return NULL;
}

/* "entry" or "entries", for a count. */
static const char* kc__gs_entries(size_t n) { return n == 1 ? "entry" : "entries"; }

static bool kc__gs_has(const int64_t* v, size_t n, int64_t d) {
  for (size_t i = 0; i < n; ++i) {
    if (v[i] == d) return true;
  }
  return false;
}

/* An optional true/false attribute (a hint: read, not acted on). */
static kc_status* kc__gs_hint(const kc__instr* in, const char* name) {
  const kc_attr* a = kc__instr_attr(in, name);
  if (a && a->type != KC_ATTR_BOOL) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT, "attribute %s: expected true or false",
                           name);
  }
  return NULL;
}

/* The index operand, index_vector_dim, the map from the index vector to
 * operand dimensions (`map_name`) and the batching dimensions
 * (`obd_name` of the operand, `ibd_name` of the indices): what gather and
 * scatter share. Fills the index and batch fields of `plan` but for the
 * batch positions' data strides; *out_obd gives the operand's batching
 * dimensions. */
static kc_status* kc__gs_read_indices(const kc_program* p, const kc__instr* in, size_t at,
                                      const kc_shape* operand, const char* map_name,
                                      const char* obd_name, const char* ibd_name,
                                      kc__gs_plan* plan, const int64_t** out_obd,
                                      size_t* out_num_obd) {
  const kc_shape* idx = kc__instr_operand(p, in, at);
  char what[48];
  snprintf(what, sizeof what, "operand %zu (the indices)", at);
  KC_RETURN_IF_ERROR(kc__instr_expect_array(in, idx, what));
  DLDataType it = kc_shape_get_dtype(idx);
  if ((it.code != kDLInt && it.code != kDLUInt) || it.lanes != 1) {
    char b[32];
    return kc__instr_error(in, KC_INVALID_ARGUMENT, "%s: expected an integer type, got %s", what,
                           kc__instr_dtype_text(it, b, sizeof b));
  }
  plan->index_type = it;
  plan->index_esize = kc_dtype_get_size(it);
  int32_t irank = kc_shape_get_rank(idx);
  const int64_t* idims = kc_shape_get_dims(idx);
  int32_t orank = kc_shape_get_rank(operand);
  const int64_t* odims = kc_shape_get_dims(operand);
  int64_t ivd;
  KC_RETURN_IF_ERROR(kc__instr_attr_int(in, "index_vector_dim", &ivd));
  if (ivd < 0 || ivd > irank) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "attribute index_vector_dim: expected 0 to %d (a dimension of the "
                           "indices, or their rank for an index vector of one entry), got %lld",
                           irank, (long long)ivd);
  }
  int64_t istride[KC__GS_RANK];
  kc__instr_strides(idx, istride);
  plan->index_len = ivd == irank ? 1 : idims[ivd];
  plan->index_step = ivd == irank ? 0 : istride[ivd];
  /* The batching dimensions, then the map. */
  const int64_t *obd, *ibd, *map;
  size_t num_obd, num_ibd, num_map;
  KC_RETURN_IF_ERROR(kc__gs_dims(in, obd_name, true, orank, "the operand", true, &obd, &num_obd));
  KC_RETURN_IF_ERROR(kc__gs_dims(in, ibd_name, true, irank, "the indices", false, &ibd, &num_ibd));
  if (num_ibd != num_obd) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "attribute %s: expected %zu %s (one per entry of %s), got %zu",
                           ibd_name, num_obd, kc__gs_entries(num_obd), obd_name, num_ibd);
  }
  for (size_t i = 0; i < num_ibd; ++i) {
    if (ibd[i] == ivd) {
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                             "attribute %s: entry %zu: expected a dimension other than "
                             "index_vector_dim, got %lld",
                             ibd_name, i, (long long)ibd[i]);
    }
    if (idims[ibd[i]] != odims[obd[i]]) {
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                             "attribute %s: entry %zu: expected a dimension of the indices of "
                             "size %lld (operand dimension %lld), got dimension %lld of size %lld",
                             ibd_name, i, (long long)odims[obd[i]], (long long)obd[i],
                             (long long)ibd[i], (long long)idims[ibd[i]]);
    }
  }
  KC_RETURN_IF_ERROR(kc__gs_dims(in, map_name, false, orank, "the operand", false, &map, &num_map));
  if ((int64_t)num_map != plan->index_len) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "attribute %s: expected %lld %s (the length of the index vector, "
                           "%s), got %zu",
                           map_name, (long long)plan->index_len,
                           kc__gs_entries((size_t)plan->index_len),
                           ivd == irank ? "1 as index_vector_dim is the indices' rank"
                                        : "the indices' size along index_vector_dim",
                           num_map);
  }
  for (size_t j = 0; j < num_map; ++j) {
    if (kc__gs_has(obd, num_obd, map[j])) {
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                             "attribute %s: entry %zu: expected a dimension not in %s, got %lld",
                             map_name, j, obd_name, (long long)map[j]);
    }
    plan->index_dim[j] = (int32_t)map[j];
  }
  /* The batch positions: the indices' dimensions but index_vector_dim. */
  plan->batch_rank = 0;
  plan->batch_count = 1;
  for (int32_t d = 0; d < irank; ++d) {
    if (d == ivd) continue;
    int32_t k = plan->batch_rank++;
    plan->batch_dims[k] = idims[d];
    plan->batch_index_stride[k] = istride[d];
    plan->batch_operand_dim[k] = -1;
    for (size_t i = 0; i < num_ibd; ++i) {
      if (ibd[i] == d) plan->batch_operand_dim[k] = (int32_t)obd[i];
    }
    plan->batch_count *= idims[d];
  }
  plan->operand_rank = orank;
  kc__instr_strides(operand, plan->operand_stride);
  *out_obd = obd;
  *out_num_obd = num_obd;
  return NULL;
}

/* Drops the window's dimensions of size 1, which never move. */
static void kc__gs_squeeze(kc__gs_plan* plan) {
  kc__box* b = &plan->window;
  int32_t r = 0;
  plan->window_count = 1;
  for (int32_t k = 0; k < b->rank; ++k) {
    plan->window_count *= b->dims[k];
    if (b->dims[k] == 1) continue;
    b->dims[r] = b->dims[k];
    b->src_stride[r] = b->src_stride[k];
    b->dst_stride[r] = b->dst_stride[k];
    r++;
  }
  b->rank = r;
}

/* slice_sizes, one per operand dimension and no larger than it; the
 * collapsed and batching dimensions of slice size 1. */
static kc_status* kc__gather_slice(const kc__instr* in, const kc_shape* x, const int64_t* obd,
                                   size_t num_obd, kc__gs_plan* plan, const int64_t** out_sizes,
                                   const int64_t** out_collapsed, size_t* out_num_collapsed) {
  int32_t orank = kc_shape_get_rank(x);
  const int64_t* odims = kc_shape_get_dims(x);
  const int64_t *sizes, *collapsed;
  size_t num_sizes, num_collapsed;
  KC_RETURN_IF_ERROR(kc__instr_attr_ints(in, "slice_sizes", false, &sizes, &num_sizes));
  if (num_sizes != (size_t)orank) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "attribute slice_sizes: expected %d %s (one per operand "
                           "dimension), got %zu",
                           orank, kc__gs_entries((size_t)orank), num_sizes);
  }
  for (int32_t d = 0; d < orank; ++d) {
    if (sizes[d] < 0 || sizes[d] > odims[d]) {
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                             "attribute slice_sizes: entry %d: expected 0 to %lld (the operand's "
                             "size), got %lld",
                             d, (long long)odims[d], (long long)sizes[d]);
    }
    plan->start_limit[d] = odims[d] - sizes[d];
  }
  KC_RETURN_IF_ERROR(kc__gs_dims(in, "collapsed_slice_dims", false, orank, "the operand", true,
                                 &collapsed, &num_collapsed));
  for (size_t i = 0; i < num_collapsed; ++i) {
    if (kc__gs_has(obd, num_obd, collapsed[i])) {
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                             "attribute collapsed_slice_dims: entry %zu: expected a dimension not "
                             "in operand_batching_dims, got %lld",
                             i, (long long)collapsed[i]);
    }
    if (sizes[collapsed[i]] != 1) {
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                             "attribute collapsed_slice_dims: entry %zu: expected a dimension of "
                             "slice size 1, got dimension %lld of slice size %lld",
                             i, (long long)collapsed[i], (long long)sizes[collapsed[i]]);
    }
  }
  for (size_t i = 0; i < num_obd; ++i) {
    if (sizes[obd[i]] != 1) {
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                             "attribute operand_batching_dims: entry %zu: expected a dimension of "
                             "slice size 1, got dimension %lld of slice size %lld",
                             i, (long long)obd[i], (long long)sizes[obd[i]]);
    }
  }
  *out_sizes = sizes;
  *out_collapsed = collapsed;
  *out_num_collapsed = num_collapsed;
  return NULL;
}

/* The result: the batch positions in order where offset_dims leaves room,
 * the slice's kept dimensions (`kept`, of the operand) in order at
 * offset_dims; then the plan's slice and its strides into the result. */
static kc_status* kc__gather_result(const kc__instr* in, DLDataType t, const int64_t* sizes,
                                    const int32_t* kept, const int64_t* offset,
                                    size_t num_offset, int32_t rrank, kc__gs_plan* plan) {
  int64_t want[KC__GS_RANK];
  int32_t b = 0, w = 0;
  for (int32_t d = 0; d < rrank; ++d) {
    want[d] = kc__gs_has(offset, num_offset, d) ? sizes[kept[w++]] : plan->batch_dims[b++];
  }
  const kc_shape* r = in->shape;
  bool ok = kc_dtype_equal(kc_shape_get_dtype(r), t) && kc_shape_get_rank(r) == rrank &&
            (rrank == 0 || memcmp(kc_shape_get_dims(r), want, (size_t)rrank * sizeof *want) == 0);
  if (!ok) {
    kc_shape* ws = NULL;
    KC_RETURN_IF_ERROR(kc_shape_create_array(t, want, rrank, &ws));
    char wb[256], gb[256];
    kc_shape_format(ws, wb, sizeof wb);
    kc_shape_destroy(ws);
    kc_shape_format(r, gb, sizeof gb);
    return kc__instr_error(in, KC_INVALID_ARGUMENT, "expected the result %s, got %s", wb, gb);
  }
  int64_t rstride[KC__GS_RANK];
  kc__instr_strides(r, rstride);
  b = 0;
  for (int32_t d = 0; d < rrank; ++d) {
    if (!kc__gs_has(offset, num_offset, d)) plan->batch_data_stride[b++] = rstride[d];
  }
  plan->window.rank = (int32_t)num_offset;
  for (size_t k = 0; k < num_offset; ++k) {
    plan->window.dims[k] = sizes[kept[k]];
    plan->window.src_stride[k] = plan->operand_stride[kept[k]];
    plan->window.dst_stride[k] = rstride[offset[k]];
  }
  kc__gs_squeeze(plan);
  plan->esize[0] = kc_dtype_get_size(t);
  return NULL;
}

static kc_status* kc__gather_read(const kc_program* p, const kc__instr* in, kc__gs_plan* plan) {
  const kc_shape* x = kc__instr_operand(p, in, 0);
  KC_RETURN_IF_ERROR(kc__instr_expect_array(in, x, "operand 0"));
  KC_RETURN_IF_ERROR(kc__instr_expect_array(in, in->shape, "the result"));
  KC_RETURN_IF_ERROR(kc__gs_hint(in, "indices_are_sorted"));
  plan->n = 1;
  int32_t orank = kc_shape_get_rank(x);
  const int64_t *obd = NULL, *sizes = NULL, *collapsed = NULL, *offset = NULL;
  size_t num_obd = 0, num_collapsed = 0, num_offset = 0;
  KC_RETURN_IF_ERROR(kc__gs_read_indices(p, in, 1, x, "start_index_map", "operand_batching_dims",
                                         "start_indices_batching_dims", plan, &obd, &num_obd));
  KC_RETURN_IF_ERROR(
      kc__gather_slice(in, x, obd, num_obd, plan, &sizes, &collapsed, &num_collapsed));
  size_t want_offset = (size_t)orank - num_collapsed - num_obd;
  int32_t rrank = plan->batch_rank + (int32_t)want_offset;
  KC_RETURN_IF_ERROR(kc__instr_attr_ints(in, "offset_dims", false, &offset, &num_offset));
  if (num_offset != want_offset) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "attribute offset_dims: expected %zu %s (the operand's rank %d "
                           "less %zu collapsed and %zu batching dimensions), got %zu",
                           want_offset, kc__gs_entries(want_offset), orank, num_collapsed,
                           num_obd, num_offset);
  }
  if (rrank > KC__GS_RANK) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT, "a result of rank %d: at most %d", rrank,
                           KC__GS_RANK);
  }
  KC_RETURN_IF_ERROR(kc__gs_dims(in, "offset_dims", false, rrank, "the result", true, &offset,
                                 &num_offset));
  int32_t kept[KC__GS_RANK];
  int32_t num_kept = 0;
  for (int32_t d = 0; d < orank; ++d) {
    if (!kc__gs_has(collapsed, num_collapsed, d) && !kc__gs_has(obd, num_obd, d)) {
      kept[num_kept++] = d;
    }
  }
  return kc__gather_result(in, kc_shape_get_dtype(x), sizes, kept, offset, num_offset, rrank,
                           plan);
}

/* The op of an update computation that is `op(p0, p1)` or `op(p1, p0)`
 * of its two scalar parameters, for the ops with a native loop, or an
 * assignment (its result is the update, parameter N + k for array k). */
static void kc__scatter_native(const kc_program* c, kc__gs_plan* plan) {
  const kc__instr* root = &c->instrs[c->root];
  size_t n = plan->n;
  plan->op = 0;
  plan->assign = false;
  if (n == 1 && root->op == KC__OP_PARAMETER) {
    plan->assign = root->number == 1;
    return;
  }
  if (n > 1 && root->op == KC__OP_TUPLE && root->num_operands == n) {
    bool assign = true;
    for (size_t k = 0; k < n && assign; ++k) {
      const kc__instr* e = &c->instrs[root->operands[k]];
      assign = e->op == KC__OP_PARAMETER && e->number == (int64_t)(n + k);
    }
    plan->assign = assign;
    return;
  }
  if (n != 1 || c->count != 3 || root->num_operands != 2) return;
  const kc__instr* a = &c->instrs[root->operands[0]];
  const kc__instr* b = &c->instrs[root->operands[1]];
  if (a->op != KC__OP_PARAMETER || b->op != KC__OP_PARAMETER || a->number == b->number) return;
  int32_t op = root->op;
  bool pred = plan->type == KC__E_pred;
  bool native = op == KC_OP_MAXIMUM || op == KC_OP_MINIMUM ||
                (!pred && (op == KC_OP_ADD || op == KC_OP_MULTIPLY)) ||
                (pred && (op == KC_OP_AND || op == KC_OP_OR));
  if (!native || (plan->type == KC__E_NONE && !plan->half)) return;
  plan->op = op;
  plan->swapped = a->number == 1;
}

/* The update computation: N current values, then N updates, each a
 * scalar of its array's type, giving N new values. The plan keeps the
 * computation's parameter shapes (they live as long as the program). */
static kc_status* kc__scatter_read_computation(const kc_program* p, const kc__instr* in,
                                               kc__gs_plan* plan) {
  const kc_program* c = in->computations[0];
  size_t n = plan->n;
  if (kc_program_get_parameter_count(c) != 2 * n) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "to_apply '%s': expected %zu scalar parameters (%zu current value%s, "
                           "then %zu update%s), got %zu",
                           kc_program_get_name(c), 2 * n, n, n == 1 ? "" : "s", n,
                           n == 1 ? "" : "s", kc_program_get_parameter_count(c));
  }
  for (size_t k = 0; k < 2 * n; ++k) {
    const kc_shape* got = kc_program_get_parameter_shape(c, k);
    DLDataType t = kc_shape_get_dtype(kc__instr_operand(p, in, k % n));
    if (kc_shape_is_tuple(got) || kc_shape_get_rank(got) != 0 ||
        !kc_dtype_equal(kc_shape_get_dtype(got), t)) {
      char b[32], g[256];
      kc_shape_format(got, g, sizeof g);
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                             "to_apply '%s': parameter %zu: expected %s[], got %s",
                             kc_program_get_name(c), k, kc__instr_dtype_text(t, b, sizeof b), g);
    }
    plan->scalars[k] = got;
  }
  const kc_shape* rr = kc_program_get_result_shape(c);
  bool ok = n == 1 ? kc_shape_equal(rr, plan->scalars[0])
                   : kc_shape_is_tuple(rr) && kc_shape_get_tuple_size(rr) == n;
  for (size_t k = 0; ok && n > 1 && k < n; ++k) {
    ok = kc_shape_equal(kc_shape_get_element(rr, k), plan->scalars[k]);
  }
  if (!ok) {
    char g[256];
    kc_shape_format(rr, g, sizeof g);
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "to_apply '%s': expected %s of the operands' element types, got %s",
                           kc_program_get_name(c), n == 1 ? "a scalar" : "a tuple of scalars", g);
  }
  kc__scatter_native(c, plan);
  return NULL;
}

/* The N arrays of one dims, their updates (of their element types and
 * one dims) and the result (the array, or a tuple of the N arrays). */
static kc_status* kc__scatter_arrays(const kc_program* p, const kc__instr* in,
                                     kc__gs_plan* plan) {
  size_t n = plan->n;
  const kc_shape* x = kc__instr_operand(p, in, 0);
  const kc_shape* u = kc__instr_operand(p, in, n + 1);
  char what[48];
  KC_RETURN_IF_ERROR(kc__instr_expect_array(in, x, "operand 0"));
  snprintf(what, sizeof what, "operand %zu (updates 0)", n + 1);
  KC_RETURN_IF_ERROR(kc__instr_expect_array(in, u, what));
  if ((n == 1) == kc_shape_is_tuple(in->shape) ||
      (n > 1 && kc_shape_get_tuple_size(in->shape) != n)) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT, "scatter of %zu array%s: expected %s result",
                           n, n == 1 ? "" : "s",
                           n == 1 ? "an array" : "a tuple of one array per operand as its");
  }
  for (size_t k = 0; k < n; ++k) {
    const kc_shape* o = kc__instr_operand(p, in, k);
    const kc_shape* v = kc__instr_operand(p, in, n + 1 + k);
    const kc_shape* r = n == 1 ? in->shape : kc_shape_get_element(in->shape, k);
    char g[256], w[256], b[32];
    snprintf(what, sizeof what, "operand %zu", k);
    KC_RETURN_IF_ERROR(kc__instr_expect_array(in, o, what));
    if (!kc__shape_same_dims(o, x)) {
      kc_shape_format(o, g, sizeof g);
      return kc__instr_error(in, KC_INVALID_ARGUMENT, "%s: expected the dims of operand 0, got %s",
                             what, g);
    }
    DLDataType t = kc_shape_get_dtype(o);
    bool ok = !kc_shape_is_tuple(v) && kc_dtype_equal(kc_shape_get_dtype(v), t) &&
              kc__shape_same_dims(v, u);
    if (!ok) {
      kc_shape_format(v, g, sizeof g);
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                             "operand %zu (updates %zu): expected %s elements and the dims of "
                             "updates 0, got %s",
                             n + 1 + k, k, kc__instr_dtype_text(t, b, sizeof b), g);
    }
    if (!kc_shape_equal(r, o)) {
      kc_shape_format(o, w, sizeof w);
      kc_shape_format(r, g, sizeof g);
      return kc__instr_error(in, KC_INVALID_ARGUMENT, "result %zu: expected %s, got %s", k, w, g);
    }
    plan->esize[k] = kc_dtype_get_size(t);
    plan->operand_bytes[k] = kc_shape_get_byte_size(o);
  }
  DLDataType t = kc_shape_get_dtype(x);
  plan->type = kc__instr_num_type(t);
  bool small = t.bits == 16 && t.lanes == 1;
  plan->half = small && t.code == kDLFloat ? 1 : small && t.code == kDLBfloat ? 2 : 0;
  return NULL;
}

/* The updates' dimensions: the scatter dimensions of the batch positions'
 * sizes, in order; at update_window_dims (`window`), the window
 * dimensions, no larger than the operand dimensions (`kept`) they map to.
 * Sets the plan's window, its strides and where each start may lie. */
static kc_status* kc__scatter_updates(const kc__instr* in, const kc_shape* x, const kc_shape* u,
                                      const int32_t* kept, const int64_t* window,
                                      size_t num_window, kc__gs_plan* plan) {
  size_t at = plan->n + 1;
  int32_t urank = kc_shape_get_rank(u);
  const int64_t* udims = kc_shape_get_dims(u);
  const int64_t* odims = kc_shape_get_dims(x);
  for (int32_t d = 0; d < kc_shape_get_rank(x); ++d) plan->start_limit[d] = odims[d] - 1;
  int64_t ustride[KC__GS_RANK];
  kc__instr_strides(u, ustride);
  int32_t b = 0, w = 0;
  for (int32_t d = 0; d < urank; ++d) {
    if (kc__gs_has(window, num_window, d)) {
      int32_t od = kept[w];
      if (udims[d] > odims[od]) {
        return kc__instr_error(in, KC_INVALID_ARGUMENT,
                               "operand %zu (updates 0): dimension %d (window dimension %d): "
                               "expected at most %lld (operand dimension %d), got %lld",
                               at, d, w, (long long)odims[od], od, (long long)udims[d]);
      }
      plan->window.dims[w] = udims[d];
      plan->window.src_stride[w] = ustride[d];
      plan->window.dst_stride[w] = plan->operand_stride[od];
      plan->start_limit[od] = odims[od] - udims[d];
      w++;
    } else {
      if (udims[d] != plan->batch_dims[b]) {
        return kc__instr_error(in, KC_INVALID_ARGUMENT,
                               "operand %zu (updates 0): dimension %d (scatter dimension %d): "
                               "expected %lld, the indices' size there, got %lld",
                               at, d, b, (long long)plan->batch_dims[b], (long long)udims[d]);
      }
      plan->batch_data_stride[b++] = ustride[d];
    }
  }
  plan->window.rank = w;
  kc__gs_squeeze(plan);
  return NULL;
}

static kc_status* kc__scatter_read(const kc_program* p, const kc__instr* in, kc__gs_plan* plan) {
  size_t count = in->num_operands;
  if (count % 2 == 0 || count / 2 > KC__GS_MAX_ARRAYS) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "scatter: expected N operands, the indices, then N updates (N up to "
                           "%d), got %zu operands",
                           KC__GS_MAX_ARRAYS, count);
  }
  size_t n = count / 2;
  plan->scatter = true;
  plan->n = n;
  KC_RETURN_IF_ERROR(kc__gs_hint(in, "indices_are_sorted"));
  KC_RETURN_IF_ERROR(kc__gs_hint(in, "unique_indices"));
  KC_RETURN_IF_ERROR(kc__scatter_arrays(p, in, plan));
  const kc_shape* x = kc__instr_operand(p, in, 0);
  const kc_shape* u = kc__instr_operand(p, in, n + 1);
  int32_t orank = kc_shape_get_rank(x);
  const int64_t *obd = NULL, *inserted = NULL, *window = NULL;
  size_t num_obd = 0, num_inserted = 0, num_window = 0;
  KC_RETURN_IF_ERROR(kc__gs_read_indices(p, in, n, x, "scatter_dims_to_operand_dims",
                                         "input_batching_dims", "scatter_indices_batching_dims",
                                         plan, &obd, &num_obd));
  KC_RETURN_IF_ERROR(kc__gs_dims(in, "inserted_window_dims", false, orank, "the operand", true,
                                 &inserted, &num_inserted));
  for (size_t i = 0; i < num_inserted; ++i) {
    if (kc__gs_has(obd, num_obd, inserted[i])) {
      return kc__instr_error(in, KC_INVALID_ARGUMENT,
                             "attribute inserted_window_dims: entry %zu: expected a dimension not "
                             "in input_batching_dims, got %lld",
                             i, (long long)inserted[i]);
    }
  }
  size_t want_window = (size_t)orank - num_inserted - num_obd;
  KC_RETURN_IF_ERROR(kc__instr_attr_ints(in, "update_window_dims", false, &window, &num_window));
  if (num_window != want_window) {
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "attribute update_window_dims: expected %zu %s (the operand's "
                           "rank %d less %zu inserted and %zu batching dimensions), got %zu",
                           want_window, kc__gs_entries(want_window), orank, num_inserted,
                           num_obd, num_window);
  }
  int32_t urank = kc_shape_get_rank(u);
  int32_t want_urank = plan->batch_rank + (int32_t)want_window;
  if (urank != want_urank) {
    char g[256];
    kc_shape_format(u, g, sizeof g);
    return kc__instr_error(in, KC_INVALID_ARGUMENT,
                           "operand %zu (updates 0): expected rank %d (%zu window and %d scatter "
                           "dimensions), got %s",
                           n + 1, want_urank, want_window, plan->batch_rank, g);
  }
  KC_RETURN_IF_ERROR(kc__gs_dims(in, "update_window_dims", false, urank, "the updates", true,
                                 &window, &num_window));
  int32_t kept[KC__GS_RANK];
  int32_t num_kept = 0;
  for (int32_t d = 0; d < orank; ++d) {
    if (!kc__gs_has(inserted, num_inserted, d) && !kc__gs_has(obd, num_obd, d)) {
      kept[num_kept++] = d;
    }
  }
  return kc__scatter_updates(in, x, u, kept, window, num_window, plan);
}

static kc_status* kc__gs_read(const kc_program* p, const kc__instr* in, kc__gs_plan* plan) {
  if (in->op == KC_OP_GATHER) return kc__gather_read(p, in, plan);
  KC_RETURN_IF_ERROR(kc__scatter_read(p, in, plan));
  return kc__scatter_read_computation(p, in, plan);
}

static kc_status* kc__gs_verify(const kc_program* p, const kc__instr* in) {
  kc__gs_plan* plan = kc__calloc(1, sizeof *plan);
  if (!plan) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  kc_status* st = kc__gs_read(p, in, plan);
  kc__free(plan);
  return st;
}

static void kc__gs_plan_free(void* thing) {
  kc__gs_plan* plan = thing;
  kc_executable_destroy(plan->combiner);
  kc__free(plan);
}

static kc_status* kc__gs_prepare(const kc_program* p, const kc__instr* in,
                                 const kc__prepare_ctx* ctx, const void** out) {
  kc__gs_plan* plan = kc__calloc(1, sizeof *plan);
  if (!plan) return kc_status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  kc_status* st = kc__gs_read(p, in, plan);
  if (!st && plan->scatter && plan->op == 0 && !plan->assign) {
    st = kc__prepare_compile(ctx, in->computations[0], &plan->combiner);
  }
  if (st) {
    kc__gs_plan_free(plan);
    return st;
  }
  KC_RETURN_IF_ERROR(kc__executable_own_state(ctx->exe, plan, kc__gs_plan_free));
  *out = plan;
  return NULL;
}

/* ---- kernels ------------------------------------------------------------------------- */

/* The operand offset (in elements) of the slice or window at the batch
 * position `pos`, whose index vector starts at element `at` of the
 * indices. gather clamps each start into 0..start_limit; scatter gives
 * false where one lies outside (the window is skipped). */
static bool kc__gs_start(const kc__gs_plan* plan, const char* indices, int64_t at,
                         const int64_t* pos, int64_t* out) {
  int64_t start[KC__GS_RANK];
  memset(start, 0, (size_t)plan->operand_rank * sizeof *start);
  for (int64_t j = 0; j < plan->index_len; ++j) {
    const char* e = indices + (size_t)(at + j * plan->index_step) * plan->index_esize;
    start[plan->index_dim[j]] = kc__instr_load_index(e, plan->index_type);
  }
  for (int32_t k = 0; k < plan->batch_rank; ++k) {
    if (plan->batch_operand_dim[k] >= 0) start[plan->batch_operand_dim[k]] = pos[k];
  }
  int64_t offset = 0;
  for (int32_t d = 0; d < plan->operand_rank; ++d) {
    int64_t s = start[d];
    if (s < 0 || s > plan->start_limit[d]) {
      if (plan->scatter) return false;
      s = s < 0 ? 0 : plan->start_limit[d];
    }
    offset += s * plan->operand_stride[d];
  }
  *out = offset;
  return true;
}

/* Calls body for each batch position with `at` (its index vector in the
 * indices), `data` (its offset in the result or updates) and `pos`. */
#define KC__GS_BATCHES(plan, body)                                        \
  do {                                                                    \
    int64_t pos[KC__GS_RANK] = {0};                                       \
    int64_t at = 0, data = 0;                                             \
    for (int64_t i_ = 0; i_ < (plan)->batch_count; ++i_) {                \
      body;                                                               \
      for (int32_t d_ = (plan)->batch_rank - 1; d_ >= 0; --d_) {          \
        at += (plan)->batch_index_stride[d_];                             \
        data += (plan)->batch_data_stride[d_];                            \
        if (++pos[d_] < (plan)->batch_dims[d_]) break;                    \
        at -= (plan)->batch_index_stride[d_] * (plan)->batch_dims[d_];    \
        data -= (plan)->batch_data_stride[d_] * (plan)->batch_dims[d_];   \
        pos[d_] = 0;                                                      \
      }                                                                   \
    }                                                                     \
  } while (0)

/* Calls body for each element of a scatter window, with `o` its offset in
 * the result and `u` in the updates, from o0 and u0; the innermost
 * dimension is a plain loop. */
#define KC__GS_WINDOW(plan, o0, u0, body)                                 \
  do {                                                                    \
    const kc__box* b_ = &(plan)->window;                                  \
    int32_t last_ = b_->rank - 1;                                         \
    int64_t run_ = last_ >= 0 ? b_->dims[last_] : 1;                      \
    int64_t os_ = last_ >= 0 ? b_->dst_stride[last_] : 0;                 \
    int64_t us_ = last_ >= 0 ? b_->src_stride[last_] : 0;                 \
    int64_t w_[KC__GS_RANK] = {0};                                        \
    int64_t ob_ = (o0), ub_ = (u0);                                       \
    for (bool more_ = (plan)->window_count > 0; more_;) {                 \
      for (int64_t k_ = 0; k_ < run_; ++k_) {                             \
        int64_t o = ob_ + k_ * os_, u = ub_ + k_ * us_;                   \
        body;                                                             \
      }                                                                   \
      int32_t d_ = last_ - 1;                                             \
      for (; d_ >= 0; --d_) {                                             \
        ob_ += b_->dst_stride[d_];                                        \
        ub_ += b_->src_stride[d_];                                        \
        if (++w_[d_] < b_->dims[d_]) break;                               \
        ob_ -= b_->dst_stride[d_] * b_->dims[d_];                         \
        ub_ -= b_->src_stride[d_] * b_->dims[d_];                         \
        w_[d_] = 0;                                                       \
      }                                                                   \
      more_ = d_ >= 0;                                                    \
    }                                                                     \
  } while (0)

static kc_status* kc__gather_kernel(const kc__gs_plan* plan, void* out, const void* const* ins) {
  const char* indices = ins[1];
  KC__GS_BATCHES(plan, {
    kc__box box = plan->window;
    kc__gs_start(plan, indices, at, pos, &box.src_offset);
    box.dst_offset = data;
    kc__box_copy(&box, ins[0], out, plan->esize[0]);
  });
  return NULL;
}

/* Integer add and multiply wrap, as XLA's do; maximum and minimum give
 * NaN for a NaN operand (the second's where both are), as the
 * element-wise instructions do, so that the native loop computes what
 * running the computation would. */
#define KC__SC_OPS(sfx, ctype, code, bits)                                         \
  static ctype kc__sc_add_##sfx(ctype a, ctype b) {                                \
    return KC__XLA_ADD(code, ctype, a, b);                                         \
  }                                                                                \
  static ctype kc__sc_mul_##sfx(ctype a, ctype b) {                                \
    return KC__XLA_MUL(code, ctype, a, b);                                         \
  }                                                                                \
  static ctype kc__sc_max_##sfx(ctype a, ctype b) { return KC__XLA_MAX(a, b); }   \
  static ctype kc__sc_min_##sfx(ctype a, ctype b) { return KC__XLA_MIN(a, b); }   \
  static void kc__sc_window_##sfx(const kc__gs_plan* plan, ctype* r, const ctype* x, \
                                  int64_t o0, int64_t u0) {                        \
    bool sw = plan->swapped;                                                       \
    switch (plan->op) {                                                            \
      case KC_OP_ADD:                                                              \
        KC__GS_WINDOW(plan, o0, u0, r[o] = kc__sc_add_##sfx(r[o], x[u]));          \
        break;                                                                     \
      case KC_OP_MULTIPLY:                                                         \
        KC__GS_WINDOW(plan, o0, u0, r[o] = kc__sc_mul_##sfx(r[o], x[u]));          \
        break;                                                                     \
      case KC_OP_MAXIMUM:                                                          \
        KC__GS_WINDOW(plan, o0, u0,                                                \
                      r[o] = sw ? kc__sc_max_##sfx(x[u], r[o])                     \
                                : kc__sc_max_##sfx(r[o], x[u]));                   \
        break;                                                                     \
      case KC_OP_MINIMUM:                                                          \
        KC__GS_WINDOW(plan, o0, u0,                                                \
                      r[o] = sw ? kc__sc_min_##sfx(x[u], r[o])                     \
                                : kc__sc_min_##sfx(r[o], x[u]));                   \
        break;                                                                     \
      case KC_OP_AND:                                                              \
        KC__GS_WINDOW(plan, o0, u0, r[o] = (ctype)(r[o] != 0 && x[u] != 0));       \
        break;                                                                     \
      default:                                                                     \
        KC__GS_WINDOW(plan, o0, u0, r[o] = (ctype)(r[o] != 0 || x[u] != 0));       \
        break;                                                                     \
    }                                                                              \
  }
KC__ETYPES(KC__SC_OPS)
#undef KC__SC_OPS

/* f16 and bf16: each update computed in f32 and rounded once, as the
 * element-wise instructions compute them. */
static float kc__sc_widen(const kc__gs_plan* plan, uint16_t h) {
  return plan->half == 1 ? kc__f16_to_f32(h) : kc__bf16_to_f32(h);
}

static uint16_t kc__sc_half(const kc__gs_plan* plan, uint16_t current, uint16_t update) {
  float a = kc__sc_widen(plan, plan->swapped ? update : current);
  float b = kc__sc_widen(plan, plan->swapped ? current : update);
  float v;
  switch (plan->op) {
    case KC_OP_ADD: v = a + b; break;
    case KC_OP_MULTIPLY: v = a * b; break;
    case KC_OP_MAXIMUM: v = kc__sc_max_f32(a, b); break;
    default: v = kc__sc_min_f32(a, b); break;
  }
  return plan->half == 1 ? kc__f64_to_f16((double)v) : kc__f64_to_bf16((double)v);
}

static void kc__sc_window_half(const kc__gs_plan* plan, uint16_t* r, const uint16_t* x,
                               int64_t o0, int64_t u0) {
  KC__GS_WINDOW(plan, o0, u0, r[o] = kc__sc_half(plan, r[o], x[u]));
}

static void kc__sc_native(const kc__gs_plan* plan, void* r, const void* x, int64_t o0,
                          int64_t u0) {
  if (plan->half) {
    kc__sc_window_half(plan, r, x, o0, u0);
    return;
  }
  switch (plan->type) {
#define KC__SC_CASE(sfx, ctype, code, bits)          \
  case KC__E_##sfx:                                \
    kc__sc_window_##sfx(plan, r, x, o0, u0);          \
    break;
    KC__ETYPES(KC__SC_CASE)
#undef KC__SC_CASE
    default:
      break;
  }
}

/* The general path: the update computation run per element on scalar
 * tensors, current values then updates. */
static kc_status* kc__sc_general(const kc__gs_plan* plan, char* const* results,
                                 const void* const* updates, int64_t o0, int64_t u0) {
  size_t n = plan->n;
  DLTensor args[2 * KC__GS_MAX_ARRAYS];
  const DLTensor* ptrs[2 * KC__GS_MAX_ARRAYS];
  for (size_t k = 0; k < 2 * n; ++k) {
    memset(&args[k], 0, sizeof args[k]);
    args[k].device.device_type = kDLCPU;
    args[k].dtype = kc_shape_get_dtype(plan->scalars[k]);
    ptrs[k] = &args[k];
  }
  kc_tensor* outs[KC__GS_MAX_ARRAYS];
  kc_status* st = NULL;
  KC__GS_WINDOW(plan, o0, u0, {
    if (!st) {
      for (size_t k = 0; k < n; ++k) {
        args[k].data = results[k] + (size_t)o * plan->esize[k];
        args[n + k].data = (char*)(uintptr_t)updates[k] + (size_t)u * plan->esize[k];
      }
      st = kc_executable_execute(plan->combiner, ptrs, 2 * n, NULL, outs);
      for (size_t k = 0; !st && k < n; ++k) {
        memcpy(results[k] + (size_t)o * plan->esize[k], kc_tensor_get_dltensor(outs[k])->data,
               plan->esize[k]);
      }
      for (size_t k = 0; !st && k < n; ++k) kc_object_release(KC_OBJECT(outs[k]));
    }
  });
  return st;
}

static kc_status* kc__scatter_kernel(const kc__gs_plan* plan, void* out, const void* const* ins) {
  size_t n = plan->n;
  char* results[KC__GS_MAX_ARRAYS];
  const void* updates[KC__GS_MAX_ARRAYS];
  for (size_t k = 0; k < n; ++k) {
    results[k] = n == 1 ? out : ((void* const*)out)[k];
    updates[k] = ins[n + 1 + k];
    if (results[k] != ins[k]) memcpy(results[k], ins[k], plan->operand_bytes[k]);
  }
  const char* indices = ins[n];
  kc_status* st = NULL;
  KC__GS_BATCHES(plan, {
    int64_t offset;
    if (!st && kc__gs_start(plan, indices, at, pos, &offset)) {
      if (plan->assign) {
        kc__box box = plan->window;
        box.src_offset = data;
        box.dst_offset = offset;
        for (size_t k = 0; k < n; ++k) {
          kc__box_copy(&box, updates[k], results[k], plan->esize[k]);
        }
      } else if (plan->op) {
        kc__sc_native(plan, results[0], updates[0], offset, data);
      } else {
        st = kc__sc_general(plan, results, updates, offset, data);
      }
    }
  });
  return st ? kc_status_add_context(st, "in the update computation") : NULL;
}

static kc_status* kc__gs_kernel(const kc__instr_kernel_ctx* ctx, void* out,
                                const void* const* ins) {
  const kc__gs_plan* plan = ctx->data;
  return plan->scatter ? kc__scatter_kernel(plan, out, ins) : kc__gather_kernel(plan, out, ins);
}

static const char* const kc__gather_attrs[] = {
    "offset_dims",           "collapsed_slice_dims",        "start_index_map",
    "operand_batching_dims", "start_indices_batching_dims", "index_vector_dim",
    "slice_sizes",           "indices_are_sorted",          NULL};
static const char* const kc__scatter_attrs[] = {"update_window_dims",
                                                "inserted_window_dims",
                                                "scatter_dims_to_operand_dims",
                                                "input_batching_dims",
                                                "scatter_indices_batching_dims",
                                                "index_vector_dim",
                                                "indices_are_sorted",
                                                "unique_indices",
                                                NULL};
static const char* const kc__scatter_computations[] = {"to_apply", NULL};

const kc__instr_def kc__instr_gather[] = {
    {.op = KC_OP_GATHER, .name = "gather", .min_operands = 2, .max_operands = 2,
     .attrs = kc__gather_attrs, .verify = kc__gs_verify, .prepare = kc__gs_prepare,
     .kernel = kc__gs_kernel},
    {.op = KC_OP_SCATTER, .name = "scatter", .min_operands = 3, .max_operands = -1,
     .num_computations = 1, .attrs = kc__scatter_attrs,
     .computation_attrs = kc__scatter_computations, .verify = kc__gs_verify,
     .prepare = kc__gs_prepare, .kernel = kc__gs_kernel},
};
const size_t kc__instr_gather_count = KC__ARRAY_SIZE(kc__instr_gather);
