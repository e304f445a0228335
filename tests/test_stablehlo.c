/* The StableHLO text reader (src/program/frontend/stablehlo): MLIR text as JAX
 * prints it, in pretty and generic op forms, parsed by kc_program_parse
 * into the programs the HLO parser makes; and its refusals, each naming
 * the line, the column and what is wrong. The JAX-made modules of
 * tests/fixtures/hlo_jax/CASE/stablehlo.mlir run as ctest cases beside
 * their HLO (hlo_jax_CASE_stablehlo). */
#include <complex.h>
#include <math.h>
#include <string.h>

#include "kt_hlo.h"

static const float* kt_f32(kc_tensor* t) { return (const float*)kt_data(t); }

/* A tensor of `dtype` holding `size` bytes from data. */
static kc_tensor* kt_tensor_of(DLDataType dtype, int32_t ndim, const int64_t* dims,
                               const void* data, size_t size) {
  kc_tensor* t = NULL;
  KC_CHECK_OK(kc_tensor_create(kt_alloc(), dims, ndim, dtype, kc_device_cpu(), &t));
  memcpy(kc_tensor_get_dltensor(t)->data, data, size);
  return t;
}

#define KT_F32 kc_dtype_make(kDLFloat, 32, 1)
#define KT_I32 kc_dtype_make(kDLInt, 32, 1)

/* Parses, compiles and runs `text` once on `in` (released here); its
 * outputs go to out[0..n_out). */
static void kt_execute(const char* text, kc_tensor** in, size_t n_in, kc_tensor** out,
                       size_t n_out) {
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_parse(kc_sv(text), &p));
  kc_executable* exe = NULL;
  KC_CHECK_OK(kc_program_compile(p, NULL, &exe));
  const DLTensor* dl[8];
  for (size_t i = 0; i < n_in; ++i) dl[i] = kc_tensor_get_dltensor(in[i]);
  kc_executable_info info = {.struct_size = sizeof info};
  kc_executable_query(exe, &info);
  KC_CHECK_INT((int64_t)info.num_outputs, (int64_t)n_out);
  KC_CHECK_OK(kc_executable_execute(exe, dl, n_in, NULL, out));
  kt_release(in, n_in);
  kc_executable_destroy(exe);
  kc_program_destroy(p);
}

KC_TEST(stablehlo_pretty_module_runs) {
  /* As jax.jit(f).lower(x).as_text(debug_info=True) prints it: location
   * aliases before and after the module, loc(...) on ops and arguments,
   * result attributes, a private function called twice. */
  const char* text =
      "#loc = loc(unknown)\n"
      "#loc1 = loc(\"x\")\n"
      "module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n"
      "  func.func public @main(%arg0: tensor<2x3xf32> loc(\"x\"), %arg1: tensor<3xf32> loc(#loc1)) "
      "-> (tensor<2x3xf32> {jax.result_info = \"result[0]\"}, tensor<2xf32> {jax.result_info = "
      "\"result[1]\"}) {\n"
      "    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32> "
      "loc(#loc2)\n"
      "    %1 = stablehlo.add %arg0, %0 : tensor<2x3xf32> loc(#loc2)\n"
      "    %2 = call @relu(%1) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc(#loc3)\n"
      "    %3 = func.call @relu(%2) : (tensor<2x3xf32>) -> tensor<2x3xf32>\n"
      "    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32> loc(#loc)\n"
      "    %4 = stablehlo.reduce(%3 init: %cst) applies stablehlo.add across dimensions = [1] : "
      "(tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32> loc(#loc4)\n"
      "    return %3, %4 : tensor<2x3xf32>, tensor<2xf32> loc(#loc)\n"
      "  } loc(#loc)\n"
      "  func.func private @relu(%arg0: tensor<2x3xf32> loc(unknown)) -> tensor<2x3xf32> {\n"
      "    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32> loc(#loc5)\n"
      "    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x3xf32>\n"
      "    %1 = stablehlo.maximum %arg0, %0 : tensor<2x3xf32> loc(#loc5)\n"
      "    return %1 : tensor<2x3xf32> loc(#loc)\n"
      "  } loc(#loc)\n"
      "} loc(#loc)\n"
      "#loc2 = loc(\"jit(f)/add\"(#loc1))\n"
      "#loc3 = loc(callsite(#loc2 at #loc1))\n"
      "#loc4 = loc(\"f.py\":3:4 to :9)\n"
      "#loc5 = loc(\"relu\")\n";
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_parse(kc_sv(text), &p));
  KC_CHECK_STR(kc_program_get_name(p), "jit_f");
  KC_CHECK_INT((int64_t)kc_program_get_parameter_count(p), 2);
  KC_CHECK_STR(kc_program_get_parameter_name(p, 1), "arg1");
  kc_program_destroy(p);
  const float x[6] = {-1, 2, -3, 4, -5, 6}, b[3] = {0.5f, 0.5f, 4};
  const int64_t xd[2] = {2, 3}, bd[1] = {3};
  kc_tensor* in[2] = {kt_tensor_of(KT_F32, 2, xd, x, sizeof x),
                      kt_tensor_of(KT_F32, 1, bd, b, sizeof b)};
  kc_tensor* out[2] = {NULL, NULL};
  kt_execute(text, in, 2, out, 2);
  const float want[6] = {0, 2.5f, 1, 4.5f, 0, 10};
  for (int i = 0; i < 6; ++i) KC_CHECK(kt_f32(out[0])[i] == want[i]);
  KC_CHECK(kt_f32(out[1])[0] == 3.5f && kt_f32(out[1])[1] == 14.5f);
  kt_release(out, 2);
}

KC_TEST(stablehlo_generic_forms_mean_what_the_pretty_ones_do) {
  /* MLIR's generic form of each op: "dialect.op"(operands) <{properties}>
   * ({regions}) : (types) -> types, with the attributes' own syntax
   * (#stablehlo<...>, #stablehlo.dot<...>, array<i64: ...>, an alias). */
  const char* text =
      "#dot = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>\n"
      "module {\n"
      "  func.func @main() -> (tensor<2x2xf32>, tensor<2x2xi1>, tensor<1x2xf32>, tensor<2xf32>) {\n"
      "    %a = \"stablehlo.constant\"() <{value = dense<[[1.0, 2.0], [3.0, 4.0]]> : "
      "tensor<2x2xf32>}> : () -> tensor<2x2xf32>\n"
      "    %d = \"stablehlo.dot_general\"(%a, %a) <{dot_dimension_numbers = #dot}> : "
      "(tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>\n"
      "    %s = \"stablehlo.add\"(%d, %a) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>\n"
      "    %c = \"stablehlo.compare\"(%a, %s) <{comparison_direction = "
      "#stablehlo<comparison_direction LT>, compare_type = #stablehlo<comparison_type FLOAT>}> "
      ": (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xi1>\n"
      "    %l = \"stablehlo.slice\"(%s) <{start_indices = array<i64: 1, 0>, limit_indices = "
      "array<i64: 2, 2>, strides = array<i64: 1, 1>}> : (tensor<2x2xf32>) -> tensor<1x2xf32>\n"
      "    %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "    %r = \"stablehlo.reduce\"(%a, %z) <{dimensions = array<i64: 1>}> ({\n"
      "    ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
      "      %m = \"stablehlo.multiply\"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n"
      "      %t = stablehlo.add %x, %y : tensor<f32>\n"
      "      \"stablehlo.return\"(%t) : (tensor<f32>) -> ()\n"
      "    }) : (tensor<2x2xf32>, tensor<f32>) -> tensor<2xf32>\n"
      "    \"func.return\"(%s, %c, %l, %r) : (tensor<2x2xf32>, tensor<2x2xi1>, tensor<1x2xf32>, "
      "tensor<2xf32>) -> ()\n"
      "  }\n"
      "}\n";
  kc_tensor* out[4] = {NULL, NULL, NULL, NULL};
  kt_run_text(text, out, 4);
  /* a.a = [[7, 10], [15, 22]], plus a */
  const float s[4] = {8, 12, 18, 26};
  for (int i = 0; i < 4; ++i) KC_CHECK(kt_f32(out[0])[i] == s[i]);
  const uint8_t* c = kt_data(out[1]);
  for (int i = 0; i < 4; ++i) KC_CHECK(c[i] == 1);
  KC_CHECK(kt_f32(out[2])[0] == 18 && kt_f32(out[2])[1] == 26);
  /* the region's reducer (its dead multiply aside) sums the rows */
  KC_CHECK(kt_f32(out[3])[0] == 3 && kt_f32(out[3])[1] == 7);
  kt_release(out, 4);
}

KC_TEST(stablehlo_dense_literals_of_every_element_type) {
  const char* text =
      "func.func @main() -> (tensor<3xf32>, tensor<2xf16>, tensor<2xbf16>, tensor<2xi1>, "
      "tensor<2xcomplex<f32>>, tensor<2xi8>, tensor<2xui32>, tensor<4xf32>, tensor<0xf32>, "
      "tensor<2xf64>) {\n"
      "  %0 = stablehlo.constant dense<[1.5, 0x7FC00000, 0xFF800000]> : tensor<3xf32>\n"
      "  %1 = stablehlo.constant dense<[1.000000e+00, -2.500000e-01]> : tensor<2xf16>\n"
      "  %2 = stablehlo.constant dense<3.0> : tensor<2xbf16>\n"
      "  %3 = stablehlo.constant dense<[true, false]> : tensor<2xi1>\n"
      "  %4 = stablehlo.constant dense<[(1.0,2.0), (-3.0,0.5)]> : tensor<2xcomplex<f32>>\n"
      "  %5 = stablehlo.constant dense<[-128, 127]> : tensor<2xi8>\n"
      "  %6 = stablehlo.constant dense<4294967295> : tensor<2xui32>\n"
      "  %7 = stablehlo.constant dense<\"0x0000803F000000400000404000008040\"> : tensor<4xf32>\n"
      "  %8 = stablehlo.constant dense<> : tensor<0xf32>\n"
      "  %9 = stablehlo.constant dense<\"0x000000000000F03F\"> : tensor<2xf64>\n"
      "  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : tensor<3xf32>, tensor<2xf16>, "
      "tensor<2xbf16>, tensor<2xi1>, tensor<2xcomplex<f32>>, tensor<2xi8>, tensor<2xui32>, "
      "tensor<4xf32>, tensor<0xf32>, tensor<2xf64>\n"
      "}\n";
  kc_tensor* out[10] = {NULL};
  kt_run_text(text, out, 10);
  KC_CHECK(kt_f32(out[0])[0] == 1.5f && isnan(kt_f32(out[0])[1]) &&
           isinf(kt_f32(out[0])[2]) && kt_f32(out[0])[2] < 0);
  const uint16_t* h = kt_data(out[1]);
  KC_CHECK(h[0] == 0x3C00 && h[1] == 0xB400);
  const uint16_t* bf = kt_data(out[2]);
  KC_CHECK(bf[0] == 0x4040 && bf[1] == 0x4040);
  const uint8_t* pr = kt_data(out[3]);
  KC_CHECK(pr[0] == 1 && pr[1] == 0);
  const float* cx = kt_data(out[4]);
  KC_CHECK(cx[0] == 1 && cx[1] == 2 && cx[2] == -3 && cx[3] == 0.5f);
  const int8_t* i8 = kt_data(out[5]);
  KC_CHECK(i8[0] == -128 && i8[1] == 127);
  const uint32_t* u = kt_data(out[6]);
  KC_CHECK(u[0] == 4294967295u && u[1] == 4294967295u);
  for (int i = 0; i < 4; ++i) KC_CHECK(kt_f32(out[7])[i] == (float)(i + 1));
  KC_CHECK(kc_tensor_get_dltensor(out[8])->shape[0] == 0);
  const double* d = kt_data(out[9]);
  KC_CHECK(d[0] == 1.0 && d[1] == 1.0);
  kt_release(out, 10);
}

KC_TEST(stablehlo_regions_capture_the_values_they_use) {
  /* case and while regions may use values defined outside them; kcall
   * hands those in through the branch operands and the loop state. Named
   * multiple results (%0:2, %0#1) and a barrier too. */
  const char* text =
      "func.func @main(%i: tensor<i32>, %x: tensor<2xf32>) -> (tensor<2xf32>, tensor<i32>, "
      "tensor<2xf32>) {\n"
      "  %two = stablehlo.constant dense<2.0> : tensor<2xf32>\n"
      "  %one = stablehlo.constant dense<1> : tensor<i32>\n"
      "  %r = \"stablehlo.case\"(%i) ({\n"
      "    %m = stablehlo.multiply %x, %two : tensor<2xf32>\n"
      "    stablehlo.return %m : tensor<2xf32>\n"
      "  }, {\n"
      "    stablehlo.return %x : tensor<2xf32>\n"
      "  }) : (tensor<i32>) -> tensor<2xf32>\n"
      "  %zero = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %five = stablehlo.constant dense<5> : tensor<i32>\n"
      "  %w:2 = stablehlo.while(%iterArg = %zero, %iterArg_0 = %x) : tensor<i32>, tensor<2xf32>\n"
      "   cond {\n"
      "    %c = stablehlo.compare  LT, %iterArg, %five,  SIGNED : (tensor<i32>, tensor<i32>) -> "
      "tensor<i1>\n"
      "    stablehlo.return %c : tensor<i1>\n"
      "  } do {\n"
      "    %n = stablehlo.add %iterArg, %one : tensor<i32>\n"
      "    %y = stablehlo.add %iterArg_0, %two : tensor<2xf32>\n"
      "    stablehlo.return %n, %y : tensor<i32>, tensor<2xf32>\n"
      "  }\n"
      "  %b:2 = stablehlo.optimization_barrier %w#0, %w#1 : tensor<i32>, tensor<2xf32>\n"
      "  return %r, %b#0, %b#1 : tensor<2xf32>, tensor<i32>, tensor<2xf32>\n"
      "}\n";
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_parse(kc_sv(text), &p));
  kc_executable* exe = NULL;
  KC_CHECK_OK(kc_program_compile(p, NULL, &exe));
  for (int32_t branch = 0; branch < 3; ++branch) {
    const float x[2] = {1, -2};
    const int64_t xd[1] = {2};
    kc_tensor* in[2] = {NULL, NULL};
    kc_tensor* out[3] = {NULL, NULL, NULL};
    in[0] = kt_tensor_of(KT_I32, 0, NULL, &branch, sizeof branch);
    in[1] = kt_tensor_of(KT_F32, 1, xd, x, sizeof x);
    const DLTensor* dl[2] = {kc_tensor_get_dltensor(in[0]), kc_tensor_get_dltensor(in[1])};
    KC_CHECK_OK(kc_executable_execute(exe, dl, 2, NULL, out));
    /* branch 0 doubles; 1, and 2 (out of range: the last), pass x on */
    float k = branch == 0 ? 2.0f : 1.0f;
    KC_CHECK(kt_f32(out[0])[0] == k && kt_f32(out[0])[1] == -2 * k);
    KC_CHECK(*(const int32_t*)kt_data(out[1]) == 5);
    KC_CHECK(kt_f32(out[2])[0] == 11 && kt_f32(out[2])[1] == 8);
    kt_release(in, 2);
    kt_release(out, 3);
  }
  kc_executable_destroy(exe);
  kc_program_destroy(p);
}

KC_TEST(stablehlo_chlo_top_k_and_composites) {
  const char* text =
      "module {\n"
      "  func.func @main(%x: tensor<5xf32>) -> (tensor<2xf32>, tensor<2xi32>, tensor<5xf32>) {\n"
      "    %values, %indices = chlo.top_k(%x, k = 2) : tensor<5xf32> -> (tensor<2xf32>, "
      "tensor<2xi32>)\n"
      "    %e = stablehlo.composite \"my.erf\" %x {decomposition = @my_erf} : (tensor<5xf32>) "
      "-> tensor<5xf32>\n"
      "    return %values, %indices, %e : tensor<2xf32>, tensor<2xi32>, tensor<5xf32>\n"
      "  }\n"
      "  func.func private @my_erf(%a: tensor<5xf32>) -> tensor<5xf32> {\n"
      "    %0 = chlo.erf %a : tensor<5xf32> -> tensor<5xf32>\n"
      "    return %0 : tensor<5xf32>\n"
      "  }\n"
      "}\n";
  const float x[5] = {0.5f, 3, -1, 7, 0};
  const int64_t xd[1] = {5};
  kc_tensor* in = kt_tensor_of(KT_F32, 1, xd, x, sizeof x);
  kc_tensor* out[3] = {NULL, NULL, NULL};
  kt_execute(text, &in, 1, out, 3);
  KC_CHECK(kt_f32(out[0])[0] == 7 && kt_f32(out[0])[1] == 3);
  const int32_t* idx = kt_data(out[1]);
  KC_CHECK(idx[0] == 3 && idx[1] == 1);
  KC_CHECK(fabsf(kt_f32(out[2])[0] - erff(0.5f)) < 1e-6f && kt_f32(out[2])[4] == 0);
  kt_release(out, 3);
}

KC_TEST(stablehlo_text_beside_hlo_text) {
  /* The format is told by the content: HLO text still parses as HLO. */
  kc_tensor* out = NULL;
  kt_run_text("HloModule m\nENTRY e {\n  ROOT c = f32[] constant(2)\n}\n", &out, 1);
  KC_CHECK(kt_f32(out)[0] == 2);
  kc_object_release(KC_OBJECT(out));
  kt_run_text("// a comment first\nfunc.func @main() -> tensor<f32> {\n"
              "  %c = stablehlo.constant dense<3.0> : tensor<f32>\n"
              "  return %c : tensor<f32>\n}\n",
              &out, 1);
  KC_CHECK(kt_f32(out)[0] == 3);
  kc_object_release(KC_OBJECT(out));
}

KC_TEST(stablehlo_refusals_name_line_column_and_cause) {
  KT_PARSE_FAILS("module {\n  func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
                 "    %0 = chlo.lgamma %x : tensor<2xf32> -> tensor<2xf32>\n"
                 "    return %0 : tensor<2xf32>\n  }\n}\n",
                 "line 3, column 10", "op chlo.lgamma is not supported");
  /* An attribute no rule reads, which may change the result, is refused;
   * precision hints and annotations are not. */
  KT_PARSE_FAILS("func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
                 "  %0 = \"stablehlo.exponential\"(%x) {result_accuracy = "
                 "#stablehlo.result_accuracy<atol = 1.0e-5>, mhlo.frontend_attributes = {}} : "
                 "(tensor<2xf32>) -> tensor<2xf32>\n  return %0 : tensor<2xf32>\n}\n",
                 "line 2, column 55", "stablehlo.exponential: attribute result_accuracy is not "
                 "supported");
  KT_PARSE_FAILS("func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
                 "  %0 = stablehlo.add %x, %y : tensor<2xf32>\n  return %0 : tensor<2xf32>\n}\n",
                 "line 2, column 26", "value %y is not defined");
  {
    kc_program* q = NULL;
    KC_CHECK_CODE(kc_program_parse(kc_sv("func.func @main(%x: tensor<?x2xf32>) -> "
                                         "tensor<?x2xf32> {\n  return %x : tensor<?x2xf32>\n}\n"),
                                   &q),
                  KC_FAILED_PRECONDITION, "line 1, column 17: parameter 0 (%x) has the type "
                  "f32[?,2], with dimensions only its input fixes");
    KC_CHECK(q == NULL);
  }
  KT_PARSE_FAILS("func.func @main(%x: tensor<2xf7E3M3>) -> tensor<2xf7E3M3> {\n"
                 "  return %x : tensor<2xf7E3M3>\n}\n",
                 "element type 'f7E3M3' is not supported");
  KT_PARSE_FAILS("func.func @main(%t: !stablehlo.token) -> !stablehlo.token {\n"
                 "  return %t : !stablehlo.token\n}\n",
                 "type !stablehlo.token is not supported");
  KT_PARSE_FAILS("func.func @main() -> tensor<3xf32> {\n"
                 "  %c = stablehlo.constant dense<[1.0, 2.0]> : tensor<3xf32>\n"
                 "  return %c : tensor<3xf32>\n}\n",
                 "line 2", "dense literal: 2 elements for a type of 3");
  KT_PARSE_FAILS("func.func @main() -> tensor<2xf32> {\n"
                 "  %c = stablehlo.constant dense<1.0> : tensor<f32>\n"
                 "  return %c : tensor<f32>\n}\n",
                 "@main: result 0 is f32[], its type says f32[2]");
  KT_PARSE_FAILS("module {\n  func.func @main() -> tensor<f32> {\n"
                 "    %0 = call @f() : () -> tensor<f32>\n    return %0 : tensor<f32>\n  }\n"
                 "  func.func private @f() -> tensor<f32> {\n"
                 "    %0 = call @f() : () -> tensor<f32>\n    return %0 : tensor<f32>\n  }\n}\n",
                 "line 7", "function @f calls itself");
  KT_PARSE_FAILS("func.func @main() -> tensor<f32> {\n"
                 "  %c = stablehlo.constant dense<1.0> : tensor<f32>\n}\n",
                 "a block without a return");
  KT_PARSE_FAILS("module {\n  func.func @f() -> tensor<f32> {\n"
                 "    %c = stablehlo.constant dense<1.0> : tensor<f32>\n"
                 "    return %c : tensor<f32>\n  }\n  func.func @g() -> tensor<f32> {\n"
                 "    %c = stablehlo.constant dense<1.0> : tensor<f32>\n"
                 "    return %c : tensor<f32>\n  }\n}\n",
                 "no function @main");
  KT_PARSE_FAILS("module {\n  func.func @main() -> tensor<f32> {\n", "line 3, column 1",
                 "expected a bracket closing the '{' at line 2, column 36");
  KT_PARSE_FAILS("func.func @main(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {\n"
                 "  %0 = stablehlo.custom_call @kt.bytes(%x) {operand_layouts = [dense<[0, 0]> : "
                 "tensor<2xindex>]} : (tensor<2x2xf32>) -> tensor<2x2xf32>\n"
                 "  return %0 : tensor<2x2xf32>\n}\n",
                 "line 2, column 64", "operand_layouts: layout 0: expected each dimension of "
                 "an array of 2 once");
  KT_PARSE_FAILS("func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
                 "  %0 = stablehlo.add %x, %x tensor<2xf32>\n  return %0 : tensor<2xf32>\n}\n",
                 "line 2, column 8", "stablehlo.add: 1 result named, 0 types given");
  /* Too few operands are refused before anything reads them. */
  KT_PARSE_FAILS("func.func @main() -> tensor<7xi32> {\n"
                 "  %0 = \"stablehlo.sort\"() <{dimension = 0 : i64}> ({\n"
                 "  ^bb0(%a: tensor<i32>, %b: tensor<i32>):\n"
                 "    %1 = stablehlo.compare LT, %a, %b, SIGNED : (tensor<i32>, tensor<i32>) -> "
                 "tensor<i1>\n    stablehlo.return %1 : tensor<i1>\n"
                 "  }) : () -> tensor<7xi32>\n  return %0 : tensor<7xi32>\n}\n",
                 "line 2, column 8", "stablehlo.sort: expected at least 1 operand, found 0");
  KT_PARSE_FAILS("func.func @main(%x: tensor<2x3xf32>) -> tensor<?x3xf32> {\n"
                 "  %0 = \"stablehlo.dot_general\"(%x) <{dot_dimension_numbers = "
                 "#stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = "
                 "[0]>}> : (tensor<2x3xf32>) -> tensor<?x3xf32>\n  return %0 : tensor<?x3xf32>\n}\n",
                 "line 2, column 8", "stablehlo.dot_general: expected at least 2 operands, found 1");
}

/* Copies its operand's 4 floats as they lie in memory. */
static void kt_bytes(void* out, const void** ins) { memcpy(out, ins[0], 4 * sizeof(float)); }

KC_TEST(stablehlo_custom_calls_see_the_layouts_given) {
  /* operand_layouts and result_layouts (minor to major), as JAX's LAPACK
   * calls carry them: the call gets the bytes of each operand's layout
   * and its result is read in its own, so a byte copy from column-major
   * to row-major is a transpose. Aliasing as written is kept. */
  KC_CHECK_OK(kc_xcall_register(KC_SV_LIT("kt.bytes"), KC_PLATFORM_HOST, KC_XCALL_API_ORIGINAL,
                                (void (*)(void))kt_bytes, 0));
  const char* text =
      "func.func @main(%x: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {\n"
      "  %0 = stablehlo.custom_call @kt.bytes(%x) {operand_layouts = [dense<[0, 1]> : "
      "tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : "
      "(tensor<2x2xf32>) -> tensor<2x2xf32>\n"
      "  %1 = stablehlo.custom_call @kt.bytes(%x) {operand_layouts = [dense<[1, 0]> : "
      "tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<"
      "output_tuple_indices = [], operand_index = 0, operand_tuple_indices = []>], "
      "result_layouts = [dense<[0, 1]> : tensor<2xindex>]} : (tensor<2x2xf32>) -> "
      "tensor<2x2xf32>\n"
      "  return %0, %1 : tensor<2x2xf32>, tensor<2x2xf32>\n}\n";
  const float x[4] = {1, 2, 3, 4};
  const int64_t xd[2] = {2, 2};
  kc_tensor* in = kt_tensor_of(KT_F32, 2, xd, x, sizeof x);
  kc_tensor* out[2] = {NULL, NULL};
  kt_execute(text, &in, 1, out, 2);
  const float t[4] = {1, 3, 2, 4};
  for (int i = 0; i < 4; ++i) KC_CHECK(kt_f32(out[0])[i] == t[i] && kt_f32(out[1])[i] == t[i]);
  kt_release(out, 2);
  kc_xcall_registry_reset();
}

KC_TEST(stablehlo_chlo_erf_inv_as_xla_expands_it) {
  /* Giles' f32 approximation, as XLA expands chlo.erf_inv (what
   * jax.random.normal draws through); bf16 through f32; f64 refused. */
  const char* text =
      "func.func @main(%x: tensor<6xf32>) -> (tensor<6xf32>, tensor<6xbf16>) {\n"
      "  %0 = chlo.erf_inv %x : tensor<6xf32> -> tensor<6xf32>\n"
      "  %1 = stablehlo.convert %x : (tensor<6xf32>) -> tensor<6xbf16>\n"
      "  %2 = chlo.erf_inv %1 : tensor<6xbf16> -> tensor<6xbf16>\n"
      "  return %0, %2 : tensor<6xf32>, tensor<6xbf16>\n}\n";
  /* (values bf16 holds exactly, so that both paths see the same x) */
  const float x[6] = {0, 0.5f, -0.875f, 0.9921875f, 1, -1};
  const double want[6] = {0, 0.47693627620446977, -1.084787040069283, 1.8809517454731395,
                          INFINITY, -INFINITY};
  const int64_t xd[1] = {6};
  kc_tensor* in = kt_tensor_of(KT_F32, 1, xd, x, sizeof x);
  kc_tensor* out[2] = {NULL, NULL};
  kt_execute(text, &in, 1, out, 2);
  const uint16_t* b = kt_data(out[1]);
  for (int i = 0; i < 6; ++i) {
    float got = kt_f32(out[0])[i];
    uint32_t bits = (uint32_t)b[i] << 16;
    float half;
    memcpy(&half, &bits, sizeof half);
    if (isinf(want[i])) {
      KC_CHECK(got == (float)want[i] && half == (float)want[i]);
    } else {
      KC_CHECK(fabs(got - want[i]) <= 2e-6 * (1 + fabs(want[i])));
      KC_CHECK(fabs(half - want[i]) <= 2e-2 * (1 + fabs(want[i])));
    }
  }
  kt_release(out, 2);
  KT_PARSE_FAILS("func.func @main(%x: tensor<2xf64>) -> tensor<2xf64> {\n"
                 "  %0 = chlo.erf_inv %x : tensor<2xf64> -> tensor<2xf64>\n"
                 "  return %0 : tensor<2xf64>\n}\n",
                 "line 2, column 8", "chlo.erf_inv of f64 is not supported");
}

KC_TEST(stablehlo_generic_while_and_call) {
  /* The generic forms a printer without the pretty syntax writes (as the
   * portable artifact's ops print): while with its values named in each
   * region's ^bb0, func.call with its callee as a property. */
  const char* text =
      "module {\n"
      "  func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
      "    %z = \"stablehlo.constant\"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>\n"
      "    %r:2 = \"stablehlo.while\"(%z, %x) ({\n"
      "    ^bb0(%i: tensor<i32>, %v: tensor<2xf32>):\n"
      "      %n = \"stablehlo.constant\"() <{value = dense<3> : tensor<i32>}> : () -> tensor<i32>\n"
      "      %c = \"stablehlo.compare\"(%i, %n) <{comparison_direction = "
      "#stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "      \"stablehlo.return\"(%c) : (tensor<i1>) -> ()\n"
      "    }, {\n"
      "    ^bb0(%i: tensor<i32>, %v: tensor<2xf32>):\n"
      "      %one = \"stablehlo.constant\"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>\n"
      "      %j = \"stablehlo.add\"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>\n"
      "      %w = \"func.call\"(%v) <{callee = @twice}> : (tensor<2xf32>) -> tensor<2xf32>\n"
      "      \"stablehlo.return\"(%j, %w) : (tensor<i32>, tensor<2xf32>) -> ()\n"
      "    }) : (tensor<i32>, tensor<2xf32>) -> (tensor<i32>, tensor<2xf32>)\n"
      "    \"func.return\"(%r#1) : (tensor<2xf32>) -> ()\n"
      "  }\n"
      "  func.func private @twice(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
      "    %0 = \"stablehlo.add\"(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
      "    \"func.return\"(%0) : (tensor<2xf32>) -> ()\n"
      "  }\n"
      "}\n";
  const float x[2] = {1, -0.5f};
  const int64_t xd[1] = {2};
  kc_tensor* in = kt_tensor_of(KT_F32, 1, xd, x, sizeof x);
  kc_tensor* out = NULL;
  kt_execute(text, &in, 1, &out, 1);
  KC_CHECK(kt_f32(out)[0] == 8 && kt_f32(out)[1] == -4);
  kc_object_release(KC_OBJECT(out));
}

/* A shape-polymorphic module as jax.export writes it (abridged): the
 * batch b taken from the input, checked by shape_assertion, handed to the
 * wrapped main, which computes shapes with it. */
static const char kPoly[] =
    "module @jit_f attributes {jax.uses_shape_polymorphism = true} {\n"
    "  func.func public @main(%arg0: tensor<?x3xf32>, %arg1: tensor<3xf32>) -> (tensor<?xf32>, "
    "tensor<?x3xf32>) {\n"
    "    %c = stablehlo.constant dense<1> : tensor<i32>\n"
    "    %0 = stablehlo.get_dimension_size %arg0, dim = 0 : (tensor<?x3xf32>) -> tensor<i32>\n"
    "    %1 = stablehlo.compare  GE, %0, %c,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "    stablehlo.custom_call @shape_assertion(%1, %0) {api_version = 2 : i32, error_message = "
    "\"Expected value >= 1 for dimension variable 'b', got {0}.\", has_side_effect = true} : "
    "(tensor<i1>, tensor<i32>) -> ()\n"
    "    %2:2 = call @_wrapped_jax_export_main(%0, %arg0, %arg1) : (tensor<i32>, tensor<?x3xf32>, "
    "tensor<3xf32>) -> (tensor<?xf32>, tensor<?x3xf32>)\n"
    "    return %2#0, %2#1 : tensor<?xf32>, tensor<?x3xf32>\n"
    "  }\n"
    "  func.func private @_wrapped_jax_export_main(%arg0: tensor<i32> {jax.global_constant = "
    "\"b\"}, %arg1: tensor<?x3xf32>, %arg2: tensor<3xf32>) -> (tensor<?xf32>, tensor<?x3xf32>) {\n"
    "    %c = stablehlo.constant dense<3> : tensor<1xi32>\n"
    "    %0 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>\n"
    "    %1 = stablehlo.concatenate %0, %c, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> "
    "tensor<2xi32>\n"
    "    %2 = stablehlo.dynamic_broadcast_in_dim %arg2, %1, dims = [1] : (tensor<3xf32>, "
    "tensor<2xi32>) -> tensor<?x3xf32>\n"
    "    %3 = stablehlo.multiply %arg1, %2 : tensor<?x3xf32>\n"
    "    %cst = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "    %4 = stablehlo.reduce(%3 init: %cst) applies stablehlo.add across dimensions = [1] : "
    "(tensor<?x3xf32>, tensor<f32>) -> tensor<?xf32>\n"
    "    %5 = stablehlo.multiply %arg0, %arg0 : tensor<i32>\n"
    "    %6 = stablehlo.reshape %5 : (tensor<i32>) -> tensor<1xi32>\n"
    "    %7 = stablehlo.dynamic_iota %6, dim = 0 : (tensor<1xi32>) -> tensor<?xf32>\n"
    "    %8 = stablehlo.dynamic_reshape %7, %1 : (tensor<?xf32>, tensor<2xi32>) -> tensor<?x3xf32>\n"
    "    return %4, %8 : tensor<?xf32>, tensor<?x3xf32>\n"
    "  }\n"
    "}\n";

/* Runs kPoly for a batch of b rows of [1, 2, 3] * row number. */
static void kt_run_poly(int64_t b, const char* const* names) {
  const int64_t dims[2] = {b, 3};
  kc_shape* shape = NULL;
  KC_CHECK_OK(kc_shape_create_array(KT_F32, dims, 2, &shape));
  const kc_shape* shapes[1] = {shape};
  kc_parse_options o = {.struct_size = sizeof o, .parameter_shapes = shapes,
                        .num_parameter_shapes = 1, .parameter_names = names};
  kc_program* p = NULL;
  KC_CHECK_OK(kc_program_parse_with(kc_sv(kPoly), &o, &p));
  kc_shape_destroy(shape);
  kc_executable* exe = NULL;
  KC_CHECK_OK(kc_program_compile(p, NULL, &exe));
  float x[64 * 3];
  for (int64_t i = 0; i < b * 3; ++i) x[i] = (float)(i / 3 + 1) * (float)(i % 3 + 1);
  const float w[3] = {1, 0.5f, 2};
  const int64_t wd[1] = {3};
  kc_tensor* in[2] = {kt_tensor_of(KT_F32, 2, dims, x, (size_t)b * 3 * sizeof(float)),
                      kt_tensor_of(KT_F32, 1, wd, w, sizeof w)};
  kc_tensor* out[2] = {NULL, NULL};
  const DLTensor* dl[2] = {kc_tensor_get_dltensor(in[0]), kc_tensor_get_dltensor(in[1])};
  KC_CHECK_OK(kc_executable_execute(exe, dl, 2, NULL, out));
  KC_CHECK_INT(kc_tensor_get_dltensor(out[0])->shape[0], b);
  for (int64_t r = 0; r < b; ++r) KC_CHECK(kt_f32(out[0])[r] == (float)(r + 1) * 8.0f);
  /* iota of b*b elements, reshaped to [b, 3]: only b*b == 3b fits, so the
   * module is only valid for b = 3, and compile must have refused others. */
  KC_CHECK(b == 3);
  for (int i = 0; i < 9; ++i) KC_CHECK(kt_f32(out[1])[i] == (float)i);
  kt_release(in, 2);
  kt_release(out, 2);
  kc_executable_destroy(exe);
  kc_program_destroy(p);
}

KC_TEST(stablehlo_shape_polymorphic_modules_refined_for_their_inputs) {
  kt_run_poly(3, NULL);
  static const char* const by_name[] = {"arg0"};
  static const char* const by_number[] = {"0"};
  kt_run_poly(3, by_name);
  kt_run_poly(3, by_number);
  /* Another batch: the dynamic_reshape of b*b elements into [b, 3] is
   * refused where the shapes are known, naming the op. */
  const int64_t dims[2] = {4, 3};
  kc_shape* shape = NULL;
  KC_CHECK_OK(kc_shape_create_array(KT_F32, dims, 2, &shape));
  const kc_shape* shapes[1] = {shape};
  kc_parse_options o = {.struct_size = sizeof o, .parameter_shapes = shapes,
                        .num_parameter_shapes = 1};
  kc_program* p = NULL;
  KC_CHECK_CODE(kc_program_parse_with(kc_sv(kPoly), &o, &p), KC_INVALID_ARGUMENT,
                "line 21, column 10: dynamic_reshape: the shape operand holds 12 elements, the "
                "operand 16");
  KC_CHECK(p == NULL);
  kc_shape_destroy(shape);
  /* No shape: FAILED_PRECONDITION naming the parameter. */
  KC_CHECK_CODE(kc_program_parse(kc_sv(kPoly), &p), KC_FAILED_PRECONDITION,
                "parameter 0 (%arg0) has the type f32[?,3]");
  /* An empty batch fails the module's own shape assertion, with its
   * message and the dimension filled in. */
  const int64_t zero[2] = {0, 3};
  KC_CHECK_OK(kc_shape_create_array(KT_F32, zero, 2, &shape));
  shapes[0] = shape;
  KC_CHECK_CODE(kc_program_parse_with(kc_sv(kPoly), &o, &p), KC_INVALID_ARGUMENT,
                "Expected value >= 1 for dimension variable 'b', got 0.");
  kc_shape_destroy(shape);
  /* A shape not of the parameter's type, a name no parameter has. */
  const int64_t wrong[2] = {2, 4};
  KC_CHECK_OK(kc_shape_create_array(KT_F32, wrong, 2, &shape));
  shapes[0] = shape;
  KC_CHECK_CODE(kc_program_parse_with(kc_sv(kPoly), &o, &p), KC_INVALID_ARGUMENT,
                "parameter 0 (%arg0): the shape given, f32[2,4], is not of its type f32[?,3]");
  static const char* const nobody[] = {"y"};
  o.parameter_names = nobody;
  KC_CHECK_CODE(kc_program_parse_with(kc_sv(kPoly), &o, &p), KC_INVALID_ARGUMENT,
                "a shape is given for parameter 'y', which the program does not have");
  /* HLO text: the shapes given must be its own. */
  o.parameter_names = NULL;
  KC_CHECK_CODE(kc_program_parse_with(kc_sv("HloModule m\nENTRY e {\n  ROOT x = f32[2,3] "
                                            "parameter(0)\n}\n"),
                                      &o, &p),
                KC_INVALID_ARGUMENT, "parameter 0 (x): the shape given, f32[2,4], is not its "
                "shape f32[2,3]");
  kc_shape_destroy(shape);
}

/* stablehlo.convert of complex values to a real or integer type takes
 * their real parts (HLO's convert refuses it, as XLA's does). */
KC_TEST(stablehlo_convert_complex_to_real_takes_the_real_part) {
  kc_tensor* out[3] = {NULL, NULL, NULL};
  kt_run_text("func.func @main() -> (tensor<3xf32>, tensor<3xi1>, tensor<3xi32>) {\n"
              "  %c = stablehlo.constant dense<[(-1.5, 2.0), (0.0, 1.0), (3.0, -4.0)]> : "
              "tensor<3xcomplex<f64>>\n"
              "  %0 = stablehlo.convert %c : (tensor<3xcomplex<f64>>) -> tensor<3xf32>\n"
              "  %1 = stablehlo.convert %c : (tensor<3xcomplex<f64>>) -> tensor<3xi1>\n"
              "  %2 = stablehlo.convert %c : (tensor<3xcomplex<f64>>) -> tensor<3xi32>\n"
              "  return %0, %1, %2 : tensor<3xf32>, tensor<3xi1>, tensor<3xi32>\n}\n",
              out, 3);
  const float* f = kt_f32(out[0]);
  KC_CHECK(f[0] == -1.5f && f[1] == 0 && f[2] == 3);
  const uint8_t* b = kt_data(out[1]);
  KC_CHECK(b[0] == 1 && b[1] == 0 && b[2] == 1);
  const int32_t* i = kt_data(out[2]);
  KC_CHECK(i[0] == -1 && i[1] == 0 && i[2] == 3);
  kt_release(out, 3);
  KT_COMPILE_FAILS("HloModule m\nENTRY e {\n  c = c64[2] parameter(0)\n"
                   "  ROOT r = f32[2] convert(c)\n}\n",
                   KC_UNIMPLEMENTED, "convert is not implemented for c64 -> f32");
}

/* chlo.mulhi: the high half of the double-width product, against
 * __int128 arithmetic, on extremes and mixed values of every integer
 * type (64 bits built from 32-bit halves). */
KC_TEST(stablehlo_chlo_mulhi_matches_wide_products) {
  static const uint64_t vals[] = {0,
                                  1,
                                  UINT64_MAX,
                                  UINT64_C(0x8000000000000000),
                                  UINT64_C(0x7FFFFFFFFFFFFFFF),
                                  UINT64_C(0xFFFFFFFF),
                                  UINT64_C(0x100000000),
                                  UINT64_C(0x123456789ABCDEF0),
                                  UINT64_C(0xFEDCBA9876543210),
                                  UINT64_C(0x00000000DEADBEEF),
                                  UINT64_C(0x8000000080000000),
                                  UINT64_C(0x7FFF00017FFF0001)};
  enum { N = sizeof vals / sizeof vals[0] };
  static const struct {
    const char* mlir;
    unsigned bits;
    bool sign;
  } types[] = {{"i8", 8, true},   {"ui8", 8, false},  {"i16", 16, true}, {"ui16", 16, false},
               {"i32", 32, true}, {"ui32", 32, false}, {"i64", 64, true}, {"ui64", 64, false}};
  for (size_t t = 0; t < sizeof types / sizeof types[0]; ++t) {
    unsigned bits = types[t].bits;
    bool sign = types[t].sign;
    /* All N x N pairs, as two flat operands. */
    char lhs[N * N * 24], rhs[N * N * 24];
    size_t la = 0, ra = 0;
    uint64_t mask = bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
    int64_t want[N * N];
    for (int i = 0; i < N; ++i) {
      for (int j = 0; j < N; ++j) {
        uint64_t a = vals[i] & mask, b = vals[j] & mask;
        /* The values as the type reads them. */
        __int128 x, y;
        if (sign) {
          int64_t sa = bits == 64 ? (int64_t)a : (int64_t)(a << (64 - bits)) >> (64 - bits);
          int64_t sb = bits == 64 ? (int64_t)b : (int64_t)(b << (64 - bits)) >> (64 - bits);
          x = sa;
          y = sb;
          la += (size_t)snprintf(lhs + la, sizeof lhs - la, "%s%lld", la ? ", " : "", (long long)sa);
          ra += (size_t)snprintf(rhs + ra, sizeof rhs - ra, "%s%lld", ra ? ", " : "", (long long)sb);
        } else {
          x = (__int128)a;
          y = (__int128)b;
          la += (size_t)snprintf(lhs + la, sizeof lhs - la, "%s%llu", la ? ", " : "",
                                 (unsigned long long)a);
          ra += (size_t)snprintf(rhs + ra, sizeof rhs - ra, "%s%llu", ra ? ", " : "",
                                 (unsigned long long)b);
        }
        /* Unsigned 64-bit products overflow __int128: those in unsigned. */
        unsigned __int128 p =
            !sign && bits == 64 ? (unsigned __int128)a * b : (unsigned __int128)(x * y);
        want[i * N + j] = (int64_t)(uint64_t)(p >> bits);
      }
    }
    static char text[16384];
    snprintf(text, sizeof text,
             "func.func @main() -> tensor<%dx%s> {\n"
             "  %%a = stablehlo.constant dense<[%s]> : tensor<%dx%s>\n"
             "  %%b = stablehlo.constant dense<[%s]> : tensor<%dx%s>\n"
             "  %%0 = \"chlo.mulhi\"(%%a, %%b) : (tensor<%dx%s>, tensor<%dx%s>) -> tensor<%dx%s>\n"
             "  return %%0 : tensor<%dx%s>\n}\n",
             N * N, types[t].mlir, lhs, N * N, types[t].mlir, rhs, N * N, types[t].mlir,
             N * N, types[t].mlir, N * N, types[t].mlir, N * N, types[t].mlir, N * N,
             types[t].mlir);
    kc_tensor* out = NULL;
    kt_run_text(text, &out, 1);
    const uint8_t* got = kt_data(out);
    for (int k = 0; k < N * N; ++k) {
      uint64_t g = 0;
      memcpy(&g, got + (size_t)k * (bits / 8), bits / 8);
      if (g != ((uint64_t)want[k] & mask)) {
        kt__fail(__FILE__, __LINE__, "mulhi %s pair %d: got %#llx, expected %#llx",
                 types[t].mlir, k, (unsigned long long)g,
                 (unsigned long long)((uint64_t)want[k] & mask));
      }
    }
    kc_object_release(KC_OBJECT(out));
  }
  KT_PARSE_FAILS("func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
                 "  %0 = \"chlo.mulhi\"(%x, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
                 "  return %0 : tensor<2xf32>\n}\n",
                 "chlo.mulhi: expected two integer operands of one type");
}

/* stablehlo.maximum and minimum of complex values: lexicographic in
 * (real, imaginary), as StableHLO defines them (HLO text refuses them, as
 * XLA does). */
KC_TEST(stablehlo_complex_maximum_minimum_are_lexicographic) {
  kc_tensor* out[2] = {NULL, NULL};
  kt_run_text("func.func @main() -> (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) {\n"
              "  %a = stablehlo.constant dense<[(1.0, 9.0), (2.0, 1.0), (3.0, -1.0), (4.0, 4.0)]> "
              ": tensor<4xcomplex<f32>>\n"
              "  %b = stablehlo.constant dense<[(2.0, 0.0), (1.0, 5.0), (3.0, 2.0), (4.0, 4.0)]> "
              ": tensor<4xcomplex<f32>>\n"
              "  %0 = stablehlo.maximum %a, %b : tensor<4xcomplex<f32>>\n"
              "  %1 = stablehlo.minimum %a, %b : tensor<4xcomplex<f32>>\n"
              "  return %0, %1 : tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>\n}\n",
              out, 2);
  static const float want_max[8] = {2, 0, 2, 1, 3, 2, 4, 4};
  static const float want_min[8] = {1, 9, 1, 5, 3, -1, 4, 4};
  KC_CHECK(memcmp(kt_data(out[0]), want_max, sizeof want_max) == 0);
  KC_CHECK(memcmp(kt_data(out[1]), want_min, sizeof want_min) == 0);
  kt_release(out, 2);
  /* HLO text builds the same (the front ends share the decomposition). */
  kt_run_text("HloModule m\nENTRY e {\n"
              "  a = c64[4] constant({(1, 9), (2, 1), (3, -1), (4, 4)})\n"
              "  b = c64[4] constant({(2, 0), (1, 5), (3, 2), (4, 4)})\n"
              "  x = c64[4] maximum(a, b)\n  n = c64[4] minimum(a, b)\n"
              "  ROOT r = (c64[4], c64[4]) tuple(x, n)\n}\n",
              out, 2);
  KC_CHECK(memcmp(kt_data(out[0]), want_max, sizeof want_max) == 0);
  KC_CHECK(memcmp(kt_data(out[1]), want_min, sizeof want_min) == 0);
  kt_release(out, 2);
}

/* convolution with window_reversal: the kernel's flagged spatial
 * dimensions reversed, the same as reversing the kernel first. */
KC_TEST(stablehlo_convolution_window_reversal) {
  static const char* const forms[2] = {
      "%y = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], "
      "window = {stride = [1, 1], pad = [[1, 1], [0, 0]], reverse = [true, false]} "
      "{batch_group_count = 1 : i64, feature_group_count = 1 : i64} : "
      "(tensor<1x4x4x1xf32>, tensor<3x2x1x1xf32>) -> tensor<1x4x3x1xf32>",
      "%r = stablehlo.reverse %k, dims = [0] : tensor<3x2x1x1xf32>\n"
      "  %y = stablehlo.convolution(%x, %r) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], "
      "window = {stride = [1, 1], pad = [[1, 1], [0, 0]]} "
      "{batch_group_count = 1 : i64, feature_group_count = 1 : i64} : "
      "(tensor<1x4x4x1xf32>, tensor<3x2x1x1xf32>) -> tensor<1x4x3x1xf32>"};
  kc_tensor* out[2] = {NULL, NULL};
  for (int k = 0; k < 2; ++k) {
    char text[2048];
    snprintf(text, sizeof text,
             "func.func @main() -> tensor<1x4x3x1xf32> {\n"
             "  %%i = stablehlo.iota dim = 1 : tensor<1x4x4x1xf32>\n"
             "  %%j = stablehlo.iota dim = 2 : tensor<1x4x4x1xf32>\n"
             "  %%t = stablehlo.constant dense<4.0> : tensor<1x4x4x1xf32>\n"
             "  %%m = stablehlo.multiply %%i, %%t : tensor<1x4x4x1xf32>\n"
             "  %%x = stablehlo.add %%m, %%j : tensor<1x4x4x1xf32>\n"
             "  %%k = stablehlo.constant dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[5.0]]], "
             "[[[7.0]], [[11.0]]]]> : tensor<3x2x1x1xf32>\n"
             "  %s\n  return %%y : tensor<1x4x3x1xf32>\n}\n",
             forms[k]);
    kt_run_text(text, &out[k], 1);
  }
  KC_CHECK(memcmp(kt_data(out[0]), kt_data(out[1]), 12 * sizeof(float)) == 0);
  /* Not the plain convolution: the kernel is not symmetric. */
  KC_CHECK(kt_f32(out[0])[0] != 0);
  kt_release(out, 2);
  KT_PARSE_FAILS("func.func @main(%x: tensor<1x4x4x1xf32>, %k: tensor<3x2x1x1xf32>) -> "
                 "tensor<1x2x3x1xf32> {\n"
                 "  %y = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, "
                 "o]->[b, 0, 1, f], window = {reverse = [true]} {batch_group_count = 1 : i64, "
                 "feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<3x2x1x1xf32>) "
                 "-> tensor<1x2x3x1xf32>\n  return %y : tensor<1x2x3x1xf32>\n}\n",
                 "window_reversal has 1 entries for 2 spatial dimensions");
}

/* re + i im, the sign of a zero part kept (CMPLX, which not every C
 * library offers every compiler). */
static double complex kt_cmplx(double re, double im) {
  double parts[2] = {re, im};
  double complex z;
  memcpy(&z, parts, sizeof z);
  return z;
}

/* atan2, cbrt and logistic of complex values (StableHLO's, which HLO's
 * instructions do not take), against C's complex functions: atan2 by the
 * specification's formula -i log((x + iy) / sqrt(x^2 + y^2)), cbrt the
 * principal root, logistic 1 / (1 + exp(-z)); c64 and c128. */
KC_TEST(stablehlo_complex_atan2_cbrt_logistic) {
  static const double zs[5][2] = {{3, 4}, {-1, 0.5}, {0.25, -2}, {-8, -0.0}, {1, 0}};
  static const double xs[5][2] = {{1, 0}, {0.5, -1}, {-2, 0.5}, {0, 1}, {2, 2}};
  static const char* const types[2] = {"complex<f32>", "complex<f64>"};
  for (int t = 0; t < 2; ++t) {
    char zl[256], xl[256], text[2048];
    size_t a = 0, b = 0;
    for (int i = 0; i < 5; ++i) {
      a += (size_t)snprintf(zl + a, sizeof zl - a, "%s(%.17g, %.17g)", i ? ", " : "", zs[i][0],
                            zs[i][1]);
      b += (size_t)snprintf(xl + b, sizeof xl - b, "%s(%.17g, %.17g)", i ? ", " : "", xs[i][0],
                            xs[i][1]);
    }
    snprintf(text, sizeof text,
             "func.func @main() -> (tensor<5x%s>, tensor<5x%s>, tensor<5x%s>) {\n"
             "  %%z = stablehlo.constant dense<[%s]> : tensor<5x%s>\n"
             "  %%x = stablehlo.constant dense<[%s]> : tensor<5x%s>\n"
             "  %%0 = stablehlo.atan2 %%z, %%x : tensor<5x%s>\n"
             "  %%1 = stablehlo.cbrt %%z : tensor<5x%s>\n"
             "  %%2 = stablehlo.logistic %%z : tensor<5x%s>\n"
             "  return %%0, %%1, %%2 : tensor<5x%s>, tensor<5x%s>, tensor<5x%s>\n}\n",
             types[t], types[t], types[t], zl, types[t], xl, types[t], types[t], types[t],
             types[t], types[t], types[t], types[t]);
    kc_tensor* out[3] = {NULL, NULL, NULL};
    kt_run_text(text, out, 3);
    for (int i = 0; i < 5; ++i) {
      double complex z = kt_cmplx(zs[i][0], zs[i][1]), x = kt_cmplx(xs[i][0], xs[i][1]);
      double complex want[3] = {-I * clog((x + I * z) / csqrt(x * x + z * z)),
                                cpow(z, 1.0 / 3.0), 1.0 / (1.0 + cexp(-z))};
      for (int k = 0; k < 3; ++k) {
        double got[2];
        if (t == 0) {
          const float* f = (const float*)kt_data(out[k]) + 2 * i;
          got[0] = f[0];
          got[1] = f[1];
        } else {
          memcpy(got, (const double*)kt_data(out[k]) + 2 * i, sizeof got);
        }
        double tol = t == 0 ? 2e-6 : 1e-13;
        double scale = 1 + cabs(want[k]);
        if (fabs(got[0] - creal(want[k])) > tol * scale || fabs(got[1] - cimag(want[k])) > tol * scale) {
          kt__fail(__FILE__, __LINE__, "%s op %d element %d: got (%g, %g), expected (%g, %g)",
                   types[t], k, i, got[0], got[1], creal(want[k]), cimag(want[k]));
        }
      }
    }
    kt_release(out, 3);
  }
}
