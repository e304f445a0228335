"""What the cases share: the versions, paths and custom-call targets of
the fixtures, element types and tolerances, the handlers' registration
with JAX, seeded inputs, and the constructor of a one-feature case.

Part of the fixture generator: see generate.py."""

import ctypes
import os

import numpy as np

import jax


JAX_VERSION = "0.10.2"
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_OUT = os.path.join(ROOT, "tests", "fixtures", "hlo_jax")
# The handlers, as tests/xla_ffi/generate.py built them; paths in the
# manifest are relative to the manifest's directory.
HANDLERS = os.path.join(ROOT, "tests", "fixtures", "xla_ffi",
                        "libjax_handlers.so")
HANDLERS_REL = "../xla_ffi/libjax_handlers.so"

# The targets these programs call, and each one's execute symbol. All are
# registered for platform "cpu" with the typed FFI; none keeps state, so
# `--xla-ffi LIB:SYMBOL=TARGET` is all kcall needs.
TARGETS = {
    "ffi_test.add_one": "AddOne",
    "ffi_test.scale_shift": "ScaleShift",
    "ffi_test.row_sum": "RowSum",
}

F16 = np.float16
F32 = np.float32
F64 = np.float64

# Tolerances, as numpy.isclose takes them: |got - want| <= atol +
# rtol * |want|, per element. Programs that only move, select or round
# once compare exactly; sums, dots and transcendental functions allow for
# another order of summation and another libm, a few ulps of the type.
EXACT = {"rtol": 0.0, "atol": 0.0}
F32_TOL = {"rtol": 1e-5, "atol": 1e-6}
# Transforms of N(0, 1) inputs (values up to ~30) in f32.
FFT_TOL = {"rtol": 1e-4, "atol": 1e-4}
F16_TOL = {"rtol": 2e-3, "atol": 0.0}   # 2 ulps of f16
BF16_TOL = {"rtol": 1.6e-2, "atol": 0.0}  # 2 ulps of bf16


# ---------------------------------------------------------------------------
# Registering the handlers with JAX
# ---------------------------------------------------------------------------


def register():
    jax.devices("cpu")
    lib = ctypes.CDLL(HANDLERS)
    for name, symbol in TARGETS.items():
        addr = ctypes.cast(getattr(lib, symbol), ctypes.c_void_p).value
        jax.ffi.register_ffi_target(name, jax.ffi.pycapsule(addr),
                                    platform="cpu")
    return lib


def like(x, shape=None):
    return jax.ShapeDtypeStruct(x.shape if shape is None else shape, x.dtype)


def add_one(x):
    return jax.ffi.ffi_call("ffi_test.add_one", like(x))(x)


def scale_shift(x, scale, shift):
    return jax.ffi.ffi_call("ffi_test.scale_shift", like(x))(
        x, scale=np.float32(scale), shift=np.float64(shift))


def row_sum(x):
    """(sums, maxima) of the rows of an f32[m, n]."""
    row = like(x, shape=(x.shape[0],))
    return jax.ffi.ffi_call("ffi_test.row_sum", (row, row))(x)


# ---------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------


def normal(seed, shape, scale=1.0, dtype=F32):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * scale).astype(dtype)


def uniform(seed, shape, low, high, dtype=F32):
    rng = np.random.default_rng(seed)
    return rng.uniform(low, high, shape).astype(dtype)


# ---------------------------------------------------------------------------


def single(name, fn, reference, inputs, tolerance, about, **extra):
    return dict(name=name, program=name, fn=fn, reference=reference,
                inputs=inputs, tolerance=tolerance, targets=[], about=about,
                **extra)


def as64(*xs):
    return [np.asarray(x).astype(F64) if np.asarray(x).dtype.kind == "f"
            else np.asarray(x) for x in xs]
