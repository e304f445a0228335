// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/iota.mlir, func @iota_op_test_ui64_dim_2
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2x3x2xui64>, tensor<2x3x2xui64>) {
  %0 = stablehlo.iota dim = 2 : tensor<2x3x2xui64>
  %expected0 = stablehlo.constant dense<[[[0, 1], [0, 1], [0, 1]], [[0, 1], [0, 1], [0, 1]]]> : tensor<2x3x2xui64>
  func.return %0, %expected0 : tensor<2x3x2xui64>, tensor<2x3x2xui64>
}
