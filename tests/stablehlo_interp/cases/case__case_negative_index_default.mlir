// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/case.mlir, func @case_negative_index_default
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) {
  %index = stablehlo.constant dense<-1> : tensor<i32>
  %result_branch0 = stablehlo.constant dense<0> : tensor<2xi64>
  %result_branch1 = stablehlo.constant dense<1> : tensor<2xi64>
  %result0, %result1 = "stablehlo.case"(%index) ({
    stablehlo.return %result_branch0, %result_branch0 : tensor<2xi64>, tensor<2xi64>
  }, {
    stablehlo.return %result_branch1, %result_branch1 : tensor<2xi64>, tensor<2xi64>
  }) : (tensor<i32>) -> (tensor<2xi64>, tensor<2xi64>)
  %expected0 = stablehlo.constant dense<[1, 1]> : tensor<2xi64>
  %expected1 = stablehlo.constant dense<[1, 1]> : tensor<2xi64>
  func.return %result0, %expected0, %result1, %expected1 : tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>
}
