// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/negate.mlir, func @negate_op_test_c128
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2xcomplex<f64>>, tensor<2xcomplex<f64>>) {
  %0 = stablehlo.constant dense<[(1.5, 2.5), (3.5, 4.5)]> : tensor<2xcomplex<f64>>
  %1 = stablehlo.negate %0 : tensor<2xcomplex<f64>>
  %expected0 = stablehlo.constant dense<[(-1.500000e+00, -2.500000e+00), (-3.500000e+00, -4.500000e+00)]> : tensor<2xcomplex<f64>>
  func.return %1, %expected0 : tensor<2xcomplex<f64>>, tensor<2xcomplex<f64>>
}
