"""kcall targets and ops inside JAX.

    import jax, numpy as np
    import kcall.jax
    kcall.load_plugin("libxla_plugin.so")
    kcall.jax.register_target("rms_norm")
    f = jax.jit(lambda x: jax.ffi.ffi_call(
        "rms_norm", jax.ShapeDtypeStruct(x.shape, x.dtype))(
            x, eps=np.float32(1e-5)))

``register_target(name)`` hands JAX (``jax.ffi.register_ffi_target``) an
XLA FFI handler that runs the kcall typed target ``name``. XLA calls it
with its call frame, which kcall decodes on the stack, without
allocating: XLA's buffers become DLTensors and the attributes the
target's signature declares are found by name. A target that does work at
its INSTANTIATE stage keeps, per call site, its state and attributes in
XLA's instantiate state, which XLA looks up under a lock on every call;
declare KC_XCALL_SIG_NO_INSTANTIATE in the signature of a target that
does not, and that cost goes. A kcall status comes back as an XLA error with the same code
and message. Attributes are passed to ``jax.ffi.ffi_call`` as keyword
arguments of the types the signature declares: ``np.float32(1e-5)`` for
an f32 attribute (a Python float is f64), ``np.int32(3)`` for i32, a
NumPy array for an array attribute.

``register_op(name)`` does the same for a kcall op, and ``call_op(name,
*arrays, **attrs)`` calls it from traced code with result shapes from the
op's shape function. ``call_target(name, result_shapes, *arrays,
**attrs)`` calls a typed target as ``jax.ffi.ffi_call`` does. Both
differentiate through the gradient the op or target declares. Under ``jax.shard_map`` or on several processes
(``jax.distributed``) the same handler runs on every shard: see
examples/jax/scale_out.py.

Importing this module imports JAX.
"""

import os
import re

import jax
import numpy as np

from . import _core, _symbolic, load_plugin

__all__ = ["register_target", "register_op", "register_plugin", "call_op",
           "call_target", "ffi_call"]

_PLATFORMS = {"cpu": "host", "host": "host", "cuda": "cuda", "gpu": "cuda"}
# JAX's names for kcall's platforms: jax.ffi.register_ffi_target knows
# "cpu" and "gpu" and passes any other name on as XLA's, which is "CUDA"
# (a target registered for "cuda" would never reach the GPU backend).
_JAX_PLATFORMS = {"host": "cpu", "cuda": "CUDA"}


def _kcall_platform(platform):
    try:
        return _PLATFORMS[platform.lower()]
    except KeyError:
        raise ValueError(f"unknown platform {platform!r} (expected 'cpu' or "
                         f"'cuda')") from None


def _jaxlib_ffi_api_version():
    """The XLA FFI API version of the jaxlib imported, (major, minor): the
    one its XLA was built with, as the C header it ships
    (jax.ffi.include_dir()) defines it; else from jaxlib's release (0.1
    before 0.8, 0.2 for 0.8, 0.3 after)."""
    try:
        path = os.path.join(jax.ffi.include_dir(), "xla", "ffi", "api",
                            "c_api.h")
        with open(path, encoding="utf-8") as f:
            text = f.read()
        return tuple(int(re.search(r"#define XLA_FFI_API_%s (\d+)" % part,
                                   text).group(1))
                     for part in ("MAJOR", "MINOR"))
    except (AttributeError, OSError, ValueError):
        import jaxlib
        release = tuple(int(p) for p in
                        re.findall(r"\d+", jaxlib.__version__)[:2])
        return (0, 1) if release < (0, 8) else (0, 2) if release < (0, 9) \
            else (0, 3)


# What the adapters answer an XLA that asks for their API version without
# saying its own (jaxlib before 0.9 accepts only a handler of exactly its
# version). A version kcall does not speak is reported when a target or op
# is registered.
FFI_API_VERSION = _jaxlib_ffi_api_version()
try:
    _core.xla_ffi_set_api_version(*FFI_API_VERSION)
    _ffi_version_error = None
except _core.InvalidArgumentError as e:
    _ffi_version_error = e


def _register(jax_name, capsule, kplatform,
              stages=("instantiate", "execute")):
    if _ffi_version_error is not None:
        import jaxlib
        raise _core.FailedPreconditionError(
            f"kcall.jax: jaxlib {jaxlib.__version__} speaks XLA FFI API "
            f"{FFI_API_VERSION[0]}.{FFI_API_VERSION[1]}, which kcall's "
            f"adapter does not: {_ffi_version_error}")
    jax.ffi.register_ffi_target(jax_name, {s: capsule for s in stages},
                                platform=_JAX_PLATFORMS[kplatform])


def register_target(name, platform="cpu", *, jax_name=None):
    """Registers the kcall typed target `name` (registered in kcall for
    `platform`) with JAX under `jax_name` (default: the same name), and
    returns that name. Registering again is harmless. Raises
    kcall.NotFoundError when no such target exists and
    kcall.FailedPreconditionError when it is not a typed target (the
    legacy conventions have no XLA FFI form)."""
    kplatform = _kcall_platform(platform)
    capsule = _core.xla_ffi_adapter(name, kplatform)
    jax_name = jax_name or name
    # A target with an INSTANTIATE stage gets XLA's too: the adapter keeps
    # each call site's attributes and state there. One without (signature
    # flag KC_XCALL_SIG_NO_INSTANTIATE) is registered for execute alone,
    # which spares XLA a state lookup under a lock on every call.
    stateless = _core.target_info(name, kplatform)["no_instantiate"]
    _register(jax_name, capsule, kplatform,
              ("execute",) if stateless else ("instantiate", "execute"))
    _jax_names[jax_name] = ("target", name, kplatform)
    return jax_name


_op_names = {}
# What each JAX name registered here runs: ("target", name, platform) or
# ("op", name, "host"), for ffi_call.
_jax_names = {}


def register_op(name, *, jax_name=None):
    """Registers the kcall op `name` with JAX (CPU) under `jax_name`
    (default: "kcall.NAME"), and returns that name. Raises
    kcall.NotFoundError when no such op exists."""
    capsule = _core.xla_ffi_op_adapter(name)
    jax_name = jax_name or "kcall." + name
    _register(jax_name, capsule, "host")
    _op_names[name] = jax_name
    _jax_names[jax_name] = ("op", name, "host")
    return jax_name


def ffi_call(target_name, result_shape_dtypes, *, vmap_method=None,
             has_side_effect=None, **kwargs):
    """jax.ffi.ffi_call for a target or op registered here (register_target,
    register_op, register_plugin), with what kcall knows of it filled in:
    `vmap_method` from its batching rule (a target's signature flags
    KC_XCALL_SIG_BATCH_*, an op's kc_op_builder_set_batching; see
    call_op), `has_side_effect` True for an op declared stateful. Given
    explicitly, either overrides. Returns the callable jax.ffi.ffi_call
    returns (arrays positional, attributes as keywords). A name not
    registered here raises ValueError naming it."""
    known = _jax_names.get(target_name)
    if known is None:
        raise ValueError(
            f"kcall.jax.ffi_call: {target_name!r} was not registered with "
            f"kcall.jax (register_target, register_op or register_plugin); "
            f"registered: {sorted(_jax_names) or 'none'}")
    kind, name, kplatform = known
    if kind == "op":
        info = _core.op_describe(_core.op_lookup(name))
        rule = info.get("batching", "sequential")
        stateful = "stateful" in info["flags"]
        what = f"kcall op {name!r}"
    else:
        rule = _core.target_info(name, kplatform)["batching"]
        stateful = False
        what = f"kcall target {name!r}"
    side_effect = stateful if has_side_effect is None else has_side_effect

    def call(*arrays, **attrs):
        method = vmap_method or _vmap_method(rule, arrays)
        if rule == "none" and vmap_method is None and side_effect and \
                not _custom_vmap_keeps_effects():
            method = None  # JAX's own refusal, which keeps the effect
        ffi = jax.ffi.ffi_call(target_name, result_shape_dtypes,
                               vmap_method=method,
                               has_side_effect=side_effect, **kwargs)

        def run(*xs):
            return ffi(*xs, **attrs)

        if rule == "none" and vmap_method is None and arrays and \
                (not side_effect or _custom_vmap_keeps_effects()):
            run = _refusing_vmap(what, run)
        return run(*arrays)

    return call


def _dtype_name(dtype):
    return np.dtype(dtype).name


_op_list_inputs = {}


# The vmap_method of each batching rule (op.h, "Batching"); "none" has
# none: vmap refuses the call, naming the op.
_VMAP_METHODS = {"sequential": "sequential", "elementwise": "broadcast_all"}


def _vmap_method(rule, arrays):
    """The vmap_method for a call of an op or target with batching `rule`
    on `arrays`: "broadcast_all" for an elementwise one whose inputs share
    one rank (a new leading dim lines up across them), else
    "sequential"."""
    method = _VMAP_METHODS.get(rule, "sequential")
    if method == "broadcast_all" and len({np.ndim(a) for a in arrays}) > 1:
        return "sequential"
    return method


_custom_vmap_effects = []


def _custom_vmap_keeps_effects():
    """Whether this JAX's custom_vmap passes on the effects of what it
    wraps (jax 0.5 drops them: a stateful call inside would be removed as
    dead code when its result is unused). Found out once, by tracing."""
    if not _custom_vmap_effects:
        probe = jax.custom_batching.custom_vmap(
            lambda x: jax.ffi.ffi_call(
                "kcall.probe", jax.ShapeDtypeStruct((), np.float32),
                has_side_effect=True, vmap_method="sequential")(x))
        probe.def_vmap(lambda axis_size, in_batched, x: (x, True))
        jaxpr = jax.make_jaxpr(probe)(np.float32(0))
        _custom_vmap_effects.append(bool(jaxpr.effects))
    return _custom_vmap_effects[0]


def _refusing_vmap(what, fn):
    """`fn`, which jax.vmap refuses with a message naming `what`."""
    refusing = jax.custom_batching.custom_vmap(fn)

    @refusing.def_vmap
    def rule(axis_size, in_batched, *xs):
        raise NotImplementedError(
            f"{what} cannot be batched: it declares the batching rule "
            f"\"none\" (kc_op_builder_set_batching or "
            f"KC_XCALL_SIG_BATCH_NONE), so jax.vmap refuses it; map it with "
            f"a Python loop or jax.lax.map instead")

    return refusing


def call_op(name, *args, vmap_method=None, **attrs):
    """Calls the kcall op `name` on JAX arrays, inside or outside
    `jax.jit`: the result shapes come from the op's shape function
    (kcall's shape inference, run at trace time), the kernel runs when
    XLA executes. Registers the op with JAX on first use. Returns one
    array, or a tuple for an op with several outputs. Under
    ``jax.export`` with symbolic input shapes
    (``jax.export.symbolic_shape("b, n")``) an op that declares
    KC_OP_SYMBOLIC_SHAPES gets symbolic result shapes computed from the
    inputs' (op.h, "Symbolic dims"); an assumption its shape function
    makes that JAX cannot prove (broadcasting ``n`` against ``m``), and an
    op without the flag, raise ValueError naming the op.

    Takes what ``kcall.ops`` takes: a list (or tuple) of arrays for an
    "N * T" or list(type) input, NumPy dtypes and scalar types
    (``np.int32``, ``np.dtype("int32")``, ``jnp.float32``) for type
    attrs, NumPy scalars (``np.float32(0.5)``) for number attrs.

    Under ``jax.vmap`` the op batches as it declares
    (kc_op_builder_set_batching; op.h, "Batching"): "sequential" (the
    default) runs it once per batch element; "elementwise" runs it once
    on the whole batch, unbatched inputs broadcast to it (ffi_call's
    vmap_method "broadcast_all"), for a call whose inputs share one rank,
    else once per element; "none" makes vmap raise NotImplementedError
    naming the op. `vmap_method`, when given, overrides the declaration
    (any of jax.ffi.ffi_call's). An op declared stateful is called with
    ``has_side_effect=True``: XLA keeps the call even when its result is
    unused, and never merges two calls of it.

    ``jax.grad`` and ``jax.vjp`` differentiate the call through the op's
    declared gradient (kc_op_builder_set_gradient): its gradient op runs,
    through ``call_op``, in the backward pass, so a gradient op with a
    gradient of its own gives second derivatives. An input the
    declaration leaves out gets a zero cotangent (float0 for integers).
    ``jax.jvp`` and ``jax.jacfwd`` go through its declared forward-mode
    rule (kc_op_builder_set_jvp) alike, and ``jax.hessian`` (forward over
    reverse) needs the gradient op's. A mode whose rule the op does not
    declare raises TypeError naming the op."""
    from .ops import _attr_value, _flatten, _list_inputs
    jax_name = _op_names.get(name) or register_op(name)
    handle = _core.op_lookup(name)
    known = _op_list_inputs.get(name)
    if known is None:
        info = _core.op_describe(handle)
        known = (_list_inputs(info), "stateful" in info["flags"],
                 "symbolic_shapes" in info["flags"],
                 info.get("batching", "sequential"))
        _op_list_inputs[name] = known
    list_inputs, stateful, _, batching = known
    structured = args
    args = _flatten(name, args, list_inputs)
    method = vmap_method or _vmap_method(batching, args)
    if batching == "none" and vmap_method is None and stateful and \
            not _custom_vmap_keeps_effects():
        # JAX's own refusal (vmap_method None), which keeps the effect.
        method = None
    attrs = {k: _attr_value(v) for k, v in attrs.items()}
    outs = _infer(name, handle, known, args, attrs)
    shapes = []
    for i, (shape, dtype) in enumerate(outs):
        if shape is None or any(d is None for d in shape):
            raise ValueError(f"op {name!r}: output {i}: its shape function "
                             f"does not give a static shape ({shape}); JAX "
                             f"needs one")
        shapes.append(jax.ShapeDtypeStruct(shape, np.dtype(dtype)))
    # A stateful op is kept by XLA even when its result is unused, and
    # never merged with another call of it.
    ffi = jax.ffi.ffi_call(jax_name, shapes if len(shapes) != 1 else shapes[0],
                           vmap_method=method, has_side_effect=stateful)

    ffi_attrs = {k: _ffi_attr(v) for k, v in attrs.items()}

    def call(*xs):
        out = ffi(*xs, **ffi_attrs)
        return out if len(shapes) == 1 else tuple(out)

    if batching == "none" and vmap_method is None and args and \
            (not stateful or _custom_vmap_keeps_effects()):
        call = _refusing_vmap(f"kcall op {name!r}", call)

    if not args:
        return call()
    return _differentiable(name, call, structured, args, attrs, len(shapes),
                           vmap_method)


def _ffi_attr(value):
    """An attr as jax.ffi.ffi_call takes it: a list of numbers (an op's
    list(int) or list(float) attr, which ffi_call's keyword arguments
    cannot hold, being unhashable) as a NumPy array, which reaches the
    handler as an array attribute."""
    if isinstance(value, list) and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        floats = any(isinstance(v, float) for v in value)
        return np.asarray(value, dtype=np.float64 if floats else np.int64)
    return value


def _is_symbolic_dim(d):
    """Whether the dim `d` is one of jax.export's symbolic dims. A number
    never is; otherwise jax.export says, which older jax does not import
    with jax (and whose import there needs absl-py): a jax that cannot
    import it made no symbolic dims either."""
    if isinstance(d, int):
        return False
    try:
        from jax import export
    except ImportError:
        return False
    return export.is_symbolic_dim(d)


def _infer(name, handle, known, args, attrs):
    """[(shape, dtype)] of the op's outputs on `args`. With symbolic dims
    among the inputs (jax.export.symbolic_shape) the shape function runs on
    them (op_infer_symbolic) and the shapes are JAX's symbolic dims
    computed from the inputs'; each assumption it makes must follow from
    JAX's dims, or the call is refused."""
    symbolic = any(_is_symbolic_dim(d) for a in args for d in a.shape)
    if not symbolic:
        inputs = [(tuple(a.shape), _dtype_name(a.dtype)) for a in args]
        return _core.op_infer(handle, inputs, dict(attrs))
    if not known[2]:
        raise ValueError(
            f"op {name!r}: its shape function is not symbolic (the op does "
            f"not declare KC_OP_SYMBOLIC_SHAPES), so it cannot give result "
            f"shapes for the symbolic input shapes "
            f"{[tuple(a.shape) for a in args]}: declare the flag if the "
            f"shape function computes dims only with kcall's helpers "
            f"(docs/ops.md, \"Symbolic shapes\"), or use concrete shapes")
    # One symbol per distinct expression of JAX's.
    outputs, assumptions = _symbolic.infer(
        handle, [a.shape for a in args], [_dtype_name(a.dtype) for a in args],
        dict(attrs), _is_symbolic_dim, str)
    for a, kind, b in assumptions:
        text, test = _symbolic.RELATIONS[kind]
        try:
            holds = test(a, b)
        except jax.errors.InconclusiveDimensionOperation:
            holds = False
        if holds is not True:
            raise ValueError(
                f"op {name!r}: its shape function assumes {a} {text} {b} "
                f"for the input shapes {[tuple(a.shape) for a in args]}, "
                f"which JAX's symbolic dims do not show: give both the same "
                f"symbol (or a constraint that implies it)")
    return outputs


def _differentiable(name, call, structured, flat, attrs, num_outputs,
                    vmap_method):
    """`call` on `flat`, differentiable in both modes (_jax_ad): forward
    mode calls the op's jvp op (kc_op_builder_set_jvp), reverse mode its
    gradient op (kc_op_builder_set_gradient); a mode whose rule the op
    does not declare raises TypeError naming the op."""
    from . import _gradient, _jax_ad
    _, info = _gradient.describe(name)
    plans = {kind: _gradient.Call(name, info, structured, attrs, num_outputs,
                                  kind=kind)
             for kind in ("gradient", "jvp") if info[kind] is not None}

    def run(kind, xs, outs, extra, needed=None):
        plan = plans[kind]
        results = call_op(plan.grad_name, *plan.grad_inputs(xs, outs, extra),
                          vmap_method=vmap_method, **plan.grad_attrs,
                          **(needed or {}))
        return results if isinstance(results, tuple) else (results,)

    def tangents(xs, outs, ts):
        if "jvp" not in plans:
            raise TypeError(
                f"kcall op {name!r} declares no forward-mode rule, so "
                f"jax.jvp and jax.jacfwd are refused: declare one with "
                f"kc_op_builder_set_jvp (docs/ops.md, \"Forward-mode "
                f"rules\"), or use reverse mode (jax.grad, jax.vjp)")
        return plans["jvp"].output_tangents(run("jvp", xs, outs, ts), outs)

    def cotangents(xs, outs, cts, needs):
        if "gradient" not in plans:
            raise TypeError(
                f"kcall op {name!r} declares no gradient, so it cannot be "
                f"differentiated in reverse mode: declare one with "
                f"kc_op_builder_set_gradient (docs/ops.md, \"Gradients\")")
        return plans["gradient"].input_cotangents(
            run("gradient", xs, outs, cts,
                plans["gradient"].needed_attrs(needs)), xs)

    rules = _jax_ad.Rules(tangents, cotangents)
    return _jax_ad.differentiable(call, num_outputs == 1, rules)(*flat)


_target_info = {}


def _target(name, platform):
    """(jax name, gradient declaration) of the typed target `name`,
    registered with JAX on first use."""
    key = (name, _kcall_platform(platform))
    known = _target_info.get(key)
    if known is None:
        jax_name = register_target(name, platform)
        known = (jax_name, _core.target_info(name, key[1])["gradient"])
        _target_info[key] = known
    return known


def call_target(name, result_shape_dtypes, *args, platform="cpu",
                vmap_method=None, **attrs):
    """Calls the kcall typed target `name` as ``ffi_call(name,
    result_shape_dtypes, vmap_method=...)(*args, **attrs)`` does (so
    under ``jax.vmap`` by its batching rule, `vmap_method` overriding it;
    attributes of the types its signature declares: ``np.float32(0.5)``
    for f32), and returns what that returns. Registers the target with JAX
    on first use.

    ``jax.grad`` and ``jax.vjp`` differentiate the call through the
    target's declared gradient (kc_xcall_signature.gradient): its gradient
    target runs, through ``call_target``, in the backward pass, with the
    same attributes, giving each ``grad(argN)`` argument N's shape and
    dtype; a gradient target with a gradient of its own gives second
    derivatives. An argument the declaration leaves out gets a zero
    cotangent. Differentiating a target that declares none raises
    TypeError naming it, as forward mode (``jax.jvp``) does: typed
    targets declare no forward-mode rule (an op can)."""
    jax_name, gradient = _target(name, platform)
    ffi = ffi_call(jax_name, result_shape_dtypes, vmap_method=vmap_method)
    single = not isinstance(result_shape_dtypes, (list, tuple))

    def call(*xs):
        out = ffi(*xs, **attrs)
        return out if single else tuple(out)

    if not args:
        return call()

    def cotangents(xs, outs, cts, needs):
        if gradient is None:
            raise TypeError(
                f"kcall target {name!r} declares no gradient, so it cannot "
                f"be differentiated: declare one in its signature "
                f"(kc_xcall_signature.gradient, kcall/abi.h)")
        sources = {"input": xs, "output": outs, "cotangent": cts}
        try:
            grad_args = [sources[source][index]
                         for source, index in gradient["args"]]
            wanted = [xs[index] for index in gradient["results"]]
        except IndexError:
            raise ValueError(
                f"kcall target {name!r}: its gradient {gradient['spec']!r} "
                f"names an argument or result beyond the call's "
                f"{len(xs)} arguments and {len(outs)} results") from None
        shapes = [jax.ShapeDtypeStruct(x.shape, x.dtype) for x in wanted]
        results = call_target(gradient["op"],
                              shapes[0] if len(shapes) == 1 else shapes,
                              *grad_args, platform=platform,
                              vmap_method=vmap_method, **attrs)
        results = (results,) if len(shapes) == 1 else tuple(results)
        placed = [None] * len(xs)
        for index, g in zip(gradient["results"], results):
            placed[index] = g
        return placed

    def tangents(xs, outs, ts):
        raise TypeError(
            f"kcall target {name!r} has no forward-mode rule (typed targets "
            f"declare gradients only), so jax.jvp and jax.jacfwd are "
            f"refused; use reverse mode (jax.grad, jax.vjp), or register the "
            f"kernel as an op with kc_op_builder_set_jvp")

    from . import _jax_ad
    rules = _jax_ad.Rules(tangents, cotangents)
    return _jax_ad.differentiable(call, single, rules)(*args)


def register_plugin(path, platform="cpu"):
    """Loads the plugin at `path` and registers with JAX every typed target
    it registered for `platform`, and, on "cpu", every op (as
    "kcall.NAME"). Returns the JAX names. Targets of the legacy
    conventions are left out: they have no XLA FFI form."""
    plugin = load_plugin(path)
    wanted = _kcall_platform(platform)
    names = []
    for kind, entry in plugin.registrations:
        if kind == "custom-call target":
            target, _, target_platform = entry.rpartition("@")
            if _kcall_platform(target_platform) != wanted:
                continue
            if _core.target_info(target, wanted)["api"] != "TYPED":
                continue
            names.append(register_target(target, platform))
        elif kind == "op" and wanted == "host":
            names.append(register_op(entry))
    return names
