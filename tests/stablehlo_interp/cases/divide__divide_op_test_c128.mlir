// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/divide.mlir, func @divide_op_test_c128
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2xcomplex<f64>>, tensor<2xcomplex<f64>>) {
  %lhs = stablehlo.constant dense<[(1.5, 2.5), (7.5, 5.5)]> : tensor<2xcomplex<f64>>
  %rhs = stablehlo.constant dense<[(2.5, 1.5), (5.5, 7.5)]> : tensor<2xcomplex<f64>>
  %result = stablehlo.divide %lhs, %rhs : tensor<2xcomplex<f64>>
  %expected0 = stablehlo.constant dense<[(0.88235294117647056, 0.4705882352941177), (0.95375722543352603, -0.30057803468208094)]> : tensor<2xcomplex<f64>>
  func.return %result, %expected0 : tensor<2xcomplex<f64>>, tensor<2xcomplex<f64>>
}
