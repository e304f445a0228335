// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/dynamic_pad.mlir, func @dynamic_pad
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<7x5xi64>, tensor<7x5xi64>) {
  %operand = stablehlo.constant dense<[[0, 0, 0, 0],
                                       [0, 1, 2, 0],
                                       [0, 3, 4, 0],
                                       [0, 5, 6, 0],
                                       [0, 0, 0, 0]]> : tensor<5x4xi64>
  %padding_value = stablehlo.constant dense<-1> : tensor<i64>
  %low = stablehlo.constant dense<[1, -1]> : tensor<2xi64>
  %high = stablehlo.constant dense<[1, -1]> : tensor<2xi64>
  %interior = stablehlo.constant dense<[0, 1]> : tensor<2xi64>
  %result = stablehlo.dynamic_pad %operand, %padding_value, %low, %high, %interior
    : (tensor<5x4xi64>, tensor<i64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<7x5xi64>
  %expected0 = stablehlo.constant dense<[ [-1, -1, -1, -1, -1], [-1,  0, -1,  0, -1], [-1,  1, -1,  2, -1], [-1,  3, -1,  4, -1], [-1,  5, -1,  6, -1], [-1,  0, -1,  0, -1], [-1, -1, -1, -1, -1]]> : tensor<7x5xi64>
  func.return %result, %expected0 : tensor<7x5xi64>, tensor<7x5xi64>
}
