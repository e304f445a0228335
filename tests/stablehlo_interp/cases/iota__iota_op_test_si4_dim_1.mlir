// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/iota.mlir, func @iota_op_test_si4_dim_1
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<3x4xi4>, tensor<3x4xi4>) {
  %0 = stablehlo.iota dim = 1 : tensor<3x4xi4>
  %expected0 = stablehlo.constant dense<[[0, 1, 2, 3], [0, 1, 2, 3], [0, 1, 2, 3]]> : tensor<3x4xi4>
  func.return %0, %expected0 : tensor<3x4xi4>, tensor<3x4xi4>
}
