/* chlo.scan: a region applied along one dimension of its inputs, carrying
 * values from each step to the next.
 *
 *   %r:M+K = chlo.scan(%x1, ..., %xN) inits(%c1, ..., %cK) dimension=d
 *       [attributes {is_reverse = true}] { ^bb0(N slices, K carries): ...
 *       stablehlo.return M output slices, K new carries }
 *
 * (the generic form gives N and K as operandSegmentSizes). Step k, from
 * the last index down when is_reverse, takes each input's slice at index k
 * of dimension d and the carries; the M outputs are the steps' slices put
 * back along d, then come the last carries. The length of d is static, so
 * the scan is unrolled: the region is inlined once per step
 * (kc__shlo_inline_region), which lets fusion and the planner see through
 * it. A scan longer than KC__SCAN_MAX_STEPS is refused rather than made
 * into a program that large. is_associative is a hint (the steps keep
 * their order). */
#include <stdio.h>
#include <string.h>

#include "program/frontend/stablehlo/lower_internal.h"

enum { KC__SCAN_MAX_STEPS = 4096, KC__SCAN_MAX_OPERANDS = 64 };

/* `shape`'s dims without dimension d (removed) or with d of size 1. */
static kc_status* kc__slice_shape(kc__shlo_module* m, const kc_shape* shape, int64_t d, bool keep,
                                  const kc_shape** out) {
  int64_t dims[KC_TENSOR_MAX_NDIM];
  int32_t rank = 0;
  for (int32_t i = 0; i < kc_shape_get_rank(shape); ++i) {
    if (i != d) {
      dims[rank++] = kc_shape_get_dims(shape)[i];
    } else if (keep) {
      dims[rank++] = 1;
    }
  }
  return kc__shlo_module_shape(m, kc_shape_get_dtype(shape), dims, rank, out);
}

/* Input x's slice at index k of dimension d (of shape `one`), without
 * that dimension (`flat`). */
static kc_status* kc__step_slice(kc__shlo_scope* s, const kc__shlo_op* op, const kc__shlo_value* x,
                                 int64_t d, int64_t k, const kc_shape* one, const kc_shape* flat,
                                 kc__shlo_value* out) {
  int32_t rank = kc_shape_get_rank(x->shape);
  int64_t start[KC_TENSOR_MAX_NDIM], limit[KC_TENSOR_MAX_NDIM], stride[KC_TENSOR_MAX_NDIM];
  for (int32_t i = 0; i < rank; ++i) {
    start[i] = i == d ? k : 0;
    limit[i] = i == d ? k + 1 : kc_shape_get_dims(x->shape)[i];
    stride[i] = 1;
  }
  kc__shlo_attrs at = {.n = 0};
  KC_RETURN_IF_ERROR(kc__shlo_attrs_ints(s, &at, "start_indices", start, (size_t)rank));
  KC_RETURN_IF_ERROR(kc__shlo_attrs_ints(s, &at, "limit_indices", limit, (size_t)rank));
  KC_RETURN_IF_ERROR(kc__shlo_attrs_ints(s, &at, "strides", stride, (size_t)rank));
  kc_attr_dict dict = {.count = at.n, .entries = at.a};
  kc__expr e = KC__SHLO_EXPR(s, op, "scan");
  int32_t sliced = kc__e_add(&e, KC_OP_SLICE, one, &x->id, 1, &dict);
  int32_t id = kc__e_add(&e, KC_OP_RESHAPE, flat, &sliced, 1, NULL);
  KC_RETURN_IF_ERROR(e.st);
  *out = (kc__shlo_value){.id = id, .shape = flat};
  return NULL;
}

kc_status* kc__shlo_lower_scan(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r) {
  (void)r;
  const kc__shlo_item* dim = kc__shlo_attr(op, "dimension");
  if (!dim) return kc__shlo_missing(op, "dimension");
  int64_t d;
  KC_RETURN_IF_ERROR(kc__shlo_int(s->m, &dim->at, "dimension", &d));
  bool reverse = false;
  const kc__shlo_item* rev = kc__shlo_attr(op, "is_reverse");
  if (rev) KC_RETURN_IF_ERROR(kc__shlo_bool(s->m, &rev->at, "is_reverse", &reverse));
  kc__shlo_attr(op, "is_associative");
  size_t k = (size_t)op->num_inits, n_ops = kc__shlo_num_operands(op);
  size_t n_res = kc__shlo_num_result_types(op);
  const kc__shlo_item* segments = kc__shlo_attr(op, "operandSegmentSizes");
  if (segments && k == 0) {
    /* the generic form: array<i32: inputs, inits> */
    int64_t v[2];
    size_t count;
    KC_RETURN_IF_ERROR(kc__shlo_ints(s->m, &segments->at, "operandSegmentSizes", v, 2, &count));
    if (count != 2 || v[0] < 0 || v[1] < 0 || (size_t)(v[0] + v[1]) != n_ops) {
      return kc__shlo_fail(&segments->at.tok,
                           "chlo.scan: operandSegmentSizes: expected the "
                           "inputs' and the inits' counts, %zu in all",
                           n_ops);
    }
    k = (size_t)v[1];
  }
  if (n_ops <= k || n_res < k || op->regions.size != sizeof(kc__lexer)) {
    return kc__shlo_fail(&op->at,
                         "chlo.scan: expected inputs, then inits(...), a region, and "
                         "the outputs then a result per init");
  }
  /* n_in inputs and n_out outputs, each with dimension d of the scan's
   * length; the region takes a slice of each input, then the carries,
   * and gives a slice of each output, then the new carries. */
  size_t n_in = n_ops - k, n_out = n_res - k;
  if (n_in > KC__SCAN_MAX_OPERANDS || n_out > KC__SCAN_MAX_OPERANDS) {
    return kc__shlo_fail(&op->at, "chlo.scan: more than %d inputs or outputs",
                         KC__SCAN_MAX_OPERANDS);
  }
  const kc__shlo_value* first = kc__shlo_operand(s, op, 0);
  if (kc_shape_is_tuple(first->shape) || d < 0 || d >= kc_shape_get_rank(first->shape)) {
    return kc__shlo_fail(&dim->at.tok,
                         "chlo.scan: dimension %lld is not one of the first "
                         "input's %d",
                         (long long)d, kc_shape_get_rank(first->shape));
  }
  int64_t len = kc_shape_get_dims(first->shape)[d];
  for (size_t i = 0; i < n_in + n_out; ++i) {
    const kc_shape* x =
        i < n_in ? kc__shlo_operand(s, op, i)->shape : kc__shlo_result_type(op, i - n_in);
    if (kc_shape_is_tuple(x) || d >= kc_shape_get_rank(x) || kc_shape_get_dims(x)[d] != len) {
      return kc__shlo_fail(&op->at,
                           "chlo.scan: %s %zu is not an array with dimension %lld of "
                           "%lld",
                           i < n_in ? "input" : "output", i < n_in ? i : i - n_in, (long long)d,
                           (long long)len);
    }
  }
  if (len < 1 || len > KC__SCAN_MAX_STEPS) {
    return kc__shlo_fail(&op->at,
                         "chlo.scan over %lld steps is not supported (kcall unrolls a "
                         "scan: 1 to %d steps)",
                         (long long)len, KC__SCAN_MAX_STEPS);
  }
  /* Each input's and output's slice, with dimension d of 1 ([0]) and
   * without it ([1]). */
  const kc_shape* in_shapes[KC__SCAN_MAX_OPERANDS][2];
  const kc_shape* out_shapes[KC__SCAN_MAX_OPERANDS][2];
  kc_status* st = NULL;
  for (size_t i = 0; i < n_in + n_out && !st; ++i) {
    const kc_shape* x =
        i < n_in ? kc__shlo_operand(s, op, i)->shape : kc__shlo_result_type(op, i - n_in);
    const kc_shape** to = i < n_in ? in_shapes[i] : out_shapes[i - n_in];
    st = kc__slice_shape(s->m, x, d, true, &to[0]);
    if (!st) st = kc__slice_shape(s->m, x, d, false, &to[1]);
  }
  const kc__lexer* region = (const kc__lexer*)(const void*)op->regions.data;
  kc__buf args = {0}, outs = {0}, step = {0}, results = {0}, ids = {0};
  /* args: this step's slices, then the carries (the inits at first). */
  for (size_t i = 0; i < n_ops && !st; ++i) {
    st = kc__shlo_append(&args, kc__shlo_operand(s, op, i), sizeof(kc__shlo_value));
  }
  /* outs[i * len + index]: output i's slice at that index. */
  for (size_t i = 0; i < n_out * (size_t)len && !st; ++i) {
    kc__shlo_value none = {.id = -1};
    st = kc__shlo_append(&outs, &none, sizeof none);
  }
  for (int64_t t = 0; t < len && !st; ++t) {
    int64_t index = reverse ? len - 1 - t : t;
    kc__shlo_value* a = (kc__shlo_value*)(void*)args.data;
    for (size_t i = 0; i < n_in && !st; ++i) {
      st = kc__step_slice(s, op, kc__shlo_operand(s, op, i), d, index, in_shapes[i][0],
                          in_shapes[i][1], &a[i]);
    }
    char label[32];
    snprintf(label, sizeof label, "scan%lld", (long long)index);
    step.size = 0;
    if (!st) st = kc__shlo_inline_region(s, op, region, a, n_ops, label, &step);
    if (!st) st = kc__unroll_check(s->b, "chlo.scan");
    if (!st && step.size != n_res * sizeof(kc__shlo_value)) {
      st = kc__shlo_fail(&op->at, "chlo.scan: the region returns %zu values, expected %zu",
                         step.size / sizeof(kc__shlo_value), n_res);
    }
    const kc__shlo_value* got = (const kc__shlo_value*)(const void*)step.data;
    for (size_t i = 0; i < n_out && !st; ++i) {
      if (!kc_shape_equal(got[i].shape, out_shapes[i][1])) {
        st = kc__shlo_fail(&op->at,
                           "chlo.scan: the region's output %zu is not a slice of "
                           "result %zu",
                           i, i);
      }
      if (!st) ((kc__shlo_value*)(void*)outs.data)[i * (size_t)len + (size_t)index] = got[i];
    }
    a = (kc__shlo_value*)(void*)args.data;
    for (size_t i = 0; i < k && !st; ++i) {
      if (!kc_shape_equal(got[n_out + i].shape, kc__shlo_result_type(op, n_out + i))) {
        st = kc__shlo_fail(&op->at,
                           "chlo.scan: the region's carry %zu is not of result %zu's "
                           "type",
                           i, n_out + i);
      }
      a[n_in + i] = got[n_out + i];
    }
  }
  /* Each output: its slices, given back dimension d, put together. */
  for (size_t i = 0; i < n_out && !st; ++i) {
    const kc_shape* y = kc__shlo_result_type(op, i);
    ids.size = 0;
    kc__expr e = KC__SHLO_EXPR(s, op, "scan");
    for (int64_t t = 0; t < len && !st; ++t) {
      const kc__shlo_value* v = (const kc__shlo_value*)(const void*)outs.data + i * (size_t)len + t;
      int32_t id = kc__e_add(&e, KC_OP_RESHAPE, out_shapes[i][0], &v->id, 1, NULL);
      st = e.st ? e.st : kc__shlo_append(&ids, &id, sizeof id);
    }
    int32_t whole = -1;
    if (!st && len == 1) {
      whole = *(const int32_t*)(const void*)ids.data;
    } else if (!st) {
      kc__shlo_attrs at = {.n = 0};
      st = kc__shlo_attrs_ints(s, &at, "dimensions", &d, 1);
      kc_attr_dict dict = {.count = at.n, .entries = at.a};
      if (!st) {
        whole = kc__e_add(&e, KC_OP_CONCATENATE, y, (const int32_t*)(const void*)ids.data,
                          (size_t)len, &dict);
        st = e.st;
      }
    }
    kc__shlo_value v = {.id = whole, .shape = y};
    if (!st) st = kc__shlo_append(&results, &v, sizeof v);
  }
  for (size_t i = 0; i < k && !st; ++i) {
    kc__shlo_value v = ((const kc__shlo_value*)(const void*)args.data)[n_in + i];
    v.shape = kc__shlo_result_type(op, n_out + i);
    v.name = (kc_string_view){0};
    st = kc__shlo_append(&results, &v, sizeof v);
  }
  if (!st) {
    st = kc__shlo_bind_values(s, op, (const kc__shlo_value*)(const void*)results.data, n_res);
  }
  kc__buf_free(&args);
  kc__buf_free(&outs);
  kc__buf_free(&step);
  kc__buf_free(&results);
  kc__buf_free(&ids);
  return st;
}
