// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/rsqrt.mlir, func @rsqrt_op_test_f64
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2x2xf64>, tensor<2x2xf64>) {
  %operand = stablehlo.constant dense<[[1.0, 4.0], [9.0, 25.0]]> : tensor<2x2xf64>
  %result = stablehlo.rsqrt %operand : tensor<2x2xf64>
  %expected0 = stablehlo.constant dense<[[1.000000e+00, 5.000000e-01], [0.33333333333333331, 2.000000e-01]]> : tensor<2x2xf64>
  func.return %result, %expected0 : tensor<2x2xf64>, tensor<2x2xf64>
}
