// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/chlo/mulhi.mlir, func @mulhi_op_test_ui16
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2xui16>, tensor<2xui16>) {
  %lhs = stablehlo.constant dense<[61440, 32768]> : tensor<2xui16>
  %rhs = stablehlo.constant dense<[16, 2]> : tensor<2xui16>
  %result = "chlo.mulhi"(%lhs, %rhs) : (tensor<2xui16>, tensor<2xui16>) -> tensor<2xui16>
  %expected0 = stablehlo.constant dense<[15, 1]> : tensor<2xui16>
  func.return %result, %expected0 : tensor<2xui16>, tensor<2xui16>
}
