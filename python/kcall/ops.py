"""Registered ops as Python functions: ``kcall.ops.Add(x, y)``.

Each attribute of this module is the op of that name, looked up when first
used: ``kcall.ops.Concat([a, b], axis=1)`` checks the inputs against the
op's definition, resolves its attributes, runs its shape function, picks a
kernel and returns the output (a kcall.Tensor), a tuple of them, or None.
Inputs are arrays (a list of arrays stands for an "N * T" or list input);
attributes are keyword arguments. ``help(kcall.ops.Add)`` shows the
definition; ``dir(kcall.ops)`` lists the ops registered now.
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
    """NumPy dtypes and scalar types become the dtype's name; lists too."""
    if isinstance(value, (list, tuple)):
        return [_attr_value(v) for v in value]
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, type) or type(value).__name__.endswith("DType") \
            or type(value).__name__ == "dtype":
        try:
            import numpy
            return numpy.dtype(value).name
        except (ImportError, TypeError):
            pass
    return value


def _flatten(inputs):
    flat = []
    for x in inputs:
        if isinstance(x, (list, tuple)):
            flat.extend(x)
        else:
            flat.append(x)
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

    def op(*inputs, **attrs):
        stream = None if stream_is_attr else attrs.pop("stream", None)
        values = {k: _attr_value(v) for k, v in attrs.items()}
        outputs = _core.op_call(handle, _flatten(inputs), values, stream)
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


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    op = _cache.get(name)
    if op is None:
        try:
            op = _make(name)
        except _core.NotFoundError as e:
            raise AttributeError(f"kcall.ops has no op {name!r}: {e}") from e
        _cache[name] = op
    return op


def __dir__():
    return sorted(set(_core.list_ops("")) | set(globals()))
