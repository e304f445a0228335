// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/optimization_barrier.mlir, func @optimization_barrier_op_test
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) {
  %operand0 = stablehlo.constant dense<0.0> : tensor<f32>
  %operand1 = stablehlo.constant dense<1.0> : tensor<f32>
  %result0, %result1 = stablehlo.optimization_barrier %operand0, %operand1 : tensor<f32>, tensor<f32>
  %expected0 = stablehlo.constant dense<0.0> : tensor<f32>
  %expected1 = stablehlo.constant dense<1.0> : tensor<f32>
  func.return %result0, %expected0, %result1, %expected1 : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>
}
