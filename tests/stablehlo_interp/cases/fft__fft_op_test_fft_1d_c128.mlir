// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/fft.mlir, func @fft_op_test_fft_1d_c128
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2xcomplex<f64>>, tensor<2xcomplex<f64>>) {
  %operand = stablehlo.constant dense<[(1.0, 2.0), (3.0, -4.0)]> : tensor<2xcomplex<f64>>
  %result = stablehlo.fft %operand, type = FFT, length = [2] : (tensor<2xcomplex<f64>>) -> tensor<2xcomplex<f64>>
  %expected0 = stablehlo.constant dense<[(4.0, -2.0), (-2.0, 6.0)]> : tensor<2xcomplex<f64>>
  func.return %result, %expected0 : tensor<2xcomplex<f64>>, tensor<2xcomplex<f64>>
}
