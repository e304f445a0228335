// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/sqrt.mlir, func @square_root_op_test_f64
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2x2xf64>, tensor<2x2xf64>) {
  %operand = stablehlo.constant dense<[[0.0, 1.0], [4.0, 9.0]]> : tensor<2x2xf64>
  %result = stablehlo.sqrt %operand : tensor<2x2xf64>
  %expected0 = stablehlo.constant dense<[[0.000000e+00, 1.000000e+00], [2.000000e+00, 3.000000e+00]]> : tensor<2x2xf64>
  func.return %result, %expected0 : tensor<2x2xf64>, tensor<2x2xf64>
}
