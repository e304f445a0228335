// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/minimum.mlir, func @min_op_test_ui4
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2xui4>, tensor<2xui4>) {
  %0 = stablehlo.constant dense<[0, 2]> : tensor<2xui4>
  %1 = stablehlo.constant dense<[15, 3]> : tensor<2xui4>
  %2 = stablehlo.minimum %0, %1 : tensor<2xui4>
  %expected0 = stablehlo.constant dense<[0, 2]> : tensor<2xui4>
  func.return %2, %expected0 : tensor<2xui4>, tensor<2xui4>
}
