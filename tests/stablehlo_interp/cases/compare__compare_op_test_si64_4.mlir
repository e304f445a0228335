// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/compare.mlir, func @compare_op_test_si64
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<5xi1>, tensor<5xi1>) {
  %lhs = stablehlo.constant dense<[-2, -1, 0, 2, 2]> : tensor<5xi64>
  %rhs = stablehlo.constant dense<[-2, -2, 0, 1, 2]> : tensor<5xi64>
  %result = stablehlo.compare GT, %lhs, %rhs, SIGNED : (tensor<5xi64>, tensor<5xi64>) -> tensor<5xi1>
  %expected0 = stablehlo.constant dense<[false, true, false, true, false]> : tensor<5xi1>
  func.return %result, %expected0 : tensor<5xi1>, tensor<5xi1>
}
