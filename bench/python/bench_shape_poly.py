#!/usr/bin/env python3
"""A shape-polymorphic module compiled for a new batch size: kcall against
XLA, in one run.

    python bench/python/bench_shape_poly.py --out build/bench

Each model of tests/shape_poly/generate.py (an MLP, a transformer block, a
CNN, a sort and a gather: the fixtures' programs) is exported once with
jax.export and a symbolic batch; then, for each of --sizes new sizes,

  kcall  kcall.Program.parse(module text, shapes=...) and compile(): the
         module refined for the size and compiled (what a new batch costs
         a kcall.ShapePolymorphicProgram);
  XLA    jax.jit(exported.call).lower(*args).compile() for arrays of that
         size: the export refined and compiled by JAX and XLA:CPU.

Each figure is the best time over the sizes (each size is new to both, so
no cache answers), in milliseconds; the ratio is kcall's over XLA's. The
table is printed and merged into OUT/results.json as the object
"shape_poly_compile" (target: at most 0.1x XLA's, printed PASS or MISS; a
miss never fails the run).
"""
import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
TARGET = 0.1

sys.path.insert(0, str(HERE))
from run_bench import merge_results  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="build/bench", type=Path)
    parser.add_argument("--sizes", type=int, default=5)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)

    import jax
    jax.config.update("jax_platforms", "cpu")
    from jax import export
    import kcall
    sys.path.insert(0, str(REPO / "tests" / "shape_poly"))
    import generate  # noqa: E402  (the programs: one source)

    print("shape-polymorphic modules compiled for a new size: kcall against "
          "JAX %s, milliseconds" % jax.__version__)
    print("  %-12s %10s %10s %8s" % ("case", "XLA", "kcall", "ratio"))
    rows = []
    for name, (make, sizes) in generate.CASES.items():
        rng = np.random.default_rng(0)
        fn, specs, inputs = make(rng)
        example = inputs(sizes[0])
        args_ = [x if spec is None else
                 jax.ShapeDtypeStruct(export.symbolic_shape(spec), x.dtype)
                 for spec, x in zip(specs, example)]
        exported = export.export(jax.jit(fn), platforms=["cpu"])(*args_)
        text = exported.mlir_module()
        best_k = best_x = math.inf
        for k in range(args.sizes):
            xs = inputs(sizes[1] + 1 + k)
            shapes = [kcall._programs.shape_text(x) for x in xs]
            t0 = time.perf_counter()
            kcall.Program.parse(text, shapes=shapes).compile()
            t1 = time.perf_counter()
            jax.jit(exported.call).lower(*xs).compile()
            t2 = time.perf_counter()
            best_k, best_x = min(best_k, t1 - t0), min(best_x, t2 - t1)
        ratio = best_k / best_x
        rows.append({"case": name, "xla_ms": round(best_x * 1e3, 3),
                     "kcall_ms": round(best_k * 1e3, 3), "ratio": round(ratio, 4)})
        print("  %-12s %10.2f %10.3f %7.3fx" % (name, best_x * 1e3, best_k * 1e3, ratio),
              flush=True)
    g = math.exp(sum(math.log(r["ratio"]) for r in rows) / len(rows))
    met = g <= TARGET
    print("  geometric mean %.4fx XLA's (target <= %.1fx: %s)"
          % (g, TARGET, "PASS" if met else "MISS"))
    merge_results(args.out, [{"benchmark": "shape_poly_compile", "cases": rows,
                              "geomean_ratio_to_xla": round(g, 5),
                              "target_ratio": TARGET, "met_target": int(met)}])
    return 0


if __name__ == "__main__":
    sys.exit(main())
