// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/floor.mlir, func @floor_op_test_f16
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<9xf16>, tensor<9xf16>) {
  %0 = stablehlo.constant dense<[0xFC00, -2.5, 0x8001, -0.0, 0.0, 0x0001, 2.5, 0x7C00, 0x7E00]>  : tensor<9xf16>
  %1 = stablehlo.floor %0 : tensor<9xf16>
  %expected0 = stablehlo.constant dense<[0xFC00, -3.000000e+00, -1.000000e+00, -0.000000e+00, 0.000000e+00, 0.000000e+00, 2.000000e+00, 0x7C00, 0x7E00]> : tensor<9xf16>
  func.return %1, %expected0 : tensor<9xf16>, tensor<9xf16>
}
