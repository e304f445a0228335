"""python_args_fuzz.py: the Python package's argument conversion, fuzzed.

Each input's bytes are read as a recipe for Python values (nested lists and
tuples, ints of any size, floats with NaN and infinities, str and bytes,
None, NumPy arrays of odd dtypes, shapes and strides, NumPy scalars,
callables, objects whose __dlpack__, __dlpack_device__ or __array__ are
broken) and the values are passed to packed functions (kcall.testing's
native ones), kcall.Tensor, kcall.to_device and op calls. What must hold:
nothing crashes, and every refusal is a clean exception: a kcall.Error, or
TypeError, ValueError, OverflowError or BufferError, with a message.

    python tests/fuzz/python_args_fuzz.py -max_total_time=60   # with atheris
    make fuzz FUZZ_TARGETS=python_args                         # the same, set up

KCALL_FUZZ_PLUGIN names a plugin to load first (an ops plugin, e.g.
build/examples/ops/libops_plugin.so, adds its ops as targets).

Run by `make fuzz` (docs/fuzzing.md) under atheris, which guides the bytes
by coverage of the Python code; tests/python/test_fuzz_args.py runs
one_input on a fixed set of random inputs in every `make test`.
"""

import os
import struct
import sys

import numpy as np

import kcall
import kcall.testing as kt

# What a refusal may be: everything else is a bug the harness reports.
CLEAN = (kcall.Error, TypeError, ValueError, OverflowError, BufferError)
# (and what the values' own methods raise: BrokenProtocol, below)

DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32,
          np.uint32, np.int64, np.uint64, np.float16, np.float32, np.float64,
          np.complex64, np.complex128, np.dtype(">f4"), np.dtype(">i8"),
          np.object_, np.dtype("U3"), np.dtype("S2"), np.dtype("M8[s]"),
          np.longdouble, np.dtype([("a", "i4"), ("b", "f4")])]


class Reader:
    """Values read off the input's bytes; zeros once they run out."""

    def __init__(self, data):
        self.data, self.at = data, 0

    def byte(self):
        if self.at >= len(self.data):
            return 0
        self.at += 1
        return self.data[self.at - 1]

    def take(self, n):
        got = self.data[self.at:self.at + n]
        self.at += len(got)
        return got + bytes(n - len(got))

    def below(self, n):
        return self.byte() % n

    def int(self):
        kind = self.below(6)
        if kind == 0:
            return self.below(256) - 128
        if kind == 1:
            return struct.unpack("<q", self.take(8))[0]
        if kind == 2:
            return struct.unpack("<Q", self.take(8))[0]
        if kind == 3:  # past 64 bits
            return int.from_bytes(self.take(1 + self.below(24)), "little",
                                  signed=True) << 64
        if kind == 4:
            return [2 ** 63 - 1, -2 ** 63, 2 ** 63, -2 ** 63 - 1, 2 ** 64][
                self.below(5)]
        return True if self.byte() & 1 else False

    def float(self):
        kind = self.below(4)
        if kind == 0:
            return struct.unpack("<d", self.take(8))[0]
        if kind == 1:
            return [float("nan"), float("inf"), -float("inf"), -0.0, 5e-324,
                    1.7976931348623157e308][self.below(6)]
        return float(self.below(256) - 128) / 4

    def array(self):
        dtype = np.dtype(DTYPES[self.below(len(DTYPES))])
        ndim = self.below(5)
        shape = tuple(self.below(4) for _ in range(ndim))
        try:
            a = np.zeros(shape, dtype)
        except (TypeError, ValueError):
            return np.zeros(3, np.float32)
        if a.size and dtype.kind in "iufcb":
            raw = self.take(min(a.nbytes, 64))
            flat = a.reshape(-1).view(np.uint8)
            flat[:len(raw)] = np.frombuffer(raw, np.uint8)[:flat.size]
        how = self.below(8)
        if how == 1 and ndim:
            a = a[..., ::2]                         # strided
        elif how == 2 and ndim >= 2:
            a = a.T                                 # transposed
        elif how == 3 and ndim:
            a = a[::-1]                             # negative stride
        elif how == 4:
            a = np.broadcast_to(a, (2,) + a.shape)  # zero stride, read-only
        elif how == 5 and a.nbytes >= 2 and a.itemsize > 1 and a.ndim == 1:
            raw = np.zeros(a.nbytes + 1, np.uint8)[1:]
            a = raw.view(a.dtype) if raw.size % a.itemsize == 0 else a
        elif how == 6:
            a = a.view(np.dtype(a.dtype, align=False)).reshape(a.shape)
        return a

    def value(self, depth=0):
        kind = self.below(16 if depth < 3 else 10)
        if kind == 0:
            return None
        if kind == 1:
            return self.int()
        if kind == 2:
            return self.float()
        if kind == 3:
            return self.take(self.below(12)).decode("utf-8", "replace")
        if kind == 4:
            return self.take(self.below(12))
        if kind == 5:
            return self.array()
        if kind == 6:
            return np.dtype(DTYPES[self.below(12)]).type(self.below(128))
        if kind == 7:
            return Broken(self.below(len(Broken.WAYS)))
        if kind == 8:
            return [kt.nop, kt.echo, len, lambda *a: a, Broken(0).fail][
                self.below(5)]
        if kind == 9:
            return kcall.Tensor(np.arange(self.below(5), dtype=np.float32))
        n = self.below(5)
        items = [self.value(depth + 1) for _ in range(n)]
        if kind in (10, 11):
            return items
        if kind in (12, 13):
            return tuple(items)
        return {"k": items}


# A capsule keeps a pointer to its name: the name lives as long as this.
OTHER_CAPSULE_NAME = b"not_a_dltensor"


class BrokenProtocol(RuntimeError):
    """What a Broken object's protocol methods raise: passed on to the
    caller as it is, as NumPy passes it on."""


class Broken:
    """An object claiming an array protocol that it then breaks."""

    WAYS = ["dlpack raises", "dlpack returns an int", "dlpack returns a "
            "capsule of another name", "dlpack_device raises", "dlpack_device returns "
            "junk", "array raises", "array returns a list"]

    def __init__(self, way):
        self.way = way

    def fail(self, *args):
        raise BrokenProtocol("a callback that fails")

    def __dlpack__(self, *args, **kwargs):
        if self.way == 0:
            raise BrokenProtocol("broken __dlpack__")
        if self.way == 1:
            return 7
        if self.way == 2:
            import ctypes
            make = ctypes.pythonapi.PyCapsule_New
            make.restype = ctypes.py_object
            make.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
            # (A capsule named "dltensor" around a bad pointer would lie:
            # no consumer can check that, so it is not fuzzed.)
            return make(ctypes.c_void_p(8), OTHER_CAPSULE_NAME, None)
        return np.zeros(2, np.float32).__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        if self.way == 3:
            raise BrokenProtocol("broken __dlpack_device__")
        if self.way == 4:
            return ("cpu", None)
        return (1, 0)

    def __array__(self, *args, **kwargs):
        if self.way == 5:
            raise BrokenProtocol("broken __array__")
        if self.way == 6:
            return [1, 2]
        return np.zeros(2, np.float32)


TARGETS = [
    lambda r, args: kt.echo(*args[:1]),
    lambda r, args: kt.types(*args),
    lambda r, args: kt.nop(*args),
    lambda r, args: kt.describe(*args[:1]),
    lambda r, args: kt.sum(*args[:1]),
    lambda r, args: kt.apply(kt.echo, *args[:1]),
    lambda r, args: kt.keep(*args[:1]),
    lambda r, args: kcall.Tensor(*args[:1]),
    lambda r, args: kcall.to_device(*(args + [None])[:1],
                                    ["cpu", "cpu:0", "cpu:1", "cud",
                                     "cuda:99999999999"][r.below(5)]),
    lambda r, args: kcall.get_func("kcall.testing.echo")(*args),
]


def op_targets():
    """kcall.ops calls, when an op plugin is loaded (the pytest run loads
    examples/ops)."""
    names = kcall.list_ops("")
    return [lambda r, args, name=name: getattr(kcall.ops, name)(*args)
            for name in names[:8]]


def one_input(data, targets=TARGETS):
    """One input: a target and its arguments, read from `data`."""
    r = Reader(data)
    target = targets[r.below(len(targets))]
    try:
        args = [r.value() for _ in range(r.below(5))]
    except (TypeError, ValueError):
        return  # NumPy refused a view the recipe asked for
    try:
        result = target(r, args)
        np.asarray(result) if isinstance(result, kcall.Tensor) else None
    except BrokenProtocol:
        pass
    except CLEAN as e:
        if not str(e) and not isinstance(e, kcall.Error):
            raise AssertionError(f"{type(e).__name__} without a message "
                                 f"for {args!r}") from e
    except RecursionError:
        pass


def main():
    import atheris
    # Coverage of this harness's own code (which values an input makes,
    # which refusals it meets) guides the mutations: the module is imported
    # again, instrumented. The extension is not instrumented; a crash there
    # is caught as a signal and its input kept.
    with atheris.instrument_imports(include=["python_args_fuzz"]):
        import python_args_fuzz as harness
    plugin = os.environ.get("KCALL_FUZZ_PLUGIN")
    if plugin:
        kcall.load_plugin(plugin)
    targets = harness.TARGETS + harness.op_targets()
    atheris.Setup(sys.argv, lambda data: harness.one_input(data, targets))
    atheris.Fuzz()


if __name__ == "__main__":
    main()
