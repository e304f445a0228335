// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/chlo/scan.mlir, func @scan_cumsum_dim1
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<2x3xi32>, tensor<2x3xi32>, tensor<2xi32>, tensor<2xi32>) {
  %input = stablehlo.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
  %init = stablehlo.constant dense<0> : tensor<2xi32>
  %0:2 = chlo.scan(%input) inits(%init) dimension=1 {
  ^bb0(%scan_arg0: tensor<2xi32>, %scan_arg1: tensor<2xi32>):
    %1 = stablehlo.add %scan_arg0, %scan_arg1 : tensor<2xi32>
    stablehlo.return %1, %1 : tensor<2xi32>, tensor<2xi32>
  } : (tensor<2x3xi32>, tensor<2xi32>) -> (tensor<2x3xi32>, tensor<2xi32>)
  %expected0 = stablehlo.constant dense<[[1, 3, 6], [4, 9, 15]]> : tensor<2x3xi32>
  %expected1 = stablehlo.constant dense<[6, 15]> : tensor<2xi32>
  func.return %0#0, %expected0, %0#1, %expected1 : tensor<2x3xi32>, tensor<2x3xi32>, tensor<2xi32>, tensor<2xi32>
}
