"""Typed functions (examples/typed/): the C++ plugin written with
kcall::register_func and the C one written with kcall/typed.h, called from
Python. docs/typed.md itself is run as written in test_docs.py."""

import numpy as np
import pytest

import kcall


@pytest.fixture(scope="module")
def typed_plugins(build_file):
    paths = (build_file("examples/typed/libtyped_plugin.so"),
             build_file("examples/typed/libtyped_c_plugin.so"))
    for path in paths:
        kcall.load_plugin(str(path))
    return paths


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
