/* dot_general (with its `algorithm`) and chlo.ragged_dot.
 *
 * The dimension numbers are read once here for the lowering and for shape
 * refinement (kc__shlo_dot_dims). An `algorithm` is honoured where kcall
 * computes what it asks: operands rounded to its precision types (tf32,
 * bf16, f16 by reduce_precision; the operand's own type as is), products
 * accumulated in its accumulation type when that is what the dot
 * accumulates in, one component and one primitive operation; any other is
 * refused, naming the field. chlo.ragged_dot with a ragged non-contracting
 * dimension of the lhs (its first mode: a mixture of experts' grouped
 * matmul) is every group's dot, each row then keeping its own group's
 * result; the other two modes are refused. */
#include <string.h>

#include "program/frontend/stablehlo/lower_internal.h"

/* "[0] x [1]": two integer lists. */
static kc_status* kc__pair_lists(kc__shlo_scope* s, const kc__lexer* at, const char* what,
                                 int64_t* a, size_t* na, int64_t* b, size_t* nb) {
  kc__lexer lx = *at;
  KC_RETURN_IF_ERROR(kc__shlo_ints(s->m, &lx, what, a, KC_TENSOR_MAX_NDIM, na));
  KC_RETURN_IF_ERROR(kc__lex_skip_group(&lx, NULL));
  if (!kc__tok_is_word(&lx.tok, "x"))
    return kc__lex_expected(&lx, &lx.tok, "'x' between the lists");
  kc__lex_next(&lx);
  return kc__shlo_ints(s->m, &lx, what, b, KC_TENSOR_MAX_NDIM, nb);
}

kc_status* kc__shlo_dot_dims(kc__shlo_scope* s, const kc__shlo_op* op, const char* attr,
                             kc__shlo_dot_numbers* d) {
  memset(d, 0, sizeof *d);
  int64_t* lists[2][2] = {{d->lhs_batch, d->rhs_batch}, {d->lhs_contract, d->rhs_contract}};
  size_t* counts[2][2] = {{&d->num_batch, &d->num_rhs_batch},
                          {&d->num_contract, &d->num_rhs_contract}};
  static const char* const fields[2][2] = {
      {"lhs_batching_dimensions", "rhs_batching_dimensions"},
      {"lhs_contracting_dimensions", "rhs_contracting_dimensions"}};
  static const char* const pretty[2] = {"batching_dims", "contracting_dims"};
  const kc__shlo_item* dn = kc__shlo_attr(op, attr);
  for (int k = 0; k < 2; ++k) {
    if (dn) {
      for (int side = 0; side < 2; ++side) {
        kc__lexer f;
        bool found;
        KC_RETURN_IF_ERROR(kc__shlo_field(s->m, &dn->at, fields[k][side], &f, &found));
        if (found) {
          KC_RETURN_IF_ERROR(kc__shlo_ints(s->m, &f, fields[k][side], lists[k][side],
                                           KC_TENSOR_MAX_NDIM, counts[k][side]));
        }
      }
    } else {
      const kc__shlo_item* it = kc__shlo_attr(op, pretty[k]);
      if (it) {
        KC_RETURN_IF_ERROR(kc__pair_lists(s, &it->at, pretty[k], lists[k][0], counts[k][0],
                                          lists[k][1], counts[k][1]));
      }
    }
  }
  if (d->num_batch != d->num_rhs_batch || d->num_contract != d->num_rhs_contract) {
    return kc__shlo_fail(&op->at,
                         "%.*s: the lhs and rhs name %zu and %zu batching, %zu and %zu "
                         "contracting dimensions (expected as many on each side)",
                         (int)op->name.size, op->name.data, d->num_batch, d->num_rhs_batch,
                         d->num_contract, d->num_rhs_contract);
  }
  return NULL;
}

static kc_status* kc__dot_attrs(kc__shlo_scope* s, const kc__shlo_dot_numbers* d,
                                kc__shlo_attrs* at) {
  KC_RETURN_IF_ERROR(kc__shlo_attrs_ints(s, at, "lhs_batch_dims", d->lhs_batch, d->num_batch));
  KC_RETURN_IF_ERROR(kc__shlo_attrs_ints(s, at, "rhs_batch_dims", d->rhs_batch, d->num_batch));
  KC_RETURN_IF_ERROR(
      kc__shlo_attrs_ints(s, at, "lhs_contracting_dims", d->lhs_contract, d->num_contract));
  return kc__shlo_attrs_ints(s, at, "rhs_contracting_dims", d->rhs_contract, d->num_contract);
}

/* ---- dot_general's algorithm --------------------------------------------- */

/* A precision type of an algorithm as reduce_precision's bits; false for
 * a name kcall does not round to. */
static bool kc__precision_bits(kc_string_view t, int* exponent, int* mantissa) {
  static const struct {
    const char* name;
    int e, m;
  } types[] = {{"tf32", 8, 10}, {"bf16", 8, 7}, {"f16", 5, 10}, {"f32", 8, 23}, {"f64", 11, 52}};
  for (size_t i = 0; i < KC__ARRAY_SIZE(types); ++i) {
    if (kc_sv_equal(t, kc_sv(types[i].name))) {
      *exponent = types[i].e;
      *mantissa = types[i].m;
      return true;
    }
  }
  return false;
}

/* The type the dot accumulates a result of `dt` in (docs/programs.md):
 * f32 for f16 and bf16, the result's own otherwise. */
static const char* kc__accumulation(DLDataType dt) {
  if (dt.code == kDLBfloat || (dt.code == kDLFloat && dt.bits == 16)) return "f32";
  if (dt.code == kDLFloat) return dt.bits == 64 ? "f64" : "f32";
  return NULL;
}

/* The algorithm's fields checked against what the dot computes; each
 * operand rounded to its precision type where that is narrower than its
 * own (ids[0..1] replaced). */
static kc_status* kc__algorithm(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_item* alg,
                                int32_t* ids) {
  static const char* const fields[] = {"lhs_precision_type",          "rhs_precision_type",
                                       "accumulation_type",           "lhs_component_count",
                                       "rhs_component_count",         "num_primitive_operations",
                                       "allow_imprecise_accumulation"};
  kc__lexer at[KC__ARRAY_SIZE(fields)];
  for (size_t k = 0; k < KC__ARRAY_SIZE(fields); ++k) {
    bool found;
    KC_RETURN_IF_ERROR(kc__shlo_field(s->m, &alg->at, fields[k], &at[k], &found));
    if (!found && k < 6) {
      return kc__shlo_fail(&alg->at.tok, "dot_general: algorithm: expected %s", fields[k]);
    }
  }
  for (size_t k = 3; k < 6; ++k) {
    int64_t n;
    KC_RETURN_IF_ERROR(kc__shlo_int(s->m, &at[k], fields[k], &n));
    if (n != 1) {
      return kc__shlo_fail(&at[k].tok,
                           "dot_general: algorithm: %s = %lld is not supported "
                           "(kcall computes one product per pair of elements: 1)",
                           fields[k], (long long)n);
    }
  }
  const kc_shape* result = kc__shlo_result_type(op, 0);
  DLDataType rdt = kc_shape_get_dtype(result);
  const char* acc = kc__accumulation(rdt);
  kc_string_view want = at[2].tok.text;
  if (acc && !kc_sv_equal(want, kc_sv(acc))) {
    return kc__shlo_fail(&at[2].tok,
                         "dot_general: algorithm: accumulation_type = %.*s is not "
                         "supported for a result of this type (kcall accumulates it in %s)",
                         (int)want.size, want.data, acc);
  }
  for (int side = 0; side < 2; ++side) {
    const kc__shlo_value* x = kc__shlo_operand(s, op, (size_t)side);
    DLDataType dt = kc_shape_get_dtype(x->shape);
    kc_string_view t = at[side].tok.text;
    int e, m;
    if (!kc__precision_bits(t, &e, &m)) {
      return kc__shlo_fail(&at[side].tok,
                           "dot_general: algorithm: %s = %.*s is not supported "
                           "(tf32, bf16, f16, f32 or f64)",
                           fields[side], (int)t.size, t.data);
    }
    /* An integer operand's products are exact whatever a float precision
     * says; an operand no wider than the precision is left as it is. */
    bool is_float = dt.code == kDLFloat || dt.code == kDLBfloat;
    int own_m = dt.code == kDLBfloat ? 7 : dt.bits == 16 ? 10 : dt.bits == 32 ? 23 : 52;
    if (!is_float || own_m <= m) continue;
    kc__shlo_attrs ra = {.n = 0};
    kc__shlo_attrs_int(&ra, "exponent_bits", e);
    kc__shlo_attrs_int(&ra, "mantissa_bits", m);
    kc_string_view name;
    KC_RETURN_IF_ERROR(kc__shlo_instr_name(s, op, side ? "rhs_precision" : "lhs_precision", &name));
    kc_attr_dict dict = {.count = ra.n, .entries = ra.a};
    kc_instruction_desc d = {.struct_size = sizeof d,
                             .op = KC_OP_REDUCE_PRECISION,
                             .result_shape = x->shape,
                             .operands = &ids[side],
                             .num_operands = 1,
                             .attrs = &dict};
    int32_t rounded;
    KC_RETURN_IF_ERROR(kc_program_builder_add_instruction(s->b, &d, name, &rounded));
    ids[side] = rounded;
  }
  return NULL;
}

kc_status* kc__shlo_lower_dot(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r) {
  kc__shlo_dot_numbers d;
  KC_RETURN_IF_ERROR(kc__shlo_dot_dims(s, op, "dot_dimension_numbers", &d));
  kc__shlo_attrs at = {.n = 0};
  KC_RETURN_IF_ERROR(kc__dot_attrs(s, &d, &at));
  const kc__shlo_item* alg = kc__shlo_attr(op, "algorithm");
  if (!alg) return kc__shlo_lower_with(s, op, r, &at, NULL, 0);
  if (kc__shlo_num_operands(op) != 2 || kc__shlo_num_result_types(op) != 1) {
    return kc__shlo_fail(&op->at, "dot_general: expected two operands and one result");
  }
  int32_t ids[2] = {kc__shlo_operand(s, op, 0)->id, kc__shlo_operand(s, op, 1)->id};
  KC_RETURN_IF_ERROR(kc__algorithm(s, op, alg, ids));
  kc__buf buf = {0};
  kc_status* st = kc__shlo_append(&buf, ids, sizeof ids);
  if (!st) st = kc__shlo_emit(s, op, r->opcode, &buf, &at, NULL, 0);
  kc__buf_free(&buf);
  return st;
}

/* ---- chlo.ragged_dot ------------------------------------------------------ */

static bool kc__listed(const int64_t* v, size_t n, int64_t d) {
  for (size_t i = 0; i < n; ++i) {
    if (v[i] == d) return true;
  }
  return false;
}

/* A field of #chlo.ragged_dot<...> that holds one dimension. */
static kc_status* kc__one_dim(kc__shlo_scope* s, const kc__shlo_item* dn, const char* field,
                              int64_t* out) {
  kc__lexer f;
  bool found;
  size_t n = 0;
  KC_RETURN_IF_ERROR(kc__shlo_field(s->m, &dn->at, field, &f, &found));
  if (found) KC_RETURN_IF_ERROR(kc__shlo_ints(s->m, &f, field, out, 1, &n));
  if (n != 1)
    return kc__shlo_fail(&dn->at.tok, "chlo.ragged_dot: expected one dimension in %s", field);
  return NULL;
}

kc_status* kc__shlo_lower_ragged_dot(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r) {
  (void)r;
  const char* dn_name = "ragged_dot_dimension_numbers";
  const kc__shlo_item* dn = kc__shlo_attr(op, dn_name);
  if (!dn) return kc__shlo_missing(op, dn_name);
  kc__shlo_attr(op, "precision_config");
  if (kc__shlo_num_operands(op) != 3 || kc__shlo_num_result_types(op) != 1) {
    return kc__shlo_fail(&op->at,
                         "chlo.ragged_dot: expected lhs, rhs and group_sizes, and one "
                         "result");
  }
  kc__shlo_dot_numbers d;
  KC_RETURN_IF_ERROR(kc__shlo_dot_dims(s, op, dn_name, &d));
  int64_t ragged, group;
  KC_RETURN_IF_ERROR(kc__one_dim(s, dn, "lhs_ragged_dimensions", &ragged));
  const kc__shlo_value* lhs = kc__shlo_operand(s, op, 0);
  const kc__shlo_value* rhs = kc__shlo_operand(s, op, 1);
  const kc__shlo_value* sizes = kc__shlo_operand(s, op, 2);
  int32_t lrank = kc_shape_get_rank(lhs->shape), rrank = kc_shape_get_rank(rhs->shape);
  if (kc__listed(d.lhs_contract, d.num_contract, ragged) ||
      kc__listed(d.lhs_batch, d.num_batch, ragged)) {
    return kc__shlo_fail(&op->at,
                         "chlo.ragged_dot: a ragged %s dimension is not supported (kcall "
                         "runs a ragged non-contracting dimension of the lhs, with a group "
                         "dimension of the rhs)",
                         kc__listed(d.lhs_batch, d.num_batch, ragged) ? "batch" : "contracting");
  }
  KC_RETURN_IF_ERROR(kc__one_dim(s, dn, "rhs_group_dimensions", &group));
  for (size_t k = 0; k < d.num_batch + d.num_contract; ++k) {
    int64_t l = k < d.num_batch ? d.lhs_batch[k] : d.lhs_contract[k - d.num_batch];
    int64_t rr = k < d.num_batch ? d.rhs_batch[k] : d.rhs_contract[k - d.num_batch];
    if (l < 0 || l >= lrank || rr < 0 || rr >= rrank) {
      return kc__shlo_fail(&op->at,
                           "chlo.ragged_dot: a batching or contracting dimension is "
                           "outside its operand's rank");
    }
  }
  DLDataType sdt = kc_shape_get_dtype(sizes->shape);
  if (ragged < 0 || ragged >= lrank || group < 0 || group >= rrank ||
      kc__listed(d.rhs_batch, d.num_batch, group) ||
      kc__listed(d.rhs_contract, d.num_contract, group) || kc_shape_get_rank(sizes->shape) != 1 ||
      (sdt.code != kDLInt && sdt.code != kDLUInt) ||
      kc_shape_get_dims(sizes->shape)[0] != kc_shape_get_dims(rhs->shape)[group]) {
    return kc__shlo_fail(&op->at,
                         "chlo.ragged_dot: expected a ragged lhs dimension, a group "
                         "dimension of the rhs outside its batching and contracting ones, and "
                         "group_sizes of one integer per group");
  }
  /* Every group's dot: [batch..., lhs free..., rhs free...], the group one
   * among the rhs free dimensions. */
  const kc_shape* result = kc__shlo_result_type(op, 0);
  int64_t dims[KC_TENSOR_MAX_NDIM];
  int32_t rank = 0, pos_m = -1, pos_g = -1;
  for (size_t k = 0; k < d.num_batch; ++k)
    dims[rank++] = kc_shape_get_dims(lhs->shape)[d.lhs_batch[k]];
  for (int32_t i = 0; i < lrank; ++i) {
    if (kc__listed(d.lhs_batch, d.num_batch, i) || kc__listed(d.lhs_contract, d.num_contract, i))
      continue;
    if (i == ragged) pos_m = rank;
    dims[rank++] = kc_shape_get_dims(lhs->shape)[i];
  }
  for (int32_t i = 0; i < rrank && rank < KC_TENSOR_MAX_NDIM; ++i) {
    if (kc__listed(d.rhs_batch, d.num_batch, i) || kc__listed(d.rhs_contract, d.num_contract, i))
      continue;
    if (i == group) pos_g = rank;
    dims[rank++] = kc_shape_get_dims(rhs->shape)[i];
  }
  if (rank != kc_shape_get_rank(result) + 1) {
    return kc__shlo_fail(&op->at,
                         "chlo.ragged_dot: the result's rank is not the dot's without "
                         "the group dimension");
  }
  int64_t groups = kc_shape_get_dims(sizes->shape)[0];
  kc_shape *full = NULL, *full_pred = NULL, *full_idx = NULL, *square = NULL, *row = NULL;
  kc__expr e = {.s = s, .op = op, .what = "ragged"};
  DLDataType s64 = kc_dtype_make(kDLInt, 64, 1);
  int64_t gg[2] = {groups, groups};
  e.st = kc_shape_create_array(kc_shape_get_dtype(result), dims, rank, &full);
  if (!e.st) e.st = kc_shape_create_array(kc_dtype_make(kDLBool, 8, 1), dims, rank, &full_pred);
  if (!e.st) e.st = kc_shape_create_array(s64, dims, rank, &full_idx);
  if (!e.st) e.st = kc_shape_create_array(s64, gg, 2, &square);
  if (!e.st) e.st = kc_shape_create_array(s64, &groups, 1, &row);
  kc__shlo_attrs at = {.n = 0};
  if (!e.st) e.st = kc__dot_attrs(s, &d, &at);
  kc_attr_dict dict = {.count = at.n, .entries = at.a};
  int32_t operands[2] = {lhs->id, rhs->id};
  int32_t all = kc__e_add(&e, KC_OP_DOT, full, operands, 2, &dict);
  /* Group g's rows are [end - size, end), end the sum of the sizes up to
   * g: a dot with the upper triangle of ones. */
  e.shape = row;
  int32_t n = kc__e_add(&e, KC_OP_CONVERT, row, &sizes->id, 1, NULL);
  e.shape = square;
  kc_shape* square_pred = NULL;
  if (!e.st) e.st = kc_shape_create_array(kc_dtype_make(kDLBool, 8, 1), gg, 2, &square_pred);
  e.pred = square_pred;
  kc_attr iota;
  memset(&iota, 0, sizeof iota);
  iota.name = KC_SV_LIT("iota_dimension");
  iota.type = KC_ATTR_I64;
  kc_attr_dict iota_dict = {.count = 1, .entries = &iota};
  int32_t j = kc__e_add(&e, KC_OP_IOTA, square, NULL, 0, &iota_dict);
  iota.v.i64 = 1;
  int32_t g = kc__e_add(&e, KC_OP_IOTA, square, NULL, 0, &iota_dict);
  int32_t upper = kc__e_compare(&e, "LE", j, g);
  int32_t tri = kc__e_add(&e, KC_OP_CONVERT, square, &upper, 1, NULL);
  kc__shlo_attrs sum = {.n = 0};
  int64_t zero = 0;
  if (!e.st) e.st = kc__shlo_attrs_ints(s, &sum, "lhs_contracting_dims", &zero, 1);
  if (!e.st) e.st = kc__shlo_attrs_ints(s, &sum, "rhs_contracting_dims", &zero, 1);
  kc_attr_dict sum_dict = {.count = sum.n, .entries = sum.a};
  int32_t nt[2] = {n, tri};
  int32_t end = kc__e_add(&e, KC_OP_DOT, row, nt, 2, &sum_dict);
  e.shape = row;
  int32_t start = kc__e_op(&e, KC_OP_SUBTRACT, end, n);
  /* Spread over the full shape: the row index along m, the bounds along g. */
  e.shape = full_idx;
  e.pred = full_pred;
  iota.v.i64 = pos_m;
  int32_t m = kc__e_add(&e, KC_OP_IOTA, full_idx, NULL, 0, &iota_dict);
  int64_t along_g = pos_g;
  int32_t bounds[2] = {start, end};
  for (int k = 0; k < 2 && !e.st; ++k) {
    kc_string_view name;
    e.st = kc__shlo_instr_name(s, op, "ragged", &name);
    if (!e.st) {
      e.st = kc_program_builder_add_broadcast(s->b, full_idx, bounds[k], &along_g, 1, name,
                                              &bounds[k]);
    }
  }
  int32_t in[2] = {kc__e_compare(&e, "GE", m, bounds[0]), kc__e_compare(&e, "LT", m, bounds[1])};
  int32_t mine = kc__e_add(&e, KC_OP_AND, full_pred, in, 2, NULL);
  kc_shape_destroy(square_pred);
  e.pred = NULL;
  /* Each row's own group kept, the others zero (so that an inf or NaN of
   * another group's dot cannot reach it), then summed over g by a dot
   * with ones. */
  int32_t zero_idx = kc__e_const_int(&e, 0);
  int32_t zeros = kc__e_add(&e, KC_OP_CONVERT, full, &zero_idx, 1, NULL);
  e.shape = full;
  int32_t kept = kc__e_select(&e, mine, all, zeros);
  kc_shape* ones_shape = NULL;
  if (!e.st) e.st = kc_shape_create_array(kc_shape_get_dtype(result), &groups, 1, &ones_shape);
  e.shape = row;
  int32_t one_idx = kc__e_const_int(&e, 1);
  int32_t ones = kc__e_add(&e, KC_OP_CONVERT, ones_shape, &one_idx, 1, NULL);
  kc__shlo_attrs over_g = {.n = 0};
  if (!e.st) e.st = kc__shlo_attrs_ints(s, &over_g, "lhs_contracting_dims", &along_g, 1);
  if (!e.st) e.st = kc__shlo_attrs_ints(s, &over_g, "rhs_contracting_dims", &zero, 1);
  kc_attr_dict over_dict = {.count = over_g.n, .entries = over_g.a};
  int32_t ko[2] = {kept, ones};
  int32_t y = kc__e_add(&e, KC_OP_DOT, result, ko, 2, &over_dict);
  kc_shape_destroy(ones_shape);
  kc_shape_destroy(full);
  kc_shape_destroy(full_pred);
  kc_shape_destroy(full_idx);
  kc_shape_destroy(square);
  kc_shape_destroy(row);
  KC_RETURN_IF_ERROR(e.st);
  kc__shlo_value v = {.id = y, .shape = result};
  return kc__shlo_bind_values(s, op, &v, 1);
}
