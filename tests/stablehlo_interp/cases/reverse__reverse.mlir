// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/reverse.mlir, func @reverse
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<3x2xi64>, tensor<3x2xi64>) {
  %operand = stablehlo.constant dense<[[1, 2], [3, 4], [5, 6]]> : tensor<3x2xi64>
  %result = "stablehlo.reverse"(%operand) {
    dimensions = array<i64: 1, 0>
  } : (tensor<3x2xi64>) -> tensor<3x2xi64>
  %expected0 = stablehlo.constant dense<[[6, 5], [4, 3], [2, 1]]> : tensor<3x2xi64>
  func.return %result, %expected0 : tensor<3x2xi64>, tensor<3x2xi64>
}
