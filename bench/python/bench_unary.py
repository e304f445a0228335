#!/usr/bin/env python3
"""The f32 element-wise functions against XLA:CPU and NumPy, in one run.

    python bench/python/bench_unary.py --out build/bench

Programs of one instruction (`tanh`, `exponential`, `log`, `logistic`)
over f32[1048576], compiled with kcall and run through its Python package
on a NumPy array, against the same function under jax.jit (XLA:CPU, the
result waited for with block_until_ready) and NumPy's (logistic as
1 / (1 + exp(-x))), on the same inputs, each the best mean of --repeat
repeats of --inner runs, taken in turn. Figures are microseconds a run,
nanoseconds an element and the ratios to XLA's and NumPy's; the target is
tanh at most 1.5x XLA's time, printed as PASS or MISS (a miss never fails
the run). kcall's results are checked against NumPy's first. Merged into
OUT/results.json as the object "unary_f32_1m".
"""
import argparse
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_jax import best_of  # noqa: E402
from run_bench import merge_results  # noqa: E402

N = 1 << 20
TARGET = 1.5

# name, HLO opcode, jax.numpy's, NumPy's, whether the input must be positive
CASES = [
    ("tanh", "tanh", lambda jnp, jax: jnp.tanh, np.tanh, False),
    ("exp", "exponential", lambda jnp, jax: jnp.exp, np.exp, False),
    ("log", "log", lambda jnp, jax: jnp.log, np.log, True),
    ("logistic", "logistic", lambda jnp, jax: jax.nn.sigmoid,
     lambda x: 1 / (1 + np.exp(-x)), False),
]


def program(op):
    return ("HloModule unary\nENTRY main {\n  x = f32[%d] parameter(0)\n"
            "  ROOT y = f32[%d] %s(x)\n}\n" % (N, N, op))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="build/bench", type=Path)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--inner", type=int, default=10)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)

    import jax
    import jax.numpy as jnp
    import kcall

    rng = np.random.default_rng(0)
    normal = (rng.standard_normal(N, dtype=np.float32) * 4).astype(np.float32)
    positive = np.abs(normal) + np.float32(1e-3)
    result = {"benchmark": "unary_f32_1m"}
    print("unary: f32[%d], microseconds a run (nanoseconds an element)" % N)
    for name, op, jax_fn, np_fn, needs_positive in CASES:
        x = positive if needs_positive else normal
        run = kcall.Program.parse(program(op)).compile()
        fn = jax.jit(jax_fn(jnp, jax))
        xj = jax.device_put(x)
        want = np_fn(x)
        np.testing.assert_allclose(np.asarray(run(x)), want, rtol=1e-6, atol=0)
        np.testing.assert_allclose(np.asarray(fn(xj)), want, rtol=1e-5, atol=1e-30)
        t_numpy = t_xla = t_kcall = float("inf")
        for _ in range(args.repeat):
            t_numpy = min(t_numpy, best_of(lambda: np_fn(x), 1, args.inner))
            t_xla = min(t_xla, best_of(lambda: fn(xj).block_until_ready(), 1, args.inner))
            t_kcall = min(t_kcall, best_of(lambda: run(x), 1, args.inner))
        to_xla = t_kcall / t_xla
        to_numpy = t_kcall / t_numpy
        verdict = ""
        if name == "tanh":
            verdict = "  (target <= %.1fx XLA: %s)" % (
                TARGET, "PASS" if to_xla <= TARGET else "MISS")
            result["target_tanh_ratio_to_xla"] = TARGET
            result["met_tanh_ratio_to_xla"] = int(to_xla <= TARGET)
        print("  %-8s NumPy %8.1f (%.2f)  XLA %8.1f (%.2f)  kcall %8.1f (%.2f)"
              "  %.2fx XLA  %.2fx NumPy%s"
              % (name, t_numpy * 1e6, t_numpy * 1e9 / N, t_xla * 1e6,
                 t_xla * 1e9 / N, t_kcall * 1e6, t_kcall * 1e9 / N,
                 to_xla, to_numpy, verdict))
        result[name + "_numpy_us"] = round(t_numpy * 1e6, 2)
        result[name + "_xla_us"] = round(t_xla * 1e6, 2)
        result[name + "_kcall_us"] = round(t_kcall * 1e6, 2)
        result[name + "_ratio_to_xla"] = round(to_xla, 4)
        result[name + "_ratio_to_numpy"] = round(to_numpy, 4)
    merge_results(args.out, [result])
    return 0


if __name__ == "__main__":
    sys.exit(main())
