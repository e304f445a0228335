module {
  func.func public @main(%arg0: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3xi1>) {
    %cst = stablehlo.constant dense_resource<weights.0> : tensor<2x3xf32>
    %c = stablehlo.constant dense_resource<mask> : tensor<3xi1>
    %0 = stablehlo.add %arg0, %cst : tensor<2x3xf32>
    return %0, %c : tensor<2x3xf32>, tensor<3xi1>
  }
}

{-#
  dialect_resources: {
    builtin: {
      weights.0: "0x04000000000000000000803E0000003F0000403F0000803F0000A03F",
      mask: "0x01000000010001"
    }
  }
#-}
