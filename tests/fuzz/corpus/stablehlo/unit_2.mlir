func.func @main() -> (tensor<3xf32>, tensor<2xf16>, tensor<2xbf16>, tensor<2xi1>, tensor<2xcomplex<f32>>, tensor<2xi8>, tensor<2xui32>, tensor<4xf32>, tensor<0xf32>, tensor<2xf64>) {
  %0 = stablehlo.constant dense<[1.5, 0x7FC00000, 0xFF800000]> : tensor<3xf32>
  %1 = stablehlo.constant dense<[1.000000e+00, -2.500000e-01]> : tensor<2xf16>
  %2 = stablehlo.constant dense<3.0> : tensor<2xbf16>
  %3 = stablehlo.constant dense<[true, false]> : tensor<2xi1>
  %4 = stablehlo.constant dense<[(1.0,2.0), (-3.0,0.5)]> : tensor<2xcomplex<f32>>
  %5 = stablehlo.constant dense<[-128, 127]> : tensor<2xi8>
  %6 = stablehlo.constant dense<4294967295> : tensor<2xui32>
  %7 = stablehlo.constant dense<"0x0000803F000000400000404000008040"> : tensor<4xf32>
  %8 = stablehlo.constant dense<> : tensor<0xf32>
  %9 = stablehlo.constant dense<"0x000000000000F03F"> : tensor<2xf64>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : tensor<3xf32>, tensor<2xf16>, tensor<2xbf16>, tensor<2xi1>, tensor<2xcomplex<f32>>, tensor<2xi8>, tensor<2xui32>, tensor<4xf32>, tensor<0xf32>, tensor<2xf64>
}
