"""kcall and tvm-ffi (the apache-tvm-ffi package), both ways.

tvm-ffi modules load with ``kcall.load_plugin(path, prefix=...)``; this
module puts kcall functions into tvm-ffi's global registry and makes kcall
functions (those of a tvm-ffi module among them) custom-call targets::

    import kcall, kcall.tvm_ffi, tvm_ffi
    kcall.load_plugin("libhello_plugin.so")
    kcall.tvm_ffi.export("hello.")             # every hello.* function
    tvm_ffi.get_global_func("hello.add")(2, 3)  # 5

docs/tvm_ffi.md has the value table, errors and lifetimes.
"""

from . import _core

__all__ = ["export", "register_target", "library"]


def _require_tvm_ffi():
    try:
        import tvm_ffi
        import tvm_ffi.libinfo  # noqa: F401 (a namespace package lacks it)
    except ImportError as e:
        raise ImportError(
            "kcall.tvm_ffi needs tvm-ffi's runtime: pip install "
            "apache-tvm-ffi") from e
    return tvm_ffi


def export(name, override=False):
    """Registers the kcall function `name` in tvm-ffi's global registry
    under the same name, or, when `name` ends with '.', every kcall
    function whose name starts with it (ops are the functions "op.NAME").
    Returns how many were exported. A name tvm-ffi has already is
    refused (AlreadyExistsError, nothing exported) unless `override`."""
    _require_tvm_ffi()
    return _core.tvm_ffi_export(name, override)


def register_target(target, func, platform="cpu", override=False):
    """Registers the kcall function `func` (by name; say a tvm-ffi module's
    "mymod.add_one") as the custom-call target `target`: a program calling
    it calls ``func(*operands, *results, *attributes)``, the buffers as
    DLTensors (results written in place) and the call site's attributes
    in name order. Host only."""
    _require_tvm_ffi()
    _core.tvm_ffi_register_target(target, func, platform, override)


def library():
    """The path of the libtvm_ffi kcall calls."""
    _require_tvm_ffi()
    return _core.tvm_ffi_library()
