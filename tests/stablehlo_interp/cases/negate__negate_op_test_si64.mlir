// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/negate.mlir, func @negate_op_test_si64
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<5xi64>, tensor<5xi64>) {
  %0 = stablehlo.constant dense<[-9223372036854775808, -2147483649, 0, 2147483648, 9223372036854775807]> : tensor<5xi64>
  %1 = stablehlo.negate %0 : tensor<5xi64>
  %expected0 = stablehlo.constant dense<[-9223372036854775808, 2147483649, 0, -2147483648, -9223372036854775807]> : tensor<5xi64>
  func.return %1, %expected0 : tensor<5xi64>, tensor<5xi64>
}
