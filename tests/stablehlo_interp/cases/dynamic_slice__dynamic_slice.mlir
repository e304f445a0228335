// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/dynamic_slice.mlir, func @dynamic_slice
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<3x3xi64>, tensor<3x3xi64>) {
  %operand = stablehlo.constant dense<[[1, 1, 1],
                                       [1, 1, 1],
                                       [1, 1, 1]]> : tensor<3x3xi64>
  %start_indices0 = stablehlo.constant dense<3> : tensor<i64>
  %start_indices1 = stablehlo.constant dense<3> : tensor<i64>
  %result = "stablehlo.dynamic_slice"(%operand, %start_indices0, %start_indices1) {
    slice_sizes = array<i64: 3, 3>
  } : (tensor<3x3xi64>, tensor<i64>, tensor<i64>) -> tensor<3x3xi64>
  %expected0 = stablehlo.constant dense<[[1, 1, 1], [1, 1, 1], [1, 1, 1]]> : tensor<3x3xi64>
  func.return %result, %expected0 : tensor<3x3xi64>, tensor<3x3xi64>
}
