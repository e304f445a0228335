"""tvm-ffi and kcall, both ways, against the real apache-tvm-ffi.

tests/tvm_ffi/kernels.cc is a tvm-ffi module written with tvm-ffi's own
C++ headers; the fixture tvm_ffi_kernels (conftest.py) compiles it against
the installed wheel. kcall loads it (kcall.load_plugin, kc_tvm_ffi_load_module
from a C host, `kcall call --plugin`), calls its functions from Python, from
C, from a program (a custom-call target) and from JAX; kcall's functions
go the other way (kcall.tvm_ffi.export) and tvm-ffi calls them. Values,
functions and errors cross both ways; nothing leaks over a million calls;
unloading a module whose functions are held is refused.

tvm-ffi is not part of the default test environment: `make test
EXTRAS=tvm` installs it, and these tests skip without it.
"""

import gc
import os
import pathlib
import shlex
import shutil
import subprocess
import sys

import numpy as np
import pytest

from conftest import TVM_FFI_SKIP

# tvm_ffi.libinfo, not tvm_ffi: a directory named tvm_ffi on sys.path (this
# tree's tests/tvm_ffi, once a test has put tests/ there) imports as an
# empty namespace package.
pytest.importorskip("tvm_ffi.libinfo", reason=TVM_FFI_SKIP)
import tvm_ffi  # noqa: E402

import kcall  # noqa: E402
import kcall.testing as kt  # noqa: E402
import kcall.tvm_ffi  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[2]
PREFIX = "tk"

# What kernels.cc exports (each `__tvm_ffi_NAME`).
EXPORTED = sorted("""
    add_one scale sum_f32 arange live_tensors echo_tensor noop noop3
    echo_int echo_float echo_bool echo_str echo_bytes echo echo_optional
    return_none type_key add_ints concat len apply apply_n make_adder
    echo_func raise_value_error raise_custom raise_kind make_shape
    make_array make_map interrupted
""".split())


@pytest.fixture(scope="module")
def kernels(tvm_ffi_kernels):
    """The module loaded by kcall under the prefix "tk"."""
    return kcall.load_plugin(tvm_ffi_kernels, prefix=PREFIX)


@pytest.fixture(scope="module")
def tk(kernels):
    """tk.NAME: the kcall function PREFIX.NAME."""
    class Funcs:
        def __getattr__(self, name):
            return kcall.get_func("%s.%s" % (PREFIX, name))
    return Funcs()


@pytest.fixture(scope="module")
def native(tvm_ffi_kernels):
    """The same module as tvm-ffi loads it."""
    return tvm_ffi.load_module(str(tvm_ffi_kernels))


@pytest.fixture
def module_copy(tvm_ffi_kernels, tmp_path):
    """copy(name): another file of the module, loaded as a plugin of its
    own (kcall counts loads per file)."""
    def copy(name):
        path = tmp_path / name
        shutil.copyfile(tvm_ffi_kernels, path)
        return path
    return copy


def f32(*values):
    return np.array(values, dtype=np.float32)


# ---- loading ------------------------------------------------------------------

def test_each_exported_function_is_registered(kernels, tvm_ffi_kernels):
    assert kernels.name == PREFIX
    assert kernels.version == "tvm-ffi"
    assert kernels.path == str(tvm_ffi_kernels)
    assert sorted(kernels.functions) == ["tk." + n for n in EXPORTED]
    assert kcall.list_funcs("tk.") == ["tk." + n for n in EXPORTED]
    # tvm-ffi's own symbols (metadata, the library context) are no
    # functions: nothing named with a leading underscore.
    assert not [n for n in kcall.list_funcs("tk._")]


def test_loading_again_returns_the_first_load(kernels, tvm_ffi_kernels):
    again = kcall.load_plugin(tvm_ffi_kernels, prefix="other")
    assert again.name == PREFIX
    assert kcall.list_funcs("other.") == []


def test_default_prefix_is_the_file_name(module_copy):
    path = module_copy("libmy_kernels.so.1")
    plugin = kcall.load_plugin(path)
    assert plugin.name == "my_kernels"
    assert kcall.get_func("my_kernels.add_ints")(2, 3) == 5


@pytest.mark.parametrize("prefix", ["", "bad prefix", "tk-x", "x" * 201])
def test_a_malformed_prefix_is_refused(module_copy, prefix):
    path = module_copy("libbadprefix.so")
    with pytest.raises(kcall.InvalidArgumentError) as info:
        kcall.load_plugin(path, prefix=prefix)
    assert str(path) in str(info.value)
    assert kcall.list_funcs("badprefix.") == []


def test_a_taken_prefix_registers_nothing(kernels, module_copy):
    path = module_copy("libtaken.so")
    with pytest.raises(kcall.AlreadyExistsError) as info:
        kcall.load_plugin(path, prefix=PREFIX)
    assert str(path) in str(info.value)
    assert kcall.list_funcs("tk.") == ["tk." + n for n in EXPORTED]
    # The file was not kept as loaded: it loads under a free prefix.
    assert kcall.load_plugin(path, prefix="taken_then_free").name == \
        "taken_then_free"


def test_a_file_with_no_tvm_ffi_function_is_refused(tmp_path):
    src = tmp_path / "plain.c"
    src.write_text("int plain_function(void) { return 1; }\n")
    lib = tmp_path / "libplain.so"
    subprocess.run(shlex.split(os.environ.get("CC") or "cc")
                   + ["-shared", "-fPIC", str(src), "-o", str(lib)],
                   check=True)
    for prefix in (None, "plain"):
        with pytest.raises(kcall.InvalidArgumentError) as info:
            kcall.load_plugin(lib, prefix=prefix)
        assert str(lib) in str(info.value)
    assert kcall.list_funcs("plain.") == []


# ---- tvm-ffi functions called from Python ------------------------------------

def test_tensors_are_written_in_place(tk, native):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.zeros_like(x)
    assert tk.add_one(x, y) is None
    np.testing.assert_array_equal(y, x + 1)
    tk.scale(x, y, 2.5)
    np.testing.assert_array_equal(y, x * np.float32(2.5))
    # The same as tvm-ffi calling it.
    z = np.zeros_like(x)
    native.scale(x, z, 2.5)
    np.testing.assert_array_equal(y, z)


@pytest.mark.parametrize("rank", [1, 2, 6, 7, 9])
def test_compact_tensors_reach_tvm_ffi_with_strides(tk, rank):
    """tvm-ffi's DLPack requires strides at every rank, and its kernels
    read them (add_one checks x.stride(i)): kcall lends a compact NumPy
    array, which it holds without strides, with the compact ones, on the
    stack up to rank 6 and in the call's scratch above."""
    shape = [1, 2, 3, 1, 2][:rank] + [2, 1, 1, 2][:max(0, rank - 5)]
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    y = np.zeros_like(x)
    assert tk.add_one(x, y) is None
    np.testing.assert_array_equal(y, x + 1)
    assert tk.add_one(kcall.Tensor(x), kcall.Tensor(y)) is None


def test_tensors_from_other_frameworks(tk):
    x = tvm_ffi.from_dlpack(f32(1, 2, 3))
    y = np.zeros(3, np.float32)
    tk.add_one(x, y)
    np.testing.assert_array_equal(y, f32(2, 3, 4))
    t = kcall.Tensor(f32(5, 6))
    out = kcall.Tensor(np.zeros(2, np.float32))
    tk.add_one(t, out)
    np.testing.assert_array_equal(np.asarray(out), f32(6, 7))


@pytest.mark.parametrize("name,value", [
    ("echo_int", 0), ("echo_int", -5), ("echo_int", 2**63 - 1),
    ("echo_int", -2**63),
    ("echo_float", 1.5), ("echo_float", -0.0), ("echo_float", float("inf")),
    ("echo_bool", True), ("echo_bool", False),
    ("echo_str", ""), ("echo_str", "short"), ("echo_str", "ünïcödé ✓"),
    ("echo_str", "a string longer than any small-string buffer"),
    ("echo_str", "nul\0inside"),
    ("echo", "nul\0inside"),
    ("echo_bytes", b""), ("echo_bytes", b"\x00\xff"),
    ("echo_bytes", bytes(range(256))),
    ("echo", None), ("echo", 7), ("echo", 2.25), ("echo", "any"),
    ("echo", b"raw"), ("echo", True),
    ("echo_optional", None), ("echo_optional", 3),
])
def test_values_round_trip(tk, native, name, value):
    back = getattr(tk, name)(value)
    assert back == value and type(back) is type(value)
    assert getattr(native, name)(value) == back


def test_a_function_returning_nothing_returns_none(tk):
    assert tk.return_none(1) is None
    assert tk.noop() is None
    assert tk.noop3(1, 2, 3) is None


def test_what_tvm_ffi_receives(tk):
    """tvm-ffi's type key of each kind of argument kcall passes."""
    x = np.zeros(3, np.float32)
    assert tk.type_key(1) == "int"
    assert tk.type_key(1.0) == "float"
    assert tk.type_key(True) == "bool"
    assert tk.type_key(None) == "None"
    assert tk.type_key("ab") in ("const char*", "ffi.SmallStr", "ffi.String")
    assert tk.type_key("a" * 40) in ("const char*", "ffi.String")
    assert tk.type_key(b"xy") in ("TVMFFIByteArray*", "ffi.SmallBytes",
                                  "ffi.Bytes")
    assert tk.type_key(x) == "DLTensor*"
    assert tk.type_key(kcall.Tensor(x)) in ("DLTensor*", "ffi.Tensor")
    assert tk.type_key(lambda: 1) == "ffi.Function"
    assert tk.type_key(kt.nop) == "ffi.Function"


def test_a_tensor_result_shares_tvm_ffi_memory(tk):
    base = tk.live_tensors()
    t = tk.arange(5)
    assert isinstance(t, kcall.Tensor)
    np.testing.assert_array_equal(np.asarray(t), f32(0, 1, 2, 3, 4))
    assert tk.live_tensors() == base + 1
    # Handed back as an argument, its DLTensor is lent for the call.
    out = np.zeros(5, np.float32)
    tk.add_one(t, out)
    np.testing.assert_array_equal(out, f32(1, 2, 3, 4, 5))
    view = np.asarray(t)
    del t
    gc.collect()
    assert tk.live_tensors() == base + 1  # the NumPy view holds it
    del view
    gc.collect()
    assert tk.live_tensors() == base


def test_a_tvm_ffi_tensor_crosses_back_as_itself(tk):
    t = tk.arange(4)
    assert tk.sum_f32(t) == 6.0
    back = tk.echo_tensor(t)
    assert np.shares_memory(np.asarray(back), np.asarray(t))


def test_shape_and_array_results_are_lists(tk):
    assert tk.make_shape(3) == [0, 1, 2]
    assert tk.make_shape(0) == []
    assert tk.make_array() == [1, "two", 3.5, None]


def test_a_map_result_is_refused_naming_its_type(tk):
    with pytest.raises(kcall.InvalidArgumentError) as info:
        tk.make_map()
    text = str(info.value)
    assert "ffi.Map" in text and "tk.make_map" in text and "result" in text


def test_a_kcall_array_argument_is_refused(tk):
    with pytest.raises(kcall.InvalidArgumentError) as info:
        tk.echo([1, 2])
    assert "argument 0" in str(info.value) and "tk.echo" in str(info.value)


# ---- functions both ways ------------------------------------------------------

def test_a_python_callback_called_by_tvm_ffi(tk):
    assert tk.apply(lambda a, b: a * b, 6, 7) == 42
    assert tk.apply(lambda a, b: "%d-%d" % (a, b), 1, 2) == "1-2"


def test_a_kcall_function_called_by_tvm_ffi(tk, hello_plugin):
    kcall.load_plugin(hello_plugin)
    assert tk.apply(kcall.get_func("hello.add"), 2, 3) == 5


def test_a_tvm_ffi_closure(tk):
    add5 = tk.make_adder(5)
    assert isinstance(add5, kcall.Function)
    assert add5(1) == 6
    # C (kcall.testing.apply) calls it too.
    assert kt.apply(add5, 10) == 15


def test_functions_keep_their_identity_across(tk, hello_plugin):
    # A Python callable went to kcall, then to tvm-ffi, and back.
    def cb():
        return None
    assert tk.echo_func(cb) is cb
    # A kcall function.
    kcall.load_plugin(hello_plugin)
    add = kcall.get_func("hello.add")
    assert tk.echo_func(add) == add
    # A tvm-ffi function goes back to tvm-ffi as itself: the module sees
    # the same object (kcall may wrap it anew on the way back).
    adder = tk.make_adder(1)
    assert tk.echo_func(tk.echo_func(adder))(1) == 2
    kcall.tvm_ffi.export("tk.echo_func", override=True)
    kcall.tvm_ffi.export("tk.make_adder", override=True)
    native_adder = tvm_ffi.get_global_func("tk.make_adder")(2)
    back = tvm_ffi.get_global_func("tk.echo_func")(native_adder)
    assert back.same_as(native_adder)


def test_an_exception_in_a_callback_reaches_the_caller(tk):
    def cb(a, b):
        raise KeyError("no such key %d" % a)
    with pytest.raises(KeyError, match="no such key 3"):
        tk.apply(cb, 3, 4)


# ---- errors, tvm-ffi to kcall -------------------------------------------------

def test_a_value_error_becomes_invalid_argument(tk):
    with pytest.raises(kcall.InvalidArgumentError) as info:
        tk.raise_value_error(3)
    assert isinstance(info.value, ValueError)
    assert info.value.code == "INVALID_ARGUMENT"
    assert info.value.message == \
        "ValueError: bad value 3: expected a positive number"


@pytest.mark.parametrize("kind,error", [
    ("ValueError", kcall.InvalidArgumentError),
    ("TypeError", kcall.InvalidArgumentError),
    ("IndexError", kcall.OutOfRangeError),
    ("KeyError", kcall.NotFoundError),
    ("AttributeError", kcall.NotFoundError),
    ("NotImplementedError", kcall.UnimplementedError),
    ("MemoryError", kcall.ResourceExhaustedError),
    ("RuntimeError", kcall.UnknownError),
    ("KernelFault", kcall.UnknownError),
])
def test_each_error_kind_has_its_code(tk, kind, error):
    with pytest.raises(error) as info:
        tk.raise_kind(kind, "what went wrong")
    assert type(info.value) is error
    assert info.value.message == "%s: what went wrong" % kind


def test_a_custom_kind_keeps_its_name(tk):
    with pytest.raises(kcall.UnknownError) as info:
        tk.raise_custom("the kernel broke")
    assert info.value.message == "KernelFault: the kernel broke"


def test_tvm_ffi_argument_checks_arrive_as_type_errors(tk):
    with pytest.raises(kcall.InvalidArgumentError) as info:
        tk.add_one(np.zeros(3), np.zeros(3, np.float32))
    assert info.value.message.startswith(
        "TypeError: x: expected a float32 tensor")
    with pytest.raises(kcall.InvalidArgumentError) as info:
        tk.noop(1)
    assert info.value.message.startswith("TypeError: ")
    with pytest.raises(kcall.InvalidArgumentError) as info:
        tk.echo_int("not an int")
    assert info.value.message.startswith("TypeError: ")


def test_an_interrupt_is_cancelled(tk):
    with pytest.raises(kcall.CancelledError):
        tk.interrupted()


def test_the_error_is_cleared_after_a_failure(tk):
    with pytest.raises(kcall.InvalidArgumentError):
        tk.raise_value_error(1)
    assert tk.add_ints(1, 2) == 3


# ---- kcall functions in tvm-ffi -----------------------------------------------

@pytest.fixture(scope="module")
def exported_hello(hello_plugin):
    kcall.load_plugin(hello_plugin)
    kcall.tvm_ffi.export("hello.", override=True)


def test_export_a_plugins_functions(exported_hello):
    add = tvm_ffi.get_global_func("hello.add")
    assert add(2, 3) == 5
    assert tvm_ffi.get_global_func("hello.concat")("a", "b", "c") == "abc"


def test_an_exported_closure(exported_hello):
    adder = tvm_ffi.get_global_func("hello.make_adder")(10)
    assert isinstance(adder, tvm_ffi.Function)
    assert adder(5) == 15


def test_an_exported_function_takes_tvm_ffi_tensors(exported_hello):
    x = f32(1, 2, 3, 4).reshape(2, 2)
    tvm_ffi.get_global_func("hello.scale")(tvm_ffi.from_dlpack(x), 2.0)
    np.testing.assert_array_equal(x, f32(2, 4, 6, 8).reshape(2, 2))
    # NumPy arrays through tvm-ffi's DLPack path.
    tvm_ffi.get_global_func("hello.scale")(x, 0.5)
    np.testing.assert_array_equal(x, f32(1, 2, 3, 4).reshape(2, 2))


def test_an_exported_function_calls_a_tvm_ffi_function(exported_hello):
    square = tvm_ffi.convert(lambda x: x * x)
    assert tvm_ffi.get_global_func("hello.call")(square, 7) == 49


def test_a_kcall_error_becomes_a_tvm_ffi_error(exported_hello):
    with pytest.raises(ValueError) as info:
        tvm_ffi.get_global_func("hello.add")(1, "two")
    assert "hello.add: argument 1: expected int, got str" in str(info.value)


def test_an_error_crossing_twice_keeps_its_kind(exported_hello, native):
    # tvm-ffi calls hello.call (kcall), which calls the module's raise_kind
    # (tvm-ffi): IndexError, out and back.
    call = tvm_ffi.get_global_func("hello.call")
    with pytest.raises(IndexError) as info:
        call(native.raise_kind, "IndexError", "deep down")
    assert str(info.value) == ("hello.call: calling the function in argument "
                               "0: in tvm-ffi function '(a function value)': "
                               "deep down")
    with pytest.raises(ValueError, match="bad value 3"):
        call(native.raise_value_error, 3)


class KernelFault(RuntimeError):
    """tests/tvm_ffi/kernels.cc's own error kind, as tvm_ffi raises it."""


def test_a_custom_kind_crossing_twice_keeps_its_kind(exported_hello, native):
    tvm_ffi.register_error("KernelFault", KernelFault)
    with pytest.raises(KernelFault) as info:
        native.raise_custom("direct")
    assert str(info.value) == "direct"
    call = tvm_ffi.get_global_func("hello.call")
    with pytest.raises(KernelFault):
        call(native.raise_custom, "the kernel broke")


def test_a_python_exception_reaches_tvm_ffi_with_its_kind():
    def lookup(key):
        raise KeyError("no entry %r" % key)
    kcall.register_func("tests.tvm.lookup", lookup, override=True)
    kcall.tvm_ffi.export("tests.tvm.lookup", override=True)
    with pytest.raises(KeyError) as info:
        tvm_ffi.get_global_func("tests.tvm.lookup")("k")
    # KeyError's str() quotes its message; the message is the exception's
    # (and the traceback kcall adds to a status from Python).
    assert "no entry 'k'" in info.value.args[0]


def test_export_values_round_trip():
    kcall.tvm_ffi.export("kcall.testing.echo", override=True)
    echo = tvm_ffi.get_global_func("kcall.testing.echo")
    for value in (None, True, -7, 2.5, "short", "a longer string, past 7",
                  b"\x00bytes"):
        back = echo(value)
        # tvm_ffi returns a string object as tvm_ffi.core.String, a str.
        assert back == value and isinstance(back, type(value))
    # A tvm-ffi function crosses to kcall and back as itself.
    f = tvm_ffi.convert(lambda: 1)
    assert echo(f).same_as(f)
    # A tvm-ffi tensor is lent to kcall for the call: returning it is
    # refused, naming the argument.
    with pytest.raises(ValueError, match="argument 0 is a borrowed tensor"):
        echo(tvm_ffi.from_dlpack(f32(1, 2, 3)))


def test_export_refuses_a_taken_name_without_override():
    tvm_ffi.register_global_func("tests.tvm.taken", lambda: "tvm-ffi's",
                                 override=True)
    kcall.register_func("tests.tvm.taken", lambda: "kcall's", override=True)
    with pytest.raises(kcall.AlreadyExistsError, match="tests.tvm.taken"):
        kcall.tvm_ffi.export("tests.tvm.taken")
    assert tvm_ffi.get_global_func("tests.tvm.taken")() == "tvm-ffi's"
    kcall.tvm_ffi.export("tests.tvm.taken", override=True)
    assert tvm_ffi.get_global_func("tests.tvm.taken")() == "kcall's"


def test_export_refuses_all_when_one_name_is_taken():
    kcall.register_func("tests.tvm.some.a", lambda: "a", override=True)
    kcall.register_func("tests.tvm.some.b", lambda: "b", override=True)
    tvm_ffi.register_global_func("tests.tvm.some.b", lambda: "tvm",
                                 override=True)
    with pytest.raises(kcall.AlreadyExistsError):
        kcall.tvm_ffi.export("tests.tvm.some.")
    assert tvm_ffi.get_global_func("tests.tvm.some.a",
                                   allow_missing=True) is None


def test_export_of_nothing_is_refused():
    with pytest.raises(kcall.NotFoundError, match="kcall.testing.nop"):
        kcall.tvm_ffi.export("kcall.testing.nopp")
    with pytest.raises(ValueError):
        kcall.tvm_ffi.export("")


def test_export_matches_names_once():
    kcall.register_func("tests.tvm.once.first", lambda: 1, override=True)
    kcall.tvm_ffi.export("tests.tvm.once.", override=True)
    kcall.register_func("tests.tvm.once.later", lambda: 2, override=True)
    assert tvm_ffi.get_global_func("tests.tvm.once.first")() == 1
    assert tvm_ffi.get_global_func("tests.tvm.once.later",
                                   allow_missing=True) is None


def test_export_ops(ops_plugin):
    kcall.load_plugin(ops_plugin)
    kcall.tvm_ffi.export("op.Add", override=True)
    a, b = f32(1, 2), f32(10, 20)
    out = tvm_ffi.get_global_func("op.Add")(a, b)
    np.testing.assert_array_equal(np.from_dlpack(out), f32(11, 22))


def test_tvm_ffi_module_functions_re_exported(tk):
    """A tvm-ffi function that kcall loaded, exported back to tvm-ffi,
    is called by tvm-ffi with its errors intact."""
    kcall.tvm_ffi.export("tk.raise_value_error", override=True)
    with pytest.raises(ValueError,
                       match="bad value 3: expected a positive number"):
        tvm_ffi.get_global_func("tk.raise_value_error")(3)
    kcall.tvm_ffi.export("tk.add_ints", override=True)
    assert tvm_ffi.get_global_func("tk.add_ints")(4, 5) == 9


# ---- from C -------------------------------------------------------------------

def kcall_config(*flags):
    done = subprocess.run([sys.executable, "-m", "kcall.config", *flags],
                          capture_output=True, text=True, check=True)
    return shlex.split(done.stdout)


def test_a_c_host_loads_and_calls_a_tvm_ffi_module(tvm_ffi_kernels, tmp_path):
    exe = tmp_path / "host"
    cmd = (shlex.split(os.environ.get("CC") or "cc")
           + ["-std=c11", "-Wall", "-Wextra", "-Werror",
              str(REPO / "tests" / "tvm_ffi" / "host.c"), "-o", str(exe)]
           + kcall_config("--cflags", "--libs"))
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, " ".join(cmd) + "\n" + done.stderr
    copy = tmp_path / "libhost_copy.so"
    shutil.copyfile(tvm_ffi_kernels, copy)
    done = subprocess.run([str(exe), str(tvm_ffi_kernels), str(copy)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    # The wording of tvm-ffi's own argument check is tvm-ffi's: cut after
    # the kind.
    lines = [l.split("TypeError: ")[0] + "TypeError: ..."
             if l.startswith("ch.noop(-3)") else l
             for l in done.stdout.splitlines()]
    assert lines == [
        "libtvm_ffi: libtvm_ffi.so",
        "ch.add_ints(40, 2) = 42",
        "ch.concat = tvm-ffi strings",
        "ch.add_one: 2 3 4 5",
        "ch.scale: 0.5 1 1.5 2",
        "ch.raise_value_error: INVALID_ARGUMENT | ValueError: bad value -3: "
        "expected a positive number",
        "ch.raise_custom: UNKNOWN | KernelFault: the kernel broke",
        "ch.noop(-3): INVALID_ARGUMENT | TypeError: ...",
        "plugin host_copy, version tvm-ffi",
        "host_copy.add_ints(1, 2) = 3",
        "unload while held: FAILED_PRECONDITION, names host_copy.add_ints: "
        "yes",
        "still callable: 3",
        "after unload: NOT_FOUND",
        "exported 1; unload: done",
        "target; unload: FAILED_PRECONDITION, names host_copy.add_one: yes",
        "done",
    ], done.stdout


def test_finding_libtvm_ffi(tmp_path):
    import tvm_ffi.libinfo
    exe = tmp_path / "library"
    cmd = (shlex.split(os.environ.get("CC") or "cc")
           + ["-std=c11", "-Wall", "-Wextra", "-Werror",
              str(REPO / "tests" / "tvm_ffi" / "library.c"), "-o", str(exe)]
           + kcall_config("--cflags", "--libs"))
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, " ".join(cmd) + "\n" + done.stderr
    env = {k: v for k, v in os.environ.items()
           if k not in ("KCALL_TVM_FFI_LIBRARY", "LD_LIBRARY_PATH",
                        "LD_PRELOAD")}
    # Not in the process, not named, not on the loader's path.
    done = subprocess.run([str(exe)], capture_output=True, text=True, env=env)
    assert done.returncode == 1, done.stdout
    assert done.stdout.startswith("FAILED_PRECONDITION: "), done.stdout
    assert "pip install apache-tvm-ffi" in done.stdout
    assert "KCALL_TVM_FFI_LIBRARY" in done.stdout
    # Named by the environment.
    lib = tvm_ffi.libinfo.find_libtvm_ffi()
    done = subprocess.run([str(exe)], capture_output=True, text=True,
                          env=dict(env, KCALL_TVM_FFI_LIBRARY=str(lib)))
    assert done.returncode == 0, done.stdout
    assert os.path.samefile(done.stdout.strip(), lib)
    # A file that is no libtvm_ffi is refused, naming it.
    done = subprocess.run([str(exe)], capture_output=True, text=True,
                          env=dict(env, KCALL_TVM_FFI_LIBRARY=str(exe)))
    assert done.returncode == 1 and str(exe) in done.stdout, done.stdout


def test_the_library_kcall_uses_is_the_wheels(kernels):
    import tvm_ffi.libinfo
    assert os.path.samefile(kcall.tvm_ffi.library(),
                            tvm_ffi.libinfo.find_libtvm_ffi())


def kcall_tool(*args):
    return subprocess.run([sys.executable, "-m", "kcall", *map(str, args)],
                          capture_output=True, text=True)


def test_the_tool_calls_a_tvm_ffi_module(tvm_ffi_kernels):
    done = kcall_tool("call", "--plugin", tvm_ffi_kernels,
                      "tvm_kernels.add_ints", 2, 3)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "5\n"
    done = kcall_tool("call", "--plugin", tvm_ffi_kernels,
                      "tvm_kernels.echo_float", "float:2.5")
    assert (done.returncode, done.stdout) == (0, "2.5\n"), done.stderr
    done = kcall_tool("call", "--plugin", tvm_ffi_kernels,
                      "tvm_kernels.raise_value_error", 7)
    assert done.returncode == 1
    assert done.stderr == (
        "kcall: error: INVALID_ARGUMENT: in tvm-ffi function "
        "'tvm_kernels.raise_value_error': ValueError: bad value 7: expected "
        "a positive number\n"), done.stderr


def test_the_tool_runs_a_program_calling_a_tvm_ffi_kernel(tvm_ffi_kernels,
                                                          tmp_path):
    # Each function of a module is also its custom-call target PREFIX.NAME:
    # `kcall run --plugin MODULE` needs nothing else.
    hlo = tmp_path / "p.hlo"
    hlo.write_text(MODULE_TARGETS_HLO.replace("tk.", "tvm_kernels."))
    done = kcall_tool("run", hlo, "--plugin", tvm_ffi_kernels,
                      "--input", "x=[[0,1,2],[3,4,5]]")
    assert done.returncode == 0, done.stderr
    assert done.stdout == ("out0: f32[2,3]\n"
                           "[[3.0, 6.0, 9.0],\n [12.0, 15.0, 18.0]]\n"), done.stdout


def test_the_tool_inspects_a_tvm_ffi_module(tvm_ffi_kernels):
    done = kcall_tool("inspect", tvm_ffi_kernels)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("plugin:   tvm_kernels"), done.stdout
    assert "tvm_kernels.add_one" in done.stdout


# ---- from programs and JAX ----------------------------------------------------

ADD_ONE_HLO = """
HloModule m

ENTRY main {
  x = f32[2,3] parameter(0)
  y = f32[2,3] custom-call(x), custom_call_target="tk.t.add_one", api_version=API_VERSION_TYPED_FFI
  ROOT z = f32[2,3] custom-call(y), custom_call_target="tk.t.scale", api_version=API_VERSION_TYPED_FFI, backend_config={factor = 3.0 : f32}
}
"""


# The same program calling the module's own targets (registered by the load).
MODULE_TARGETS_HLO = ADD_ONE_HLO.replace("tk.t.", "tk.")


def test_a_program_calls_the_modules_own_targets(tk):
    assert "tk.add_one@Host" in kcall.list_targets()
    exe = kcall.Program.parse(MODULE_TARGETS_HLO).compile()
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(np.asarray(exe(x)), (x + 1) * 3)
    with pytest.raises(kcall.InvalidArgumentError,
                       match="in tvm-ffi function 'tk.scale'.*TypeError"):
        kcall.Program.parse(MODULE_TARGETS_HLO.replace(
            "factor = 3.0 : f32", 'factor = "three"')).compile()(x)


@pytest.fixture(scope="module")
def targets(tk):
    kcall.tvm_ffi.register_target("tk.t.add_one", "tk.add_one")
    kcall.tvm_ffi.register_target("tk.t.scale", "tk.scale")
    assert "tk.t.add_one@Host" in kcall.list_targets()


def test_a_program_calls_tvm_ffi_targets(targets):
    exe = kcall.Program.parse(ADD_ONE_HLO).compile()
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(np.asarray(exe(x)), (x + 1) * 3)


def test_a_target_error_stops_the_run(targets):
    hlo = ADD_ONE_HLO.replace("f32", "f64").replace(": f64", ": f32")
    exe = kcall.Program.parse(hlo).compile()
    with pytest.raises(kcall.InvalidArgumentError,
                       match="TypeError: x: expected a float32 tensor"):
        exe(np.zeros((2, 3)))


def test_an_array_attribute_is_refused_at_compile(targets):
    hlo = ADD_ONE_HLO.replace("{factor = 3.0 : f32}",
                              "{factor = array<i64: 1, 2>}")
    with pytest.raises(kcall.InvalidArgumentError, match="factor"):
        kcall.Program.parse(hlo).compile()


def test_register_target_refuses_unknown_and_taken(targets):
    with pytest.raises(kcall.NotFoundError, match="tk.no_such"):
        kcall.tvm_ffi.register_target("tk.t.none", "tk.no_such")
    with pytest.raises(kcall.AlreadyExistsError):
        kcall.tvm_ffi.register_target("tk.t.add_one", "tk.add_one")
    with pytest.raises(ValueError):
        kcall.tvm_ffi.register_target("tk.t.gpu", "tk.add_one",
                                      platform="cuda")


def test_jax_calls_a_tvm_ffi_kernel(targets):
    jax = pytest.importorskip(
        "jax", reason="JAX is not installed: `make test EXTRAS=jax` installs "
        "it")
    import kcall.jax
    kcall.jax.register_target("tk.t.add_one")
    kcall.jax.register_target("tk.t.scale")
    with jax.default_device(jax.devices("cpu")[0]):
        x = np.arange(8, dtype=np.float32)

        def f(x):
            shape = jax.ShapeDtypeStruct(x.shape, x.dtype)
            y = jax.ffi.ffi_call("tk.t.add_one", shape)(x)
            return jax.ffi.ffi_call("tk.t.scale", shape)(
                y, factor=np.float32(0.5))
        np.testing.assert_array_equal(np.asarray(jax.jit(f)(x)),
                                      (x + 1) * np.float32(0.5))


def test_jax_calls_a_modules_own_target(tk):
    jax = pytest.importorskip(
        "jax", reason="JAX is not installed: `make test EXTRAS=jax` installs "
        "it")
    import kcall.jax
    kcall.jax.register_target("tk.add_one")
    with jax.default_device(jax.devices("cpu")[0]):
        x = np.arange(5, dtype=np.float32)
        f = jax.jit(lambda x: jax.ffi.ffi_call(
            "tk.add_one", jax.ShapeDtypeStruct(x.shape, x.dtype))(x) * 2)
        np.testing.assert_array_equal(np.asarray(f(x)), (x + 1) * 2)


# ---- reference counts and memory ----------------------------------------------

MiB = 1 << 20
GROWTH_LIMIT = 8 * MiB


def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def growth(fn, n):
    for _ in range(n // 10):
        fn()
    gc.collect()
    before = rss()
    for _ in range(n):
        fn()
    gc.collect()
    return rss() - before


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"),
                    reason="reads the resident set from /proc")
class TestLeaks:
    def test_kcall_calling_tvm_ffi(self, tk):
        noop = tk.noop.fast()
        assert growth(noop, 1_000_000) < GROWTH_LIMIT
        add = tk.add_ints
        assert growth(lambda: add(1, 2), 1_000_000) < GROWTH_LIMIT
        long_str = "a string much longer than the small-string limit"
        echo = tk.echo_str
        assert growth(lambda: echo(long_str), 100_000) < GROWTH_LIMIT
        before = sys.getrefcount(long_str)
        for _ in range(10_000):
            echo(long_str)
        assert sys.getrefcount(long_str) == before

    def test_tensors_and_closures(self, tk):
        base = tk.live_tensors()
        arange, make_adder = tk.arange, tk.make_adder
        assert growth(lambda: arange(16), 100_000) < GROWTH_LIMIT
        assert growth(lambda: make_adder(3)(4), 100_000) < GROWTH_LIMIT
        x, y = f32(1, 2), np.zeros(2, np.float32)
        add_one = tk.add_one
        assert growth(lambda: add_one(x, y), 200_000) < GROWTH_LIMIT
        assert tk.live_tensors() == base

    def test_errors(self, tk):
        def fail():
            try:
                tk.raise_value_error(1)
            except kcall.InvalidArgumentError:
                pass
        assert growth(fail, 100_000) < GROWTH_LIMIT

    def test_callbacks(self, tk):
        def cb(a, b):
            return a
        before = sys.getrefcount(cb)
        apply = tk.apply
        assert growth(lambda: apply(cb, 1, 2), 100_000) < GROWTH_LIMIT
        # tvm-ffi calls it many times in one call.
        apply_n = tk.apply_n
        assert apply_n(lambda v: v, 1_000_000, "x") == "x"
        assert growth(lambda: apply_n(lambda v: v, 100, "x"), 10_000) \
            < GROWTH_LIMIT
        kt.nop(lambda: None)  # kcall forgets the last callable it wrapped
        gc.collect()
        assert sys.getrefcount(cb) == before

    def test_tvm_ffi_calling_kcall(self, exported_hello):
        kcall.tvm_ffi.export("kcall.testing.nop", override=True)
        kcall.tvm_ffi.export("kcall.testing.echo", override=True)
        nop = tvm_ffi.get_global_func("kcall.testing.nop")
        assert growth(nop, 1_000_000) < GROWTH_LIMIT
        echo = tvm_ffi.get_global_func("kcall.testing.echo")
        long_str = "a string much longer than the small-string limit"
        assert growth(lambda: echo(long_str), 100_000) < GROWTH_LIMIT
        x = tvm_ffi.from_dlpack(f32(1, 2, 3))
        scale = tvm_ffi.get_global_func("hello.scale")
        assert growth(lambda: scale(x, 1.0), 100_000) < GROWTH_LIMIT
        adder = tvm_ffi.get_global_func("hello.make_adder")
        assert growth(lambda: adder(1)(2), 100_000) < GROWTH_LIMIT
        f = tvm_ffi.convert(lambda: 1)
        assert growth(lambda: echo(f), 100_000) < GROWTH_LIMIT

        def fail():
            try:
                tvm_ffi.get_global_func("kcall.testing.echo")()
            except Exception:
                pass
        assert growth(fail, 100_000) < GROWTH_LIMIT


# ---- unloading ----------------------------------------------------------------

def test_unloading_while_a_function_is_held_is_refused(module_copy):
    plugin = kcall.load_plugin(module_copy("libunload_a.so"), prefix="tku")
    held = kcall.get_func("tku.add_ints")
    with pytest.raises(kcall.FailedPreconditionError, match="tku.add_ints"):
        plugin.unload()
    assert held(1, 2) == 3
    assert kcall.list_funcs("tku.") == ["tku." + n for n in EXPORTED]
    del held
    gc.collect()
    plugin.unload()
    assert kcall.list_funcs("tku.") == []
    with pytest.raises(kcall.NotFoundError):
        kcall.get_func("tku.add_ints")


def test_a_closure_outlives_its_module(module_copy):
    plugin = kcall.load_plugin(module_copy("libunload_b.so"), prefix="tkc")
    adder = kcall.get_func("tkc.make_adder")(1)
    t = kcall.get_func("tkc.arange")(3)
    gc.collect()
    try:
        plugin.unload()
    except kcall.FailedPreconditionError:
        pass  # refused is fine; a crash is not
    # The file stays mapped: the closure and the tensor still work.
    assert adder(2) == 3
    np.testing.assert_array_equal(np.asarray(t), f32(0, 1, 2))
    del adder, t
    gc.collect()


def test_an_exported_tvm_ffi_function_outlives_the_unload(module_copy):
    # Exported back, a module's function is tvm-ffi's own: it holds
    # nothing of kcall's, and the file stays mapped.
    plugin = kcall.load_plugin(module_copy("libunload_c.so"), prefix="tke")
    kcall.tvm_ffi.export("tke.add_ints", override=True)
    gc.collect()
    plugin.unload()
    assert kcall.list_funcs("tke.") == []
    assert tvm_ffi.get_global_func("tke.add_ints")(2, 2) == 4


def test_unloading_a_module_with_a_target_is_refused(module_copy):
    plugin = kcall.load_plugin(module_copy("libunload_d.so"), prefix="tkt")
    kcall.tvm_ffi.register_target("tkt.t.add_one", "tkt.add_one")
    with pytest.raises(kcall.FailedPreconditionError, match="tkt"):
        plugin.unload()


def test_a_numpy_array_for_an_owning_tensor_parameter(tk):
    """A NumPy array crosses as a DLTensor*, which a function taking an
    owning ffi::Tensor refuses (tvm-ffi's TypeError, as kcall's
    InvalidArgumentError); wrapped in kcall.Tensor it crosses as a tensor
    object sharing the array's memory (docs/tvm_ffi.md)."""
    x = np.arange(3, dtype=np.float32)
    with pytest.raises(kcall.InvalidArgumentError,
                       match="Expected `ffi.Tensor` but got `DLTensor\\*`"):
        tk.echo_tensor(x)
    back = tk.echo_tensor(kcall.Tensor(x))
    assert np.shares_memory(np.asarray(back), x)


def test_tvm_ffi_python_raises_a_custom_kind_as_runtime_error(kernels):
    """What docs/tvm_ffi.md says of tvm-ffi's own Python: a kind it does
    not know (the module's KernelFault) raises RuntimeError, ValueError
    a ValueError."""
    kcall.tvm_ffi.export(PREFIX + ".raise_custom", override=True)
    with pytest.raises(RuntimeError, match="boom"):
        tvm_ffi.get_global_func(PREFIX + ".raise_custom")("boom")
    kcall.tvm_ffi.export(PREFIX + ".raise_kind", override=True)
    with pytest.raises(ValueError, match="bad"):
        tvm_ffi.get_global_func(PREFIX + ".raise_kind")("ValueError", "bad")


def test_a_kcall_tensor_through_dlpack_carries_strides(kernels):
    """kcall's DLPack export always fills strides, compact tensors too:
    tvm-ffi's from_dlpack keeps them and a kernel reading x.stride(i)
    (sum_f32 checks every one) gets the right values, at ranks 1 to 3."""
    kcall.tvm_ffi.export(PREFIX + ".sum_f32", override=True)
    total = tvm_ffi.get_global_func(PREFIX + ".sum_f32")
    for shape in [(4,), (2, 3), (2, 1, 3)]:
        x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
        t = tvm_ffi.from_dlpack(kcall.Tensor(x))
        assert tuple(t.strides) == tuple(s // 4 for s in x.strides)
        assert total(t) == float(x.sum())
