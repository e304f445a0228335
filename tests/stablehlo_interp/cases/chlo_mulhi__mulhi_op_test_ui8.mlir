// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/chlo/mulhi.mlir, func @mulhi_op_test_ui8
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2xui8>, tensor<2xui8>) {
  %lhs = stablehlo.constant dense<[240, 128]> : tensor<2xui8>
  %rhs = stablehlo.constant dense<[16, 2]> : tensor<2xui8>
  %result = "chlo.mulhi"(%lhs, %rhs) : (tensor<2xui8>, tensor<2xui8>) -> tensor<2xui8>
  %expected0 = stablehlo.constant dense<[15, 1]> : tensor<2xui8>
  func.return %result, %expected0 : tensor<2xui8>, tensor<2xui8>
}
