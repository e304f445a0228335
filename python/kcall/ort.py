"""kcall ops as ONNX Runtime custom ops.

``libkcall_ort.so`` (beside libkcall in the package) is an ONNX Runtime
custom-op library: registered with a session's options, it adds every
kcall op registered in the process at that moment (those of loaded
plugins) to a custom-op domain, ``kcall`` unless another is given::

    import kcall, kcall.ort, onnxruntime as ort
    kcall.load_plugin("libops_plugin.so")
    options = ort.SessionOptions()
    kcall.ort.register(options)            # ops Add, MatMul, ... in "kcall"
    session = ort.InferenceSession(model_bytes, options)

A node ``Add`` of domain ``kcall`` then runs kcall's Add on the node's
tensors in place (no copies). docs/onnxruntime.md has the type and
attribute mapping and the C route.
"""

import ctypes
import os
import threading

from . import config

__all__ = ["library", "register"]

_lib = None
# The domain is the library's, set just before ONNX Runtime registers it:
# one registration at a time.
_registering = threading.Lock()


def library():
    """The path of libkcall_ort.so."""
    path = os.path.join(config.get_lib_dir(), "libkcall_ort.so")
    if not os.path.isfile(path):
        raise FileNotFoundError("this kcall has no ONNX Runtime bridge (%s)" % path)
    return path


def _handle():
    global _lib
    if _lib is None:
        lib = ctypes.CDLL(library())
        lib.kcall_ort_set_domain.argtypes = [ctypes.c_char_p]
        lib.kcall_ort_set_domain.restype = ctypes.c_int
        lib.kcall_ort_skipped.restype = ctypes.c_char_p
        _lib = lib
    return _lib


def register(session_options, domain="kcall"):
    """Adds the kcall ops registered now to `session_options` (an
    onnxruntime.SessionOptions) as custom ops of `domain`. Ops registered
    later are not added: load the plugins first. Returns the ops it could
    not offer, as {name: why} (an op with a list input that is not its
    last, or a list output); a node using one fails when the session is
    created."""
    if not isinstance(domain, str) or not domain:
        raise ValueError("domain: expected a non-empty string, got %r" % (domain,))
    lib = _handle()
    with _registering:
        if lib.kcall_ort_set_domain(domain.encode()) != 0:
            raise MemoryError("out of memory")
        session_options.register_custom_ops_library(library())
        said = lib.kcall_ort_skipped() or b""
    skipped = {}
    for line in said.decode().splitlines():
        name, _, why = line.partition(": ")
        skipped[name] = why
    return skipped
