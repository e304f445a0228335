// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/not.mlir, func @not_op_test_ui16
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<3xui16>, tensor<3xui16>) {
  %0 = stablehlo.constant dense<[0, 32767, 65535]> : tensor<3xui16>
  %1 = stablehlo.not %0 : tensor<3xui16>
  %expected0 = stablehlo.constant dense<[65535, 32768, 0]> : tensor<3xui16>
  func.return %1, %expected0 : tensor<3xui16>, tensor<3xui16>
}
