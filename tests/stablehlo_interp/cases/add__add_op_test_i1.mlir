// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/add.mlir, func @add_op_test_i1
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<4xi1>, tensor<4xi1>) {
  %0 = stablehlo.constant dense<[false, false, true, true]> : tensor<4xi1>
  %1 = stablehlo.constant dense<[false, true, false, true]> : tensor<4xi1>
  %2 = stablehlo.add %0, %1 : tensor<4xi1>
  %expected0 = stablehlo.constant dense<[false, true, true, true]> : tensor<4xi1>
  func.return %2, %expected0 : tensor<4xi1>, tensor<4xi1>
}
