// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/exponential.mlir, func @exponential_op_test_f64
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2x2xf64>, tensor<2x2xf64>) {
  %operand = stablehlo.constant dense<[[0.0, 1.0], [2.0, 3.0]]> : tensor<2x2xf64>
  %result = stablehlo.exponential %operand : tensor<2x2xf64>
  %expected0 = stablehlo.constant dense<[[1.000000e+00, 2.7182818284590451], [7.3890560989306504, 20.085536923187668]]> : tensor<2x2xf64>
  func.return %result, %expected0 : tensor<2x2xf64>, tensor<2x2xf64>
}
