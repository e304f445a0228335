// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/multiply.mlir, func @mul_op_test_si32
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<5xi32>, tensor<5xi32>) {
  %0 = stablehlo.constant dense<[0, 1, 32768, -32769, 0]> : tensor<5xi32>
  %1 = stablehlo.constant dense<[-2147483648, -1, 32768, -32769, 2147483647]> : tensor<5xi32>
  %2 = stablehlo.multiply %0, %1 : tensor<5xi32>
  %expected0 = stablehlo.constant dense<[0, -1, 1073741824, 1073807361, 0]> : tensor<5xi32>
  func.return %2, %expected0 : tensor<5xi32>, tensor<5xi32>
}
