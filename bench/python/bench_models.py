#!/usr/bin/env python3
"""The HLO program fixtures run by kcall against the same programs in JAX,
in one run.

    python bench/python/bench_models.py --out build/bench [--cases NAME...]

Every case of tests/fixtures/hlo_jax (the model set: a transformer block,
an MLP at batch 256, a CNN and its training step, an embedding and its
gradient, sorting, random numbers, FFTs, jax.checkpoint, ... and every
single-feature case) is timed twice on the fixture's own inputs:

  JAX    the case's function from tests/hlo_jax/generate.py (the one
         source of the programs), jitted, inputs already on the device,
         each call ended by block_until_ready;
  kcall  each variant of the case that kcall runs (`lowered`, the module
         JAX lowers; `optimized`, XLA:CPU's optimized module; `stablehlo`,
         the lowered module as JAX prints it by default), compiled
         once with kcall.Program, called on the same NumPy inputs. Its
         outputs are checked against JAX's (the fixture's tolerance)
         before it is timed; a variant that kcall refuses is listed with
         the refusal and left out of the figures.

Each figure is the best mean time of a call over --repeat repeats
(kcall's and JAX's taken in turn), each repeat as many calls as fill
about --min-time seconds. The ratio is kcall's time over JAX's. For each
variant, the geometric mean of the ratios and the worst are printed
against the targets (geometric mean at most 0.5x JAX, no program above
1.5x: PASS or MISS; a miss never fails the run) and merged into
OUT/results.json as the object "models_vs_jax".
"""
import argparse
import ctypes
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
FIXTURES = REPO / "tests" / "fixtures" / "hlo_jax"
VARIANTS = ("lowered", "optimized", "stablehlo")
GEOMEAN_TARGET = 0.5
WORST_TARGET = 1.5

sys.path.insert(0, str(HERE))
from run_bench import merge_results  # noqa: E402


def best_time(calls, repeat, min_time):
    """For each function in `calls`, the best mean time of one call over
    `repeat` repeats, in seconds; the functions take turns so that both
    see the same machine."""
    inner = []
    for fn in calls:
        fn()  # warm: first-call costs (jit, buffers) are not timed
        start = time.perf_counter()
        fn()
        once = max(time.perf_counter() - start, 1e-7)
        inner.append(max(1, min(10000, int(min_time / once))))
    best = [float("inf")] * len(calls)
    for _ in range(repeat):
        for i, fn in enumerate(calls):
            start = time.perf_counter()
            for _ in range(inner[i]):
                fn()
            best[i] = min(best[i], (time.perf_counter() - start) / inner[i])
    return best


def leaves(value):
    return list(value) if isinstance(value, tuple) else [value]


def check_outputs(got, case_dir, entry):
    """kcall's outputs against JAX's (the fixture's), within the case's
    tolerance; a message saying what differs, or None."""
    outs = entry["outputs"]
    if len(got) != len(outs):
        return "%d outputs, JAX %d" % (len(got), len(outs))
    tol = entry["tolerance"]
    for i, (g, o) in enumerate(zip(got, outs)):
        want = np.load(case_dir.parent / o["file"])
        g = np.asarray(g)
        if g.shape != want.shape:
            return "output %d: shape %s, JAX %s" % (i, g.shape, want.shape)
        if want.dtype.kind in "fc":
            ok = np.isclose(g, want, rtol=tol["rtol"], atol=tol["atol"],
                            equal_nan=True)
        else:
            ok = g == want
        if not np.all(ok):
            bad = tuple(np.argwhere(~np.asarray(ok))[0])
            return "output %d at %s: %r, JAX %r" % (i, bad, g[bad], want[bad])
    return None


def register_handlers(manifest, generate):
    """The fixtures' XLA FFI handlers, with JAX (as the generator does) and
    with kcall."""
    import kcall
    lib = generate.register()
    for target, symbol in manifest["handlers"]["targets"].items():
        kcall.register_xla_ffi(target, getattr(lib, symbol))
    return lib


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="build/bench", type=Path)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--min-time", type=float, default=0.02,
                        help="seconds of calls in one timed repeat "
                             "(default: %(default)s)")
    parser.add_argument("--cases", nargs="+", metavar="NAME",
                        help="only these cases")
    parser.add_argument("--variants", nargs="+", choices=VARIANTS,
                        default=list(VARIANTS))
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)

    import jax
    jax.config.update("jax_platforms", "cpu")
    import kcall
    sys.path.insert(0, str(REPO / "tests" / "hlo_jax"))
    import generate  # noqa: E402  (the programs: one source of truth)

    manifest = json.loads((FIXTURES / "manifest.json").read_text())
    functions = {c["name"]: c for c in generate.CASES}
    register_handlers(manifest, generate)
    wanted = set(args.cases or [])
    unknown = wanted - {c["name"] for c in manifest["cases"]}
    if unknown:
        parser.error("no case %s in %s" % (", ".join(sorted(unknown)),
                                            FIXTURES / "manifest.json"))

    print("HLO programs: kcall against JAX %s (jit), microseconds a call"
          % jax.__version__)
    print("  %-22s %-9s %10s %10s %8s" % ("case", "variant", "JAX", "kcall",
                                          "ratio"))
    rows, refused = [], []
    for entry in manifest["cases"]:
        name = entry["name"]
        if wanted and name not in wanted:
            continue
        case = functions.get(name)
        if case is None:
            refused.append((name, "-", "not in tests/hlo_jax/generate.py"))
            continue
        case_dir = FIXTURES / name
        inputs = [np.load(FIXTURES / i["file"]) for i in entry["inputs"]]
        jitted = generate.jitted(case)
        jax_inputs = [jax.device_put(x) for x in inputs]

        def run_jax(f=jitted, xs=jax_inputs):
            return jax.block_until_ready(f(*xs))

        runs = []
        for variant in args.variants:
            path = FIXTURES / entry["variants"][variant]["hlo"]
            try:
                exe = kcall.Program.load(str(path)).compile()
                problem = check_outputs(leaves(exe(*inputs)), case_dir, entry)
            except kcall.Error as e:
                problem = str(e).splitlines()[0]
            if problem:
                refused.append((name, variant, problem))
            else:
                runs.append((variant, lambda e=exe, xs=inputs: e(*xs)))
        if not runs:
            continue
        times = best_time([run_jax] + [fn for _, fn in runs], args.repeat,
                          args.min_time)
        t_jax = times[0]
        for (variant, _), t_kcall in zip(runs, times[1:]):
            ratio = t_kcall / t_jax
            rows.append({"case": name, "variant": variant,
                         "jax_us": round(t_jax * 1e6, 2),
                         "kcall_us": round(t_kcall * 1e6, 2),
                         "ratio": round(ratio, 4)})
            print("  %-22s %-9s %10.1f %10.1f %7.2fx" % (
                name, variant, t_jax * 1e6, t_kcall * 1e6, ratio), flush=True)

    result = {"benchmark": "models_vs_jax", "jax_version": jax.__version__,
              "target_geomean_ratio": GEOMEAN_TARGET,
              "target_worst_ratio": WORST_TARGET, "cases": rows,
              "not_run": [{"case": c, "variant": v, "why": w}
                          for c, v, w in refused]}
    for variant in args.variants:
        ratios = [(r["ratio"], r["case"]) for r in rows
                  if r["variant"] == variant]
        if not ratios:
            continue
        g = geomean([r for r, _ in ratios])
        worst = max(ratios)
        met_g, met_w = g <= GEOMEAN_TARGET, worst[0] <= WORST_TARGET
        print("  %s: %d programs, geometric mean %.3fx JAX (target <= %.1fx: "
              "%s), worst %.2fx (%s; target <= %.1fx: %s)" % (
                  variant, len(ratios), g, GEOMEAN_TARGET,
                  "PASS" if met_g else "MISS", worst[0], worst[1],
                  WORST_TARGET, "PASS" if met_w else "MISS"))
        result.update({
            variant + "_programs": len(ratios),
            variant + "_geomean_ratio": round(g, 4),
            variant + "_worst_ratio": worst[0],
            variant + "_worst_case": worst[1],
            "met_" + variant + "_geomean_ratio": int(met_g),
            "met_" + variant + "_worst_ratio": int(met_w),
        })
    for name, variant, why in refused:
        print("  not run: %s %s: %s" % (name, variant, why))
    merge_results(args.out, [result])
    return 0


if __name__ == "__main__":
    sys.exit(main())
