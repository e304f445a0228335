// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/round_nearest_afz.mlir, func @round_nearest_afz_op_test_f64
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<5xf64>, tensor<5xf64>) {
  %operand = stablehlo.constant dense<[-2.5, 0.4, 0.5, 0.6, 2.5]> : tensor<5xf64>
  %result = stablehlo.round_nearest_afz %operand : tensor<5xf64>
  %expected0 = stablehlo.constant dense<[-3.0, 0.0, 1.0, 1.0, 3.0]> : tensor<5xf64>
  func.return %result, %expected0 : tensor<5xf64>, tensor<5xf64>
}
