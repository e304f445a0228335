// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/constant.mlir, func @constant_op_test_ui8
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<3xui8>, tensor<3xui8>) {
  %0 = stablehlo.constant dense<[0, 16, 255]> : tensor<3xui8>
  %expected0 = stablehlo.constant dense<[0, 16, 255]> : tensor<3xui8>
  func.return %0, %expected0 : tensor<3xui8>, tensor<3xui8>
}
