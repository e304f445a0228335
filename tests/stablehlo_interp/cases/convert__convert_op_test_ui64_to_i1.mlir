// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/convert.mlir, func @convert_op_test_ui64_to_i1
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2xi1>, tensor<2xi1>) {
  %operand = stablehlo.constant dense<[0, 1]> : tensor<2xui64>
  %result = stablehlo.convert %operand : (tensor<2xui64>) -> tensor<2xi1>
  %expected0 = stablehlo.constant dense<[false, true]> : tensor<2xi1>
  func.return %result, %expected0 : tensor<2xi1>, tensor<2xi1>
}
