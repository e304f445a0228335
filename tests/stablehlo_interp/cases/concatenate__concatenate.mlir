// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/concatenate.mlir, func @concatenate
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<4x2xi64>, tensor<4x2xi64>) {
  %input0 = stablehlo.constant dense<[[1, 2], [3, 4], [5, 6]]> : tensor<3x2xi64>
  %input1 = stablehlo.constant dense<[[7, 8]]> : tensor<1x2xi64>
  %result = stablehlo.concatenate %input0, %input1, dim = 0 : (tensor<3x2xi64>, tensor<1x2xi64>) -> tensor<4x2xi64>
  %expected0 = stablehlo.constant dense<[[1, 2], [3, 4] , [5, 6], [7, 8]]> : tensor<4x2xi64>
  func.return %result, %expected0 : tensor<4x2xi64>, tensor<4x2xi64>
}
