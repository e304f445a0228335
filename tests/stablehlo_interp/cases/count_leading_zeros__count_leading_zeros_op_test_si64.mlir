// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/count_leading_zeros.mlir, func @count_leading_zeros_op_test_si64
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2x2xi64>, tensor<2x2xi64>) {
  %operand = stablehlo.constant dense<[[0, 1], [128, -1]]> : tensor<2x2xi64>
  %result = stablehlo.count_leading_zeros %operand : tensor<2x2xi64>
  %expected0 = stablehlo.constant dense<[[64, 63], [56, 0]]> : tensor<2x2xi64>
  func.return %result, %expected0 : tensor<2x2xi64>, tensor<2x2xi64>
}
