#!/usr/bin/env python3
"""The built-in dot against NumPy's matmul, in one run.

    python bench/python/bench_dot.py --out build/bench

A program of one `dot` on f32[512,512] x f32[512,512], compiled with kcall
and run through its Python package on NumPy arrays, against `a @ b` in
NumPy (its BLAS), each the best mean of --repeat repeats of --inner runs,
taken in turn, each turn after --rest seconds of rest and one untimed run.
The figures are GFLOP/s (2 * 512^3 floating-point operations a product);
the target is kcall at least half of NumPy's, printed as PASS or MISS (a
miss never fails the run). The result is checked against NumPy's first.
Merged into OUT/results.json as the object "dot_f32_512".
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_jax import best_of  # noqa: E402
from run_bench import merge_results  # noqa: E402

N = 512
TARGET = 0.5
PROGRAM = (
    "HloModule dot\nENTRY main {\n"
    "  a = f32[%d,%d] parameter(0)\n  b = f32[%d,%d] parameter(1)\n"
    "  ROOT c = f32[%d,%d] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "}\n" % (N, N, N, N, N, N))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="build/bench", type=Path)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--inner", type=int, default=10)
    parser.add_argument("--rest", type=float, default=0.25,
                        help="seconds of rest before each turn (default 0.25)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)

    import kcall

    rng = np.random.default_rng(0)
    a = rng.standard_normal((N, N), dtype=np.float32)
    b = rng.standard_normal((N, N), dtype=np.float32)
    run = kcall.Program.parse(PROGRAM).compile()
    got = np.asarray(run(a, b))
    np.testing.assert_allclose(got, a @ b, rtol=1e-4, atol=1e-3)

    flops = 2.0 * N ** 3
    # In turn within each repeat, so that a slow spell falls on both. Each
    # turn starts after a rest, then one untimed call: a library's idle
    # threads spin for a while after a call (OpenBLAS's for about 0.1 s,
    # kcall's pool for 0.1 ms), and on a machine with few cores that spin
    # would otherwise take a core from the other library's turn.
    def turn(fn):
        time.sleep(args.rest)
        fn()
        return best_of(fn, 1, args.inner)

    t_numpy = t_kcall = float("inf")
    for _ in range(args.repeat):
        t_numpy = min(t_numpy, turn(lambda: a @ b))
        t_kcall = min(t_kcall, turn(lambda: run(a, b)))
    numpy_gflops = flops / t_numpy / 1e9
    kcall_gflops = flops / t_kcall / 1e9
    ratio = kcall_gflops / numpy_gflops
    print("dot: f32[%d,%d] x f32[%d,%d], GFLOP/s" % (N, N, N, N))
    print("  %-30s %8.1f" % ("NumPy (a @ b)", numpy_gflops))
    print("  %-30s %8.1f  %.3fx NumPy  (target >= %.2fx: %s)"
          % ("kcall program (dot)", kcall_gflops, ratio, TARGET,
             "PASS" if ratio >= TARGET else "MISS"))
    merge_results(args.out, [{
        "benchmark": "dot_f32_512",
        "numpy_gflop_per_s": round(numpy_gflops, 2),
        "kcall_gflop_per_s": round(kcall_gflops, 2),
        "ratio_to_numpy": round(ratio, 4),
        "target_ratio_to_numpy": TARGET,
        "met_ratio_to_numpy": int(ratio >= TARGET),
    }])
    return 0


if __name__ == "__main__":
    sys.exit(main())
