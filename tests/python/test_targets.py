"""Custom-call targets written in Python."""

import numpy as np
import pytest

import kcall

PROGRAM = """
HloModule m

ENTRY main {
  x = f32[2,3] parameter(0)
  y = f32[2,3] parameter(1)
  ROOT r = f32[2,3] custom-call(x, y), custom_call_target="tests.tgt.axpy", api_version=API_VERSION_TYPED_FFI, backend_config={alpha = 2.5 : f32, tag = "t", dims = array<i64: 1, 2>}
}
"""


def register(fn=None, **kwargs):
    spec = dict(args=[("f32", 2), ("f32", 2)], results=[("f32", 2)],
                attrs={"alpha": "f32", "tag": "str", "dims": "array<i64>"},
                override=True)
    spec.update(kwargs)
    return kcall.register_target("tests.tgt.axpy", fn, **spec)


def test_python_target_in_hlo():
    seen = {}

    @register
    def axpy(x, y, out, *, alpha, tag, dims):
        seen.update(alpha=alpha, tag=tag, dims=dims, types=type(x))
        out[...] = alpha * x + y

    exe = kcall.Program.parse(PROGRAM).compile()
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.ones((2, 3), np.float32)
    out = exe(x, y)
    np.testing.assert_allclose(np.asarray(out), 2.5 * x + y)
    assert seen["alpha"] == pytest.approx(2.5)
    assert seen["tag"] == "t"
    assert seen["dims"] == [1, 2]
    assert seen["types"] is np.ndarray
    assert "tests.tgt.axpy@Host" in kcall.list_targets()


def test_python_target_failure_stops_the_run():
    @register
    def axpy(x, y, out, *, alpha, tag, dims):
        raise RuntimeError("target refused")

    exe = kcall.Program.parse(PROGRAM).compile()
    with pytest.raises(RuntimeError, match="target refused"):
        exe(np.zeros((2, 3), np.float32), np.zeros((2, 3), np.float32))


def test_python_target_must_return_none():
    @register
    def axpy(x, y, out, *, alpha, tag, dims):
        return out

    exe = kcall.Program.parse(PROGRAM).compile()
    with pytest.raises(TypeError, match="returns None"):
        exe(np.zeros((2, 3), np.float32), np.zeros((2, 3), np.float32))


def test_signature_mismatch_is_refused_at_compile():
    register(lambda *a, **k: None, args=[("f64", 2), ("f32", 2)])
    with pytest.raises(kcall.InvalidArgumentError):
        kcall.Program.parse(PROGRAM).compile()


def test_bad_attribute_type_is_refused():
    with pytest.raises(ValueError, match="unknown attribute type"):
        kcall.register_target("tests.tgt.bad", lambda: None, args=[],
                              results=[], attrs={"a": "float128"})
