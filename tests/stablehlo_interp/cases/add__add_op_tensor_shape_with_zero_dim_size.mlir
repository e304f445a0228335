// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/add.mlir, func @add_op_tensor_shape_with_zero_dim_size
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2x0x3xi4>, tensor<2x0x3xi4>) {
  %0 = stablehlo.constant dense<2> : tensor<2x0x3xi4>
  %1 = stablehlo.constant dense<3> : tensor<2x0x3xi4>
  %2 = stablehlo.add %0, %1 : tensor<2x0x3xi4>
  %expected0 = stablehlo.constant dense<> : tensor<2x0x3xi4>
  func.return %2, %expected0 : tensor<2x0x3xi4>, tensor<2x0x3xi4>
}
