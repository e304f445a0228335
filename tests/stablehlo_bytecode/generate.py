"""Generates the StableHLO portable artifacts in tests/fixtures/stablehlo_bytecode/.

    .venv-with-jax-torch-tvm/bin/python tests/stablehlo_bytecode/generate.py [--out DIR]

It needs jax and jaxlib 0.10.2, numpy and flatbuffers (for serialize()). For every case below, a small
jitted JAX program on fixed inputs is exported for the CPU with concrete
shapes (`jax.export.export(jax.jit(f), platforms=["cpu"])(*inputs)`), and
DIR/<case>.bc (`exported.mlir_module_serialized`: MLIR bytecode of the VHLO
dialect, what JAX deploys), DIR/<case>.jax_exported (`exported.serialize()`:
the flatbuffer with the calling convention around that artifact),
DIR/<case>.mlir (`exported.mlir_module()`, the
same program as StableHLO text), DIR/<case>.inputN.npy and
DIR/<case>.outputN.npy (JAX's results) are written, and DIR/producers.txt
lists each artifact's producer string ("StableHLO_v1.x.y").

triangular is exported for CUDA (PLATFORMS): JAX lowers its solves to
stablehlo.triangular_solve there, and to LAPACK calls on the CPU.

Besides, serialized exports of mlp that kcall must read or refuse:
mlp_cpu_cuda.jax_exported (lowered for ["cpu", "cuda"]: a platform index
argument), mlp_batch.jax_exported (the batch dimension symbolic, "b"),
stack_batch.jax_exported (inputs of b and 2*b rows, stacked: dims written
as expressions),
and two whose metadata kcall refuses: effects.jax_exported (an ordered
effect, whose calls take tokens) and convention_8.jax_exported (calling
convention version 8).

Source paths in the locations are reduced to base names, so the
checkout's location does not show; inputs come from fixed seeds.
"""

import argparse
import dataclasses
import os
import sys

import numpy as np

import jax
import jax.numpy as jnp
from jax import export, lax
from jax._src import effects

jax.config.update("jax_hlo_source_file_canonicalization_regex", r".*/")


def _rng(seed):
    return np.random.default_rng(seed)


# ---- the programs --------------------------------------------------------------

def mlp(x, w1, b1, w2, b2):
    """Two dense layers, gelu (erf form) between, softmax over the classes."""
    h = jax.nn.gelu(x @ w1 + b1, approximate=False)
    h = jax.nn.gelu(h, approximate=True) + h
    return (jax.nn.softmax(h @ w2 + b2, axis=-1),)


def mlp_inputs():
    r = _rng(1)
    f = np.float32
    return (r.standard_normal((4, 8)).astype(f), r.standard_normal((8, 16)).astype(f) * f(0.3),
            r.standard_normal((16,)).astype(f) * f(0.1),
            r.standard_normal((16, 5)).astype(f) * f(0.3), r.standard_normal((5,)).astype(f))


def conv(x, k1, k2):
    """NHWC convolutions (padding, stride, feature groups), relu, pools."""
    dn = ("NHWC", "HWIO", "NHWC")
    y = lax.conv_general_dilated(x, k1, (1, 1), "SAME", dimension_numbers=dn)
    y = jax.nn.relu(y)
    y = lax.reduce_window(y, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    y = lax.conv_general_dilated(y, k2, (2, 2), ((1, 0), (0, 1)), dimension_numbers=dn,
                                 rhs_dilation=(1, 1), feature_group_count=2)
    avg = lax.reduce_window(y, 0.0, lax.add, (1, 2, 2, 1), (1, 1, 1, 1), "SAME") / 4.0
    return avg, jnp.mean(y, axis=(1, 2))


def conv_inputs():
    r = _rng(2)
    f = np.float32
    return (r.standard_normal((2, 8, 8, 3)).astype(f), r.standard_normal((3, 3, 3, 4)).astype(f),
            r.standard_normal((2, 2, 2, 4)).astype(f))


def scan(xs, h0, w):
    """An RNN-like scan (a while loop whose body uses values from outside)."""
    def step(h, x):
        h = jnp.tanh(h @ w + x)
        return h, h.sum()
    h, ys = lax.scan(step, h0, xs)
    return h, ys


def scan_inputs():
    r = _rng(3)
    f = np.float32
    return (r.standard_normal((5, 3)).astype(f), r.standard_normal((3,)).astype(f),
            r.standard_normal((3, 3)).astype(f) * f(0.5))


def cond(i, x):
    """lax.switch over three branches (a case), and a two-way cond."""
    y = lax.switch(i, [lambda v: v * 2.0, lambda v: jnp.sin(v), lambda v: v - 1.0], x)
    z = lax.cond(x.sum() > 0, lambda v: v + 1.0, lambda v: -v, y)
    return y, z


def cond_inputs():
    r = _rng(4)
    return (np.array(1, np.int32), r.standard_normal((4,)).astype(np.float32))


def sort(x, keys):
    """Sorts: plain, descending by argsort, several operands, along axis 0."""
    order = jnp.argsort(-keys, stable=True)
    s0 = jnp.sort(x, axis=0)
    k, v = lax.sort((keys, x[0]), num_keys=1)
    return jnp.sort(x, axis=-1), order, s0, k, v


def sort_inputs():
    r = _rng(5)
    return (r.standard_normal((3, 6)).astype(np.float32),
            r.permutation(6).astype(np.int32))


def gather_scatter(table, idx, upd):
    """Embedding lookup (gather), scatter-add and scatter-set, dynamic slices."""
    rows = table[idx]
    added = table.at[idx].add(upd)
    setv = table.at[idx[:2], 1].set(jnp.float32(7))
    window = lax.dynamic_slice(table, (idx[0], jnp.int32(1)), (2, 2))
    return rows, added, setv, window


def gather_scatter_inputs():
    r = _rng(6)
    return (r.standard_normal((6, 4)).astype(np.float32), np.array([4, 0, 2], np.int32),
            r.standard_normal((3, 4)).astype(np.float32))


def top_k(x):
    """lax.top_k along the last axis, of floats and of ints."""
    v, i = lax.top_k(x, 3)
    vi, ii = lax.top_k((x * 10).astype(jnp.int32), 2)
    return v, i, vi, ii


def top_k_inputs():
    r = _rng(7)
    return (r.standard_normal((2, 7)).astype(np.float32),)


def misc(x, y):
    """Element-wise odds and ends: integer ops, compare kinds, iota,
    concatenate, pad, transpose, reverse, clamp, select, cumulative sums,
    an f64 (the case runs with 64-bit types enabled) and a bf16 path, a complex product and an rfft."""
    xi = (x * 4).astype(jnp.int32)
    u = xi.astype(jnp.uint32)
    bits = (u >> 1) ^ (u << 2) | jnp.uint32(3)
    iota = lax.broadcasted_iota(jnp.int32, (3, 4), 1)
    cat = jnp.concatenate([x, y], axis=0)
    padded = lax.pad(x, jnp.float32(0.5), ((1, 0, 1), (0, 2, 0)))
    t = jnp.transpose(cat)[::-1]
    c = jnp.clip(x, -0.5, 0.5)
    sel = jnp.where(x > y, x, y)
    cs = jnp.cumsum(x, axis=1)
    d = (x.astype(jnp.float64) * 3).sum()
    b = (x.astype(jnp.bfloat16) * 2).astype(jnp.float32)
    z = (x + 1j * y) * (y - 1j * x)
    f = jnp.fft.rfft(x, axis=-1)
    return (bits, iota + xi, padded, t, c, sel, cs, d, b, z, f,
            jnp.isfinite(x / y), jnp.max(xi, axis=0), jnp.argmax(x, axis=1))


def misc_inputs():
    r = _rng(8)
    f = np.float32
    return r.standard_normal((3, 4)).astype(f), r.standard_normal((3, 4)).astype(f)


def triangular(a, b, c, d):
    """Triangular solves as JAX lowers them for CUDA (stablehlo.triangular_solve;
    on the CPU they become LAPACK calls): batched, each side, both
    triangles, transposed, unit diagonal, and complex with the adjoint."""
    tri = lax.linalg.triangular_solve
    return (tri(a, b, left_side=True, lower=True),
            tri(a, b, left_side=True, lower=False, transpose_a=True, unit_diagonal=True),
            tri(a, jnp.swapaxes(b, -1, -2), left_side=False, lower=True, transpose_a=True),
            tri(c, d, left_side=True, lower=False, transpose_a=True, conjugate_a=True))


def triangular_inputs():
    r = _rng(9)
    f = np.float32
    a = r.standard_normal((2, 5, 5)).astype(f) * f(0.2) + np.eye(5, dtype=f) * f(3)
    c = (r.standard_normal((4, 4)) + 1j * r.standard_normal((4, 4))).astype(np.complex64)
    c = c * np.complex64(0.2) + np.eye(4, dtype=np.complex64) * np.complex64(3)
    d = (r.standard_normal((4, 2)) + 1j * r.standard_normal((4, 2))).astype(np.complex64)
    return (a, r.standard_normal((2, 5, 3)).astype(f), c, d)


def int4(x, w, q):
    """Narrow integers: a layer with int4 weights dequantised, int4 and uint4
    arithmetic that wraps, a logical shift and leading zeros of negative
    values, a bitcast between int4 and uint4, and a float converted to int4
    (saturating)."""
    y = x @ (w.astype(jnp.float32) * jnp.float32(0.25))
    a = q * jnp.int4(3) + q
    b = lax.shift_right_logical(q, jnp.int4(1))
    c = lax.clz(q)
    u = lax.bitcast_convert_type(q, jnp.uint4)
    d = u * jnp.uint4(5) - jnp.uint4(9)
    e = (x[0] * 4.0).astype(jnp.int4)
    return y, a, b, c, d, e


def int4_inputs():
    r = _rng(10)
    return (r.standard_normal((2, 8)).astype(np.float32),
            r.integers(-8, 8, (8, 4)).astype(jnp.int4),
            np.arange(-8, 8).astype(jnp.int4))


FLOAT8 = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
          "float8_e4m3b11fnuz", "float8_e4m3", "float8_e3m4", "float8_e8m0fnu"]


def float8(x, b):
    """Each f8 format: f32 values rounded to it (as its bits), every bit
    pattern's value, and the round trip; f4E2M1FN's round trip."""
    outs = []
    for name in FLOAT8:
        t = getattr(jnp, name)
        outs += [lax.bitcast_convert_type(x.astype(t), jnp.uint8),
                 lax.bitcast_convert_type(b, t).astype(jnp.float32),
                 x.astype(t).astype(jnp.float32)]
    outs.append(x.astype(jnp.float4_e2m1fn).astype(jnp.float32))
    return tuple(outs)


def float8_inputs():
    """Values at and between each format's steps (ties among them),
    denormals, the largest values and past them, infinities, NaN, zeros."""
    r = _rng(11)
    special = [0.0, -0.0, 1.0, -1.0, 0.1, -2.5, 3.1415, 448.0, 449.0, 464.0, 480.0, 500.0,
               240.0, 248.0, 57344.0, 61440.0, 1e6, np.inf, -np.inf, np.nan, 1e-3, 1e-9,
               2.0 ** -9, 2.0 ** -10, 3 * 2.0 ** -11, 1.0625, 1.1875, 6.0, 7.0, 0.25, 0.75,
               2.0 ** -127, 2.0 ** -126, 1.5, 3.0, 2.0 ** 127, 3e38]
    # 1 + k/16 (between and on the steps of 2 to 4 mantissa bits) at three
    # scales: the smallest normals and denormals of the narrow formats,
    # around 1, and near the largest
    steps = np.concatenate([np.ldexp(np.arange(16, 48) / 16.0, e) for e in (-12, 0, 8)])
    values = np.concatenate([special, steps, -steps / 3, r.standard_normal(40) * 30,
                             np.exp(r.uniform(-20, 12, 40))])
    return values.astype(np.float32), np.arange(256).astype(np.uint8)


CASES = {
    "mlp": (mlp, mlp_inputs),
    "conv": (conv, conv_inputs),
    "scan": (scan, scan_inputs),
    "cond": (cond, cond_inputs),
    "sort": (sort, sort_inputs),
    "gather_scatter": (gather_scatter, gather_scatter_inputs),
    "top_k": (top_k, top_k_inputs),
    "misc": (misc, misc_inputs),
    "triangular": (triangular, triangular_inputs),
    "int4": (int4, int4_inputs),
    "float8": (float8, float8_inputs),
}

# Cases exported for other platforms than the CPU's (their lowering there
# holds ops the CPU's does not); JAX's results still come from the CPU.
PLATFORMS = {"triangular": ["cuda"]}

# Cases traced with 64-bit types enabled (jax_enable_x64).
X64 = {"misc"}


def main():
    ap = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--out", default=os.path.join(here, "..", "fixtures", "stablehlo_bytecode"))
    ap.add_argument("--only", action="append", metavar="CASE",
                    help="write only these cases (their lines of producers.txt replaced)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    producers = []
    for name, (fn, make_inputs) in CASES.items():
        if args.only and name not in args.only:
            continue
        jax.config.update("jax_enable_x64", name in X64)
        inputs = make_inputs()
        exported = export.export(jax.jit(fn), platforms=PLATFORMS.get(name, ["cpu"]))(*inputs)
        blob = exported.mlir_module_serialized
        outputs = jax.jit(fn)(*inputs)
        if not isinstance(outputs, (tuple, list)):
            outputs = (outputs,)
        base = os.path.join(args.out, name)
        with open(base + ".bc", "wb") as f:
            f.write(blob)
        with open(base + ".jax_exported", "wb") as f:
            f.write(exported.serialize())
        with open(base + ".mlir", "w") as f:
            f.write(exported.mlir_module())
        for i, x in enumerate(inputs):
            np.save(f"{base}.input{i}.npy", _npy(x))
        for i, y in enumerate(outputs):
            np.save(f"{base}.output{i}.npy", _npy(y))
        end = blob.index(b"\0", 5)
        producers.append(f"{name}.bc {blob[5:end].decode()} {len(blob)} bytes, "
                         f"{len(inputs)} inputs, {len(outputs)} outputs")
        print(producers[-1])
    path = os.path.join(args.out, "producers.txt")
    if args.only:
        kept = [line for line in open(path).read().splitlines()
                if line.split(".bc ")[0] not in args.only]
        producers = kept + producers
    with open(path, "w") as f:
        f.write("\n".join(producers) + "\n")
    if not args.only:
        serialized_extras(args.out)


def _npy(x):
    """x as np.save can write it: narrow integers (which it would write as
    void bytes, the 4 bits unextended) as int8 or uint8, one to a byte, and
    f8 floats as their bits in uint8, which is how kcall takes and gives
    them."""
    x = np.asarray(x)
    if x.dtype.name in FLOAT8:
        return x.view(np.uint8)
    if x.dtype in (jnp.int4, jnp.int2):
        return x.astype(np.int8)
    if x.dtype in (jnp.uint4, jnp.uint2):
        return x.astype(np.uint8)
    return x


class TestOrderedEffect(effects.Effect):
    """An ordered effect for the metadata of effects.jax_exported."""

    def __eq__(self, other):
        return type(other) is type(self)

    def __hash__(self):
        return hash(type(self).__name__)


def serialized_extras(out):
    jax.config.update("jax_enable_x64", False)
    inputs = mlp_inputs()
    exported = export.export(jax.jit(mlp), platforms=["cpu", "cuda"])(*inputs)
    with open(os.path.join(out, "mlp_cpu_cuda.jax_exported"), "wb") as f:
        f.write(exported.serialize())
    b, = export.symbolic_shape("b")
    specs = [jax.ShapeDtypeStruct((b,) + inputs[0].shape[1:], inputs[0].dtype)] + \
        [jax.ShapeDtypeStruct(x.shape, x.dtype) for x in inputs[1:]]
    poly = export.export(jax.jit(mlp), platforms=["cpu"])(*specs)
    with open(os.path.join(out, "mlp_batch.jax_exported"), "wb") as f:
        f.write(poly.serialize())
    b, = export.symbolic_shape("b")
    stacked = export.export(jax.jit(lambda x, y: (jnp.concatenate([x, y * 2.0]),)),
                            platforms=["cpu"])(
        jax.ShapeDtypeStruct((b, 4), np.float32), jax.ShapeDtypeStruct((2 * b, 4), np.float32))
    with open(os.path.join(out, "stack_batch.jax_exported"), "wb") as f:
        f.write(stacked.serialize())
    plain = export.export(jax.jit(mlp), platforms=["cpu"])(*inputs)
    with open(os.path.join(out, "effects.jax_exported"), "wb") as f:
        f.write(dataclasses.replace(plain, ordered_effects=(TestOrderedEffect(),)).serialize())
    with open(os.path.join(out, "convention_8.jax_exported"), "wb") as f:
        f.write(dataclasses.replace(plain, calling_convention_version=8).serialize())


if __name__ == "__main__":
    sys.exit(main())
