// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/sine.mlir, func @sine_op_test_c64
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>) {
  %0 = stablehlo.constant dense<[(1.5, 2.5), (3.5, 4.5)]> : tensor<2xcomplex<f32>>
  %1 = stablehlo.sine %0 : tensor<2xcomplex<f32>>
  %expected0 = stablehlo.constant dense<[(6.1169281, 0.427974522), (-15.7901983, -42.1433716)]> : tensor<2xcomplex<f32>>
  func.return %1, %expected0 : tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>
}
