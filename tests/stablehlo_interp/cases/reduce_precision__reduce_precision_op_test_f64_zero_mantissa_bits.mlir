// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/reduce_precision.mlir, func @reduce_precision_op_test_f64_zero_mantissa_bits
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<f64>, tensor<f64>) {
  %operand = stablehlo.constant dense<0x7FFFFFFFFFFFFFFF> : tensor<f64>
  %output = stablehlo.reduce_precision %operand, format = e5m0 : tensor<f64>
  %expected0 = stablehlo.constant dense<0x7FF0000000000000> : tensor<f64>
  func.return %output, %expected0 : tensor<f64>, tensor<f64>
}
