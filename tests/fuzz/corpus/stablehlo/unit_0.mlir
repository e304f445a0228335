#loc = loc(unknown)
#loc1 = loc("x")
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32> loc("x"), %arg1: tensor<3xf32> loc(#loc1)) -> (tensor<2x3xf32> {jax.result_info = "result[0]"}, tensor<2xf32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32> loc(#loc2)
    %1 = stablehlo.add %arg0, %0 : tensor<2x3xf32> loc(#loc2)
    %2 = call @relu(%1) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc(#loc3)
    %3 = func.call @relu(%2) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32> loc(#loc)
    %4 = stablehlo.reduce(%3 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32> loc(#loc4)
    return %3, %4 : tensor<2x3xf32>, tensor<2xf32> loc(#loc)
  } loc(#loc)
  func.func private @relu(%arg0: tensor<2x3xf32> loc(unknown)) -> tensor<2x3xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32> loc(#loc5)
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
    %1 = stablehlo.maximum %arg0, %0 : tensor<2x3xf32> loc(#loc5)
    return %1 : tensor<2x3xf32> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc2 = loc("jit(f)/add"(#loc1))
#loc3 = loc(callsite(#loc2 at #loc1))
#loc4 = loc("f.py":3:4 to :9)
#loc5 = loc("relu")
