// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/minimum.mlir, func @min_op_test_c64
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) {
  %0 = stablehlo.constant dense<[(1.5, 2.5), (1.5, 7.5), (0.0, 1.5), (0.0, 1.5)]> : tensor<4xcomplex<f32>>
  %1 = stablehlo.constant dense<[(7.5, 1.5), (1.5, 2.5), (-0.0, 2.5), (0.0, 1.5)]> : tensor<4xcomplex<f32>>
  %2 = stablehlo.minimum %0, %1 : tensor<4xcomplex<f32>>
  %expected0 = stablehlo.constant dense<[(1.500000e+00, 2.500000e+00), (1.500000e+00, 2.500000e+00), (0.000000e+00, 1.500000e+00), (0.000000e+00, 1.500000e+00)]> : tensor<4xcomplex<f32>>
  func.return %2, %expected0 : tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>
}
