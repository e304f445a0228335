"""Typed functions (docs/typed.md, examples/typed/): the C++ and C plugins
called from Python, and the page's Python file, output and build lines,
run as written."""

import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

import kcall

FENCE = re.compile(r"```(\w*)\n(.*?)```", re.S)


@pytest.fixture(scope="module")
def typed_plugins(build_file):
    paths = (build_file("examples/typed/libtyped_plugin.so"),
             build_file("examples/typed/libtyped_c_plugin.so"))
    for path in paths:
        kcall.load_plugin(str(path))
    return paths


def doc_blocks(repo):
    return FENCE.findall((repo / "docs/typed.md").read_text())


def shown_output(repo):
    """The output docs/typed.md shows for use_typed.py."""
    for _, text in doc_blocks(repo):
        if text.startswith("$ python use_typed.py"):
            return text.splitlines()[1:]
    pytest.fail("docs/typed.md shows no run of use_typed.py")


def run(args, cwd, **kwargs):
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True,
                          **kwargs)
    assert done.returncode == 0, f"{args} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_doc_python_block_is_the_file(repo):
    found = [t for lang, t in doc_blocks(repo)
             if lang == "python" and t.startswith("# use_typed.py")]
    assert found == [(repo / "examples/typed/use_typed.py").read_text()]


def test_use_typed_prints_what_the_doc_shows(repo, typed_plugins):
    out = run([sys.executable, str(repo / "examples/typed/use_typed.py"),
               *map(str, typed_plugins)], repo)
    assert out.splitlines() == shown_output(repo)


def test_doc_build_lines_build_the_plugins(repo, tmp_path):
    """The page's compile lines, as written, against this install."""
    lines = [line for _, text in doc_blocks(repo) for line in text.splitlines()
             if line.startswith(("c++ ", "cc "))]
    assert len(lines) == 2
    for name in ("typed_plugin.cpp", "typed_c_plugin.c", "use_typed.py"):
        shutil.copy(repo / "examples/typed" / name, tmp_path)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (bindir / "python").chmod(0o755)
    env = dict(os.environ, PATH=f"{bindir}{os.pathsep}{os.environ['PATH']}")
    run(["bash", "-euo", "pipefail", "-c", "\n".join(lines)], tmp_path, env=env)
    # In a fresh process: this one has the build's plugins loaded already.
    out = run([sys.executable, "use_typed.py", "./libtyped_plugin.so",
               "./libtyped_c_plugin.so"], tmp_path)
    assert out.splitlines() == shown_output(repo)


def test_errors_are_exceptions_of_their_code(typed_plugins):
    add = kcall.get_func("typed.add")
    with pytest.raises(kcall.InvalidArgumentError,
                       match=r"^typed\.add: expected 2 arguments, got 1$"):
        add(1)
    with pytest.raises(TypeError, match="argument 0: expected int, got float"):
        add(1.5, 2)
    with pytest.raises(kcall.OutOfRangeError,
                       match="typed.add: the sum does not fit in 64 bits"):
        add(2**63 - 1, 1)
    greet = kcall.get_func("typed.greet")
    with pytest.raises(IndexError, match=r"expected an int in \[-2147483648, "
                                         r"2147483647\], got 4294967296"):
        greet("x", 2**32)


def test_optional_parameter(typed_plugins):
    greet = kcall.get_func("typed.greet")
    assert greet("x") == "hello x"
    assert greet("x", None) == "hello x"
    assert greet("x", 3) == "hello x x x"


def test_tensors_in_and_out(typed_plugins):
    scaled = kcall.get_func("typed.scaled")
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = scaled(x, 2)
    assert isinstance(y, kcall.Tensor)
    np.testing.assert_array_equal(np.asarray(y), x * 2)
    with pytest.raises(kcall.InvalidArgumentError,
                       match="expected a tensor of f32, got one of f64"):
        scaled(x.astype(np.float64), 2)
    with pytest.raises(NotImplementedError, match="x must be compact"):
        scaled(x[:, ::2], 2)

    fill = kcall.get_func("ctyped.fill")
    z = np.zeros((2, 2), dtype=np.float32)
    fill(z, -1.25)
    np.testing.assert_array_equal(z, np.full((2, 2), -1.25, np.float32))
    with pytest.raises(kcall.UnimplementedError, match="not compact"):
        fill(np.zeros((2, 4), dtype=np.float32)[:, ::2], 1)
    with pytest.raises(kcall.InvalidArgumentError,
                       match="argument 0: expected a tensor of f32, got one "
                             "of i64"):
        fill(np.zeros(2, dtype=np.int64), 1)


def test_functions_both_ways(typed_plugins):
    twice = kcall.get_func("typed.twice")
    assert twice(lambda s: s + "!", "hi") == "hi!!"
    assert twice(kcall.get_func("typed.greet"), "you") == "hello hello you"
    scaler = kcall.get_func("typed.make_scaler")(0.5)
    assert isinstance(scaler, kcall.Function)
    assert scaler(3) == 1.5
    with pytest.raises(kcall.InvalidArgumentError,
                       match=r"^typed\.scaler: argument 0: expected float, "
                             r"got str$"):
        scaler("3")
    # A Python exception raised in the function passed comes back as itself.
    def boom(_):
        raise KeyError("nope")
    with pytest.raises(KeyError, match="nope"):
        twice(boom, 1)
