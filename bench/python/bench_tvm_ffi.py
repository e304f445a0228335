#!/usr/bin/env python3
"""tvm-ffi interop: what a call costs when it crosses between kcall and
tvm-ffi, next to the same call not crossing, in one run.

    python bench/python/bench_tvm_ffi.py --out build/bench

Run from a virtual environment with kcall and apache-tvm-ffi (make bench's
.venv-bench). tests/tvm_ffi/kernels.cc, a tvm-ffi module, is compiled
against the wheel ($CXX, else c++) into OUT/python/, and its `noop` is
called:

  Python  kcall calling the module's noop (kcall.load_plugin) next to
          tvm_ffi calling it (tvm_ffi.load_module); tvm_ffi calling a kcall
          no-op (kcall.testing.nop, exported with kcall.tvm_ffi.export)
          next to tvm_ffi calling the module's noop, a native tvm-ffi
          function. Each with the GIL released around the call (both
          packages' default) and kept (release_gil = False).
  C       bench_tvm_ffi_call.c: kc_func_call of the imported noop next to
          TVMFFIFunctionCall of the same function as tvm-ffi's module
          loader gives it (ffi.ModuleLoadFromFile, ffi.ModuleGetFunction);
          TVMFFIFunctionCall of an exported kcall no-op next to that of a
          native tvm-ffi no-op (registered by tvm-ffi's C++ GlobalDef).
          For reference, no target: the same against the floors, the bare
          symbol wrapped by TVMFFIFunctionCreate (both ways) and a plain C
          no-op.

Targets (printed as PASS or MISS; a miss never fails the run): each ratio
at most 1.2. Figures are ns per call, the minimum over repeats; the
Python loop is included in the Python figures. The results are merged
into OUT/results.json (objects "tvm_ffi_interop_python" and
"tvm_ffi_interop_c", with "..._ns" and "ratio_..." keys).
"""

import argparse
import os
import shlex
import subprocess
import sys
import timeit
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
TARGET = 1.2

sys.path.insert(0, str(HERE))
from run_bench import (CFLAGS, compile_c, kcall_c_flags,  # noqa: E402
                       merge_results, tvm_ffi_c_flags)


def build_module(out):
    """tests/tvm_ffi/kernels.cc against the wheel; its path or None."""
    import tvm_ffi.libinfo as info
    lib = Path(info.find_libtvm_ffi())
    path = out / "libbench_tvm_kernels.so"
    cmd = (shlex.split(os.environ.get("CXX") or "c++")
           + ["-std=c++17", "-O2", "-shared", "-fPIC",
              "-DKT_TVM_FFI_BENCH_GLOBAL",
              "-isystem", str(info.find_include_path()),
              "-isystem", str(info.find_dlpack_include_path()),
              str(REPO / "tests" / "tvm_ffi" / "kernels.cc"), "-o", str(path),
              "-L" + str(lib.parent), "-ltvm_ffi",
              "-Wl,-rpath," + str(lib.parent)])
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        print("kernels.cc: build failed (%s)" % " ".join(cmd), file=sys.stderr)
        return None
    return path


def best_ns(stmt_fn, repeat, min_time):
    """ns per call of stmt_fn(), the minimum over `repeat` loops of at least
    min_time seconds."""
    timer = timeit.Timer("f()", globals={"f": stmt_fn})
    number = 1
    while timer.timeit(number) < min_time and number < 1 << 30:
        number *= 2
    return min(timer.timeit(number) / number * 1e9 for _ in range(repeat))


def python_figures(module_path, repeat, min_time):
    import kcall
    import kcall.testing  # noqa: F401  (kcall.testing.nop)
    import kcall.tvm_ffi
    import tvm_ffi

    kcall.load_plugin(module_path, prefix="bench_tk")
    kcall_noop = kcall.get_func("bench_tk.noop")
    native = tvm_ffi.load_module(str(module_path))
    tvm_noop = native.noop  # one handle, its release_gil set per case
    kcall.tvm_ffi.export("kcall.testing.nop", override=True)
    exported = tvm_ffi.get_global_func("kcall.testing.nop")

    # (key, function, whether the GIL is released around the call)
    cases = [
        ("kcall_calls_tvm_ffi_noop", kcall_noop, True),
        ("kcall_calls_tvm_ffi_noop_release_gil_false", kcall_noop, False),
        ("tvm_ffi_calls_tvm_ffi_noop", tvm_noop, True),
        ("tvm_ffi_calls_tvm_ffi_noop_release_gil_false", tvm_noop, False),
        ("tvm_ffi_calls_kcall_noop", exported, True),
        ("tvm_ffi_calls_kcall_noop_release_gil_false", exported, False),
    ]
    figures = {}
    # Interleaved repeats, so that a slow spell falls on all of them.
    for _ in range(3):
        for key, f, release in cases:
            f.release_gil = release
            ns = best_ns(f, repeat, min_time)
            figures[key + "_ns"] = min(ns, figures.get(key + "_ns", ns))
    # The native baseline of the export direction is the module's noop as
    # tvm_ffi calls it.
    figures["tvm_ffi_calls_native_noop_ns"] = \
        figures["tvm_ffi_calls_tvm_ffi_noop_ns"]
    figures["tvm_ffi_calls_native_noop_release_gil_false_ns"] = \
        figures["tvm_ffi_calls_tvm_ffi_noop_release_gil_false_ns"]
    kcall_noop.release_gil = True
    tvm_noop.release_gil = True
    exported.release_gil = True
    return figures


def c_figures(out, module_path, iters, rounds):
    kflags, kfrom = kcall_c_flags()
    if kflags is None:
        print("C: not measured: " + kfrom)
        return None
    tflags, tfrom = tvm_ffi_c_flags()
    if tflags is None:
        print("C: not measured: " + tfrom)
        return None
    exe = out / "bench_tvm_ffi_call"
    if not compile_c(CFLAGS + ["-falign-loops=64",
                               str(HERE / "bench_tvm_ffi_call.c"),
                               "-o", str(exe)] + tflags + kflags + ["-ldl"],
                     "bench_tvm_ffi_call"):
        return None
    proc = subprocess.run([str(exe), str(module_path), str(iters),
                           str(rounds)], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout + proc.stderr)
        print("C: bench_tvm_ffi_call failed")
        return None
    figures = {}
    for line in proc.stdout.splitlines():
        key, value = line.split()
        figures[key] = float(value)
    return figures


# (ratio key, numerator, denominator, what it says)
RATIOS = [
    ("ratio_kcall_to_tvm_ffi_calling_tvm_ffi_noop",
     "kcall_calls_tvm_ffi_noop_ns", "tvm_ffi_calls_tvm_ffi_noop_ns",
     "kcall calling a tvm-ffi no-op / tvm-ffi calling it"),
    ("ratio_kcall_to_tvm_ffi_calling_tvm_ffi_noop_release_gil_false",
     "kcall_calls_tvm_ffi_noop_release_gil_false_ns",
     "tvm_ffi_calls_tvm_ffi_noop_release_gil_false_ns",
     "the same, GIL kept"),
    ("ratio_tvm_ffi_calling_kcall_to_native_noop",
     "tvm_ffi_calls_kcall_noop_ns", "tvm_ffi_calls_native_noop_ns",
     "tvm-ffi calling a kcall no-op / a native tvm-ffi no-op"),
    ("ratio_tvm_ffi_calling_kcall_to_native_noop_release_gil_false",
     "tvm_ffi_calls_kcall_noop_release_gil_false_ns",
     "tvm_ffi_calls_native_noop_release_gil_false_ns",
     "the same, GIL kept"),
]
# Only in C: the floors, for reference (no target): tvm-ffi calling the
# module's symbol wrapped as directly as its C API allows, and plain C.
C_EXTRA = [
    ("ratio_kcall_to_tvm_ffi_calling_tvm_ffi_noop_symbol",
     "kcall_calls_tvm_ffi_noop_ns", "tvm_ffi_calls_tvm_ffi_noop_symbol_ns",
     "kcall calling a tvm-ffi no-op / its bare symbol (no target)"),
    ("ratio_tvm_ffi_calling_kcall_to_native_noop_symbol",
     "tvm_ffi_calls_kcall_noop_ns", "tvm_ffi_calls_native_noop_symbol_ns",
     "tvm-ffi calling a kcall no-op / a bare symbol no-op (no target)"),
    ("ratio_tvm_ffi_calling_kcall_to_c_noop",
     "tvm_ffi_calls_kcall_noop_ns", "tvm_ffi_calls_c_noop_ns",
     "tvm-ffi calling a kcall no-op / a plain C no-op (no target)"),
]


def report(name, figures, ratios):
    """Prints the figures and ratios; returns the JSON object."""
    obj = {"benchmark": name}
    print("%s: ns per call" % name)
    for key, ns in figures.items():
        print("  %-52s %9.3f" % (key, ns))
        obj[key] = round(ns, 4)
    for key, num, den, text in ratios:
        if num not in figures or den not in figures:
            continue
        ratio = figures[num] / figures[den]
        obj[key] = round(ratio, 4)
        targeted = "(no target)" not in text
        if targeted:
            obj["target_" + key] = TARGET
            obj["met_" + key] = 1 if ratio <= TARGET else 0
            verdict = "PASS" if ratio <= TARGET else "MISS"
        else:
            verdict = "-"
        print("  %-4s %-60s %6.3fx" % (verdict, text, ratio))
    return obj


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="build/bench", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--min-time", type=float, default=0.03)
    parser.add_argument("--c-iters", type=int, default=2 * 1000 * 1000)
    parser.add_argument("--c-rounds", type=int, default=21)
    args = parser.parse_args(argv)
    work = args.out / "python"
    work.mkdir(parents=True, exist_ok=True)
    try:
        import tvm_ffi  # noqa: F401
        import kcall.tvm_ffi  # noqa: F401
    except ImportError as e:
        print("tvm_ffi interop: not measured: %s" % e)
        return 0
    module_path = build_module(work)
    if module_path is None:
        return 1
    objs = [report("tvm_ffi_interop_python",
                   python_figures(module_path, args.repeat, args.min_time),
                   RATIOS)]
    print()
    figures = c_figures(work, module_path, args.c_iters, args.c_rounds)
    if figures:
        objs.append(report("tvm_ffi_interop_c", figures, RATIOS + C_EXTRA))
    merge_results(args.out, objs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
