// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/power.mlir, func @power_op_test_c128
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2xcomplex<f64>>, tensor<2xcomplex<f64>>) {
  %lhs = stablehlo.constant dense<[(1.5, 2.5), (7.5, 5.5)]> : tensor<2xcomplex<f64>>
  %rhs = stablehlo.constant dense<[(2.5, 1.5), (5.5, 7.5)]> : tensor<2xcomplex<f64>>
  %result = stablehlo.power %lhs, %rhs : tensor<2xcomplex<f64>>
  %expected0 = stablehlo.constant dense<[(-1.5679313814305016, -2.6674775446623613), (392.89270835580857, 1801.8249193362644)]> : tensor<2xcomplex<f64>>
  func.return %result, %expected0 : tensor<2xcomplex<f64>>, tensor<2xcomplex<f64>>
}
