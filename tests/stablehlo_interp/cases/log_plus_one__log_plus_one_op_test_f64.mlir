// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/log_plus_one.mlir, func @log_plus_one_op_test_f64
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<5xf64>, tensor<5xf64>) {
  %operand = stablehlo.constant dense<[0.0, -0.999, 7.0, 6.38905621, 15.0]> : tensor<5xf64>
  %result = stablehlo.log_plus_one %operand : tensor<5xf64>
  %expected0 = stablehlo.constant dense<[0.0, -6.90776825, 2.07944155, 2.0, 2.77258873]> : tensor<5xf64>
  func.return %result, %expected0 : tensor<5xf64>, tensor<5xf64>
}
