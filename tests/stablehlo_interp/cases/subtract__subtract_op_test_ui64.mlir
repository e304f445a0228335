// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/subtract.mlir, func @subtract_op_test_ui64
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2xui64>, tensor<2xui64>) {
  %0 = stablehlo.constant dense<[0, 4294967296]> : tensor<2xui64>
  %1 = stablehlo.constant dense<[18446744073709551615, 4294967296]> : tensor<2xui64>
  %2 = stablehlo.subtract %0, %1 : tensor<2xui64>
  %expected0 = stablehlo.constant dense<[1, 0]> : tensor<2xui64>
  func.return %2, %expected0 : tensor<2xui64>, tensor<2xui64>
}
