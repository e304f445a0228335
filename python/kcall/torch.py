"""kcall ops as PyTorch custom ops.

    import kcall.torch
    add = kcall.torch.register_op("Add")       # torch.ops.kcall.Add
    z = torch.ops.kcall.Add(x, y)              # eager: the kcall kernel
    torch.compile(lambda x, y: add(x, y) * 2)  # traced through the fake

``register_op(name)`` defines the torch.library operator
``kcall::NAME`` from the kcall op's definition (inputs, outputs and the
attributes the caller gives; type attributes the inputs decide are left
out), implements it by calling the op on the tensors' memory (DLPack both
ways, no copies; non-contiguous inputs are made contiguous first, as
kcall's kernels take compact tensors), and gives it a fake implementation
whose output shapes and dtypes come from the op's shape function
(kcall's ``op_infer``), so ``torch.compile`` and other tracers see the
outputs without running the kernel.

Importing this module imports torch.
"""

import ast
import re

import torch

from . import _core, ops as _ops

__all__ = ["register_op"]

_SCALAR_KINDS = {"int": "int", "float": "float", "bool": "bool",
                 "string": "str", "type": "ScalarType", "shape": "int[]"}


def _torch_dtype(name):
    dtype = getattr(torch, name, None)
    if not isinstance(dtype, torch.dtype):
        raise TypeError(f"kcall dtype {name!r} has no torch dtype")
    return dtype


def _dtype_name(dtype):
    return str(dtype).replace("torch.", "")


def _spec(spec):
    """'axis: int >= 0 = 0' -> ('axis', 'int >= 0', '0' or None)."""
    name, _, rest = spec.partition(":")
    rest, eq, default = rest.partition("=")
    return name.strip(), rest.strip(), default.strip() if eq else None


def _attr_type(kind):
    """The torch schema type of a kcall attribute kind."""
    base = re.sub(r"\s*[<>]=.*$", "", kind).strip()  # bounds go
    if base in _SCALAR_KINDS:
        return _SCALAR_KINDS[base]
    m = re.fullmatch(r"list\((\w+)\)", base)
    if m and m.group(1) in _SCALAR_KINDS:
        return _SCALAR_KINDS[m.group(1)] + "[]"
    if base.startswith("{") and "'" in base:
        return "str"  # a set of strings
    return "ScalarType"  # a type set or a type class


def _default(text, torch_type):
    """A schema default from a spec default, or None when it has none."""
    if text is None:
        return None
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text if torch_type == "ScalarType" else None
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, str):
        return '"' + value + '"'
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(str(v) for v in value) + "]"
    return repr(value)


class _Op:
    """How one kcall op maps onto a torch schema."""

    def __init__(self, name):
        self.name = name
        self.call = getattr(_ops, name)
        info = self.call.definition
        self.handle = _core.op_lookup(name)
        inferred = set()
        self.inputs = []  # (name, is_list)
        for spec in info["inputs"]:
            arg, kind, _ = _spec(spec)
            words = kind.replace("*", " ").split()
            inferred.update(words)
            is_list = "*" in kind or (len(words) == 1 and self._is_type_list(
                info, words[0]))
            self.inputs.append((arg, is_list))
        self.outputs = []
        for spec in info["outputs"]:
            arg, kind, _ = _spec(spec)
            words = kind.replace("*", " ").split()
            self.outputs.append(
                "*" in kind or (len(words) == 1 and self._is_type_list(
                    info, words[0])))
        self.attrs = []  # (name, torch type, default text or None)
        for spec in info["attrs"]:
            attr, kind, default = _spec(spec)
            if attr in inferred:
                continue
            torch_type = _attr_type(kind)
            self.attrs.append((attr, torch_type, _default(default, torch_type)))

    @staticmethod
    def _is_type_list(info, word):
        return any(_spec(s)[0] == word and _spec(s)[1].startswith("list(type")
                   for s in info["attrs"])

    def schema(self):
        params = [("Tensor[] " if is_list else "Tensor ") + arg
                  for arg, is_list in self.inputs]
        attrs = [f"{t} {a}" + (f"={d}" if d is not None else "")
                 for a, t, d in self.attrs]
        if attrs:
            params.append("*")
            params += attrs
        rets = ["Tensor[]" if is_list else "Tensor" for is_list in self.outputs]
        ret = rets[0] if len(rets) == 1 else "(" + ", ".join(rets) + ")"
        if not rets:
            ret = "()"
        return f"{self.name}({', '.join(params)}) -> {ret}"

    def split(self, args, kwargs):
        tensors = []
        for (arg, is_list), value in zip(self.inputs, args):
            tensors.extend(value if is_list else [value])
        attrs = {}
        for name, torch_type, _ in self.attrs:
            if name in kwargs and kwargs[name] is not None:
                value = kwargs[name]
                if isinstance(value, torch.dtype):
                    value = _dtype_name(value)
                elif isinstance(value, (list, tuple)):
                    value = [_dtype_name(v) if isinstance(v, torch.dtype)
                             else v for v in value]
                attrs[name] = value
        return tensors, attrs

    def regroup(self, flat):
        """Outputs as the schema returns them."""
        if len(self.outputs) == 1 and not self.outputs[0]:
            return flat[0]
        if len(self.outputs) == 1:
            return list(flat)
        return tuple(flat)

    def run(self, *args, **kwargs):
        tensors, attrs = self.split(args, kwargs)
        tensors = [t.contiguous() for t in tensors]
        outs = _core.op_call(self.handle, tuple(tensors), attrs)
        return self.regroup([torch.from_dlpack(o) for o in outs])

    def fake(self, *args, **kwargs):
        tensors, attrs = self.split(args, kwargs)
        described = [(tuple(int(d) for d in t.shape), _dtype_name(t.dtype))
                     for t in tensors]
        device = tensors[0].device if tensors else torch.device("cpu")
        outs = []
        for shape, dtype in _core.op_infer(self.handle, described, attrs):
            if shape is None:
                raise RuntimeError(
                    f"kcall op {self.name!r}: its shape function leaves an "
                    f"output's rank unknown, which torch cannot trace")
            ctx = None
            dims = []
            for d in shape:
                if d is None:  # data-dependent: a symbolic size
                    ctx = ctx or torch.library.get_ctx()
                    d = ctx.new_dynamic_size()
                dims.append(d)
            outs.append(torch.empty(dims, dtype=_torch_dtype(dtype),
                                    device=device))
        return self.regroup(outs)


_registered = {}
_libraries = {}


def register_op(name, *, namespace="kcall"):
    """Defines ``torch.ops.<namespace>.<name>`` from the registered kcall op
    `name` and returns it. Registering the same op again returns the
    operator already defined."""
    key = (namespace, name)
    if key in _registered:
        return _registered[key]
    op = _Op(name)
    lib = _libraries.get(namespace)
    if lib is None:
        lib = _libraries[namespace] = torch.library.Library(namespace,
                                                            "FRAGMENT")
    lib.define(op.schema())
    lib.impl(name, op.run, "CompositeExplicitAutograd")
    torch.library.register_fake(f"{namespace}::{name}", op.fake, lib=lib)
    operator = getattr(getattr(torch.ops, namespace), name)
    _registered[key] = operator
    return operator
