// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/constant.mlir, func @constant_op_test_ui2
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<4xui2>, tensor<4xui2>) {
  %0 = stablehlo.constant dense<[0, 1, 2, 3]> : tensor<4xui2>
  %expected0 = stablehlo.constant dense<[0, 1, 2, 3]> : tensor<4xui2>
  func.return %0, %expected0 : tensor<4xui2>, tensor<4xui2>
}
