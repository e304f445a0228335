/* stablehlo.custom_call: the HLO custom call, its operands and results in
 * the layouts given, with aliases, typed or opaque backend_config; and
 * the calls that are not kernels (shape_assertion, sharding annotations)
 * (lower_internal.h). */
#include <stdio.h>

#include "program/instr/instr.h"
#include "program/frontend/parse_internal.h"
#include "program/frontend/stablehlo/lower_internal.h"

/* A custom call to shape_assertion, as jax.export checks the shapes a
 * shape-polymorphic module is given: nothing when its condition holds;
 * its error_message, with {0}, {1}, ... the values after the condition,
 * when it does not. */
static kc_status* kc__shape_assertion(kc__shlo_scope* s, kc__shlo_op* op) {
  const kc__shlo_item* msg = kc__shlo_attr(op, "error_message");
  /* What JAX writes beside it says only how XLA calls the check. */
  kc__shlo_attr(op, "api_version");
  kc__shlo_attr(op, "has_side_effect");
  size_t n = kc__shlo_num_operands(op);
  const int64_t* ok = n ? kc__shlo_known(s, op, 0) : NULL;
  if (!ok) {
    return kc__shlo_fail(&op->at, "shape_assertion: its condition is not known while the "
                                  "module is read");
  }
  if (ok[0]) return NULL;
  kc_string_view text = KC_SV_LIT("shape assertion failed");
  if (msg) KC_RETURN_IF_ERROR(kc__shlo_string(s->m, &msg->at, "error_message", &text));
  char out[1024];
  size_t len = 0;
  for (size_t i = 0; i < text.size; ++i) {
    size_t k = 0, j = i + 1;
    if (text.data[i] == '{') {
      while (j < text.size && text.data[j] >= '0' && text.data[j] <= '9' && k < 1000) {
        k = k * 10 + (size_t)(text.data[j++] - '0');
      }
    }
    if (text.data[i] == '{' && j > i + 1 && j < text.size && text.data[j] == '}' &&
        k + 1 < n && kc__shlo_known(s, op, k + 1)) {
      kc__appendf(out, sizeof out, &len, "%lld", (long long)kc__shlo_known(s, op, k + 1)[0]);
      i = j;
    } else {
      kc__appendf(out, sizeof out, &len, "%c", text.data[i]);
    }
  }
  return kc_status_create(KC_INVALID_ARGUMENT, "%s", out);
}

/* The layouts a custom call gives its operands or results
 * ([dense<[1, 0]> : tensor<2xindex>, ...], minor to major), one per
 * array of `shapes`: into m2m[i], nondefault[i] saying whether it is other
 * than row-major. Without the attribute, all are row-major. */
static kc_status* kc__read_layouts(kc__shlo_scope* s, const kc__shlo_op* op, const char* key,
                                   const kc_shape* const* shapes, size_t n,
                                   int8_t (*m2m)[KC_TENSOR_MAX_NDIM], bool* nondefault) {
  for (size_t i = 0; i < n; ++i) nondefault[i] = false;
  const kc__shlo_item* it = kc__shlo_attr(op, key);
  if (!it) return NULL;
  kc__lexer lx = it->at;
  KC_RETURN_IF_ERROR(kc__lex_expect(&lx, '['));
  size_t i = 0;
  for (bool more = kc__lex_list_begin(&lx, ']'); more; ++i) {
    int64_t v[KC_TENSOR_MAX_NDIM];
    size_t rank;
    kc__token at = lx.tok;
    KC_RETURN_IF_ERROR(kc__shlo_ints(s->m, &lx, key, v, KC_TENSOR_MAX_NDIM, &rank));
    bool seen[KC_TENSOR_MAX_NDIM] = {false};
    bool array = i < n && !kc_shape_is_tuple(shapes[i]);
    bool ok = array && (int32_t)rank == kc_shape_get_rank(shapes[i]);
    for (size_t k = 0; ok && k < rank; ++k) {
      ok = v[k] >= 0 && v[k] < (int64_t)rank && !seen[v[k]];
      if (ok) seen[v[k]] = true;
      if (ok) m2m[i][k] = (int8_t)v[k];
      if (ok && v[k] != (int64_t)(rank - 1 - k)) nondefault[i] = true;
    }
    if (!ok) {
      return kc__shlo_fail(&at, "custom_call: %s: layout %zu: expected each dimension of an "
                           "array of %zu once", key, i, i < n ? (size_t)kc_shape_get_rank(shapes[i]) : (size_t)0);
    }
    KC_RETURN_IF_ERROR(kc__shlo_skip_value(&lx, true));
    KC_RETURN_IF_ERROR(kc__lex_list_next(&lx, ']', &more));
  }
  if (i != n) {
    return kc__shlo_fail(&it->at.tok, "custom_call: %s: %zu layouts for %zu arrays", key, i, n);
  }
  return NULL;
}

/* output_operand_aliases = [#stablehlo.output_operand_alias<
 * output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>]
 * into the builder's form, in the module's arena. */
static kc_status* kc__read_aliases(kc__shlo_scope* s, const kc__shlo_item* it,
                                   kc_output_operand_alias** out, size_t* count) {
  *out = NULL;
  *count = 0;
  kc__lexer lx = it->at;
  KC_RETURN_IF_ERROR(kc__lex_expect(&lx, '['));
  kc__buf list = {0};
  kc_status* st = NULL;
  for (bool more = kc__lex_list_begin(&lx, ']'); more && !st;) {
    kc_output_operand_alias a;
    memset(&a, 0, sizeof a);
    static const char* const fields[] = {"output_tuple_indices", "operand_index",
                                         "operand_tuple_indices"};
    for (int f = 0; f < 3 && !st; ++f) {
      kc__lexer v;
      bool found = false;
      int64_t ints[KC_TENSOR_MAX_NDIM];
      size_t n = 0;
      st = kc__shlo_field(s->m, &lx, fields[f], &v, &found);
      if (!st && found) st = kc__shlo_ints(s->m, &v, fields[f], ints, KC_TENSOR_MAX_NDIM, &n);
      if (st) break;
      if (f == 1) {
        if (n != 1 || ints[0] < 0 || ints[0] > INT32_MAX) {
          st = kc__shlo_fail(&lx.tok, "output_operand_alias: expected an operand_index");
        } else {
          a.operand = (int32_t)ints[0];
        }
        continue;
      }
      int64_t* copy = kc__arena_dup(&s->m->arena, ints, n * sizeof *ints);
      if (!copy) st = kc__parse_oom();
      if (f == 0) {
        a.output_index = copy;
        a.output_index_size = n;
      } else {
        a.operand_index = copy;
        a.operand_index_size = n;
      }
    }
    if (!st && !kc__buf_append(&list, &a, sizeof a)) st = kc__parse_oom();
    if (!st) st = kc__shlo_skip_value(&lx, false);
    if (!st) st = kc__lex_list_next(&lx, ']', &more);
  }
  if (!st && list.size) {
    *count = list.size / sizeof(kc_output_operand_alias);
    *out = kc__arena_dup(&s->m->arena, list.data, list.size);
    if (!*out) st = kc__parse_oom();
  }
  kc__buf_free(&list);
  return st;
}

static bool kc__is_empty_list(const kc__shlo_item* it) {
  if (!kc__tok_is_punct(&it->at.tok, '[')) return false;
  kc__token next = kc__lex_peek(&it->at);
  return kc__tok_is_punct(&next, ']');
}

/* The custom call `d` describes, with op's operands and results: each
 * handed over, and read back, in the layout operand_layouts and
 * result_layouts give it (JAX's LAPACK calls take column-major
 * matrices), through the HLO parser's layout conversions. */
static kc_status* kc__laid_out_call(kc__shlo_scope* s, const kc__shlo_op* op,
                                    kc_custom_call_desc* d) {
  enum { kMax = 64 };
  size_t n = kc__shlo_num_operands(op), nr = kc__shlo_num_result_types(op);
  if (n > kMax || nr > kMax) return kc__shlo_fail(&op->at, "custom_call: more than 64 operands or results");
  const kc_shape* in_shapes[kMax];
  int32_t ops[kMax];
  int8_t m2m[kMax][KC_TENSOR_MAX_NDIM];
  bool nondefault[kMax];
  for (size_t i = 0; i < n; ++i) {
    in_shapes[i] = kc__shlo_operand(s, op, i)->shape;
    ops[i] = kc__shlo_operand(s, op, i)->id;
  }
  KC_RETURN_IF_ERROR(kc__read_layouts(s, op, "operand_layouts", in_shapes, n, m2m, nondefault));
  kc_string_view name;
  KC_RETURN_IF_ERROR(kc__shlo_instr_name(s, op, NULL, &name));
  for (size_t i = 0; i < n; ++i) {
    if (!nondefault[i]) continue;
    char suffix[32];
    snprintf(suffix, sizeof suffix, "operand%zu", i);
    kc_string_view at;
    KC_RETURN_IF_ERROR(kc__shlo_instr_name(s, op, suffix, &at));
    KC_RETURN_IF_ERROR(kc__layout_to_physical(s->b, &s->m->arena, ops[i], in_shapes[i], m2m[i],
                                              at, &ops[i]));
  }
  const kc_shape* const* out_shapes = (const kc_shape* const*)(const void*)op->result_types.data;
  KC_RETURN_IF_ERROR(kc__read_layouts(s, op, "result_layouts", out_shapes, nr, m2m, nondefault));
  bool tuple = false;
  const kc_shape* shape = NULL;
  KC_RETURN_IF_ERROR(kc__shlo_result_shape(s, op, &tuple, &shape));
  d->operands = ops;
  d->num_operands = n;
  d->result_shape = shape;
  kc_string_view call_name;
  KC_RETURN_IF_ERROR(kc__shlo_instr_name(s, op, "call", &call_name));
  int32_t id = -1;
  KC_RETURN_IF_ERROR(kc_program_builder_add_custom_call(s->b, d, call_name, &id));
  KC_RETURN_IF_ERROR(kc_program_builder_set_location(s->b, id, op->at.line, op->at.column));
  /* Its results, each read back from its layout. */
  kc__shlo_value results[kMax];
  memset(results, 0, sizeof results);
  for (size_t i = 0; i < nr; ++i) {
    results[i].shape = out_shapes[i];
    results[i].id = id;
    char suffix[32];
    snprintf(suffix, sizeof suffix, "result%zu", i);
    kc_string_view at, element = {NULL, 0};
    KC_RETURN_IF_ERROR(kc__shlo_instr_name(s, op, suffix, &at));
    if (tuple) {
      snprintf(suffix, sizeof suffix, "result%zu_laid_out", i);
      if (nondefault[i]) KC_RETURN_IF_ERROR(kc__shlo_instr_name(s, op, suffix, &element));
      KC_RETURN_IF_ERROR(kc_program_builder_add_get_tuple_element(
          s->b, id, (int64_t)i, nondefault[i] ? element : at, &results[i].id));
    }
    if (nondefault[i]) {
      KC_RETURN_IF_ERROR(kc__layout_from_physical(s->b, &s->m->arena, results[i].id,
                                                  out_shapes[i], m2m[i],
                                                  nr == 1 ? name : at, &results[i].id));
    }
  }
  return kc__shlo_bind_values(s, op, results, nr);
}

kc_status* kc__shlo_lower_custom_call(kc__shlo_scope* s, kc__shlo_op* op, const kc__shlo_rule* r) {
  kc_string_view target = op->callee.text;
  if (op->callee.kind == KC__TOK_END) {
    const kc__shlo_item* t = kc__shlo_attr(op, "call_target_name");
    if (!t) return kc__shlo_missing(op, "@target");
    KC_RETURN_IF_ERROR(kc__shlo_string(s->m, &t->at, "call_target_name", &target));
  }
  if (kc_sv_equal(target, KC_SV_LIT("shape_assertion"))) return kc__shape_assertion(s, op);
  /* Sharding annotations: their operand, on one device. */
  if (kc_sv_equal(target, KC_SV_LIT("Sharding")) ||
      kc_sv_equal(target, KC_SV_LIT("xla.sdy.FuncResultSharding")) ||
      kc_sv_equal(target, KC_SV_LIT("xla.sdy.FuncArgSharding"))) {
    return kc__shlo_lower_identity(s, op, r);
  }
  const kc__shlo_item* called = kc__shlo_attr(op, "called_computations");
  if (called && !kc__is_empty_list(called)) {
    return kc__shlo_fail(&op->at, "custom_call @%.*s: called_computations are not supported",
                         (int)target.size, target.data);
  }
  int64_t api = 0;
  const kc__shlo_item* v = kc__shlo_attr(op, "api_version");
  if (v) KC_RETURN_IF_ERROR(kc__shlo_int(s->m, &v->at, "api_version", &api));
  /* Typed FFI attributes: backend_config as a dictionary, or (as JAX
   * writes them) mhlo.backend_config beside an empty string. */
  const kc__shlo_item* dict = kc__shlo_attr(op, "mhlo.backend_config");
  const kc__shlo_item* config = kc__shlo_attr(op, "backend_config");
  if (config && kc__tok_is_punct(&config->at.tok, '{')) {
    dict = config;
    config = NULL;
  }
  /* JAX writes a typed FFI call as the default (original) version with
   * mhlo.backend_config beside it, stated or not; XLA reads it as typed. */
  if (api <= KC_XCALL_API_ORIGINAL) api = dict ? KC_XCALL_API_TYPED : KC_XCALL_API_ORIGINAL;
  kc_custom_call_desc d;
  memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.target = target;
  d.api_version = (int32_t)api;
  kc_attr_dict attrs = {0, NULL};
  if (dict) {
    kc__lexer lx = dict->at;
    KC_RETURN_IF_ERROR(kc__parse_typed_attr_dict(&lx, &s->m->arena, &attrs));
    d.attrs = &attrs;
  }
  if (config) {
    kc_string_view bytes;
    KC_RETURN_IF_ERROR(kc__shlo_string(s->m, &config->at, "backend_config", &bytes));
    d.opaque = bytes.data;
    d.opaque_size = bytes.size;
  }
  const kc__shlo_item* alias = kc__shlo_attr(op, "output_operand_aliases");
  if (alias) {
    kc_output_operand_alias* aliases = NULL;
    KC_RETURN_IF_ERROR(kc__read_aliases(s, alias, &aliases, &d.num_aliases));
    d.aliases = aliases;
  }
  const kc__shlo_item* side = kc__shlo_attr(op, "has_side_effect");
  if (side && !kc__tok_is_word(&side->at.tok, "true") && !kc__tok_is_word(&side->at.tok, "false")) {
    d.has_side_effect = true; /* a unit attribute */
  } else if (side) {
    KC_RETURN_IF_ERROR(kc__shlo_bool(s->m, &side->at, "has_side_effect", &d.has_side_effect));
  }
  return kc__laid_out_call(s, op, &d);
}
