// axpy.mlir: the same program as StableHLO, as JAX prints it by default
// (jax.jit(f).lower(x, y).as_text(), with the call from jax.ffi.ffi_call)
module @axpy {
  func.func public @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
    %r = stablehlo.custom_call @mylib.axpy(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    return %r : tensor<4xf32>
  }
}
