"""Registered ops as Python functions: ``kcall.ops.Add(x, y)``.

Each attribute of this module is the op of that name, looked up when first
used: ``kcall.ops.Concat([a, b], axis=1)`` checks the inputs against the
op's definition, resolves its attributes, runs its shape function, picks a
kernel and returns the output (a kcall.Tensor), a tuple of them, or None.
Inputs are arrays; an "N * T" input, or one typed by a list(type) attr,
takes a list (or tuple) of arrays, and any other input refuses a list
(TypeError naming the input: a list is not converted to an array, whose
dtype would have to be guessed). Attributes are keyword arguments.
``help(kcall.ops.Add)`` shows the definition; ``dir(kcall.ops)`` lists
the ops registered now. A dotted name is reached through its parts:
kcall's built-in ops (kcall/builtin.h) are ``kcall.ops.kc.MatMul``,
``kcall.ops.kc.Add``, ... (``getattr(kcall.ops, "kc.MatMul")`` too). An output's memory comes from kcall's caching host
allocator: when the last reference to the tensor (and to any NumPy array
or DLPack capsule made from it) goes, the memory returns to the cache of
that thread for the next call to take, so a loop of calls on large arrays
does not take fresh pages each time (KCALL_HOST_CACHE_MB bounds the cache;
see kc_allocator_caching in kcall/base.h).
"""

import ast
import inspect

from . import _core

_cache = {}


class _Inferred:
    """Default of an attribute the call infers from its inputs."""

    def __repr__(self):
        return "<inferred>"


class _FromSpec:
    """Default of an attribute whose spec gives a default."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text


def _attr_value(value):
    """NumPy dtypes and scalar types become the dtype's name, NumPy scalars
    the Python number; lists too."""
    if isinstance(value, (list, tuple)):
        return [_attr_value(v) for v in value]
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if type(value).__module__ == "numpy" and hasattr(value, "item") \
            and getattr(value, "ndim", None) == 0:
        return value.item()  # a NumPy scalar: np.float32(0.5), np.int64(3)
    if isinstance(value, type) or type(value).__name__.endswith("DType") \
            or type(value).__name__ == "dtype":
        try:
            import numpy
            return numpy.dtype(value).name
        except (ImportError, TypeError):
            pass
    return value


def _list_inputs(info):
    """(name, takes a list) for each input: an "N * T" input, or one typed
    by a list(type) attr, takes a list of arrays; any other, one array."""
    list_attrs = set()
    for spec in info["attrs"]:
        name, kind = _spec_parts(spec)
        if kind.startswith("list("):
            list_attrs.add(name)
    inputs = []
    for spec in info["inputs"]:
        name, kind = _spec_parts(spec)
        inputs.append((name, "*" in kind or kind in list_attrs))
    return inputs


def _flatten(op_name, inputs, list_inputs):
    """The tensors of a call: a list or tuple given for a list input is
    spliced in; given for any other input it is refused, not converted
    (an array's dtype is never guessed from Python numbers)."""
    flat = []
    for i, x in enumerate(inputs):
        if not isinstance(x, (list, tuple)):
            flat.append(x)
            continue
        if i < len(list_inputs) and list_inputs[i][1]:
            flat.extend(x)
            continue
        named = f" ({list_inputs[i][0]!r})" if i < len(list_inputs) else ""
        raise TypeError(
            f"op {op_name!r}: input {i}{named}: a {type(x).__name__} was "
            f"given where one tensor is expected (only an \"N * T\" or "
            f"list(type) input takes a list); pass an array, such as "
            f"numpy.asarray(...) with the dtype meant")
    return tuple(flat)


def _spec_parts(spec):
    name, _, rest = spec.partition(":")
    return name.strip(), rest.strip()


def _signature(info):
    inferred = set()
    for spec in info["inputs"] + info["outputs"]:
        _, kind = _spec_parts(spec)
        inferred.update(w.strip() for w in kind.replace("*", " ").split())
    params = []
    for spec in info["inputs"]:
        name, kind = _spec_parts(spec)
        params.append(inspect.Parameter(name, inspect.Parameter.POSITIONAL_ONLY))
    for spec in info["attrs"]:
        name, kind = _spec_parts(spec)
        if "=" in kind:
            text = kind.split("=", 1)[1].strip()
            try:
                default = ast.literal_eval(text)
            except (ValueError, SyntaxError):
                default = _FromSpec(text)
        elif name in inferred:
            default = _Inferred()
        else:
            default = inspect.Parameter.empty
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY,
                                        default=default))
    try:
        return inspect.Signature(params)
    except ValueError:  # a name Python does not take as a parameter
        return None


def _doc(info):
    lines = [info["signature"], ""]
    if info["doc"]:
        lines += [info["doc"], ""]
    if info["attrs"]:
        lines.append("attrs:   " + "\n         ".join(info["attrs"]))
    if info["flags"]:
        lines.append("flags:   " + ", ".join(info["flags"]))
    if info.get("gradient"):
        lines.append("gradient: " + info["gradient"]["spec"])
    if info.get("jvp"):
        lines.append("jvp: " + info["jvp"]["spec"])
    lines.append("batching: " + info.get("batching", "sequential"))
    lines.append("kernels: " + ("\n         ".join(info["kernels"])
                                or "(none)"))
    return "\n".join(lines)


def _make(name):
    handle = _core.op_lookup(name)
    info = _core.op_describe(handle)

    # `stream=` picks the CUDA stream of a call on device tensors (an int
    # handle or a torch/CuPy stream), unless the op has an attr of that name.
    stream_is_attr = any(_spec_parts(spec)[0] == "stream"
                         for spec in info["attrs"])

    list_inputs = _list_inputs(info)

    def op(*inputs, **attrs):
        stream = None if stream_is_attr else attrs.pop("stream", None)
        values = {k: _attr_value(v) for k, v in attrs.items()}
        tensors = _flatten(name, inputs, list_inputs)
        outputs = _core.op_call(handle, tensors, values, stream)
        if not outputs:
            return None
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    op.__name__ = op.__qualname__ = name
    op.__module__ = __name__
    op.__doc__ = _doc(info)
    signature = _signature(info)
    if signature is not None:
        op.__signature__ = signature
    op.definition = info
    return op


class _Namespace:
    """The ops whose names start with a dotted prefix: ``kcall.ops.kc`` for
    kcall's built-in ops (``kcall.ops.kc.MatMul``), ``kcall.ops.cpp`` for a
    plugin's "cpp.Clip"."""

    def __init__(self, prefix):
        self._prefix = prefix

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _lookup(self._prefix + "." + name)

    def __dir__(self):
        start = self._prefix + "."
        return sorted({n[len(start):].split(".")[0]
                       for n in _core.list_ops(start)})

    def __repr__(self):
        return f"<kcall.ops namespace {self._prefix!r}>"


def _lookup(name):
    op = _cache.get(name)
    if op is None:
        try:
            op = _make(name)
        except _core.NotFoundError as e:
            if _core.list_ops(name + "."):
                return _Namespace(name)
            raise AttributeError(f"kcall.ops has no op {name!r}: {e}") from e
        _cache[name] = op
    return op


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _lookup(name)


def _forget(names):
    """Drops the cached ops of these names (Plugin.unload, before it
    unloads: a cached op holds its plugin)."""
    for name in names:
        _cache.pop(name, None)


def __dir__():
    return sorted(set(_core.list_ops("")) | set(globals()))
