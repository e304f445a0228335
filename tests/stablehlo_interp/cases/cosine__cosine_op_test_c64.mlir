// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/cosine.mlir, func @cosine_op_test_c64
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>) {
  %0 = stablehlo.constant dense<[(1.5, 2.5), (3.5, 4.5)]> : tensor<2xcomplex<f32>>
  %1 = stablehlo.cosine %0 : tensor<2xcomplex<f32>>
  %expected0 = stablehlo.constant dense<[(4.337810e-01, -6.03504848), (-42.1537743, 15.7863016)]> : tensor<2xcomplex<f32>>
  func.return %1, %expected0 : tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>
}
