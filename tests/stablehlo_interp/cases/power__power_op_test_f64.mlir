// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/power.mlir, func @power_op_test_f64
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<6xf64>, tensor<6xf64>) {
  %lhs = stablehlo.constant dense<[-2.0, -0.0, -36.0, 5.0, 3.0, 10000.0]> : tensor<6xf64>
  %rhs = stablehlo.constant dense<[2.0, 2.0, 1.1, 2.0, -1.0, 10.0]> : tensor<6xf64>
  %result = stablehlo.power %lhs, %rhs : tensor<6xf64>
  %expected0 = stablehlo.constant dense<[4.000000e+00, 0.000000e+00, 0xFFF8000000000000, 2.500000e+01, 0.33333333333333331, 1.000000e+40]> : tensor<6xf64>
  func.return %result, %expected0 : tensor<6xf64>, tensor<6xf64>
}
