// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/dynamic_reshape.mlir, func @dynamic_reshape_op_test_si64
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<6xi64>, tensor<6xi64>) {
  %operand = stablehlo.constant dense<[[1, 2, 3, 4, 5, 6]]> : tensor<1x6xi64>
  %output_shape = stablehlo.constant dense<[6]> : tensor<1xi64>
  %result = stablehlo.dynamic_reshape %operand, %output_shape : (tensor<1x6xi64>, tensor<1xi64>) -> tensor<6xi64>
  %expected0 = stablehlo.constant dense<[1, 2, 3, 4, 5, 6]> : tensor<6xi64>
  func.return %result, %expected0 : tensor<6xi64>, tensor<6xi64>
}
