// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/check.mlir, func @check_almost_eq_const
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<f64>, tensor<f64>) {
  %operand = stablehlo.constant dense<5.0000> : tensor<f64>
  %expected0 = stablehlo.constant dense<5.0001> : tensor<f64>
  func.return %operand, %expected0 : tensor<f64>, tensor<f64>
}
