// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/reshape.mlir, func @reshape_op_test_si32
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<6xi32>, tensor<6xi32>) {
  %0 = stablehlo.constant dense<[[1,2],[3,4],[5,6]]> : tensor<3x2xi32>
  %1 = stablehlo.reshape %0 : (tensor<3x2xi32>) -> tensor<6xi32>
  %expected0 = stablehlo.constant dense<[1, 2, 3, 4, 5, 6]> : tensor<6xi32>
  func.return %1, %expected0 : tensor<6xi32>, tensor<6xi32>
}
