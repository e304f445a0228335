// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/or.mlir, func @or_op_test_si8
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<3xi8>, tensor<3xi8>) {
  %0 = stablehlo.constant dense<[127, -128, -128]> : tensor<3xi8>
  %1 = stablehlo.constant dense<[0, 127, -128]> : tensor<3xi8>
  %2 = stablehlo.or %0, %1 : tensor<3xi8>
  %expected0 = stablehlo.constant dense<[127, -1, -128]> : tensor<3xi8>
  func.return %2, %expected0 : tensor<3xi8>, tensor<3xi8>
}
