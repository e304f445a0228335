// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/convert.mlir, func @convert_op_test_si64_to_ui64
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2xui64>, tensor<2xui64>) {
  %operand = stablehlo.constant dense<[0, 1]> : tensor<2xi4>
  %result = stablehlo.convert %operand : (tensor<2xi4>) -> tensor<2xui64>
  %expected0 = stablehlo.constant dense<[0, 1]> : tensor<2xui64>
  func.return %result, %expected0 : tensor<2xui64>, tensor<2xui64>
}
