"""Arrays in and out of kcall: NumPy arrays, buffer-protocol objects and
DLPack producers as call arguments (borrowed, never copied), kcall.Tensor
and the protocols it exports (DLPack, the buffer protocol, NumPy's array
interface), the lifetime of the memory they share, and tensors lent to
Python callbacks.

The native side is kcall.testing: describe(t) reports what C received
([dtype, shape, element strides or None, data address]), types(*args) the
kc_any type of each argument, sum/fill read and write honouring strides.
"""

import array
import ctypes
import gc
import weakref

import pytest

import kcall
import kcall.testing as kt

np = pytest.importorskip(
    "numpy", reason="NumPy is not installed (the test environment has it: "
    "`make pytest` installs it into .venv)")

# Every dtype both NumPy and DLPack have.
DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
          "uint32", "uint64", "float16", "float32", "float64", "complex64",
          "complex128"]

# The struct-module format memoryview(t) reports for each.
FORMATS = {"bool": "?", "int8": "b", "int16": "h", "int32": "i",
           "int64": "q", "uint8": "B", "uint16": "H", "uint32": "I",
           "uint64": "Q", "float16": "e", "float32": "f", "float64": "d",
           "complex64": "Zf", "complex128": "Zd"}

# The dtypes kcall.testing.sum and fill take.
NUMERIC = ["float32", "float64", "int32", "int64"]


def sample(dtype, shape=(2, 3)):
    """Distinct values of `dtype` (alternating for bool)."""
    n = int(np.prod(shape))
    values = np.arange(1, n + 1)
    if dtype == "bool":
        values = values % 2 == 0
    elif dtype.startswith("complex"):
        values = values + 0.5j * values
    return values.astype(dtype).reshape(shape)


def element_strides(a):
    return [s // a.itemsize for s in a.strides]


_capsule_name = ctypes.pythonapi.PyCapsule_GetName
_capsule_name.restype = ctypes.c_char_p
_capsule_name.argtypes = [ctypes.py_object]


def capsule_name(capsule):
    return _capsule_name(capsule).decode()


# ---- NumPy arrays, every dtype ----------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_numpy_argument_reaches_c_without_a_copy(dtype):
    a = sample(dtype)
    assert kt.describe(a) == [dtype, [2, 3], None, a.ctypes.data]
    assert kt.types(1, a) == ["int", "dltensor"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_tensor_shares_numpy_memory(dtype):
    a = sample(dtype)
    t = kcall.Tensor(a)
    assert t.dtype == dtype
    assert t.shape == (2, 3)
    assert t.data_ptr == a.ctypes.data
    for b in (np.asarray(t), np.from_dlpack(t), t.numpy()):
        assert np.shares_memory(b, a)
        assert b.dtype == a.dtype
        assert b.shape == a.shape
        assert np.array_equal(b, a)
    # As an argument, a Tensor is a kcall tensor object over the same memory.
    assert kt.types(t) == ["tensor"]
    assert kt.describe(t)[0] == dtype
    assert kt.describe(t)[3] == a.ctypes.data


@pytest.mark.parametrize("dtype", DTYPES)
def test_tensor_from_dlpack_round_trip(dtype):
    a = sample(dtype)
    back = np.from_dlpack(kcall.Tensor(a))
    t = kcall.Tensor(back)
    assert t.dtype == dtype
    assert t.data_ptr == a.ctypes.data
    assert np.shares_memory(np.asarray(t), a)
    assert np.array_equal(np.from_dlpack(t), a)
    # From DLPack capsules, legacy and versioned.
    for capsule in (a.__dlpack__(), a.__dlpack__(max_version=(1, 0))):
        t = kcall.Tensor(capsule)
        assert t.dtype == dtype and t.shape == (2, 3)
        assert np.shares_memory(np.asarray(t), a)
        assert capsule_name(capsule).startswith("used_")


@pytest.mark.parametrize("alias, name", [
    ("byte", "int8"), ("ubyte", "uint8"), ("short", "int16"),
    ("ushort", "uint16"), ("intc", "int32"), ("uintc", "uint32"),
    ("long", "int64"), ("ulong", "uint64"), ("longlong", "int64"),
    ("ulonglong", "uint64"), ("half", "float16"), ("single", "float32"),
    ("double", "float64"),
])
def test_numpy_c_type_names_map_to_sized_dtypes(alias, name):
    try:
        dtype = np.dtype(alias)
    except TypeError:
        pytest.skip("this NumPy has no dtype %r" % alias)
    if dtype.name != name:
        pytest.skip("np.dtype(%r) is %s on this platform" % (alias, dtype))
    a = np.zeros(3, dtype=dtype)
    assert kt.describe(a)[0] == name
    assert kcall.Tensor(a).dtype == name


# ---- strides ----------------------------------------------------------------

STRIDED_VIEWS = {
    "every_other_column": lambda a: a[:, ::2],
    "transpose": lambda a: a.T,
    "reversed_rows": lambda a: a[::-1],
    "reversed_both": lambda a: a[::-1, ::-2],
    "offset_and_step": lambda a: a[1:, 1::2],
    "column": lambda a: a[:, 2],
}


@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize("view", sorted(STRIDED_VIEWS))
def test_strided_view_passes_element_strides(view, dtype):
    base = np.arange(1, 25, dtype=dtype).reshape(4, 6)
    v = STRIDED_VIEWS[view](base)
    assert not v.flags.c_contiguous
    assert kt.describe(v) == [dtype, list(v.shape), element_strides(v),
                              v.ctypes.data]
    assert kt.sum(v) == pytest.approx(float(v.sum()))


@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize("view", sorted(STRIDED_VIEWS))
def test_fill_writes_the_elements_of_a_strided_view(view, dtype):
    base = np.zeros((4, 6), dtype=dtype)
    expected = base.copy()
    STRIDED_VIEWS[view](expected)[...] = 7
    kt.fill(STRIDED_VIEWS[view](base), 7.0)
    assert np.array_equal(base, expected)


@pytest.mark.parametrize("view", sorted(STRIDED_VIEWS))
def test_tensor_of_a_strided_view(view):
    base = np.arange(24, dtype=np.float64).reshape(4, 6)
    v = STRIDED_VIEWS[view](base)
    t = kcall.Tensor(v)
    assert t.shape == v.shape
    assert t.strides == tuple(element_strides(v))
    assert t.data_ptr == v.ctypes.data
    for b in (np.asarray(t), np.from_dlpack(t)):
        assert np.shares_memory(b, base)
        assert b.strides == v.strides
        assert np.array_equal(b, v)
    m = memoryview(t)
    assert m.shape == v.shape and m.strides == v.strides
    assert kt.describe(t)[2] == element_strides(v)
    assert kt.sum(t) == float(v.sum())


@pytest.mark.parametrize("ndim", [9, 12, 32])
def test_strided_array_of_many_dimensions(ndim):
    # More dimensions than a call slot holds inline (8): strides go to the
    # heap. Sizes of 1 keep the 32-dimensional array small.
    shape = (1,) * (ndim - 3) + (2, 3, 4)
    base = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    v = base[..., ::2]
    assert kt.describe(v) == ["float64", list(v.shape), element_strides(v),
                              v.ctypes.data]
    assert kt.sum(v) == float(v.sum())
    t = kcall.Tensor(v)
    assert t.ndim == ndim
    assert t.strides == tuple(element_strides(v))
    assert np.array_equal(np.asarray(t), v)
    kt.fill(v, -1.0)
    assert (base[..., ::2] == -1).all() and (base[..., 1::2] >= 0).all()


def test_more_dimensions_than_kcall_takes_are_refused():
    a = np.zeros((1,) * 33)
    with pytest.raises(ValueError, match="argument 1: .*33 dimensions"):
        kt.types(0, a)
    with pytest.raises(ValueError, match="33 dimensions"):
        kcall.Tensor(a)


def bad_stride_arrays():
    record = np.zeros(4, dtype=[("x", "<f4"), ("flag", "u1")])
    raw = np.zeros(32, dtype=np.uint8)
    custom = np.ndarray(shape=(3,), dtype=np.float32, buffer=raw, offset=0,
                        strides=(6,))
    return {"structured_field": record["x"], "custom_strides": custom,
            "memoryview_custom_strides": memoryview(custom)}


@pytest.mark.parametrize("kind", sorted(bad_stride_arrays()))
def test_byte_strides_not_a_multiple_of_the_item_size_are_refused(kind):
    v = bad_stride_arrays()[kind]
    with pytest.raises(ValueError, match="argument 1: stride 0 is [56] bytes"):
        kt.types(0, v)
    with pytest.raises(ValueError, match="not a multiple of the element size"):
        kcall.Tensor(v)


# ---- zero-size, 0-d and 1-element arrays ------------------------------------

@pytest.mark.parametrize("shape", [(0,), (3, 0), (0, 3), (), (1,), (1, 1)])
def test_small_and_empty_arrays(shape):
    a = sample("float64", shape) if shape else np.array(2.5)
    assert kt.types(a) == ["dltensor"]
    d = kt.describe(a)
    assert d[:2] == ["float64", list(shape)]
    if a.size:
        assert d[3] == a.ctypes.data
    assert kt.sum(a) == float(a.sum())
    t = kcall.Tensor(a)
    assert t.shape == shape
    assert t.ndim == len(shape)
    assert t.size == a.size
    assert t.nbytes == a.nbytes
    for b in (np.asarray(t), np.from_dlpack(t)):
        assert b.shape == shape and b.dtype == np.float64
        assert np.array_equal(b, a)
        if a.size:
            assert np.shares_memory(b, a)
    assert memoryview(t).shape == shape
    kt.fill(a, 4.0)
    assert (a == 4.0).all()


def test_zero_d_tensor_values():
    a = np.array(7, dtype=np.int32)
    t = kcall.Tensor(a)
    assert t.shape == () and t.strides == () and t.size == 1
    assert np.asarray(t)[()] == 7
    np.asarray(t)[()] = 9
    assert a[()] == 9


# ---- arrays kcall does not take ---------------------------------------------

@pytest.mark.parametrize("dtype", [">f4", ">i8", ">c16", ">u2"])
def test_big_endian_arrays_are_refused(dtype):
    a = np.zeros(3, dtype=dtype)
    with pytest.raises((TypeError, ValueError),
                       match="argument 1: .*big-endian"):
        kt.types(0, a)
    with pytest.raises((TypeError, ValueError), match="big-endian"):
        kcall.Tensor(a)
    # The same memory through the buffer protocol.
    with pytest.raises((TypeError, ValueError), match="argument 1: "):
        kt.types(0, memoryview(a))


UNSUPPORTED = {
    "object": lambda: np.array([object(), None, 1], dtype=object),
    "str": lambda: np.array(["a", "bc"]),
    "bytes": lambda: np.array([b"a", b"bc"]),
    "datetime64": lambda: np.array(["2024-01-01"], dtype="datetime64[D]"),
    "timedelta64": lambda: np.array([1, 2], dtype="timedelta64[s]"),
    "void": lambda: np.zeros(2, dtype="V8"),
    "structured": lambda: np.zeros(2, dtype=[("a", "f4"), ("b", "i4")]),
    "longdouble": lambda: np.zeros(2, dtype=np.longdouble),
}


@pytest.mark.parametrize("kind", sorted(UNSUPPORTED))
def test_unsupported_dtypes_are_refused(kind):
    a = UNSUPPORTED[kind]()
    if kind == "longdouble" and a.itemsize == 8:
        pytest.skip("long double is double on this platform")
    with pytest.raises((TypeError, ValueError), match="argument 1: "):
        kt.types(0, a)
    with pytest.raises((TypeError, ValueError), match="kcall.Tensor"):
        kcall.Tensor(a)
    with pytest.raises((TypeError, ValueError), match="argument 2: "):
        kt.apply(lambda *args: None, 0, a)


def test_non_arrays_are_refused_by_tensor():
    for obj in (object(), 3, "text", b"bytes", None, [1, 2]):
        with pytest.raises(TypeError, match="kcall.Tensor"):
            kcall.Tensor(obj)


# ---- other buffer-protocol objects ------------------------------------------

@pytest.mark.parametrize("code, dtype", [
    ("b", "int8"), ("B", "uint8"), ("h", "int16"), ("H", "uint16"),
    ("i", "int32"), ("I", "uint32"),
    ("l", "int%d" % (8 * ctypes.sizeof(ctypes.c_long))),
    ("q", "int64"), ("Q", "uint64"), ("f", "float32"), ("d", "float64"),
])
def test_array_array_arrives_as_a_tensor(code, dtype):
    a = array.array(code, [1, 2, 3, 4])
    assert kt.types(a) == ["dltensor"]
    assert kt.describe(a) == [dtype, [4], None, a.buffer_info()[0]]
    if dtype in NUMERIC:
        assert kt.sum(a) == 10.0
        kt.fill(a, 5.0)
        assert list(a) == [5, 5, 5, 5]
    t = kcall.Tensor(a)
    assert t.dtype == dtype and t.shape == (4,) and not t.readonly
    assert t.data_ptr == a.buffer_info()[0]


def test_bytearray_is_uint8():
    b = bytearray(b"\x01\x02\x03")
    assert kt.types(b) == ["dltensor"]
    d = kt.describe(b)
    assert d[:3] == ["uint8", [3], None]
    t = kcall.Tensor(b)
    assert t.dtype == "uint8" and not t.readonly
    np.asarray(t)[1] = 200
    assert b == bytearray(b"\x01\xc8\x03")


def test_memoryviews_arrive_as_tensors():
    ro = memoryview(b"abcdef")
    assert kt.types(ro) == ["dltensor"]
    assert kt.describe(ro)[:3] == ["uint8", [6], None]
    assert kcall.Tensor(ro).readonly
    buf = bytearray(48)
    m = memoryview(buf).cast("d", (2, 3))
    assert kt.describe(m)[:3] == ["float64", [2, 3], None]
    kt.fill(m, 1.5)
    assert np.frombuffer(buf, dtype=np.float64).tolist() == [1.5] * 6
    # A strided memoryview of a NumPy array.
    base = np.arange(12, dtype=np.float64).reshape(3, 4)
    s = memoryview(base)[::2]
    assert kt.describe(s) == ["float64", [2, 4], [8, 1], base.ctypes.data]
    assert kt.sum(s) == float(base[::2].sum())


def test_bytes_arrive_as_bytes_not_tensors():
    assert kt.types(b"abc") == ["bytes"]
    assert kt.echo(b"a\0b") == b"a\0b"
    with pytest.raises(kcall.InvalidArgumentError):
        kt.describe(b"abc")


def test_tensor_of_a_bytearray_holds_its_buffer():
    b = bytearray(8)
    t = kcall.Tensor(b)
    with pytest.raises(BufferError):
        b.append(1)  # the tensor's memory must not move
    del t
    gc.collect()
    b.append(1)
    assert len(b) == 9


# ---- kcall.Tensor's attributes and protocols --------------------------------

def test_tensor_attributes():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    t = kcall.Tensor(a)
    assert t.shape == (2, 3, 4)
    assert t.strides == (12, 4, 1)
    assert t.dtype == "float32"
    assert t.ndim == 3
    assert t.size == 24
    assert t.nbytes == 96
    assert t.device == "cpu:0"
    assert t.data_ptr == a.ctypes.data
    assert t.readonly is False
    assert t.__dlpack_device__() == (1, 0)
    assert "shape=(2, 3, 4)" in repr(t) and "float32" in repr(t)
    assert kcall.Tensor(t) is t
    assert kcall.from_dlpack(a).data_ptr == a.ctypes.data


def test_read_only_array_gives_a_read_only_tensor():
    a = np.arange(6, dtype=np.float64)
    a.flags.writeable = False
    t = kcall.Tensor(a)
    assert t.readonly is True
    assert not np.asarray(t).flags.writeable
    assert not np.from_dlpack(t).flags.writeable
    assert memoryview(t).readonly
    b = np.arange(6, dtype=np.float64)
    assert kcall.Tensor(b).readonly is False
    assert np.asarray(kcall.Tensor(b)).flags.writeable


def test_dlpack_capsule_names():
    t = kcall.Tensor(np.arange(4, dtype=np.int32))
    assert capsule_name(t.__dlpack__(max_version=(1, 0))) == \
        "dltensor_versioned"
    assert capsule_name(t.__dlpack__(max_version=(1, 3))) == \
        "dltensor_versioned"
    assert capsule_name(t.__dlpack__()) == "dltensor"
    assert capsule_name(t.__dlpack__(max_version=(0, 8))) == "dltensor"
    assert capsule_name(t.__dlpack__(dl_device=(1, 0), copy=False)) == \
        "dltensor"


def test_dlpack_refusals():
    t = kcall.Tensor(np.arange(4, dtype=np.int32))
    with pytest.raises((ValueError, BufferError), match="stream"):
        t.__dlpack__(stream=1)
    with pytest.raises(BufferError, match="copy"):
        t.__dlpack__(copy=True)
    with pytest.raises(BufferError, match="dl_device"):
        t.__dlpack__(dl_device=(2, 0))
    t.__dlpack__(stream=None)  # None is fine on the CPU


@pytest.mark.parametrize("dtype", DTYPES)
def test_memoryview_of_a_tensor(dtype):
    a = sample(dtype)
    m = memoryview(kcall.Tensor(a))
    assert m.format == FORMATS[dtype]
    assert m.shape == (2, 3)
    assert m.itemsize == a.itemsize
    assert m.nbytes == a.nbytes
    assert m.strides == a.strides
    assert not m.readonly
    assert bytes(m) == a.tobytes()


class Py_buffer(ctypes.Structure):
    _fields_ = [("buf", ctypes.c_void_p), ("obj", ctypes.c_void_p),
                ("len", ctypes.c_ssize_t), ("itemsize", ctypes.c_ssize_t),
                ("readonly", ctypes.c_int), ("ndim", ctypes.c_int),
                ("format", ctypes.c_char_p),
                ("shape", ctypes.POINTER(ctypes.c_ssize_t)),
                ("strides", ctypes.POINTER(ctypes.c_ssize_t)),
                ("suboffsets", ctypes.c_void_p),
                ("internal", ctypes.c_void_p)]


_get_buffer = ctypes.pythonapi.PyObject_GetBuffer
_get_buffer.argtypes = [ctypes.py_object, ctypes.POINTER(Py_buffer),
                        ctypes.c_int]
_get_buffer.restype = ctypes.c_int
_release_buffer = ctypes.pythonapi.PyBuffer_Release
_release_buffer.argtypes = [ctypes.POINTER(Py_buffer)]
_release_buffer.restype = None

PyBUF_STRIDES = 0x0010 | 0x0008
PyBUF_C_CONTIGUOUS = 0x0020 | PyBUF_STRIDES
PyBUF_F_CONTIGUOUS = 0x0040 | PyBUF_STRIDES
PyBUF_ANY_CONTIGUOUS = 0x0080 | PyBUF_STRIDES


def get_buffer(obj, flags):
    """PyObject_GetBuffer as a C consumer (Cython's typed memoryviews, for
    one) calls it; raises what the exporter raises."""
    view = Py_buffer()
    _get_buffer(obj, ctypes.byref(view), flags)
    _release_buffer(ctypes.byref(view))


@pytest.mark.parametrize("flags", [PyBUF_C_CONTIGUOUS, PyBUF_F_CONTIGUOUS,
                                   PyBUF_ANY_CONTIGUOUS],
                         ids=["C", "F", "ANY"])
def test_buffer_request_for_contiguous_memory_refused_when_strided(flags):
    # The buffer protocol: an exporter that cannot give the contiguity a
    # consumer asks for raises BufferError; a consumer that asked for
    # contiguous memory reads it without looking at the strides. NumPy
    # refuses (with ValueError) as the control.
    base = np.arange(12, dtype=np.float64).reshape(3, 4)
    with pytest.raises((BufferError, ValueError)):
        get_buffer(base[:, ::2], flags)
    with pytest.raises(BufferError):
        get_buffer(kcall.Tensor(base[:, ::2]), flags)


def test_buffer_request_for_fortran_order_refused_for_a_c_order_tensor():
    base = np.arange(12, dtype=np.float64).reshape(3, 4)
    t = kcall.Tensor(base)
    get_buffer(t, PyBUF_C_CONTIGUOUS)
    get_buffer(t, PyBUF_ANY_CONTIGUOUS)
    with pytest.raises(BufferError):
        get_buffer(t, PyBUF_F_CONTIGUOUS)


def test_buffer_request_without_strides_refused_when_strided():
    t = kcall.Tensor(np.arange(12, dtype=np.float64).reshape(3, 4)[:, ::2])
    with pytest.raises(BufferError, match="strided"):
        get_buffer(t, 0)  # PyBUF_SIMPLE
    with pytest.raises(BufferError, match="strided"):
        get_buffer(t, 0x0008)  # PyBUF_ND
    get_buffer(t, PyBUF_STRIDES)


def test_writable_buffer_refused_for_a_read_only_tensor():
    a = np.arange(3.0)
    a.flags.writeable = False
    with pytest.raises(BufferError, match="read-only"):
        get_buffer(kcall.Tensor(a), 0x0001)  # PyBUF_WRITABLE
    get_buffer(kcall.Tensor(np.arange(3.0)), 0x0001)


# ---- lifetimes --------------------------------------------------------------

def test_tensor_keeps_the_array_alive():
    a = np.arange(5, dtype=np.float64) * 2
    alive = weakref.ref(a)
    t = kcall.Tensor(a)
    del a
    gc.collect()
    assert alive() is not None
    assert np.asarray(t).tolist() == [0, 2, 4, 6, 8]
    assert kt.sum(t) == 20.0
    del t
    gc.collect()
    assert alive() is None


def test_numpy_views_of_a_tensor_keep_it_alive():
    exports = (np.asarray, np.from_dlpack,
               lambda t: np.array(memoryview(t), copy=False))
    for export in exports:
        a = np.arange(4, dtype=np.int64) + 10
        alive = weakref.ref(a)
        t = kcall.Tensor(a)
        n = export(t)
        del a, t
        gc.collect()
        assert alive() is not None
        assert n.tolist() == [10, 11, 12, 13]
        del n
        gc.collect()
        assert alive() is None


def test_kept_tensor_outlives_every_python_reference():
    a = np.arange(3, dtype=np.float32) + 1
    alive = weakref.ref(a)
    try:
        kt.keep(kcall.Tensor(a))
        del a
        gc.collect()
        assert alive() is not None
        kept = kt.kept()
        assert isinstance(kept, kcall.Tensor)
        assert np.asarray(kept).tolist() == [1, 2, 3]
        del kept
    finally:
        kt.keep()
    gc.collect()
    assert alive() is None


def test_tensor_from_a_dlpack_capsule_keeps_its_producer_alive():
    a = np.arange(3, dtype=np.float64)
    alive = weakref.ref(a)
    t = kcall.Tensor(a.__dlpack__(max_version=(1, 0)))
    del a
    gc.collect()
    assert alive() is not None
    assert np.asarray(t).tolist() == [0, 1, 2]
    del t
    gc.collect()
    assert alive() is None


def test_a_used_capsule_is_refused():
    capsule = np.arange(3.0).__dlpack__()
    kcall.Tensor(capsule)
    with pytest.raises((TypeError, ValueError)):
        kcall.Tensor(capsule)


def test_returned_tensor_is_writable():
    r = kt.arange("float32", 5)
    assert isinstance(r, kcall.Tensor)
    assert r.dtype == "float32" and r.shape == (5,) and not r.readonly
    n = np.asarray(r)
    assert n.flags.writeable
    n[2] = 9
    assert np.asarray(r).tolist() == [0, 1, 9, 3, 4]
    assert kt.sum(r) == 17.0
    d = np.from_dlpack(r)
    d[0] = -1
    assert kt.sum(r) == 16.0


def test_echo_of_a_tensor_is_the_same_memory():
    a = np.arange(4, dtype=np.int32)
    t = kcall.Tensor(a)
    e = kt.echo(t)
    assert isinstance(e, kcall.Tensor)
    assert e.data_ptr == a.ctypes.data
    assert np.shares_memory(np.asarray(e), a)


def test_echo_refuses_a_borrowed_array():
    with pytest.raises(kcall.InvalidArgumentError, match="borrowed"):
        kt.echo(np.arange(3.0))


# ---- tensors lent to Python callbacks ---------------------------------------

def test_callback_gets_a_view_of_the_callers_array():
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    seen = {}

    def f(x):
        seen["type"] = type(x)
        seen["shape"], seen["dtype"] = x.shape, x.dtype
        # Passed on to C before any export: the caller's memory itself.
        seen["address"] = kt.describe(x)[3]
        seen["types"] = kt.types(x)
        # Exports share a copy that the view owns, not the caller's memory
        # (it could outlive the call); a NumPy view and a DLPack one share
        # the same copy, and C sees it too from then on.
        n = np.asarray(x)
        seen["shares"] = np.shares_memory(n, a)
        seen["same_copy"] = np.shares_memory(np.from_dlpack(x), n)
        seen["copy_address"] = kt.describe(x)[3]
        n[0, 1] = 100.0
        seen["c_sum"] = kt.sum(x)
        return float(n.sum())

    assert kt.apply(f, a) == 114.0
    assert seen["type"] is kcall.Tensor
    assert (seen["shape"], seen["dtype"]) == ((2, 3), "float64")
    assert seen["address"] == a.ctypes.data
    assert seen["types"] == ["dltensor"]
    assert not seen["shares"] and seen["same_copy"]
    assert seen["copy_address"] != a.ctypes.data
    assert seen["c_sum"] == 114.0
    # The copy was written back when the callback returned.
    assert a[0, 1] == 100.0


def test_callback_gets_a_strided_view():
    base = np.zeros((3, 4), dtype=np.float32)

    def f(x):
        assert x.strides == (4, 2)
        np.asarray(x)[...] = 1.0

    kt.apply(f, base[:, ::2])
    assert base[:, ::2].tolist() == [[1, 1]] * 3
    assert base[:, 1::2].tolist() == [[0, 0]] * 3


def test_view_expires_when_the_callback_returns():
    kept = []
    kt.apply(kept.append, np.arange(3.0))
    (x,) = kept
    for use in (lambda: x.shape, lambda: x.dtype, lambda: np.asarray(x),
                lambda: x.__dlpack__(), lambda: np.from_dlpack(x),
                lambda: memoryview(x), lambda: x.data_ptr):
        with pytest.raises(ValueError, match="lent to a Python callback"):
            use()
    with pytest.raises(ValueError, match="argument 0: .*lent"):
        kt.nop(x)
    assert "expired" in repr(x)


def test_callback_cannot_return_its_view():
    with pytest.raises(ValueError, match="lent to this callback"):
        kt.apply(lambda x: x, np.arange(3.0))


def test_callback_cannot_keep_its_view_as_a_tensor():
    # kcall.Tensor(view) makes an owned tensor, which may be returned or
    # kept: it must not share the caller's memory, which nothing keeps alive
    # once the call returns. Refusing it (as returning the view is refused)
    # or copying are both right.
    a = np.arange(4, dtype=np.float64)
    try:
        r = kt.apply(lambda x: kcall.Tensor(x), a)
    except ValueError:
        return
    assert not np.shares_memory(np.asarray(r), a), (
        "a tensor made from a lent view outlived the call over the "
        "caller's memory, without keeping the caller's array alive")


def test_many_array_arguments_to_a_callback():
    # More arguments than the call's inline slots (6), on both sides.
    arrays = [np.full(3, i, dtype=np.float64) for i in range(9)]
    assert kt.types(*arrays) == ["dltensor"] * 9

    def f(*views):
        assert all(isinstance(v, kcall.Tensor) for v in views)
        for i, v in enumerate(views):
            np.asarray(v)[0] = -i
        return [float(np.asarray(v).sum()) for v in views]

    assert kt.apply(f, *arrays) == [2.0 * i - i for i in range(9)]
    assert [a[0] for a in arrays] == [-i for i in range(9)]


# ---- DLPack producers -------------------------------------------------------

class LegacyProducer:
    """__dlpack__ without max_version: kcall falls back to the legacy
    capsule."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__()

    def __dlpack_device__(self):
        return (1, 0)


class VersionedProducer:
    def __init__(self, a):
        self.a = a
        self.calls = []

    def __dlpack__(self, **kwargs):
        self.calls.append(kwargs)
        return self.a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return (1, 0)


@pytest.mark.parametrize("producer", [LegacyProducer, VersionedProducer])
def test_dlpack_producer_as_an_argument_and_a_tensor(producer):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    p = producer(a)
    assert kt.types(p) == ["dltensor"]
    d = kt.describe(p)
    assert d[0] == "float32" and d[1] == [2, 3] and d[3] == a.ctypes.data
    assert kt.sum(p) == 15.0
    t = kcall.Tensor(p)
    alive = weakref.ref(a)
    del p, a
    gc.collect()
    assert alive() is not None
    assert np.asarray(t).tolist() == [[0, 1, 2], [3, 4, 5]]
    del t
    gc.collect()
    assert alive() is None


def test_dlpack_producer_is_asked_for_version_1():
    p = VersionedProducer(np.arange(3.0))
    kt.nop(p)
    assert p.calls and p.calls[0]["max_version"][0] == 1


def test_read_only_dlpack_producer_gives_a_read_only_tensor():
    a = np.arange(3.0)
    a.flags.writeable = False
    t = kcall.Tensor(VersionedProducer(a))
    assert t.readonly
    assert not np.asarray(t).flags.writeable


def test_dlpack_producer_returning_no_capsule_is_refused():
    class Bad:
        def __dlpack__(self, **kwargs):
            return 5

    with pytest.raises(TypeError, match="argument 1: expected a DLPack capsule .*got int"):
        kt.types(0, Bad())


def test_torch_tensor_passes_through_dlpack():
    torch = pytest.importorskip(
        "torch", reason="PyTorch is not installed (it is not in the default "
        "test environment)")
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    assert kt.types(x) == ["dltensor"]
    assert kt.describe(x) == ["float32", [3, 4], kt.describe(x)[2],
                              x.data_ptr()]
    v = x[:, ::2]
    assert kt.describe(v)[1:] == [[3, 2], list(v.stride()), v.data_ptr()]
    assert kt.sum(v) == float(v.sum())
    t = kcall.Tensor(x)
    assert t.data_ptr == x.data_ptr()
    back = torch.from_dlpack(t)
    assert back.data_ptr() == x.data_ptr()
    back[0, 0] = 42.0
    assert x[0, 0].item() == 42.0


def test_to_device_takes_the_spelling_device_reads():
    """Tensor.device reads "cpu:0"; to_device takes that and "cpu" alike,
    so a tensor's device can be handed back as it reads."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = kcall.to_device(x, "cpu")
    assert t.device == "cpu:0"
    for spelling in ("cpu", "cpu:0", t.device):
        back = kcall.to_device(t, spelling)
        assert back.device == "cpu:0"
        np.testing.assert_array_equal(np.asarray(back), x)
    with pytest.raises(kcall.OutOfRangeError, match="cpu:1"):
        kcall.to_device(x, "cpu:1")
    with pytest.raises(kcall.InvalidArgumentError, match="'cpu0'"):
        kcall.to_device(x, "cpu0")


@pytest.mark.parametrize("dtype", [np.int32, np.float64, np.complex64])
def test_misaligned_memory_is_refused_where_a_kernel_would_read_it(dtype):
    """NumPy makes arrays whose data is not aligned to their elements; a C
    kernel reading them would load across the boundary."""
    size = np.dtype(dtype).itemsize
    raw = np.zeros(4 * size + 1, np.uint8)
    x = raw[1:].view(dtype)
    assert not x.flags.aligned
    with pytest.raises(ValueError,
                       match=r"argument 0: its data \(at 0x[0-9a-f]+\) is not "
                             r"aligned to its %d-byte elements.*x\.copy\(\)"
                       % (size // 2 if dtype == np.complex64 else size)):
        kt.describe(x)
    assert kt.describe(x.copy())[1] == [4]
    # One-byte elements are never misaligned.
    assert kt.describe(raw[1:])[0] == "uint8"
