// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/or.mlir, func @or_op_test_ui32
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<3xui32>, tensor<3xui32>) {
  %0 = stablehlo.constant dense<[0, 2147483647, 4294967295]> : tensor<3xui32>
  %1 = stablehlo.constant dense<4294967295> : tensor<3xui32>
  %2 = stablehlo.or %0, %1 : tensor<3xui32>
  %expected0 = stablehlo.constant dense<[4294967295, 4294967295, 4294967295]> : tensor<3xui32>
  func.return %2, %expected0 : tensor<3xui32>, tensor<3xui32>
}
