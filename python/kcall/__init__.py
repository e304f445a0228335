"""kcall: write a native kernel once, call it by name from anywhere.

Functions (packed functions, called by name with type-erased arguments):

    add = kcall.get_func("mylib.add")       # registered in C, or in Python
    add(2, 3)

    @kcall.register_func("mylib.scale")     # C code, plugins and `kcall call`
    def scale(x, factor):                   # can now call this
        ...

Arrays pass without copying: NumPy arrays and buffer-protocol objects
directly, anything with ``__dlpack__`` (PyTorch, JAX, CuPy) through DLPack.
kcall returns ``kcall.Tensor`` objects, which NumPy and the others take
without copying (``np.asarray(t)``, ``np.from_dlpack(t)``).

Also: ``kcall.build(name, sources)`` (compile a plugin, cached, and load
it), ``kcall.load_plugin(path)``, ops (``kcall.ops.Add(x, y)``), programs
(``kcall.Program.parse(hlo_text).compile()``), custom-call targets written
in Python (``kcall.register_target``). Errors are ``kcall.Error``
subclasses chosen by status code, which also derive from the matching
built-in exception (``InvalidArgumentError`` is a ``ValueError`` and a
``TypeError``, ``NotFoundError`` a ``LookupError``, ...).
"""

from . import _core
from ._core import (
    AbortedError,
    AlreadyExistsError,
    CancelledError,
    DataLossError,
    DeadlineExceededError,
    Error,
    Executable,
    FailedPreconditionError,
    Function,
    InternalError,
    InvalidArgumentError,
    NotFoundError,
    OutOfRangeError,
    PermissionDeniedError,
    Program,
    ProgramBuilder,
    ResourceExhaustedError,
    Tensor,
    UnauthenticatedError,
    UnavailableError,
    UnimplementedError,
    UnknownError,
    __version__,
    api_version,
    get_func,
    list_funcs,
    list_targets,
    remove_func,
)



def _error_message(self):
    """The innermost message: for an error made from a status, the
    status's own message (without the context); for one made in Python,
    what it was made with (``kcall.Error("text").message == "text"``)."""
    try:
        return self.__dict__["message"]
    except KeyError:
        pass
    if len(self.args) == 1:
        return str(self.args[0])
    return str(self) if self.args else ""


def _set_error_message(self, value):
    self.__dict__["message"] = value


# Exceptions raised from Python code carry the same attributes as those
# made from a status: the class's code (UNKNOWN for Error itself), the
# message they were made with, and no context.
Error.code = "UNKNOWN"
Error.message = property(_error_message, _set_error_message)
Error.context = ()

__all__ = [
    "Error", "Executable", "Function", "Plugin", "Program", "ProgramBuilder",
    "ShapePolymorphicProgram",
    "Tensor", "build", "build_path", "from_dlpack", "get_func", "list_funcs",
    "list_ops", "list_targets", "load_plugin", "ops", "register_func", "register_target",
    "default_stream", "register_xla_ffi", "register_xla_ffi_type",
    "remove_func", "to_device",
]


def register_func(name, func=None, *, override=False):
    """Registers a Python callable as the packed function `name`.

    Used directly (``register_func("mylib.f", f)``) or as a decorator
    (``@register_func("mylib.f")``); returns the callable unchanged. C code,
    plugins and ``kcall call`` then call it like any other function; an
    exception it raises reaches a C caller as a status carrying the
    exception's type, message and traceback, and a Python caller further
    out as the original exception. ``override=True`` replaces an existing
    registration (AlreadyExistsError otherwise).
    """
    def register(f):
        _core.register_func(name, f, override)
        return f
    return register if func is None else register(func)


def to_device(array, device, stream=None):
    """A copy of `array` (anything kcall reads: NumPy, ``__dlpack__``, a
    kcall.Tensor) as a kcall.Tensor on `device` ("cpu", "cuda:0").

    The copy is queued on `stream` (an int cudaStream_t, or a stream object
    with ``cuda_stream`` or ``ptr``, as torch and CuPy have) and waited for;
    with None it runs on kcall's own stream of the device. A device array is
    asked (through DLPack's ``stream``) to be ready on that stream first.
    ``to_device(t, "cpu")`` brings a device tensor back to the host.
    Without a CUDA device, FailedPreconditionError "no CUDA device: ...".
    """
    return _core.to_device(array, device, stream)


def default_stream(device):
    """kcall's own stream of `device` ("cuda:0") as an int cudaStream_t:
    the stream kcall queues work on when a call names none (and waits for
    before returning). Hand it to torch as
    ``torch.cuda.ExternalStream(kcall.default_stream("cuda:0"))``. 0 on the
    CPU; FailedPreconditionError "no CUDA device: ..." without a GPU."""
    return _core.default_stream(device)


def from_dlpack(array):
    """A kcall.Tensor sharing the memory of `array` (NumPy, buffer protocol,
    ``__dlpack__``, or a DLPack capsule) and keeping it alive."""
    return Tensor(array)


class Plugin:
    """What a loaded plugin registered.

    Attributes: path, name, version, api_version (negotiated, a (major,
    minor) pair), built_api_version, registrations (a list of (kind, name)
    pairs, kind one of 'function', 'op', 'kernel', 'custom-call target').
    """

    def __init__(self, info):
        self.path = info["path"]
        self.name = info["name"]
        self.version = info["version"]
        self.api_version = info["api_version"]
        self.built_api_version = info["built_api_version"]
        self.registrations = info["registrations"]
        self._handle = info["handle"]

    def names(self, kind):
        """The names it registered of one kind ('function', 'op', ...)."""
        return [n for k, n in self.registrations if k == kind]

    @property
    def functions(self):
        return self.names("function")

    def unload(self):
        """Unloads the plugin, or counts one load off when the file was
        loaded more than once (kc_plugin_unload). Refused
        (FailedPreconditionError naming what is held) while anything
        outside the plugin holds what it registered: a kcall.Function
        in hand, a target an executable was compiled against, a target
        JAX registered; and for a plugin that does not support unloading
        (it gives no fini). Nothing changes when it is refused. The ops
        ``kcall.ops`` keeps for its attributes are let go first, so an op
        called as ``kcall.ops.NAME`` holds nothing; an op object kept
        elsewhere still does."""
        from . import ops
        ops._forget(self.names("op"))
        _core.unload_plugin(self._handle)

    def __repr__(self):
        counts = {}
        for kind, _ in self.registrations:
            counts[kind] = counts.get(kind, 0) + 1
        what = ", ".join(f"{n} {k}{'s' if n != 1 else ''}"
                         for k, n in counts.items()) or "nothing"
        version = f" {self.version}" if self.version else ""
        return f"<kcall.Plugin '{self.name}'{version} from {self.path!r}: {what}>"


def load_plugin(path, prefix=None):
    """Loads the plugin at `path` and returns a kcall.Plugin describing it.

    Loading the same file again returns what was loaded the first time.
    Errors name the path: NotFoundError for a missing file,
    InvalidArgumentError for a file that is no plugin, FailedPreconditionError
    for an API version or feature the host lacks; a plugin whose init fails
    leaves nothing registered.

    A tvm-ffi module (a shared object exporting ``__tvm_ffi_NAME``
    functions, docs/tvm_ffi.md) loads too: each function becomes the kcall
    function and the custom-call target PREFIX.NAME, `prefix` defaulting to the file's name without
    "lib" and its extension; giving `prefix` requires a tvm-ffi module.
    tvm-ffi's runtime is the one the ``tvm_ffi`` package loads, imported
    here when it is installed.
    """
    import os
    path = os.fspath(path)
    if prefix is not None:
        _import_tvm_ffi()
        return Plugin(_core.load_plugin(path, prefix))
    try:
        return Plugin(_core.load_plugin(path))
    except FailedPreconditionError as e:
        # A tvm-ffi module whose runtime is not in the process yet: the
        # tvm_ffi package brings it, when it is installed.
        if "libtvm_ffi" not in str(e) or not _import_tvm_ffi():
            raise
    return Plugin(_core.load_plugin(path))


def _import_tvm_ffi():
    """Imports the tvm_ffi package (which loads libtvm_ffi) when it is
    installed; whether it is."""
    import importlib.util
    spec = importlib.util.find_spec("tvm_ffi")
    # A directory named tvm_ffi on sys.path is a namespace package, no
    # origin: not tvm-ffi.
    if spec is None or spec.origin is None:
        return False
    import tvm_ffi  # noqa: F401
    return True


def list_ops(prefix=""):
    """The registered op names starting with `prefix`, sorted."""
    return _core.list_ops(prefix)


def _buffer_spec(spec, what):
    """'f32', None, ('f32', 2) or ('f32', None) -> (dtype or None, rank)."""
    if spec is None or isinstance(spec, str):
        return (None if spec in (None, "any") else spec, None)
    dtype, rank = spec
    return (None if dtype in (None, "any") else str(dtype), rank)


def register_target(name, fn=None, *, args, results, attrs=None,
                    platform="host", override=False, batching="sequential"):
    """Registers a Python function as a typed custom-call target.

    For prototyping: a program calling `name` calls ``fn(*operands,
    *results, **attrs)`` with its buffers as NumPy arrays (kcall.Tensor
    views without NumPy), operands first, then the results, which fn
    writes in place; it returns None. The arrays are copies (operands
    read-only); the results are copied into the program's buffers when fn
    returns. `args` and `results` describe the buffers, each a dtype name
    ('f32'), None for any, or (dtype, rank); `attrs` maps attribute names
    to their types ('bool', 'i32', 'i64', 'f32', 'f64', 'str', 'dict', or
    'array' / 'array<i64>'). `batching` says how it batches under
    jax.vmap (kcall.jax.ffi_call): "sequential" (once per element),
    "elementwise" or "none" (KC_XCALL_SIG_BATCH_*). Used directly or as a
    decorator.
    """
    flags = {"sequential": 0, "elementwise": 8, "none": 16}.get(batching)
    if flags is None:
        raise ValueError(f"register_target {name!r}: batching: expected "
                         f"'sequential', 'elementwise' or 'none', got "
                         f"{batching!r}")
    arg_specs = [_buffer_spec(s, "argument") for s in args]
    result_specs = [_buffer_spec(s, "result") for s in results]
    attr_specs = []
    for attr_name, kind in (attrs or {}).items():
        elem = None
        if kind.startswith("array<") and kind.endswith(">"):
            kind, elem = "array", kind[6:-1]
        attr_specs.append((attr_name, kind, elem))

    def register(f):
        _core.register_target(name, f, arg_specs, result_specs, attr_specs,
                              platform, override, flags)
        return f
    return register if fn is None else register(fn)


def _handler_address(handler, what):
    """A PyCapsule passes as it is; a ctypes function becomes its address."""
    if handler is None or isinstance(handler, int):
        return handler
    if type(handler).__name__ == "PyCapsule":
        return handler
    import ctypes
    if isinstance(handler, ctypes._CFuncPtr):
        return ctypes.cast(handler, ctypes.c_void_p).value
    raise TypeError(f"{what}: expected a ctypes function, a PyCapsule or an "
                    f"address, got {type(handler).__name__}")


def register_xla_ffi(name, execute, *, instantiate=None, platform="host",
                     override=False, check_version=True):
    """Registers an XLA FFI handler (XLA_FFI_Error* fn(XLA_FFI_CallFrame*),
    as XLA_FFI_DEFINE_HANDLER_SYMBOL makes it) as the kcall target `name`,
    so programs call it with api_version=API_VERSION_TYPED_FFI:

        lib = ctypes.CDLL("libmine.so")
        kcall.register_xla_ffi("mine.add_one", lib.AddOne)

    `execute` (and `instantiate`, for handlers with per-call-site state) is
    a ctypes function, a PyCapsule (jax.ffi.pycapsule's) or an address;
    the library must stay loaded. The handler is first asked which XLA FFI
    API it was built for, and refused (kcall.FailedPreconditionError)
    when kcall cannot run it; check_version=False skips the query, for
    handlers that predate it. An address that is data, not code (a
    library's data symbol), is refused (kcall.InvalidArgumentError, naming
    the symbol and the library) before anything calls it."""
    flags = (1 if override else 0) | (0 if check_version else 1 << 8)
    _core.register_xla_ffi(name, platform,
                           _handler_address(execute, "execute"),
                           _handler_address(instantiate, "instantiate"),
                           flags)


def register_xla_ffi_type(name, type_id, type_info=None):
    """Registers a handler library's state type (the addresses of its
    XLA_FFI_TypeId and XLA_FFI_TypeInfo, e.g. ctypes.addressof of the
    library's symbols) with kcall's XLA FFI host, as
    jax.ffi.register_ffi_type does with XLA's."""
    _core.xla_ffi_type_register(name, type_id, type_info or 0)


# kcall's own ops (kc.MatMul, kc.Add, ...: kcall/builtin.h), before
# anything looks an op up.
_core.builtin_ops_register()

from . import ops  # noqa: E402  (ops uses the names above)
from ._build import build, build_path  # noqa: E402  (uses load_plugin)
from ._programs import ShapePolymorphicProgram  # noqa: E402
from ._lapack import offer_numpy_openblas as _offer_numpy_openblas  # noqa: E402

# Programs' LAPACK calls (jnp.linalg) fall back on NumPy's OpenBLAS.
_offer_numpy_openblas()
