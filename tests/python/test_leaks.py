"""No leaks across many calls: reference counts of arguments, callbacks and
results balanced, memory (the process's resident set) and the number of
objects the garbage collector tracks flat after a warm-up, also when calls
fail and when callbacks raise.

Each test makes 10^4 to 10^6 calls; the file runs in well under 30 s on a
2-core machine. Bounds are generous (a few MiB over up to a million calls,
so a leak of even 8 bytes a call shows) and no time is asserted.
"""

import array
import gc
import os
import sys
import weakref

import pytest

import kcall
import kcall.testing as kt

np = pytest.importorskip(
    "numpy", reason="NumPy is not installed (the test environment has it: "
    "`make pytest` installs it into .venv)")

MiB = 1 << 20
GROWTH_LIMIT = 8 * MiB


def rss():
    """The resident set size in bytes (/proc/self/statm; elsewhere the peak,
    from getrusage, which grows with a leak too)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        import resource
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024


def growth(fn, n, warmup=None):
    """Memory growth over n calls of fn() after warmup calls."""
    for _ in range(n // 10 if warmup is None else warmup):
        fn()
    gc.collect()
    before = rss()
    for _ in range(n):
        fn()
    gc.collect()
    return rss() - before


def tracked_growth(fn, n):
    """Growth of gc.get_objects() over n calls of fn(), after a warm-up."""
    for _ in range(max(n // 10, 100)):
        fn()
    gc.collect()
    before = len(gc.get_objects())
    for _ in range(n):
        fn()
    gc.collect()
    return len(gc.get_objects()) - before


def refcounts(objs):
    return [sys.getrefcount(o) for o in objs]


class Raised(Exception):
    pass


# ---- reference counts -------------------------------------------------------

def test_refcounts_of_arguments_balanced():
    arr = np.arange(8, dtype=np.float64)
    strided = np.arange(16, dtype=np.float32)[::2]
    long_str = "a string much longer than the inline small-string limit"
    data = b"bytes"
    tensor = kcall.Tensor(np.arange(4, dtype=np.int32))
    items = [1, "two", 3.0]
    buf = bytearray(16)
    arr_array = array.array("d", [1.0, 2.0])
    objs = [arr, strided, long_str, data, tensor, items, buf, arr_array]
    before = refcounts(objs)
    for _ in range(100_000):
        kt.nop(1, long_str, data, arr, strided, tensor, items, buf, arr_array)
    for _ in range(10_000):
        kt.types(arr, long_str, items, buf)
        kt.echo(long_str)
        kt.echo(tensor)
        kt.echo(items)
    assert refcounts(objs) == before
    buf.append(0)  # no buffer export left behind


def forget_last_callable():
    """kcall keeps the function it made for the last Python callable passed
    as an argument (docs/python.md); passing another one lets it go."""
    kt.nop(lambda: None)


def test_refcounts_of_a_callback_balanced():
    arr = np.arange(8, dtype=np.float64)
    result = ("a", "result")

    def cb(x, s):
        return result

    objs = [cb, arr, result]
    before = refcounts(objs)
    for _ in range(100_000):
        kt.apply(cb, arr, "s")
    for _ in range(10_000):
        kt.nop(cb)
        kcall.Function(cb)
        kt.apply(kcall.Function(cb), arr, "s")
    forget_last_callable()
    assert refcounts(objs) == before


def test_refcounts_balanced_when_conversion_fails():
    buf = bytearray(16)
    arr = np.arange(4.0)
    big_endian = np.zeros(3, dtype=">f4")
    objs = [buf, arr, big_endian]
    before = refcounts(objs)
    for _ in range(10_000):
        with pytest.raises(ValueError):
            kt.nop(buf, arr, big_endian)
        with pytest.raises(TypeError):
            kt.nop(buf, object())
        with pytest.raises(OverflowError):
            kt.nop(arr, 1 << 70)
    assert refcounts(objs) == before
    buf.append(0)  # every buffer taken for the call was released


def test_refcounts_balanced_when_a_callback_raises():
    arr = np.arange(4.0)
    exc_arg = "raised"

    def cb(x):
        raise Raised(exc_arg)

    objs = [arr, cb, exc_arg]
    before = refcounts(objs)
    for _ in range(10_000):
        with pytest.raises(Raised):
            kt.apply(cb, arr)
    forget_last_callable()
    assert refcounts(objs) == before


def test_tensor_exports_release_the_array():
    a = np.arange(8, dtype=np.float64)
    before = sys.getrefcount(a)
    for _ in range(20_000):
        t = kcall.Tensor(a)
        np.asarray(t)
        np.from_dlpack(t)
        t.__dlpack__()  # dropped unconsumed
        t.__dlpack__(max_version=(1, 0))
        memoryview(t).release()
        kcall.Tensor(a.__dlpack__(max_version=(1, 0)))
        kcall.Tensor(a.__dlpack__())
        kt.keep(t)
        kt.keep()
    del t
    gc.collect()
    assert sys.getrefcount(a) == before
    alive = weakref.ref(a)
    del a
    gc.collect()
    assert alive() is None


# ---- memory over a million calls --------------------------------------------

ARR = np.arange(16, dtype=np.float64)
LONG = "x" * 200
TENSOR = kcall.Tensor(np.arange(16, dtype=np.float32))


def _nop_mixed():
    kt.nop(1, "str", b"bytes", ARR)


def _noop(x):
    return None


def _apply_array():
    kt.apply(_noop, ARR)


def _echo_long():
    kt.echo(LONG)


def _echo_tensor():
    kt.echo(TENSOR)


@pytest.mark.parametrize("fn", [_nop_mixed, _apply_array, _echo_long,
                                _echo_tensor],
                         ids=["nop", "apply", "echo_str", "echo_tensor"])
def test_memory_flat_over_a_million_calls(fn):
    grew = growth(fn, 1_000_000)
    assert grew < GROWTH_LIMIT, "%.1f MiB more after 10^6 calls" % (grew / MiB)


def test_memory_flat_over_callbacks_returning_objects():
    results = [lambda: "r" * 100, lambda: [1, "a", b"b", 2.5],
               lambda: kcall.Tensor(ARR), lambda: ARR,
               lambda: (lambda: 1)]
    for r in results:
        grew = growth(lambda: kt.apply(r), 100_000)
        assert grew < GROWTH_LIMIT, "%.1f MiB" % (grew / MiB)


def test_memory_flat_over_tensors_made_and_dropped():
    def make():
        t = kcall.Tensor(ARR)
        np.asarray(t)
        np.from_dlpack(t)
        kt.arange("float64", 64)

    grew = growth(make, 200_000)
    assert grew < GROWTH_LIMIT, "%.1f MiB" % (grew / MiB)


def test_objects_tracked_by_gc_do_not_grow():
    def calls():
        kt.nop(1, LONG, b"b", ARR, [1, 2])
        kt.apply(_noop, ARR)
        kt.types(ARR, LONG)
        kt.echo(TENSOR)
        kt.apply(lambda a, b: [a, b], 1, "s")

    assert tracked_growth(calls, 100_000) < 100


# ---- failures ---------------------------------------------------------------

def test_exceptions_through_a_callback_do_not_grow_memory():
    def cb(x):
        raise Raised("boom " * 20)

    def fail():
        try:
            kt.apply(cb, ARR)
        except Raised:
            pass

    grew = growth(fail, 10_000, warmup=1_000)
    assert grew < GROWTH_LIMIT, "%.1f MiB" % (grew / MiB)
    assert tracked_growth(fail, 10_000) < 100


def test_statuses_from_c_do_not_grow_memory():
    def fail():
        try:
            kt.fail(3, "a message from C " * 5)
        except kcall.InvalidArgumentError:
            pass
        try:
            kt.describe(1)
        except kcall.InvalidArgumentError:
            pass

    grew = growth(fail, 100_000)
    assert grew < GROWTH_LIMIT, "%.1f MiB" % (grew / MiB)
    assert tracked_growth(fail, 10_000) < 100


def test_exceptions_from_native_threads_do_not_grow_memory():
    def cb():
        raise Raised("from a native thread")

    def fail():
        try:
            kt.call_in_thread(cb)
        except Raised:
            pass

    grew = growth(fail, 2_000, warmup=200)
    assert grew < GROWTH_LIMIT, "%.1f MiB" % (grew / MiB)


def test_thread_pool_callbacks_do_not_grow_memory():
    def cb(i):
        return i

    grew = growth(lambda: kt.call_parallel(cb, 1000), 200, warmup=20)
    assert grew < GROWTH_LIMIT, "%.1f MiB" % (grew / MiB)
    before = sys.getrefcount(cb)
    for _ in range(50):
        kt.call_parallel(cb, 100)
    assert sys.getrefcount(cb) == before
