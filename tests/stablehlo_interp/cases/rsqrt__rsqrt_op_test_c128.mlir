// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/rsqrt.mlir, func @rsqrt_op_test_c128
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2xcomplex<f64>>, tensor<2xcomplex<f64>>) {
  %operand = stablehlo.constant dense<[(-1.0, 0.0), (3.0, 4.0)]> : tensor<2xcomplex<f64>>
  %result = stablehlo.rsqrt %operand : tensor<2xcomplex<f64>>
  %expected0 = stablehlo.constant dense<[(0.000000e+00, -1.000000e+00), (4.000000e-01, -2.000000e-01)]> : tensor<2xcomplex<f64>>
  func.return %result, %expected0 : tensor<2xcomplex<f64>>, tensor<2xcomplex<f64>>
}
