// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/log_plus_one.mlir, func @log_plus_one_op_test_c128
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<3xcomplex<f64>>, tensor<3xcomplex<f64>>) {
  %operand = stablehlo.constant dense<[(1.0, 2.0), (2.0, 1.0), (0.0, 0.0)]> : tensor<3xcomplex<f64>>
  %result = stablehlo.log_plus_one %operand : tensor<3xcomplex<f64>>
  %expected0 = stablehlo.constant dense<[ (1.03972077083991, 0.78539816339744), (1.15129254649702, 0.32175055439664), (0.0, 0.0) ]> : tensor<3xcomplex<f64>>
  func.return %result, %expected0 : tensor<3xcomplex<f64>>, tensor<3xcomplex<f64>>
}
