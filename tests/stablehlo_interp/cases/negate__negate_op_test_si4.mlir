// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/negate.mlir, func @negate_op_test_si4
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<5xi4>, tensor<5xi4>) {
  %0 = stablehlo.constant dense<[-8, -1, 0, 1, 7]> : tensor<5xi4>
  %1 = stablehlo.negate %0 : tensor<5xi4>
  %expected0 = stablehlo.constant dense<[-8, 1, 0, -1, -7]> : tensor<5xi4>
  func.return %1, %expected0 : tensor<5xi4>, tensor<5xi4>
}
