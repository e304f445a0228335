// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/select.mlir, func @select_op_test_si64
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<3xi64>, tensor<3xi64>) {
  %pred = stablehlo.constant dense<[true, false, true]> : tensor<3xi1>
  %on_true = stablehlo.constant dense<[2, 3, -1]> : tensor<3xi64>
  %on_false = stablehlo.constant dense<[3, 7, -3]> : tensor<3xi64>
  %result = stablehlo.select %pred, %on_true, %on_false : (tensor<3xi1>, tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %expected0 = stablehlo.constant dense<[2, 7, -1]> : tensor<3xi64>
  func.return %result, %expected0 : tensor<3xi64>, tensor<3xi64>
}
