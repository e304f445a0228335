// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/dot_general.mlir, func @dot_general_op_test_algorithm
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2x2x2xi64>, tensor<2x2x2xi64>) {
  %lhs = stablehlo.constant dense<[[[1, 2], [3, 4]],
                                   [[5, 6], [7, 8]]]> : tensor<2x2x2xi64>
  %rhs = stablehlo.constant dense<[[[1, 0], [0, 1]],
                                   [[1, 0], [0, 1]]]> : tensor<2x2x2xi64>
  %result = stablehlo.dot_general %lhs, %rhs,
    batching_dims = [0] x [0],
    contracting_dims = [2] x [1],
    precision = [DEFAULT, DEFAULT],
    algorithm = <
      lhs_precision_type = tf32,
      rhs_precision_type = tf32,
      accumulation_type = f32,
      lhs_component_count = 1,
      rhs_component_count = 1,
      num_primitive_operations = 1,
      allow_imprecise_accumulation = false
    > : (tensor<2x2x2xi64>, tensor<2x2x2xi64>) -> tensor<2x2x2xi64>
  %expected0 = stablehlo.constant dense<[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]> : tensor<2x2x2xi64>
  func.return %result, %expected0 : tensor<2x2x2xi64>, tensor<2x2x2xi64>
}
