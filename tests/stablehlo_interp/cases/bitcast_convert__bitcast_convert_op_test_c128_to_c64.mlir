// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/bitcast_convert.mlir, func @bitcast_convert_op_test_c128_to_c64
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>) {
  %operand = stablehlo.constant dense<(0x0123456789ABCDEF, 0x0000000011111111)> : tensor<complex<f64>>
  %result = stablehlo.bitcast_convert %operand : (tensor<complex<f64>>) -> tensor<2xcomplex<f32>>
  %expected0 = stablehlo.constant dense<[(0x89ABCDEF, 0x01234567), (0x11111111, 0x00000000)]> : tensor<2xcomplex<f32>>
  func.return %result, %expected0 : tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>
}
