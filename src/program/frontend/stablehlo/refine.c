/* Shape-polymorphic modules (jax.export with symbolic shapes): types that
 * leave dimensions open (tensor<?x8xf32>) made concrete for the shapes
 * the entry's parameters were given, as jax.export's shape refinement
 * does, while the module is read (stablehlo_internal.h).
 *
 * Two things go together. Each op's result type is refined from its
 * operands' shapes and attributes (kc__shlo_refine, before the op is
 * built). And the small integer values shapes are computed from are
 * evaluated as they are read (kc__shlo_fold, after): a dimension's size
 * (get_dimension_size), constants, and the arithmetic, reshapes and
 * concatenations JAX builds shape operands with, so that the shape
 * operand of dynamic_broadcast_in_dim, dynamic_reshape, dynamic_iota, ...
 * is known, and those ops become their static forms. */
#include <stdio.h>

#include "program/instr/instr.h"
#include "program/frontend/stablehlo/stablehlo_internal.h"

/* The most elements a value may have to be evaluated while reading. */
enum { KC__KNOWN_MAX = 64 };

static int64_t kc__numel(const kc_shape* s) {
  int64_t n = 1;
  for (int32_t d = 0; d < kc_shape_get_rank(s); ++d) n *= kc_shape_get_dims(s)[d];
  return n;
}

static bool kc__is_integral(DLDataType dt) {
  return dt.code == kDLInt || dt.code == kDLUInt || dt.code == kDLBool;
}

const int64_t* kc__shlo_known(const kc__shlo_scope* s, const kc__shlo_op* op, size_t i) {
  return kc__shlo_operand(s, op, i)->known;
}

kc_status* kc__shlo_known_ints(const kc__shlo_scope* s, const kc__shlo_op* op, size_t i,
                               int64_t* out, size_t cap, size_t* count) {
  if (i >= kc__shlo_num_operands(op)) {
    return kc__shlo_fail(&op->at, "%.*s: expected an operand %zu", (int)op->name.size,
                         op->name.data, i);
  }
  const kc__shlo_value* v = kc__shlo_operand(s, op, i);
  int64_t n = kc__numel(v->shape);
  if (!v->known || n > (int64_t)cap) {
    return kc__shlo_fail(&op->at,
                         "%.*s: operand %zu (%%%.*s) is not known while the module is read: "
                         "kcall computes the shapes of a shape-polymorphic module from its "
                         "inputs' dimensions and constants, and this one depends on values",
                         (int)op->name.size, op->name.data, i, (int)v->name.size, v->name.data);
  }
  memcpy(out, v->known, (size_t)n * sizeof *out);
  *count = (size_t)n;
  return NULL;
}

/* ---- result types ---------------------------------------------------------- */

kc_status* kc__shlo_refine_result(kc__shlo_scope* s, kc__shlo_op* op, size_t i,
                                  const int64_t* dims, int32_t rank) {
  const kc_shape* t = kc__shlo_result_type(op, i);
  uint32_t dynamic = kc__shlo_dynamic(s->m, t);
  if (!dynamic) return NULL;
  char want[128];
  if (kc_shape_get_rank(t) != rank) {
    kc__shlo_format_type(s->m, t, want, sizeof want);
    return kc__shlo_fail(&op->at, "%.*s: result %zu: its type is %s, the operands give rank %d",
                         (int)op->name.size, op->name.data, i, want, rank);
  }
  for (int32_t d = 0; d < rank; ++d) {
    if (dims[d] < 0 || (!(dynamic >> d & 1) && kc_shape_get_dims(t)[d] != dims[d])) {
      kc__shlo_format_type(s->m, t, want, sizeof want);
      return kc__shlo_fail(&op->at,
                           "%.*s: result %zu: its type is %s, the operands make dimension %d "
                           "%lld",
                           (int)op->name.size, op->name.data, i, want, d, (long long)dims[d]);
    }
  }
  kc_shape* shape = NULL;
  KC_RETURN_IF_ERROR(kc_shape_create_array(kc_shape_get_dtype(t), dims, rank, &shape));
  if (!kc__buf_append(&s->m->shapes, &shape, sizeof shape)) {
    kc_shape_destroy(shape);
    return kc__parse_oom();
  }
  ((const kc_shape**)(void*)op->result_types.data)[i] = shape;
  return NULL;
}

/* The result takes the dims of `like` (its own element type kept). */
static kc_status* kc__refine_like(kc__shlo_scope* s, kc__shlo_op* op, size_t i,
                                  const kc_shape* like) {
  if (kc_shape_is_tuple(like)) return kc__shlo_fail(&op->at, "expected an array operand");
  return kc__shlo_refine_result(s, op, i, kc_shape_get_dims(like), kc_shape_get_rank(like));
}

/* Integers of attribute `a` (else `b`). */
static kc_status* kc__attr_ints(kc__shlo_scope* s, const kc__shlo_op* op, const char* a,
                                const char* b, int64_t* out, size_t cap, size_t* n) {
  const kc__shlo_item* it = kc__shlo_attr(op, a);
  if (!it && b) it = kc__shlo_attr(op, b);
  if (!it) {
    *n = 0;
    return kc__shlo_fail(&op->at, "%.*s: expected attribute %s", (int)op->name.size,
                         op->name.data, a);
  }
  return kc__shlo_ints(s->m, &it->at, a, out, cap, n);
}

/* Element-wise: the dims of the operand of the highest rank (a select's
 * predicate and a clamp's bounds may be scalars). */
static kc_status* kc__refine_elementwise(kc__shlo_scope* s, kc__shlo_op* op) {
  const kc_shape* like = NULL;
  for (size_t i = 0; i < kc__shlo_num_operands(op); ++i) {
    const kc_shape* x = kc__shlo_operand(s, op, i)->shape;
    if (!kc_shape_is_tuple(x) && (!like || kc_shape_get_rank(x) > kc_shape_get_rank(like))) {
      like = x;
    }
  }
  if (!like) return kc__shlo_fail(&op->at, "expected an array operand");
  for (size_t i = 0; i < kc__shlo_num_result_types(op); ++i) {
    KC_RETURN_IF_ERROR(kc__refine_like(s, op, i, like));
  }
  return NULL;
}

/* Each result the shape of the operand in its place (sort, scatter's
 * first results, while). */
static kc_status* kc__refine_as_operands(kc__shlo_scope* s, kc__shlo_op* op) {
  for (size_t i = 0; i < kc__shlo_num_result_types(op) && i < kc__shlo_num_operands(op); ++i) {
    KC_RETURN_IF_ERROR(kc__refine_like(s, op, i, kc__shlo_operand(s, op, i)->shape));
  }
  return NULL;
}

static kc_status* kc__refine_broadcast(kc__shlo_scope* s, kc__shlo_op* op, bool dynamic_op) {
  const kc_shape* t = kc__shlo_result_type(op, 0);
  int64_t dims[KC_TENSOR_MAX_NDIM];
  size_t n;
  if (dynamic_op) {
    KC_RETURN_IF_ERROR(kc__shlo_known_ints(s, op, 1, dims, KC_TENSOR_MAX_NDIM, &n));
    return kc__shlo_refine_result(s, op, 0, dims, (int32_t)n);
  }
  /* broadcast_in_dim: an open result dimension is the operand's it maps. */
  int64_t map[KC_TENSOR_MAX_NDIM];
  KC_RETURN_IF_ERROR(kc__attr_ints(s, op, "dims", "broadcast_dimensions", map,
                                   KC_TENSOR_MAX_NDIM, &n));
  const kc_shape* x = kc__shlo_operand(s, op, 0)->shape;
  int32_t rank = kc_shape_get_rank(t);
  for (int32_t d = 0; d < rank; ++d) dims[d] = kc_shape_get_dims(t)[d];
  uint32_t dynamic = kc__shlo_dynamic(s->m, t);
  for (int32_t d = 0; d < rank; ++d) {
    if (!(dynamic >> d & 1)) continue;
    dims[d] = -1;
    for (size_t k = 0; k < n && k < (size_t)kc_shape_get_rank(x); ++k) {
      if (map[k] == d) dims[d] = kc_shape_get_dims(x)[k];
    }
  }
  return kc__shlo_refine_result(s, op, 0, dims, rank);
}

static kc_status* kc__refine_reshape(kc__shlo_scope* s, kc__shlo_op* op) {
  const kc_shape* t = kc__shlo_result_type(op, 0);
  uint32_t dynamic = kc__shlo_dynamic(s->m, t);
  int32_t rank = kc_shape_get_rank(t);
  int64_t dims[KC_TENSOR_MAX_NDIM], rest = 1;
  int open = -1;
  for (int32_t d = 0; d < rank; ++d) {
    dims[d] = kc_shape_get_dims(t)[d];
    if (dynamic >> d & 1) {
      if (open >= 0) {
        return kc__shlo_fail(&op->at, "reshape: a result of more than one open dimension "
                                      "(dynamic_reshape gives them)");
      }
      open = d;
    } else {
      rest *= dims[d];
    }
  }
  int64_t total = kc__numel(kc__shlo_operand(s, op, 0)->shape);
  dims[open] = rest ? total / rest : 0;
  return kc__shlo_refine_result(s, op, 0, dims, rank);
}

static kc_status* kc__refine_transpose(kc__shlo_scope* s, kc__shlo_op* op) {
  int64_t perm[KC_TENSOR_MAX_NDIM], dims[KC_TENSOR_MAX_NDIM];
  size_t n;
  KC_RETURN_IF_ERROR(kc__attr_ints(s, op, "dims", "permutation", perm, KC_TENSOR_MAX_NDIM, &n));
  const kc_shape* x = kc__shlo_operand(s, op, 0)->shape;
  for (size_t k = 0; k < n; ++k) {
    if (perm[k] < 0 || perm[k] >= kc_shape_get_rank(x)) {
      return kc__shlo_fail(&op->at, "transpose: permutation[%zu] is out of range", k);
    }
    dims[k] = kc_shape_get_dims(x)[perm[k]];
  }
  return kc__shlo_refine_result(s, op, 0, dims, (int32_t)n);
}

static kc_status* kc__refine_concatenate(kc__shlo_scope* s, kc__shlo_op* op) {
  int64_t d;
  size_t n;
  KC_RETURN_IF_ERROR(kc__attr_ints(s, op, "dim", "dimension", &d, 1, &n));
  const kc_shape* x = kc__shlo_operand(s, op, 0)->shape;
  int32_t rank = kc_shape_get_rank(x);
  if (d < 0 || d >= rank) return kc__shlo_fail(&op->at, "concatenate: dimension out of range");
  int64_t dims[KC_TENSOR_MAX_NDIM];
  memcpy(dims, kc_shape_get_dims(x), (size_t)rank * sizeof *dims);
  dims[d] = 0;
  for (size_t i = 0; i < kc__shlo_num_operands(op); ++i) {
    const kc_shape* y = kc__shlo_operand(s, op, i)->shape;
    if (kc_shape_get_rank(y) != rank) return kc__shlo_fail(&op->at, "concatenate: ranks differ");
    dims[d] += kc_shape_get_dims(y)[d];
  }
  return kc__shlo_refine_result(s, op, 0, dims, rank);
}

/* (limit - start + stride - 1) / stride, from attributes or, for
 * real_dynamic_slice, known operands. */
static kc_status* kc__refine_slice(kc__shlo_scope* s, kc__shlo_op* op, bool dynamic_op) {
  int64_t v[3][KC_TENSOR_MAX_NDIM], dims[KC_TENSOR_MAX_NDIM];
  size_t n[3];
  static const char* const names[] = {"start_indices", "limit_indices", "strides"};
  for (int k = 0; k < 3; ++k) {
    if (dynamic_op) {
      KC_RETURN_IF_ERROR(kc__shlo_known_ints(s, op, 1 + (size_t)k, v[k], KC_TENSOR_MAX_NDIM, &n[k]));
    } else {
      KC_RETURN_IF_ERROR(kc__attr_ints(s, op, names[k], NULL, v[k], KC_TENSOR_MAX_NDIM, &n[k]));
    }
  }
  if (n[0] != n[1] || n[0] != n[2]) return kc__shlo_fail(&op->at, "slice: lists of unequal length");
  for (size_t d = 0; d < n[0]; ++d) {
    if (v[2][d] <= 0 || v[1][d] < v[0][d]) return kc__shlo_fail(&op->at, "slice: bad bounds");
    dims[d] = (v[1][d] - v[0][d] + v[2][d] - 1) / v[2][d];
  }
  return kc__shlo_refine_result(s, op, 0, dims, (int32_t)n[0]);
}

static kc_status* kc__refine_pad(kc__shlo_scope* s, kc__shlo_op* op, bool dynamic_op) {
  int64_t v[3][KC_TENSOR_MAX_NDIM], dims[KC_TENSOR_MAX_NDIM];
  size_t n[3];
  static const char* const pretty[] = {"low", "high", "interior"};
  static const char* const generic[] = {"edge_padding_low", "edge_padding_high",
                                        "interior_padding"};
  for (int k = 0; k < 3; ++k) {
    if (dynamic_op) {
      KC_RETURN_IF_ERROR(kc__shlo_known_ints(s, op, 2 + (size_t)k, v[k], KC_TENSOR_MAX_NDIM, &n[k]));
    } else {
      KC_RETURN_IF_ERROR(kc__attr_ints(s, op, pretty[k], generic[k], v[k], KC_TENSOR_MAX_NDIM, &n[k]));
    }
  }
  const kc_shape* x = kc__shlo_operand(s, op, 0)->shape;
  if (n[0] != (size_t)kc_shape_get_rank(x) || n[1] != n[0] || n[2] != n[0]) {
    return kc__shlo_fail(&op->at, "pad: expected a padding per dimension");
  }
  for (size_t d = 0; d < n[0]; ++d) {
    int64_t e = kc_shape_get_dims(x)[d];
    dims[d] = v[0][d] + v[1][d] + e + (e > 0 ? (e - 1) * v[2][d] : 0);
  }
  return kc__shlo_refine_result(s, op, 0, dims, (int32_t)n[0]);
}

static kc_status* kc__refine_reduce(kc__shlo_scope* s, kc__shlo_op* op) {
  int64_t red[KC_TENSOR_MAX_NDIM], dims[KC_TENSOR_MAX_NDIM];
  size_t n;
  KC_RETURN_IF_ERROR(kc__attr_ints(s, op, "dimensions", NULL, red, KC_TENSOR_MAX_NDIM, &n));
  const kc_shape* x = kc__shlo_operand(s, op, 0)->shape;
  int32_t rank = 0;
  for (int32_t d = 0; d < kc_shape_get_rank(x); ++d) {
    bool gone = false;
    for (size_t k = 0; k < n; ++k) gone = gone || red[k] == d;
    if (!gone) dims[rank++] = kc_shape_get_dims(x)[d];
  }
  for (size_t i = 0; i < kc__shlo_num_result_types(op); ++i) {
    KC_RETURN_IF_ERROR(kc__shlo_refine_result(s, op, i, dims, rank));
  }
  return NULL;
}

/* Pairs [[lo, hi], ...] into lo and hi. */
static kc_status* kc__pairs(kc__shlo_scope* s, const kc__lexer* at, int64_t* lo, int64_t* hi,
                            size_t* n) {
  int64_t v[2 * KC_TENSOR_MAX_NDIM];
  size_t m;
  KC_RETURN_IF_ERROR(kc__shlo_ints(s->m, at, "padding", v, 2 * KC_TENSOR_MAX_NDIM, &m));
  if (m % 2) return kc__lex_fail(at, &at->tok, "padding: expected [low, high] pairs");
  for (size_t i = 0; i < m / 2; ++i) {
    lo[i] = v[2 * i];
    hi[i] = v[2 * i + 1];
  }
  *n = m / 2;
  return NULL;
}


static kc_status* kc__refine_reduce_window(kc__shlo_scope* s, kc__shlo_op* op) {
  const kc_shape* x = kc__shlo_operand(s, op, 0)->shape;
  int32_t rank = kc_shape_get_rank(x);
  int64_t win[KC_TENSOR_MAX_NDIM], str[KC_TENSOR_MAX_NDIM], bd[KC_TENSOR_MAX_NDIM],
      wd[KC_TENSOR_MAX_NDIM], lo[KC_TENSOR_MAX_NDIM], hi[KC_TENSOR_MAX_NDIM],
      dims[KC_TENSOR_MAX_NDIM];
  size_t n;
  KC_RETURN_IF_ERROR(kc__attr_ints(s, op, "window_dimensions", NULL, win, KC_TENSOR_MAX_NDIM, &n));
  if (n != (size_t)rank) return kc__shlo_fail(&op->at, "expected a window size per dimension");
  for (int32_t d = 0; d < rank; ++d) str[d] = bd[d] = wd[d] = 1, lo[d] = hi[d] = 0;
  size_t m;
  if (kc__shlo_attr(op, "window_strides")) {
    KC_RETURN_IF_ERROR(kc__attr_ints(s, op, "window_strides", NULL, str, KC_TENSOR_MAX_NDIM, &m));
  }
  if (kc__shlo_attr(op, "base_dilations")) {
    KC_RETURN_IF_ERROR(kc__attr_ints(s, op, "base_dilations", NULL, bd, KC_TENSOR_MAX_NDIM, &m));
  }
  if (kc__shlo_attr(op, "window_dilations")) {
    KC_RETURN_IF_ERROR(kc__attr_ints(s, op, "window_dilations", NULL, wd, KC_TENSOR_MAX_NDIM, &m));
  }
  const kc__shlo_item* pad = kc__shlo_attr(op, "padding");
  if (pad) KC_RETURN_IF_ERROR(kc__pairs(s, &pad->at, lo, hi, &m));
  for (int32_t d = 0; d < rank; ++d) {
    if (!kc__window_positions(kc_shape_get_dims(x)[d], lo[d], hi[d], bd[d], win[d], wd[d],
                              str[d], &dims[d])) {
      return kc__shlo_fail(&op->at, "reduce_window: dimension %d: the window, padding and "
                                    "dilations overflow 64 bits", d);
    }
  }
  for (size_t i = 0; i < kc__shlo_num_result_types(op); ++i) {
    KC_RETURN_IF_ERROR(kc__shlo_refine_result(s, op, i, dims, rank));
  }
  return NULL;
}

static kc_status* kc__refine_dot(kc__shlo_scope* s, kc__shlo_op* op) {
  kc__shlo_dot_numbers dd;
  KC_RETURN_IF_ERROR(kc__shlo_dot_dims(s, op, "dot_dimension_numbers", &dd));
  const int64_t *lb = dd.lhs_batch, *rb = dd.rhs_batch, *lc = dd.lhs_contract,
                *rc = dd.rhs_contract;
  size_t nlb = dd.num_batch, nrb = dd.num_batch, nlc = dd.num_contract, nrc = dd.num_contract;
  const kc_shape* l = kc__shlo_operand(s, op, 0)->shape;
  const kc_shape* r = kc__shlo_operand(s, op, 1)->shape;
  int64_t dims[KC_TENSOR_MAX_NDIM];
  int32_t rank = 0;
  for (size_t k = 0; k < nlb && rank < KC_TENSOR_MAX_NDIM; ++k) {
    if (lb[k] < 0 || lb[k] >= kc_shape_get_rank(l)) return kc__shlo_fail(&op->at, "dot_general: bad batch dimension");
    dims[rank++] = kc_shape_get_dims(l)[lb[k]];
  }
  const kc_shape* sides[2] = {l, r};
  const int64_t* used[2][2] = {{lb, lc}, {rb, rc}};
  size_t counts[2][2] = {{nlb, nlc}, {nrb, nrc}};
  for (int side = 0; side < 2; ++side) {
    for (int32_t d = 0; d < kc_shape_get_rank(sides[side]); ++d) {
      bool taken = false;
      for (int k = 0; k < 2; ++k) {
        for (size_t j = 0; j < counts[side][k]; ++j) taken = taken || used[side][k][j] == d;
      }
      if (taken) continue;
      if (rank == KC_TENSOR_MAX_NDIM) return kc__shlo_fail(&op->at, "dot_general: result rank");
      dims[rank++] = kc_shape_get_dims(sides[side])[d];
    }
  }
  return kc__shlo_refine_result(s, op, 0, dims, rank);
}

/* XLA's gather: the batch positions of the indices, and the slice's
 * dimensions other than the collapsed and batching ones at offset_dims. */
static kc_status* kc__refine_gather(kc__shlo_scope* s, kc__shlo_op* op, bool dynamic_op) {
  const kc__shlo_item* dn = kc__shlo_attr(op, "dimension_numbers");
  if (!dn) return kc__shlo_fail(&op->at, "gather: expected dimension_numbers");
  int64_t offset[KC_TENSOR_MAX_NDIM], collapsed[KC_TENSOR_MAX_NDIM],
      batching[KC_TENSOR_MAX_NDIM], sizes[KC_TENSOR_MAX_NDIM], ivd = 0;
  size_t noff = 0, ncol = 0, nbat = 0, nsz = 0, one = 0;
  static const char* const fields[] = {"offset_dims", "collapsed_slice_dims",
                                       "operand_batching_dims", "index_vector_dim"};
  int64_t* out[] = {offset, collapsed, batching, &ivd};
  size_t* counts[] = {&noff, &ncol, &nbat, &one};
  size_t caps[] = {KC_TENSOR_MAX_NDIM, KC_TENSOR_MAX_NDIM, KC_TENSOR_MAX_NDIM, 1};
  for (int k = 0; k < 4; ++k) {
    kc__lexer f;
    bool found;
    KC_RETURN_IF_ERROR(kc__shlo_field(s->m, &dn->at, fields[k], &f, &found));
    if (found) KC_RETURN_IF_ERROR(kc__shlo_ints(s->m, &f, fields[k], out[k], caps[k], counts[k]));
  }
  if (dynamic_op) {
    KC_RETURN_IF_ERROR(kc__shlo_known_ints(s, op, 2, sizes, KC_TENSOR_MAX_NDIM, &nsz));
  } else {
    KC_RETURN_IF_ERROR(kc__attr_ints(s, op, "slice_sizes", NULL, sizes, KC_TENSOR_MAX_NDIM, &nsz));
  }
  const kc_shape* idx = kc__shlo_operand(s, op, 1)->shape;
  int64_t batch[KC_TENSOR_MAX_NDIM], slice[KC_TENSOR_MAX_NDIM], dims[KC_TENSOR_MAX_NDIM];
  size_t nb = 0, ns = 0;
  for (int32_t d = 0; d < kc_shape_get_rank(idx); ++d) {
    if (d != ivd) batch[nb++] = kc_shape_get_dims(idx)[d];
  }
  for (size_t d = 0; d < nsz; ++d) {
    bool gone = false;
    for (size_t k = 0; k < ncol; ++k) gone = gone || collapsed[k] == (int64_t)d;
    for (size_t k = 0; k < nbat; ++k) gone = gone || batching[k] == (int64_t)d;
    if (!gone) slice[ns++] = sizes[d];
  }
  int32_t rank = (int32_t)(nb + ns);
  if (rank > KC_TENSOR_MAX_NDIM || ns != noff) return kc__shlo_fail(&op->at, "gather: bad dimension numbers");
  size_t bi = 0, si = 0;
  for (int32_t d = 0; d < rank; ++d) {
    bool is_offset = false;
    for (size_t k = 0; k < noff; ++k) is_offset = is_offset || offset[k] == d;
    dims[d] = is_offset ? slice[si++] : (bi < nb ? batch[bi++] : -1);
  }
  return kc__shlo_refine_result(s, op, 0, dims, rank);
}

static kc_status* kc__refine_top_k(kc__shlo_scope* s, kc__shlo_op* op) {
  int64_t k;
  size_t n;
  KC_RETURN_IF_ERROR(kc__attr_ints(s, op, "k", NULL, &k, 1, &n));
  const kc_shape* x = kc__shlo_operand(s, op, 0)->shape;
  int32_t rank = kc_shape_get_rank(x);
  int64_t dims[KC_TENSOR_MAX_NDIM];
  memcpy(dims, kc_shape_get_dims(x), (size_t)rank * sizeof *dims);
  if (rank > 0) dims[rank - 1] = k;
  for (size_t i = 0; i < kc__shlo_num_result_types(op); ++i) {
    KC_RETURN_IF_ERROR(kc__shlo_refine_result(s, op, i, dims, rank));
  }
  return NULL;
}

static kc_status* kc__refine_iota(kc__shlo_scope* s, kc__shlo_op* op) {
  int64_t dims[KC_TENSOR_MAX_NDIM];
  size_t n;
  KC_RETURN_IF_ERROR(kc__shlo_known_ints(s, op, 0, dims, KC_TENSOR_MAX_NDIM, &n));
  return kc__shlo_refine_result(s, op, 0, dims, (int32_t)n);
}

bool kc__shlo_op_is(const kc__shlo_op* op, const char* name) {
  kc_string_view n = op->name;
  if (n.size >= 2 && n.data[0] == '"') {
    n.data++;
    n.size -= 2;
  }
  size_t len = strlen(name);
  static const char* const dialects[] = {"stablehlo.", "chlo."};
  for (size_t d = 0; d < 2; ++d) {
    size_t dl = strlen(dialects[d]);
    if (n.size == dl + len && memcmp(n.data, dialects[d], dl) == 0 &&
        memcmp(n.data + dl, name, len) == 0) {
      return true;
    }
  }
  return false;
}

kc_status* kc__shlo_refine(kc__shlo_scope* s, kc__shlo_op* op) {
  bool open = false;
  for (size_t i = 0; i < kc__shlo_num_result_types(op); ++i) {
    open = open || kc__shlo_dynamic(s->m, kc__shlo_result_type(op, i)) != 0;
  }
  if (!open) return NULL;
  static const char* const like_first[] = {"dynamic_update_slice", "select_and_scatter",
                                            "reverse"};
  for (size_t k = 0; k < sizeof like_first / sizeof like_first[0]; ++k) {
    if (kc__shlo_op_is(op, like_first[k])) {
      return kc__refine_like(s, op, 0, kc__shlo_operand(s, op, 0)->shape);
    }
  }
  static const char* const elementwise[] = {
      "add", "subtract", "multiply", "divide", "maximum", "minimum", "negate", "exponential",
      "log", "convert", "abs", "sign", "sqrt", "rsqrt", "cbrt", "tanh", "logistic", "sine",
      "cosine", "tan", "floor", "ceil", "round_nearest_afz", "round_nearest_even",
      "log_plus_one", "exponential_minus_one", "erf", "erf_inv", "is_finite", "not", "popcnt",
      "count_leading_zeros", "real", "imag", "power", "remainder", "atan2", "and", "or", "xor",
      "shift_left", "shift_right_arithmetic", "shift_right_logical", "complex", "select",
      "clamp", "compare", "reduce_precision", "bitcast_convert"};
  for (size_t k = 0; k < sizeof elementwise / sizeof elementwise[0]; ++k) {
    if (kc__shlo_op_is(op, elementwise[k])) return kc__refine_elementwise(s, op);
  }
  if (kc__shlo_op_is(op, "broadcast_in_dim")) return kc__refine_broadcast(s, op, false);
  if (kc__shlo_op_is(op, "dynamic_broadcast_in_dim")) return kc__refine_broadcast(s, op, true);
  if (kc__shlo_op_is(op, "reshape")) return kc__refine_reshape(s, op);
  if (kc__shlo_op_is(op, "dynamic_reshape")) {
    int64_t dims[KC_TENSOR_MAX_NDIM], count = 1;
    size_t n;
    KC_RETURN_IF_ERROR(kc__shlo_known_ints(s, op, 1, dims, KC_TENSOR_MAX_NDIM, &n));
    for (size_t d = 0; d < n; ++d) count *= dims[d];
    int64_t have = kc__numel(kc__shlo_operand(s, op, 0)->shape);
    if (count != have) {
      return kc__shlo_fail(&op->at, "dynamic_reshape: the shape operand holds %lld elements, the "
                                    "operand %lld (for these inputs' shapes)",
                           (long long)count, (long long)have);
    }
    return kc__shlo_refine_result(s, op, 0, dims, (int32_t)n);
  }
  if (kc__shlo_op_is(op, "dynamic_iota")) return kc__refine_iota(s, op);
  if (kc__shlo_op_is(op, "transpose")) return kc__refine_transpose(s, op);
  if (kc__shlo_op_is(op, "concatenate")) return kc__refine_concatenate(s, op);
  if (kc__shlo_op_is(op, "slice")) return kc__refine_slice(s, op, false);
  if (kc__shlo_op_is(op, "real_dynamic_slice")) return kc__refine_slice(s, op, true);
  if (kc__shlo_op_is(op, "pad")) return kc__refine_pad(s, op, false);
  if (kc__shlo_op_is(op, "dynamic_pad")) return kc__refine_pad(s, op, true);
  if (kc__shlo_op_is(op, "dynamic_slice")) {
    int64_t dims[KC_TENSOR_MAX_NDIM];
    size_t n;
    KC_RETURN_IF_ERROR(kc__attr_ints(s, op, "sizes", "slice_sizes", dims, KC_TENSOR_MAX_NDIM, &n));
    return kc__shlo_refine_result(s, op, 0, dims, (int32_t)n);
  }
  if (kc__shlo_op_is(op, "dot_general")) return kc__refine_dot(s, op);
  if (kc__shlo_op_is(op, "reduce")) return kc__refine_reduce(s, op);
  if (kc__shlo_op_is(op, "reduce_window")) return kc__refine_reduce_window(s, op);
  if (kc__shlo_op_is(op, "sort") || kc__shlo_op_is(op, "while") ||
      kc__shlo_op_is(op, "scatter")) {
    return kc__refine_as_operands(s, op);
  }
  if (kc__shlo_op_is(op, "gather")) return kc__refine_gather(s, op, false);
  if (kc__shlo_op_is(op, "dynamic_gather")) return kc__refine_gather(s, op, true);
  if (kc__shlo_op_is(op, "top_k")) return kc__refine_top_k(s, op);
  /* Results that are values made elsewhere (a call's, a barrier's
   * operands), or refined where the op is built (a conditional's, from
   * its branches; a convolution's, from its dimension labels). */
  if (kc_sv_equal(op->name, KC_SV_LIT("call")) || kc_sv_equal(op->name, KC_SV_LIT("func.call")) ||
      kc_sv_equal(op->name, KC_SV_LIT("\"func.call\"")) || kc__shlo_op_is(op, "composite") ||
      kc__shlo_op_is(op, "optimization_barrier") || kc__shlo_op_is(op, "case") ||
      kc__shlo_op_is(op, "if") || kc__shlo_op_is(op, "convolution") ||
      kc__shlo_op_is(op, "dynamic_conv")) {
    return NULL;
  }
  char t[128];
  kc__shlo_format_type(s->m, kc__shlo_result_type(op, 0), t, sizeof t);
  return kc__shlo_fail(&op->at,
                       "%.*s: its result's type %s leaves dimensions open, and kcall cannot "
                       "tell them for this op (shape-polymorphic modules are refined for the "
                       "ops docs/programs.md lists)",
                       (int)op->name.size, op->name.data, t);
}

/* ---- values known while reading ------------------------------------------- */

/* Arithmetic on known values, element by element (b may be a scalar). */
static bool kc__fold_binary(const kc__shlo_op* op, const int64_t* a, size_t na, const int64_t* b,
                            size_t nb, int64_t* out) {
  for (size_t i = 0; i < na; ++i) {
    /* Integer arithmetic wraps, as the program's would. */
    int64_t x = a[i], y = b[nb == 1 ? 0 : i];
    uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
    if (kc__shlo_op_is(op, "add")) out[i] = (int64_t)(ux + uy);
    else if (kc__shlo_op_is(op, "subtract")) out[i] = (int64_t)(ux - uy);
    else if (kc__shlo_op_is(op, "multiply")) out[i] = (int64_t)(ux * uy);
    else if (kc__shlo_op_is(op, "divide")) {
      if (y == 0) return false;
      out[i] = y == -1 ? (int64_t)(0 - ux) : x / y;
    } else if (kc__shlo_op_is(op, "remainder")) {
      if (y == 0) return false;
      out[i] = y == -1 ? 0 : x % y;
    } else if (kc__shlo_op_is(op, "maximum")) out[i] = x > y ? x : y;
    else if (kc__shlo_op_is(op, "minimum")) out[i] = x < y ? x : y;
    else if (kc__shlo_op_is(op, "and")) out[i] = x & y;
    else if (kc__shlo_op_is(op, "or")) out[i] = x | y;
    else return false;
  }
  return true;
}

static bool kc__fold_compare(kc__shlo_scope* s, const kc__shlo_op* op, const int64_t* a,
                             const int64_t* b, size_t n, int64_t* out) {
  const kc__shlo_item* dir = kc__shlo_attr(op, "comparison_direction");
  if (!dir) dir = kc__shlo_word(op, 0);
  kc_string_view d;
  kc_status* st = dir ? kc__shlo_enum(s->m, &dir->at, "direction", &d) : NULL;
  if (!dir || st) {
    kc_status_destroy(st);
    return false;
  }
  for (size_t i = 0; i < n; ++i) {
    int64_t x = a[i], y = b[i];
    if (kc_sv_equal(d, KC_SV_LIT("EQ"))) out[i] = x == y;
    else if (kc_sv_equal(d, KC_SV_LIT("NE"))) out[i] = x != y;
    else if (kc_sv_equal(d, KC_SV_LIT("LT"))) out[i] = x < y;
    else if (kc_sv_equal(d, KC_SV_LIT("LE"))) out[i] = x <= y;
    else if (kc_sv_equal(d, KC_SV_LIT("GT"))) out[i] = x > y;
    else if (kc_sv_equal(d, KC_SV_LIT("GE"))) out[i] = x >= y;
    else return false;
  }
  return true;
}

kc_status* kc__shlo_set_known(kc__shlo_scope* s, kc_string_view name, const int64_t* values,
                              size_t n) {
  kc__shlo_value* v = kc__shlo_lookup(s, name);
  if (!v || (int64_t)n != kc__numel(v->shape)) return NULL;
  int64_t* copy = kc__arena_dup(&s->m->arena, values, n * sizeof *values);
  if (!copy) return kc__parse_oom();
  v->known = copy;
  return NULL;
}

kc_status* kc__shlo_fold(kc__shlo_scope* s, const kc__shlo_op* op) {
  if (op->result.kind == KC__TOK_END || op->num_results != 1 || op->result_names.size) return NULL;
  kc__shlo_value* r = kc__shlo_lookup(s, op->result.text);
  if (!r || r->known || kc_shape_is_tuple(r->shape) || !kc__is_integral(kc_shape_get_dtype(r->shape))) {
    return NULL;
  }
  int64_t n = kc__numel(r->shape);
  size_t nops = kc__shlo_num_operands(op);
  if (n > KC__KNOWN_MAX || nops == 0) return NULL;
  for (size_t i = 0; i < nops; ++i) {
    if (!kc__shlo_known(s, op, i)) return NULL;
  }
  int64_t out[KC__KNOWN_MAX];
  const int64_t* a = kc__shlo_known(s, op, 0);
  size_t na = (size_t)kc__numel(kc__shlo_operand(s, op, 0)->shape);
  bool ok = false;
  if (kc__shlo_op_is(op, "convert") || kc__shlo_op_is(op, "reshape") ||
      kc__shlo_op_is(op, "dynamic_reshape")) {
    ok = na == (size_t)n;
    if (ok) memcpy(out, a, na * sizeof *out);
  } else if (kc__shlo_op_is(op, "broadcast_in_dim") && na == 1) {
    for (int64_t i = 0; i < n; ++i) out[i] = a[0];
    ok = true;
  } else if (kc__shlo_op_is(op, "sign")) {
    for (size_t i = 0; i < na; ++i) out[i] = (a[i] > 0) - (a[i] < 0);
    ok = na == (size_t)n;
  } else if (kc__shlo_op_is(op, "negate") || kc__shlo_op_is(op, "abs")) {
    for (size_t i = 0; i < na; ++i) {
      bool flip = kc__shlo_op_is(op, "negate") || a[i] < 0;
      out[i] = flip ? (int64_t)(0 - (uint64_t)a[i]) : a[i];
    }
    ok = na == (size_t)n;
  } else if (kc__shlo_op_is(op, "concatenate")) {
    /* Along the first dimension (any rank): the operands' elements one
     * after the other. */
    size_t k = 0;
    const kc__shlo_item* dim = kc__shlo_attr(op, "dim");
    if (!dim) dim = kc__shlo_attr(op, "dimension");
    int64_t d = -1;
    kc_status* st = dim ? kc__shlo_int(s->m, &dim->at, "dimension", &d) : NULL;
    kc_status_destroy(st);
    ok = !st && d == 0;
    for (size_t i = 0; ok && i < nops; ++i) {
      size_t m = (size_t)kc__numel(kc__shlo_operand(s, op, i)->shape);
      if (k + m > (size_t)n) ok = false;
      else memcpy(out + k, kc__shlo_known(s, op, i), m * sizeof *out);
      k += m;
    }
  } else if (kc__shlo_op_is(op, "compare") && nops == 2) {
    ok = na == (size_t)n && kc__fold_compare(s, op, a, kc__shlo_known(s, op, 1), na, out);
  } else if (kc__shlo_op_is(op, "select") && nops == 3) {
    const int64_t* t = kc__shlo_known(s, op, 1);
    const int64_t* f = kc__shlo_known(s, op, 2);
    for (int64_t i = 0; i < n; ++i) out[i] = a[na == 1 ? 0 : i] ? t[i] : f[i];
    ok = true;
  } else if (kc__shlo_op_is(op, "slice") && kc_shape_get_rank(r->shape) == 1) {
    int64_t v[3];
    size_t m;
    static const char* const names[] = {"start_indices", "limit_indices", "strides"};
    const kc__shlo_item* w = kc__shlo_word(op, 0);
    ok = true;
    if (w) {
      /* [a:b(:c)] */
      kc__lexer lx = w->at;
      kc__lex_next(&lx);
      v[2] = 1;
      ok = !kc__lex_int(&lx, "start", 0, INT64_MAX, &v[0]) && !kc__lex_expect(&lx, ':') &&
           !kc__lex_int(&lx, "limit", 0, INT64_MAX, &v[1]);
      if (ok && kc__tok_is_punct(&lx.tok, ':')) {
        kc__lex_next(&lx);
        ok = !kc__lex_int(&lx, "stride", 1, INT64_MAX, &v[2]);
      }
    } else {
      for (int k = 0; ok && k < 3; ++k) {
        const kc__shlo_item* it = kc__shlo_attr(op, names[k]);
        kc_status* st = it ? kc__shlo_ints(s->m, &it->at, names[k], &v[k], 1, &m) : NULL;
        ok = it && !st;
        kc_status_destroy(st);
      }
    }
    for (int64_t i = 0; ok && i < n; ++i) {
      int64_t at = v[0] + i * v[2];
      ok = at >= 0 && (size_t)at < na;
      if (ok) out[i] = a[at];
    }
  } else if (nops == 2) {
    const int64_t* b = kc__shlo_known(s, op, 1);
    size_t nb = (size_t)kc__numel(kc__shlo_operand(s, op, 1)->shape);
    ok = na == (size_t)n && (nb == na || nb == 1) && kc__fold_binary(op, a, na, b, nb, out);
  }
  if (!ok) return NULL;
  /* As the result's type holds them: wrapped to its width. */
  DLDataType dt = kc_shape_get_dtype(r->shape);
  unsigned bits = dt.code == kDLBool ? 1 : dt.bits;
  for (int64_t i = 0; bits < 64 && i < n; ++i) {
    uint64_t v = (uint64_t)out[i] & ((UINT64_C(1) << bits) - 1);
    if (dt.code == kDLInt && (v >> (bits - 1) & 1)) v |= ~UINT64_C(0) << bits;
    out[i] = (int64_t)v;
  }
  return kc__shlo_set_known(s, op->result.text, out, (size_t)n);
}
