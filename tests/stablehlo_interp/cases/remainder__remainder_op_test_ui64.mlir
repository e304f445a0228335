// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/remainder.mlir, func @remainder_op_test_ui64
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<4xui64>, tensor<4xui64>) {
  %lhs = stablehlo.constant dense<[17, 18, 19, 20]> : tensor<4xui64>
  %rhs = stablehlo.constant dense<[3, 4, 5, 7]> : tensor<4xui64>
  %result = stablehlo.remainder %lhs, %rhs : tensor<4xui64>
  %expected0 = stablehlo.constant dense<[2, 2, 4, 6]> : tensor<4xui64>
  func.return %result, %expected0 : tensor<4xui64>, tensor<4xui64>
}
