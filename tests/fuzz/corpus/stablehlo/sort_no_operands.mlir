module @m {
  func.func public @main() -> tensor<7xi32> {
    %0 = "stablehlo.sort"() <{dimension = 0 : i64}> ({
    ^bb0(%a: tensor<i32>, %b: tensor<i32>):
      %1 = stablehlo.compare LT, %a, %b, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %1 : tensor<i1>
    }) : () -> tensor<7xi32>
    return %0 : tensor<7xi32>
  }
}
