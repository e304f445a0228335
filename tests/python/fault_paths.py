"""Run by tests/python/test_faults.py in a Python with fault_shim.c
preloaded: fault_paths.py SHIM [--ops PLUGIN] [--tvm-ffi MODULE], PLUGIN
being tests/fixtures/plugin_unload.c built (kt_plugin_unload.so), MODULE
tests/tvm_ffi/kernels.cc built.

Each path below runs once per allocation it makes, with that allocation
failed (the n-th allocation libkcall makes for itself, n = 1, 2, ...,
until a run fails none). A run either completes with the right result or
raises MemoryError; either way the same path then runs again with memory
available and must give the right result, so nothing was left
half-registered or broken. Prints "PATH ALLOCATIONS" per path; exits
non-zero on the first wrong outcome.
"""

import argparse
import ctypes
import sys

import numpy as np

args = argparse.ArgumentParser()
args.add_argument("shim")
args.add_argument("--ops")
args.add_argument("--tvm-ffi")
args = args.parse_args()

shim = ctypes.CDLL(args.shim)
shim.kt_fault_arm.argtypes = [ctypes.c_longlong]
shim.kt_fault_seen.restype = ctypes.c_longlong
shim.kt_fault_failed.restype = ctypes.c_longlong

import kcall  # noqa: E402  (after the shim is known to be loaded)

AXPY = """HloModule axpy
ENTRY main {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  two = f32[] constant(2)
  b = f32[4] broadcast(two), dimensions={}
  m = f32[4] multiply(b, x)
  ROOT r = f32[4] add(m, y)
}
"""

SORT_LOOP = """HloModule loop
body {
  s = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[8] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  w = f32[8] sort(v), dimensions={0}, to_apply=lt
  c = f32[] constant(1)
  cb = f32[8] broadcast(c), dimensions={}
  x = f32[8] add(w, cb)
  ROOT t = (s32[], f32[8]) tuple(j, x)
}
cond {
  s = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT p = pred[] compare(i, n), direction=LT
}
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT l = pred[] compare(a, b), direction=LT
}
ENTRY main {
  v = f32[8] parameter(0)
  z = s32[] constant(0)
  s = (s32[], f32[8]) tuple(z, v)
  w = (s32[], f32[8]) while(s), condition=cond, body=body
  ROOT r = f32[8] get-tuple-element(w), index=1
}
"""

STABLEHLO = """module @m {
  func.func public @main(%x: tensor<2x3xf32>, %y: tensor<3x2xf32>) -> tensor<2xf32> {
    %0 = stablehlo.dot_general %x, %y, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
    %1 = stablehlo.constant dense<0.0> : tensor<f32>
    %2 = stablehlo.reduce(%0 init: %1) applies stablehlo.add across dimensions = [1] : (tensor<2x2xf32>, tensor<f32>) -> tensor<2xf32>
    return %2 : tensor<2xf32>
  }
}
"""

X4 = np.array([1, 2, 3, 4], np.float32)
Y4 = np.full(4, 0.5, np.float32)
V8 = np.array([5, -1, 3, 0, 2, 7, -4, 1], np.float32)
A23 = np.arange(6, dtype=np.float32).reshape(2, 3)
B32 = np.arange(6, dtype=np.float32).reshape(3, 2) - 2


def program_axpy():
    return np.asarray(kcall.Program.parse(AXPY).compile()(X4, Y4))


def program_sort_loop():
    return np.asarray(kcall.Program.parse(SORT_LOOP).compile()(V8))


def program_stablehlo():
    return np.asarray(kcall.Program.parse(STABLEHLO).compile()(A23, B32))


def callback(*values):
    """A Python function called through kcall: every argument converted to
    kcall and back."""
    x, n, f, s, b, t = values
    return (np.asarray(x) * n + f).sum() + len(s) + len(b) + np.asarray(t).sum()


def python_callback():
    kcall.register_func("kt_faults.callback", callback, override=True)
    fn = kcall.get_func("kt_faults.callback")
    return fn(X4, 3, 0.5, "four", b"by", kcall.Tensor(Y4))


def double_calls():
    double = getattr(kcall.ops, "kt_unload.Double")
    return np.concatenate([np.asarray(double(X4.reshape(2, 2))).ravel()
                           for _ in range(3)])


def ops_calls():
    """tests/fixtures/plugin_unload.c loaded, its op called through
    kcall.ops (the first call resolves it, the later ones take the memo),
    unloaded: each run resolves afresh. The plugin is unloaded once the
    exception is gone: its traceback holds the frames that hold the op."""
    plugin = kcall.load_plugin(args.ops)
    try:
        result = double_calls()
    except MemoryError:
        result = None
    plugin.unload()
    if result is None:
        raise MemoryError("a call failed")
    return result


def tvm_ffi_export():
    import tvm_ffi
    import kcall.tvm_ffi
    kcall.register_func("kt_faults.exported", lambda a, b: a * b, override=True)
    kcall.tvm_ffi.export("kt_faults.exported", override=True)
    return tvm_ffi.get_global_func("kt_faults.exported")(6, 7)


def tvm_ffi_import():
    plugin = kcall.load_plugin(args.tvm_ffi, prefix="kt_faults_tk")
    try:
        y = np.zeros(4, np.float32)
        kcall.get_func("kt_faults_tk.add_one")(X4, y)
        text = kcall.get_func("kt_faults_tk.echo_str")("echo")
        return y.tolist(), text
    finally:
        plugin.unload()


PATHS = [("program_axpy", program_axpy), ("program_sort_loop", program_sort_loop),
         ("program_stablehlo", program_stablehlo), ("python_callback", python_callback)]
if args.ops:
    PATHS.append(("ops_calls", ops_calls))
if args.tvm_ffi:
    PATHS += [("tvm_ffi_export", tvm_ffi_export), ("tvm_ffi_import", tvm_ffi_import)]


def same(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a), np.asarray(b))
    return a == b


def sweep(name, path):
    shim.kt_fault_arm(0)
    expected = path()
    total = shim.kt_fault_seen()
    n = 1
    while True:
        shim.kt_fault_arm(n)
        try:
            got = path()
        except MemoryError:
            got = MemoryError
        failed = shim.kt_fault_failed()
        shim.kt_fault_arm(0)
        if failed and got is MemoryError:
            pass
        elif got is MemoryError:
            sys.exit("%s: MemoryError with no allocation failed (n=%d)" % (name, n))
        elif not same(got, expected):
            sys.exit("%s: allocation %d failed, and the path gave %r, expected %r"
                     % (name, n, got, expected))
        again = path()
        if not same(again, expected):
            sys.exit("%s: after allocation %d failed, the path gave %r, expected %r"
                     % (name, n, again, expected))
        if not failed:
            break
        n += 1
    print("%s %d %d" % (name, total, n - 1), flush=True)


for name, path in PATHS:
    sweep(name, path)
