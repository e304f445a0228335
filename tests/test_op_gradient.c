/* Gradient declarations (op.h, "Gradients"): the spec parsed and
 * normalised, its names resolved at registration, every malformed or
 * inconsistent spec refused with its position, and a builder that failed
 * never registering its op. */
#include "kt_ops.h"

/* A builder for "kt.G(x: T, idx: i32, ys: N * T) -> (z: T, w: T)". */
static kc_op_builder* kt_grad_builder(const char* name) {
  kc_op_builder* b = NULL;
  KC_CHECK_OK(kc_op_builder_create(name, &b));
  kc_op_builder_add_input_v2(b, "x: T");
  kc_op_builder_add_input_v2(b, "idx: i32");
  kc_op_builder_add_input_v2(b, "ys: N * T");
  kc_op_builder_add_output_v2(b, "z: T");
  kc_op_builder_add_output_v2(b, "w: T");
  kc_op_builder_add_attr_v2(b, "T: {f32, f64}");
  kc_op_builder_add_attr_v2(b, "N: int >= 1");
  return b;
}

/* Registers kt.G with `spec` and returns the status. */
static kc_status* kt_grad_register(const char* spec) {
  kc_op_builder* b = kt_grad_builder("kt.G");
  kc_op_builder_set_gradient(b, spec);
  return kc_op_registry_register(b, 0);
}

KC_TEST(op_gradient_is_read_back_resolved) {
  KC_CHECK_OK(kt_grad_register(
      "  kt.GGrad( x ,idx, z, grad( z ), grad(w), ys )->( grad(ys),grad(x) )"));
  const kc_op* op = kt_op("kt.G");
  kc_op_gradient g = {.struct_size = sizeof g};
  KC_CHECK(kc_op_get_gradient(op, &g));
  KC_CHECK_STR(g.op_name, "kt.GGrad");
  KC_CHECK_STR(g.spec,
               "kt.GGrad(x, idx, z, grad(z), grad(w), ys) -> (grad(ys), "
               "grad(x))");
  KC_CHECK_INT(g.num_args, 6);
  const int32_t want[6][2] = {{KC_OP_GRAD_INPUT, 0},     {KC_OP_GRAD_INPUT, 1},
                              {KC_OP_GRAD_OUTPUT, 0},    {KC_OP_GRAD_COTANGENT, 0},
                              {KC_OP_GRAD_COTANGENT, 1}, {KC_OP_GRAD_INPUT, 2}};
  for (int i = 0; i < 6; ++i) {
    KC_CHECK_INT(g.args[i].source, want[i][0]);
    KC_CHECK_INT(g.args[i].index, want[i][1]);
  }
  KC_CHECK_INT(g.num_results, 2);
  KC_CHECK_INT(g.results[0], 2);
  KC_CHECK_INT(g.results[1], 0);
  kc_op_registry_reset();
}

KC_TEST(op_gradient_single_result_and_short_struct) {
  KC_CHECK_OK(kt_grad_register("Scale(grad(z)) -> grad(x)"));
  const kc_op* op = kt_op("kt.G");
  /* A caller built before `spec` existed reads only what it knows. */
  kc_op_gradient g;
  memset(&g, 0x5a, sizeof g);
  g.struct_size = offsetof(kc_op_gradient, spec);
  KC_CHECK(kc_op_get_gradient(op, &g));
  KC_CHECK_STR(g.op_name, "Scale");
  KC_CHECK(g.spec == (const char*)(uintptr_t)0x5a5a5a5a5a5a5a5aULL);
  g.struct_size = sizeof g;
  KC_CHECK(kc_op_get_gradient(op, &g));
  KC_CHECK_STR(g.spec, "Scale(grad(z)) -> grad(x)");
  KC_CHECK_INT(g.num_results, 1);
  KC_CHECK_INT(g.results[0], 0);
  kc_op_registry_reset();
}

KC_TEST(op_gradient_none_declared) {
  kc_op_builder* b = kt_grad_builder("kt.G");
  KC_CHECK_OK(kc_op_registry_register(b, 0));
  kc_op_gradient g = {.struct_size = sizeof g};
  KC_CHECK(!kc_op_get_gradient(kt_op("kt.G"), &g));
  KC_CHECK(g.op_name == NULL);
  KC_CHECK(!kc_op_get_gradient(NULL, &g));
  KC_CHECK(!kc_op_get_gradient(kt_op("kt.G"), NULL));
  kc_op_registry_reset();
}

KC_TEST(op_gradient_malformed_spec_names_the_column) {
  static const struct {
    const char* spec;
    const char* expect;
  } cases[] = {
      {"", "column 1: expected the gradient op's name, got the end"},
      {"(x) -> grad(x)", "column 1: expected the gradient op's name, got '('"},
      {"G x) -> grad(x)", "column 3: expected '(', got 'x'"},
      {"G(x -> grad(x)", "column 5: expected ',' or ')', got '-'"},
      {"G(x,) -> grad(x)", "column 5: expected an arg's name, got ')'"},
      {"G(grad(1)) -> grad(x)", "column 8: expected an output's name, got '1'"},
      {"G(grad(z) -> grad(x)", "column 11: expected ',' or ')', got '-'"},
      {"G(x) grad(x)", "column 6: expected '->', got 'grad'"},
      {"G(x) -> x", "column 9: expected 'grad(', got 'x'"},
      {"AddGrad(x, y) -> x", "column 18: expected 'grad(', got 'x'"},
      {"G(x) ->", "column 8: expected 'grad(', got the end of the spec"},
      {"G(x) -> (grad(x) grad(y))", "column 18: expected ',' or ')', got 'grad'"},
      {"G(x) -> grad(x), grad(y)", "column 16: expected the end of the spec"},
      {"G(x) -> (grad(x)", "column 17: expected ',' or ')', got the end"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    kc_op_builder* b = kt_grad_builder("kt.G");
    kc_op_builder_set_gradient(b, cases[i].spec);
    KC_CHECK_CODE(kc_op_registry_register(b, 0), KC_INVALID_ARGUMENT,
                  "registering op 'kt.G'", "kc_op_builder_set_gradient",
                  "gradient spec", cases[i].expect);
    KC_CHECK_CODE(kc_op_registry_lookup(KC_SV_LIT("kt.G"), &(const kc_op*){0}),
                  KC_NOT_FOUND, "");
  }
}

KC_TEST(op_gradient_names_are_checked_at_registration) {
  KC_CHECK_CODE(kt_grad_register("G(x, q) -> grad(x)"), KC_INVALID_ARGUMENT,
                "registering op 'kt.G'", "item 2: 'q' is neither an input nor "
                "an output of the op (inputs: x, idx, ys; outputs: z, w)");
  KC_CHECK_CODE(kt_grad_register("G(grad(x)) -> grad(x)"), KC_INVALID_ARGUMENT,
                "item 1: grad(x): 'x' is not an output of the op (its "
                "outputs: z, w)");
  KC_CHECK_CODE(kt_grad_register("G(grad(z)) -> grad(z)"), KC_INVALID_ARGUMENT,
                "result 1: grad(z): 'z' is not an input of the op (its "
                "inputs: x, idx, ys)");
  KC_CHECK_CODE(kt_grad_register("G(grad(z)) -> (grad(x), grad(x))"),
                KC_INVALID_ARGUMENT, "result 2: grad(x) is already result 1");
  KC_CHECK_CODE(kc_op_registry_lookup(KC_SV_LIT("kt.G"), &(const kc_op*){0}),
                KC_NOT_FOUND, "");
}

KC_TEST(op_gradient_second_call_replaces_and_null_is_refused) {
  kc_op_builder* b = kt_grad_builder("kt.G");
  kc_op_builder_set_gradient(b, "First(grad(z)) -> grad(x)");
  kc_op_builder_set_gradient(b, "Second(grad(w)) -> grad(ys)");
  KC_CHECK_OK(kc_op_registry_register(b, 0));
  kc_op_gradient g = {.struct_size = sizeof g};
  KC_CHECK(kc_op_get_gradient(kt_op("kt.G"), &g));
  KC_CHECK_STR(g.op_name, "Second");
  KC_CHECK_INT(g.results[0], 2);
  kc_op_registry_reset();

  b = kt_grad_builder("kt.G");
  kc_op_builder_set_gradient(b, NULL);
  KC_CHECK_CODE(kc_op_registry_register(b, 0), KC_INVALID_ARGUMENT,
                "kc_op_builder_set_gradient: spec is NULL");
  kc_op_builder_set_gradient(NULL, "G(grad(z)) -> grad(x)"); /* no crash */
}

/* ---- forward-mode rules (op.h, "Forward-mode rules") ------------------- */

/* Registers kt.G with the jvp `spec` and returns the status. */
static kc_status* kt_jvp_register(const char* spec) {
  kc_op_builder* b = kt_grad_builder("kt.G");
  kc_op_builder_set_jvp(b, spec);
  return kc_op_registry_register(b, 0);
}

KC_TEST(op_jvp_is_read_back_resolved) {
  kc_op_builder* b = kt_grad_builder("kt.G");
  kc_op_builder_set_gradient(b, "kt.GGrad(x, grad(z)) -> grad(x)");
  kc_op_builder_set_jvp(
      b, " kt.GJvp( x, idx ,z, tangent( x ), tangent(ys) )->( tangent(w),"
         "tangent(z) )");
  KC_CHECK_OK(kc_op_registry_register(b, 0));
  const kc_op* op = kt_op("kt.G");
  kc_op_gradient j = {.struct_size = sizeof j};
  KC_CHECK(kc_op_get_jvp(op, &j));
  KC_CHECK_STR(j.op_name, "kt.GJvp");
  KC_CHECK_STR(j.spec,
               "kt.GJvp(x, idx, z, tangent(x), tangent(ys)) -> (tangent(w), "
               "tangent(z))");
  KC_CHECK_INT(j.num_args, 5);
  const int32_t want[5][2] = {{KC_OP_GRAD_INPUT, 0},
                              {KC_OP_GRAD_INPUT, 1},
                              {KC_OP_GRAD_OUTPUT, 0},
                              {KC_OP_GRAD_TANGENT, 0},
                              {KC_OP_GRAD_TANGENT, 2}};
  for (int i = 0; i < 5; ++i) {
    KC_CHECK_INT(j.args[i].source, want[i][0]);
    KC_CHECK_INT(j.args[i].index, want[i][1]);
  }
  /* Results index outputs: w is output 1, z output 0. */
  KC_CHECK_INT(j.num_results, 2);
  KC_CHECK_INT(j.results[0], 1);
  KC_CHECK_INT(j.results[1], 0);
  /* The gradient is kept beside it, unchanged. */
  kc_op_gradient g = {.struct_size = sizeof g};
  KC_CHECK(kc_op_get_gradient(op, &g));
  KC_CHECK_STR(g.spec, "kt.GGrad(x, grad(z)) -> grad(x)");
  kc_op_registry_reset();
}

KC_TEST(op_jvp_none_declared_and_replaced) {
  KC_CHECK_OK(kt_grad_register("Scale(grad(z)) -> grad(x)"));
  kc_op_gradient j = {.struct_size = sizeof j};
  KC_CHECK(!kc_op_get_jvp(kt_op("kt.G"), &j));
  KC_CHECK(j.op_name == NULL);
  KC_CHECK(!kc_op_get_jvp(NULL, &j));
  kc_op_registry_reset();
  /* A second call replaces the first. */
  kc_op_builder* b = kt_grad_builder("kt.G");
  kc_op_builder_set_jvp(b, "First(tangent(x)) -> tangent(z)");
  kc_op_builder_set_jvp(b, "Second(tangent(x)) -> tangent(w)");
  KC_CHECK_OK(kc_op_registry_register(b, 0));
  KC_CHECK(kc_op_get_jvp(kt_op("kt.G"), &j));
  KC_CHECK_STR(j.op_name, "Second");
  KC_CHECK_INT(j.results[0], 1);
  kc_op_registry_reset();
}

KC_TEST(op_jvp_malformed_spec_names_the_column) {
  static const struct {
    const char* spec;
    const char* expect;
  } cases[] = {
      {"", "jvp spec '': column 1: expected the jvp op's name, got the end"},
      {"J(x) -> x", "column 9: expected 'tangent(', got 'x'"},
      {"J(x) -> grad(z)", "column 9: expected 'tangent(', got 'grad'"},
      {"J(tangent(1)) -> tangent(z)",
       "column 11: expected an input's name, got '1'"},
      {"J(tangent(x) -> tangent(z)", "column 14: expected ',' or ')', got '-'"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    KC_CHECK_CODE(kt_jvp_register(cases[i].spec), KC_INVALID_ARGUMENT,
                  "registering op 'kt.G'", "kc_op_builder_set_jvp",
                  cases[i].expect);
    KC_CHECK_CODE(kc_op_registry_lookup(KC_SV_LIT("kt.G"), &(const kc_op*){0}),
                  KC_NOT_FOUND, "");
  }
}

KC_TEST(op_jvp_names_are_checked_at_registration) {
  KC_CHECK_CODE(kt_jvp_register("J(tangent(z)) -> tangent(z)"),
                KC_INVALID_ARGUMENT,
                "jvp spec 'J(tangent(z)) -> tangent(z)': item 1: tangent(z): "
                "'z' is not an input of the op (its inputs: x, idx, ys)");
  KC_CHECK_CODE(kt_jvp_register("J(tangent(x)) -> tangent(x)"),
                KC_INVALID_ARGUMENT,
                "result 1: tangent(x): 'x' is not an output of the op (its "
                "outputs: z, w)");
  KC_CHECK_CODE(kt_jvp_register("J(q) -> tangent(z)"), KC_INVALID_ARGUMENT,
                "item 1: 'q' is neither an input nor an output of the op "
                "(inputs: x, idx, ys; outputs: z, w)");
  KC_CHECK_CODE(kt_jvp_register("J(x) -> (tangent(z), tangent(z))"),
                KC_INVALID_ARGUMENT,
                "result 2: tangent(z) is already result 1");
  KC_CHECK_CODE(kc_op_registry_lookup(KC_SV_LIT("kt.G"), &(const kc_op*){0}),
                KC_NOT_FOUND, "");
}

/* ---- kc_op_builder_create_gradient ---------------------------------------- */

KC_TEST(op_gradient_op_made_from_the_declaration) {
  kc_op_builder* b = NULL;
  KC_CHECK_OK(kc_op_builder_create("kt.Norm", &b));
  kc_op_builder_add_input_v2(b, "x: T");
  kc_op_builder_add_input_v2(b, "w: T");
  kc_op_builder_add_input_v2(b, "idx: i32");
  kc_op_builder_add_output_v2(b, "y: T");
  kc_op_builder_add_attr_v2(b, "T: {f32, f64}");
  kc_op_builder_add_attr_v2(b, "eps: float = 1e-6");
  kc_op_builder_set_shape_fn_v2(b, kc_shape_fn_unchanged, NULL, NULL);
  kc_op_builder_set_gradient(b, "kt.NormGrad(x, w, y, grad(y)) -> (grad(x), grad(w))");
  KC_CHECK_OK(kc_op_registry_register(b, 0));
  kc_op_builder* gb = NULL;
  KC_CHECK_OK(kc_op_builder_create_gradient("kt.Norm", &gb));
  KC_CHECK_OK(kc_op_registry_register(gb, 0));
  const kc_op* grad = kt_op("kt.NormGrad");
  char sig[256];
  kc_op_format_signature(grad, sig, sizeof sig);
  KC_CHECK_STR(sig, "kt.NormGrad(x: T, w: T, y: T, dy: T) -> (dx: T, dw: T)");
  KC_CHECK_INT(kc_op_get_attr_count(grad), 2);
  KC_CHECK_STR(kc_op_get_attr_spec(grad, 1), "eps: float = 1e-6");
  KC_CHECK_STR(kc_op_get_doc(grad), "The gradient of kt.Norm.");
  KC_CHECK(kc_op_get_flags(grad) & KC_OP_SYMBOLIC_SHAPES);
  /* dx takes x's shape, dw w's. */
  int64_t x[2] = {4, 8}, w[1] = {8};
  DLTensor t[4];
  int64_t* shapes[4] = {x, w, x, x};
  int32_t ranks[4] = {2, 1, 2, 2};
  const DLTensor* in[4];
  for (int i = 0; i < 4; ++i) {
    memset(&t[i], 0, sizeof t[i]);
    t[i].device = kc_device_cpu();
    t[i].ndim = ranks[i];
    t[i].dtype = kc_dtype_make(kDLFloat, 32, 1);
    t[i].shape = shapes[i];
    in[i] = &t[i];
  }
  kc_op_output_info out[2];
  int32_t n = 0;
  KC_CHECK_OK(kc_op_infer(grad, in, 4, NULL, 0, out, 2, &n));
  KC_CHECK_INT(n, 2);
  KC_CHECK_INT(out[0].rank, 2);
  KC_CHECK_INT(out[0].dims[1], 8);
  KC_CHECK_INT(out[1].rank, 1);
  KC_CHECK_INT(out[1].dims[0], 8);
  kc_op_registry_reset();
}

KC_TEST(op_gradient_op_refusals) {
  kc_op_builder* gb = NULL;
  /* No declaration. */
  kc_op_builder* b = kt_grad_builder("kt.G");
  KC_CHECK_OK(kc_op_registry_register(b, 0));
  KC_CHECK_CODE(kc_op_builder_create_gradient("kt.G", &gb), KC_FAILED_PRECONDITION,
                "op 'kt.G' declares no gradient");
  KC_CHECK(gb == NULL);
  kc_op_registry_reset();
  /* A list arg among the items (kt.G's ys: N * T). */
  KC_CHECK_OK(kt_grad_register("kt.GGrad(x, ys, grad(z)) -> grad(x)"));
  KC_CHECK_CODE(kc_op_builder_create_gradient("kt.G", &gb), KC_UNIMPLEMENTED,
                "item 2 names the list arg 'ys'");
  kc_op_registry_reset();
  KC_CHECK_OK(kt_grad_register("kt.GGrad(x, grad(z)) -> grad(ys)"));
  KC_CHECK_CODE(kc_op_builder_create_gradient("kt.G", &gb), KC_UNIMPLEMENTED,
                "result 1 is the cotangent of the list arg 'ys'");
  KC_CHECK_CODE(kc_op_builder_create_gradient(NULL, &gb), KC_INVALID_ARGUMENT,
                "op_name is NULL");
  KC_CHECK_CODE(kc_op_builder_create_gradient("kt.None", &gb), KC_NOT_FOUND,
                "no op named 'kt.None'");
  kc_op_registry_reset();
}
