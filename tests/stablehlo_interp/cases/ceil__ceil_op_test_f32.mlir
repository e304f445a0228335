// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/ceil.mlir, func @ceil_op_test_f32
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<9xf32>, tensor<9xf32>) {
  %0 = stablehlo.constant dense<[0xFF800000, -2.5, 0x80000001, -0.0, 0.0, 0x00000001, 2.5, 0x7F800000, 0x7FC00000]> : tensor<9xf32>
  %1 = stablehlo.ceil %0 : tensor<9xf32>
  %expected0 = stablehlo.constant dense<[0xFF800000, -2.000000e+00, -0.000000e+00, -0.000000e+00, 0.000000e+00, 1.000000e+00, 3.000000e+00, 0x7F800000, 0x7FC00000]> : tensor<9xf32>
  func.return %1, %expected0 : tensor<9xf32>, tensor<9xf32>
}
