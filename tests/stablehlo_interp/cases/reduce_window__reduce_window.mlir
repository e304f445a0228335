// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/reduce_window.mlir, func @reduce_window
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2x2xi64>, tensor<2x2xi64>) {
  %input = stablehlo.constant dense<[[1, 2], [3, 4], [5, 6]]> : tensor<3x2xi64>
  %init_value = stablehlo.constant dense<0> : tensor<i64>
  %result = "stablehlo.reduce_window"(%input, %init_value) ({
    ^bb0(%arg0: tensor<i64>, %arg1: tensor<i64>):
      %0 = stablehlo.add %arg0, %arg1 : tensor<i64>
      stablehlo.return %0 : tensor<i64>
  }) {
    base_dilations = array<i64: 2, 1>,
    padding = dense<[[2, 1], [0, 0]]> : tensor<2x2xi64>,
    window_dilations = array<i64: 3, 1>,
    window_dimensions = array<i64: 2, 1>,
    window_strides = array<i64: 4, 1>
  } : (tensor<3x2xi64>, tensor<i64>) -> tensor<2x2xi64>
  %expected0 = stablehlo.constant dense<[[0, 0], [3, 4]]> : tensor<2x2xi64>
  func.return %result, %expected0 : tensor<2x2xi64>, tensor<2x2xi64>
}
