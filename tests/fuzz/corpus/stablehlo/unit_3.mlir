func.func @main(%i: tensor<i32>, %x: tensor<2xf32>) -> (tensor<2xf32>, tensor<i32>, tensor<2xf32>) {
  %two = stablehlo.constant dense<2.0> : tensor<2xf32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %r = "stablehlo.case"(%i) ({
    %m = stablehlo.multiply %x, %two : tensor<2xf32>
    stablehlo.return %m : tensor<2xf32>
  }, {
    stablehlo.return %x : tensor<2xf32>
  }) : (tensor<i32>) -> tensor<2xf32>
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %five = stablehlo.constant dense<5> : tensor<i32>
  %w:2 = stablehlo.while(%iterArg = %zero, %iterArg_0 = %x) : tensor<i32>, tensor<2xf32>
   cond {
    %c = stablehlo.compare  LT, %iterArg, %five,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %n = stablehlo.add %iterArg, %one : tensor<i32>
    %y = stablehlo.add %iterArg_0, %two : tensor<2xf32>
    stablehlo.return %n, %y : tensor<i32>, tensor<2xf32>
  }
  %b:2 = stablehlo.optimization_barrier %w#0, %w#1 : tensor<i32>, tensor<2xf32>
  return %r, %b#0, %b#1 : tensor<2xf32>, tensor<i32>, tensor<2xf32>
}
