/* The StableHLO ops with regions (reduce, reduce_window,
 * select_and_scatter, sort, scatter, while, case and if), gather, calls
 * and tuples (lower_internal.h). */
#include <stdio.h>

#include "program/frontend/map.h"
#include "program/instr/instr.h"
#include "program/frontend/stablehlo/lower_internal.h"

/* ---- regions -------------------------------------------------------------- */


/* reduce's "applies stablehlo.add": a program of that op on two scalars
 * of each init's shape. */
static kc_status* kc__applies_program(kc__shlo_scope* s, kc__shlo_op* op, kc_program** out) {
  const kc__shlo_item* w = kc__shlo_word(op, 1);
  if (!w || op->num_inits != 1) {
    return kc__shlo_fail(&op->at, "reduce: expected 'applies OP' with one operand");
  }
  kc_string_view fn = w->at.tok.text;
  const kc__shlo_rule* r = kc__shlo_find_rule(fn);
  if (!r || !kc__shlo_rule_is_elementwise(r)) {
    return kc__shlo_fail(&w->at.tok, "reduce: applies %.*s: expected an element-wise operation",
                         (int)fn.size, fn.data);
  }
  const kc_shape* scalar = kc__shlo_operand(s, op, kc__shlo_num_operands(op) - 1)->shape;
  kc_program_builder* b = NULL;
  char name[64];
  snprintf(name, sizeof name, "reducer.%lld", (long long)++s->m->serial);
  KC_RETURN_IF_ERROR(kc_program_builder_create(kc_sv(name), &b));
  int32_t ids[2], root;
  kc_status* st = kc_program_builder_add_parameter(b, 0, scalar, KC_SV_LIT("lhs"), &ids[0]);
  if (!st) st = kc_program_builder_add_parameter(b, 1, scalar, KC_SV_LIT("rhs"), &ids[1]);
  if (!st) {
    const kc__instr_def* def = kc__instr_def_find(r->opcode);
    if (def->kind == KC__INSTR_ELEMENTWISE) {
      st = kc_program_builder_add_op(b, (kc_opcode)r->opcode, scalar, ids, 2, KC_SV_LIT("result"), &root);
    } else {
      kc_instruction_desc d = {.struct_size = sizeof d, .op = r->opcode, .result_shape = scalar,
                               .operands = ids, .num_operands = 2};
      st = kc_program_builder_add_instruction(b, &d, KC_SV_LIT("result"), &root);
    }
  }
  if (!st) return kc_program_builder_finish(b, out);
  kc_program_builder_destroy(b);
  return st;
}

/* The region's arguments as reduce's reducer(...) (...) groups give them
 * (each group: an accumulator and an element): accumulators first. */
static kc_status* kc__reducer_args(const kc__shlo_op* op, kc__buf* out) {
  const kc__shlo_arg* a = (const kc__shlo_arg*)(const void*)op->region_args.data;
  size_t n = op->region_args.size / sizeof *a;
  if (op->arg_group != 2 || n % 2) {
    return kc__shlo_fail(&op->at, "reduce: expected the reducer's arguments in pairs");
  }
  for (size_t side = 0; side < 2; ++side) {
    for (size_t g = 0; g < n / 2; ++g) {
      if (!kc__buf_append(out, &a[2 * g + side], sizeof *a)) return kc__parse_oom();
    }
  }
  return NULL;
}

/* The region at index i of op as a program; `what` names it. */
static kc_status* kc__region(kc__shlo_scope* s, const kc__shlo_op* op, size_t i,
                             const kc__shlo_arg* args, size_t num_args, const char* what,
                             kc_program** out) {
  if (op->regions.size / sizeof(kc__lexer) <= i) {
    return kc__shlo_fail(&op->at, "%.*s: expected a region (%s)", (int)op->name.size,
                         op->name.data, what);
  }
  const kc__lexer* at = (const kc__lexer*)(const void*)op->regions.data + i;
  return kc__shlo_region_program(s, at, args, num_args, what, out);
}

static size_t kc__num_regions(const kc__shlo_op* op) {
  return op->regions.size / sizeof(kc__lexer);
}

kc_status* kc__shlo_lower_reduce(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r) {
  kc__shlo_attrs at = {.n = 0};
  KC_RETURN_IF_ERROR(kc__shlo_copy_ints(s, op, &at, "dimensions", NULL, "dimensions", true));
  kc_program* body = NULL;
  if (kc__num_regions(op) == 0) {
    KC_RETURN_IF_ERROR(kc__applies_program(s, op, &body));
  } else {
    kc__buf args = {0};
    kc_status* st = op->region_args.size ? kc__reducer_args(op, &args) : NULL;
    if (!st) {
      st = kc__region(s, op, 0, (const kc__shlo_arg*)(const void*)args.data,
                      args.size / sizeof(kc__shlo_arg), "reducer", &body);
    }
    kc__buf_free(&args);
    KC_RETURN_IF_ERROR(st);
  }
  return kc__shlo_lower_with(s, op, r, &at, &body, 1);
}

/* "padding = dense<[[l, h], ...]>" into padding_low and padding_high. */
kc_status* kc__shlo_window_padding(kc__shlo_scope* s, const kc__lexer* value, kc__shlo_attrs* at) {
  int64_t v[2 * KC_TENSOR_MAX_NDIM], lo[KC_TENSOR_MAX_NDIM], hi[KC_TENSOR_MAX_NDIM];
  size_t n;
  KC_RETURN_IF_ERROR(kc__shlo_ints(s->m, value, "padding", v, KC__ARRAY_SIZE(v), &n));
  if (n % 2) return kc__lex_fail(value, &value->tok, "padding: expected [low, high] pairs");
  for (size_t i = 0; i < n / 2; ++i) {
    lo[i] = v[2 * i];
    hi[i] = v[2 * i + 1];
  }
  KC_RETURN_IF_ERROR(kc__shlo_attrs_ints(s, at, "padding_low", lo, n / 2));
  return kc__shlo_attrs_ints(s, at, "padding_high", hi, n / 2);
}

/* The window attributes of reduce_window and select_and_scatter. */
static kc_status* kc__window_attrs(kc__shlo_scope* s, const kc__shlo_op* op, kc__shlo_attrs* at) {
  KC_RETURN_IF_ERROR(kc__shlo_copy_ints(s, op, at, "window_dimensions", NULL, "window_dimensions", true));
  KC_RETURN_IF_ERROR(kc__shlo_copy_ints(s, op, at, "window_strides", NULL, "window_strides", false));
  KC_RETURN_IF_ERROR(kc__shlo_copy_ints(s, op, at, "base_dilations", NULL, "base_dilations", false));
  KC_RETURN_IF_ERROR(kc__shlo_copy_ints(s, op, at, "window_dilations", NULL, "window_dilations", false));
  const kc__shlo_item* pad = kc__shlo_attr(op, "padding");
  return pad ? kc__shlo_window_padding(s, &pad->at, at) : NULL;
}

kc_status* kc__shlo_lower_reduce_window(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r) {
  kc__shlo_attrs at = {.n = 0};
  KC_RETURN_IF_ERROR(kc__window_attrs(s, op, &at));
  kc_program* body = NULL;
  KC_RETURN_IF_ERROR(kc__region(s, op, 0, NULL, 0, "reducer", &body));
  return kc__shlo_lower_with(s, op, r, &at, &body, 1);
}

kc_status* kc__shlo_lower_select_and_scatter(kc__shlo_scope* s, kc__shlo_op* op,
                                               const kc__shlo_rule* r) {
  kc__shlo_attrs at = {.n = 0};
  KC_RETURN_IF_ERROR(kc__window_attrs(s, op, &at));
  kc_program* p[2] = {NULL, NULL};
  KC_RETURN_IF_ERROR(kc__region(s, op, 0, NULL, 0, "select", &p[0]));
  kc_status* st = kc__region(s, op, 1, NULL, 0, "scatter", &p[1]);
  if (st) {
    kc_program_destroy(p[0]);
    return st;
  }
  return kc__shlo_lower_with(s, op, r, &at, p, 2);
}

kc_status* kc__shlo_lower_sort(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r) {
  kc__shlo_attrs at = {.n = 0};
  int32_t rank = kc_shape_get_rank(kc__shlo_operand(s, op, 0)->shape);
  int64_t d = -1;
  const kc__shlo_item* dim = kc__shlo_attr(op, "dimension");
  if (dim) KC_RETURN_IF_ERROR(kc__shlo_int(s->m, &dim->at, "dimension", &d));
  if (d < 0) d += rank; /* -1, the default: the last dimension */
  KC_RETURN_IF_ERROR(kc__shlo_attrs_ints(s, &at, "dimensions", &d, 1));
  const kc__shlo_item* stable = kc__shlo_attr(op, "is_stable");
  bool is_stable = false;
  if (stable) KC_RETURN_IF_ERROR(kc__shlo_bool(s->m, &stable->at, "is_stable", &is_stable));
  kc__shlo_attrs_bool(&at, "is_stable", is_stable);
  kc_program* cmp = NULL;
  KC_RETURN_IF_ERROR(kc__region(s, op, 0, NULL, 0, "comparator", &cmp));
  return kc__shlo_lower_with(s, op, r, &at, &cmp, 1);
}

/* map: its region applied to whole arrays (../map.h). */
kc_status* kc__shlo_lower_map(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r) {
  (void)r;
  const kc__shlo_item* it = kc__shlo_attr(op, "dimensions");
  if (!it) return kc__shlo_missing(op, "dimensions");
  int64_t dims[KC_TENSOR_MAX_NDIM + 1];
  size_t nd = 0;
  KC_RETURN_IF_ERROR(kc__shlo_ints(s->m, &it->at, "dimensions", dims, KC__ARRAY_SIZE(dims), &nd));
  bool tuple = false;
  const kc_shape* result = NULL;
  KC_RETURN_IF_ERROR(kc__shlo_result_shape(s, op, &tuple, &result));
  if (tuple) return kc__shlo_fail(&op->at, "map: expected one result");
  size_t n = kc__shlo_num_operands(op);
  const kc_shape* shapes[64];
  if (n > KC__ARRAY_SIZE(shapes)) return kc__shlo_fail(&op->at, "map: more than 64 operands");
  for (size_t i = 0; i < n; ++i) shapes[i] = kc__shlo_operand(s, op, i)->shape;
  kc_program* f = NULL;
  KC_RETURN_IF_ERROR(kc__region(s, op, 0, NULL, 0, "computation", &f));
  kc__buf ids = {0};
  kc_string_view name;
  int32_t id = -1;
  kc_status* st = kc__shlo_operand_ids(s, op, 0, n, &ids);
  if (!st) st = kc__shlo_instr_name(s, op, NULL, &name);
  if (!st) {
    st = kc__build_map(s->b, f, (const int32_t*)(const void*)ids.data, shapes, n, result, dims,
                       nd, name, &id);
  }
  if (st) st = kc_status_add_context(st, "line %d, column %d", op->at.line, op->at.column);
  if (!st) st = kc__shlo_bind_results(s, op, id, false);
  kc_program_destroy(f);
  kc__buf_free(&ids);
  return st;
}

/* A field of a dimension-numbers struct copied under HLO's name. */
static kc_status* kc__struct_ints(kc__shlo_scope* s, const kc__shlo_item* dn, kc__shlo_attrs* at,
                                  const char* field) {
  kc__lexer f;
  bool found;
  KC_RETURN_IF_ERROR(kc__shlo_field(s->m, &dn->at, field, &f, &found));
  bool vector_dim = !strcmp(field, "index_vector_dim");
  /* MLIR leaves out the fields that have their defaults: empty lists,
   * and index_vector_dim 0. */
  if (!found && vector_dim) {
    kc__shlo_attrs_int(at, field, 0);
    return NULL;
  }
  if (!found) return kc__shlo_attrs_ints(s, at, field, NULL, 0);
  int64_t v[KC_TENSOR_MAX_NDIM * 2];
  size_t n;
  KC_RETURN_IF_ERROR(kc__shlo_ints(s->m, &f, field, v, KC__ARRAY_SIZE(v), &n));
  if (vector_dim) {
    if (n != 1) return kc__lex_fail(&f, &f.tok, "index_vector_dim: expected one integer");
    kc__shlo_attrs_int(at, field, v[0]);
    return NULL;
  }
  return kc__shlo_attrs_ints(s, at, field, v, n);
}

static kc_status* kc__copy_bool(kc__shlo_scope* s, const kc__shlo_op* op, kc__shlo_attrs* at,
                                const char* name) {
  const kc__shlo_item* it = kc__shlo_attr(op, name);
  if (!it) return NULL;
  bool b;
  KC_RETURN_IF_ERROR(kc__shlo_bool(s->m, &it->at, name, &b));
  kc__shlo_attrs_bool(at, name, b);
  return NULL;
}


/* gather; dynamic_gather, whose slice sizes are its third operand. */
static kc_status* kc__gather(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r,
                             bool dynamic_op) {
  static const char* const fields[] = {"offset_dims", "collapsed_slice_dims",
                                       "operand_batching_dims", "start_indices_batching_dims",
                                       "start_index_map", "index_vector_dim"};
  const kc__shlo_item* dn = kc__shlo_attr(op, "dimension_numbers");
  if (!dn) return kc__shlo_missing(op, "dimension_numbers");
  kc__shlo_attrs at = {.n = 0};
  for (size_t i = 0; i < KC__ARRAY_SIZE(fields); ++i) {
    KC_RETURN_IF_ERROR(kc__struct_ints(s, dn, &at, fields[i]));
  }
  if (dynamic_op) {
    static const char* const sizes[] = {"slice_sizes"};
    KC_RETURN_IF_ERROR(kc__shlo_known_attrs(s, op, 2, sizes, 1, &at));
  } else {
    KC_RETURN_IF_ERROR(kc__shlo_copy_ints(s, op, &at, "slice_sizes", NULL, "slice_sizes", true));
  }
  KC_RETURN_IF_ERROR(kc__copy_bool(s, op, &at, "indices_are_sorted"));
  return kc__shlo_lower_with_n(s, op, r, 2, &at, NULL, 0);
}

kc_status* kc__shlo_lower_gather(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r) {
  return kc__gather(s, op, r, false);
}

kc_status* kc__shlo_lower_dynamic_gather(kc__shlo_scope* s, kc__shlo_op* op,
                                           const kc__shlo_rule* r) {
  return kc__gather(s, op, r, true);
}

kc_status* kc__shlo_lower_scatter(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r) {
  static const char* const fields[] = {"update_window_dims", "inserted_window_dims",
                                       "input_batching_dims", "scatter_indices_batching_dims",
                                       "scatter_dims_to_operand_dims", "index_vector_dim"};
  const kc__shlo_item* dn = kc__shlo_attr(op, "scatter_dimension_numbers");
  if (!dn) return kc__shlo_missing(op, "scatter_dimension_numbers");
  kc__shlo_attrs at = {.n = 0};
  for (size_t i = 0; i < KC__ARRAY_SIZE(fields); ++i) {
    KC_RETURN_IF_ERROR(kc__struct_ints(s, dn, &at, fields[i]));
  }
  KC_RETURN_IF_ERROR(kc__copy_bool(s, op, &at, "indices_are_sorted"));
  KC_RETURN_IF_ERROR(kc__copy_bool(s, op, &at, "unique_indices"));
  kc_program* body = NULL;
  KC_RETURN_IF_ERROR(kc__region(s, op, 0, NULL, 0, "update", &body));
  return kc__shlo_lower_with(s, op, r, &at, &body, 1);
}

/* ---- control flow --------------------------------------------------------- */

static kc_status* kc__append_unique(kc__buf* into, const kc__buf* from) {
  const int32_t* f = (const int32_t*)(const void*)from->data;
  for (size_t i = 0; i < from->size / sizeof *f; ++i) {
    const int32_t* have = (const int32_t*)(const void*)into->data;
    bool seen = false;
    for (size_t k = 0; k < into->size / sizeof *have && !seen; ++k) seen = have[k] == f[i];
    if (!seen && !kc__buf_append(into, &f[i], sizeof f[i])) return kc__parse_oom();
  }
  return NULL;
}

/* The instruction ids of values (indices into the scope's), appended. */
static kc_status* kc__value_ids(kc__shlo_scope* s, const int32_t* values, size_t n,
                                kc__buf* ids) {
  for (size_t i = 0; i < n; ++i) {
    if (!kc__buf_append(ids, &kc__shlo_value_at(s, values[i])->id, sizeof(int32_t))) {
      return kc__parse_oom();
    }
  }
  return NULL;
}

/* A tuple instruction of `ids`. */
static kc_status* kc__tuple_of(kc__shlo_scope* s, const kc__buf* ids, int32_t* out) {
  return kc_program_builder_add_tuple(s->b, (const int32_t*)(const void*)ids->data,
                                      ids->size / sizeof(int32_t), (kc_string_view){NULL, 0}, out);
}

/* while: the state is (operands..., values the regions capture...);
 * condition and body take it as one tuple, the body passes the captured
 * values on unchanged. */
kc_status* kc__shlo_lower_while(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r) {
  size_t n = kc__shlo_num_operands(op);
  const kc__token* names = (const kc__token*)(const void*)op->iter_names.data;
  /* The pretty form names the loop's values in its header; the generic
   * one in each region's ^bb0. */
  size_t named = op->iter_names.size / sizeof *names;
  if (kc__num_regions(op) != 2 || (named != n && named != 0) ||
      kc__shlo_num_result_types(op) != n) {
    return kc__shlo_fail(&op->at, "while: expected (%%iterArg = %%init, ...) : types cond {...} "
                                  "do {...}, a type per operand");
  }
  const kc__lexer* regions = (const kc__lexer*)(const void*)op->regions.data;
  kc__buf args = {0}, caps = {0}, one = {0}, ids = {0}, shapes = {0};
  kc_status* st = NULL;
  for (size_t i = 0; !st && i < n; ++i) {
    kc__shlo_arg a = {.name = named ? names[i] : op->at, .shape = kc__shlo_operand(s, op, i)->shape};
    st = kc__buf_append(&args, &a, sizeof a) ? NULL : kc__parse_oom();
  }
  for (size_t k = 0; !st && k < 2; ++k) {
    one.size = 0;
    st = kc__shlo_region_captures(s, &regions[k], &one);
    if (!st) st = kc__append_unique(&caps, &one);
  }
  const int32_t* cap = (const int32_t*)(const void*)caps.data;
  size_t nc = caps.size / sizeof(int32_t);
  kc_program* p[2] = {NULL, NULL};
  for (size_t k = 0; !st && k < 2; ++k) {
    st = kc__shlo_region_tuple_program(s, &regions[k], (const kc__shlo_arg*)(const void*)args.data,
                                       n, cap, nc, k == 1, k == 1, k ? "body" : "condition", &p[k]);
  }
  if (!st) st = kc__shlo_operand_ids(s, op, 0, n, &ids);
  if (!st) st = kc__value_ids(s, cap, nc, &ids);
  int32_t init = -1, id = -1;
  if (!st) st = kc__tuple_of(s, &ids, &init);
  for (size_t i = 0; !st && i < n + nc; ++i) {
    const kc_shape* e = i < n ? kc__shlo_operand(s, op, i)->shape
                              : kc__shlo_value_at(s, cap[i - n])->shape;
    st = kc__buf_append(&shapes, &e, sizeof e) ? NULL : kc__parse_oom();
  }
  kc_shape* state = NULL;
  if (!st) {
    st = kc_shape_create_tuple((const kc_shape* const*)(const void*)shapes.data, n + nc, &state);
  }
  kc_string_view name;
  if (!st) st = kc__shlo_instr_name(s, op, "while", &name);
  if (!st) {
    kc_instruction_desc d = {.struct_size = sizeof d, .op = r->opcode, .result_shape = state,
                             .operands = &init, .num_operands = 1, .computations = p,
                             .num_computations = 2};
    st = kc_program_builder_add_instruction(s->b, &d, name, &id);
  }
  for (size_t k = 0; k < 2; ++k) kc_program_destroy(p[k]);
  if (!st) st = kc_program_builder_set_location(s->b, id, op->at.line, op->at.column);
  if (!st) st = kc__shlo_bind_results(s, op, id, true);
  kc_shape_destroy(state);
  kc__buf_free(&shapes);
  kc__buf_free(&args);
  kc__buf_free(&caps);
  kc__buf_free(&one);
  kc__buf_free(&ids);
  return st;
}

/* case and if: each branch takes a tuple of the values it captures. */
kc_status* kc__shlo_lower_branches(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r) {
  size_t nb = kc__num_regions(op);
  bool is_if = !strcmp(r->name, "if");
  kc_program* progs[64];
  if (nb == 0 || (is_if && nb != 2) || nb > KC__ARRAY_SIZE(progs) ||
      kc__shlo_num_operands(op) != 1) {
    return kc__shlo_fail(&op->at, "%.*s: expected one operand and %s", (int)op->name.size,
                         op->name.data, is_if ? "two regions" : "1 to 64 regions");
  }
  bool tuple = kc__shlo_num_result_types(op) != 1;
  size_t made = 0;
  kc__buf ids = {0}, caps = {0}, capids = {0};
  kc_status* st = kc__shlo_operand_ids(s, op, 0, 1, &ids);
  for (size_t k = 0; !st && k < nb; ++k) {
    const kc__lexer* at = (const kc__lexer*)(const void*)op->regions.data + k;
    caps.size = capids.size = 0;
    st = kc__shlo_region_captures(s, at, &caps);
    const int32_t* cap = (const int32_t*)(const void*)caps.data;
    size_t nc = caps.size / sizeof(int32_t);
    if (!st) {
      st = kc__shlo_region_tuple_program(s, at, NULL, 0, cap, nc, tuple, false,
                                         is_if ? (k ? "false" : "true") : "branch", &progs[k]);
    }
    if (!st) made++;
    if (!st) st = kc__value_ids(s, cap, nc, &capids);
    int32_t t = -1;
    if (!st) st = kc__tuple_of(s, &capids, &t);
    if (!st && !kc__buf_append(&ids, &t, sizeof t)) st = kc__parse_oom();
  }
  /* Results whose types leave dimensions open have the branches' shapes. */
  if (!st && made) {
    const kc_shape* got = kc_program_get_result_shape(progs[0]);
    for (size_t i = 0; !st && i < kc__shlo_num_result_types(op); ++i) {
      const kc_shape* e = tuple ? (kc_shape_is_tuple(got) && i < kc_shape_get_tuple_size(got)
                                       ? kc_shape_get_element(got, i)
                                       : NULL)
                                : got;
      if (e && !kc_shape_is_tuple(e)) {
        st = kc__shlo_refine_result(s, op, i, kc_shape_get_dims(e), kc_shape_get_rank(e));
      }
    }
  }
  if (!st) {
    st = kc__shlo_emit(s, op, r->opcode, &ids, NULL, progs, made);
  } else {
    for (size_t k = 0; k < made; ++k) kc_program_destroy(progs[k]);
  }
  kc__buf_free(&ids);
  kc__buf_free(&caps);
  kc__buf_free(&capids);
  return st;
}

/* Results bound to values computed elsewhere (calls, barriers). */
kc_status* kc__shlo_bind_values(kc__shlo_scope* s, const kc__shlo_op* op,
                                  const kc__shlo_value* v, size_t n) {
  if (op->result.kind == KC__TOK_END) return NULL;
  if ((int64_t)n != op->num_results) {
    return kc__shlo_fail(&op->at, "%.*s: %zu values for %lld results", (int)op->name.size,
                         op->name.data, n, (long long)op->num_results);
  }
  const kc__token* names = (const kc__token*)(const void*)op->result_names.data;
  for (size_t k = 0; k < n; ++k) {
    kc_string_view key = op->result.text;
    if (op->result_names.size) {
      key = names[k].text;
    } else if (n > 1) {
      char buf[32];
      int len = snprintf(buf, sizeof buf, "#%zu", k);
      char* t = kc__arena_alloc(&s->m->arena, key.size + (size_t)len + 1);
      if (!t) return kc__parse_oom();
      memcpy(t, key.data, key.size);
      memcpy(t + key.size, buf, (size_t)len + 1);
      key = (kc_string_view){t, key.size + (size_t)len};
    }
    KC_RETURN_IF_ERROR(kc__shlo_bind_value(s, key, &v[k]));
  }
  return NULL;
}

/* optimization_barrier, sharding annotations: their operands. */
kc_status* kc__shlo_lower_identity(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r) {
  (void)r;
  kc__buf vals = {0};
  kc_status* st = NULL;
  for (size_t i = 0; !st && i < kc__shlo_num_operands(op); ++i) {
    if (!kc__buf_append(&vals, kc__shlo_operand(s, op, i), sizeof(kc__shlo_value))) {
      st = kc__parse_oom();
    }
  }
  if (!st) {
    st = kc__shlo_bind_values(s, op, (const kc__shlo_value*)(const void*)vals.data,
                         vals.size / sizeof(kc__shlo_value));
  }
  kc__buf_free(&vals);
  return st;
}

/* func.call, and composite (its decomposition), inlined. */
kc_status* kc__shlo_lower_call(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r) {
  (void)r;
  kc__token callee = op->callee;
  const kc__shlo_item* dec = kc__shlo_attr(op, "decomposition");
  if (!dec) dec = kc__shlo_attr(op, "callee"); /* the generic "func.call" */
  if (dec) {
    kc__lexer lx = dec->at;
    if (!kc__tok_is_punct(&lx.tok, '@')) return kc__lex_expected(&lx, &lx.tok, "@function");
    kc__lex_next(&lx);
    callee = lx.tok;
  }
  if (callee.kind == KC__TOK_END) return kc__shlo_missing(op, "@function");
  kc__buf results = {0};
  kc_status* st = kc__shlo_inline_func(s, op, &callee, (const int32_t*)(const void*)op->operands.data,
                                       kc__shlo_num_operands(op), &results);
  if (!st) {
    st = kc__shlo_bind_values(s, op, (const kc__shlo_value*)(const void*)results.data,
                         results.size / sizeof(kc__shlo_value));
  }
  kc__buf_free(&results);
  return st;
}

kc_status* kc__shlo_lower_tuple(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r) {
  (void)r;
  kc__buf ids = {0};
  kc_string_view name;
  int32_t id = -1;
  kc_status* st = kc__shlo_operand_ids(s, op, 0, kc__shlo_num_operands(op), &ids);
  if (!st) st = kc__shlo_instr_name(s, op, NULL, &name);
  if (!st) {
    st = kc_program_builder_add_tuple(s->b, (const int32_t*)(const void*)ids.data,
                                      ids.size / sizeof(int32_t), name, &id);
  }
  kc__buf_free(&ids);
  if (!st) st = kc__shlo_bind_results(s, op, id, false);
  return st;
}

kc_status* kc__shlo_lower_get_tuple_element(kc__shlo_scope* s, kc__shlo_op* op,
                                              const kc__shlo_rule* r) {
  (void)r;
  const kc__shlo_item* it = kc__shlo_attr(op, "index");
  if (!it) it = kc__shlo_word(op, 0);
  if (!it || kc__shlo_num_operands(op) != 1) return kc__shlo_missing(op, "index");
  int64_t index;
  KC_RETURN_IF_ERROR(kc__shlo_int(s->m, &it->at, "index", &index));
  kc_string_view name;
  int32_t id;
  KC_RETURN_IF_ERROR(kc__shlo_instr_name(s, op, NULL, &name));
  KC_RETURN_IF_ERROR(kc_program_builder_add_get_tuple_element(s->b, kc__shlo_operand(s, op, 0)->id,
                                                              index, name, &id));
  return kc__shlo_bind_results(s, op, id, false);
}
