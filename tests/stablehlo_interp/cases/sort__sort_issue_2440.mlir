// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/sort.mlir, func @sort_issue_2440
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<5x7xi64>, tensor<5x7xi64>) {
  %input = stablehlo.constant dense<[[0, 1, 1, -3, -3, -2, 0], [4, -1, 3, 0, 4, 0, -3], [1, 0, 0, 0, 0, 2, 3], [-3, -4, -4, -2, 0, 3, 3], [0, 5, 2, -2, 0, -2, 0]]> : tensor<5x7xi64>
  %result = "stablehlo.sort"(%input) <{dimension = 0 : i64}> ({
  ^bb0(%arg0: tensor<i64>, %arg1: tensor<i64>):
    %1 = stablehlo.compare  LT, %arg0, %arg1,  SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  }) : (tensor<5x7xi64>) -> tensor<5x7xi64>
  %expected0 = stablehlo.constant dense<[[ -3, -4, -4, -3, -3, -2, -3 ], [ 0, -1, 0, -2, 0, -2, 0 ], [ 0, 0, 1, -2, 0, 0, 0 ], [ 1, 1, 2, 0, 0, 2, 3 ], [ 4, 5, 3, 0, 4, 3, 3 ]]> : tensor<5x7xi64>
  func.return %result, %expected0 : tensor<5x7xi64>, tensor<5x7xi64>
}
