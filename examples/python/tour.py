"""kcall from Python: a tour: `python tour.py HELLO_PLUGIN.so`.

HELLO_PLUGIN.so is examples/hello built (build/examples/hello/libhello_plugin.so).
"""
import sys

import numpy as np

import kcall

# C functions from a plugin, called by name.
plugin = kcall.load_plugin(sys.argv[1])
print(plugin)
add = kcall.get_func("hello.add")
print("hello.add(2, 3) =", add(2, 3))

# NumPy arrays pass without a copy: hello.scale scales in place, strides too.
x = np.arange(6, dtype=np.float32).reshape(2, 3)
kcall.get_func("hello.scale")(x[:, ::2], 10.0)
print("scaled columns 0 and 2:", x.tolist())


# A Python function that C calls: hello.call looks a function up by name.
@kcall.register_func("demo.square")
def square(v):
    return v * v


print("hello.call('demo.square', 7) =", kcall.get_func("hello.call")("demo.square", 7))

# Errors name the function and the argument, and keep their Python types.
try:
    add(2, "three")
except kcall.InvalidArgumentError as e:
    print(f"{type(e).__name__}: {e}")


# A program (HLO text) whose custom call is a Python function.
@kcall.register_target("demo.axpy", args=["f32", "f32"], results=["f32"],
                       attrs={"alpha": "f32"})
def axpy(x, y, out, *, alpha):
    out[...] = alpha * x + y


program = kcall.Program.parse("""
HloModule axpy
ENTRY main {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  ROOT r = f32[4] custom-call(x, y), custom_call_target="demo.axpy",
           api_version=API_VERSION_TYPED_FFI, backend_config={alpha = 2.0 : f32}
}
""")
run = program.compile()
result = run(np.array([1, 2, 3, 4], np.float32), np.full(4, 0.5, np.float32))
print("axpy:", np.asarray(result).tolist())
