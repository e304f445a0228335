// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/cosine.mlir, func @cosine_op_test_c128
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2xcomplex<f64>>, tensor<2xcomplex<f64>>) {
  %0 = stablehlo.constant dense<[(1.5, 2.5), (3.5, 4.5)]> : tensor<2xcomplex<f64>>
  %1 = stablehlo.cosine %0 : tensor<2xcomplex<f64>>
  %expected0 = stablehlo.constant dense<[(0.43378099760770306, -6.0350486377665726), (-42.153773835602316, 15.786301507647636)]> : tensor<2xcomplex<f64>>
  func.return %1, %expected0 : tensor<2xcomplex<f64>>, tensor<2xcomplex<f64>>
}
