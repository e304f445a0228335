"""XLA FFI handlers registered from Python (kcall.register_xla_ffi) and run
by kcall's runtime on the HLO JAX printed around them: the checked-in
fixtures of tests/fixtures/xla_ffi (made by tests/xla_ffi/generate.py),
compared with JAX's own outputs. Needs no JAX."""

import ctypes
import json
import platform

import numpy as np
import pytest

import kcall


@pytest.fixture(scope="module")
def fixtures(repo):
    path = repo / "tests/fixtures/xla_ffi"
    manifest = json.loads((path / "manifest.json").read_text())
    if platform.machine() not in ("x86_64", "AMD64") or \
            platform.system() != "Linux":
        pytest.skip("the prebuilt handler library is for x86-64 Linux")
    lib = ctypes.CDLL(str(path / manifest["library"]))
    return path, manifest, lib


def case(manifest, name):
    return next(c for c in manifest["cases"] if c["name"] == name)


@pytest.mark.parametrize("name,target,symbol", [
    ("add_one", "ffi_test.add_one", "AddOne"),
    ("add_one_chain3", "ffi_test.add_one", "AddOne"),
    ("scale_shift", "ffi_test.scale_shift", "ScaleShift"),
    ("row_sum", "ffi_test.row_sum", "RowSum"),
])
def test_jax_programs_give_jax_outputs(fixtures, name, target, symbol):
    path, manifest, lib = fixtures
    kcall.register_xla_ffi(target, getattr(lib, symbol), override=True)
    c = case(manifest, name)
    run = kcall.Program.load(str(path / c["hlo"])).compile()
    inputs = [np.load(path / i["file"]) for i in c["inputs"]]
    outputs = run(*inputs)
    if not isinstance(outputs, (list, tuple)):
        outputs = [outputs]
    assert len(outputs) == len(c["outputs"])
    for got, want in zip(outputs, c["outputs"]):
        np.testing.assert_array_equal(np.asarray(got), np.load(path / want["file"]))


def test_a_handler_error_reaches_python(fixtures):
    path, manifest, lib = fixtures
    kcall.register_xla_ffi("ffi_test.fail_if_negative", lib.FailIfNegative,
                           override=True)
    c = case(manifest, "fail_if_negative_error")
    run = kcall.Program.load(str(path / c["hlo"])).compile()
    inputs = [np.load(path / i["file"]) for i in c["inputs"]]
    with pytest.raises(kcall.Error, match=c["error"]["message"]):
        run(*inputs)


def test_registration_errors(fixtures):
    _, _, lib = fixtures
    kcall.register_xla_ffi("test_xla_ffi.once", lib.AddOne)
    with pytest.raises(kcall.Error, match="test_xla_ffi.once"):
        kcall.register_xla_ffi("test_xla_ffi.once", lib.AddOne)
    with pytest.raises(TypeError, match="expected a ctypes function"):
        kcall.register_xla_ffi("test_xla_ffi.bad", "AddOne")
    info = kcall._core.target_info("test_xla_ffi.once", "host")
    assert info["api"] == "TYPED"
    assert info["signature"] == "(...) -> (...) {...}"


def test_a_data_symbol_is_refused_as_a_handler(fixtures):
    """The library's state-type info is data: naming it as the handler is
    an error that names the symbol and the library, not a crash."""
    _, _, lib = fixtures
    for symbol in ("AffineStateTypeInfo", "AffineStateTypeId"):
        with pytest.raises(kcall.InvalidArgumentError,
                           match=f"the execute handler is the symbol '{symbol}' "
                                 r"of .*libjax_handlers\.so, which is a data "
                                 "object, not a function"):
            kcall.register_xla_ffi("test_xla_ffi.data", getattr(lib, symbol))
        addr = ctypes.addressof(ctypes.c_byte.in_dll(lib, symbol))
        with pytest.raises(kcall.InvalidArgumentError,
                           match="the instantiate handler is the symbol"):
            kcall.register_xla_ffi("test_xla_ffi.data", lib.AddOne,
                                   instantiate=addr)
    with pytest.raises(kcall.NotFoundError):
        kcall._core.target_info("test_xla_ffi.data", "host")
