// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/bitcast_convert.mlir, func @bitcast_convert_op_test_i64_to_f64
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<f64>, tensor<f64>) {
  %operand = stablehlo.constant dense<0x0123456789ABCDEF> : tensor<i64>
  %result = stablehlo.bitcast_convert %operand : (tensor<i64>) -> tensor<f64>
  %expected0 = stablehlo.constant dense<0x0123456789ABCDEF> : tensor<f64>
  func.return %result, %expected0 : tensor<f64>, tensor<f64>
}
