// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/cbrt.mlir, func @cbrt_op_test_f64
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<4xf64>, tensor<4xf64>) {
  %operand = stablehlo.constant dense<[0.0, 1.0, 8.0, 27.0]> : tensor<4xf64>
  %result = stablehlo.cbrt %operand : tensor<4xf64>
  %expected0 = stablehlo.constant dense<[0.0, 1.0, 2.0, 3.0]> : tensor<4xf64>
  func.return %result, %expected0 : tensor<4xf64>, tensor<4xf64>
}
