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
import math
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


# A default a schema cannot write (torch's parser takes no inf or nan):
# the argument becomes optional, None by default, and kcall applies the
# op's own default when it is left out.
_KCALL_DEFAULT = object()


def _default(text, torch_type):
    """A schema default from a spec default: None when it has none,
    _KCALL_DEFAULT when the schema cannot write it."""
    if text is None:
        return None
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text if torch_type == "ScalarType" else _KCALL_DEFAULT
    if isinstance(value, float) and not math.isfinite(value):
        return _KCALL_DEFAULT
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
        self.torch_name = torch_name(name)
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
            schema_default = _default(default, torch_type)
            if schema_default is _KCALL_DEFAULT:
                torch_type, schema_default = torch_type + "?", "None"
            self.attrs.append((attr, torch_type, schema_default))

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
        return f"{self.torch_name}({', '.join(params)}) -> {ret}"

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
        if self.device_of(tensors).type == "meta":
            return self.fake(*args, **kwargs)
        # Autograd is done by the time the kernel runs (register_autograd
        # below, or torch's error for an op without it): the memory is
        # all the kernel reads, and DLPack refuses a tensor that requires
        # grad.
        tensors = [t.detach().contiguous() for t in tensors]
        outs = _core.op_call(self.handle, tuple(tensors), attrs)
        return self.regroup([torch.from_dlpack(o) for o in outs])

    def device_of(self, tensors):
        """The one device of the inputs (CPU when there are none). A mix is
        refused, as torch's own ops refuse it: with a meta tensor among real
        ones torch runs the fake implementation, whose outputs would
        otherwise be real tensors never written."""
        devices = {t.device for t in tensors}
        if len(devices) > 1:
            names = ", ".join(sorted(str(d) for d in devices))
            raise RuntimeError(
                f"kcall op {self.name!r}: expected all tensors to be on the "
                f"same device, but found {names}")
        return devices.pop() if devices else torch.device("cpu")

    def fake(self, *args, **kwargs):
        tensors, attrs = self.split(args, kwargs)
        device = self.device_of(tensors)
        described = [(tuple(int(d) for d in t.shape), _dtype_name(t.dtype))
                     for t in tensors]
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


    # ---- autograd, from the op's gradient declaration -----------------

    def setup_context(self, ctx, inputs, output, keyword_only_inputs=None):
        structured = list(inputs[:len(self.inputs)])
        ctx.kcall_structure = [len(x) if is_list else None
                               for x, (_, is_list) in zip(structured,
                                                          self.inputs)]
        ctx.kcall_attrs = {k: v for k, v in (keyword_only_inputs or {}).items()
                           if v is not None}
        flat_in, _ = self.split(structured, {})
        flat_out = self.flat_outputs(output)
        ctx.kcall_counts = (len(flat_in), len(flat_out))
        ctx.save_for_backward(*flat_in, *flat_out)

    def flat_outputs(self, output):
        if len(self.outputs) == 1:
            return list(output) if self.outputs[0] else [output]
        flat = []
        for value, is_list in zip(output, self.outputs):
            flat.extend(value if is_list else [value])
        return flat

    def backward(self, ctx, *grads):
        from . import _gradient
        if self.call.definition["gradient"] is None:
            raise RuntimeError(
                f"kcall op {self.name!r} ({self.namespace}::{self.torch_name}) "
                f"declares no gradient, so it cannot be differentiated: "
                f"declare one with kc_op_builder_set_gradient (docs/ops.md, "
                f"\"Gradients\"), or call it under torch.no_grad() or on "
                f"tensors that do not require grad")
        saved = ctx.saved_tensors
        nin, nout = ctx.kcall_counts
        flat_in, flat_out = list(saved[:nin]), list(saved[nin:nin + nout])
        structured, pos = [], 0
        for count in ctx.kcall_structure:
            take = 1 if count is None else count
            group = flat_in[pos:pos + take]
            structured.append(group[0] if count is None else group)
            pos += take
        cts = self.flat_outputs(grads[0] if len(grads) == 1 else grads)
        cts = [torch.zeros_like(o) if g is None else g
               for o, g in zip(flat_out, cts)]
        attrs = {k: (_dtype_name(v) if isinstance(v, torch.dtype) else v)
                 for k, v in ctx.kcall_attrs.items()}
        plan = _gradient.Call(self.name, self.call.definition, structured,
                              attrs, nout)
        grad_op = register_op(plan.grad_name, namespace=self.namespace)
        results = grad_op(*plan.grad_inputs(flat_in, flat_out, cts),
                          **plan.grad_attrs)
        if isinstance(results, torch.Tensor):
            results = [results]
        else:
            results = [t for r in results
                       for t in (r if isinstance(r, (list, tuple)) else [r])]
        placed = plan.input_cotangents(results, nin)
        out, pos = [], 0
        for count in ctx.kcall_structure:
            if count is None:
                out.append(placed[pos])
                pos += 1
            else:
                out.append([torch.zeros_like(x) if g is None else g
                            for x, g in zip(flat_in[pos:pos + count],
                                            placed[pos:pos + count])])
                pos += count
        return tuple(out)


_registered = {}
_libraries = {}
_torch_names = {}  # (namespace, torch name) -> kcall name


def torch_name(name):
    """The torch operator name of the kcall op `name`: each character a
    torch name cannot hold (kcall's . : -) becomes _, so "cpp.Clip" is
    torch.ops.kcall.cpp_Clip and "mylib::add" mylib__add."""
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


def register_op(name, *, namespace="kcall"):
    """Defines ``torch.ops.<namespace>.<torch_name(name)>`` from the
    registered kcall op `name` and returns it (a dotted name such as
    "cpp.Clip" becomes cpp_Clip). Registering the same op again returns the
    operator already defined; two kcall ops whose torch names collide are
    refused (ValueError), before anything is defined."""
    key = (namespace, name)
    if key in _registered:
        return _registered[key]
    op = _Op(name)
    taken = _torch_names.get((namespace, op.torch_name))
    if taken is not None and taken != name:
        raise ValueError(
            f"kcall op {name!r} would be torch.ops.{namespace}."
            f"{op.torch_name}, which kcall op {taken!r} already is; pass "
            f"another namespace")
    lib = _libraries.get(namespace)
    if lib is None:
        lib = _libraries[namespace] = torch.library.Library(namespace,
                                                            "FRAGMENT")
    qualified = f"{namespace}::{op.torch_name}"
    lib.define(op.schema())
    _torch_names[(namespace, op.torch_name)] = name
    lib.impl(op.torch_name, op.run, "CompositeExplicitAutograd")
    torch.library.register_fake(qualified, op.fake, lib=lib)
    op.namespace = namespace
    # Every op gets an autograd rule: its declared gradient, or an error
    # naming it (torch's own fallback only warns, and leaves the inputs
    # without gradients).
    torch.library.register_autograd(qualified, op.backward,
                                    setup_context=op.setup_context, lib=lib)
    operator = getattr(getattr(torch.ops, namespace), op.torch_name)
    if "stateful" in op.call.definition["flags"]:
        _keep_calls(qualified, operator, lib)
    _registered[key] = operator
    return operator


def _keep_calls(qualified, operator, lib):
    """Marks an op declared stateful as having side effects, so that
    torch.compile and torch.export keep every call of it, in order, even
    when its result is unused: registered as an ordered effect
    (torch.library._register_effectful_op), or, on a torch without it,
    as a function fx's dead-code elimination keeps."""
    register = getattr(torch.library, "_register_effectful_op", None)
    if register is not None:
        from torch._library.effects import EffectType
        register(qualified, EffectType.ORDERED, lib=lib)
    else:
        torch.fx.node.has_side_effect(operator.default)
