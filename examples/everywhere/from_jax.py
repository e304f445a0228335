# from_jax.py
import sys

import jax
import numpy as np

import kcall.jax

jax.config.update("jax_platforms", "cpu")  # the targets below are CPU ones
kcall.jax.register_plugin(sys.argv[1])  # the target "scale", the op "Scale"


@jax.jit
def f(x):
    y = jax.ffi.ffi_call("scale", jax.ShapeDtypeStruct(x.shape, x.dtype))(
        x, factor=np.float32(3))                  # the typed target
    return kcall.jax.call_op("Scale", y, factor=0.5)  # the op


print(f(np.arange(4, dtype=np.float32)))
# The op declares its gradient (Scale(grad(y)) -> grad(x)): jax.grad works.
g = jax.grad(lambda x: kcall.jax.call_op("Scale", x, factor=0.5).sum())
print(g(np.arange(4, dtype=np.float32)))
# So does the target (scale(grad(result0)) -> grad(arg0)), via call_target.
h = jax.grad(lambda x: kcall.jax.call_target(
    "scale", jax.ShapeDtypeStruct(x.shape, x.dtype), x,
    factor=np.float32(3)).sum())
print(h(np.arange(4, dtype=np.float32)))
# The op's forward-mode rule (Scale(tangent(x)) -> tangent(y)): jax.jvp.
_, t = jax.jvp(lambda x: kcall.jax.call_op("Scale", x, factor=0.5),
               (np.arange(4, dtype=np.float32),), (np.ones(4, np.float32),))
print(t)
