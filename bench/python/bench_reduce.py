#!/usr/bin/env python3
"""The built-in reduce against NumPy, in one run.

    python bench/python/bench_reduce.py --out build/bench

Programs of one `reduce` over f32[512,1024] (a sum of everything, sums
along each axis, a maximum of each row), compiled with kcall and run
through its Python package on a NumPy array, against `x.sum()`,
`x.sum(1)`, `x.sum(0)` and `x.max(1)`, each the best mean of --repeat
repeats of --inner runs, taken in turn. Figures are microseconds a run
and the ratio to NumPy's; the target is the sum of everything at most
1.5x NumPy's, printed as PASS or MISS (a miss never fails the run).
Results are checked against NumPy's first. Merged into OUT/results.json
as the object "reduce_f32_512x1024".
"""
import argparse
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_jax import best_of  # noqa: E402
from run_bench import merge_results  # noqa: E402

ROWS, COLS = 512, 1024
TARGET = 1.5
COMPUTATIONS = (
    "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
    "  ROOT c = f32[] add(a, b)\n}\n"
    "max {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
    "  ROOT c = f32[] maximum(a, b)\n}\n")

# name, (result shape, dimensions, init, computation), NumPy's
CASES = [
    ("sum_all", ("f32[]", "0,1", "0", "add"), lambda x: x.sum()),
    ("sum_rows", ("f32[%d]" % ROWS, "1", "0", "add"), lambda x: x.sum(1)),
    ("sum_cols", ("f32[%d]" % COLS, "0", "0", "add"), lambda x: x.sum(0)),
    ("max_rows", ("f32[%d]" % ROWS, "1", "-inf", "max"), lambda x: x.max(1)),
]


def program(shape, dims, init, comp):
    return ("HloModule reduce\n" + COMPUTATIONS + "ENTRY main {\n"
            "  x = f32[%d,%d] parameter(0)\n  z = f32[] constant(%s)\n"
            "  ROOT r = %s reduce(x, z), dimensions={%s}, to_apply=%s\n}\n"
            % (ROWS, COLS, init, shape, dims, comp))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="build/bench", type=Path)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--inner", type=int, default=20)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)

    import kcall

    x = np.random.default_rng(0).standard_normal((ROWS, COLS), dtype=np.float32)
    result = {"benchmark": "reduce_f32_512x1024"}
    print("reduce: f32[%d,%d], microseconds a run" % (ROWS, COLS))
    for name, spec, reference in CASES:
        run = kcall.Program.parse(program(*spec)).compile()
        np.testing.assert_allclose(np.asarray(run(x)), reference(x),
                                   rtol=1e-4, atol=1e-2)
        t_numpy = t_kcall = float("inf")
        for _ in range(args.repeat):
            t_numpy = min(t_numpy, best_of(lambda: reference(x), 1, args.inner))
            t_kcall = min(t_kcall, best_of(lambda: run(x), 1, args.inner))
        ratio = t_kcall / t_numpy
        verdict = ""
        if name == "sum_all":
            verdict = "  (target <= %.1fx: %s)" % (
                TARGET, "PASS" if ratio <= TARGET else "MISS")
            result["target_" + name + "_ratio_to_numpy"] = TARGET
            result["met_" + name + "_ratio_to_numpy"] = int(ratio <= TARGET)
        print("  %-9s NumPy %8.1f  kcall %8.1f  %.2fx NumPy%s"
              % (name, t_numpy * 1e6, t_kcall * 1e6, ratio, verdict))
        result[name + "_numpy_us"] = round(t_numpy * 1e6, 2)
        result[name + "_kcall_us"] = round(t_kcall * 1e6, 2)
        result[name + "_ratio_to_numpy"] = round(ratio, 4)
    merge_results(args.out, [result])
    return 0


if __name__ == "__main__":
    sys.exit(main())
