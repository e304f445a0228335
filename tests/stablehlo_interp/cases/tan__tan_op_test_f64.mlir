// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/tan.mlir, func @tan_op_test_f64
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<4xf64>, tensor<4xf64>) {
  %0 = stablehlo.constant dense<[0.0, 1.57079632, 3.14159265, 4.71238898]> : tensor<4xf64>
  %1 = stablehlo.tan %0 : tensor<4xf64>
  %expected0 = stablehlo.constant dense<[0.000000e+00, 147169271.76124874, -3.5897930298416118E-9,  2599497068.2695704]> : tensor<4xf64>
  func.return %1, %expected0 : tensor<4xf64>, tensor<4xf64>
}
