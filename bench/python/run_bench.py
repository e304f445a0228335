#!/usr/bin/env python3
"""kcall's Python call benchmark: what a call from Python costs.

    python bench/python/run_bench.py --out build/bench

Run from a virtual environment with kcall, numpy and apache-tvm-ffi. The
same calls (a no-op with no arguments, one int, three ints, three NumPy
arrays; a C function calling a Python callback with three arrays) are
timed through:

  floor    a plain CPython extension function (METH_FASTCALL), as written
           in bench_native.c, holding the GIL or releasing and retaking it
  ctypes   C functions of the same shapes in the same shared object
           (CDLL, which releases the GIL around each call)
  tvm-ffi  testing.nop and testing.apply
  kcall    kcall.testing.nop and kcall.testing.apply, with the handle's
           default (release_gil: the GIL is released around the C call),
           with release_gil = False, and through Function.fast() (a
           built-in function, which keeps the GIL)

Each figure is ns per call: the minimum, over --repeat repeats, of
timeit-style loops long enough to take --min-time seconds (the Python loop
itself is included, and its cost printed). The implementations of one call
are timed in turn within each repeat, so that a slow spell of the machine
falls on all of them. These machines are noisy: only ratios within one run
compare. A C helper (bench_ffi_call.c) also times kcall's exported packed
call, kc_func_call_noinline, against tvm-ffi's TVMFFIFunctionCall in a C
loop.

The table is printed; the figures are merged, as JSON objects (one per
call), into OUT/results.json, the array bench/run.sh writes, and written
alone to OUT/bench_python.json. Targets are printed as PASS or MISS; a miss
never fails the run.

bench_native.c and bench_ffi_call.c are compiled here with the system C
compiler ($CC, else cc) into OUT/python/ (not OUT itself, where bench/run.sh
could take a bench_* file for one of its benchmarks): nothing but the
environment and a compiler is needed. Without kcall (ImportError) its column is left out
and the reason printed; without tvm-ffi, likewise.
"""

import argparse
import ctypes
import importlib.util
import json
import os
import shlex
import subprocess
import sys
import sysconfig
import timeit
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent

# STYLE.md's warnings; the headers of Python and tvm-ffi come in with
# -isystem, so that only this directory's code is held to them.
WARNINGS = ["-Wall", "-Wextra", "-Wshadow", "-Wconversion",
            "-Wstrict-prototypes", "-Wmissing-prototypes"]
CFLAGS = ["-std=c11", "-O2"] + WARNINGS

SHAPES = [16]  # each array argument: float32, shape (16,)


# ---- building -------------------------------------------------------------

def compiler():
    return shlex.split(os.environ.get("CC") or "cc")


def compile_c(args, what):
    """Runs the compiler; returns True, or prints why not and False."""
    cmd = compiler() + args
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.stderr.strip():
        sys.stderr.write(proc.stderr)
    if proc.returncode != 0:
        print("%s: build failed (%s)" % (what, " ".join(cmd)), file=sys.stderr)
        return False
    return True


def build_native(out):
    """bench_native.c as an extension module; returns its path or None."""
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    path = out / ("bench_native" + suffix)
    ok = compile_c(CFLAGS + ["-shared", "-fPIC",
                             "-isystem", sysconfig.get_paths()["include"],
                             str(HERE / "bench_native.c"), "-o", str(path)],
                   "bench_native")
    return path if ok else None


def load_native(path):
    spec = importlib.util.spec_from_file_location("bench_native", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def kcall_c_flags():
    """(flags, where they came from) for building against libkcall, or
    (None, why not). The installed package says where its C files are; the
    checkout's own build is the fallback (KCALL_BUILD_DIR, else build/)."""
    proc = subprocess.run([sys.executable, "-m", "kcall.config", "--cflags",
                           "--libs"], capture_output=True, text=True)
    if proc.returncode == 0 and proc.stdout.strip():
        return shlex.split(proc.stdout), "python -m kcall.config"
    why = (proc.stderr.strip().splitlines() or ["no output"])[-1][-100:]
    builds = [Path(os.environ["KCALL_BUILD_DIR"])] \
        if os.environ.get("KCALL_BUILD_DIR") else []
    builds += [REPO / "build" / "bench-build", REPO / "build"]
    for build in builds:
        lib = build / "src" / "libkcall.so"
        if lib.exists() and (REPO / "include" / "kcall" / "func.h").exists():
            libdir = str(lib.parent)
            return (["-I" + str(REPO / "include"), "-L" + libdir, "-lkcall",
                     "-Wl,-rpath," + libdir],
                    "this checkout's %s, as python -m kcall.config "
                    "failed: ...%s" % (lib, why))
    return None, "python -m kcall.config failed (%s) and no build of " \
                 "this checkout has src/libkcall.so" % why


def tvm_ffi_c_flags():
    try:
        import tvm_ffi.libinfo as info
    except ImportError as e:
        return None, "tvm_ffi is not importable (%s)" % e
    lib = Path(info.find_libtvm_ffi())
    flags = []
    for inc in [info.find_include_path(), info.find_dlpack_include_path()]:
        flags += ["-isystem", str(inc)]
    flags += [str(lib), "-Wl,-rpath," + str(lib.parent)]
    return flags, str(lib)


def build_ffi_call(out):
    """bench_ffi_call.c as a program; returns (path, notes) or (None, why)."""
    kflags, kfrom = kcall_c_flags()
    if kflags is None:
        return None, "kcall's C library: " + kfrom
    tflags, tfrom = tvm_ffi_c_flags()
    if tflags is None:
        return None, tfrom
    path = out / "bench_ffi_call"
    # kcall's -I goes after tvm-ffi's headers: c_api.h is included first,
    # and kcall's own flags may name a directory holding other headers.
    # Loops aligned to fetch blocks: see the file.
    ok = compile_c(CFLAGS + ["-falign-loops=64", str(HERE / "bench_ffi_call.c"),
                             "-o", str(path)] + tflags + kflags,
                   "bench_ffi_call")
    if not ok:
        return None, "bench_ffi_call did not build"
    return path, "kcall from %s; tvm-ffi %s" % (kfrom, tfrom)


def run_ffi_call(path, iters, rounds):
    proc = subprocess.run([str(path), str(iters), str(rounds)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        return None
    figures = {}
    for line in proc.stdout.splitlines():
        key, value = line.split()
        figures[key] = float(value)
    return figures


# ---- timing ---------------------------------------------------------------

class Case:
    """One implementation of one call: `stmt`, run with the names in `env`
    as locals; `prepare` (or None) runs before each timing (it sets the
    release_gil of a handle shared between cases)."""

    def __init__(self, key, label, stmt, env, prepare=None):
        self.key, self.label, self.stmt = key, label, stmt
        self.env, self.prepare = env, prepare
        self.number, self.best, self.error = 0, None, None

    def timer(self):
        setup = "\n".join("%s = _env[%r]" % (k, k) for k in self.env)
        return timeit.Timer(self.stmt, setup, globals={"_env": self.env})

    def calibrate(self, min_time):
        """Grows the loop until it takes min_time; False when it raises."""
        try:
            if self.prepare:
                self.prepare()
            t = self.timer()
            number = 1
            while True:
                if t.timeit(number) >= min_time or number >= 1 << 30:
                    break
                number *= 2
            self.number = number
            return True
        except Exception as e:  # a package in the making: note, go on
            self.error = "%s: %s" % (type(e).__name__, e)
            return False

    def time_once(self):
        if self.prepare:
            self.prepare()
        ns = self.timer().timeit(self.number) / self.number * 1e9
        self.best = ns if self.best is None else min(self.best, ns)


def measure(cases, repeat, min_time):
    live = [c for c in cases if c.calibrate(min_time)]
    for _ in range(repeat):
        for c in live:
            c.time_once()


# ---- the implementations -------------------------------------------------

def cb(x, y, z):
    """The Python callback every apply calls."""
    return None


def cb_ptrs(x, y, z):
    """The ctypes callback: three pointers (ints)."""
    return None


def native_cases(native):
    f, g = native.nop, native.nop_release_gil
    return {
        "floor": ("floor (METH_FASTCALL)", f, native.apply),
        "floor_release_gil": ("floor, GIL released and retaken", g,
                              native.apply_release_gil),
    }


def ctypes_lib(path):
    lib = ctypes.CDLL(str(path))
    i64, vp = ctypes.c_int64, ctypes.c_void_p
    for name, argtypes in [("nop0", []), ("nop1", [i64]), ("nop3", [i64] * 3),
                           ("nop_ptr3", [vp] * 3)]:
        getattr(lib, name).argtypes = argtypes
        getattr(lib, name).restype = None
    cb_type = ctypes.CFUNCTYPE(None, vp, vp, vp)
    lib.apply3.argtypes = [cb_type, vp, vp, vp]
    lib.apply3.restype = None
    return lib, cb_type(cb_ptrs)


def import_tvm_ffi():
    try:
        import tvm_ffi
        return tvm_ffi, None
    except ImportError as e:
        return None, "tvm-ffi: not measured: import tvm_ffi failed: %s" % e


def import_kcall():
    try:
        import kcall
        import kcall.testing  # registers kcall.testing.nop and .apply
        return kcall, None
    except ImportError as e:
        return None, ("kcall: not measured: import kcall failed: %s "
                      "(install the package into this environment: "
                      "pip install --no-build-isolation REPO)" % e)


def gil_setter(handle, value):
    """A prepare step setting handle.release_gil."""
    def prepare():
        handle.release_gil = value
    return prepare


# ---- the calls ------------------------------------------------------------

# name, how it is written, the statement on a function `f` (and `apply`).
CALLS = [
    ("nop0", "f()", "f()"),
    ("nop1", "f(1)", "f(i)"),
    ("nop3", "f(1, 2, 3)", "f(i, j, k)"),
    ("nop_arrays3", "f(a, b, c)", "f(a, b, c)"),
    ("callback_arrays3", "apply(cb, a, b, c)", "apply(cb, a, b, c)"),
]


def floor_cases(stmt, env, native):
    return [Case(key, label, stmt, dict(env, f=nop, apply=apply, cb=cb))
            for key, (label, nop, apply) in native_cases(native).items()]


def ctypes_cases(call, env, lib, lib_cb):
    """ctypes (CDLL: the GIL is released around each call)."""
    ptrs = dict(zip(["pa", "pb", "pc"],
                    (env[x].ctypes.data for x in "abc")))
    per_call = "a.ctypes.data, b.ctypes.data, c.ctypes.data"
    label = "ctypes"
    if call == "nop0":
        return [Case("ctypes", label, "f()", dict(f=lib.nop0))]
    if call == "nop1":
        return [Case("ctypes", label, "f(i)", dict(env, f=lib.nop1))]
    if call == "nop3":
        return [Case("ctypes", label, "f(i, j, k)", dict(env, f=lib.nop3))]
    if call == "nop_arrays3":
        return [
            Case("ctypes", label + ", arr.ctypes.data per call",
                 "f(%s)" % per_call, dict(env, f=lib.nop_ptr3)),
            Case("ctypes_pointers_once", label + ", pointers taken once",
                 "f(pa, pb, pc)", dict(ptrs, f=lib.nop_ptr3)),
        ]
    label = "ctypes, CFUNCTYPE callback"
    return [
        Case("ctypes", label + ", .ctypes.data per call",
             "apply(cb, %s)" % per_call,
             dict(env, apply=lib.apply3, cb=lib_cb)),
        Case("ctypes_pointers_once", label + ", pointers taken once",
             "apply(cb, pa, pb, pc)",
             dict(ptrs, apply=lib.apply3, cb=lib_cb)),
    ]


def tvm_ffi_cases(stmt, env, is_apply, tvm_ffi):
    nop = tvm_ffi.get_global_func("testing.nop")
    apply = tvm_ffi.get_global_func("testing.apply")
    handle = apply if is_apply else nop
    tenv = dict(env, f=nop, apply=apply, cb=tvm_ffi.convert(cb))
    label = "tvm-ffi" + (", convert(cb) once" if is_apply else "")
    return [
        Case("tvm_ffi", label + " (default, GIL released)", stmt, tenv,
             gil_setter(handle, True)),
        Case("tvm_ffi_release_gil_false", label + ", release_gil = False",
             stmt, tenv, gil_setter(handle, False)),
    ]


def kcall_cases(stmt, env, is_apply, kcall):
    nop = kcall.get_func("kcall.testing.nop")
    apply = kcall.get_func("kcall.testing.apply")
    handle = apply if is_apply else nop
    kenv = dict(env, f=nop, apply=apply, cb=cb)
    variants = [("", "", kenv)]
    if is_apply:
        # The callable as is (kcall wraps it on each call), and wrapped
        # once, as tvm-ffi's is.
        variants = [("", ", cb as is", kenv),
                    ("_wrapped", ", Function(cb) once",
                     dict(kenv, cb=kcall.Function(cb)))]
    cases = []
    for suffix, label, venv in variants:
        cases.append(Case("kcall" + suffix,
                          "kcall" + label + " (default, GIL released)",
                          stmt, venv, gil_setter(handle, True)))
        cases.append(Case("kcall%s_release_gil_false" % suffix,
                          "kcall" + label + ", release_gil = False",
                          stmt, venv, gil_setter(handle, False)))
    # Function.fast(): a built-in function, which CPython calls through its
    # specialised path, keeping the GIL.
    fenv = dict(kenv, f=nop.fast(), apply=apply.fast())
    if is_apply:
        fenv["cb"] = kcall.Function(cb)
    cases.append(Case("kcall_fast", "kcall, Function.fast() (GIL kept)"
                      + (", Function(cb) once" if is_apply else ""),
                      stmt, fenv))
    return cases


def make_cases(call, env, native, lib, lib_cb, tvm_ffi, kcall):
    """The cases of one call, floor first. A column that cannot be set up
    (a package in the making) is left out with a note."""
    is_apply = call == "callback_arrays3"
    stmt = dict((c[0], c[2]) for c in CALLS)[call]
    cases = floor_cases(stmt, env, native)
    cases += ctypes_cases(call, env, lib, lib_cb)
    columns = [("tvm-ffi", tvm_ffi, tvm_ffi_cases),
               ("kcall", kcall, kcall_cases)]
    for name, module, make in columns:
        if module is None:
            continue
        try:
            cases += make(stmt, env, is_apply, module)
        except Exception as e:
            print("%s: %s not measured: %s: %s"
                  % (name, call, type(e).__name__, e))
    return cases


# ---- targets ----------------------------------------------------------------

# (call, case, baseline case, bound, what it says)
TARGETS = [
    ("nop0", "kcall_fast", "floor", 1.5,
     "f(): kcall, Function.fast(), within 1.5x of the floor"),
    ("nop0", "kcall", "floor_release_gil", 1.5,
     "f(): kcall (GIL released) within 1.5x of the GIL-releasing floor"),
    ("nop3", "kcall_fast", "floor", 1.5,
     "f(1, 2, 3): kcall, Function.fast(), within 1.5x of the floor"),
    ("nop3", "kcall", "floor_release_gil", 1.5,
     "f(1, 2, 3): kcall (GIL released) within 1.5x of the GIL-releasing "
     "floor"),
    ("nop_arrays3", "kcall", "tvm_ffi", 0.25,
     "f(a, b, c) with NumPy arrays: kcall at most 0.25x of tvm-ffi"),
    ("callback_arrays3", "kcall", "tvm_ffi", 0.3,
     "apply(cb, a, b, c): kcall, cb as is, at most 0.3x of tvm-ffi"),
    ("callback_arrays3", "kcall_wrapped", "tvm_ffi", 0.3,
     "apply(cb, a, b, c): kcall, kcall.Function(cb), at most 0.3x of "
     "tvm-ffi"),
]
C_TARGET = (1.0, "C: kc_func_call_noinline at most 1.0x "
                 "TVMFFIFunctionCall (1% is a tie)")
# Both calls take a few cycles, so a tie is common and is read as one: the
# C target is met up to this much above 1.0, the loop's resolution (the
# fastest of many rounds varies by a few tenths of a percent).
C_TARGET_RESOLUTION = 0.01


def ratio_key(case, base):
    return "%s_ratio_to_%s" % (case, base)


# ---- output -------------------------------------------------------------------

def print_table(rows, loop_ns):
    print("python_call: ns per call (min over repeats, Python loop "
          "included: %.1f ns)" % loop_ns)
    print("  %-20s %-50s %9s %8s %8s" % ("call", "implementation", "ns",
                                         "x floor", "x tvm"))
    for call, written, cases in rows:
        floor = next((c.best for c in cases if c.key == "floor"), None)
        tvm = next((c.best for c in cases if c.key == "tvm_ffi"), None)
        first = True
        for c in cases:
            name = written if first else ""
            first = False
            if c.best is None:
                print("  %-20s %-50s %9s   (%s)" % (name, c.label, "-",
                                                    c.error or "not run"))
                continue
            xf = "%8.2f" % (c.best / floor) if floor else "%8s" % "-"
            xt = "%8.2f" % (c.best / tvm) if tvm else "%8s" % "-"
            print("  %-20s %-50s %9.1f %s %s" % (name, c.label, c.best, xf,
                                                  xt))
    print("  The GIL is released around the C call by ctypes (CDLL), and by "
          "tvm-ffi and kcall\n  unless release_gil = False; x tvm: to "
          "tvm-ffi's default.")


def evaluate_targets(rows, c_figures):
    """[(text, ratio or None, bound)] and the JSON additions per call."""
    by_call = {call: {c.key: c.best for c in cases if c.best is not None}
               for call, _, cases in rows}
    results, extra = [], {}
    for call, case, base, bound, text in TARGETS:
        got = by_call.get(call, {})
        ratio = got[case] / got[base] if case in got and base in got else None
        results.append((text, ratio, bound))
        key = ratio_key(case, base)
        extra.setdefault(call, {})["target_" + key] = bound
        if ratio is not None:
            extra[call]["met_" + key] = 1 if ratio <= bound else 0
    ratio = c_ratio(c_figures) if c_figures else None
    results.append((C_TARGET[1], ratio, C_TARGET[0] + C_TARGET_RESOLUTION))
    return results, extra


def c_ratio(c_figures):
    return (c_figures["kc_func_call_noinline_ns"]
            / c_figures["tvmffi_function_call_ns"])


def print_targets(results):
    print("targets")
    for text, ratio, bound in results:
        if ratio is None:
            print("  %-4s  %-72s (not measured)" % ("-", text))
        else:
            print("  %-4s  %-72s %.3fx" % ("PASS" if ratio <= bound
                                            else "MISS", text, ratio))


def json_objects(rows, loop_ns, c_figures, extra):
    objs = []
    for call, written, cases in rows:
        obj = {"benchmark": "python_call_" + call}
        got = {c.key: c.best for c in cases if c.best is not None}
        for key, ns in got.items():
            obj[key + "_ns"] = round(ns, 4)
        # Each case to the plain floor; what releases the GIL to the floor
        # that does too; kcall to tvm-ffi.
        for key, ns in got.items():
            bases = ["floor"]
            if key in ("kcall", "kcall_wrapped", "tvm_ffi", "ctypes"):
                bases.append("floor_release_gil")
            if key.startswith("kcall"):
                bases.append("tvm_ffi")
            for base in bases:
                if base in got and key != base:
                    obj[ratio_key(key, base)] = round(ns / got[base], 4)
        obj["python_loop_ns"] = round(loop_ns, 4)
        obj.update(extra.get(call, {}))
        objs.append(obj)
    if c_figures:
        obj = {"benchmark": "ffi_call_c"}
        obj.update({k: round(v, 4) for k, v in c_figures.items()})
        k = c_figures["kc_func_call_noinline_ns"]
        obj["kc_func_call_noinline_ratio_to_tvmffi_function_call"] = \
            round(k / c_figures["tvmffi_function_call_ns"], 4)
        obj["kc_func_call_noinline_ratio_to_tvmffi_function_call_with_self"] \
            = round(k / c_figures["tvmffi_function_call_with_self_ns"], 4)
        obj["target_kc_func_call_noinline_ratio_to_tvmffi_function_call"] = \
            C_TARGET[0]
        obj["met_kc_func_call_noinline_ratio_to_tvmffi_function_call"] = \
            1 if c_ratio(c_figures) <= C_TARGET[0] + C_TARGET_RESOLUTION \
            else 0
        objs.append(obj)
    return objs


def merge_results(out, objs):
    """Replaces this benchmark's objects in OUT/results.json (creating it),
    keeping every other object as it is."""
    path = out / "results.json"
    ours = {o["benchmark"] for o in objs}
    existing = []
    if path.exists():
        try:
            existing = json.loads(path.read_text())
        except ValueError as e:
            print("%s is not JSON (%s); not merged: the figures are in %s"
                  % (path, e, out / "bench_python.json"), file=sys.stderr)
            return
        if not isinstance(existing, list):
            print("%s is not a JSON array; not merged" % path,
                  file=sys.stderr)
            return
    kept = [o for o in existing
            if not (isinstance(o, dict) and o.get("benchmark") in ours)]
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w") as f:
        # One object per line, as bench/run.sh writes them.
        f.write("[\n" + ",\n".join(json.dumps(o) for o in kept + objs)
                + "\n]\n")
    os.replace(tmp, path)
    print("wrote %s" % path, file=sys.stderr)


# ---- main ---------------------------------------------------------------------

def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="build/bench", type=Path,
                        help="where to build the helpers and merge "
                             "results.json (default: build/bench)")
    parser.add_argument("--repeat", type=int, default=7,
                        help="repeats per figure; the minimum is kept "
                             "(default: 7)")
    parser.add_argument("--min-time", type=float, default=0.03,
                        help="seconds each repeat's loop runs at least "
                             "(default: 0.03)")
    parser.add_argument("--c-iters", type=int, default=2 * 1000 * 1000,
                        help="calls per round of the C loop (default: 2e6)")
    parser.add_argument("--c-rounds", type=int, default=31,
                        help="rounds of the C loop; the fastest is kept "
                             "(default: 31)")
    args = parser.parse_args(argv)
    out = args.out
    work = out / "python"
    work.mkdir(parents=True, exist_ok=True)

    try:
        import numpy as np
    except ImportError as e:
        print("run_bench: numpy is needed: %s" % e, file=sys.stderr)
        return 1
    native_path = build_native(work)
    if native_path is None:
        return 1
    native = load_native(native_path)
    lib, lib_cb = ctypes_lib(native_path)
    tvm_ffi, why = import_tvm_ffi()
    notes = [why] if why else []
    kcall, why = import_kcall()
    if why:
        notes.append(why)
    for n in notes:
        print(n)

    a, b, c = (np.zeros(SHAPES, np.float32) for _ in range(3))
    env = dict(i=1, j=2, k=3, a=a, b=b, c=c)
    loop = Case("loop", "the Python loop", "pass", {})
    measure([loop], args.repeat, args.min_time)

    rows = []
    for call, written, _ in CALLS:
        cases = make_cases(call, env, native, lib, lib_cb, tvm_ffi, kcall)
        measure(cases, args.repeat, args.min_time)
        rows.append((call, written, cases))

    exe, why = build_ffi_call(work)
    c_figures = run_ffi_call(exe, args.c_iters, args.c_rounds) if exe else None
    if exe is None:
        print("C loop: not measured: " + why)

    print()
    print_table(rows, loop.best)
    print()
    if c_figures:
        t = c_figures["tvmffi_function_call_ns"]
        print("ffi_call_c: the exported packed call on a no-op, in a C loop; "
              "x TVMFFIFunctionCall")
        print("  (%s)" % why)
        for key, ns in c_figures.items():
            print("  %-40s %8.3f ns %6.2fx" % (key, ns, ns / t))
        print()
    results, extra = evaluate_targets(rows, c_figures)
    print_targets(results)

    objs = json_objects(rows, loop.best, c_figures, extra)
    (out / "bench_python.json").write_text(
        "[\n" + ",\n".join(json.dumps(o) for o in objs) + "\n]\n")
    merge_results(out, objs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
