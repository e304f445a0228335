// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/divide.mlir, func @divide_op_test_si64
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<4xi64>, tensor<4xi64>) {
  %lhs = stablehlo.constant dense<[17, -17, 17, -17]> : tensor<4xi64>
  %rhs = stablehlo.constant dense<[3, 3, -3, -3]> : tensor<4xi64>
  %result = stablehlo.divide %lhs, %rhs : tensor<4xi64>
  %expected0 = stablehlo.constant dense<[5, -5, -5, 5]> : tensor<4xi64>
  func.return %result, %expected0 : tensor<4xi64>, tensor<4xi64>
}
