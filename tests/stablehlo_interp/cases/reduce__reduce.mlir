// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/reduce.mlir, func @reduce
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<1xi64>, tensor<1xi64>) {
  %input = stablehlo.constant dense<[[0, 1, 2, 3, 4, 5]]> : tensor<1x6xi64>
  %init_value = stablehlo.constant dense<0> : tensor<i64>
  %result = "stablehlo.reduce"(%input, %init_value) ({
    ^bb0(%arg0: tensor<i64>, %arg1: tensor<i64>):
      %0 = stablehlo.add %arg0, %arg1 : tensor<i64>
      stablehlo.return %0 : tensor<i64>
  }) {
    dimensions = array<i64: 1>
  } : (tensor<1x6xi64>, tensor<i64>) -> tensor<1xi64>
  %expected0 = stablehlo.constant dense<[15]> : tensor<1xi64>
  func.return %result, %expected0 : tensor<1xi64>, tensor<1xi64>
}
