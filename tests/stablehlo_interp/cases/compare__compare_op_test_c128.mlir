// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/compare.mlir, func @compare_op_test_c128
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<4xi1>, tensor<4xi1>) {
  %lhs = stablehlo.constant dense<[(0x7FF0000000000001, 0x0000000000000000), (0x0000000000000000, 0x7FF0000000000001), (0x8000000000000000, 0x0000000000000000), (2.0, 2.0)]> : tensor<4xcomplex<f64>>
  %rhs = stablehlo.constant dense<[(0x7FF0000000000001, 0x8000000000000000), (0x8000000000000000, 0x7FF0000000000001), (0x0000000000000000, 0x0000000000000000), (2.0, 1.0)]> : tensor<4xcomplex<f64>>
  %result = stablehlo.compare EQ, %lhs, %rhs, FLOAT : (tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>) -> tensor<4xi1>
  %expected0 = stablehlo.constant dense<[false, false, true, false]> : tensor<4xi1>
  func.return %result, %expected0 : tensor<4xi1>, tensor<4xi1>
}
