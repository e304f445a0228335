func.func @main(%x: tensor<4xf8E4M3FN>, %w: tensor<4x2xf8E5M2>) -> (tensor<2xf32>, tensor<4xf8E4M3FN>, tensor<2xf8E8M0FNU>) {
  %c = stablehlo.constant dense<[1.5, 0x7F, -0.0, 448.0]> : tensor<4xf8E4M3FN>
  %0 = stablehlo.multiply %x, %c : tensor<4xf8E4M3FN>
  %1 = stablehlo.dot_general %x, %w, contracting_dims = [0] x [0] : (tensor<4xf8E4M3FN>, tensor<4x2xf8E5M2>) -> tensor<2xf32>
  %2 = stablehlo.convert %1 : (tensor<2xf32>) -> tensor<2xf8E8M0FNU>
  return %1, %0, %2 : tensor<2xf32>, tensor<4xf8E4M3FN>, tensor<2xf8E8M0FNU>
}
