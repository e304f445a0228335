// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/power.mlir, func @power_op_test_ui64
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<5xui64>, tensor<5xui64>) {
  %lhs = stablehlo.constant dense<[0, 0, 1, 1, 5]> : tensor<5xui64>
  %rhs = stablehlo.constant dense<[0, 1, 0, 2, 5]> : tensor<5xui64>
  %result = stablehlo.power %lhs, %rhs : tensor<5xui64>
  %expected0 = stablehlo.constant dense<[1, 0, 1, 1, 3125]> : tensor<5xui64>
  func.return %result, %expected0 : tensor<5xui64>, tensor<5xui64>
}
