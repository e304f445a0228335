// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/not.mlir, func @not_op_test_i1_splat_false
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<i1>, tensor<i1>) {
  %0 = stablehlo.constant dense<false> : tensor<i1>
  %1 = stablehlo.not %0 : tensor<i1>
  %expected0 = stablehlo.constant dense<true> : tensor<i1>
  func.return %1, %expected0 : tensor<i1>, tensor<i1>
}
