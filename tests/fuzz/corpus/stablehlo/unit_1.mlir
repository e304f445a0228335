#dot = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>
module {
  func.func @main() -> (tensor<2x2xf32>, tensor<2x2xi1>, tensor<1x2xf32>, tensor<2xf32>) {
    %a = "stablehlo.constant"() <{value = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>}> : () -> tensor<2x2xf32>
    %d = "stablehlo.dot_general"(%a, %a) <{dot_dimension_numbers = #dot}> : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
    %s = "stablehlo.add"(%d, %a) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
    %c = "stablehlo.compare"(%a, %s) <{comparison_direction = #stablehlo<comparison_direction LT>, compare_type = #stablehlo<comparison_type FLOAT>}> : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xi1>
    %l = "stablehlo.slice"(%s) <{start_indices = array<i64: 1, 0>, limit_indices = array<i64: 2, 2>, strides = array<i64: 1, 1>}> : (tensor<2x2xf32>) -> tensor<1x2xf32>
    %z = stablehlo.constant dense<0.0> : tensor<f32>
    %r = "stablehlo.reduce"(%a, %z) <{dimensions = array<i64: 1>}> ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %m = "stablehlo.multiply"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      %t = stablehlo.add %x, %y : tensor<f32>
      "stablehlo.return"(%t) : (tensor<f32>) -> ()
    }) : (tensor<2x2xf32>, tensor<f32>) -> tensor<2xf32>
    "func.return"(%s, %c, %l, %r) : (tensor<2x2xf32>, tensor<2x2xi1>, tensor<1x2xf32>, tensor<2xf32>) -> ()
  }
}
