// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/quantized_ops.mlir, func @uniform_qdq
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2xf32>, tensor<2xf32>) {
  %operand = stablehlo.constant dense<[4.0, 15.0]> : tensor<2xf32>
  %quantize = "stablehlo.uniform_quantize"(%operand) : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32:0, {0.1:-30,0.5:-20}>>
  %result = "stablehlo.uniform_dequantize"(%quantize) : (tensor<2x!quant.uniform<i8:f32:0, {0.1:-30,0.5:-20}>>) -> tensor<2xf32>
  %expected0 = stablehlo.constant dense<[4.0, 15.0]> : tensor<2xf32>
  func.return %result, %expected0 : tensor<2xf32>, tensor<2xf32>
}
