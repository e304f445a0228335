// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/broadcast_in_dim.mlir, func @broadcast_in_dim
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<3x2x2xi64>, tensor<3x2x2xi64>) {
  %operand = stablehlo.constant dense<[[1], [2], [3]]> : tensor<3x1xi64>
  %result = "stablehlo.broadcast_in_dim"(%operand) {
    broadcast_dimensions = array<i64: 0, 2>
  } : (tensor<3x1xi64>) -> tensor<3x2x2xi64>
  %expected0 = stablehlo.constant dense<[[[1, 1], [1, 1]], [[2, 2], [2, 2]], [[3, 3], [3, 3]]]> : tensor<3x2x2xi64>
  func.return %result, %expected0 : tensor<3x2x2xi64>, tensor<3x2x2xi64>
}
