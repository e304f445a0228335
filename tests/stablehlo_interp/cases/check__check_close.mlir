// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/check.mlir, func @check_close
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<f16>, tensor<f16>) {
  %operand = stablehlo.constant dense<5.0000> : tensor<f16>
  %result = stablehlo.constant dense<5.010> : tensor<f16>
  func.return %operand, %result : tensor<f16>, tensor<f16>
}
