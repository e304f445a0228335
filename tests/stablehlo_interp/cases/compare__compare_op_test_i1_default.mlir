// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/compare.mlir, func @compare_op_test_i1_default
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<i1>, tensor<i1>) {
  %lhs = stablehlo.constant dense<true> : tensor<i1>
  %rhs = stablehlo.constant dense<true> : tensor<i1>
  %result = stablehlo.compare EQ, %lhs, %rhs : (tensor<i1>, tensor<i1>) -> tensor<i1>
  %expected0 = stablehlo.constant dense<true> : tensor<i1>
  func.return %result, %expected0 : tensor<i1>, tensor<i1>
}
