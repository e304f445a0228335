// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/add.mlir, func @add_op_test_c128
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2xcomplex<f64>>, tensor<2xcomplex<f64>>) {
  %0 = stablehlo.constant dense<[(1.5, 2.5), (7.5, 5.5)]> : tensor<2xcomplex<f64>>
  %1 = stablehlo.constant dense<[(1.5, 2.5), (7.5, 5.5)]> : tensor<2xcomplex<f64>>
  %2 = stablehlo.add %0, %1 : tensor<2xcomplex<f64>>
  %expected0 = stablehlo.constant dense<[(3.000000e+00, 5.000000e+00), (1.500000e+01, 1.100000e+01)]> : tensor<2xcomplex<f64>>
  func.return %2, %expected0 : tensor<2xcomplex<f64>>, tensor<2xcomplex<f64>>
}
