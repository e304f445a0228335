"""Generates the HLO program fixtures in tests/fixtures/hlo_jax/ with JAX.

    python tests/hlo_jax/generate.py [--out DIR] [--cases NAME...]

(or `make hlo-fixtures`, which makes a virtual environment, .venv-jax,
with jax, jaxlib and numpy, and runs this script in it). It needs jax and
jaxlib 0.10.2 and numpy, and the XLA FFI handlers already checked in,
tests/fixtures/xla_ffi/libjax_handlers.so (`make fixtures` remakes them).

What it does:

1. Registers the handlers of libjax_handlers.so with JAX for the CPU
   (jax.ffi.register_ffi_target), so that programs can call them through
   jax.ffi.ffi_call.
2. For every case below, a small jitted JAX program on fixed inputs:
   whole programs (an MLP, a layer norm, a softmax, a scan, a conditional,
   an attention block), each also with custom calls in the middle, and
   programs that each isolate one feature of HLO (dot with batch
   dimensions, reduce, reduce-window, compare and select, slices, ...).
3. Runs each in JAX and checks the results against a NumPy reference
   computed here in float64, within the case's tolerance: the tolerance a
   test gives kcall must hold for JAX's own results too.
4. Writes, per case, into DIR/<case>/: lowered.hlo
   (`jax.jit(f).lower(*inputs).as_text(dialect="hlo")`), optimized.hlo
   (`.compile().as_text()`, XLA:CPU's optimized module), inputN.npy and
   outputN.npy (JAX's results); and DIR/manifest.json, which describes
   every case (see tests/fixtures/hlo_jax/README.md).

With --cases, only the cases named are made again; the others stay as
the manifest lists them (their files untouched).

The output is deterministic: inputs come from fixed seeds, and source file
names in the modules' metadata are reduced to their base names, so the
checkout's location does not show. Running the script again with the same
versions of jax, jaxlib and numpy on the same kind of CPU rewrites the same
bytes (XLA:CPU may pick other instructions on another CPU, and its last
bits of exp or tanh may then differ, within the tolerances). --cases
makes only the cases named and keeps the others as the manifest has them,
so that adding a case does not rewrite the rest.
"""

import argparse
import ctypes
import hashlib
import json
import os
import platform
import re
import shutil
import sys

import numpy as np

import jax
import jax.numpy as jnp
import jaxlib
from jax.experimental.layout import Format, Layout

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
# The whole programs, each without and with custom calls
# ---------------------------------------------------------------------------


def mlp(ffi):
    def f(x, w1, b1, w2, b2):
        h = jax.nn.relu(x @ w1 + b1)
        if ffi:
            h = add_one(h)
        return h @ w2 + b2

    def r(x, w1, b1, w2, b2):
        h = np.maximum(x @ w1 + b1, 0)
        if ffi:
            h = h + 1
        return [h @ w2 + b2]
    return f, r


def layer_norm(ffi):
    eps = 1e-5

    def f(x, gamma, beta):
        n = x.shape[-1]
        if ffi:
            mean = row_sum(x)[0][:, None] / n
            d = x - mean
            var = row_sum(d * d)[0][:, None] / n
        else:
            mean = jnp.mean(x, axis=-1, keepdims=True)
            d = x - mean
            var = jnp.mean(d * d, axis=-1, keepdims=True)
        return d * jax.lax.rsqrt(var + eps) * gamma + beta

    def r(x, gamma, beta):
        x = x.astype(F64)
        d = x - x.mean(axis=-1, keepdims=True)
        var = (d * d).mean(axis=-1, keepdims=True)
        return [d / np.sqrt(var + eps) * gamma + beta]
    return f, r


def softmax(ffi):
    def f(x):
        if ffi:
            m = row_sum(x)[1][:, None]
            e = jnp.exp(x - m)
            return e / row_sum(e)[0][:, None]
        return jax.nn.softmax(x, axis=-1)

    def r(x):
        e = np.exp(x.astype(F64) - x.max(axis=-1, keepdims=True))
        return [e / e.sum(axis=-1, keepdims=True)]
    return f, r


def scan(ffi):
    # h_t = 0.5 * h_{t-1} + x_t (plus one through the custom call), every
    # h_t stacked: a while loop over 5 steps.
    def f(h0, xs):
        def step(h, x):
            h = h * 0.5
            if ffi:
                h = add_one(h)
            h = h + x
            return h, h
        return jax.lax.scan(step, h0, xs)

    def r(h0, xs):
        h = h0.astype(F64)
        ys = []
        for x in xs:
            h = h * 0.5 + (1 if ffi else 0) + x
            ys.append(h)
        return [h, np.stack(ys)]
    return f, r


def cond(ffi):
    # Two conditionals on two predicate parameters, one true and one
    # false, so that both branches run.
    def f(p, q, x):
        if ffi:
            def g(c):
                return jax.lax.cond(c, lambda v: add_one(v * 2.0),
                                    lambda v: scale_shift(v, 0.5, -1.0), x)
        else:
            def g(c):
                return jax.lax.cond(c, lambda v: v * 2.0 + 1.0,
                                    lambda v: v - 3.0, x)
        return g(p), g(q)

    def r(p, q, x):
        def g(c):
            if c:
                return x * 2 + 1
            return x * 0.5 - 1 if ffi else x - 3
        return [g(p), g(q)]
    return f, r


def attention(ffi):
    def f(x, wq, wk, wv):
        d = x.shape[-1]
        q, k, v = x @ wq, x @ wk, x @ wv
        s = jnp.einsum("bqd,bkd->bqk", q, k)
        if ffi:
            s = scale_shift(s, 1.0 / np.sqrt(d), 0.0)
        else:
            s = s / np.sqrt(d).astype(F32)
        p = jax.nn.softmax(s, axis=-1)
        return jnp.einsum("bqk,bkd->bqd", p, v)

    def r(x, wq, wk, wv):
        x = x.astype(F64)
        q, k, v = x @ wq, x @ wk, x @ wv
        s = np.einsum("bqd,bkd->bqk", q, k) / np.sqrt(x.shape[-1])
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        p = e / e.sum(axis=-1, keepdims=True)
        return [np.einsum("bqk,bkd->bqd", p, v)]
    return f, r


def whole_programs():
    cases = []

    def both(name, make, inputs, tol, about, targets):
        for ffi in (False, True):
            f, r = make(ffi)
            cases.append(dict(
                name=name + ("_ffi" if ffi else ""), program=name, fn=f,
                reference=r, inputs=inputs, tolerance=tol,
                targets=targets if ffi else [],
                about=about[ffi]))

    mlp_inputs = [normal(1, (4, 8)), normal(2, (8, 16), 0.5), normal(3, (16,), 0.1),
                  normal(4, (16, 4), 0.5), normal(5, (4,), 0.1)]
    both("mlp", mlp, mlp_inputs, F32_TOL,
         ["two dense layers with relu between: dot, add, maximum",
          "the MLP with ffi_test.add_one on the hidden activation"],
         ["ffi_test.add_one"])
    both("layer_norm", layer_norm,
         [normal(6, (4, 16), 2.0, F32) + F32(1),
          normal(7, (16,), 0.5) + F32(1), normal(8, (16,), 0.1)],
         F32_TOL,
         ["layer normalisation over the last axis: reduce, rsqrt",
          "the layer norm with its two sums from ffi_test.row_sum"],
         ["ffi_test.row_sum"])
    both("softmax", softmax, [normal(9, (4, 8), 2.0)], F32_TOL,
         ["softmax over the last axis: reduce (max, add), exponential, "
          "divide",
          "the softmax with the row maxima and sums from ffi_test.row_sum"],
         ["ffi_test.row_sum"])
    both("scan", scan, [normal(10, (8,)), normal(11, (5, 8))], F32_TOL,
         ["jax.lax.scan over 5 steps of h = 0.5 h + x: a while loop",
          "the scan with ffi_test.add_one in the loop body"],
         ["ffi_test.add_one"])
    both("cond", cond, [np.bool_(True), np.bool_(False), normal(12, (3, 4))],
         F32_TOL,
         ["jax.lax.cond on a true and a false predicate parameter: two "
          "conditionals, each branch taken once",
          "the conditionals with ffi_test.add_one in one branch and "
          "ffi_test.scale_shift in the other"],
         ["ffi_test.add_one", "ffi_test.scale_shift"])
    both("attention", attention,
         [normal(13, (2, 4, 8)), normal(14, (8, 8), 0.5),
          normal(15, (8, 8), 0.5), normal(16, (8, 8), 0.5)],
         F32_TOL,
         ["an attention block: q/k/v projections, scores and output as dots "
          "with a batch dimension, softmax",
          "the attention block with the scores scaled by "
          "ffi_test.scale_shift"],
         ["ffi_test.scale_shift"])
    return cases


# ---------------------------------------------------------------------------
# Programs that isolate one feature
# ---------------------------------------------------------------------------


def single(name, fn, reference, inputs, tolerance, about, **extra):
    return dict(name=name, program=name, fn=fn, reference=reference,
                inputs=inputs, tolerance=tolerance, targets=[], about=about,
                **extra)


def as64(*xs):
    return [np.asarray(x).astype(F64) if np.asarray(x).dtype.kind == "f"
            else np.asarray(x) for x in xs]


def single_programs():
    a = normal(20, (2, 3, 4))
    b = normal(21, (2, 4, 5))
    c = normal(22, (3, 2))
    m = normal(23, (3, 5))
    i5 = np.arange(4 * 6, dtype=F32).reshape(4, 6) * F32(0.5) - F32(5)
    cases = [
        single("elementwise",
               lambda x, y: (jnp.maximum(x * y - x / (y + 3.0), 0.0),
                             jnp.exp(-x) + jnp.log(y + 3.0),
                             (x * 4).astype(jnp.int32),
                             jnp.broadcast_to(y, (2, 3, 4)).reshape(6, 4)),
               lambda x, y: [np.maximum(x * y - x / (y + 3.0), 0),
                             np.exp(-x) + np.log(y + 3.0),
                             np.trunc(x.astype(F32) * F32(4)).astype(np.int32),
                             np.broadcast_to(y, (2, 3, 4)).reshape(6, 4)],
               [normal(24, (3, 4)), uniform(25, (3, 4), -2, 2)], F32_TOL,
               "what kcall runs today: elementwise arithmetic, exponential, "
               "log, convert, broadcast, reshape"),
        single("dot",
               lambda x, y, z, w: (jnp.einsum("bij,bjk->bik", x, y),
                                   jnp.einsum("jb,jk->bk", z, w)),
               lambda x, y, z, w: [np.einsum("bij,bjk->bik", x, y),
                                   np.einsum("jb,jk->bk", z, w)],
               [a, b, c, m], F32_TOL,
               "dot with a batch dimension (bij,bjk->bik), and one "
               "contracting the lhs's first dimension (jb,jk->bk)"),
        single("reduce",
               lambda x: (x.sum(axis=1), x.max(axis=(0, 2)), x.sum()),
               lambda x: [x.sum(axis=1), x.max(axis=(0, 2)), x.sum()],
               [a], F32_TOL,
               "reduce: sums over one axis, maxima over two, the total"),
        single("reduce_window",
               lambda x: (jax.lax.reduce_window(
                   x, -jnp.inf, jax.lax.max, (2, 2), (2, 2), "VALID"),
                   jax.lax.reduce_window(
                       x, 0.0, jax.lax.add, (3, 3), (1, 2),
                       ((1, 1), (1, 1)))),
               lambda x: [ref_pool(x, np.max, -np.inf, (2, 2), (2, 2),
                                   ((0, 0), (0, 0))),
                          ref_pool(x, np.sum, 0.0, (3, 3), (1, 2),
                                   ((1, 1), (1, 1)))],
               [i5 * F32(0.25)], F32_TOL,
               "reduce-window: a 2x2 max pool with stride 2, a padded 3x3 "
               "sum with strides 1, 2"),
        single("compare_select",
               lambda x, y: (jnp.where(x > y, x, y * 2.0), x <= y),
               lambda x, y: [np.where(x > y, x, y * 2), x <= y],
               [normal(26, (3, 4)), normal(27, (3, 4))], EXACT,
               "compare (gt, le) and select"),
        single("slice",
               lambda x: (x[1:3, ::2], x[:, 4:1:-1]),
               lambda x: [x[1:3, ::2], x[:, 4:1:-1]],
               [i5], EXACT,
               "slice with a stride, and a reversed slice (rev)"),
        single("dynamic_slice",
               lambda x, i: jax.lax.dynamic_slice(x, (i, 1), (2, 3)),
               lambda x, i: [x[int(i):int(i) + 2, 1:4]],
               [i5, np.int32(1)], EXACT,
               "dynamic-slice at a start index read from a parameter"),
        single("dynamic_update_slice",
               lambda x, u, i: jax.lax.dynamic_update_slice(x, u, (i, 2)),
               lambda x, u, i: [ref_dus(x, u, (int(i), 2))],
               [i5, normal(28, (2, 3)), np.int32(2)], EXACT,
               "dynamic-update-slice at a start index read from a parameter"),
        single("concatenate",
               lambda x, y: jnp.concatenate([x, y, x], axis=1),
               lambda x, y: [np.concatenate([x, y, x], axis=1)],
               [normal(29, (2, 3)), normal(30, (2, 1))], EXACT,
               "concatenate along dimension 1"),
        single("pad",
               lambda x: jax.lax.pad(x, F32(-1), ((1, 2, 0), (0, -1, 1))),
               lambda x: [ref_pad(x)],
               [normal(31, (3, 4))], EXACT,
               "pad with edge padding low and high, negative high padding "
               "and interior padding"),
        single("iota",
               lambda x, n: (x + jax.lax.broadcasted_iota(F32, (3, 4), 1),
                             jnp.arange(6, dtype=jnp.int32) * n),
               lambda x, n: [x + np.arange(4, dtype=F32)[None, :],
                             np.arange(6, dtype=np.int32) * n],
               [normal(32, (3, 4)), np.int32(3)], EXACT,
               "iota along dimension 1 of f32[3,4], and an s32 iota"),
        single("transpose",
               lambda x: (jnp.transpose(x, (2, 0, 1)), x.T),
               lambda x: [np.transpose(x, (2, 0, 1)), x.T],
               [a], EXACT,
               "transpose of f32[2,3,4] by (2,0,1) and by (2,1,0)"),
        single("unary_math",
               lambda x: (jnp.tanh(x), jnp.sqrt(jnp.abs(x)),
                          jax.lax.rsqrt(x * x + 1.0)),
               lambda x: [np.tanh(x), np.sqrt(np.abs(x)),
                          1 / np.sqrt(x * x + 1)],
               [normal(33, (3, 4), 2.0)], F32_TOL,
               "tanh, abs, sqrt, rsqrt"),
        single("f16",
               lambda x, y: (x + y) * y - x / (y + F16(4)),
               lambda x, y: [(x + y) * y - x / (y + 4)],
               [normal(34, (3, 4), 1.0, F16), uniform(35, (3, 4), -1, 1, F16)],
               F16_TOL,
               "f16 arithmetic on f16 parameters and result"),
        single("bf16",
               lambda x, y: ((x.astype(jnp.bfloat16) * y.astype(jnp.bfloat16)
                              + y.astype(jnp.bfloat16)).astype(F32)),
               lambda x, y: [x * y + y],
               [normal(36, (3, 4)), normal(37, (3, 4))], BF16_TOL,
               "bf16 arithmetic between converts from and to f32 (.npy has "
               "no bf16)"),
        single("complex",
               lambda xr, xi, yr, yi: complex_parts(
                   jax.lax.complex(xr, xi), jax.lax.complex(yr, yi)),
               lambda xr, xi, yr, yi: ref_complex_parts(
                   xr + 1j * xi, yr + 1j * yi),
               [normal(38, (2, 3)), normal(39, (2, 3)),
                normal(40, (2, 3)), normal(41, (2, 3))], F32_TOL,
               "c64 arithmetic (multiply, divide, add, exp) between complex, "
               "real and imag, on f32 parameters and results (kcall's .npy "
               "files have no complex)"),
        single("column_major",
               lambda x, y: x * 2.0 + y,
               lambda x, y: [x * 2 + y],
               [normal(42, (3, 4)), normal(43, (3, 4))], EXACT,
               "x * 2 + y with x, an f32[3,4] parameter, in column-major "
               "layout ({0,1}), asked for with jax.experimental.layout; XLA "
               "sets the layout when it compiles, so only the optimized "
               "module has it",
               column_major=True),
    ]
    return cases


def ref_pool(x, op, init, window, strides, padding):
    x = np.pad(x, padding, constant_values=init)
    rows = (x.shape[0] - window[0]) // strides[0] + 1
    cols = (x.shape[1] - window[1]) // strides[1] + 1
    out = np.empty((rows, cols), F64)
    for i in range(rows):
        for j in range(cols):
            r, c = i * strides[0], j * strides[1]
            out[i, j] = op(x[r:r + window[0], c:c + window[1]])
    return out


def ref_dus(x, u, start):
    y = x.copy()
    y[start[0]:start[0] + u.shape[0], start[1]:start[1] + u.shape[1]] = u
    return y


def ref_pad(x):
    # ((1, 2, 0), (0, -1, 1)): interior 1 between columns, then the last
    # column cut; one row above, two below; the value -1.
    rows, cols = x.shape
    inner = np.full((rows, 2 * cols - 1), -1.0)
    inner[:, ::2] = x
    inner = inner[:, :-1]
    out = np.full((rows + 3, inner.shape[1]), -1.0)
    out[1:1 + rows] = inner
    return out


def complex_parts(z, w):
    r = z * w + z / w - jnp.exp(z)
    return jnp.real(r), jnp.imag(r)


def ref_complex_parts(z, w):
    r = z * w + z / w - np.exp(z)
    return [r.real, r.imag]


def ref_stable_order(x, axis, descending=False):
    """Indices of a stable sort along `axis`, -0 equal to 0 and NaNs
    last, as JAX's comparator orders floats."""
    keys = np.where(np.isnan(x), np.inf, x)
    rank = np.where(np.isnan(x), 1, 0)  # NaN after inf
    if descending:
        keys, rank = -keys, -rank
    # lexsort sorts by the last key first; it is stable.
    moved_k = np.moveaxis(keys, axis, -1)
    moved_r = np.moveaxis(rank, axis, -1)
    out = np.empty(moved_k.shape, np.int64)
    for idx in np.ndindex(moved_k.shape[:-1]):
        out[idx] = np.lexsort((moved_k[idx], moved_r[idx]))
    return np.moveaxis(out, -1, axis)


def grad_sin_sin(x):
    return jnp.sum(jnp.sin(jnp.sin(x)))


def random_draws(key):
    k1, k2 = jax.random.split(jax.random.wrap_key_data(key))
    return (jax.random.bits(k1, (6,)), jax.random.uniform(k2, (2, 3)))


def sorting_programs():
    """sort, top_k, checkpoint and random: the cases of ops_sort.c and
    ops_bits.c (`--cases` makes only these)."""
    nan = np.nan
    x = np.array([[3, nan, -0.0, 1, 0.0, -2], [5, 5, -1, nan, 2, 5],
                  [0.5, -0.0, 0.0, -np.inf, np.inf, 1]], F32)
    keys = np.array([2, 0, 2, 1, 0, 2, 1], np.int32)
    vals = normal(50, (7,))
    ties = np.array([[1, 4, 4, 2, 4, 0], [-1, 3, 3, 3, 7, 7]], F32)
    key = np.asarray(jax.random.key_data(jax.random.PRNGKey(42)))
    with jax.disable_jit():
        draws = [np.asarray(a) for a in random_draws(key)]
    return [
        single("sort",
               lambda a: jnp.sort(a, axis=-1),
               lambda a: [np.take_along_axis(a, ref_stable_order(a, -1), -1)],
               [x], EXACT,
               "jnp.sort of f32[3,6] along the last axis, with NaN, -0, 0 "
               "and infinities: JAX's comparator (-0 equal to 0, NaN last)"),
        single("argsort",
               lambda a: jnp.argsort(a, axis=0),
               lambda a: [ref_stable_order(a, 0)],
               [x], EXACT,
               "jnp.argsort along axis 0 of f32[3,6] (a sort of two "
               "operands, the values and an iota, along a dimension that is "
               "not the last)"),
        single("sort_two",
               lambda k, v: jax.lax.sort((k, v), num_keys=1),
               lambda k, v: [np.sort(k, kind="stable"),
                             v[np.argsort(k, kind="stable")]],
               [keys, vals], EXACT,
               "lax.sort of (s32 keys, f32 values) by the keys: stable, the "
               "values carried along"),
        single("top_k",
               lambda a: jax.lax.top_k(a, 3),
               lambda a: [np.take_along_axis(
                   a, ref_stable_order(a, -1, True)[:, :3], -1),
                   ref_stable_order(a, -1, True)[:, :3]],
               [ties], EXACT,
               "lax.top_k with k=3 of rows with ties (lower indices first): "
               "topk lowered, XLA:CPU's TopK custom call optimized"),
        single("checkpoint",
               jax.grad(jax.checkpoint(grad_sin_sin)),
               lambda a: [np.cos(np.sin(a)) * np.cos(a)],
               [normal(51, (2, 5))], F32_TOL,
               "the gradient of a jax.checkpoint-ed function: the saved "
               "values pass an opt-barrier"),
        single("random_uniform",
               random_draws,
               lambda k: draws,
               [key], EXACT,
               "jax.random.split, bits and uniform on a u32[2] key (threefry "
               "as integer arithmetic, bitcast-convert to floats); the "
               "reference is JAX's own result without jit"),
    ]


def indexing_programs():
    """gather and scatter as JAX writes indexing: an embedding lookup and
    its gradient, NumPy's fancy indexing, .at[] updates and
    take_along_axis."""
    table = normal(50, (10, 4))
    ids = np.array([3, 0, 7, 3, 9, 3], np.int32)
    x = np.arange(5 * 6, dtype=F32).reshape(5, 6) * F32(0.25) - F32(3)
    rows = np.array([[0, 4], [2, 2], [4, 1]], np.int32)
    cols = np.array([[5, 0], [1, 3], [2, 2]], np.int32)
    dup = np.array([1, 3, 1, 1, 4], np.int32)
    n = np.arange(5 * 3, dtype=np.int32).reshape(5, 3)

    def embedding(t, i):
        def loss(t):
            return jnp.sum(jnp.tanh(t[i]) * 2.0)
        return t[i], jax.grad(loss)(t)

    def ref_embedding(t, i):
        g = np.zeros_like(t)
        np.add.at(g, i, 2.0 * (1.0 - np.tanh(t[i]) ** 2))
        return [t[i], g]

    def ref_add(x, i, v, n, w):
        y, m, z = x.copy(), n.copy(), x.copy()
        np.add.at(y, i, v)
        np.add.at(m, i, w)
        np.maximum.at(z, i, v)
        return [y, m, z]

    def ref_set(x, i, v):
        y = x.copy()
        for k, j in enumerate(i):
            if -len(y) <= j < len(y):  # JAX drops the others
                y[j] = v[k]
        return [y]

    return [
        single("embedding",
               embedding, ref_embedding,
               [table, ids], F32_TOL,
               "an embedding lookup table[ids] (gather) and the gradient of "
               "a loss over it with respect to the table (a scatter-add, "
               "with repeated ids)"),
        single("gather_fancy",
               lambda x, i, j: (x[i], x[i, j], x[i, 1:4]),
               lambda x, i, j: [x[i], x[i, j], x[i, 1:4]],
               [x, rows, cols], EXACT,
               "NumPy fancy indexing: x[idx] with 2-D indices, x[idx, jdx] "
               "and x[idx, 1:4] (gather)"),
        single("scatter_add",
               lambda x, i, v, n, w: (x.at[i].add(v), n.at[i].add(w),
                                      x.at[i].max(v)),
               ref_add,
               [x, dup, normal(51, (5, 6)), n,
                np.arange(5 * 3, dtype=np.int32).reshape(5, 3) - 7],
               F32_TOL,
               "x.at[idx].add(v) with repeated indices, on f32 and s32, and "
               "x.at[idx].max(v) (scatter with add and maximum)"),
        single("scatter_set",
               lambda x, i, v: x.at[i].set(v),
               ref_set,
               [x, np.array([4, 9, 0, -2], np.int32), normal(52, (4, 6))],
               EXACT,
               "x.at[idx].set(v) with a negative index and one past the end, "
               "which JAX drops (scatter assigning its update)"),
        single("take_along_axis",
               lambda x, i: jnp.take_along_axis(x, i, axis=1),
               lambda x, i: [np.take_along_axis(x, i, axis=1)],
               [x, np.array([[5, 0, 2], [1, 1, 1], [0, 3, 5], [2, 4, 4],
                             [3, 3, 0]], np.int32)],
               EXACT,
               "jnp.take_along_axis along axis 1 (a gather with batching "
               "dimensions as JAX lowers it)"),
    ]


# ---------------------------------------------------------------------------
# Convolutions and a small CNN
# ---------------------------------------------------------------------------

CONV_TOL = {"rtol": 1e-4, "atol": 1e-5}


def ref_conv(x, w, stride, pad, groups=1, lhs_dil=(1, 1), rhs_dil=(1, 1)):
    """NHWC x HWIO in float64, as XLA defines a convolution: lhs_dil holes
    between input elements, rhs_dil between kernel taps, then pad
    ((lo, hi) per spatial dimension), then windows at `stride`."""
    n, h, wd, c = x.shape
    kh, kw, ci, o = w.shape
    dh, dw = (h - 1) * lhs_dil[0] + 1, (wd - 1) * lhs_dil[1] + 1
    xd = np.zeros((n, dh, dw, c))
    xd[:, ::lhs_dil[0], ::lhs_dil[1], :] = x
    lo = [max(p[0], 0) for p in pad]
    hi = [max(p[1], 0) for p in pad]
    xp = np.pad(xd, ((0, 0), (lo[0], hi[0]), (lo[1], hi[1]), (0, 0)))
    xp = xp[:, max(-pad[0][0], 0):xp.shape[1] - max(-pad[0][1], 0),
            max(-pad[1][0], 0):xp.shape[2] - max(-pad[1][1], 0), :]
    eh, ew = (kh - 1) * rhs_dil[0] + 1, (kw - 1) * rhs_dil[1] + 1
    oh = (xp.shape[1] - eh) // stride[0] + 1
    ow = (xp.shape[2] - ew) // stride[1] + 1
    out = np.zeros((n, oh, ow, o))
    og = o // groups
    for g in range(groups):
        for i in range(kh):
            for j in range(kw):
                patch = xp[:, i * rhs_dil[0]:i * rhs_dil[0] + (oh - 1) * stride[0] + 1:stride[0],
                           j * rhs_dil[1]:j * rhs_dil[1] + (ow - 1) * stride[1] + 1:stride[1],
                           g * ci:(g + 1) * ci]
                out[..., g * og:(g + 1) * og] += patch @ w[i, j, :, g * og:(g + 1) * og]
    return out


def ref_batch_groups(x, w, groups):
    """batch_group_count: the batch in `groups` groups, output feature
    group g reading batch group g."""
    nb, og = x.shape[0] // groups, w.shape[3] // groups
    return np.concatenate(
        [ref_conv(x[g * nb:(g + 1) * nb], w[..., g * og:(g + 1) * og],
                  (1, 1), ((0, 0), (0, 0))) for g in range(groups)], axis=3)


def conv_nhwc(x, w, stride, padding, **kw):
    return jax.lax.conv_general_dilated(
        x, w, stride, padding, dimension_numbers=("NHWC", "HWIO", "NHWC"), **kw)


def ref_maxpool(x):
    n, h, w, c = x.shape
    return x.reshape(n, h // 2, 2, w // 2, 2, c).max(axis=(2, 4))


def cnn_forward(params, x):
    w1, b1, w2, b2, w3, b3 = params
    h = jax.nn.relu(conv_nhwc(x, w1, (1, 1), "SAME") + b1)
    h = jax.nn.relu(conv_nhwc(h, w2, (2, 2), "SAME") + b2)
    h = jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, (1, 2, 2, 1),
                              (1, 2, 2, 1), "VALID")
    return h.reshape(h.shape[0], -1) @ w3 + b3


def cnn_loss(params, x, y):
    return jnp.mean((cnn_forward(params, x) - y) ** 2)


def cnn_train_step(x, y, *params):
    loss, grads = jax.value_and_grad(cnn_loss)(params, x, y)
    return (loss,) + tuple(p - 0.1 * g for p, g in zip(params, grads))


def ref_cnn(params, x, y=None):
    """The CNN's forward pass in float64 and, given targets, its loss and
    one SGD step, by hand-written backpropagation."""
    w1, b1, w2, b2, w3, b3 = params
    z1 = ref_conv(x, w1, (1, 1), ((1, 1), (1, 1))) + b1
    h1 = np.maximum(z1, 0)
    z2 = ref_conv(h1, w2, (2, 2), ((0, 1), (0, 1))) + b2
    h2 = np.maximum(z2, 0)
    pooled = ref_maxpool(h2)
    flat = pooled.reshape(x.shape[0], -1)
    out = flat @ w3 + b3
    if y is None:
        return [out]
    loss = np.mean((out - y) ** 2)
    dout = 2 * (out - y) / out.size
    dw3, db3 = flat.T @ dout, dout.sum(axis=0)
    dpool = (dout @ w3.T).reshape(pooled.shape)
    # Max pooling's gradient goes to the first maximum of each window.
    dh2 = np.zeros_like(h2)
    n, ph, pw, c = pooled.shape
    for b in range(n):
        for i in range(ph):
            for j in range(pw):
                for ch in range(c):
                    win = h2[b, 2 * i:2 * i + 2, 2 * j:2 * j + 2, ch].reshape(-1)
                    k = int(np.argmax(win))
                    dh2[b, 2 * i + k // 2, 2 * j + k % 2, ch] += dpool[b, i, j, ch]
    dz2 = dh2 * (z2 > 0)
    dw2, dh1 = conv_backward(h1, w2, dz2, (2, 2), ((0, 1), (0, 1)))
    db2 = dz2.sum(axis=(0, 1, 2))
    dz1 = dh1 * (z1 > 0)
    dw1, _ = conv_backward(x, w1, dz1, (1, 1), ((1, 1), (1, 1)))
    db1 = dz1.sum(axis=(0, 1, 2))
    grads = [dw1, db1, dw2, db2, dw3, db3]
    return [loss] + [p - 0.1 * g for p, g in zip(params, grads)]


def conv_backward(x, w, dout, stride, pad):
    """The gradients of ref_conv (no dilation, no groups, padding >= 0)
    with respect to the kernel and the input."""
    kh, kw = w.shape[:2]
    xp = np.pad(x, ((0, 0), pad[0], pad[1], (0, 0)))
    dxp = np.zeros_like(xp)
    dw = np.zeros_like(w, dtype=F64)
    oh, ow = dout.shape[1:3]
    for i in range(kh):
        for j in range(kw):
            sl = (slice(None), slice(i, i + (oh - 1) * stride[0] + 1, stride[0]),
                  slice(j, j + (ow - 1) * stride[1] + 1, stride[1]))
            dw[i, j] = np.einsum("nhwc,nhwo->co", xp[sl], dout)
            dxp[sl] += dout @ w[i, j].T
    h, wd = x.shape[1:3]
    return dw, dxp[:, pad[0][0]:pad[0][0] + h, pad[1][0]:pad[1][0] + wd]


def conv_programs():
    x = normal(50, (2, 7, 6, 3))
    w = normal(51, (3, 3, 3, 4), 0.5)
    xc = normal(52, (2, 3, 7, 6))
    wc = normal(53, (5, 3, 2, 3), 0.5)
    xd = normal(54, (2, 6, 6, 4))
    wd = normal(55, (3, 3, 1, 8), 0.5)
    cnn_params = [normal(56, (3, 3, 1, 4), 0.5), normal(57, (4,), 0.1),
                  normal(58, (3, 3, 4, 4), 0.5), normal(59, (4,), 0.1),
                  normal(60, (16, 3), 0.5), normal(61, (3,), 0.1)]
    cnn_x = normal(62, (2, 8, 8, 1))
    cnn_y = normal(63, (2, 3))

    def nchw(f):
        return lambda x, w: f(np.transpose(x, (0, 2, 3, 1)),
                              np.transpose(w, (2, 3, 1, 0))).transpose(0, 3, 1, 2)

    return [
        single("conv_nhwc",
               lambda x, w: (conv_nhwc(x, w, (1, 1), "SAME"),
                             conv_nhwc(x, w, (2, 1), ((2, 0), (1, 2)),
                                       rhs_dilation=(1, 2))),
               lambda x, w: [ref_conv(x, w, (1, 1), ((1, 1), (1, 1))),
                             ref_conv(x, w, (2, 1), ((2, 0), (1, 2)),
                                      rhs_dil=(1, 2))],
               [x, w], CONV_TOL,
               "lax.conv_general_dilated in NHWC/HWIO: a 3x3 SAME "
               "convolution, and one with strides 2x1, asymmetric padding "
               "and kernel dilation 1x2"),
        single("conv_nchw",
               lambda x, w: jax.lax.conv_general_dilated(
                   x, w, (1, 2), ((1, 0), (0, 1)), lhs_dilation=(2, 1),
                   dimension_numbers=("NCHW", "OIHW", "NCHW")),
               lambda x, w: [nchw(lambda a, b: ref_conv(
                   a, b, (1, 2), ((1, 0), (0, 1)), lhs_dil=(2, 1)))(x, w)],
               [xc, wc], CONV_TOL,
               "lax.conv_general_dilated in NCHW/OIHW with input dilation "
               "2x1, strides 1x2 and asymmetric padding"),
        single("conv_depthwise",
               lambda x, w: conv_nhwc(x, w, (1, 1), "SAME",
                                      feature_group_count=4),
               lambda x, w: [ref_conv(x, w, (1, 1), ((1, 1), (1, 1)),
                                      groups=4)],
               [xd, wd], CONV_TOL,
               "a depthwise 3x3 convolution: feature_group_count 4, two "
               "outputs per input feature"),
        single("conv_groups",
               lambda x, w, xb, wb: (
                   conv_nhwc(x, w, (1, 1), ((1, 0), (0, 1)),
                             feature_group_count=2),
                   conv_nhwc(xb, wb, (1, 1), "VALID", batch_group_count=2)),
               lambda x, w, xb, wb: [
                   ref_conv(x, w, (1, 1), ((1, 0), (0, 1)), groups=2),
                   ref_batch_groups(xb, wb, 2)],
               [normal(64, (2, 5, 5, 6)), normal(65, (2, 2, 3, 4), 0.5),
                normal(66, (4, 5, 5, 3)), normal(67, (2, 2, 3, 6), 0.5)],
               CONV_TOL,
               "feature_group_count 2 (three input features per group), and "
               "batch_group_count 2 over a batch of 4 (the result's batch is "
               "2, output features 0-2 read batch elements 0-1, 3-5 read "
               "2-3)"),
        single("conv_bf16",
               lambda x, w: jax.lax.conv_general_dilated(
                   x.astype(jnp.bfloat16), w.astype(jnp.bfloat16), (1, 1),
                   "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"),
                   preferred_element_type=F32),
               lambda x, w: [ref_conv(
                   x.astype(jnp.bfloat16).astype(F64),
                   w.astype(jnp.bfloat16).astype(F64), (1, 1),
                   ((1, 1), (1, 1)))],
               [x, w], CONV_TOL,
               "a convolution of bf16 operands with an f32 result "
               "(preferred_element_type), the operands converted from f32 "
               "parameters (.npy has no bf16)"),
        single("cnn",
               lambda x, *p: cnn_forward(p, x),
               lambda x, *p: ref_cnn(p, x),
               [cnn_x] + cnn_params, CONV_TOL,
               "a small CNN: two 3x3 convolutions (the second with stride "
               "2) with relu, a 2x2 max pool and a dense layer"),
        single("cnn_train_step",
               cnn_train_step,
               lambda x, y, *p: ref_cnn(p, x, y),
               [cnn_x, cnn_y] + cnn_params, CONV_TOL,
               "one SGD step of the CNN on a squared error (jax.grad): "
               "convolutions for the kernel gradients, an input-dilated one "
               "for the strided convolution's input gradient, "
               "select-and-scatter for the max pool's"),
    ]


def parts(z):
    return [np.real(z), np.imag(z)]


def cx(re, im):
    return jax.lax.complex(re, im)


def fft_parts(*zs):
    out = []
    for z in zs:
        out += [jnp.real(z), jnp.imag(z)]
    return tuple(out)


def rbg_draws(key):
    k1, k2 = jax.random.split(jax.random.wrap_key_data(key, impl="rbg"))
    return (jax.random.bits(k1, (2, 3)), jax.random.uniform(k2, (5,)))


def fft_programs():
    """fft and rng-bit-generator: the cases of ops_fft.c and ops_rng.c
    (`--cases` makes only these). Complex values travel as f32 parts
    (kcall reads and writes no complex `.npy`)."""
    a8, b8 = normal(60, (3, 8)), normal(61, (3, 8))
    a97, b97 = normal(62, (97,)), normal(63, (97,))
    a7, b7 = normal(64, (2, 7)), normal(65, (2, 7))
    a16, b16 = normal(66, (16,)), normal(67, (16,))
    r97, r16 = normal(68, (4, 97)), normal(69, (2, 16))
    h5, g5 = normal(70, (3, 5)), normal(71, (3, 5))
    h49, g49 = normal(72, (2, 49)), normal(73, (2, 49))
    m6, n6 = normal(74, (2, 6, 5)), normal(75, (2, 6, 5))
    r3 = normal(76, (3, 4, 7))
    key = np.asarray(jax.random.key_data(jax.random.key(7, impl="rbg")))
    with jax.disable_jit():
        draws = [np.asarray(a) for a in rbg_draws(key)]
    return [
        single("fft",
               lambda a, b, c, d: fft_parts(jnp.fft.fft(cx(a, b)),
                                            jnp.fft.fft(cx(c, d))),
               lambda a, b, c, d: parts(np.fft.fft(a + 1j * b)) +
               parts(np.fft.fft(c + 1j * d)),
               [a8, b8, a97, b97], FFT_TOL,
               "jnp.fft.fft of c64[3,8] and of c64[97] (a prime length)"),
        single("ifft",
               lambda a, b, c, d: fft_parts(jnp.fft.ifft(cx(a, b)),
                                            jnp.fft.ifft(cx(c, d))),
               lambda a, b, c, d: parts(np.fft.ifft(a + 1j * b)) +
               parts(np.fft.ifft(c + 1j * d)),
               [a7, b7, a16, b16], FFT_TOL,
               "jnp.fft.ifft of c64[2,7] and of c64[16]: scaled by 1/N"),
        single("rfft",
               lambda a, b: fft_parts(jnp.fft.rfft(a), jnp.fft.rfft(b)),
               lambda a, b: parts(np.fft.rfft(a)) + parts(np.fft.rfft(b)),
               [r97, r16], FFT_TOL,
               "jnp.fft.rfft of f32[4,97] and of f32[2,16]: half spectra"),
        single("irfft",
               lambda a, b, c, d: (jnp.fft.irfft(cx(a, b), 8),
                                   jnp.fft.irfft(cx(c, d), 97)),
               lambda a, b, c, d: [np.fft.irfft(a + 1j * b, 8),
                                   np.fft.irfft(c + 1j * d, 97)],
               [h5, g5, h49, g49], FFT_TOL,
               "jnp.fft.irfft of c64[3,5] to 8 points and of c64[2,49] to "
               "97 (a prime length); the imaginary parts of the zero and "
               "Nyquist entries are ignored"),
        single("fft2",
               lambda a, b, c: fft_parts(jnp.fft.fft2(cx(a, b)),
                                         jnp.fft.rfftn(c)),
               lambda a, b, c: parts(np.fft.fft2(a + 1j * b)) +
               parts(np.fft.rfftn(c)),
               [m6, n6, r3], FFT_TOL,
               "jnp.fft.fft2 of c64[2,6,5] and jnp.fft.rfftn of f32[3,4,7] "
               "(three dimensions)"),
        single("random_rbg",
               rbg_draws,
               lambda k: draws,
               [key], EXACT,
               "jax.random.split, bits and uniform on an rbg key (u32[4]): "
               "rng-bit-generator lowered, XLA:CPU's expansion of it "
               "optimized; the reference is JAX's own result without jit"),
    ]

LINALG_TOL = {"rtol": 2e-4, "atol": 2e-4}


def spd(seed, batch, n):
    """Symmetric positive definite f32[batch, n, n]: A A^T + n I."""
    a = normal(seed, (batch, n, n))
    return (a @ a.transpose(0, 2, 1) + n * np.eye(n, dtype=F32)).astype(F32)


def linalg_programs():
    """jnp.linalg on the CPU: LAPACK custom calls (lapack_*_ffi), run by
    kcall's built-in targets (ops_linalg.c). Eigenvectors, singular vectors
    and Householder factors are defined up to signs (and LAPACKs differ in
    them), so the programs return what is not: reconstructions, values,
    Gram matrices."""
    s4 = spd(80, 2, 4)
    g = normal(81, (2, 4, 4)) + 4 * np.eye(4, dtype=F32)
    rhs = normal(82, (2, 4, 3))
    t43 = normal(83, (2, 4, 3))
    t35 = normal(84, (3, 5))
    s5 = spd(85, 3, 5)

    def ref_eigh(a):
        w, v = np.linalg.eigh(a)
        return [w, a, np.abs(np.swapaxes(v, -1, -2) @ v)]

    def usv(u, s, vt):
        return (u[..., :, :s.shape[-1]] * s[..., None, :]) @ vt[..., :s.shape[-1], :]

    return [
        single("linalg_cholesky",
               lambda a: (jnp.linalg.cholesky(a),
                          jnp.linalg.cholesky(a) @
                          jnp.swapaxes(jnp.linalg.cholesky(a), -1, -2)),
               lambda a: [np.linalg.cholesky(a), a],
               [s4], LINALG_TOL,
               "jnp.linalg.cholesky of f32[2,4,4]: lapack_spotrf_ffi in "
               "column-major layouts, its info turned into NaNs by the "
               "program; the factor and L L^T"),
        single("linalg_solve",
               lambda a, b: (jnp.linalg.solve(a, b), jnp.linalg.inv(a),
                             jnp.linalg.det(a), jnp.linalg.slogdet(a)[1]),
               lambda a, b: [np.linalg.solve(a, b), np.linalg.inv(a),
                             np.linalg.det(a), np.linalg.slogdet(a)[1]],
               [g, rhs], LINALG_TOL,
               "jnp.linalg.solve, inv, det and slogdet of f32[2,4,4]: "
               "lapack_sgetrf_ffi (pivots, info) and lapack_strsm_ffi"),
        single("linalg_eigh",
               lambda a: (lambda w, v: (w, (v * w[..., None, :]) @
                                        jnp.swapaxes(v, -1, -2),
                                        jnp.abs(jnp.swapaxes(v, -1, -2) @ v)))(
                   *jnp.linalg.eigh(a)),
               ref_eigh,
               [s5], LINALG_TOL,
               "jnp.linalg.eigh of f32[3,5,5]: lapack_ssyevd_ffi; the "
               "eigenvalues, V diag(w) V^T and |V^T V| (signs of "
               "eigenvectors are free)"),
        single("linalg_svd",
               lambda a, b: (lambda u, s, vt, u2, s2, vt2: (
                   s, usv(u, s, vt), jnp.abs(jnp.swapaxes(u, -1, -2) @ u),
                   s2, usv(u2, s2, vt2), jnp.linalg.svd(a, compute_uv=False)))(
                   *jnp.linalg.svd(a), *jnp.linalg.svd(b, full_matrices=False)),
               lambda a, b: [np.linalg.svd(a)[1], a, np.broadcast_to(
                   np.eye(4), (2, 4, 4)), np.linalg.svd(b)[1], b,
                   np.linalg.svd(a)[1]],
               [t43, t35], LINALG_TOL,
               "jnp.linalg.svd: lapack_sgesdd_ffi with mode A (f32[2,4,3], "
               "full matrices), S (f32[3,5]) and N (compute_uv=False); "
               "singular values, U S V^T and |U^T U|"),
        single("linalg_qr",
               lambda a, b: (lambda q, r, qc, rc: (
                   q @ r, jnp.abs(r), jnp.swapaxes(q, -1, -2) @ q,
                   qc @ rc, jnp.swapaxes(qc, -1, -2) @ qc))(
                   *jnp.linalg.qr(a), *jnp.linalg.qr(b, mode="complete")),
               lambda a, b: [a, np.abs(np.linalg.qr(a)[1]),
                             np.broadcast_to(np.eye(3), (2, 3, 3)), b,
                             np.broadcast_to(np.eye(4), (2, 4, 4))],
               [t43, t43], LINALG_TOL,
               "jnp.linalg.qr of f32[2,4,3], reduced and complete: "
               "lapack_sgeqrf_ffi and lapack_sorgqr_ffi; Q R, |R| and Q^T Q"),
    ]


def mlp_half(x, w1, b1, w2, b2, gamma, beta, dt):
    """dense, gelu (tanh form), layer norm, dense, tanh, softmax, each in
    `dt` (the parameters are converted to it first)."""
    x, w1, b1, w2, b2, gamma, beta = (
        a.astype(dt) for a in (x, w1, b1, w2, b2, gamma, beta))
    h = jax.nn.gelu(x @ w1 + b1, approximate=True)
    mean = jnp.mean(h, axis=-1, keepdims=True)
    d = h - mean
    var = jnp.mean(d * d, axis=-1, keepdims=True)
    h = d * jax.lax.rsqrt(var + dt(1e-3)) * gamma + beta
    return jax.nn.softmax(jnp.tanh(h @ w2 + b2), axis=-1)


def ref_mlp_half(x, w1, b1, w2, b2, gamma, beta):
    h = x @ w1 + b1
    h = 0.5 * h * (1 + np.tanh(np.sqrt(2 / np.pi) * (h + 0.044715 * h ** 3)))
    d = h - h.mean(axis=-1, keepdims=True)
    var = (d * d).mean(axis=-1, keepdims=True)
    h = d / np.sqrt(var + 1e-3) * gamma + beta
    e = np.exp(np.tanh(h @ w2 + b2))
    return [e / e.sum(axis=-1, keepdims=True)]


def complex_model(xr, xi, wr, wi, yr, yi):
    """A c64 matmul, then abs, exp, tanh, sqrt, expm1 of it and a compare
    (NE) with another complex value."""
    h = jax.lax.complex(xr, xi) @ jax.lax.complex(wr, wi)
    y = jax.lax.complex(yr, yi)
    e = jnp.exp(h * 0.25) + jnp.tanh(h * 0.5) - jnp.sqrt(h) * jnp.expm1(y)
    return jnp.real(e), jnp.imag(e), jnp.abs(h), h != y


def ref_complex_model(xr, xi, wr, wi, yr, yi):
    h = (xr + 1j * xi) @ (wr + 1j * wi)
    y = yr + 1j * yi
    e = np.exp(h * 0.25) + np.tanh(h * 0.5) - np.sqrt(h) * np.expm1(y)
    return [e.real, e.imag, np.abs(h), h != y]


def typed_programs():
    """f16, bf16 and complex models, and dot with JAX's
    preferred_element_type (`--cases` makes only these)."""
    rng = np.random.default_rng(80)
    s8a = rng.integers(-128, 128, (4, 16)).astype(np.int8)
    s8b = rng.integers(-128, 128, (16, 3)).astype(np.int8)
    u8a = rng.integers(0, 256, (2, 3, 8)).astype(np.uint8)
    u8b = rng.integers(0, 256, (2, 8, 5)).astype(np.uint8)
    mlp_in = [normal(81, (4, 8)), normal(82, (8, 16), 0.5),
              normal(83, (16,), 0.1), normal(84, (16, 6), 0.5),
              normal(85, (6,), 0.1), normal(86, (16,), 0.2) + F32(1),
              normal(87, (16,), 0.1)]
    h16 = [a.astype(F16) for a in mlp_in]
    ra, rb = normal(88, (5, 8)), normal(89, (8, 3))
    return [
        single("dot_int8",
               lambda a, b, c, d: (
                   jnp.matmul(a, b, preferred_element_type=jnp.int32),
                   jnp.einsum("bij,bjk->bik", c, d,
                              preferred_element_type=jnp.int32),
                   jnp.matmul(c[0], d[0], preferred_element_type=jnp.uint32)),
               lambda a, b, c, d: [
                   a.astype(np.int64) @ b.astype(np.int64),
                   np.einsum("bij,bjk->bik", c.astype(np.int64),
                             d.astype(np.int64)),
                   c[0].astype(np.int64) @ d[0].astype(np.int64)],
               [s8a, s8b, u8a, u8b], EXACT,
               "dot of s8 operands with an s32 result "
               "(preferred_element_type), with a batch dimension of u8 "
               "operands giving s32, and u8 giving u32"),
        single("dot_half_f32",
               lambda a, b: (
                   jnp.matmul(a.astype(jnp.bfloat16), b.astype(jnp.bfloat16),
                              preferred_element_type=F32),
                   jnp.matmul(a.astype(F16), b.astype(F16),
                              preferred_element_type=F32),
                   jnp.matmul(a.astype(F16), b.astype(F16)).astype(F32)),
               lambda a, b: [
                   a.astype(jnp.bfloat16).astype(F64)
                   @ b.astype(jnp.bfloat16).astype(F64),
                   a.astype(F16).astype(F64) @ b.astype(F16).astype(F64),
                   a.astype(F16).astype(F64) @ b.astype(F16).astype(F64)],
               [ra, rb], {"rtol": 2e-3, "atol": 2e-3},
               "dot of bf16 and of f16 operands with an f32 result "
               "(preferred_element_type), and of f16 operands with an f16 "
               "result, converted from f32 parameters and to f32 results"),
        single("mlp_f16",
               lambda *a: mlp_half(*a, F16),
               ref_mlp_half, h16, {"rtol": 1e-2, "atol": 1e-2},
               "an MLP in f16: dense, gelu (tanh form), layer norm, dense, "
               "tanh, softmax, on f16 parameters and result"),
        single("mlp_bf16",
               lambda *a: mlp_half(*a, jnp.bfloat16).astype(F32),
               lambda *a: ref_mlp_half(*(
                   np.asarray(x).astype(jnp.bfloat16).astype(F64) for x in a)),
               mlp_in, {"rtol": 5e-2, "atol": 2e-2},
               "the MLP of mlp_f16 in bf16, between converts from and to f32 "
               "(.npy has no bf16)"),
        single("complex_model",
               complex_model, ref_complex_model,
               [normal(90, (4, 3)), normal(91, (4, 3)), normal(92, (3, 5), 0.5),
                normal(93, (3, 5), 0.5), normal(94, (4, 5)),
                normal(95, (4, 5))],
               {"rtol": 1e-5, "atol": 1e-5},
               "a c64 matmul, then abs, exp, tanh, sqrt and expm1 and a "
               "compare (NE) of complex values, on f32 parts"),
    ]


# ---------------------------------------------------------------------------
# Model-sized programs: what the model benchmark (bench/python/
# bench_models.py) times besides the cases above
# ---------------------------------------------------------------------------

# f32 sums of hundreds of products, then exp, tanh and rsqrt on them.
MODEL_TOL = {"rtol": 2e-4, "atol": 2e-5}
HEADS = 4


def ref_gelu(x):
    """jax.nn.gelu's default, the tanh approximation, in float64."""
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def ref_layer_norm(x, g, b, eps=1e-5):
    d = x - x.mean(axis=-1, keepdims=True)
    return d / np.sqrt((d * d).mean(axis=-1, keepdims=True) + eps) * g + b


def jax_layer_norm(x, g, b, eps=1e-5):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    d = x - mean
    var = jnp.mean(d * d, axis=-1, keepdims=True)
    return d * jax.lax.rsqrt(var + eps) * g + b


def transformer_block(x, g1, b1, wqkv, wo, g2, b2, w1, c1, w2, c2):
    """A pre-norm transformer block on f32[seq, width]: layer norm,
    multi-head self-attention (HEADS heads), a residual; layer norm, an MLP
    of 4x the width with gelu, a residual."""
    s, w = x.shape
    h = jax_layer_norm(x, g1, b1)
    q, k, v = jnp.split(h @ wqkv, 3, axis=-1)
    q, k, v = (a.reshape(s, HEADS, w // HEADS).transpose(1, 0, 2)
               for a in (q, k, v))
    p = jax.nn.softmax(jnp.einsum("hqd,hkd->hqk", q, k)
                       / np.sqrt(w // HEADS).astype(F32), axis=-1)
    a = jnp.einsum("hqk,hkd->hqd", p, v).transpose(1, 0, 2).reshape(s, w)
    x = x + a @ wo
    h = jax_layer_norm(x, g2, b2)
    return x + jax.nn.gelu(h @ w1 + c1) @ w2 + c2


def ref_transformer_block(x, g1, b1, wqkv, wo, g2, b2, w1, c1, w2, c2):
    s, w = x.shape
    q, k, v = np.split(ref_layer_norm(x, g1, b1) @ wqkv, 3, axis=-1)
    q, k, v = (a.reshape(s, HEADS, w // HEADS).transpose(1, 0, 2)
               for a in (q, k, v))
    e = np.einsum("hqd,hkd->hqk", q, k) / np.sqrt(w // HEADS)
    e = np.exp(e - e.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    x = x + np.einsum("hqk,hkd->hqd", p, v).transpose(1, 0, 2).reshape(s, w) @ wo
    h = ref_layer_norm(x, g2, b2)
    return [x + ref_gelu(h @ w1 + c1) @ w2 + c2]


def mlp_wide(x, w1, b1, w2, b2):
    return jax.nn.gelu(jnp.tanh(x @ w1 + b1) @ w2 + b2)


def ref_mlp_wide(x, w1, b1, w2, b2):
    return [ref_gelu(np.tanh(x @ w1 + b1) @ w2 + b2)]


def random_normal_draws(key):
    k1, k2, k3 = jax.random.split(jax.random.wrap_key_data(key), 3)
    return (jax.random.normal(k1, (4, 5)),
            jax.random.uniform(k2, (3, 2), minval=-2.0, maxval=3.0),
            jax.random.key_data(k3))


def model_programs():
    """The model set's programs that the cases above lack: a transformer
    block at width 256, an MLP at batch 256, jax.random.normal."""
    width, seq, hidden = 256, 128, 1024
    block = [normal(80, (seq, width)),
             normal(81, (width,), 0.1) + F32(1), normal(82, (width,), 0.1),
             normal(83, (width, 3 * width), width ** -0.5),
             normal(84, (width, width), width ** -0.5),
             normal(85, (width,), 0.1) + F32(1), normal(86, (width,), 0.1),
             normal(87, (width, hidden), width ** -0.5),
             normal(88, (hidden,), 0.1),
             normal(89, (hidden, width), hidden ** -0.5),
             normal(90, (width,), 0.1)]
    mlp_in = [normal(91, (256, 512)), normal(92, (512, 1024), 512 ** -0.5),
              normal(93, (1024,), 0.1), normal(94, (1024, 256), 1024 ** -0.5),
              normal(95, (256,), 0.1)]
    key = np.asarray(jax.random.key_data(jax.random.PRNGKey(43)))
    with jax.disable_jit():
        draws = [np.asarray(a) for a in random_normal_draws(key)]
    return [
        single("transformer",
               transformer_block, ref_transformer_block, block, MODEL_TOL,
               "a pre-norm transformer block on f32[128,256]: layer norm, "
               "4-head self-attention, residual, layer norm, a 1024-wide "
               "gelu MLP, residual"),
        single("mlp_wide",
               mlp_wide, ref_mlp_wide, mlp_in, MODEL_TOL,
               "an MLP at batch 256: f32[256,512] @ [512,1024] with tanh, "
               "@ [1024,256] with gelu"),
        single("random_normal",
               random_normal_draws,
               lambda k: draws,
               [key], F32_TOL,
               "jax.random.split into three, normal f32[4,5], uniform "
               "f32[3,2] in [-2, 3), and a split key's data; the reference "
               "is JAX's own result without jit"),
    ]


CASES = (whole_programs() + single_programs() + sorting_programs()
         + indexing_programs() + conv_programs() + fft_programs()
         + typed_programs() + model_programs() + linalg_programs())


# ---------------------------------------------------------------------------
# Reading the modules
# ---------------------------------------------------------------------------

INSTRUCTION = re.compile(
    r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*(.+?)\s+([a-z][\w\-]*)\((.*?)\)")
ELEMENT_TYPE = re.compile(
    r"\b(pred|s4|s8|s16|s32|s64|u4|u8|u16|u32|u64|f8\w*|f16|bf16|f32|f64"
    r"|c64|c128|token)\[")
LAYOUT = re.compile(r"\[([\d,]*)\]\{([\d,]*)")
TARGET = re.compile(r'custom_call_target="([^"]*)"')


def instructions(hlo):
    """(computation, name, shape, opcode, operands) of every instruction of
    every computation, in order; the entry's computation is "ENTRY"."""
    out = []
    comp = None
    for line in hlo.splitlines():
        if line.startswith("ENTRY"):
            comp = "ENTRY"
        elif line.startswith("%") or re.match(r"^[\w.\-]+ [({]", line):
            comp = line.split()[0].lstrip("%")
        elif line.startswith("}"):
            comp = None
        elif comp:
            m = INSTRUCTION.match(line)
            if m:
                out.append((comp, m.group(1), m.group(2), m.group(3),
                            m.group(4)))
    return out


def non_default_layouts(hlo):
    """The layouts in the module that are not row-major, e.g. "{0,1}"."""
    found = set()
    for dims, layout in LAYOUT.findall(hlo):
        rank = len(dims.split(",")) if dims else 0
        items = layout.split(",") if layout else []
        if [int(v) for v in items] != list(range(rank - 1, -1, -1)):
            found.add("{" + layout + "}")
    return sorted(found)


def hlo_summary(hlo):
    instrs = instructions(hlo)
    params = {}
    for comp, name, _, opcode, operands in instrs:
        if comp == "ENTRY" and opcode == "parameter":
            params[int(operands)] = name
    body = "\n".join(line for line in hlo.splitlines()
                     if INSTRUCTION.match(line))
    return {
        "opcodes": sorted({op for _, _, _, op, _ in instrs}),
        "element_types": sorted(set(ELEMENT_TYPE.findall(body))),
        "non_default_layouts": non_default_layouts(body),
        "custom_call_targets": sorted(set(TARGET.findall(hlo))),
        "params": [params[i] for i in sorted(params)],
    }


# ---------------------------------------------------------------------------
# Writing the fixtures
# ---------------------------------------------------------------------------


def leaves(tree):
    return [np.asarray(a) for a in jax.tree_util.tree_leaves(tree)]


def npy_entry(case_dir, name, array):
    path = os.path.join(case_dir, name)
    np.save(path, array, allow_pickle=False)
    return {"file": os.path.relpath(path, os.path.dirname(case_dir)),
            "dtype": str(array.dtype), "shape": list(array.shape)}


def check(name, got, want, tol):
    """JAX's results against the float64 reference, within the case's
    tolerance (exact cases compare exactly)."""
    if len(got) != len(want):
        sys.exit(f"{name}: JAX gave {len(got)} results, the reference "
                 f"{len(want)}")
    for i, (g, w) in enumerate(zip(got, want)):
        w = np.asarray(w)
        if g.shape != w.shape:
            sys.exit(f"{name}: result {i} has shape {g.shape}, the "
                     f"reference {w.shape}")
        if g.dtype.kind in "fc":
            ok = np.isclose(g.astype(F64 if g.dtype.kind == "f" else
                                     np.complex128),
                            w.astype(g.dtype).astype(
                                F64 if g.dtype.kind == "f" else
                                np.complex128),
                            rtol=tol["rtol"], atol=tol["atol"],
                            equal_nan=True)
        else:
            ok = g == w.astype(g.dtype)
        if not np.all(ok):
            bad = np.argwhere(~np.asarray(ok))[0]
            sys.exit(f"{name}: result {i} at {tuple(bad)} is "
                     f"{g[tuple(bad)]!r}, the reference "
                     f"{w[tuple(bad)]!r}")


def jitted(case):
    if not case.get("column_major"):
        return jax.jit(case["fn"])
    # The first parameter only: major_to_minor (1, 0), dimension 1 major
    # and 0 minor, which XLA prints as the layout {0,1}. A layout needs a
    # concrete sharding. (Results with a layout would bring JAX's sharding
    # custom calls, xla.sdy.FuncResultSharding, into the lowered module.)
    s = jax.sharding.SingleDeviceSharding(jax.devices("cpu")[0])
    fmt = Format(Layout(major_to_minor=(1, 0)), s)
    rest = (None,) * (len(case["inputs"]) - 1)
    return jax.jit(case["fn"], in_shardings=(fmt,) + rest)


def generate_case(case, out_dir):
    name = case["name"]
    fn = jitted(case)
    inputs = case["inputs"]
    case_dir = os.path.join(out_dir, name)
    os.makedirs(case_dir)

    lowered = fn.lower(*inputs)
    modules = {"lowered": lowered.as_text(dialect="hlo"),
               "optimized": lowered.compile().as_text()}
    variants = {}
    for variant, text in modules.items():
        with open(os.path.join(case_dir, variant + ".hlo"), "w") as f:
            f.write(text)
        summary = hlo_summary(text)
        variants[variant] = {
            "hlo": f"{name}/{variant}.hlo",
            "opcodes": summary["opcodes"],
            "element_types": summary["element_types"],
            "non_default_layouts": summary["non_default_layouts"],
            "custom_call_targets": summary["custom_call_targets"],
        }
        params = summary["params"]
        if len(params) != len(inputs):
            sys.exit(f"{name}: the {variant} module has {len(params)} "
                     f"parameters, the case {len(inputs)} inputs")
        if variant == "lowered":
            lowered_params = params

    got = leaves(fn(*inputs))
    check(name, got, case["reference"](*as64(*inputs)), case["tolerance"])

    entry = {
        "name": name,
        "program": case["program"],
        "about": case["about"],
        "custom_calls": bool(case["targets"]),
        "targets": case["targets"],
        "xla_ffi": [f"{HANDLERS_REL}:{TARGETS[t]}={t}"
                    for t in case["targets"]],
        "tolerance": case["tolerance"],
        "inputs": [],
        "outputs": [npy_entry(case_dir, f"output{i}.npy", y)
                    for i, y in enumerate(got)],
        "variants": variants,
    }
    for i, (x, pname) in enumerate(zip(inputs, lowered_params)):
        item = npy_entry(case_dir, f"input{i}.npy", np.asarray(x))
        item.update({"param": i, "hlo_name": pname})
        entry["inputs"].append(item)
    return entry


SCALAR_LIST = re.compile(r"\[\s*([^\[\]{}]*?)\s*\]", re.S)
FLAT_OBJECT = re.compile(r"\{\s*([^{}\[\]]*(?:\[[^\[\]]*\][^{}\[\]]*)*?)\s*\}",
                         re.S)


def compact_json(value):
    """JSON indented by 2, with each list of numbers or strings and each
    object of such values on one line (opcodes, shapes, an input), so the
    manifest stays short and its diffs readable."""
    def one_line(m, open_, close):
        return open_ + re.sub(r",\s+", ", ", m.group(1).strip()) + close
    text = json.dumps(value, indent=2)
    text = SCALAR_LIST.sub(lambda m: one_line(m, "[", "]"), text)
    text = FLAT_OBJECT.sub(lambda m: one_line(m, "{", "}"), text)
    return text + "\n"


def clear(out_dir):
    """Removes what an earlier run wrote (the case directories its manifest
    lists, the manifest), nothing else."""
    manifest = os.path.join(out_dir, "manifest.json")
    if os.path.exists(manifest):
        with open(manifest) as f:
            old = json.load(f)
        for case in old.get("cases", []):
            shutil.rmtree(os.path.join(out_dir, case["name"]),
                          ignore_errors=True)
        os.remove(manifest)
    for case in CASES:
        shutil.rmtree(os.path.join(out_dir, case["name"]), ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=DEFAULT_OUT,
                        help="output directory (default: %(default)s)")
    parser.add_argument("--cases", nargs="+", metavar="NAME",
                        help="make only these cases, keeping every other "
                             "case the manifest lists as it is (XLA:CPU may "
                             "round the last bits of other cases otherwise "
                             "on another CPU)")
    args = parser.parse_args()
    names = [c["name"] for c in CASES]
    unknown = sorted(set(args.cases or []) - set(names))
    if unknown:
        parser.error(f"no case {', '.join(unknown)}; the cases are "
                     f"{', '.join(names)}")

    if jax.__version__ != JAX_VERSION:
        sys.exit(f"jax {JAX_VERSION} is needed, this is {jax.__version__} "
                 "(`make hlo-fixtures` makes a virtual environment with it)")
    if not os.path.exists(HANDLERS):
        sys.exit(f"{HANDLERS} is missing (`make fixtures` makes it)")
    jax.config.update("jax_platforms", "cpu")
    jax.config.update("jax_hlo_source_file_canonicalization_regex", ".*/")

    out_dir = os.path.abspath(args.out)
    os.makedirs(out_dir, exist_ok=True)
    manifest_path = os.path.join(out_dir, "manifest.json")
    if args.cases:
        if not os.path.exists(manifest_path):
            sys.exit(f"--cases adds to {manifest_path}, which is missing")
        with open(manifest_path) as f:
            kept = {c["name"]: c for c in json.load(f)["cases"]}
        for name in args.cases:
            shutil.rmtree(os.path.join(out_dir, name), ignore_errors=True)
    else:
        kept = {}
        clear(out_dir)
    register()

    made = {case["name"]: generate_case(case, out_dir) for case in CASES
            if not args.cases or case["name"] in args.cases}
    kept.update(made)
    cases = [kept[name] for name in names if name in kept]
    with open(HANDLERS, "rb") as f:
        handlers_sha256 = hashlib.sha256(f.read()).hexdigest()
    manifest = {
        "format": 1,
        "about": "HLO programs as JAX lowers them and XLA:CPU optimizes "
                 "them, with inputs and JAX's outputs; see README.md",
        "jax_version": jax.__version__,
        "jaxlib_version": jaxlib.__version__,
        "numpy_version": np.__version__,
        "platform": "cpu",
        "machine": platform.machine(),
        "handlers": {"library": HANDLERS_REL, "sha256": handlers_sha256,
                     "targets": {t: TARGETS[t] for t in sorted(TARGETS)}},
        "cases": cases,
    }
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        f.write(compact_json(manifest))
    print(f"wrote {len(cases)} cases to {out_dir}")


if __name__ == "__main__":
    main()
