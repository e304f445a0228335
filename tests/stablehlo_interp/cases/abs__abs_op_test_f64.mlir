// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/abs.mlir, func @abs_op_test_f64
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<3xf64>, tensor<3xf64>) {
  %operand = stablehlo.constant dense<[23.1, -23.1, -0.0]> : tensor<3xf64>
  %result = stablehlo.abs %operand : tensor<3xf64>
  %expected0 = stablehlo.constant dense<[2.310000e+01, 2.310000e+01, 0.000000e+00]> : tensor<3xf64>
  func.return %result, %expected0 : tensor<3xf64>, tensor<3xf64>
}
