// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/reduce_precision.mlir, func @reduce_precision_op_test_f64
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<6xf64>, tensor<6xf64>) {
  %operand = stablehlo.constant dense<[0x7FF0000000000000, 0x7FFFFFFFFFFFFFFF, 0x0000000000000001, 0.0, 65505.0, 65520.0]> : tensor<6xf64>
  %output = stablehlo.reduce_precision %operand, format = e5m10 : tensor<6xf64>
  %expected0 = stablehlo.constant dense<[0x7FF0000000000000, 0x7FFFFFFFFFFFFFFF, 0.0, 0.0, 65504.0, 0x7FF0000000000000]> : tensor<6xf64>
  func.return %output, %expected0 : tensor<6xf64>, tensor<6xf64>
}
