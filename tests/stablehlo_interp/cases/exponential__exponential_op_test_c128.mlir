// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/exponential.mlir, func @exponential_op_test_c128
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<complex<f64>>, tensor<complex<f64>>) {
  %operand = stablehlo.constant dense<(1.0, 2.0)> : tensor<complex<f64>>
  %result = stablehlo.exponential %operand : tensor<complex<f64>>
  %expected0 = stablehlo.constant dense<(-1.1312043837568135, 2.4717266720048188)> : tensor<complex<f64>>
  func.return %result, %expected0 : tensor<complex<f64>>, tensor<complex<f64>>
}
