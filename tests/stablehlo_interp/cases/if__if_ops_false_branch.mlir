// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/if.mlir, func @if_ops_false_branch
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) {
  %pred = stablehlo.constant dense<false> : tensor<i1>
  %result0, %result1 = "stablehlo.if"(%pred) ({
    %0 = stablehlo.constant dense<0> : tensor<2xi64>
    stablehlo.return %0, %0 : tensor<2xi64>, tensor<2xi64>
  }, {
    %1 = stablehlo.constant dense<1> : tensor<2xi64>
    stablehlo.return %1, %1 : tensor<2xi64>, tensor<2xi64>
  }) : (tensor<i1>) -> (tensor<2xi64>, tensor<2xi64>)
  %expected0 = stablehlo.constant dense<[1, 1]> : tensor<2xi64>
  %expected1 = stablehlo.constant dense<[1, 1]> : tensor<2xi64>
  func.return %result0, %expected0, %result1, %expected1 : tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>
}
