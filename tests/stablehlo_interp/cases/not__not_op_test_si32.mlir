// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/not.mlir, func @not_op_test_si32
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<3xi32>, tensor<3xi32>) {
  %0 = stablehlo.constant dense<[2147483647, -2147483648, 0]> : tensor<3xi32>
  %1 = stablehlo.not %0 : tensor<3xi32>
  %expected0 = stablehlo.constant dense<[-2147483648, 2147483647, -1]> : tensor<3xi32>
  func.return %1, %expected0 : tensor<3xi32>, tensor<3xi32>
}
