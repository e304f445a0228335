"""Generates tests/fixtures/shape_poly: shape-polymorphic JAX programs.

    .venv-with-jax-torch-tvm/bin/python tests/shape_poly/generate.py

Each case is exported once with jax.export and a symbolic dimension (the
batch "b", or a length "n"), for the CPU, and its StableHLO text written to
CASE/module.mlir (`Exported.mlir_module()`: `tensor<?x...>` types,
get_dimension_size, dynamic_broadcast_in_dim and the rest, shape_assertion
custom calls), the same module as a portable artifact to CASE/module.bc
(`Exported.mlir_module_serialized`) and the whole export to
CASE/exported.jax_exported (`Exported.serialize()`, which needs
flatbuffers). For two sizes of that dimension the inputs and what the
export computes for them (`exported.call`) are written to
CASE/SIZE/inputN.npy and outputN.npy, and manifest.json lists it all.
ctest runs each size with `kcall run module.mlir --input N=inputN.npy`,
which compiles the module for those shapes, and compares with JAX's.
Needs jax 0.10.2 (the fixtures' version) and numpy; deterministic.
"""
import json
import os

import numpy as np

import jax
import jax.numpy as jnp
from jax import export

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "shape_poly")
jax.config.update("jax_platforms", "cpu")


def dense(rng, m, n):
    return ((rng.standard_normal((m, n)) / np.sqrt(m)).astype(np.float32),
            (rng.standard_normal(n) * 0.1).astype(np.float32))


def mlp_case(rng):
    (w1, b1), (w2, b2) = dense(rng, 8, 16), dense(rng, 16, 4)

    def f(x, w1, b1, w2, b2):
        h = jax.nn.relu(x @ w1 + b1)
        return jax.nn.log_softmax(h @ w2 + b2, axis=-1)

    def inputs(b):
        return [rng.standard_normal((b, 8)).astype(np.float32), w1, b1, w2, b2]
    return f, ["b, 8", None, None, None, None], inputs


def transformer_case(rng):
    d = 16
    wq, wk, wv, wo = (rng.standard_normal((d, d)).astype(np.float32) / 4 for _ in range(4))

    def f(x, wq, wk, wv, wo):
        mu = x.mean(-1, keepdims=True)
        h = (x - mu) / jnp.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + 1e-5)
        q, k, v = h @ wq, h @ wk, h @ wv
        a = jax.nn.softmax(jnp.einsum("bqd,bkd->bqk", q, k) / 4.0, axis=-1)
        return x + jnp.einsum("bqk,bkd->bqd", a, v) @ wo

    def inputs(b):
        return [rng.standard_normal((b, 6, d)).astype(np.float32), wq, wk, wv, wo]
    return f, ["b, 6, 16", None, None, None, None], inputs


def cnn_case(rng):
    k = (rng.standard_normal((3, 3, 2, 4)) / 3).astype(np.float32)
    w = (rng.standard_normal((4, 3)) / 2).astype(np.float32)

    def f(x, k, w):
        y = jax.lax.conv_general_dilated(x, k, (1, 1), "SAME",
                                         dimension_numbers=("NHWC", "HWIO", "NHWC"))
        y = jax.nn.relu(y)
        y = jax.lax.reduce_window(y, 0.0, jax.lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4
        return y.mean(axis=(1, 2)) @ w

    def inputs(b):
        return [rng.standard_normal((b, 6, 6, 2)).astype(np.float32), k, w]
    return f, ["b, 6, 6, 2", None, None], inputs


def sort_case(rng):
    def f(x):
        return jnp.sort(x, axis=-1), jnp.argsort(x[:, 0])

    def inputs(b):
        return [rng.standard_normal((b, 6)).astype(np.float32)]
    return f, ["b, 6"], inputs


def gather_case(rng):
    table = rng.standard_normal((10, 4)).astype(np.float32)

    def f(table, idx):
        rows = jnp.take(table, idx, axis=0)
        return rows * 2.0, jnp.zeros((10, 4), jnp.float32).at[idx].add(rows)

    def inputs(n):
        return [table, rng.integers(0, 10, n).astype(np.int32)]
    return f, [None, "n"], inputs


def conv_same_case(rng):
    """A strided SAME convolution of images n x n: its padding depends on
    n, so JAX exports a stablehlo.dynamic_conv."""
    k = (rng.standard_normal((3, 3, 3, 4)) / 5).astype(np.float32)

    def f(x, k):
        return jax.lax.conv_general_dilated(x, k, (2, 2), "SAME",
                                            dimension_numbers=("NHWC", "HWIO", "NHWC"))

    def inputs(n):
        return [rng.standard_normal((1, n, n, 3)).astype(np.float32), k]
    return f, ["1, n, n, 3", None], inputs


CASES = {"mlp": (mlp_case, (3, 17)), "transformer": (transformer_case, (2, 5)),
         "cnn": (cnn_case, (1, 4)), "sort": (sort_case, (4, 9)),
         "gather": (gather_case, (3, 12)), "conv_same": (conv_same_case, (9, 14))}


def main():
    manifest = {"about": "shape-polymorphic jax.export modules, run at two sizes; see "
                         "tests/shape_poly/generate.py",
                "jax_version": jax.__version__, "cases": []}
    for name, (make, sizes) in CASES.items():
        rng = np.random.default_rng(sum(map(ord, name)))
        fn, specs, inputs = make(rng)
        example = inputs(sizes[0])
        args = []
        for spec, x in zip(specs, example):
            if spec is None:
                args.append(x)
            else:
                args.append(jax.ShapeDtypeStruct(export.symbolic_shape(spec), x.dtype))
        exported = export.export(jax.jit(fn), platforms=["cpu"])(*args)
        case_dir = os.path.join(OUT, name)
        os.makedirs(case_dir, exist_ok=True)
        text = exported.mlir_module()
        with open(os.path.join(case_dir, "module.mlir"), "w") as f:
            f.write(text)
        with open(os.path.join(case_dir, "module.bc"), "wb") as f:
            f.write(exported.mlir_module_serialized)
        with open(os.path.join(case_dir, "exported.jax_exported"), "wb") as f:
            f.write(exported.serialize())
        entry = {"name": name, "module": f"{name}/module.mlir", "sizes": []}
        for size in sizes:
            xs = example if size == sizes[0] else inputs(size)
            outs = exported.call(*xs)
            outs = outs if isinstance(outs, (tuple, list)) else (outs,)
            size_dir = os.path.join(case_dir, str(size))
            os.makedirs(size_dir, exist_ok=True)
            for i, x in enumerate(xs):
                np.save(os.path.join(size_dir, f"input{i}.npy"), np.asarray(x))
            for i, y in enumerate(outs):
                np.save(os.path.join(size_dir, f"output{i}.npy"), np.asarray(y))
            entry["sizes"].append({"size": size, "inputs": len(xs), "outputs": len(outs)})
        manifest["cases"].append(entry)
    with open(os.path.join(OUT, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
