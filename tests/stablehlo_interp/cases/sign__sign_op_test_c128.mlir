// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/sign.mlir, func @sign_op_test_c128
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>) {
  %operand = stablehlo.constant dense<[(0x7FF0000000000001, 0x0000000000000000),
                                       (0x0000000000000000, 0x7FF0000000000001),
                                       (0.0, 0.0),
                                       (0.0, 1.0)]> : tensor<4xcomplex<f64>>
  %result = stablehlo.sign %operand : tensor<4xcomplex<f64>>
  %expected0 = stablehlo.constant dense<[(0x7FF0000000000001, 0x7FF0000000000001), (0x7FF0000000000001, 0x7FF0000000000001), (0.0, 0.0), (0.0, 1.0)]> : tensor<4xcomplex<f64>>
  func.return %result, %expected0 : tensor<4xcomplex<f64>>, tensor<4xcomplex<f64>>
}
