// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/minimum.mlir, func @min_op_test_si4
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<5xi4>, tensor<5xi4>) {
  %0 = stablehlo.constant dense<[0, 1, 2, -3, 0]> : tensor<5xi4>
  %1 = stablehlo.constant dense<[-8, -1, 2, -3, 7]> : tensor<5xi4>
  %2 = stablehlo.minimum %0, %1 : tensor<5xi4>
  %expected0 = stablehlo.constant dense<[-8, -1, 2, -3, 0]> : tensor<5xi4>
  func.return %2, %expected0 : tensor<5xi4>, tensor<5xi4>
}
