/* VHLO's ops as StableHLO text (bytecode_internal.h): one row per op. A
 * VHLO op carries every attribute, in the order of their names; a row
 * says, for each, how StableHLO writes it (vhlo.c writes the values), so
 * that adding an op is adding its row. Ops without a row are refused,
 * naming them: kcall reads the StableHLO ops that have a row here. */
#include <stdio.h>

#include "program/frontend/stablehlo/bytecode_internal.h"

/* The structs some ops' fields build. */
enum {
  KC__SPECIAL_NONE,
  KC__SPECIAL_DOT,     /* dot_dimension_numbers = #stablehlo.dot<...> */
  KC__SPECIAL_GATHER,  /* dimension_numbers = #stablehlo.gather<...> */
  KC__SPECIAL_SCATTER, /* scatter_dimension_numbers = #stablehlo.scatter<...> */
  KC__SPECIAL_CONV,    /* dimension_numbers = #stablehlo.conv<[b, 0, f]x[...]->[...]> */
};

#define P KC__HOW_PLAIN
#define A KC__HOW_ARRAY
#define F KC__HOW_FIELD
#define D KC__HOW_DROP
#define S KC__HOW_SOME
#define G KC__BC_GENERIC

/* An op without attributes whose StableHLO name is the VHLO one less its
 * version. */
#define KC__PLAIN(v, t) {"vhlo." v, "stablehlo." t, G, 0, false, {{NULL, 0}}}
/* One whose only attribute is result_accuracy (dropped: StableHLO's
 * default asks for the usual accuracy, and kcall gives that). */
#define KC__ACCURATE(v, t) {"vhlo." v, "stablehlo." t, G, 0, false, {{"result_accuracy", D}}}

static const kc__vhlo_rule kc__vhlo_rules[] = {
    {"builtin.module", "module", KC__BC_MODULE, 0, true,
     {{"sym_name", P}, {"sym_visibility", D}}},
    {"vhlo.func_v1", "func.func", KC__BC_FUNC, 0, false,
     {{"arg_attrs", D}, {"function_type", P}, {"res_attrs", D}, {"sym_name", P},
      {"sym_visibility", P}}},
    {"vhlo.return_v1", "return", KC__BC_RETURN, 0, false, {{NULL, 0}}},
    /* Shardy's mesh, beside the functions: no devices to name on one. */
    {"sdy.mesh", NULL, KC__BC_SKIP, 0, false, {{NULL, 0}}},
    {"vhlo.call_v1", "func.call", G, 0, false, {{"callee", KC__HOW_SYMBOL}}},
    KC__PLAIN("abs_v1", "abs"),
    KC__PLAIN("add_v1", "add"),
    KC__PLAIN("and_v1", "and"),
    KC__PLAIN("atan2_v1", "atan2"),
    KC__PLAIN("bitcast_convert_v1", "bitcast_convert"),
    KC__PLAIN("cbrt_v1", "cbrt"),
    KC__ACCURATE("cbrt_v2", "cbrt"),
    KC__PLAIN("ceil_v1", "ceil"),
    KC__PLAIN("clamp_v1", "clamp"),
    KC__PLAIN("complex_v1", "complex"),
    KC__PLAIN("convert_v1", "convert"),
    KC__PLAIN("cosine_v1", "cosine"),
    KC__ACCURATE("cosine_v2", "cosine"),
    KC__PLAIN("count_leading_zeros_v1", "count_leading_zeros"),
    KC__PLAIN("divide_v1", "divide"),
    KC__PLAIN("dynamic_reshape_v1", "dynamic_reshape"),
    KC__PLAIN("dynamic_pad_v1", "dynamic_pad"),
    KC__PLAIN("dynamic_update_slice_v1", "dynamic_update_slice"),
    KC__PLAIN("exponential_minus_one_v1", "exponential_minus_one"),
    KC__ACCURATE("exponential_minus_one_v2", "exponential_minus_one"),
    KC__PLAIN("exponential_v1", "exponential"),
    KC__ACCURATE("exponential_v2", "exponential"),
    KC__PLAIN("floor_v1", "floor"),
    KC__PLAIN("imag_v1", "imag"),
    KC__PLAIN("is_finite_v1", "is_finite"),
    KC__PLAIN("log_plus_one_v1", "log_plus_one"),
    KC__ACCURATE("log_plus_one_v2", "log_plus_one"),
    KC__PLAIN("log_v1", "log"),
    KC__ACCURATE("log_v2", "log"),
    KC__PLAIN("logistic_v1", "logistic"),
    KC__ACCURATE("logistic_v2", "logistic"),
    KC__PLAIN("maximum_v1", "maximum"),
    KC__PLAIN("minimum_v1", "minimum"),
    KC__PLAIN("multiply_v1", "multiply"),
    KC__PLAIN("negate_v1", "negate"),
    KC__PLAIN("not_v1", "not"),
    KC__PLAIN("optimization_barrier_v1", "optimization_barrier"),
    KC__PLAIN("or_v1", "or"),
    KC__PLAIN("popcnt_v1", "popcnt"),
    KC__PLAIN("power_v1", "power"),
    KC__PLAIN("real_dynamic_slice_v1", "real_dynamic_slice"),
    KC__PLAIN("real_v1", "real"),
    KC__PLAIN("remainder_v1", "remainder"),
    KC__PLAIN("reshape_v1", "reshape"),
    KC__PLAIN("round_nearest_afz_v1", "round_nearest_afz"),
    KC__PLAIN("round_nearest_even_v1", "round_nearest_even"),
    KC__PLAIN("rsqrt_v1", "rsqrt"),
    KC__ACCURATE("rsqrt_v2", "rsqrt"),
    KC__PLAIN("select_v1", "select"),
    KC__PLAIN("shift_left_v1", "shift_left"),
    KC__PLAIN("shift_right_arithmetic_v1", "shift_right_arithmetic"),
    KC__PLAIN("shift_right_logical_v1", "shift_right_logical"),
    KC__PLAIN("sign_v1", "sign"),
    KC__PLAIN("sine_v1", "sine"),
    KC__ACCURATE("sine_v2", "sine"),
    KC__PLAIN("sqrt_v1", "sqrt"),
    KC__ACCURATE("sqrt_v2", "sqrt"),
    KC__PLAIN("subtract_v1", "subtract"),
    KC__PLAIN("tan_v1", "tan"),
    KC__ACCURATE("tan_v2", "tan"),
    KC__PLAIN("tanh_v1", "tanh"),
    KC__ACCURATE("tanh_v2", "tanh"),
    KC__PLAIN("tuple_v1", "tuple"),
    KC__PLAIN("xor_v1", "xor"),
    KC__PLAIN("case_v1", "case"),
    KC__PLAIN("if_v1", "if"),
    KC__PLAIN("while_v1", "while"),
    {"vhlo.broadcast_in_dim_v1", "stablehlo.broadcast_in_dim", G, 0, false,
     {{"broadcast_dimensions", A}}},
    {"vhlo.compare_v1", "stablehlo.compare", G, 0, false,
     {{"compare_type", P}, {"comparison_direction", P}}},
    {"vhlo.composite_v1", "stablehlo.composite", G, 0, false,
     {{"composite_attributes", S}, {"decomposition", KC__HOW_SYMBOL}, {"name", P},
      {"version", P}}},
    {"vhlo.composite_v2", "stablehlo.composite", G, 0, false,
     {{"composite_attributes", S}, {"decomposition", KC__HOW_SYMBOL}, {"name", P},
      {"version", P}}},
    {"vhlo.concatenate_v1", "stablehlo.concatenate", G, 0, false, {{"dimension", P}}},
    {"vhlo.constant_v1", "stablehlo.constant", G, 0, false, {{"value", P}}},
    {"vhlo.convolution_v1", "stablehlo.convolution", G, KC__SPECIAL_CONV, false,
     {{"batch_group_count", P}, {"feature_group_count", P}, {"input_batch_dimension", F},
      {"input_feature_dimension", F}, {"input_spatial_dimensions", F},
      {"kernel_input_feature_dimension", F}, {"kernel_output_feature_dimension", F},
      {"kernel_spatial_dimensions", F}, {"lhs_dilation", A}, {"output_batch_dimension", F},
      {"output_feature_dimension", F}, {"output_spatial_dimensions", F}, {"padding", P},
      {"precision_config", D}, {"rhs_dilation", A}, {"window_reversal", KC__HOW_BOOLS},
      {"window_strides", A}}},
    {"vhlo.dynamic_conv_v2", "stablehlo.dynamic_conv", G, KC__SPECIAL_CONV, false,
     {{"batch_group_count", P}, {"feature_group_count", P}, {"input_batch_dimension", F},
      {"input_feature_dimension", F}, {"input_spatial_dimensions", F},
      {"kernel_input_feature_dimension", F}, {"kernel_output_feature_dimension", F},
      {"kernel_spatial_dimensions", F}, {"lhs_dilation", A}, {"output_batch_dimension", F},
      {"output_feature_dimension", F}, {"output_spatial_dimensions", F},
      {"precision_config", D}, {"rhs_dilation", A}, {"window_reversal", KC__HOW_BOOLS},
      {"window_strides", A}}},
    {"vhlo.custom_call_v1", "stablehlo.custom_call", G, 0, false,
     {{"api_version", KC__HOW_API}, {"backend_config", S}, {"call_target_name", P},
      {"called_computations", KC__HOW_EMPTY}, {"has_side_effect", P}, {"operand_layouts", S},
      {"output_operand_aliases", S}, {"result_layouts", S}}},
    {"vhlo.custom_call_v2", "stablehlo.custom_call", G, 0, false,
     {{"api_version", KC__HOW_API}, {"backend_config", S}, {"call_target_name", P},
      {"called_computations", KC__HOW_EMPTY}, {"has_side_effect", P}, {"operand_layouts", S},
      {"output_operand_aliases", S}, {"result_layouts", S}, {"result_tilings", KC__HOW_EMPTY}}},
    {"vhlo.dot_general_v1", "stablehlo.dot_general", G, KC__SPECIAL_DOT, false,
     {{"lhs_batching_dimensions", F}, {"lhs_contracting_dimensions", F},
      {"precision_config", D}, {"rhs_batching_dimensions", F},
      {"rhs_contracting_dimensions", F}}},
    {"vhlo.dot_general_v2", "stablehlo.dot_general", G, KC__SPECIAL_DOT, false,
     {{"accumulation_type", KC__HOW_NONE}, {"allow_imprecise_accumulation", KC__HOW_NONE},
      {"lhs_batching_dimensions", F}, {"lhs_component_count", KC__HOW_NONE},
      {"lhs_contracting_dimensions", F}, {"lhs_precision_type", KC__HOW_NONE},
      {"num_primitive_operations", KC__HOW_NONE}, {"precision_config", D},
      {"rhs_batching_dimensions", F}, {"rhs_component_count", KC__HOW_NONE},
      {"rhs_contracting_dimensions", F}, {"rhs_precision_type", KC__HOW_NONE}}},
    {"vhlo.dynamic_broadcast_in_dim_v1", "stablehlo.dynamic_broadcast_in_dim", G, 0, false,
     {{"broadcast_dimensions", A}, {"known_expanding_dimensions", A},
      {"known_nonexpanding_dimensions", A}}},
    {"vhlo.dynamic_gather_v1", "stablehlo.dynamic_gather", G, KC__SPECIAL_GATHER, false,
     {{"collapsed_slice_dims", F}, {"index_vector_dim", F}, {"indices_are_sorted", P},
      {"offset_dims", F}, {"start_index_map", F}}},
    {"vhlo.dynamic_gather_v2", "stablehlo.dynamic_gather", G, KC__SPECIAL_GATHER, false,
     {{"collapsed_slice_dims", F}, {"index_vector_dim", F}, {"indices_are_sorted", P},
      {"offset_dims", F}, {"operand_batching_dims", F}, {"start_index_map", F},
      {"start_indices_batching_dims", F}}},
    {"vhlo.dynamic_iota_v1", "stablehlo.dynamic_iota", G, 0, false, {{"iota_dimension", P}}},
    {"vhlo.dynamic_slice_v1", "stablehlo.dynamic_slice", G, 0, false, {{"slice_sizes", A}}},
    {"vhlo.fft_v1", "stablehlo.fft", G, 0, false, {{"fft_length", A}, {"fft_type", P}}},
    {"vhlo.gather_v1", "stablehlo.gather", G, KC__SPECIAL_GATHER, false,
     {{"collapsed_slice_dims", F}, {"index_vector_dim", F}, {"indices_are_sorted", P},
      {"offset_dims", F}, {"slice_sizes", A}, {"start_index_map", F}}},
    {"vhlo.gather_v2", "stablehlo.gather", G, KC__SPECIAL_GATHER, false,
     {{"collapsed_slice_dims", F}, {"index_vector_dim", F}, {"indices_are_sorted", P},
      {"offset_dims", F}, {"operand_batching_dims", F}, {"slice_sizes", A},
      {"start_index_map", F}, {"start_indices_batching_dims", F}}},
    {"vhlo.get_dimension_size_v1", "stablehlo.get_dimension_size", G, 0, false,
     {{"dimension", P}}},
    {"vhlo.get_tuple_element_v1", "stablehlo.get_tuple_element", G, 0, false, {{"index", P}}},
    {"vhlo.iota_v1", "stablehlo.iota", G, 0, false, {{"iota_dimension", P}}},
    {"vhlo.pad_v1", "stablehlo.pad", G, 0, false,
     {{"edge_padding_high", A}, {"edge_padding_low", A}, {"interior_padding", A}}},
    {"vhlo.reduce_precision_v1", "stablehlo.reduce_precision", G, 0, false,
     {{"exponent_bits", P}, {"mantissa_bits", P}}},
    {"vhlo.reduce_v1", "stablehlo.reduce", G, 0, false, {{"dimensions", A}}},
    {"vhlo.reduce_window_v1", "stablehlo.reduce_window", G, 0, false,
     {{"base_dilations", A}, {"padding", P}, {"window_dilations", A}, {"window_dimensions", A},
      {"window_strides", A}}},
    {"vhlo.reverse_v1", "stablehlo.reverse", G, 0, false, {{"dimensions", A}}},
    {"vhlo.rng_bit_generator_v1", "stablehlo.rng_bit_generator", G, 0, false,
     {{"rng_algorithm", P}}},
    {"vhlo.scatter_v1", "stablehlo.scatter", G, KC__SPECIAL_SCATTER, false,
     {{"index_vector_dim", F}, {"indices_are_sorted", P}, {"inserted_window_dims", F},
      {"scatter_dims_to_operand_dims", F}, {"unique_indices", P}, {"update_window_dims", F}}},
    {"vhlo.scatter_v2", "stablehlo.scatter", G, KC__SPECIAL_SCATTER, false,
     {{"index_vector_dim", F}, {"indices_are_sorted", P}, {"input_batching_dims", F},
      {"inserted_window_dims", F}, {"scatter_dims_to_operand_dims", F},
      {"scatter_indices_batching_dims", F}, {"unique_indices", P}, {"update_window_dims", F}}},
    {"vhlo.select_and_scatter_v1", "stablehlo.select_and_scatter", G, 0, false,
     {{"padding", P}, {"window_dimensions", A}, {"window_strides", A}}},
    {"vhlo.slice_v1", "stablehlo.slice", G, 0, false,
     {{"limit_indices", A}, {"start_indices", A}, {"strides", A}}},
    {"vhlo.sort_v1", "stablehlo.sort", G, 0, false, {{"dimension", P}, {"is_stable", P}}},
    {"vhlo.transpose_v1", "stablehlo.transpose", G, 0, false, {{"permutation", A}}},
    {"vhlo.triangular_solve_v1", "stablehlo.triangular_solve", G, 0, false,
     {{"left_side", P}, {"lower", P}, {"transpose_a", P}, {"unit_diagonal", P}}},
};

#undef P
#undef A
#undef F
#undef D
#undef S
#undef G

const kc__vhlo_rule* kc__vhlo_rule_find(kc_string_view dialect, kc_string_view name) {
  for (size_t i = 0; i < KC__ARRAY_SIZE(kc__vhlo_rules); ++i) {
    /* "DIALECT.NAME", compared without measuring it first */
    const char* full = kc__vhlo_rules[i].vhlo;
    if (strncmp(full, dialect.data, dialect.size) == 0 && full[dialect.size] == '.' &&
        strncmp(full + dialect.size + 1, name.data, name.size) == 0 &&
        full[dialect.size + 1 + name.size] == '\0') {
      return &kc__vhlo_rules[i];
    }
  }
  return NULL;
}

static kc_status* kc__vhlo_add(kc__bc_op* op, kc_string_view name, uint32_t attr, uint8_t how) {
  kc__bc_named n = {.name = name, .attr = attr, .how = how};
  return kc__buf_append(&op->named, &n, sizeof n) ? NULL : kc__status_oom();
}

static size_t kc__vhlo_num_named(const kc__bc_op* op) {
  return op->named.size / sizeof(kc__bc_named);
}

static const kc__bc_named* kc__vhlo_named(const kc__bc_op* op, size_t i) {
  return (const kc__bc_named*)(const void*)op->named.data + i;
}

/* The attribute named `name`, or NULL. */
static const kc__bc_named* kc__vhlo_find(const kc__bc_op* op, const char* name) {
  kc_string_view want = kc_sv(name);
  for (size_t i = 0; i < kc__vhlo_num_named(op); ++i) {
    kc_string_view got = kc__vhlo_named(op, i)->name;
    if (got.size == want.size && memcmp(got.data, want.data, want.size) == 0) {
      return kc__vhlo_named(op, i);
    }
  }
  return NULL;
}

kc_status* kc__vhlo_read_props(kc__bc* c, kc__bc_cursor* cur, kc__bc_op* op) {
  const kc__vhlo_rule* r = op->rule;
  for (size_t i = 0; i < KC__ARRAY_SIZE(r->attrs) && r->attrs[i].name; ++i) {
    uint32_t a;
    if (r->optional) {
      size_t at = cur->pos;
      uint64_t v;
      KC_RETURN_IF_ERROR(kc__bc_varint(c, cur, r->attrs[i].name, &v));
      if (!(v & 1)) continue;
      if ((v >> 1) >= c->num_attrs) {
        return kc__bc_fail(c, at, "expected %s (an attribute index below %zu), got %llu",
                           r->attrs[i].name, c->num_attrs, (unsigned long long)(v >> 1));
      }
      a = (uint32_t)(v >> 1);
    } else {
      KC_RETURN_IF_ERROR(kc__bc_index(c, cur, c->num_attrs, r->attrs[i].name, &a));
    }
    KC_RETURN_IF_ERROR(kc__vhlo_add(op, kc_sv(r->attrs[i].name), a, r->attrs[i].how));
  }
  return NULL;
}

kc_status* kc__vhlo_read_discardable(kc__bc* c, uint32_t attr, kc__bc_op* op) {
  const kc__bc_entry* e = &c->attrs[attr];
  kc__bc_cursor cur = {e->pos, e->pos + e->size};
  uint64_t code;
  size_t n;
  if (!e->custom || (int64_t)e->dialect != c->builtin) {
    return kc__bc_fail(c, e->pos, "expected a builtin dictionary of an op's attributes");
  }
  KC_RETURN_IF_ERROR(kc__bc_varint(c, &cur, "an attribute code", &code));
  if (code != 1) {
    return kc__bc_fail(c, e->pos, "expected a builtin dictionary (code 1) of an op's "
                       "attributes, got code %llu", (unsigned long long)code);
  }
  KC_RETURN_IF_ERROR(kc__bc_count(c, &cur, 2, "a number of attributes", &n));
  for (size_t i = 0; i < n; ++i) {
    uint32_t key, value;
    kc_string_view name;
    KC_RETURN_IF_ERROR(kc__bc_index(c, &cur, c->num_attrs, "an attribute's name", &key));
    KC_RETURN_IF_ERROR(kc__bc_index(c, &cur, c->num_attrs, "an attribute", &value));
    KC_RETURN_IF_ERROR(kc__vhlo_get_string(c, key, "an attribute's name", &name));
    if (op->rule->form == KC__BC_MODULE) {
      bool partitions = kc_sv_equal(name, KC_SV_LIT("mhlo.num_partitions"));
      if (partitions || kc_sv_equal(name, KC_SV_LIT("mhlo.num_replicas"))) {
        int64_t v;
        KC_RETURN_IF_ERROR(kc__vhlo_get_int(c, value, "an integer", &v));
        if (v != 1) {
          return kc__bc_unsupported("a module for %lld %s (kcall runs one)", (long long)v,
                                    partitions ? "partitions" : "replicas");
        }
      }
    } else if (kc_sv_equal(name, KC_SV_LIT("mhlo.backend_config")) ||
               kc_sv_equal(name, KC_SV_LIT("error_message"))) {
      /* A custom call's configuration, and the message of jax.export's
       * shape assertions, which a failing one gives. */
      KC_RETURN_IF_ERROR(kc__vhlo_add(op, name, value, KC__HOW_DISCARDABLE));
    }
  }
  if (cur.pos != cur.end) {
    return kc__bc_fail(c, cur.pos, "expected the end of an op's attributes, got %zu more bytes",
                       cur.end - cur.pos);
  }
  return NULL;
}

/* ---- the text of an op ------------------------------------------------------ */

/* The ints of a struct's field: "[1, 2]", or "1" for an integer. */
static kc_status* kc__vhlo_put_field(kc__bc* c, const kc__bc_named* n) {
  int64_t v[128];
  size_t count;
  if (kc_sv_equal(n->name, KC_SV_LIT("index_vector_dim"))) {
    KC_RETURN_IF_ERROR(kc__vhlo_get_int(c, n->attr, "index_vector_dim", &v[0]));
    kc__bc_put_int(c, v[0]);
    return NULL;
  }
  KC_RETURN_IF_ERROR(kc__vhlo_get_ints(c, n->attr, "a dimension list", v, 128, &count));
  kc__bc_puts(c, "[");
  for (size_t i = 0; i < count; ++i) {
    if (i) kc__bc_puts(c, ", ");
    kc__bc_put_int(c, v[i]);
  }
  kc__bc_puts(c, "]");
  return NULL;
}

/* One side of a convolution's dimension numbers: the labels of `rank`
 * dimensions from the batch (or input feature) dimension, the feature
 * (or output feature) dimension and the spatial ones. */
static kc_status* kc__vhlo_conv_side(kc__bc* c, const kc__bc_op* op, const char* a,
                                     const char* b, const char* spatial, char la, char lb) {
  const kc__bc_named* na = kc__vhlo_find(op, a);
  const kc__bc_named* nb = kc__vhlo_find(op, b);
  const kc__bc_named* ns = kc__vhlo_find(op, spatial);
  int64_t ia, ib, sp[64];
  size_t n;
  KC_RETURN_IF_ERROR(kc__vhlo_get_int(c, na->attr, a, &ia));
  KC_RETURN_IF_ERROR(kc__vhlo_get_int(c, nb->attr, b, &ib));
  KC_RETURN_IF_ERROR(kc__vhlo_get_ints(c, ns->attr, spatial, sp, 62, &n));
  char labels[64];
  size_t rank = n + 2;
  memset(labels, 0, sizeof labels);
  bool ok = ia >= 0 && ia < (int64_t)rank && ib >= 0 && ib < (int64_t)rank && ia != ib;
  if (ok) labels[ia] = la;
  if (ok) labels[ib] = lb;
  for (size_t i = 0; ok && i < n; ++i) {
    ok = sp[i] >= 0 && sp[i] < (int64_t)rank && !labels[sp[i]] && i < 10;
    if (ok) labels[sp[i]] = (char)('0' + i);
  }
  if (!ok) {
    return kc__bc_fail(c, op->at, "expected %s, %s and %s to name each of %zu dimensions once",
                       a, b, spatial, rank);
  }
  kc__bc_puts(c, "[");
  for (size_t i = 0; i < rank; ++i) kc__bc_printf(c, i ? ", %c" : "%c", labels[i]);
  kc__bc_puts(c, "]");
  return NULL;
}

/* The struct the op's fields build, as an attribute of the text. */
static kc_status* kc__vhlo_put_struct(kc__bc* c, const kc__bc_op* op) {
  static const char* const key[] = {NULL, "dot_dimension_numbers", "dimension_numbers",
                                    "scatter_dimension_numbers", "dimension_numbers"};
  static const char* const kind[] = {NULL, "dot", "gather", "scatter", "conv"};
  uint8_t sp = op->rule->special;
  kc__bc_printf(c, "%s = #stablehlo.%s<", key[sp], kind[sp]);
  if (sp == KC__SPECIAL_CONV) {
    KC_RETURN_IF_ERROR(kc__vhlo_conv_side(c, op, "input_batch_dimension",
                                          "input_feature_dimension", "input_spatial_dimensions",
                                          'b', 'f'));
    kc__bc_puts(c, "x");
    KC_RETURN_IF_ERROR(kc__vhlo_conv_side(c, op, "kernel_input_feature_dimension",
                                          "kernel_output_feature_dimension",
                                          "kernel_spatial_dimensions", 'i', 'o'));
    kc__bc_puts(c, "->");
    KC_RETURN_IF_ERROR(kc__vhlo_conv_side(c, op, "output_batch_dimension",
                                          "output_feature_dimension",
                                          "output_spatial_dimensions", 'b', 'f'));
  } else {
    bool first = true;
    for (size_t i = 0; i < kc__vhlo_num_named(op); ++i) {
      const kc__bc_named* n = kc__vhlo_named(op, i);
      if (n->how != KC__HOW_FIELD) continue;
      if (!first) kc__bc_puts(c, ", ");
      first = false;
      kc__bc_put(c, n->name.data, n->name.size);
      kc__bc_puts(c, " = ");
      KC_RETURN_IF_ERROR(kc__vhlo_put_field(c, n));
    }
  }
  kc__bc_puts(c, ">");
  return NULL;
}

/* An attribute of the op written a way other than as it is. */
static kc_status* kc__vhlo_put_special(kc__bc* c, const kc__bc_named* n) {
  int64_t v[128];
  size_t count;
  switch (n->how) {
    case KC__HOW_ARRAY:
    case KC__HOW_BOOLS: {
      bool bools = n->how == KC__HOW_BOOLS;
      KC_RETURN_IF_ERROR(kc__vhlo_get_ints(c, n->attr, "an array", v, 128, &count));
      kc__bc_puts(c, bools ? "array<i1" : "array<i64");
      for (size_t i = 0; i < count; ++i) {
        kc__bc_puts(c, i ? ", " : ": ");
        if (bools) {
          kc__bc_puts(c, v[i] ? "true" : "false");
        } else {
          kc__bc_put_int(c, v[i]);
        }
      }
      kc__bc_puts(c, ">");
      return NULL;
    }
    case KC__HOW_SYMBOL: {
      kc_string_view name;
      KC_RETURN_IF_ERROR(kc__vhlo_get_string(c, n->attr, "a symbol", &name));
      kc__vhlo_put_symbol(c, name);
      return NULL;
    }
    default: return kc__vhlo_put_attr(c, n->attr, 1);
  }
}

/* Whether the attribute is left out of the text; refuses those whose
 * meaning it cannot keep. */
static kc_status* kc__vhlo_left_out(kc__bc* c, const kc__bc_op* op, const kc__bc_named* n,
                                    bool* out) {
  bool empty = false;
  *out = true;
  switch (n->how) {
    case KC__HOW_DROP:
    case KC__HOW_DISCARDABLE: return NULL;
    case KC__HOW_NONE:
      KC_RETURN_IF_ERROR(kc__vhlo_is_none(c, n->attr, &empty));
      if (!empty) {
        return kc__bc_unsupported("%s (byte %zu): a dot algorithm (%.*s and the rest)",
                                  op->rule->vhlo, op->at, (int)n->name.size, n->name.data);
      }
      return NULL;
    case KC__HOW_EMPTY:
      KC_RETURN_IF_ERROR(kc__vhlo_is_empty(c, n->attr, &empty));
      if (!empty) {
        return kc__bc_unsupported("%s (byte %zu): attribute %.*s", op->rule->vhlo, op->at,
                                  (int)n->name.size, n->name.data);
      }
      return NULL;
    case KC__HOW_SOME:
      KC_RETURN_IF_ERROR(kc__vhlo_is_empty(c, n->attr, &empty));
      *out = empty;
      return NULL;
    case KC__HOW_API: {
      int64_t api;
      KC_RETURN_IF_ERROR(kc__vhlo_get_enum(c, n->attr, "a custom call API version", &api));
      *out = api == 1;
      return NULL;
    }
    default: *out = false; return NULL;
  }
}

/* `%N = "name"(%a, %b) <{...}>`. */
static kc_status* kc__vhlo_generic_begin(kc__bc* c, const kc__bc_op* op) {
  size_t results = op->results.size / sizeof(uint32_t);
  if (results) {
    kc__bc_put(c, "%", 1);
    kc__bc_put_uint(c, op->serial);
    if (results > 1) {
      kc__bc_put(c, ":", 1);
      kc__bc_put_uint(c, results);
    }
    kc__bc_puts(c, " = ");
  }
  const char* name = op->rule->text;
  if (op->rule->form == KC__BC_RETURN) {
    name = op->parent == KC__BC_FUNC ? "func.return" : "stablehlo.return";
  }
  kc__bc_put(c, "\"", 1);
  kc__bc_puts(c, name);
  kc__bc_puts(c, "\"(");
  const kc__bc_value* v = (const kc__bc_value*)(const void*)op->operands.data;
  for (size_t i = 0; i < op->operands.size / sizeof *v; ++i) {
    if (i) kc__bc_puts(c, ", ");
    kc__bc_put_value(c, &v[i]);
  }
  kc__bc_puts(c, ")");
  bool first = true, struct_done = false;
  for (size_t i = 0; i < kc__vhlo_num_named(op); ++i) {
    const kc__bc_named* n = kc__vhlo_named(op, i);
    bool out;
    KC_RETURN_IF_ERROR(kc__vhlo_left_out(c, op, n, &out));
    if (out || (n->how == KC__HOW_FIELD && struct_done)) continue;
    kc__bc_puts(c, first ? " <{" : ", ");
    first = false;
    if (n->how == KC__HOW_FIELD) {
      KC_RETURN_IF_ERROR(kc__vhlo_put_struct(c, op));
      struct_done = true;
      continue;
    }
    kc__bc_put(c, n->name.data, n->name.size);
    kc__bc_puts(c, " = ");
    KC_RETURN_IF_ERROR(kc__vhlo_put_special(c, n));
  }
  if (!first) kc__bc_puts(c, "}>");
  return NULL;
}

kc_status* kc__vhlo_op_begin(kc__bc* c, kc__bc_op* op) {
  const kc__bc_named* name = kc__vhlo_find(op, "sym_name");
  kc_string_view s = {NULL, 0};
  switch (op->rule->form) {
    case KC__BC_SKIP: return NULL;
    case KC__BC_MODULE:
      kc__bc_puts(c, "module");
      if (name) {
        KC_RETURN_IF_ERROR(kc__vhlo_get_string(c, name->attr, "the module's name", &s));
        kc__bc_puts(c, " ");
        kc__vhlo_put_symbol(c, s);
      }
      return NULL;
    case KC__BC_FUNC: {
      const kc__bc_named* vis = kc__vhlo_find(op, "sym_visibility");
      kc_string_view v = {NULL, 0};
      if (!name || !vis || !kc__vhlo_find(op, "function_type")) {
        return kc__bc_fail(c, op->at, "expected a function's name, visibility and type");
      }
      KC_RETURN_IF_ERROR(kc__vhlo_get_string(c, name->attr, "a function's name", &s));
      KC_RETURN_IF_ERROR(kc__vhlo_get_string(c, vis->attr, "a function's visibility", &v));
      kc__bc_puts(c, "func.func ");
      if (kc_sv_equal(v, KC_SV_LIT("private")) || kc_sv_equal(v, KC_SV_LIT("public"))) {
        kc__bc_put(c, v.data, v.size);
        kc__bc_puts(c, " ");
      }
      kc__vhlo_put_symbol(c, s);
      return NULL;
    }
    default: return kc__vhlo_generic_begin(c, op);
  }
}

kc_status* kc__vhlo_put_arg_attrs(kc__bc* c, const kc__bc_op* func, size_t k) {
  return kc__vhlo_put_item_attrs(c, func, "arg_attrs", k);
}

kc_status* kc__vhlo_put_item_attrs(kc__bc* c, const kc__bc_op* func, const char* which, size_t k) {
  const kc__bc_named* all = kc__vhlo_find(func, which);
  if (!all) return NULL;
  uint32_t item = 0;
  bool found, empty = true;
  KC_RETURN_IF_ERROR(kc__vhlo_get_item(c, all->attr, k, &item, &found));
  if (found) KC_RETURN_IF_ERROR(kc__vhlo_is_empty(c, item, &empty));
  if (!found || empty) return NULL;
  /* Only jax.export's {jax.global_constant = ...} and {jax.result_info =
   * ...} matter to the reader: attributes the text cannot write (another
   * dialect's) are left out. */
  size_t mark = c->out->size;
  kc__bc_puts(c, " ");
  kc_status* st = kc__vhlo_put_attr(c, item, 1);
  if (st && !c->out_oom && !c->out_full) {
    kc_status_destroy(st);
    c->out->size = mark;
    return NULL;
  }
  return st;
}

kc_status* kc__vhlo_func_results(kc__bc* c, const kc__bc_op* op) {
  kc__bc_puts(c, " -> ");
  return kc__vhlo_put_func_results(c, kc__vhlo_find(op, "function_type")->attr, op);
}

kc_status* kc__vhlo_op_end(kc__bc* c, kc__bc_op* op) {
  if (op->rule->form == KC__BC_SKIP) return NULL;
  if (op->rule->form == KC__BC_MODULE || op->rule->form == KC__BC_FUNC) {
    kc__bc_puts(c, "\n");
    return NULL;
  }
  bool first = true;
  for (size_t i = 0; i < kc__vhlo_num_named(op); ++i) {
    const kc__bc_named* n = kc__vhlo_named(op, i);
    if (n->how != KC__HOW_DISCARDABLE) continue;
    kc__bc_puts(c, first ? " {" : ", ");
    first = false;
    kc__bc_put(c, n->name.data, n->name.size);
    kc__bc_puts(c, " = ");
    KC_RETURN_IF_ERROR(kc__vhlo_put_attr(c, n->attr, 1));
  }
  if (!first) kc__bc_puts(c, "}");
  kc__bc_puts(c, " : (");
  const kc__bc_value* v = (const kc__bc_value*)(const void*)op->operands.data;
  for (size_t i = 0; i < op->operands.size / sizeof *v; ++i) {
    if (i) kc__bc_puts(c, ", ");
    KC_RETURN_IF_ERROR(kc__vhlo_put_type(c, v[i].type, 0));
  }
  kc__bc_puts(c, ") -> ");
  size_t results = op->results.size / sizeof(uint32_t);
  const uint32_t* types = (const uint32_t*)(const void*)op->results.data;
  if (results != 1) kc__bc_puts(c, "(");
  for (size_t i = 0; i < results; ++i) {
    if (i) kc__bc_puts(c, ", ");
    KC_RETURN_IF_ERROR(kc__vhlo_put_type(c, types[i], 0));
  }
  if (results != 1) kc__bc_puts(c, ")");
  kc__bc_puts(c, "\n");
  return NULL;
}
