// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/power.mlir, func @power_op_test_si64
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<6xi64>, tensor<6xi64>) {
  %lhs = stablehlo.constant dense<[-1, -1, -3, 1, -3, 0]> : tensor<6xi64>
  %rhs = stablehlo.constant dense<[1, 0, -3, -3, 3, 2]> : tensor<6xi64>
  %result = stablehlo.power %lhs, %rhs : tensor<6xi64>
  %expected0 = stablehlo.constant dense<[-1, 1, 0, 1, -27, 0]> : tensor<6xi64>
  func.return %result, %expected0 : tensor<6xi64>, tensor<6xi64>
}
