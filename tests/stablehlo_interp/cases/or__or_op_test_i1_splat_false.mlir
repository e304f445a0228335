// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/or.mlir, func @or_op_test_i1_splat_false
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2xi1>, tensor<2xi1>) {
  %0 = stablehlo.constant dense<false> : tensor<2xi1>
  %1 = stablehlo.constant dense<[false, true]> : tensor<2xi1>
  %2 = stablehlo.or %0, %1 : tensor<2xi1>
  %expected0 = stablehlo.constant dense<[false, true]> : tensor<2xi1>
  func.return %2, %expected0 : tensor<2xi1>, tensor<2xi1>
}
