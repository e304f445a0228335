// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/subtract.mlir, func @subtract_op_test_si16
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<5xi16>, tensor<5xi16>) {
  %0 = stablehlo.constant dense<[0, 1, 128, -129, 0]> : tensor<5xi16>
  %1 = stablehlo.constant dense<[-32768, -1, 128, -129, 32767]> : tensor<5xi16>
  %2 = stablehlo.subtract %0, %1 : tensor<5xi16>
  %expected0 = stablehlo.constant dense<[-32768, 2, 0, 0, -32767]> : tensor<5xi16>
  func.return %2, %expected0 : tensor<5xi16>, tensor<5xi16>
}
