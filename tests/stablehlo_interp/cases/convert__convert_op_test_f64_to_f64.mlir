// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/convert.mlir, func @convert_op_test_f64_to_f64
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<3xf64>, tensor<3xf64>) {
  %operand = stablehlo.constant dense<[-1.0, 0.0, 1.0]> : tensor<3xf64>
  %result = stablehlo.convert %operand : (tensor<3xf64>) -> tensor<3xf64>
  %expected0 = stablehlo.constant dense<[-1.0, 0.0, 1.0]> : tensor<3xf64>
  func.return %result, %expected0 : tensor<3xf64>, tensor<3xf64>
}
