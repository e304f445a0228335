// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/atan2.mlir, func @atan2_op_test_c128
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2xcomplex<f64>>, tensor<2xcomplex<f64>>) {
  %0 = stablehlo.constant dense<[(1.0, 0.0), (-1.0, 0.0)]> : tensor<2xcomplex<f64>>
  %1 = stablehlo.constant dense<[(0.0, 0.0), (0.0, 0.0)]> : tensor<2xcomplex<f64>>
  %2 = stablehlo.atan2 %0, %1 : tensor<2xcomplex<f64>>
  %expected0 = stablehlo.constant dense<[(1.5707963267948966, -0.0), (-1.5707963267948966, 0.0)]> : tensor<2xcomplex<f64>>
  func.return %2, %expected0 : tensor<2xcomplex<f64>>, tensor<2xcomplex<f64>>
}
