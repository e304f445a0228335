module @m {
  func.func public @main(%x: tensor<2x3xf32>) -> tensor<?x3xf32> {
    %0 = "stablehlo.dot_general"(%x) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<2x3xf32>) -> tensor<?x3xf32>
    return %0 : tensor<?x3xf32>
  }
}
