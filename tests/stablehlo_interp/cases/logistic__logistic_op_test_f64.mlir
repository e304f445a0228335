// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/logistic.mlir, func @logistic_op_test_f64
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2x2xf64>, tensor<2x2xf64>) {
  %operand = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf64>
  %result = stablehlo.logistic %operand : tensor<2x2xf64>
  %expected0 = stablehlo.constant dense<[[0.73105857863000488, 0.88079707797788244], [0.95257412682243322, 0.98201379003790844]]> : tensor<2x2xf64>
  func.return %result, %expected0 : tensor<2x2xf64>, tensor<2x2xf64>
}
