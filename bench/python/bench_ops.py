#!/usr/bin/env python3
"""kcall's eager ops and its ops inside JAX, against NumPy and JAX, in one run.

    KCALL_BUILD_DIR=build python bench/python/bench_ops.py --out build/bench

The example plugin's ops (examples/ops, libops_plugin.so from
KCALL_BUILD_DIR) in three settings, each next to its baseline measured in
the same run:

  ops_add_1m_python  Add on two f32[1M] through kcall.ops (a fresh output
                     each call, released before the next) against NumPy's
                     np.add(x, y) (out=None), with the minor page faults a
                     call takes (resource.getrusage): a call that takes
                     fresh zero-filled pages for its output shows them here;
  mlp_train_step     one training step of a 2-layer MLP (batch 256, width
                     512: softplus(x W1 + b1) W2 + b2, mean squared error,
                     plain SGD) under jax.jit, forward and backward through
                     kcall.jax.call_op with kcall's built-in kc.MatMul,
                     kc.Add, kc.Softplus, and with the example plugin's
                     MatMul, Add, Softplus, and their gradient ops, against
                     the same step in jax.numpy;
  jax_loop_1000      a jitted lax.fori_loop of 1,000 calls of Add (x = x +
                     one) through kcall.jax.call_op, against the same loop
                     of jnp's +, on f32[16] (the cost of a call) and
                     f32[65536]. No target: XLA fuses jnp's + into
                     the loop, which no out-of-line call can match; the
                     1.1x target for a loop of calls is bench_jax.py's
                     (a kcall target against the same native XLA FFI
                     handler).

Every figure is the best mean of --repeat repeats; kcall's results are
checked against the baseline's first. Merged into OUT/results.json (see
run_bench.py); a missed target is printed, never fails the run.
"""
import argparse
import os
import resource
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_jax import best_of  # noqa: E402
from run_bench import merge_results  # noqa: E402

N_ADD = 1 << 20
BATCH, WIDTH = 256, 512
LOOP_CALLS = 1000


def minor_faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def faults_per_call(fn, calls=50):
    fn()
    before = minor_faults()
    for _ in range(calls):
        fn()
    return (minor_faults() - before) / calls


def bench_add(kcall, repeat):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(N_ADD, dtype=np.float32)
    y = rng.standard_normal(N_ADD, dtype=np.float32)
    add = kcall.ops.Add
    np.testing.assert_array_equal(np.asarray(add(x, y)), x + y)

    def run_kcall():
        add(x, y)  # the output is released when the call's value goes

    def run_numpy():
        np.add(x, y)

    t_numpy = t_kcall = float("inf")
    for _ in range(repeat):
        t_numpy = min(t_numpy, best_of(run_numpy, 1, 20))
        t_kcall = min(t_kcall, best_of(run_kcall, 1, 20))
    f_numpy = faults_per_call(run_numpy)
    f_kcall = faults_per_call(run_kcall)
    print("add: f32[%d] + f32[%d], microseconds a call (page faults a call)"
          % (N_ADD, N_ADD))
    print("  NumPy np.add     %8.1f  (%.1f)" % (t_numpy * 1e6, f_numpy))
    print("  kcall.ops.Add    %8.1f  (%.1f)  %.2fx NumPy"
          % (t_kcall * 1e6, f_kcall, t_kcall / t_numpy))
    return {
        "benchmark": "ops_add_1m_python",
        "numpy_add_us": round(t_numpy * 1e6, 2),
        "kcall_ops_add_us": round(t_kcall * 1e6, 2),
        "kcall_ops_add_ratio_to_numpy": round(t_kcall / t_numpy, 4),
        "numpy_add_page_faults_per_call": round(f_numpy, 2),
        "kcall_ops_add_page_faults_per_call": round(f_kcall, 2),
    }


# The built-in ops' training step, at most this many times JAX's.
TARGET_MLP = 1.3


def mlp_step(jax, jnp, matmul, add, softplus, lr=1e-3):
    """A jitted SGD step of the MLP with the given primitives."""
    def loss(params, x, target):
        w1, b1, w2, b2 = params
        h = softplus(add(matmul(x, w1), b1))
        out = add(matmul(h, w2), b2)
        return jnp.mean((out - target) ** 2)

    def step(params, x, target):
        value, grads = jax.value_and_grad(loss)(params, x, target)
        return value, tuple(p - lr * g for p, g in zip(params, grads))

    return jax.jit(step)


def bench_mlp(jax, jnp, kj, repeat):
    rng = np.random.default_rng(1)
    scale = np.float32(1 / np.sqrt(WIDTH))
    params = tuple(jnp.asarray(a) for a in (
        rng.standard_normal((WIDTH, WIDTH), dtype=np.float32) * scale,
        rng.standard_normal(WIDTH, dtype=np.float32) * scale,
        rng.standard_normal((WIDTH, WIDTH), dtype=np.float32) * scale,
        rng.standard_normal(WIDTH, dtype=np.float32) * scale))
    x = jnp.asarray(rng.standard_normal((BATCH, WIDTH), dtype=np.float32))
    target = jnp.asarray(rng.standard_normal((BATCH, WIDTH), dtype=np.float32))

    jax_step = mlp_step(jax, jnp, jnp.matmul, jnp.add, jax.nn.softplus)
    def kcall_ops(prefix):
        return mlp_step(
            jax, jnp, lambda a, b: kj.call_op(prefix + "MatMul", a, b),
            lambda a, b: kj.call_op(prefix + "Add", a, b),
            lambda a: kj.call_op(prefix + "Softplus", a))
    kcall_step = kcall_ops("")
    builtin_step = kcall_ops("kc.")

    want_loss, want_params = jax_step(params, x, target)
    for step in (kcall_step, builtin_step):
        got_loss, got_params = step(params, x, target)
        np.testing.assert_allclose(float(got_loss), float(want_loss), rtol=1e-4)
        for got, want in zip(got_params, want_params):
            np.testing.assert_allclose(np.asarray(got), np.asarray(want),
                                       rtol=1e-4, atol=1e-5)

    def run(step):
        return lambda: jax.block_until_ready(step(params, x, target))

    t_jax = t_kcall = t_builtin = float("inf")
    for _ in range(repeat):
        t_jax = min(t_jax, best_of(run(jax_step), 1, 5))
        t_kcall = min(t_kcall, best_of(run(kcall_step), 1, 5))
        t_builtin = min(t_builtin, best_of(run(builtin_step), 1, 5))
    ratio = t_kcall / t_jax
    ratio_builtin = t_builtin / t_jax
    print("MLP training step: batch %d, width %d, 2 layers, milliseconds"
          % (BATCH, WIDTH))
    print("  JAX (jax.numpy)          %8.3f" % (t_jax * 1e3))
    print("  kcall's built-in ops     %8.3f  %.2fx JAX  (target <= %.1fx: %s)"
          % (t_builtin * 1e3, ratio_builtin, TARGET_MLP,
             "PASS" if ratio_builtin <= TARGET_MLP else "MISS"))
    print("  the example plugin's ops %8.3f  %.2fx JAX" % (t_kcall * 1e3, ratio))
    return {
        "benchmark": "mlp_train_step",
        "batch": BATCH,
        "width": WIDTH,
        "jax_ms": round(t_jax * 1e3, 4),
        "kcall_ms": round(t_kcall * 1e3, 4),
        "kcall_ratio_to_jax": round(ratio, 4),
        "builtin_ms": round(t_builtin * 1e3, 4),
        "builtin_ratio_to_jax": round(ratio_builtin, 4),
    }


def bench_loop(jax, jnp, kj, repeat):
    result = {"benchmark": "jax_loop_1000", "calls": LOOP_CALLS}
    print("a jitted fori_loop of %d Adds, microseconds a loop (ns a call)"
          % LOOP_CALLS)
    for n in (16, 65536):
        one = jnp.ones(n, jnp.float32)
        x = jnp.zeros(n, jnp.float32)

        def loop(add):
            return jax.jit(lambda x: jax.lax.fori_loop(
                0, LOOP_CALLS, lambda i, v: add(v, one), x))

        jnp_loop = loop(lambda a, b: a + b)
        kcall_loop = loop(lambda a, b: kj.call_op("Add", a, b))
        np.testing.assert_array_equal(np.asarray(kcall_loop(x)),
                                      np.asarray(jnp_loop(x)))
        t_jnp = t_kcall = float("inf")
        for _ in range(repeat):
            t_jnp = min(t_jnp, best_of(
                lambda: jnp_loop(x).block_until_ready(), 1, 5))
            t_kcall = min(t_kcall, best_of(
                lambda: kcall_loop(x).block_until_ready(), 1, 5))
        ratio = t_kcall / t_jnp
        print("  f32[%-6d] jnp %9.1f (%7.1f)  kcall %9.1f (%7.1f)  %.2fx"
              % (n, t_jnp * 1e6, t_jnp * 1e9 / LOOP_CALLS, t_kcall * 1e6,
                 t_kcall * 1e9 / LOOP_CALLS, ratio))
        key = "f32_%d" % n
        result[key + "_jnp_us"] = round(t_jnp * 1e6, 2)
        result[key + "_kcall_us"] = round(t_kcall * 1e6, 2)
        result[key + "_kcall_ns_per_call"] = round(t_kcall * 1e9 / LOOP_CALLS, 1)
        result[key + "_kcall_ratio_to_jnp"] = round(ratio, 4)
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="build/bench", type=Path)
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    build = os.environ.get("KCALL_BUILD_DIR")
    if not build:
        parser.error("KCALL_BUILD_DIR must name the C build (it has "
                     "examples/ops/libops_plugin.so)")
    plugin = Path(build) / "examples/ops/libops_plugin.so"

    import kcall
    import kcall.ops  # noqa: F401
    kcall.load_plugin(str(plugin))
    results = [bench_add(kcall, args.repeat)]

    import jax
    import jax.numpy as jnp
    import kcall.jax as kj
    results.append(bench_mlp(jax, jnp, kj, args.repeat))
    results.append(bench_loop(jax, jnp, kj, args.repeat))
    merge_results(args.out, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
