// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/and.mlir, func @and_op_test_ui64
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<3xui64>, tensor<3xui64>) {
  %0 = stablehlo.constant dense<[0, 9223372036854775807, 18446744073709551615]> : tensor<3xui64>
  %1 = stablehlo.constant dense<18446744073709551615> : tensor<3xui64>
  %2 = stablehlo.and %0, %1 : tensor<3xui64>
  %expected0 = stablehlo.constant dense<[0, 9223372036854775807, 18446744073709551615]> : tensor<3xui64>
  func.return %2, %expected0 : tensor<3xui64>, tensor<3xui64>
}
