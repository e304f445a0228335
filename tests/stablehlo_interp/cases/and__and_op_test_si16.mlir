// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/and.mlir, func @and_op_test_si16
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<3xi16>, tensor<3xi16>) {
  %0 = stablehlo.constant dense<[32767, -32768, -32768]> : tensor<3xi16>
  %1 = stablehlo.constant dense<[0, 32767, -32768]> : tensor<3xi16>
  %2 = stablehlo.and %0, %1 : tensor<3xi16>
  %expected0 = stablehlo.constant dense<[0, 0, -32768]> : tensor<3xi16>
  func.return %2, %expected0 : tensor<3xi16>, tensor<3xi16>
}
