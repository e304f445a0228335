// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/fft.mlir, func @fft_op_test_irfft_3d_c128
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2x2x4xf64>, tensor<2x2x4xf64>) {
  %operand = stablehlo.constant dense<
    [
      [
        [(136.0, 0.0), (-8.0, 8.0), (-8.0, 0.0)],
        [(-32.0, 0.0), (0.0, 0.0), (0.0, 0.0)]
      ],[
        [(-64.0, 0.0), (0.0, 0.0), (0.0, 0.0)],
        [(0.0, 0.0), (0.0, 0.0), (0.0, 0.0)]
      ]
    ]
  > : tensor<2x2x3xcomplex<f64>>
  %result = stablehlo.fft %operand, type = IRFFT, length = [2, 2, 4] : (tensor<2x2x3xcomplex<f64>>) -> tensor<2x2x4xf64>
  %expected0 = stablehlo.constant dense< [ [ [1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0] ],[ [9.0, 10.0, 11.0, 12.0], [13.0, 14.0, 15.0, 16.0] ] ] > : tensor<2x2x4xf64>
  func.return %result, %expected0 : tensor<2x2x4xf64>, tensor<2x2x4xf64>
}
