// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/chlo/scan.mlir, func @scan_cumsum_1d
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<4xi32>, tensor<4xi32>, tensor<i32>, tensor<i32>) {
  %input = stablehlo.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
  %init = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = chlo.scan(%input) inits(%init) dimension=0 {
  ^bb0(%scan_arg0: tensor<i32>, %scan_arg1: tensor<i32>):
    %1 = stablehlo.add %scan_arg0, %scan_arg1 : tensor<i32>
    stablehlo.return %1, %1 : tensor<i32>, tensor<i32>
  } : (tensor<4xi32>, tensor<i32>) -> (tensor<4xi32>, tensor<i32>)
  %expected0 = stablehlo.constant dense<[1, 3, 6, 10]> : tensor<4xi32>
  %expected1 = stablehlo.constant dense<10> : tensor<i32>
  func.return %0#0, %expected0, %0#1, %expected1 : tensor<4xi32>, tensor<4xi32>, tensor<i32>, tensor<i32>
}
