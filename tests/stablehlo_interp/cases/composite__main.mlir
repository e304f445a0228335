// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/composite.mlir, func @main
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @add_n.impl(%arg0: tensor<i64>) -> tensor<i64> {
  %0 = stablehlo.constant dense<2> : tensor<i64>
  %1 = stablehlo.add %arg0, %0 : tensor<i64>
  func.return %1 : tensor<i64>
}

func.func @main() -> (tensor<i64>, tensor<i64>) {
  %0 = stablehlo.constant dense<1> : tensor<i64>
  %1 = stablehlo.composite "stablehlo.add_n" %0 {
    composite_attributes = { n = 2 : i64 },
    decomposition = @add_n.impl
  } : (tensor<i64>) -> tensor<i64>
  %expected0 = stablehlo.constant dense<3> : tensor<i64>
  func.return %1, %expected0 : tensor<i64>, tensor<i64>
}
