"""kcall ops as PyTorch custom ops.

    import kcall.torch
    add = kcall.torch.register_op("Add")       # torch.ops.kcall.Add
    z = torch.ops.kcall.Add(x, y)              # eager: the kcall kernel
    torch.compile(lambda x, y: add(x, y) * 2)  # traced through the fake

``register_op(name)`` defines the torch.library operator
``kcall::NAME`` from the kcall op's definition (inputs, outputs and the
attributes the caller gives; type attributes the inputs decide are left
out), implements it by calling the op on the tensors' memory (no copies;
non-contiguous inputs are made contiguous first, as kcall's kernels take
compact tensors), and gives it a fake implementation whose output shapes
and dtypes come from the op's shape function (kcall's ``op_infer``), so
``torch.compile`` and other tracers see the outputs without running the
kernel. For an op that declares KC_OP_SYMBOLIC_SHAPES the fake
implementation keeps sizes symbolic: the outputs' sizes are SymInt
expressions of the inputs' (``op_infer_symbolic``), so
``torch.compile(dynamic=True)``, ``torch._dynamo.mark_dynamic`` and
``torch.export.export(..., dynamic_shapes=...)`` trace it once for every
size. Another op's output sizes are numbers: each new size is a new trace,
and a size marked dynamic is refused with a message naming the op.
Autograd follows the op's gradient declaration (``backward``).

Native kernels (torch >= NATIVE_MIN_TORCH; ``native_reason`` is None):
the implementation is C (python/src/torch_native.c) registered through
PyTorch's stable C ABI, the shim functions libtorch exports, looked up
with dlsym at import. Each op is three torch ops with one schema:

  NAME                 CPU: kcall's native kernel (outputs from torch's
                       allocator, inputs read where they lie);
                       Autograd: a native router
  NAME_kcall_nograd    no autograd kernel (torch's C++ fallback)
  NAME_kcall_autograd  the Python autograd rule below

The router calls NAME_kcall_nograd when grad mode is off or no input
requires grad, so no Python runs on that path, and NAME_kcall_autograd
otherwise. Every one has the native CPU kernel, the Python kernel for
other devices (``_Op.run``) and the fake. An op the native kernel cannot
serve (list inputs or outputs, dtype or float and bool list attributes,
more than 16 tensors or attributes; int lists and strings are native)
keeps the Python kernel: with a list input
it is one torch op as below, otherwise it keeps the router.

The Python kernel (older torch, or such ops): DLPack both ways
(``_core.op_call`` on the tensors, ``torch.from_dlpack`` of the outputs),
registered as CompositeExplicitAutograd with ``register_autograd``.

Importing this module imports torch.
"""

import ast
import functools
import inspect
import math
import os
import re

import torch

from . import _core, _symbolic, ops as _ops

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
        # The derivative plans of its calls (_gradient.Call), by what they
        # depend on: the kind, the inputs' grouping and the attrs.
        self._plans = {}
        self.call = getattr(_ops, name)
        info = self.call.definition
        self.handle = _core.op_lookup(name)
        # Its shape function runs on symbolic sizes (op.h, "Symbolic dims").
        self.symbolic = "symbolic_shapes" in info["flags"]
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

    def schema(self, name=None):
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
        return f"{name or self.torch_name}({', '.join(params)}) -> {ret}"

    # ---- the native kernels' view of the schema ------------------------

    def router_kinds(self):
        """Each schema argument's kind for the native router ("Tensor" or
        "other"), or None when an input is a list (the router reads
        requires_grad of single tensors only)."""
        info = _core.torch_native_info() or {}
        most = info.get("max_tensors", 0) + info.get("max_attrs", 0)
        if any(is_list for _, is_list in self.inputs) or \
                len(self.inputs) + len(self.attrs) > most:
            return None
        return ["Tensor"] * len(self.inputs) + ["other"] * len(self.attrs)

    def kernel_kinds(self):
        """(kinds, kcall attr names) of the schema arguments for the native
        CPU kernel, or None when it cannot read one of them or returns a
        list (the Python kernel serves those)."""
        info = _core.torch_native_info() or {}
        if self.router_kinds() is None or any(self.outputs) or max(
                len(self.inputs), len(self.outputs)) > info.get(
                    "max_tensors", 0) or len(self.attrs) > info.get(
                        "max_attrs", 0):
            return None
        kinds = ["Tensor"] * len(self.inputs)
        optional_ok = info.get("optional")
        for _, torch_type, _ in self.attrs:
            if torch_type not in _NATIVE_ATTR_KINDS or (
                    torch_type.endswith("?") and not optional_ok) or (
                    torch_type.endswith("[]") and not info.get("lists")) or (
                    torch_type == "str" and not info.get("strings")):
                return None
            kinds.append(torch_type)
        names = [None] * len(self.inputs) + [a for a, _, _ in self.attrs]
        return kinds, names

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
        if _symbolic_sizes(tensors):
            if self.symbolic:
                return self.regroup(self.fake_symbolic(tensors, attrs,
                                                       device))
            self.refuse_if_dynamic_on_purpose(tensors)
        # Concrete sizes: a symbolic size becomes its number (torch guards
        # on it, and a new size means a new trace).
        described = [(tuple(int(d) for d in t.shape), _dtype_name(t.dtype))
                     for t in tensors]
        return self.regroup(self.empty_outputs(
            _core.op_infer(self.handle, described, attrs), device))

    def empty_outputs(self, inferred, device):
        outs = []
        for shape, dtype in inferred:
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
        return outs

    def fake_symbolic(self, tensors, attrs, device):
        """Outputs whose sizes are SymInt expressions of the inputs' sizes:
        the op's shape function runs on symbolic dims (kcall's
        op_infer_symbolic), each of its assumptions becomes torch._check
        (a guard, or a constraint of an exported program)."""
        # One symbol per distinct expression: s0 and s0 are one size.
        shapes, assumptions = _symbolic.infer(
            self.handle, [t.shape for t in tensors],
            [_dtype_name(t.dtype) for t in tensors], attrs, _is_symbolic,
            lambda d: str(d.node.expr))
        for a, kind, b in assumptions:
            text, test = _symbolic.RELATIONS[kind]
            torch._check(test(a, b), lambda a=a, b=b, text=text: (
                f"kcall op {self.name!r}: its shape function assumes "
                f"{_size_text(a)} {text} {_size_text(b)}"))
        return self.empty_outputs(shapes, device)

    def refuse_if_dynamic_on_purpose(self, tensors):
        """A size made symbolic on purpose (torch.export's dynamic_shapes,
        torch._dynamo.mark_dynamic) must stay so; an op whose shape function
        works on numbers only would make it one, so it is refused here,
        named, rather than by torch's later "Constraints violated"."""
        if not _dynamic_on_purpose(tensors):
            return
        raise RuntimeError(
            f"kcall op {self.name!r}: its shape function is not symbolic "
            f"(the op does not declare KC_OP_SYMBOLIC_SHAPES), so its output "
            f"sizes are known only for concrete input sizes, and the sizes "
            f"marked dynamic ({_symbol_names(tensors)}) cannot stay "
            f"symbolic through it: declare the flag if the shape function "
            f"computes dims only with kcall's helpers (docs/ops.md, "
            f"\"Symbolic shapes\"), or keep these sizes static")


    # ---- autograd, from the op's gradient declaration -----------------

    def forward_mode_error(self):
        return RuntimeError(
            f"kcall op {self.name!r} ({self.namespace}::{self.torch_name}) "
            f"declares no forward-mode rule, so torch.func.jvp, jacfwd, "
            f"hessian and torch.autograd.forward_ad are refused rather than "
            f"given a zero tangent: declare one with kc_op_builder_set_jvp "
            f"(docs/ops.md, \"Forward-mode rules\"), or use reverse mode "
            f"(backward(), torch.autograd.grad)")

    def autograd_kernel(self, below):
        """The Autograd kernel of the op's graded torch op and the rule
        behind it. The kernel sends a call to the rule when a gradient or
        a tangent may flow (grad mode on and an input requiring grad, or
        forward-mode AD on and an input carrying a tangent), else to
        `below` (the op under autograd) directly. The rule is an
        autograd.Function (reverse mode from the op's gradient, forward
        mode from its jvp rule) whose list inputs and outputs cross it
        flattened. Returns (kernel, front): `front` is the op's kernel for
        torch.func's transforms, which must meet the rule above the
        dispatcher's autograd layer."""
        op = self

        class Rule(torch.autograd.Function):
            generate_vmap_rule = True

            @staticmethod
            def forward(*flat):
                args, kwargs = op.unflatten_inputs(flat)
                with torch._C._AutoDispatchBelowAutograd():
                    out = below(*args, **kwargs)
                return tuple(op.flat_outputs(out))

            @staticmethod
            def setup_context(ctx, inputs, output):
                args, kwargs = op.unflatten_inputs(inputs)
                op.setup_context(ctx, args, op.regroup(list(output)), kwargs)

            @staticmethod
            def backward(ctx, *grads):
                per_input = op.backward(ctx, op.regroup(list(grads)))
                flat = []
                for g, (_, is_list) in zip(per_input, op.inputs):
                    flat.extend(g if is_list else [g])
                return (*flat, None)

            @staticmethod
            def jvp(ctx, *tangents):
                return tuple(op.jvp(ctx, list(tangents[:-1])))

        Rule.__name__ = f"kcall_{self.torch_name}_rule"
        # torch binds forward's signature at each apply (inspect.signature,
        # tens of microseconds); a computed one is returned at once.
        Rule.forward.__signature__ = inspect.signature(Rule.forward)

        def apply(args, kwargs):
            tensors, _ = self.split(args, {})
            structure = [len(a) if is_list else None
                         for a, (_, is_list) in zip(args, self.inputs)]
            return self.regroup(list(Rule.apply(*tensors,
                                                _Layout(structure, kwargs))))

        def kernel(*args, **kwargs):
            tensors, _ = self.split(args, {})
            if _needs_rule(tensors):
                return apply(args, kwargs)
            with torch._C._AutoDispatchBelowAutograd():
                return below(*args, **kwargs)

        def front(*args, **kwargs):
            return apply(args, kwargs)
        return kernel, front

    def unflatten_inputs(self, flat):
        """(args, kwargs) of a call from the rule's flat inputs: the tensors,
        then their _Layout."""
        structure, kwargs = flat[-1].structure, flat[-1].kwargs
        args, pos = [], 0
        for count in structure:
            take = 1 if count is None else count
            group = list(flat[pos:pos + take])
            args.append(group[0] if count is None else group)
            pos += take
        return args, kwargs

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
        ctx.save_for_forward(*flat_in, *flat_out)

    def flat_outputs(self, output):
        if len(self.outputs) == 1:
            return list(output) if self.outputs[0] else [output]
        flat = []
        for value, is_list in zip(output, self.outputs):
            flat.extend(value if is_list else [value])
        return flat

    def backward(self, ctx, *grads):
        if self.call.definition["gradient"] is None:
            raise RuntimeError(
                f"kcall op {self.name!r} ({self.namespace}::{self.torch_name}) "
                f"declares no gradient, so it cannot be differentiated: "
                f"declare one with kc_op_builder_set_gradient (docs/ops.md, "
                f"\"Gradients\"), or call it under torch.no_grad() or on "
                f"tensors that do not require grad")
        flat_in, flat_out, structured, attrs = self.saved(ctx)
        cts = self.flat_outputs(grads[0] if len(grads) == 1 else grads)
        cts = [torch.zeros_like(o) if g is None else g
               for o, g in zip(flat_out, cts)]
        plan = self.plan(ctx, structured, attrs, len(flat_out), "gradient")
        grad_op = register_op(plan.grad_name, namespace=self.namespace)
        results = grad_op(*plan.grad_inputs(flat_in, flat_out, cts),
                          **plan.grad_attrs,
                          **plan.needed_attrs(ctx.needs_input_grad))
        results = _flat_results(results)
        placed = plan.input_cotangents(results, flat_in)
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

    def plan(self, ctx, structured, attrs, num_outputs, kind):
        """The _gradient.Call of a call saved in ctx, made once per kind,
        grouping and attrs (a training loop's calls share one)."""
        from . import _gradient
        key = (kind, tuple(ctx.kcall_structure), num_outputs,
               repr(sorted(attrs.items())))
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = _gradient.Call(
                self.name, self.call.definition, structured, attrs,
                num_outputs, kind=kind)
        return plan

    def saved(self, ctx):
        """(flat inputs, flat outputs, inputs grouped by arg, attrs) of the
        call setup_context saved."""
        saved = ctx.saved_tensors
        nin, nout = ctx.kcall_counts
        flat_in, flat_out = list(saved[:nin]), list(saved[nin:nin + nout])
        structured, pos = [], 0
        for count in ctx.kcall_structure:
            take = 1 if count is None else count
            group = flat_in[pos:pos + take]
            structured.append(group[0] if count is None else group)
            pos += take
        attrs = {k: (_dtype_name(v) if isinstance(v, torch.dtype) else v)
                 for k, v in ctx.kcall_attrs.items()}
        return flat_in, flat_out, structured, attrs

    def jvp(self, ctx, tangents):
        """The flat output tangents of a call from its flat input tangents
        (None: zero), computed by the op's jvp op."""
        if self.call.definition["jvp"] is None:
            raise self.forward_mode_error()
        flat_in, flat_out, structured, attrs = self.saved(ctx)
        plan = self.plan(ctx, structured, attrs, len(flat_out), "jvp")
        tangents = [torch.zeros_like(x) if t is None else t
                    for x, t in zip(flat_in, tangents)]
        jvp_op = register_op(plan.grad_name, namespace=self.namespace)
        results = jvp_op(*plan.grad_inputs(flat_in, flat_out, tangents),
                         **plan.grad_attrs)
        results = _flat_results(results)
        placed = plan.output_tangents(results, flat_out)
        return [torch.zeros_like(o) if t is None else t
                for o, t in zip(flat_out, placed)]


def _flat_results(results):
    """A rule op's results, one tensor or a tuple of tensors and lists, as
    one flat list."""
    if isinstance(results, torch.Tensor):
        return [results]
    return [t for r in results
            for t in (r if isinstance(r, (list, tuple)) else [r])]


class _Layout:
    """How a call's flat tensors group into the op's inputs (each input's
    list length, or None) and its attrs: the rule's last input. One
    object, not a tuple, so that torch.func sees one leaf, not a tree to
    match against the tangents."""
    __slots__ = ("structure", "kwargs")

    def __init__(self, structure, kwargs):
        self.structure = structure
        self.kwargs = kwargs


def _deferring(fn):
    """`fn` (a Python kernel or fake), whose errors reach the native router
    above it with their text: an exception raised through torch's
    dispatcher arrives there without it."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            _core.torch_native_defer(f"{type(e).__name__}: {e}")
            raise
    return wrapper


def _needs_rule(tensors):
    """Whether a call on `tensors` needs the autograd rule: grad mode on
    and one requires grad, or forward-mode AD on (torch.func.jvp sets the
    same level) and one carries a tangent."""
    if torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
        return True
    if torch.autograd.forward_ad._current_level < 0:
        return False
    return any(torch.autograd.forward_ad.unpack_dual(t).tangent is not None
               for t in tensors)


def _is_symbolic(d):
    from torch.fx.experimental.symbolic_shapes import is_concrete_int
    return isinstance(d, torch.SymInt) and not is_concrete_int(d)


def _symbolic_sizes(tensors):
    return any(_is_symbolic(d) for t in tensors for d in t.shape)


def _symbol_names(tensors):
    return ", ".join(sorted({_size_text(d) for t in tensors for d in t.shape
                             if _is_symbolic(d)}))


def _size_text(d):
    return str(d.node.expr) if isinstance(d, torch.SymInt) else str(d)


def _dynamic_on_purpose(tensors):
    """Whether a symbolic size of `tensors` was asked for: under
    torch.export, or a dim with a strict constraint (mark_dynamic), as
    opposed to one torch.compile chose to try (dynamic=True, automatic
    dynamic shapes), which may become a number again."""
    if torch.compiler.is_exporting():
        return True
    tracing = torch._guards.TracingContext.try_get()
    if tracing is None:
        return False
    symbols = {s for t in tensors for d in t.shape if _is_symbolic(d)
               for s in d.node.expr.free_symbols}
    shape_env = next(d.node.shape_env for t in tensors for d in t.shape
                     if _is_symbolic(d))
    for context in list(tracing.tensor_to_context.values()):
        source = getattr(context, "tensor_source", None)
        constraints = getattr(context, "constraint_sizes", None) or ()
        for i, constraint in enumerate(constraints):
            if (source is None or constraint is None
                    or getattr(constraint, "warn_only", True)):
                continue
            name = source.name() if callable(source.name) else source.name
            if shape_env.source_to_var.get(f"{name}.size()[{i}]") in symbols:
                return True
    return False


# The attribute types the native kernel reads from torch's stack.
_NATIVE_ATTR_KINDS = {"int", "float", "bool", "int?", "float?", "bool?",
                      "int[]", "str"}


def _native_init(hidden=()):
    """None when kcall.torch registers native kernels, else why not.
    `hidden`: shim symbols taken as missing (the tests simulate an older
    torch with it, in a fresh process)."""
    lib = os.path.join(os.path.dirname(torch.__file__), "lib",
                       "libtorch_cpu.so")
    try:
        _core.torch_native_init(lib, tuple(hidden))
    except RuntimeError as e:
        return (f"torch {torch.__version__} lacks {e} of its stable C ABI "
                f"(kcall's native kernels need torch >= {NATIVE_MIN_TORCH}); "
                f"ops run through the Python kernel")
    return None


# The oldest torch whose shim has every symbol the native kernels use
# (torch_tensor_to_pyobject came last, in 2.14).
NATIVE_MIN_TORCH = "2.14"
# None when ops are native kernels; otherwise the reason they are not.
native_reason = _native_init()

_registered = {}
_libraries = {}
_ops_by_torch_name = {}  # (namespace, torch name) -> _Op
# The companions of a native op: NAME_kcall_nograd (no autograd kernel)
# and NAME_kcall_autograd (the Python autograd rule).
_NOGRAD = "_kcall_nograd"
_AUTOGRAD = "_kcall_autograd"
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
    # Native takes two slots of torch_native.c's table (the kernel and the
    # router); past them ops keep the Python kernel.
    native = native_reason is None and op.router_kinds() is not None and \
        _core.torch_native_info()["slots_left"] >= 2
    names = [op.torch_name]
    if native:
        names += [op.torch_name + _NOGRAD, op.torch_name + _AUTOGRAD]
        for extra in names[1:]:
            other = _torch_names.get((namespace, extra))
            if other is not None:
                raise ValueError(
                    f"kcall op {name!r} needs torch.ops.{namespace}.{extra}, "
                    f"which kcall op {other!r} already is; pass another "
                    f"namespace")
    lib = _libraries.get(namespace)
    if lib is None:
        lib = _libraries[namespace] = torch.library.Library(namespace,
                                                            "FRAGMENT")
    run, fake = (_deferring(op.run), _deferring(op.fake)) if native else \
        (op.run, op.fake)
    if "stateful" in op.call.definition["flags"] and \
            not hasattr(torch.library, "_register_effectful_op"):
        fake = _untraceable(name, fake)
    for torch_op in names:
        lib.define(op.schema(torch_op))
        _torch_names[(namespace, torch_op)] = name
        lib.impl(torch_op, run, "CompositeExplicitAutograd")
        torch.library.register_fake(f"{namespace}::{torch_op}", fake,
                                    lib=lib)
    op.namespace = namespace
    # Every op gets an autograd rule: its declared gradient and forward-mode
    # rule, or an error naming it where it declares none (torch's own
    # fallback only warns, and leaves the inputs without gradients, or
    # gives a zero tangent). Native:
    # the rule is the autograd companion's, and the op's Autograd kernel
    # (the router) sends a call there only when a gradient or a tangent
    # may flow; below it is the nograd companion.
    graded = names[-1]
    below = getattr(getattr(torch.ops, namespace), names[1] if native else
                    op.torch_name)
    kernel, front = op.autograd_kernel(below)
    lib.impl(graded, kernel, "Autograd")
    # torch.func's transforms run a custom op's Autograd kernel below
    # their own layer, where an autograd.Function cannot run: the op meets
    # them with the rule directly (only they dispatch to this key).
    lib.impl(op.torch_name, front, "FuncTorchDynamicLayerFrontMode")
    op.native_kernel = False
    if native:
        kernel = op.kernel_kinds()
        if kernel is not None:
            _core.torch_native_kernel(op.handle, namespace, names, kernel[0],
                                      kernel[1], len(op.outputs))
            op.native_kernel = True
        _core.torch_native_router(namespace, op.torch_name, op.router_kinds(),
                                  f"{namespace}::{names[1]}",
                                  f"{namespace}::{names[2]}")
    _ops_by_torch_name[(namespace, op.torch_name)] = op
    operator = getattr(getattr(torch.ops, namespace), op.torch_name)
    if "stateful" in op.call.definition["flags"]:
        # Each torch op of it: graphs may hold a native op's companions.
        for torch_op in names:
            _keep_calls(f"{namespace}::{torch_op}",
                        getattr(getattr(torch.ops, namespace), torch_op), lib)
    _registered[key] = operator
    return operator


def _untraceable(name, fake):
    """The fake of a stateful op on a torch that cannot keep its calls in a
    traced graph (no torch.library._register_effectful_op): tracing it
    (torch.compile, torch.export) is refused, as the graph would drop calls
    whose results are unused. Eager calls, which run no fake, still work."""
    @functools.wraps(fake)
    def refusing(*args, **kwargs):
        raise RuntimeError(
            f"kcall op {name!r} is stateful, and torch {torch.__version__} "
            f"cannot keep its calls in a traced graph (it lacks "
            f"torch.library._register_effectful_op): torch.compile and "
            f"torch.export would drop calls whose results are unused. Call "
            f"it eagerly, or use torch >= {NATIVE_MIN_TORCH}")
    return refusing


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
        # Not enough for torch.compile (its fake refuses tracing, see
        # _untraceable), but fx passes that honour it keep the calls.
        torch.fx.node.has_side_effect(operator.default)
