// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/fft.mlir, func @fft_op_test_rfft_2d_f64
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<4x3xcomplex<f64>>, tensor<4x3xcomplex<f64>>) {
  %operand = stablehlo.constant dense<
    [
      [1.0, 2.0, 3.0, 4.0],
      [5.0, 6.0, 7.0, 8.0],
      [9.0, 10.0, 11.0, 12.0],
      [13.0, 14.0, 15.0, 16.0]
    ]
  > : tensor<4x4xf64>
  %result = stablehlo.fft %operand, type = RFFT, length = [4, 4] : (tensor<4x4xf64>) -> tensor<4x3xcomplex<f64>>
  %expected0 = stablehlo.constant dense< [ [(136.0, 0.0), (-8.0, 8.0), (-8.0, 0.0)], [(-32.0, 32.0), (0.0, 0.0), (0.0, 0.0)], [(-32.0, 0.0), (0.0, 0.0), (0.0, 0.0)], [(-32.0, -32.0), (0.0, 0.0), (0.0, 0.0)] ] > : tensor<4x3xcomplex<f64>>
  func.return %result, %expected0 : tensor<4x3xcomplex<f64>>, tensor<4x3xcomplex<f64>>
}
