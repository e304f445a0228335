// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/clamp.mlir, func @clamp_op_test_si64
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<3xi64>, tensor<3xi64>) {
  %min = stablehlo.constant dense<[1, 5, -5]> : tensor<3xi64>
  %operand = stablehlo.constant dense<[2, 3, -1]> : tensor<3xi64>
  %max = stablehlo.constant dense<[3, 7, -3]> : tensor<3xi64>
  %result = stablehlo.clamp %min, %operand, %max : (tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %expected0 = stablehlo.constant dense<[2, 5, -3]> : tensor<3xi64>
  func.return %result, %expected0 : tensor<3xi64>, tensor<3xi64>
}
