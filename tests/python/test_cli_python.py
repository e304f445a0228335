"""Python functions from the kcall tool: the plugin libkcall_python.so runs
the modules named in KCALL_PYTHON_MODULES (or with --python), and what they
register with kcall.register_func / kcall.register_target is called by
`kcall call`, `kcall run`, `kcall inspect`, C plugins and Python hosts.

Each test runs the bundled tool (`python -m kcall`) in a process of its
own, against the package as pip installed it.
"""

import os
import pathlib
import re
import subprocess
import sys
import sysconfig
import textwrap

import pytest

import kcall
from kcall import config

PKG = pathlib.Path(kcall.__file__).resolve().parent
REPO = pathlib.Path(__file__).resolve().parents[2]
PLUGIN = PKG / "lib" / "libkcall_python.so"


def quoted(text):
    """How kcall's messages quote printable ASCII text (kc_sv_format_quoted):
    whole up to 80 bytes, else its first 56 and last 24 and its length."""
    text = str(text)
    assert text.isascii() and text.isprintable() and "'" not in text
    if len(text) <= 80:
        return "'%s'" % text
    return "'%s'...'%s' (%d bytes)" % (text[:56], text[-24:], len(text))

pytestmark = [
    pytest.mark.skipif(not (PKG / "bin" / "kcall").is_file(),
                       reason="needs kcall as pip installs it (the tool in "
                              "bin/); `make pytest` installs it"),
    pytest.mark.skipif(not sysconfig.get_config_var("Py_ENABLE_SHARED"),
                       reason="this Python has no shared libpython, so the "
                              "package has no Python plugin"),
]

# What the tests' modules register. The helper is a module global, so a
# function registered by a file run with runpy still finds its globals.
DEMO = '''
import kcall

def _sum(a, b):
    return a + b

@kcall.register_func("demo.py_add")
def py_add(a, b):
    return _sum(a, b)

@kcall.register_func("demo.py_fail")
def py_fail(x):
    raise ValueError("demo.py_fail refuses %r" % (x,))
'''


def kcall_tool(*args, env=None, cwd=None):
    """Runs `python -m kcall ARGS` (the bundled tool) and returns the
    completed process."""
    return subprocess.run([sys.executable, "-m", "kcall", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd,
                          env=dict(os.environ, **(env or {})))


def ok(result):
    assert result.returncode == 0, "exit %d\nstdout:\n%s\nstderr:\n%s" % (
        result.returncode, result.stdout, result.stderr)
    return result.stdout


@pytest.fixture
def demo(tmp_path):
    """demo.py in tmp_path, registering demo.py_add and demo.py_fail."""
    path = tmp_path / "demo.py"
    path.write_text(DEMO)
    return path


# ---- the plugin, named with --plugin and KCALL_PYTHON_MODULES ----------------

def test_config_names_the_plugin():
    out = subprocess.run([sys.executable, "-m", "kcall.config",
                          "--python-plugin"], capture_output=True, text=True,
                         check=True).stdout
    assert out == "%s\n" % PLUGIN
    assert config.get_python_plugin() == str(PLUGIN)
    assert PLUGIN.is_file()


def test_call_a_python_function(demo):
    result = kcall_tool("call", "--plugin", PLUGIN, "demo.py_add", 2, 3,
                        env={"KCALL_PYTHON_MODULES": str(demo)})
    assert ok(result) == "5\n"


def test_module_name_found_on_pythonpath(demo):
    env = {"KCALL_PYTHON_MODULES": "demo", "PYTHONPATH": str(demo.parent)}
    result = kcall_tool("call", "--plugin", PLUGIN, "demo.py_add", "float:2.5",
                        1, env=env)
    assert ok(result) == "3.5\n"


def test_several_modules_comma_separated(demo, tmp_path):
    (tmp_path / "more.py").write_text(textwrap.dedent('''
        import kcall
        kcall.register_func("more.upper", lambda s: s.upper())
    '''))
    env = {"KCALL_PYTHON_MODULES": " demo , ,%s" % (tmp_path / "more.py"),
           "PYTHONPATH": str(tmp_path)}
    assert ok(kcall_tool("call", "--plugin", PLUGIN, "more.upper", "abc",
                         env=env)) == "ABC\n"


def test_function_that_raises_reports_type_message_and_traceback(demo):
    result = kcall_tool("call", "--plugin", PLUGIN, "demo.py_fail", 7,
                        env={"KCALL_PYTHON_MODULES": str(demo)})
    assert result.returncode == 1
    assert result.stdout == ""
    err = result.stderr
    assert err.startswith("kcall: error: INVALID_ARGUMENT: ValueError: "
                          "demo.py_fail refuses 7\n")
    assert "Python traceback (most recent call last):" in err
    assert 'File "%s", line 13, in py_fail' % demo in err
    assert 'raise ValueError("demo.py_fail refuses %r" % (x,))' in err


def test_module_that_raises_fails_the_load(demo, tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text(textwrap.dedent('''
        import kcall

        @kcall.register_func("broken.f")
        def f():
            return 1

        def setup():
            raise RuntimeError("broken.py cannot start")

        setup()
    '''))
    env = {"KCALL_PYTHON_MODULES": "%s,%s" % (demo, broken)}
    result = kcall_tool("call", "--plugin", PLUGIN, "demo.py_add", 2, 3,
                        env=env)
    assert result.returncode == 1
    assert result.stdout == ""
    err = result.stderr
    assert err.startswith(
        "kcall: error: UNKNOWN: loading plugin %s: in init of plugin "
        "'python': running Python file '%s': RuntimeError: broken.py cannot "
        "start\nPython traceback (most recent call last):\n"
        % (quoted(PLUGIN), broken))
    assert 'File "%s", line 11, in <module>' % broken in err
    assert 'File "%s", line 9, in setup' % broken in err
    # runpy's and importlib's own frames are left out.
    assert "<frozen" not in err


def test_missing_module_is_not_found():
    result = kcall_tool("call", "--plugin", PLUGIN, "demo.py_add", 2, 3,
                        env={"KCALL_PYTHON_MODULES": "no_such_kcall_module"})
    assert result.returncode == 1
    assert result.stderr == (
        "kcall: error: NOT_FOUND: loading plugin %s: in init of plugin "
        "'python': importing Python module 'no_such_kcall_module': "
        "ModuleNotFoundError: No module named 'no_such_kcall_module'\n"
        % quoted(PLUGIN))


def test_a_name_taken_twice_publishes_nothing(demo, tmp_path):
    (tmp_path / "again.py").write_text(
        "import kcall\nkcall.register_func('demo.py_add', print)\n")
    env = {"KCALL_PYTHON_MODULES": "%s,%s" % (demo, tmp_path / "again.py")}
    result = kcall_tool("call", "--plugin", PLUGIN, "demo.py_add", 2, 3,
                        env=env)
    assert result.returncode == 1
    assert result.stderr.startswith("kcall: error: ALREADY_EXISTS: ")
    assert "kcall.AlreadyExistsError: a function named 'demo.py_add' is " \
           "already registered" in result.stderr


def test_inspect_lists_what_the_modules_registered(demo):
    out = ok(kcall_tool("inspect", PLUGIN,
                        env={"KCALL_PYTHON_MODULES": str(demo)}))
    lines = out.splitlines()
    assert lines[0] == "plugin:   python"
    assert re.fullmatch(r"version:  \d+\.\d+\.\d+ \(Python %d\.%d\.\d+.*\)"
                        % sys.version_info[:2], lines[1])
    assert lines[2] == "path:     %s" % PLUGIN
    assert lines[4:] == ["registrations: 2",
                         "  function   demo.py_add",
                         "  function   demo.py_fail"]


def test_inspect_without_modules_registers_nothing():
    out = ok(kcall_tool("inspect", PLUGIN, env={"KCALL_PYTHON_MODULES": ""}))
    assert "registrations: 0\n" in out


# ---- --python MODULE --------------------------------------------------------

def test_call_with_python_option(demo):
    assert ok(kcall_tool("call", "--python", demo, "demo.py_add", 2, 3)) \
        == "5\n"
    assert ok(kcall_tool("call", "--python=demo", "demo.py_add", 4, 5,
                         env={"PYTHONPATH": str(demo.parent)})) == "9\n"


def test_python_option_replaces_the_environment(demo):
    env = {"KCALL_PYTHON_MODULES": "no_such_kcall_module"}
    assert ok(kcall_tool("call", "--python", demo, "demo.py_add", 2, 3,
                         env=env)) == "5\n"


def test_python_option_repeated(demo, tmp_path):
    (tmp_path / "more.py").write_text(
        "import kcall\nkcall.register_func('more.neg', lambda x: -x)\n")
    out = ok(kcall_tool("inspect", "--python", demo, "--python",
                        tmp_path / "more.py"))
    assert out.splitlines()[4:] == ["registrations: 3",
                                    "  function   demo.py_add",
                                    "  function   demo.py_fail",
                                    "  function   more.neg"]


def test_inspect_python_after_the_plugins(demo, hello_plugin):
    out = ok(kcall_tool("inspect", "--python", demo, hello_plugin))
    blocks = out.split("\n\n")
    assert blocks[0].startswith("plugin:   hello\n")
    assert blocks[1].startswith("plugin:   python\n")


def test_c_calls_python_and_python_calls_c(tmp_path, hello_plugin):
    # The modules run after the plugins, so they may look C functions up;
    # hello.call (C) looks the Python function up by name and calls it.
    (tmp_path / "both.py").write_text(textwrap.dedent('''
        import kcall
        c_add = kcall.get_func("hello.add")
        kcall.register_func("both.add3", lambda a, b, c: c_add(c_add(a, b), c))
    '''))
    args = ["--plugin", hello_plugin, "--python", tmp_path / "both.py"]
    assert ok(kcall_tool("call", *args, "both.add3", 1, 2, 3)) == "6\n"
    assert ok(kcall_tool("call", *args, "hello.call", "both.add3", 1, 2, 3)) \
        == "6\n"


def test_what_a_function_prints_comes_before_the_result(tmp_path):
    (tmp_path / "talk.py").write_text(textwrap.dedent('''
        import sys, kcall

        @kcall.register_func("talk.hello")
        def hello(name):
            print("hello,", name)
            print("to stderr", file=sys.stderr)
            return len(name)
    '''))
    result = kcall_tool("call", "--python", tmp_path / "talk.py",
                        "talk.hello", "world")
    assert ok(result) == "hello, world\n5\n"
    assert result.stderr == "to stderr\n"


def test_the_interpreter_is_this_environments(tmp_path):
    # Started by the plugin, configured as the `python` of the environment
    # the package is installed in: same prefix, same kcall, NumPy found.
    (tmp_path / "where.py").write_text(textwrap.dedent('''
        import sys, kcall
        kcall.register_func("where.prefix", lambda: sys.prefix)
        kcall.register_func("where.kcall", lambda: kcall.__file__)
    '''))
    args = ["--python", tmp_path / "where.py"]
    assert ok(kcall_tool("call", *args, "where.prefix")) == sys.prefix + "\n"
    assert ok(kcall_tool("call", *args, "where.kcall")) == \
        str(PKG / "__init__.py") + "\n"


def test_run_a_program_with_a_python_target(tmp_path):
    pytest.importorskip("numpy")
    (tmp_path / "targets.py").write_text(textwrap.dedent('''
        import kcall

        @kcall.register_target("pydemo.axpy", args=["f32", "f32"],
                               results=["f32"], attrs={"alpha": "f32"})
        def axpy(x, y, out, *, alpha):
            out[...] = alpha * x + y
    '''))
    (tmp_path / "axpy.hlo").write_text(textwrap.dedent('''
        HloModule axpy

        ENTRY main {
          x = f32[4] parameter(0)
          y = f32[4] parameter(1)
          ROOT r = f32[4] custom-call(x, y), custom_call_target="pydemo.axpy", api_version=API_VERSION_TYPED_FFI, backend_config={alpha = 2.0 : f32}
        }
    '''))
    out = ok(kcall_tool("run", "axpy.hlo", "--python", "targets.py",
                        "--input", "x=[1,2,3,4]", "--input", "y=0.5",
                        cwd=tmp_path))
    assert out == "out0: f32[4]\n[2.5, 4.5, 6.5, 8.5]\n"


@pytest.mark.parametrize("command", [["call"], ["inspect"], ["run", "a.hlo"]])
def test_python_option_needs_a_module(command):
    for args in (["--python"], ["--python="]):
        result = kcall_tool(*command, *args)
        assert result.returncode == 2
        assert "--python needs a" in result.stderr


# ---- a Python host ----------------------------------------------------------

def test_python_host_loads_the_plugin(demo):
    # Python already runs: the plugin uses that interpreter, and its
    # functions are called from Python threads and from kcall's pool.
    script = textwrap.dedent('''
        import os, sys, threading
        import kcall
        from kcall import config

        os.environ["KCALL_PYTHON_MODULES"] = sys.argv[1]
        plugin = kcall.load_plugin(config.get_python_plugin())
        print(plugin.name, plugin.functions)
        add = kcall.get_func("demo.py_add")
        results = []
        threads = [threading.Thread(target=lambda i=i: results.append(add(i, i)))
                   for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        print(sorted(results))
        try:
            kcall.get_func("demo.py_fail")(1)
        except ValueError as e:
            print(type(e).__name__, e)
    ''')
    result = subprocess.run([sys.executable, "-c", script, str(demo)],
                            capture_output=True, text=True, timeout=120)
    assert ok(result).splitlines() == [
        "python ['demo.py_add', 'demo.py_fail']",
        "[0, 2, 4, 6, 8, 10, 12, 14]",
        "ValueError demo.py_fail refuses 1",
    ]

