// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/popcnt.mlir, func @popcnt_op_test_si64
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<4xi64>, tensor<4xi64>) {
  %operand = stablehlo.constant dense<[0, 1, 2, 127]> : tensor<4xi64>
  %result = stablehlo.popcnt %operand : tensor<4xi64>
  %expected0 = stablehlo.constant dense<[0, 1, 1, 7]> : tensor<4xi64>
  func.return %result, %expected0 : tensor<4xi64>, tensor<4xi64>
}
