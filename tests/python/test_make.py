"""The Makefile's set-up of `make test` and `make pytest`, read from the
commands make would run (`make -n`): the environment each set of EXTRAS
gets, the pinned versions, and the package build that reuses the C build.
"""

import os
import pathlib
import re
import shutil
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(not shutil.which("make"), reason="needs make")


def make_n(*args):
    """What `make -n -B ARGS` prints (every command, nothing run) and its
    status; make's own variables from the make running the tests are left
    out, as is EXTRAS."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES",
                        "EXTRAS", "BUILD", "CMAKE_ARGS")}
    done = subprocess.run(["make", "-n", "-B", "-C", str(REPO), *args],
                          capture_output=True, text=True, env=env)
    return done.stdout + done.stderr, done.returncode


@pytest.mark.parametrize("extras,venv", [
    ("", ".venv"),
    ("jax", ".venv-with-jax"),
    ("torch", ".venv-with-torch"),
    ("torch jax", ".venv-with-jax-torch"),
    ("jax torch jax", ".venv-with-jax-torch"),
    ("tvm", ".venv-with-tvm"),
    ("tvm jax", ".venv-with-jax-tvm"),
])
def test_each_set_of_extras_has_its_own_environment(extras, venv, tmp_path):
    out, status = make_n("pytest", f"EXTRAS={extras}", f"BUILD={tmp_path}")
    assert status == 0, out
    assert f"-m venv {venv}\n" in out
    assert f"{venv}/bin/python -m pytest" in out
    # No other environment is installed into or run.
    used = set(re.findall(r"(\.venv[\w-]*)/bin/python", out))
    assert used == {venv}, out


def test_extras_are_pinned(tmp_path):
    out, status = make_n("pytest", "EXTRAS=jax torch", f"BUILD={tmp_path}")
    assert status == 0, out
    install = next(l for l in out.splitlines()
                   if "-m pip install" in l and ".venv-with-jax-torch" in l
                   and "--no-build-isolation" not in l)
    for name in ("jax", "jaxlib", "torch"):
        assert re.search(rf"(^|\s){name}==\d+(\.\d+)+(\s|$)", install), install
    # Without EXTRAS neither is installed.
    # (The lines pip runs: the checkout's path may hold either word.)
    out, _ = make_n("pytest", f"BUILD={tmp_path}")
    installs = "\n".join(l for l in out.splitlines() if "pip install" in l)
    assert "jax" not in installs and "torch" not in installs
    assert "apache-tvm-ffi" not in installs


def test_tvm_ffi_is_pinned_alike_for_the_tests_and_the_benchmarks(tmp_path):
    out, status = make_n("pytest", "EXTRAS=tvm", f"BUILD={tmp_path}")
    assert status == 0, out
    install = next(l for l in out.splitlines()
                   if "-m pip install" in l and ".venv-with-tvm" in l
                   and "--no-build-isolation" not in l)
    pins = re.findall(r"(?:^|\s)apache-tvm-ffi==(\S+)", install)
    assert len(pins) == 1, install
    # The benchmarks' environment installs the same version.
    out, status = make_n(".venv-bench/.stamp")
    assert status == 0, out
    install = next(l for l in out.splitlines()
                   if "-m pip install" in l and ".venv-bench" in l)
    assert re.findall(r"(?:^|\s)apache-tvm-ffi==(\S+)", install) == pins, \
        install


def test_an_unknown_test_group_stops_make(tmp_path):
    out, status = make_n("test", "EXTRAS=jax tensorflow", f"BUILD={tmp_path}")
    assert status != 0
    assert ("unknown test group 'tensorflow' in EXTRAS (expected jax, ort, "
            "tf, torch or tvm)" in out), out
    assert "cmake" not in out, "make went on to build: " + out


def test_the_package_reuses_the_c_build_and_shows_its_build(tmp_path):
    out, status = make_n("pytest", f"BUILD={tmp_path}")
    assert status == 0, out
    install = next(l for l in out.splitlines() if "--no-build-isolation" in l)
    assert f"-DKCALL_PREBUILT_DIR={tmp_path}" in install
    assert f"--config-settings=build-dir={tmp_path}/pip-build" in install
    # pip shows the build's own output as it goes (-q would hide it all).
    assert re.search(r"pip install -v\b", install), install
    assert " -q" not in install


def test_demo_builds_what_the_demos_run_and_not_the_tests(tmp_path):
    out, status = make_n("demo", f"BUILD={tmp_path}")
    assert status == 0, out
    builds = [l for l in out.splitlines() if l.startswith("cmake --build")]
    assert len(builds) == 1 and " --target " in builds[0], out
    targets = builds[0].split(" --target ")[1].split()
    # What each demo script checks for before it runs is built.
    for script in ("examples/xla/demo.sh", "examples/hello/demo.sh"):
        text = (REPO / script).read_text()
        made = re.findall(r"^(?:kcall|plugin|host)=\$build/(\S+)$", text, re.MULTILINE)
        assert len(made) == 3, (script, made)
        for path in made:
            name = pathlib.PurePath(path).name
            target = "kcall_cli" if name == "kcall" else re.sub(r"^lib|\.so$", "", name)
            assert target in targets, (script, path, targets)
