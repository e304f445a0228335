"""Packed functions from Python: the registry, every type both ways,
callbacks, plugins."""

import pytest

import kcall
import kcall.testing as kt


def test_get_func_and_repr():
    f = kcall.get_func("kcall.testing.nop")
    assert isinstance(f, kcall.Function)
    assert f.name == "kcall.testing.nop"
    assert repr(f) == "<kcall.Function 'kcall.testing.nop'>"
    assert f() is None
    assert f == kcall.get_func("kcall.testing.nop")
    assert hash(f) == hash(kcall.get_func("kcall.testing.nop"))
    assert f.callable is None


def test_get_func_missing_names_the_nearest():
    with pytest.raises(kcall.NotFoundError) as info:
        kcall.get_func("kcall.testing.nopp")
    assert isinstance(info.value, LookupError)
    assert info.value.code == "NOT_FOUND"
    assert "kcall.testing.nop" in str(info.value)


def test_list_funcs_prefix():
    names = kcall.list_funcs("kcall.testing.")
    assert "kcall.testing.nop" in names and "kcall.testing.apply" in names
    assert names == sorted(names)
    assert all(n.startswith("kcall.testing.") for n in names)
    assert kcall.list_funcs("no.such.prefix.") == []


@pytest.mark.parametrize("value", [
    None, True, False, 0, -1, 2**63 - 1, -2**63, 1.5, -0.0, float("inf"),
    "", "short", "a longer string", "ünïcödé ✓", "nul\0inside", b"", b"\x00\xff",
    [], [1, 2.5, "x", None, True, [3, [4]]], (1, 2),
])
def test_values_round_trip(value):
    back = kt.echo(value)
    expected = list(value) if isinstance(value, tuple) else value
    assert back == expected
    assert type(back) is type(expected)


def test_argument_types_as_c_sees_them():
    import numpy as np
    got = kt.types(1, 2.0, "ab", "abcdefghij", b"x", None, True,
                   np.zeros(3), [1], lambda: 1, kt.nop, kcall.Tensor(np.zeros(2)))
    assert got == ["int", "float", "small_str", "raw_str", "bytes", "none",
                   "bool", "dltensor", "array", "function", "function",
                   "tensor"]


def test_numpy_scalars_are_plain_values():
    import numpy as np
    assert kt.types(np.int64(3), np.float32(1.5), np.bool_(True)) == \
        ["int", "float", "bool"]
    assert kt.echo(np.int32(-7)) == -7


def test_int_overflow_names_the_argument():
    with pytest.raises(OverflowError, match="argument 1"):
        kt.nop(1, 2**64)


def test_unsupported_argument_is_refused():
    with pytest.raises(TypeError, match="argument 0: kcall cannot hold a set"):
        kt.nop({1, 2})


def test_keyword_arguments_are_refused():
    with pytest.raises(TypeError, match="positional"):
        kt.nop(x=1)


def test_register_python_function_called_from_c():
    @kcall.register_func("tests.py.add", override=True)
    def add(a, b):
        return a + b

    assert add(1, 2) == 3  # the decorator returns the function itself
    f = kcall.get_func("tests.py.add")
    assert f(2, 3) == 5
    assert f.callable is add
    # C calling Python, through a C function taking a function argument
    assert kt.apply(f, 4, 5) == 9
    assert kt.apply(add, "a", "b") == "ab"


def test_register_refuses_duplicates_and_bad_names():
    kcall.register_func("tests.py.dup", lambda: 1, override=True)
    with pytest.raises(kcall.AlreadyExistsError):
        kcall.register_func("tests.py.dup", lambda: 2)
    kcall.register_func("tests.py.dup", lambda: 3, override=True)
    assert kcall.get_func("tests.py.dup")() == 3
    with pytest.raises(kcall.InvalidArgumentError, match="byte 3"):
        kcall.register_func("bad name!", lambda: 1)
    with pytest.raises(TypeError, match="callable"):
        kcall.register_func("tests.py.notcallable", 42)


def test_remove_func():
    kcall.register_func("tests.py.removed", lambda: 1, override=True)
    kcall.remove_func("tests.py.removed")
    with pytest.raises(kcall.NotFoundError):
        kcall.get_func("tests.py.removed")


def test_functions_as_values_both_ways():
    double = kcall.Function(lambda x: 2 * x)
    assert repr(double).startswith("<kcall.Function wrapping <function")
    assert kt.apply(double, 21) == 42
    # a Python callable handed to C comes back as the same callable
    cb = lambda: None  # noqa: E731
    assert kt.echo(cb) is cb
    # a native function handed through C comes back as a kcall.Function
    assert kt.echo(kt.nop) == kt.nop
    # a callable returning a function
    assert kt.apply(lambda: kt.nop) == kt.nop


def test_callback_result_conversion_failure_is_reported():
    with pytest.raises(TypeError, match="the callback's result"):
        kt.apply(lambda: {1: 2})


def test_fast_handle():
    fast = kt.nop.fast()
    assert type(fast).__name__ == "builtin_function_or_method"
    assert fast.__self__ == kt.nop
    assert fast(1, 2) is None
    assert kcall.get_func("kcall.testing.echo").fast()("x" * 20) == "x" * 20


def test_release_gil_attribute():
    f = kcall.get_func("kcall.testing.echo")
    assert f.release_gil is True
    f.release_gil = False
    assert f(3) == 3
    with pytest.raises(AttributeError):
        del f.release_gil


def test_load_plugin_and_call(hello_plugin):
    plugin = kcall.load_plugin(hello_plugin)
    assert plugin.name == "hello"
    assert plugin.api_version == kcall.api_version
    assert ("function", "hello.add") in plugin.registrations
    assert "hello.concat" in plugin.functions
    assert "'hello'" in repr(plugin) and "5 functions" in repr(plugin)
    add = kcall.get_func("hello.add")
    assert add(2, 3) == 5
    assert kcall.get_func("hello.concat")("a", "bc", "def") == "abcdef"
    adder = kcall.get_func("hello.make_adder")(10)
    assert isinstance(adder, kcall.Function)
    assert adder(5) == 15
    # loading again returns what was loaded
    assert kcall.load_plugin(str(hello_plugin)).registrations == \
        plugin.registrations


def test_plugin_errors_are_typed(fixture_dir, tmp_path):
    with pytest.raises(kcall.NotFoundError, match="nope.so"):
        kcall.load_plugin(tmp_path / "nope.so")
    with pytest.raises(kcall.FailedPreconditionError, match="major"):
        kcall.load_plugin(fixture_dir / "kt_plugin_major.so")
    with pytest.raises(kcall.InvalidArgumentError):
        kcall.load_plugin(fixture_dir / "kt_plugin_no_entry.so")
    with pytest.raises(kcall.Error) as info:
        kcall.load_plugin(fixture_dir / "kt_plugin_init_fails.so")
    assert "kt_plugin_init_fails.so" in str(info.value)


def test_plugin_function_argument_errors(hello_plugin):
    kcall.load_plugin(hello_plugin)
    with pytest.raises(kcall.InvalidArgumentError) as info:
        kcall.get_func("hello.add")(2, "three")
    assert isinstance(info.value, TypeError) and isinstance(info.value, ValueError)
    assert "hello.add: argument 1: expected int, got str" in str(info.value)
