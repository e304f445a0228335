// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/while.mlir, func @while
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>) {
  %init_i = stablehlo.constant dense<0> : tensor<i64>
  %init_sum = stablehlo.constant dense<0> : tensor<i64>
  %one = stablehlo.constant dense<1> : tensor<i64>
  %ten = stablehlo.constant dense<10> : tensor<i64>
  %results0, %results1 = stablehlo.while(%arg0 = %init_i, %arg1 = %init_sum) : tensor<i64>, tensor<i64>
  cond {
    %cond = stablehlo.compare LT, %arg0, %ten : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %cond : tensor<i1>
  } do {
    %new_sum = stablehlo.add %arg1, %one : tensor<i64>
    %new_i = stablehlo.add %arg0, %one : tensor<i64>
    stablehlo.return %new_i, %new_sum : tensor<i64>, tensor<i64>
  }
  %expected0 = stablehlo.constant dense<10> : tensor<i64>
  %expected1 = stablehlo.constant dense<10> : tensor<i64>
  func.return %results0, %expected0, %results1, %expected1 : tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>
}
