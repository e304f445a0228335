// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/compare.mlir, func @compare_op_test_i1
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<4xi1>, tensor<4xi1>) {
  %lhs = stablehlo.constant dense<[true, true, false, false]> : tensor<4xi1>
  %rhs = stablehlo.constant dense<[true, false, true, false]> : tensor<4xi1>
  %result = stablehlo.compare EQ, %lhs, %rhs, UNSIGNED : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %expected0 = stablehlo.constant dense<[true, false, false, true]> : tensor<4xi1>
  func.return %result, %expected0 : tensor<4xi1>, tensor<4xi1>
}
