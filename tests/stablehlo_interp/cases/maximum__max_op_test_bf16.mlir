// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/maximum.mlir, func @max_op_test_bf16
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<11xbf16>, tensor<11xbf16>) {
  %0 = stablehlo.constant dense<[0xFF80, 0xFF80, -1.0, 0x8001, 0.0, 0.0, 0x0001, 1.0, 0x7F80, 0x7F80, 0x7FC0]>  : tensor<11xbf16>
  %1 = stablehlo.constant dense<[0xFF80, -1.0, 0x8001, -0.0, -0.0, 0x0001, 1.0, 0x7F80, 0x7F80, 0xFF80, 0x7F80]> : tensor<11xbf16>
  %2 = stablehlo.maximum %0, %1 : tensor<11xbf16>
  %expected0 = stablehlo.constant dense<[0xFF80, -1.000000e+00, -9.183550e-41, -0.000000e+00, 0.000000e+00, 9.183550e-41, 1.000000e+00, 0x7F80, 0x7F80, 0x7F80, 0x7FC0]> : tensor<11xbf16>
  func.return %2, %expected0 : tensor<11xbf16>, tensor<11xbf16>
}
