// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/minimum.mlir, func @min_op_test_f16
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<11xf16>, tensor<11xf16>) {
  %0 = stablehlo.constant dense<[0xFC00, 0xFC00, -1.0, 0x8001, 0.0, 0.0, 0x0001, 1.0, 0x7C00, 0x7C00, 0x7E00]>  : tensor<11xf16>
  %1 = stablehlo.constant dense<[0xFC00, -1.0, 0x8001, -0.0, -0.0, 0x0001, 1.0, 0x7C00, 0x7C00, 0xFC00, 0x7C00]> : tensor<11xf16>
  %2 = stablehlo.minimum %0, %1 : tensor<11xf16>
  %expected0 = stablehlo.constant dense<[0xFC00, 0xFC00, -1.000000e+00, -5.960460e-08, -0.000000e+00, 0.000000e+00, 5.960460e-08, 1.000000e+00, 0x7C00, 0xFC00, 0x7E00]> : tensor<11xf16>
  func.return %2, %expected0 : tensor<11xf16>, tensor<11xf16>
}
