// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/chlo/mulhi.mlir, func @mulhi_op_test_si8
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<3xi8>, tensor<3xi8>) {
  %lhs = stablehlo.constant dense<[64, -64, -64]> : tensor<3xi8>
  %rhs = stablehlo.constant dense<[4, 4, -4]> : tensor<3xi8>
  %result = "chlo.mulhi"(%lhs, %rhs) : (tensor<3xi8>, tensor<3xi8>) -> tensor<3xi8>
  %expected0 = stablehlo.constant dense<[1, -1, 1]> : tensor<3xi8>
  func.return %result, %expected0 : tensor<3xi8>, tensor<3xi8>
}
