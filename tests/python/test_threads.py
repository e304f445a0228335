"""kcall from several Python threads, and Python called back from threads
Python never saw: calls from many threads at once, the GIL released while
a call runs, callbacks from a new native thread and from kcall's thread
pool, and handles that keep the GIL (release_gil=False, Function.fast()).

A deadlock is turned into a failure by a timeout on a join (or, where the
whole interpreter would hang, by running the scenario in a subprocess);
nothing here asserts how long anything takes.
"""

import os
import subprocess
import sys
import textwrap
import threading

import pytest

import kcall
import kcall.testing as kt

np = pytest.importorskip(
    "numpy", reason="NumPy is not installed (the test environment has it: "
    "`make pytest` installs it into .venv)")

THREADS = 8
JOIN_TIMEOUT = 120  # seconds; only a deadlock comes near it


def run_threads(target, n=THREADS):
    """Runs target(k) on n threads started together; re-raises the first
    error any of them met, and fails if one is still running after the
    join timeout (a deadlock)."""
    barrier = threading.Barrier(n)
    errors = []

    def body(k):
        try:
            barrier.wait()
            target(k)
        except BaseException as e:  # noqa: B902 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=body, args=(k,), daemon=True)
               for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(JOIN_TIMEOUT)
    stuck = [t for t in threads if t.is_alive()]
    assert not stuck, "%d threads still running: a deadlock" % len(stuck)
    if errors:
        raise errors[0]


# ---- many Python threads at once --------------------------------------------

def test_eight_threads_call_at_once():
    iterations = 3000
    done = [0] * THREADS

    def work(k):
        a = np.arange(100, dtype=np.float64) * (k + 1)
        expected = float(a.sum())
        strided = np.arange(60, dtype=np.int32).reshape(6, 10)[:, ::3]
        label = "thread %d: a string too long to be stored inline" % k

        def cb(i, x):
            return i * 1000 + k + float(np.asarray(x)[1])

        for i in range(iterations):
            assert kt.nop(i, "s", label, b"b", a) is None
            assert kt.sum(a) == expected
            assert kt.sum(strided) == float(strided.sum())
            assert kt.apply(cb, i, a) == i * 1000 + k + (k + 1)
            assert kt.echo(label) == label
            assert kt.describe(a)[3] == a.ctypes.data
            assert kt.types(i, a, label) == ["int", "dltensor", "raw_str"]
            done[k] += 1

    run_threads(work)
    assert done == [iterations] * THREADS


def test_eight_threads_write_their_own_arrays():
    arrays = [np.zeros((50, 20), dtype=np.float32) for _ in range(THREADS)]

    def work(k):
        for i in range(500):
            kt.fill(arrays[k][:, ::2], float(k * 1000 + i))
            assert kt.sum(arrays[k][:, ::2]) == 500.0 * (k * 1000 + i)

    run_threads(work)
    for k, a in enumerate(arrays):
        assert (a[:, ::2] == k * 1000 + 499).all()
        assert (a[:, 1::2] == 0).all()


def test_eight_threads_run_an_op(ops_plugin):
    kcall.load_plugin(ops_plugin)

    def work(k):
        x = np.arange(64, dtype=np.float32).reshape(8, 8) + k
        y = np.full((8, 8), float(k), dtype=np.float32)
        for _ in range(300):
            z = kcall.ops.Add(x, y)
            assert isinstance(z, kcall.Tensor)
            assert np.array_equal(np.asarray(z), x + y)

    run_threads(work)


def test_eight_threads_call_python_functions_through_kcall():
    def work(k):
        f = kcall.Function(lambda a, b: a * b + k)
        for i in range(1000):
            assert f(i, 3) == i * 3 + k
            assert kt.apply(f, i, 2) == i * 2 + k

    run_threads(work)


# ---- the GIL ----------------------------------------------------------------

GIL_SCRIPT = """
import sys, threading
import kcall, kcall.testing as kt

RELEASE = {release}
handle = kcall.get_func("kcall.testing.call_in_thread")
handle.release_gil = RELEASE
started, go, result = threading.Event(), threading.Event(), []

def cb():
    # On a native thread; waits (without the GIL) for the main thread.
    started.set()
    if not go.wait(60):
        raise TimeoutError("the main thread never set the event")
    return "done"

def worker():
    result.append(handle(cb))

t = threading.Thread(target=worker, daemon=True)
t.start()
assert started.wait(60), "the callback never ran"
# The worker is inside the call: Python code runs here only if the call
# released the GIL.
total = sum(range(1000))
go.set()
t.join(60)
assert not t.is_alive(), "the worker is stuck"
print(result[0], total)
"""


def run_gil_script(release, timeout):
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.abspath(kcall.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(
        [root] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    script = textwrap.dedent(GIL_SCRIPT.format(release=release))
    return subprocess.run([sys.executable, "-c", script], capture_output=True,
                          text=True, env=env, timeout=timeout)


def test_gil_released_during_a_call():
    # A native function (call_in_thread) waits for a new thread that calls
    # back into Python, whose callback waits for the main thread. Without the
    # GIL released during the call this deadlocks the whole interpreter, so
    # it runs in a subprocess: a timeout there is the failure.
    try:
        result = run_gil_script(release=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("deadlock: kcall kept the GIL during a call")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["done", "499500"]


def test_gil_kept_with_release_gil_false_deadlocks_the_same_script():
    # The control: with the GIL kept (as release_gil=False documents, "such a
    # callback would deadlock") the script above hangs, so the test above
    # can fail.
    with pytest.raises(subprocess.TimeoutExpired):
        run_gil_script(release=False, timeout=5)


def test_main_thread_runs_while_another_waits_in_a_call():
    # The same in this process, with a timeout on every wait so that a
    # callback that never ran fails instead of hanging.
    started, go, result = threading.Event(), threading.Event(), []

    def cb():
        started.set()
        return "done" if go.wait(60) else "timed out"

    t = threading.Thread(target=lambda: result.append(kt.call_in_thread(cb)),
                         daemon=True)
    t.start()
    assert started.wait(60)
    ran_meanwhile = [i * i for i in range(100)]
    go.set()
    t.join(JOIN_TIMEOUT)
    assert not t.is_alive()
    assert result == ["done"] and ran_meanwhile[-1] == 9801


# ---- callbacks from a thread Python never saw -------------------------------

def test_callback_on_a_native_thread_returns_values():
    main = threading.get_ident()
    seen = []

    def f(a, b):
        seen.append(threading.get_ident())
        return a + b

    assert kt.call_in_thread(f, 2, 3) == 5
    assert seen and seen[0] != main
    assert kt.call_in_thread(lambda: "text " * 10) == "text " * 10
    assert kt.call_in_thread(lambda: [1, 2.5, "x", b"y", None]) == \
        [1, 2.5, "x", b"y", None]
    assert kt.call_in_thread(lambda: None) is None
    t = kt.call_in_thread(lambda: kcall.Tensor(np.arange(3.0)))
    assert isinstance(t, kcall.Tensor)
    assert np.asarray(t).tolist() == [0.0, 1.0, 2.0]


def test_callback_on_a_native_thread_gets_a_view():
    a = np.zeros(4, dtype=np.float64)

    def f(x):
        np.asarray(x)[:] = threading.get_ident() % 1000
        return x.shape

    assert kt.call_in_thread(f, a) == [4]
    assert (a == a[0]).all()


class CallbackError(Exception):
    pass


@pytest.mark.parametrize("exc", [
    CallbackError("custom"), KeyError("key"), ValueError("value"),
    ZeroDivisionError("zero"), kcall.NotFoundError("kcall's own"),
])
def test_callback_exception_on_a_native_thread_comes_back(exc):
    def f():
        raise exc

    with pytest.raises(type(exc)) as info:
        kt.call_in_thread(f)
    assert info.value is exc
    assert info.value.__traceback__ is not None


def test_many_calls_from_new_native_threads():
    for i in range(200):
        assert kt.call_in_thread(lambda j: j * 2, i) == i * 2


def test_native_threads_started_from_several_python_threads():
    def work(k):
        for i in range(50):
            assert kt.call_in_thread(lambda a, b: (a, b), k, i) == [k, i]

    run_threads(work)


# ---- the thread pool --------------------------------------------------------

def test_call_parallel_calls_every_index():
    seen = []
    lock = threading.Lock()
    threads = set()

    def f(i):
        with lock:
            seen.append(i)
            threads.add(threading.get_ident())

    assert kt.call_parallel(f, 1000) == 1000
    assert len(seen) == 1000
    assert sorted(seen) == list(range(1000))


def test_call_parallel_from_several_python_threads():
    seen = [[] for _ in range(4)]
    lock = threading.Lock()

    def work(k):
        def f(i):
            with lock:
                seen[k].append(i)
        assert kt.call_parallel(f, 500) == 500

    run_threads(work, n=4)
    assert all(sorted(s) == list(range(500)) for s in seen)


def test_call_parallel_nested():
    count = [0]
    lock = threading.Lock()

    def inner(i):
        with lock:
            count[0] += 1

    def outer(i):
        assert kt.call_parallel(inner, 20) == 20

    assert kt.call_parallel(outer, 50) == 50
    assert count[0] == 1000


def test_call_parallel_callbacks_call_kcall():
    a = np.arange(10, dtype=np.float64)
    results = [None] * 300

    def f(i):
        results[i] = (kt.sum(a) + kt.apply(lambda j: j, i), kt.echo(str(i)))

    kt.call_parallel(f, 300)
    assert results == [(45.0 + i, str(i)) for i in range(300)]


def test_call_parallel_exception_comes_back():
    def f(i):
        if i == 500:
            raise CallbackError("at 500")

    with pytest.raises(CallbackError, match="at 500"):
        kt.call_parallel(f, 1000)


def test_call_parallel_exception_comes_back_when_every_call_fails():
    # call_parallel returns the first failure's status and destroys the
    # others. docs/python.md: kcall remembers the exceptions of the last 64
    # failed callbacks, so with 40 failures in all the first one is still
    # known and comes back as itself.
    def f(i):
        raise CallbackError(i)

    with pytest.raises(CallbackError):
        kt.call_parallel(f, 40)


def test_call_parallel_exception_forgotten_after_many_failures():
    # With far more failures than kcall remembers, the caller gets, as
    # docs/python.md says, a kcall.Error whose message names the exception
    # and holds its traceback.
    def f(i):
        raise CallbackError(i)

    with pytest.raises(kcall.Error) as info:
        kt.call_parallel(f, 1000)
    text = str(info.value)
    assert "CallbackError" in text
    assert "Python traceback" in text and "raise CallbackError(i)" in text


# ---- handles that keep the GIL ----------------------------------------------

def test_release_gil_false_and_fast_from_several_threads():
    total = kcall.get_func("kcall.testing.sum")
    total.release_gil = False
    apply = kcall.get_func("kcall.testing.apply")
    apply.release_gil = False
    assert kt.sum.release_gil is True  # a separate handle
    fast_total = total.fast()
    fast_nop = kcall.get_func("kcall.testing.nop").fast()

    def work(k):
        a = np.arange(50, dtype=np.float32) + k
        expected = float(a.sum())
        fast_apply = apply.fast()  # made on every thread at once
        for i in range(2000):
            assert total(a) == expected
            assert fast_total(a) == expected
            assert fast_nop(i, "x", a) is None
            assert apply(lambda j: j + k, i) == i + k
            assert fast_apply(lambda j: j - k, i) == i - k

    run_threads(work)
