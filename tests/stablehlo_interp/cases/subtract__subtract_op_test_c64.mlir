// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/subtract.mlir, func @subtract_op_test_c64
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>) {
  %0 = stablehlo.constant dense<[(1.5, 2.5), (7.5, 5.5)]> : tensor<2xcomplex<f32>>
  %1 = stablehlo.constant dense<[(1.5, 2.5), (7.5, 5.5)]> : tensor<2xcomplex<f32>>
  %2 = stablehlo.subtract %0, %1 : tensor<2xcomplex<f32>>
  %expected0 = stablehlo.constant dense<[(0.000000e+00, 0.000000e+00), (0.000000e+00, 0.000000e+00)]> : tensor<2xcomplex<f32>>
  func.return %2, %expected0 : tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>
}
