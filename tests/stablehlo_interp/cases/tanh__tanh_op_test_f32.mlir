// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/tanh.mlir, func @tanh_op_test_f32
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<11xf32>, tensor<11xf32>) {
  %0 = stablehlo.constant dense<[0.0, -0.0, 1.0, 0.125, 0.1, 3.14159274, 0x7F800000, 0xFF800000, 0x7FFFFFFF, 0x00000001, 0x80000001]> : tensor<11xf32>
  %1 = stablehlo.tanh %0 : tensor<11xf32>
  %expected0 = stablehlo.constant dense<[0.000000e+00, -0.000000e+00, 0.761594176, 1.243530e-01, 0.0996679961, 0.996272087, 1.000000e+00, -1.000000e+00, 0x7FFFFFFF, 1.401300e-45, -1.401300e-45]> : tensor<11xf32>
  func.return %1, %expected0 : tensor<11xf32>, tensor<11xf32>
}
