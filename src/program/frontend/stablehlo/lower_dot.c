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
  const char* acc = kc__dot_accumulation(rdt);
  kc_string_view want = at[2].tok.text;
  if (acc && !kc_sv_equal(want, kc_sv(acc))) {
    return kc__shlo_fail(&at[2].tok,
                         "dot_general: algorithm: accumulation_type = %.*s is not "
                         "supported for a result of this type (kcall accumulates it in %s)",
                         (int)want.size, want.data, acc);
  }
  for (int side = 0; side < 2; ++side) {
    const kc__shlo_value* x = kc__shlo_operand(s, op, (size_t)side);
    kc_string_view t = at[side].tok.text;
    int e_bits, m_bits;
    if (!kc__precision_bits(t, &e_bits, &m_bits)) {
      return kc__shlo_fail(&at[side].tok,
                           "dot_general: algorithm: %s = %.*s is not supported "
                           "(tf32, bf16, f16, f32 or f64)",
                           fields[side], (int)t.size, t.data);
    }
    kc__expr e = KC__SHLO_EXPR(s, op, side ? "rhs_precision" : "lhs_precision");
    int32_t rounded = kc__e_round_to(&e, ids[side], x->shape, e_bits, m_bits);
    KC_RETURN_IF_ERROR(e.st);
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

/* A field of #chlo.ragged_dot<...> that holds one dimension; -1 when it
 * holds none (refused by kc__e_ragged_dot, after what it checks first). */
static kc_status* kc__one_dim(kc__shlo_scope* s, const kc__shlo_item* dn, const char* field,
                              int64_t* out) {
  *out = -1;
  kc__lexer f;
  bool found;
  size_t n = 0;
  KC_RETURN_IF_ERROR(kc__shlo_field(s->m, &dn->at, field, &f, &found));
  int64_t v[KC_TENSOR_MAX_NDIM];
  if (found) KC_RETURN_IF_ERROR(kc__shlo_ints(s->m, &f, field, v, KC_TENSOR_MAX_NDIM, &n));
  if (n > 1)
    return kc__shlo_fail(&dn->at.tok, "chlo.ragged_dot: expected one dimension in %s", field);
  if (n == 1) *out = v[0];
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
  KC_RETURN_IF_ERROR(kc__one_dim(s, dn, "rhs_group_dimensions", &group));
  const kc__shlo_value* lhs = kc__shlo_operand(s, op, 0);
  const kc__shlo_value* rhs = kc__shlo_operand(s, op, 1);
  const kc__shlo_value* sizes = kc__shlo_operand(s, op, 2);
  const kc_shape* result = kc__shlo_result_type(op, 0);
  kc__ragged_dot rd = {.lhs = lhs->id, .rhs = rhs->id, .sizes = sizes->id,
                       .lhs_shape = lhs->shape, .rhs_shape = rhs->shape,
                       .sizes_shape = sizes->shape, .result = result,
                       .lhs_batch = d.lhs_batch, .rhs_batch = d.rhs_batch,
                       .lhs_contract = d.lhs_contract, .rhs_contract = d.rhs_contract,
                       .num_batch = d.num_batch, .num_contract = d.num_contract,
                       .ragged = ragged, .group = group};
  kc__expr e = KC__SHLO_EXPR(s, op, "ragged");
  int32_t y = kc__e_ragged_dot(&e, &rd);
  if (e.st) {
    return kc_status_add_context(e.st, "line %d, column %d: chlo.ragged_dot", op->at.line,
                                 op->at.column);
  }
  kc__shlo_value v = {.id = y, .shape = result};
  return kc__shlo_bind_values(s, op, &v, 1);
}
