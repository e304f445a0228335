// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/floor.mlir, func @floor_op_test_f64
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<9xf64>, tensor<9xf64>) {
  %0 = stablehlo.constant dense<[0xFFF0000000000000, -2.5, 0x8000000000000001, -0.0, 0.0, 0x0000000000000001, 2.5, 0x7FF0000000000000, 0x7FF8000000000000]>  : tensor<9xf64>
  %1 = stablehlo.floor %0 : tensor<9xf64>
  %expected0 = stablehlo.constant dense<[0xFFF0000000000000, -3.000000e+00, -1.000000e+00, -0.000000e+00, 0.000000e+00, 0.000000e+00, 2.000000e+00, 0x7FF0000000000000, 0x7FF8000000000000]> : tensor<9xf64>
  func.return %1, %expected0 : tensor<9xf64>, tensor<9xf64>
}
