func.func @main(%p: tensor<2x2x!quant.uniform<i8:f32:1, {0.5:0, 0.25:-4}>>) -> (tensor<2x2xf32>, tensor<2x2xi8>, tensor<2x2xi1>) {
  %d = stablehlo.uniform_dequantize %p : (tensor<2x2x!quant.uniform<i8:f32:1, {0.5:0, 0.25:-4}>>) -> tensor<2x2xf32>
  %r = stablehlo.uniform_quantize %p : (tensor<2x2x!quant.uniform<i8:f32:1, {0.5:0, 0.25:-4}>>) -> tensor<2x2x!quant.uniform<i8<-127:127>:f32, 0.1:1>>
  %a = stablehlo.add %r, %r : (tensor<2x2x!quant.uniform<i8<-127:127>:f32, 0.1:1>>, tensor<2x2x!quant.uniform<i8<-127:127>:f32, 0.1:1>>) -> tensor<2x2x!quant.uniform<i8:f32, 0.2:0>>
  %c = stablehlo.compare GT, %r, %a : (tensor<2x2x!quant.uniform<i8<-127:127>:f32, 0.1:1>>, tensor<2x2x!quant.uniform<i8:f32, 0.2:0>>) -> tensor<2x2xi1>
  %b = stablehlo.bitcast_convert %a : (tensor<2x2x!quant.uniform<i8:f32, 0.2:0>>) -> tensor<2x2xi8>
  %m = "stablehlo.map"(%d, %d) ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %s = stablehlo.multiply %x, %y : tensor<f32>
      stablehlo.return %s : tensor<f32>
  }) {dimensions = array<i64: 0, 1>} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %m, %b, %c : tensor<2x2xf32>, tensor<2x2xi8>, tensor<2x2xi1>
}
