// Converted from https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/tests/interpret/chlo/scan.mlir, func @scan_cummax
// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come
// in pairs: the value computed, then the value the upstream check expects.

func.func @main() -> (tensor<5xi32>, tensor<5xi32>, tensor<5xi32>, tensor<5xi32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) {
  %input = stablehlo.constant dense<[3, 1, 4, 1, 5]> : tensor<5xi32>
  %iota = stablehlo.constant dense<[0, 1, 2, 3, 4]> : tensor<5xi32>
  %val_init = stablehlo.constant dense<-2147483648> : tensor<i32>
  %idx_init = stablehlo.constant dense<0> : tensor<i32>
  %0:4 = chlo.scan(%input, %iota) inits(%val_init, %idx_init) dimension=0 {
  ^bb0(%cur_val: tensor<i32>, %cur_idx: tensor<i32>, %run_val: tensor<i32>, %run_idx: tensor<i32>):
    %new_val = stablehlo.maximum %run_val, %cur_val : tensor<i32>
    %gt = stablehlo.compare GT, %run_val, %cur_val : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %eq = stablehlo.compare EQ, %run_val, %cur_val : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %max_idx = stablehlo.maximum %run_idx, %cur_idx : tensor<i32>
    %tie_or_less = stablehlo.select %eq, %max_idx, %cur_idx : tensor<i1>, tensor<i32>
    %new_idx = stablehlo.select %gt, %run_idx, %tie_or_less : tensor<i1>, tensor<i32>
    stablehlo.return %new_val, %new_idx, %new_val, %new_idx
        : tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>
  } : (tensor<5xi32>, tensor<5xi32>, tensor<i32>, tensor<i32>)
      -> (tensor<5xi32>, tensor<5xi32>, tensor<i32>, tensor<i32>)
  %expected0 = stablehlo.constant dense<[3, 3, 4, 4, 5]> : tensor<5xi32>
  %expected1 = stablehlo.constant dense<[0, 0, 2, 2, 4]> : tensor<5xi32>
  %expected2 = stablehlo.constant dense<5> : tensor<i32>
  %expected3 = stablehlo.constant dense<4> : tensor<i32>
  func.return %0#0, %expected0, %0#1, %expected1, %0#2, %expected2, %0#3, %expected3 : tensor<5xi32>, tensor<5xi32>, tensor<5xi32>, tensor<5xi32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>
}
