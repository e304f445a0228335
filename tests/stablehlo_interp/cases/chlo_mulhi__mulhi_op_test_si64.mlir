// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/chlo/mulhi.mlir, func @mulhi_op_test_si64
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2xi64>, tensor<2xi64>) {
  %lhs = stablehlo.constant dense<[1152921504606846976, -1152921504606846976]> : tensor<2xi64>
  %rhs = stablehlo.constant dense<[16, 16]> : tensor<2xi64>
  %result = "chlo.mulhi"(%lhs, %rhs) : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %expected0 = stablehlo.constant dense<[1, -1]> : tensor<2xi64>
  func.return %result, %expected0 : tensor<2xi64>, tensor<2xi64>
}
