// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/transpose.mlir, func @transpose_op_test_si32
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<3x2x2xi32>, tensor<3x2x2xi32>) {
  %0 = stablehlo.constant dense<[[[1,2],[3,4],[5,6]], [[7,8],[9,10],[11,12]]]> : tensor<2x3x2xi32>
  %1 = "stablehlo.transpose"(%0) {permutation = array<i64: 1,0,2>} : (tensor<2x3x2xi32>) -> tensor<3x2x2xi32>
  %expected0 = stablehlo.constant dense<[[[1, 2], [7, 8]], [[3, 4], [9, 10]], [[5, 6], [11, 12]]]> : tensor<3x2x2xi32>
  func.return %1, %expected0 : tensor<3x2x2xi32>, tensor<3x2x2xi32>
}
