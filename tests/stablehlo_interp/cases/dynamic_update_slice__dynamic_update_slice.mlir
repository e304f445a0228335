// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/dynamic_update_slice.mlir, func @dynamic_update_slice
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<4x4xi64>, tensor<4x4xi64>) {
  %operand = stablehlo.constant dense<[[1, 1, 1, 1],
                                       [1, 1, 1, 1],
                                       [1, 2, 2, 2],
                                       [1, 2, 2, 2]]> : tensor<4x4xi64>
  %update = stablehlo.constant dense<[[1, 1, 1],
                                      [1, 1, 1]]> : tensor<2x3xi64>
  %start_indices0 = stablehlo.constant dense<4> : tensor<i64>
  %start_indices1 = stablehlo.constant dense<4> : tensor<i64>
  %result = stablehlo.dynamic_update_slice %operand, %update, %start_indices0, %start_indices1 :
      (tensor<4x4xi64>, tensor<2x3xi64>, tensor<i64>, tensor<i64>) -> tensor<4x4xi64>
  %expected0 = stablehlo.constant dense<[[1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1]]> : tensor<4x4xi64>
  func.return %result, %expected0 : tensor<4x4xi64>, tensor<4x4xi64>
}
