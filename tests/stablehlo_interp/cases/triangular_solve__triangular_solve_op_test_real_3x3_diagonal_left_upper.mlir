// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/triangular_solve.mlir, func @triangular_solve_op_test_real_3x3_diagonal_left_upper
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<3x1xf32>, tensor<3x1xf32>) {
  %a = stablehlo.constant dense<[[2.0, 0.0, 0.0], [0.0, 4.0, 0.0], [0.0, 0.0, 5.0]]> : tensor<3x3xf32>
  %b = stablehlo.constant dense<[[7.0], [8.0], [9.0]]> : tensor<3x1xf32>
  %result = "stablehlo.triangular_solve"(%a, %b) {left_side = true, lower = false, unit_diagonal = false, transpose_a = #stablehlo<transpose NO_TRANSPOSE>} : (tensor<3x3xf32>, tensor<3x1xf32>) -> tensor<3x1xf32>
  %expected0 = stablehlo.constant dense<[[3.5], [2.0], [1.8]]> : tensor<3x1xf32>
  func.return %result, %expected0 : tensor<3x1xf32>, tensor<3x1xf32>
}
