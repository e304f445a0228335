// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/maximum.mlir, func @max_op_test_si8
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<5xi8>, tensor<5xi8>) {
  %0 = stablehlo.constant dense<[0, 1, 8, -9, 0]> : tensor<5xi8>
  %1 = stablehlo.constant dense<[-128, -1, 8, -9, 127]> : tensor<5xi8>
  %2 = stablehlo.maximum %0, %1 : tensor<5xi8>
  %expected0 = stablehlo.constant dense<[0, 1, 8, -9, 127]> : tensor<5xi8>
  func.return %2, %expected0 : tensor<5xi8>, tensor<5xi8>
}
