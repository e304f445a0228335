// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/bitcast_convert.mlir, func @bitcast_convert_op_test_f64_to_i1
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<64xi1>, tensor<64xi1>) {
  %operand = stablehlo.constant dense<0x0123456789ABCDEF> : tensor<f64>
  %result = stablehlo.bitcast_convert %operand : (tensor<f64>) -> tensor<64xi1>
  %expected0 = stablehlo.constant dense<[true, true, true, true, false, true, true, true, true, false, true, true, false, false, true, true, true, true, false, true, false, true, false, true, true, false, false, true, false, false, false, true, true, true, true, false, false, true, true, false, true, false, true, false, false, false, true, false, true, true, false, false, false, true, false, false, true, false, false, false, false, false, false, false]> : tensor<64xi1>
  func.return %result, %expected0 : tensor<64xi1>, tensor<64xi1>
}
