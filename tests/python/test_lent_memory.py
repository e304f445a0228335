"""Tensors lent to Python callbacks: nothing made from one during the call
(np.asarray, memoryview, np.from_dlpack, __dlpack__) reaches the caller's
memory after the call returns, writes made through them still reach the
caller, and a result over the caller's memory is refused.

The caller here is kcall.testing.apply(f, *args), a C function that calls
f with its arguments: NumPy arrays arrive as kcall.Tensor views of the
caller's memory, which is freed (the array dropped) once apply returns.
"""

import ctypes
import gc

import pytest

import kcall
import kcall.testing as kt

np = pytest.importorskip("numpy")

MiB = 1 << 20
# A small array (its freed memory is reused at once) and a 16 MiB one (its
# freed memory is unmapped: a read after the call faults).
SIZES = [16, 16 * MiB // 4]


def _churn(n):
    """Allocates and fills arrays the size of the freed one, so that freed
    memory holds something else."""
    return [np.full(n, -7.0, np.float32) for _ in range(4)]


def _exported_after_the_call(export, n):
    a = np.arange(n, dtype=np.float32)
    expected = a.copy()
    kept = []
    kt.apply(lambda x: kept.append(export(x)), a)
    del a
    gc.collect()
    junk = _churn(n)
    return kept[0], expected, junk


@pytest.mark.parametrize("n", SIZES, ids=["small", "16MiB"])
def test_asarray_made_in_a_callback_outlives_the_call(n):
    got, expected, _ = _exported_after_the_call(np.asarray, n)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("n", SIZES, ids=["small", "16MiB"])
def test_memoryview_made_in_a_callback_outlives_the_call(n):
    got, expected, _ = _exported_after_the_call(memoryview, n)
    np.testing.assert_array_equal(np.asarray(got), expected)
    got.release()


@pytest.mark.parametrize("n", SIZES, ids=["small", "16MiB"])
def test_from_dlpack_made_in_a_callback_outlives_the_call(n):
    got, expected, _ = _exported_after_the_call(np.from_dlpack, n)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("n", SIZES, ids=["small", "16MiB"])
def test_dlpack_capsule_made_in_a_callback_outlives_the_call(n):
    got, expected, _ = _exported_after_the_call(
        lambda x: x.__dlpack__(max_version=(1, 0)), n)
    np.testing.assert_array_equal(np.asarray(kcall.Tensor(got)), expected)


@pytest.mark.parametrize("n", SIZES, ids=["small", "16MiB"])
def test_callback_returning_asarray_of_its_argument(n):
    a = np.arange(n, dtype=np.float32)
    expected = a.copy()
    r = kt.apply(lambda x: np.asarray(x), a)
    del a
    gc.collect()
    _junk = _churn(n)
    assert isinstance(r, kcall.Tensor)
    np.testing.assert_array_equal(np.asarray(r), expected)


def test_writes_through_an_export_reach_the_caller():
    a = np.zeros((3, 4), np.float64)

    def f(x):
        np.asarray(x)[1, :] = 5.0
        memoryview(x)[2, 3] = 9.0  # the same copy
        kt.fill(x, 1.0)            # C sees the copy too, from then on
        np.asarray(x)[0, 0] = 2.0

    kt.apply(f, a)
    assert a.tolist() == [[2, 1, 1, 1]] + [[1] * 4] * 2


def test_writes_reach_a_strided_caller():
    base = np.zeros((3, 4), np.float32)
    kt.apply(lambda x: np.asarray(x).__setitem__(Ellipsis, 3.0), base[:, ::2])
    assert base.tolist() == [[3, 0, 3, 0]] * 3


def test_only_changed_copies_are_written_back():
    # The same memory lent twice: the callback reads one view's copy and
    # writes the other's. The unchanged copy must not overwrite the write,
    # whichever view is written back first.
    for writer in (0, 1):
        a = np.zeros(4, np.float64)

        def f(x, y):
            views = (np.asarray(x), np.asarray(y))
            assert views[1 - writer].sum() == 0.0
            views[writer][:] = 4.0

        kt.apply(f, a, a)
        assert a.tolist() == [4.0] * 4, writer


def test_a_read_only_argument_is_never_written_back():
    # Memory the caller lends read-only (kcall.Function.allow_readonly lets
    # it through to apply, which may write its arguments) is read, never
    # written, by a callback that only reads it.
    data = bytes(np.arange(4, dtype=np.float64).tobytes())
    ro = np.frombuffer(data, np.float64)
    apply = kcall.get_func("kcall.testing.apply")
    apply.allow_readonly = True
    assert apply(lambda x: float(np.asarray(x).sum()), ro) == 6.0
    assert data == np.arange(4, dtype=np.float64).tobytes()


def test_callback_result_over_lent_memory_is_refused():
    a = np.arange(8, dtype=np.float64)

    def f(x):
        raw = (ctypes.c_double * 8).from_address(x.data_ptr)
        return np.ctypeslib.as_array(raw)

    with pytest.raises(ValueError, match="shares memory with a tensor lent"):
        kt.apply(f, a)

    def in_a_list(x):
        return [1, f(x)]

    with pytest.raises(ValueError, match="shares memory with a tensor lent"):
        kt.apply(in_a_list, a)


def test_callback_result_of_its_own_memory_is_kept():
    out = np.full(3, 2.0)
    r = kt.apply(lambda x: np.asarray(x) * 2, np.ones(3))
    np.testing.assert_array_equal(np.asarray(r), out)
