// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/iota.mlir, func @iota_op_test_si16_dim_0
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<3x4xi16>, tensor<3x4xi16>) {
  %0 = stablehlo.iota dim = 0 : tensor<3x4xi16>
  %expected0 = stablehlo.constant dense<[[0, 0, 0, 0], [1, 1, 1, 1], [2, 2, 2, 2]]> : tensor<3x4xi16>
  func.return %0, %expected0 : tensor<3x4xi16>, tensor<3x4xi16>
}
