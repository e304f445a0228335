func.func @main(%x: tensor<4xi4>, %f: tensor<4xf32>) -> (tensor<4xi4>, tensor<4xui4>, tensor<4xui2>, tensor<4xi4>) {
  %c = stablehlo.constant dense<[15, -8, 8, 1]> : tensor<4xi4>
  %0 = stablehlo.add %x, %c : tensor<4xi4>
  %1 = stablehlo.shift_right_logical %0, %c : tensor<4xi4>
  %2 = stablehlo.bitcast_convert %1 : (tensor<4xi4>) -> tensor<4xui4>
  %3 = stablehlo.convert %f : (tensor<4xf32>) -> tensor<4xui2>
  %4 = stablehlo.count_leading_zeros %x : tensor<4xi4>
  return %0, %2, %3, %4 : tensor<4xi4>, tensor<4xui4>, tensor<4xui2>, tensor<4xi4>
}
