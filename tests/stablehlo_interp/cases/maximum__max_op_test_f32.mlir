// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/maximum.mlir, func @max_op_test_f32
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<11xf32>, tensor<11xf32>) {
  %0 = stablehlo.constant dense<[0xFF800000, 0xFF800000, -1.0, 0x80000001, 0.0, 0.0, 0x00000001, 1.0, 0x7F800000, 0x7F800000, 0x7FC00000]>  : tensor<11xf32>
  %1 = stablehlo.constant dense<[0xFF800000, -1.0, 0x80000001, -0.0, -0.0, 0x00000001, 1.0, 0x7F800000, 0x7F800000, 0xFF800000, 0x7F800000]> : tensor<11xf32>
  %2 = stablehlo.maximum %0, %1 : tensor<11xf32>
  %expected0 = stablehlo.constant dense<[0xFF800000, -1.000000e+00, -1.401300e-45, -0.000000e+00, 0.000000e+00, 1.401300e-45, 1.000000e+00, 0x7F800000, 0x7F800000, 0x7F800000, 0x7FC00000]> : tensor<11xf32>
  func.return %2, %expected0 : tensor<11xf32>, tensor<11xf32>
}
