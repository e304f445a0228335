// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/dot_general.mlir, func @add_op_test_f8E4M3
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<f8E4M3>, tensor<f8E4M3>) {
  %0 = stablehlo.constant dense<[0.0, 1.0, 2.0, 3.0,
                                 4.0, 5.0, 6.0, 7.0]> : tensor<8xf8E4M3>
  %result = stablehlo.dot_general %0, %0,
    contracting_dims = [0] x [0]
    : (tensor<8xf8E4M3>, tensor<8xf8E4M3>) -> tensor<f8E4M3>
  %expected0 = stablehlo.constant dense<140.0> : tensor<f8E4M3>
  func.return %result, %expected0 : tensor<f8E4M3>, tensor<f8E4M3>
}
