"""Ops from Python: kcall.ops.<name>(*tensors, **attrs)."""

import gc
import inspect
import pydoc

import numpy as np
import pytest

import kcall


@pytest.fixture(scope="module", autouse=True)
def ops(ops_plugin):
    kcall.load_plugin(ops_plugin)


def test_add_broadcasts_and_returns_a_tensor():
    x = np.array([[1, 2], [3, 4]], dtype=np.float32)
    y = np.array([10, 20], dtype=np.float32)
    z = kcall.ops.Add(x, y)
    assert isinstance(z, kcall.Tensor)
    np.testing.assert_array_equal(np.asarray(z), x + y)
    # a kcall.Tensor is an input too
    z2 = kcall.ops.Add(z, kcall.Tensor(y))
    np.testing.assert_array_equal(np.asarray(z2), x + 2 * y)


def test_matmul_matches_numpy():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((5, 7), dtype=np.float32)
    b = rng.standard_normal((7, 3), dtype=np.float32)
    np.testing.assert_allclose(np.asarray(kcall.ops.MatMul(a, b)), a @ b,
                               rtol=1e-5, atol=1e-5)


def test_list_input_and_attribute():
    a = np.ones((2, 2), np.float32)
    b = np.zeros((1, 2), np.float32)
    out = kcall.ops.Concat([a, b, a], axis=0)
    np.testing.assert_array_equal(np.asarray(out), np.concatenate([a, b, a]))


def test_type_attribute_from_numpy_dtype():
    x = np.arange(4, dtype=np.float32)
    out = kcall.ops.Bitcast(x, type=np.int32)
    assert out.dtype == "int32"
    np.testing.assert_array_equal(np.asarray(out), x.view(np.int32))


def test_help_shows_the_definition():
    text = pydoc.render_doc(kcall.ops.Add)
    assert "Add(x: T, y: T) -> (z: T)" in text
    assert "kernels: cpu" in text
    sig = inspect.signature(kcall.ops.Concat)
    assert "axis" in sig.parameters
    assert sig.parameters["axis"].kind is inspect.Parameter.KEYWORD_ONLY
    assert "Add" in dir(kcall.ops)
    assert "MatMul" in kcall.list_ops()


def test_errors_name_the_op_and_argument():
    with pytest.raises(kcall.InvalidArgumentError,
                       match=r"calling op 'Add': input 1 \('y'\)"):
        kcall.ops.Add(np.ones(2, np.float32), np.ones(2, np.float64))
    with pytest.raises(TypeError, match="op 'Add': input 1: expected an array"):
        kcall.ops.Add(np.ones(2, np.float32), "x")
    with pytest.raises(kcall.InvalidArgumentError,
                       match=r"calling op 'MatMul': input 0 \('a'\): attr 'T'"):
        kcall.ops.MatMul(np.ones((2, 2), np.int32), np.ones((2, 2), np.int32))
    with pytest.raises(AttributeError, match="NoSuchOp"):
        kcall.ops.NoSuchOp


def test_stateful_op_keeps_its_state():
    first = int(np.asarray(kcall.ops.Counter()))
    second = int(np.asarray(kcall.ops.Counter()))
    assert second == first + 1


def test_op_as_packed_function():
    add = kcall.get_func("op.Add")
    out = add(np.ones(3, np.float32), np.ones(3, np.float32))
    np.testing.assert_array_equal(np.asarray(out), np.full(3, 2, np.float32))


def test_tensorflow_spelled_op_means_tensorflows_dtypes(fixture_dir):
    # kt_ops.Scale is defined as TensorFlow writes it:
    # "T: {float, double} = DT_FLOAT", that is exactly {f32, f64}.
    kcall.load_plugin(fixture_dir / "kt_plugin_ops.so")
    scale = getattr(kcall.ops, "kt_ops.Scale")
    assert "T: {float, double} = DT_FLOAT" in scale.definition["attrs"]
    x = np.arange(4, dtype=np.float32)
    y = scale(x, factor=3.0)
    assert y.dtype == "float32"
    np.testing.assert_array_equal(np.asarray(y), x * 3)
    y64 = scale(x.astype(np.float64))
    assert y64.dtype == "float64"
    np.testing.assert_array_equal(np.asarray(y64), x * 2)
    # float is f32 alone: f16 is not in the set.
    with pytest.raises(kcall.InvalidArgumentError,
                       match=r"expected one of \{f32, f64\}, got f16"):
        scale(x.astype(np.float16))


def test_a_list_goes_only_to_a_list_input():
    x = np.ones(2, np.float32)
    # Add's inputs are single tensors: a list is refused, naming the input,
    # not spliced into two inputs (nor guessed into an f64 array).
    with pytest.raises(TypeError,
                       match=r"op 'Add': input 0 \('x'\): a list was given "
                             r"where one tensor is expected"):
        kcall.ops.Add([1.0, 2.0], x)
    with pytest.raises(TypeError,
                       match=r"op 'Add': input 1 \('y'\): a tuple was given"):
        kcall.ops.Add(x, (x, x))
    # Concat's values are "N * T": a list or a tuple supplies them.
    out = kcall.ops.Concat((x, x), axis=0)
    np.testing.assert_array_equal(np.asarray(out), np.ones(4, np.float32))
    # An input typed by a list(type) attr takes a list too.
    info = {"inputs": ["xs: L", "y: T", "zs: N * T"],
            "attrs": ["L: list(type) >= 1", "T: type", "N: int"]}
    assert kcall.ops._list_inputs(info) == [("xs", True), ("y", False),
                                            ("zs", True)]


def test_outputs_reuse_memory_after_release():
    # Outputs come from the caching host allocator: once the last
    # reference goes, the next call of that size takes the same memory,
    # without faulting in fresh pages.
    import os
    import resource
    preload = os.environ.get("LD_PRELOAD", "")
    if "libasan" in preload or "libtsan" in preload:
        pytest.skip("a sanitizer build: the caching allocator does not cache")
    if os.environ.get("KCALL_HOST_CACHE_MB") == "0":
        pytest.skip("KCALL_HOST_CACHE_MB=0 turns the caching allocator off")
    x = np.arange(1 << 20, dtype=np.float32)
    first = kcall.ops.Add(x, x)
    ptr = first.data_ptr
    np.testing.assert_array_equal(np.asarray(first), x + x)
    del first
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(10):
        z = kcall.ops.Add(x, x)
        assert z.data_ptr == ptr
        del z
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    assert faults < 100, f"{faults} page faults in 10 calls of a 4 MiB Add"


def test_an_op_called_through_kcall_ops_does_not_keep_its_plugin(build_file):
    # kcall.ops keeps the ops it made for its attributes; unloading lets
    # go of those, so only references the caller keeps hold the plugin.
    path = str(build_file("tests/fixtures/kt_plugin_unload.so"))
    plugin = kcall.load_plugin(path)
    double = getattr(kcall.ops, "kt_unload.Double")
    x = np.arange(4, dtype=np.float32).reshape(2, 2)
    np.testing.assert_array_equal(np.asarray(double(x)), 2 * x)
    with pytest.raises(kcall.FailedPreconditionError,
                       match="op 'kt_unload.Double' is held by 1 reference"):
        plugin.unload()
    del double
    gc.collect()
    plugin.unload()
    assert kcall.list_ops("kt_unload.") == []
    with pytest.raises(AttributeError, match="no op 'kt_unload.Double'"):
        getattr(kcall.ops, "kt_unload.Double")
    again = kcall.load_plugin(path)
    np.testing.assert_array_equal(
        np.asarray(getattr(kcall.ops, "kt_unload.Double")(x)), 2 * x)
    again.unload()
