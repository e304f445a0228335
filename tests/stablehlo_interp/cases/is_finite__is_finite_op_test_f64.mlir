// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/is_finite.mlir, func @is_finite_op_test_f64
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<7xi1>, tensor<7xi1>) {
  %operand = stablehlo.constant dense<[0xFFF0000000000000, 0x7FF0000000000000, 0x7FF8000000000000, -10.0, -0.0, 0.0, 10.0]> : tensor<7xf64>
  %result = stablehlo.is_finite %operand : (tensor<7xf64>) -> tensor<7xi1>
  %expected0 = stablehlo.constant dense<[false, false, false, true, true, true, true]> : tensor<7xi1>
  func.return %result, %expected0 : tensor<7xi1>, tensor<7xi1>
}
