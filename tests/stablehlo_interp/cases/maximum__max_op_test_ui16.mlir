// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/maximum.mlir, func @max_op_test_ui16
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2xui16>, tensor<2xui16>) {
  %0 = stablehlo.constant dense<[0, 256]> : tensor<2xui16>
  %1 = stablehlo.constant dense<[65535, 256]> : tensor<2xui16>
  %2 = stablehlo.maximum %0, %1 : tensor<2xui16>
  %expected0 = stablehlo.constant dense<[65535, 256]> : tensor<2xui16>
  func.return %2, %expected0 : tensor<2xui16>, tensor<2xui16>
}
