// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/chlo/mulhi.mlir, func @mulhi_op_test_si16
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2xi16>, tensor<2xi16>) {
  %lhs = stablehlo.constant dense<[16384, -16384]> : tensor<2xi16>
  %rhs = stablehlo.constant dense<[8, 8]> : tensor<2xi16>
  %result = "chlo.mulhi"(%lhs, %rhs) : (tensor<2xi16>, tensor<2xi16>) -> tensor<2xi16>
  %expected0 = stablehlo.constant dense<[2, -2]> : tensor<2xi16>
  func.return %result, %expected0 : tensor<2xi16>, tensor<2xi16>
}
