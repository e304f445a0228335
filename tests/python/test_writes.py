"""Memory that must not be written is not lent where it may be: read-only
memory (NumPy writeable=False, buffers over bytes, read-only kcall.Tensors
and DLPack capsules) and self-overlapping memory (stride 0) are refused
for the arguments a packed function may write (kc_func_set_writes), unless
the caller opts in with Function.allow_readonly.

kcall.testing.fill(t, v) writes argument 0; sum, describe and types write
nothing; apply passes its arguments to a Python callback, which may write
them all.
"""

import pytest

import kcall
import kcall.testing as kt

np = pytest.importorskip("numpy")
from numpy.lib.stride_tricks import as_strided  # noqa: E402


def _readonly(a):
    a = a.copy()
    a.flags.writeable = False
    return a


class VersionedProducer:
    """An array known only through __dlpack__ (DLPack 1.x)."""

    def __init__(self, t):
        self.t = t

    def __dlpack__(self, stream=None, max_version=None):
        return self.t.__dlpack__(max_version=max_version)

    def __dlpack_device__(self):
        return (1, 0)


def _cases():
    data = bytes(8 * 4)
    ro = _readonly(np.zeros(4))
    return {
        "numpy_readonly": (ro, "read-only"),
        "frombuffer_bytes": (np.frombuffer(data, np.float64), "read-only"),
        "memoryview_bytes": (memoryview(data).cast("d"), "read-only"),
        "tensor_readonly": (kcall.Tensor(ro), "read-only"),
        "dlpack_readonly": (VersionedProducer(kcall.Tensor(ro)), "read-only"),
        "broadcast_to": (np.broadcast_to(np.ones(1), (4,)), "read-only"),
        "stride0_writable": (as_strided(np.ones(1), (4,), (0,)),
                             "self-overlapping"),
        "overlapping_rows": (as_strided(np.zeros(8), (3, 4), (16, 8)),
                             "self-overlapping"),
        "tensor_stride0": (kcall.Tensor(as_strided(np.ones(1), (4,), (0,))),
                           "self-overlapping"),
    }


CASES = _cases()


def _values(arr):
    """A copy of what `arr` holds."""
    if isinstance(arr, VersionedProducer):
        arr = arr.t
    return np.array(np.asarray(arr), copy=True)


@pytest.mark.parametrize("name", sorted(CASES))
def test_refused_where_the_function_may_write(name):
    arr, why = CASES[name]
    before = _values(arr)
    with pytest.raises(ValueError,
                       match="argument 0: %s.*kcall.testing.fill" % why):
        kt.fill(arr, 3.0)
    np.testing.assert_array_equal(_values(arr), before)


@pytest.mark.parametrize("name", sorted(CASES))
def test_lent_where_the_function_only_reads(name):
    arr, _ = CASES[name]
    assert kt.sum(arr) == float(_values(arr).sum())
    assert kt.types(1, arr) == ["int", "dltensor" if not isinstance(
        arr, kcall.Tensor) else "tensor"]


def test_a_function_that_declares_nothing_may_write_every_argument():
    ro = _readonly(np.arange(3.0))
    with pytest.raises(ValueError, match="argument 2: read-only"):
        kt.apply(lambda *a: None, 1, ro)
    cb = kcall.Function(lambda x: None)
    assert cb.writes == 2**64 - 1
    assert kt.fill.writes == 1 and kt.sum.writes == 0


def test_in_place_kernel_refuses_a_broadcast_view(hello_plugin):
    kcall.load_plugin(str(hello_plugin))
    scale = kcall.get_func("hello.scale")
    base = np.ones(1, np.float32)
    view = as_strided(base, (4,), (0,))  # writable, one element four times
    with pytest.raises(ValueError, match="argument 0: self-overlapping"):
        scale(view, 2.0)
    assert base[0] == 1.0
    with pytest.raises(ValueError, match="argument 0: read-only"):
        scale(np.broadcast_to(base, (4,)), 2.0)
    x = np.ones(4, np.float32)
    scale(x[::2], 2.0)  # strided without overlap: fine
    assert x.tolist() == [2, 1, 2, 1]


def test_caller_opts_in():
    a = np.zeros(3)
    v = a.view()
    v.flags.writeable = False
    fill = kcall.get_func("kcall.testing.fill")
    assert fill.allow_readonly is False
    fill.allow_readonly = True
    fill(v, 2.0)
    fill.fast()(v, 3.0)
    assert a.tolist() == [3.0] * 3
    with pytest.raises(AttributeError):
        del fill.allow_readonly
    # Other handles keep the check.
    with pytest.raises(ValueError, match="read-only"):
        kt.fill(v, 1.0)


def test_fast_handle_checks_too():
    ro = _readonly(np.zeros(2))
    with pytest.raises(ValueError, match="argument 0: read-only"):
        kt.fill.fast()(ro, 1.0)


def test_a_lent_read_only_view_is_refused_to_a_writer():
    # A custom-call target written in Python gets its operands read-only:
    # passing one on to a function that writes it is refused.
    seen = {}

    @kcall.register_target("test_writes.pass_on", args=["f64"],
                           results=["f64"])
    def pass_on(x, out):
        try:
            kt.fill(x, 9.0)
        except ValueError as e:
            seen["error"] = str(e)
        out[...] = np.asarray(x) + 1

    b = kcall.ProgramBuilder("pass_on")
    p0 = b.parameter("f64[2]")
    b.custom_call("test_writes.pass_on", [p0], "f64[2]", api_version=4)
    x = np.zeros(2)
    out = b.finish().compile()(x)
    assert np.asarray(out).tolist() == [1.0, 1.0]
    assert "read-only" in seen["error"]
    assert x.tolist() == [0.0, 0.0]


def test_executable_results_are_not_written_into_read_only_memory():
    program = kcall.Program.parse("""
HloModule twice
ENTRY main {
  x = f32[4] parameter(0)
  ROOT y = f32[4] add(x, x)
}
""")
    run = program.compile()
    x = np.arange(4, dtype=np.float32)
    base = np.zeros(1, np.float32)
    for out, why in ((_readonly(np.zeros(4, np.float32)), "read-only"),
                     (np.broadcast_to(base, (4,)), "read-only"),
                     (as_strided(base, (4,), (0,)), "self-overlapping"),
                     (kcall.Tensor(as_strided(base, (4,), (0,))),
                      "self-overlapping")):
        with pytest.raises(ValueError,
                           match="out 0: %s.*the executable writes" % why):
            run(x, out=[out])
    assert base[0] == 0.0
    good = np.zeros(4, np.float32)
    run(x, out=[good])
    assert good.tolist() == [0, 2, 4, 6]
