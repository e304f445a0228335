"""Allocation failures seen from Python: never a crash, always a
MemoryError, and everything as it was afterwards.

Two sweeps, each failing one allocation at a time:

- `import kcall`: the extension's initialisation, with the n-th allocation
  Python makes for it failed (CPython's own hook, _testcapi.set_nomemory),
  in a fresh process per n; then `import kcall` with memory available
  must work. A stride over n (KCALL_FAULT_STRIDE, default 25) keeps this
  to seconds; KCALL_FAULT_STRIDE=1 runs every point.
- whole paths after the import (fault_paths.py): programs parsed,
  compiled and run (HLO and StableHLO; a while loop with a sort), a
  Python function called through kcall with every kind of argument, a
  plugin's op called through kcall.ops and the plugin unloaded, tvm-ffi
  export and import. There the allocations libkcall makes for itself are
  failed through its internal allocator (kc_allocator_set_internal) by
  fault_shim.c, preloaded, for every n.
"""

import os
import subprocess
import sys

import pytest

import kcall  # noqa: F401 (loads libkcall, which the shim links)

HERE = os.path.dirname(os.path.abspath(__file__))
CC = os.environ.get("CC") or "cc"


def stride():
    return max(1, int(os.environ.get("KCALL_FAULT_STRIDE", "25")))


def loaded_libkcall():
    """The libkcall this process runs with (the installed package's, or a
    build tree's under the sanitizer runs)."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split()
            if len(fields) >= 6 and os.path.basename(fields[5]).startswith("libkcall.so"):
                return fields[5]
    pytest.fail("no libkcall is loaded in this process")


@pytest.fixture(scope="module")
def shim(tmp_path_factory):
    """fault_shim.c built against the libkcall kcall's extension loaded
    (by its soname, so the preloaded shim and the extension share it)."""
    out = tmp_path_factory.mktemp("faults") / "libkt_fault_shim.so"
    lib = loaded_libkcall()
    include = os.path.join(os.path.dirname(os.path.dirname(HERE)), "include")
    cmd = [CC, "-std=c11", "-shared", "-fPIC", "-O1", "-Wall", "-Wextra",
           "-Werror", "-I" + include, os.path.join(HERE, "fault_shim.c"), "-o", str(out),
           lib, "-Wl,-rpath," + os.path.dirname(lib)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        pytest.fail("building the fault shim failed:\n%s\n%s" % (" ".join(cmd), done.stderr))
    return out


def preloading(path):
    """The environment with `path` preloaded after whatever is (a
    sanitizer's runtime must stay first)."""
    env = dict(os.environ)
    env["LD_PRELOAD"] = " ".join(p for p in [env.get("LD_PRELOAD", ""), str(path)] if p)
    return env


IMPORT_ONE = r"""
import glob, importlib.util, os, sys
import _testcapi
import numpy  # the dependency's allocations are not the extension's
path = glob.glob(os.path.join(os.path.dirname(importlib.util.find_spec("kcall").origin),
                              "_core*.so"))[0]
spec = importlib.util.spec_from_file_location("kcall._core", path)
n = int(sys.argv[1])
_testcapi.set_nomemory(n, n + 1)
try:
    importlib.util.module_from_spec(spec)
    outcome = "imported"
except MemoryError:
    outcome = "MemoryError"
finally:
    _testcapi.remove_mem_hooks()
import kcall
import numpy as np
exe = kcall.Program.parse("HloModule m\nENTRY e {\n x = f32[2] parameter(0)\n"
                          " ROOT y = f32[2] add(x, x)\n}\n").compile()
assert np.asarray(exe(np.ones(2, np.float32))).tolist() == [2.0, 2.0]
print(outcome)
"""


def test_import_survives_an_allocation_failure_at_each_point():
    pytest.importorskip("_testcapi", reason="this Python has no _testcapi "
                        "(its allocation-failure hook)")
    # The extension's initialisation makes a few hundred allocations;
    # points past it import normally.
    outcomes = {}
    for n in range(1, 1200, stride()):
        done = subprocess.run([sys.executable, "-c", IMPORT_ONE, str(n)],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, (
            "allocation %d failed in the extension's initialisation: exit %d\n%s"
            % (n, done.returncode, done.stderr[-3000:]))
        outcomes[n] = done.stdout.strip()
    assert set(outcomes.values()) <= {"imported", "MemoryError"}, outcomes
    # The sweep reached past the initialisation, and into it.
    assert "MemoryError" in outcomes.values() and outcomes[max(outcomes)] == "imported"


def test_paths_survive_every_allocation_failure(shim, build_file, request):
    cmd = [sys.executable, os.path.join(HERE, "fault_paths.py"), str(shim),
           "--ops", str(build_file("tests/fixtures/kt_plugin_unload.so"))]
    try:
        import tvm_ffi.libinfo  # noqa: F401
        cmd += ["--tvm-ffi", str(request.getfixturevalue("tvm_ffi_kernels"))]
    except ImportError:
        print("tvm-ffi is not installed: its paths are not swept")
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=900,
                          env=preloading(shim))
    assert done.returncode == 0, "exit %d\n%s\n%s" % (
        done.returncode, done.stdout, done.stderr[-3000:])
    swept = {}
    for line in done.stdout.split("\n"):
        if line:
            name, first, points = line.split()
            swept[name] = int(points)
    print(swept)
    expected = {"program_axpy", "program_sort_loop", "program_stablehlo",
                "python_callback", "ops_calls"}
    assert expected <= set(swept), swept
    # Each path reached allocations of its own (a shim that failed none
    # would sweep nothing).
    assert all(swept[name] > 0 for name in expected), swept
