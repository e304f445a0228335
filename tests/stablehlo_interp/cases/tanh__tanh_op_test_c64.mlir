// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/tanh.mlir, func @tanh_op_test_c64
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2xcomplex<f64>>, tensor<2xcomplex<f64>>) {
  %0 = stablehlo.constant dense<[(1.5, 2.5), (3.5, 4.5)]> : tensor<2xcomplex<f64>>
  %1 = stablehlo.tanh %0 : tensor<2xcomplex<f64>>
  %expected0 = stablehlo.constant dense<[(0.96778680215277412, -0.092637836268419898), (1.0016627850956348, 7.5285721538218659E-4)]> : tensor<2xcomplex<f64>>
  func.return %1, %expected0 : tensor<2xcomplex<f64>>, tensor<2xcomplex<f64>>
}
