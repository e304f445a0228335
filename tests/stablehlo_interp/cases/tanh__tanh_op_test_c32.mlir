// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/tanh.mlir, func @tanh_op_test_c32
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>) {
  %0 = stablehlo.constant dense<[(1.5, 2.5), (3.5, 4.5)]> : tensor<2xcomplex<f32>>
  %1 = stablehlo.tanh %0 : tensor<2xcomplex<f32>>
  %expected0 = stablehlo.constant dense<[(0.967786788, -0.0926378369), (1.00166273, 7.52857188E-4)]> : tensor<2xcomplex<f32>>
  func.return %1, %expected0 : tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>
}
