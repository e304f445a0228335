module {
  func.func @main(%x: tensor<5xf32>) -> (tensor<2xf32>, tensor<2xi32>, tensor<5xf32>) {
    %values, %indices = chlo.top_k(%x, k = 2) : tensor<5xf32> -> (tensor<2xf32>, tensor<2xi32>)
    %e = stablehlo.composite "my.erf" %x {decomposition = @my_erf} : (tensor<5xf32>) -> tensor<5xf32>
    return %values, %indices, %e : tensor<2xf32>, tensor<2xi32>, tensor<5xf32>
  }
  func.func private @my_erf(%a: tensor<5xf32>) -> tensor<5xf32> {
    %0 = chlo.erf %a : tensor<5xf32> -> tensor<5xf32>
    return %0 : tensor<5xf32>
  }
}
