// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/dot_general.mlir, func @dot_general_op_test_different_operand_and_result_element_types
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2x2x2xf64>, tensor<2x2x2xf64>) {
  %lhs = stablehlo.constant dense<[[[1.0, 2.0], [3.0, 4.0]],
                                  [[5.0, 6.0], [7.0, 8.0]]]> : tensor<2x2x2xf32>
  %rhs = stablehlo.constant dense<[[[1.0, 0.0], [0.0, 1.0]],
                                  [[1.0, 0.0], [0.0, 1.0]]]> : tensor<2x2x2xf32>
  %result = stablehlo.dot_general %lhs, %rhs,
      batching_dims = [0] x [0],
      contracting_dims = [2] x [1]
      : (tensor<2x2x2xf32>, tensor<2x2x2xf32>) -> tensor<2x2x2xf64>
  %expected0 = stablehlo.constant dense<[[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]]> : tensor<2x2x2xf64>
  func.return %result, %expected0 : tensor<2x2x2xf64>, tensor<2x2x2xf64>
}
