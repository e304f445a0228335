// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/check.mlir, func @check_eq
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<3xi64>, tensor<3xi64>) {
  %operand = stablehlo.constant dense<[-2, 0, 2]> : tensor<3xi64>
  %result = stablehlo.constant dense<[-2, 0, 2]> : tensor<3xi64>
  func.return %operand, %result : tensor<3xi64>, tensor<3xi64>
}
