// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/add.mlir, func @add_op_test_ui8
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2xui8>, tensor<2xui8>) {
  %0 = stablehlo.constant dense<[0, 16]> : tensor<2xui8>
  %1 = stablehlo.constant dense<[255, 16]> : tensor<2xui8>
  %2 = stablehlo.add %0, %1 : tensor<2xui8>
  %expected0 = stablehlo.constant dense<[255, 32]> : tensor<2xui8>
  func.return %2, %expected0 : tensor<2xui8>, tensor<2xui8>
}
