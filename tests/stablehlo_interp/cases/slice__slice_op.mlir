// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/slice.mlir, func @slice_op
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2x2xi64>, tensor<2x2xi64>) {
  %operand = stablehlo.constant dense<[[0, 0, 1, 0, 0, 1],
                                       [0, 0, 0, 0, 0, 0],
                                       [0, 0, 1, 0, 0, 1]]> : tensor<3x6xi64>
  %result = "stablehlo.slice"(%operand) {
    start_indices = array<i64: 0, 2>,
    limit_indices = array<i64: 3, 6>,
    strides = array<i64: 2, 3>
  } : (tensor<3x6xi64>) -> tensor<2x2xi64>
  %expected0 = stablehlo.constant dense<[[1, 1], [1, 1]]> : tensor<2x2xi64>
  func.return %result, %expected0 : tensor<2x2xi64>, tensor<2x2xi64>
}
