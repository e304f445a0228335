// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/fft.mlir, func @fft_op_test_ifft_2d_c128
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2x2xcomplex<f64>>, tensor<2x2xcomplex<f64>>) {
  %operand = stablehlo.constant dense<
    [
      [(-8.0, -4.0), (16.0, 0.0)],
      [(0.0, 20.0), (-4.0, -8.0)]
    ]
  > : tensor<2x2xcomplex<f64>>
  %result = stablehlo.fft %operand, type = IFFT, length = [2, 2] : (tensor<2x2xcomplex<f64>>) -> tensor<2x2xcomplex<f64>>
  %expected0 = stablehlo.constant dense< [ [(1.0, 2.0), (-5.0, 6.0)], [(3.0, -4.0), (-7.0, -8.0)] ] > : tensor<2x2xcomplex<f64>>
  func.return %result, %expected0 : tensor<2x2xcomplex<f64>>, tensor<2x2xcomplex<f64>>
}
