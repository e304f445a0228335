"""The README's Python quickstart, docs/python.md and docs/typed.md, run as
written."""

import os
import re
import shutil
import subprocess
import sys

import pytest

FENCE = re.compile(r"```(\w*)\n(.*?)```", re.S)


def blocks(path):
    """[(language, text)] of the fenced blocks of a Markdown file."""
    return FENCE.findall(path.read_text())


def block_starting(path, first_line):
    found = [text for _, text in blocks(path) if text.startswith(first_line)]
    assert len(found) == 1, f"{path.name}: one block starting {first_line!r}"
    return found[0]


def run(args, cwd, **kwargs):
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True,
                          **kwargs)
    assert done.returncode == 0, f"{args} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.mark.parametrize("name,first_line", [
    ("mylib.c", "/* mylib.c */"),
    ("axpy.hlo", "// axpy.hlo"),
    ("quickstart.py", "# quickstart.py"),
])
def test_readme_quickstart_is_the_files(repo, name, first_line):
    text = block_starting(repo / "README.md", first_line)
    assert text == (repo / "examples/quickstart" / name).read_text()


def test_readme_quickstart_runs_as_written(repo, tmp_path):
    for name in ("mylib.c", "axpy.hlo", "quickstart.py"):
        shutil.copy(repo / "examples/quickstart" / name, tmp_path)
    cflags = run([sys.executable, "-m", "kcall.config", "--cflags"],
                 tmp_path).split()
    cc = os.environ.get("CC", "cc")
    run([cc, "-std=c11", "-shared", "-fPIC", *cflags, "mylib.c", "-o",
         "libmylib.so"], tmp_path)

    # Step 5: the Python script prints what the README shows.
    readme = (repo / "README.md").read_text()
    shown = re.search(r"\$ python quickstart.py\n(.*)\n", readme).group(1)
    out = run([sys.executable, "quickstart.py"], tmp_path)
    assert out.strip() == shown

    # Step 4: the bundled tool prints what the README shows.
    step4 = re.search(r"\$ kcall run axpy.hlo (.*)\n(out0: .*)\n(.*)\n", readme)
    args = step4.group(1).split()
    out = run([sys.executable, "-m", "kcall", "run", "axpy.hlo", *args],
              tmp_path)
    assert out.splitlines()[:2] == [step4.group(2), step4.group(3)]


def test_tour(repo, hello_plugin):
    out = run([sys.executable, str(repo / "examples/python/tour.py"),
               str(hello_plugin)], repo)
    lines = out.splitlines()
    assert lines[0].startswith("<kcall.Plugin 'hello'")
    assert lines[1:] == [
        "hello.add(2, 3) = 5",
        "scaled columns 0 and 2: [[0.0, 1.0, 20.0], [30.0, 4.0, 50.0]]",
        "hello.call('demo.square', 7) = 49",
        "InvalidArgumentError: hello.add: argument 1: expected int, got str",
        "axpy: [2.5, 4.5, 6.5, 8.5]",
    ]


def test_docs_python_blocks_run_in_order(repo, build_dir, tmp_path):
    """docs/python.md's Python blocks, in one namespace, in a fresh
    interpreter; its shell block with the same interpreter as `python`."""
    md = repo / "docs/python.md"
    python_blocks = [t for lang, t in blocks(md) if lang == "python"]
    assert len(python_blocks) >= 5
    script = "\n".join(python_blocks).replace("build/", f"{build_dir}/")
    (tmp_path / "docs_blocks.py").write_text(script)
    run([sys.executable, str(tmp_path / "docs_blocks.py")], repo)

    shell = [t for lang, t in blocks(md) if lang == "sh"]
    assert len(shell) == 1
    # `python` is this interpreter: the one with kcall installed.
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (bindir / "python").chmod(0o755)
    env = dict(os.environ, WORK=str(tmp_path),
               PATH=f"{bindir}{os.pathsep}{os.environ['PATH']}")
    out = run(["bash", "-euo", "pipefail", "-c", shell[0]], repo, env=env)
    assert "-I" in out and "-lkcall" in out
    assert out.splitlines()[1] == "5"


def readme_section(repo, heading):
    text = (repo / "README.md").read_text()
    start = text.index(heading)
    found = re.search(r"\n##+ ", text[start + 1:])
    return text[start:start + 1 + found.start()] if found else text[start:]


@pytest.mark.parametrize("name,first_line", [
    ("from_jax.py", "# from_jax.py"),
    ("from_torch.py", "# from_torch.py"),
    ("scale.hlo", "// scale.hlo"),
])
def test_readme_one_kernel_is_the_files(repo, name, first_line):
    text = block_starting(repo / "README.md", first_line)
    assert text == (repo / "examples/everywhere" / name).read_text()


def test_readme_one_kernel_c_is_from_scale_c(repo):
    section = readme_section(repo, "### 6. One kernel")
    c_blocks = [t for lang, t in FENCE.findall(section) if lang == "c"]
    assert len(c_blocks) == 3
    source = (repo / "examples/everywhere/scale.c").read_text()
    for block in c_blocks:
        assert block in source


def test_readme_one_kernel_kcall_run(repo, scale_plugin):
    section = readme_section(repo, "### 6. One kernel")
    shown = re.search(r"\$ kcall run scale.hlo --plugin libscale_plugin.so "
                      r"(.*)\n(out0: .*)\n(.*)\n", section)
    out = run([sys.executable, "-m", "kcall", "run",
               str(repo / "examples/everywhere/scale.hlo"), "--plugin",
               str(scale_plugin), *shown.group(1).split()], repo)
    assert out.splitlines()[:2] == [shown.group(2), shown.group(3)]


def readme_output(repo, command):
    """What README section 6 shows `command` printing."""
    section = readme_section(repo, "### 6. One kernel")
    return re.search(re.escape("$ " + command) + r"\n(.*)\n", section).group(1)


# ---- docs/typed.md --------------------------------------------------------

def typed_blocks(repo):
    return blocks(repo / "docs/typed.md")


def typed_shown_output(repo):
    """The output docs/typed.md shows for use_typed.py."""
    for _, text in typed_blocks(repo):
        if text.startswith("$ python use_typed.py"):
            return text.splitlines()[1:]
    pytest.fail("docs/typed.md shows no run of use_typed.py")


def test_typed_python_block_is_the_file(repo):
    found = [t for lang, t in typed_blocks(repo)
             if lang == "python" and t.startswith("# use_typed.py")]
    assert found == [(repo / "examples/typed/use_typed.py").read_text()]


def test_typed_use_typed_prints_what_the_doc_shows(repo, build_file):
    plugins = [str(build_file("examples/typed/libtyped_plugin.so")),
               str(build_file("examples/typed/libtyped_c_plugin.so"))]
    out = run([sys.executable, str(repo / "examples/typed/use_typed.py"),
               *plugins], repo)
    assert out.splitlines() == typed_shown_output(repo)


def test_typed_build_lines_build_the_plugins(repo, tmp_path):
    """The page's compile lines, as written, against the installed package;
    then use_typed.py with what they built."""
    lines = [line for _, text in typed_blocks(repo)
             for line in text.splitlines()
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
    out = run([sys.executable, "use_typed.py", "./libtyped_plugin.so",
               "./libtyped_c_plugin.so"], tmp_path)
    assert out.splitlines() == typed_shown_output(repo)
