// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/triangular_solve.mlir, func @triangular_solve_op_test_complex_example_adjoint
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<3x1xcomplex<f32>>, tensor<3x1xcomplex<f32>>) {
  %a = stablehlo.constant dense<[[(1.0, 1.0), (0.0, 0.0), (0.0, 0.0)], [(2.0, -2.0), (3.0, 4.0), (0.0, 0.0)], [(4.0, -3.0), (5.0, 5.0), (6.0, -8.0)]]> : tensor<3x3xcomplex<f32>>
  %b = stablehlo.constant dense<[[(7.0, -2.0)], [(8.0, 4.0)], [(9.0, -5.0)]]> : tensor<3x1xcomplex<f32>>
  %result = "stablehlo.triangular_solve"(%a, %b) {left_side = true, lower = true, unit_diagonal = false, transpose_a = #stablehlo<transpose ADJOINT>} : (tensor<3x3xcomplex<f32>>, tensor<3x1xcomplex<f32>>) -> tensor<3x1xcomplex<f32>>
  %expected0 = stablehlo.constant dense<[[(7.18, 2.679999)], [(-0.08, 3.16)], [(0.14, -1.02)]]> : tensor<3x1xcomplex<f32>>
  func.return %result, %expected0 : tensor<3x1xcomplex<f32>>, tensor<3x1xcomplex<f32>>
}
