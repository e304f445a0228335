// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/convert.mlir, func @convert_op_test_i1_to_f64
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2xf64>, tensor<2xf64>) {
  %operand = stablehlo.constant dense<[true, false]> : tensor<2xi1>
  %result = stablehlo.convert %operand : (tensor<2xi1>) -> tensor<2xf64>
  %expected0 = stablehlo.constant dense<[1.0, 0.0]> : tensor<2xf64>
  func.return %result, %expected0 : tensor<2xf64>, tensor<2xf64>
}
