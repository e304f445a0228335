// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/and.mlir, func @and_op_test_si64
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<3xi64>, tensor<3xi64>) {
  %0 = stablehlo.constant dense<[9223372036854775807, -9223372036854775808, -9223372036854775808]> : tensor<3xi64>
  %1 = stablehlo.constant dense<[0, 9223372036854775807, -9223372036854775808]> : tensor<3xi64>
  %2 = stablehlo.and %0, %1 : tensor<3xi64>
  %expected0 = stablehlo.constant dense<[0, 0, -9223372036854775808]> : tensor<3xi64>
  func.return %2, %expected0 : tensor<3xi64>, tensor<3xi64>
}
