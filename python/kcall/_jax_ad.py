"""Automatic differentiation of kcall ops and targets in JAX, in both modes,
from their declared rules (op.h, "Gradients" and "Forward-mode rules").

JAX offers either jax.custom_vjp (reverse mode only) or jax.custom_jvp
(forward mode, and reverse mode by transposing the tangent computation,
which must then be made of transposable JAX operations). A kernel's
tangent map is an opaque foreign call, so kcall gives it a transpose of
its own: a call is a custom_jvp whose tangents come from one primitive,
``kcall_tangent``, linear in the input tangents, that

- evaluates (jax.jvp, jacfwd) by calling the op's jvp op,
- transposes (jax.grad, vjp) by calling the op's gradient op,
- differentiates in its other inputs (the call's inputs and outputs, for
  second derivatives) by differentiating the jvp op's call, through that
  op's own rules,
- batches (jax.vmap) by mapping both calls.

A rule the op does not declare raises TypeError naming the op when JAX
needs it, and only then: an op with a gradient but no jvp rule works in
reverse mode and is refused in forward mode, and the other way round.
"""

import numpy as np

import jax

_primitive = None

try:
    from jax.custom_derivatives import SymbolicZero as _SymbolicZero
except ImportError:  # older jax: no symbolic zeros, every tangent an array
    class _SymbolicZero:
        pass


def _inexact(x):
    return np.issubdtype(np.dtype(x.dtype), np.inexact)


def _zeros_like(x):
    """Zeros of x's shape: x's dtype where it is a float, else JAX's
    float0 (the tangent type of integers)."""
    if _inexact(x):
        return jax.numpy.zeros(x.shape, x.dtype)
    return np.zeros(x.shape, jax.dtypes.float0)


class Rules:
    """The derivative rules of one call: `tangents(xs, outs, ts)` gives
    the outputs' tangents from the inputs' (one per output, None for
    zero), `cotangents(xs, outs, cts, needs)` the inputs' cotangents from
    the outputs' (one per input, None for zero; `needs` flags the inputs
    whose cotangents are used, the others may come back zero). Either may
    raise TypeError when the op declares no such rule."""

    def __init__(self, tangents, cotangents):
        self.tangents = tangents
        self.cotangents = cotangents


class _Linear:
    """The parameters of one kcall_tangent: the call's `num_in` inputs and
    `num_out` outputs are its first inputs (the residuals), the tangents
    of its float inputs (positions `lin`) the rest; it returns the
    tangents of its float outputs (positions `outs`, shapes `avals`)."""

    def __init__(self, rules, num_in, num_out, lin, outs, avals,
                 batched=()):
        self.rules = rules
        self.num_in = num_in
        self.num_out = num_out
        self.lin = lin
        self.outs = outs
        self.avals = avals
        # One (residual batch axes, size) per jax.vmap around it, the
        # innermost first: both calls are mapped over each.
        self.batched = batched

    def split(self, args):
        n = self.num_in + self.num_out
        return list(args[:n]), list(args[n:])

    def _mapped(self, fn):
        for axes, _ in self.batched:
            fn = jax.vmap(fn, in_axes=(axes, 0))
        return fn

    def apply(self, res, lin):
        """The output tangents (floats only) from the input tangents."""
        return self._mapped(self._apply)(res, lin)

    def transpose(self, res, cts):
        """The input cotangents (floats only) from the output ones."""
        return self._mapped(self._transpose)(res, cts)

    def _apply(self, res, lin):
        xs, outs = res[:self.num_in], res[self.num_in:]
        ts = [jax.numpy.zeros_like(x) for x in xs]
        for i, t in zip(self.lin, lin):
            ts[i] = t
        placed = self.rules.tangents(xs, outs, ts)
        return [jax.numpy.zeros_like(outs[j]) if placed[j] is None
                else placed[j] for j in self.outs]

    def _transpose(self, res, cts):
        xs, outs = res[:self.num_in], res[self.num_in:]
        full = [jax.numpy.zeros_like(o) for o in outs]
        for j, ct in zip(self.outs, cts):
            full[j] = ct
        needs = [i in self.lin for i in range(self.num_in)]
        placed = self.rules.cotangents(xs, outs, full, needs)
        return [jax.numpy.zeros_like(xs[i]) if placed[i] is None
                else placed[i] for i in self.lin]


def _tangent_primitive():
    """kcall_tangent, defined on first use."""
    global _primitive
    if _primitive is not None:
        return _primitive
    try:
        from jax.extend.core import Primitive
    except ImportError:  # jax before 0.4.36
        from jax.core import Primitive
    from jax.interpreters import ad, batching, mlir

    p = Primitive("kcall_tangent")
    p.multiple_results = True

    def impl(*args, linear):
        res, lin = linear.split(args)
        return linear.apply(res, lin)

    def abstract_eval(*args, linear):
        return [jax.core.ShapedArray(a.shape, a.dtype) for a in linear.avals]

    def jvp(primals, tangents, *, linear):
        res, lin = linear.split(primals)
        dres, dlin = linear.split(tangents)
        out = p.bind(*primals, linear=linear)
        dlin = [ad.instantiate_zeros(t) for t in dlin]
        dout = p.bind(*res, *dlin, linear=linear)
        if any(type(t) is not ad.Zero for t in dres):
            # The tangent map's own derivative in the call's inputs and
            # outputs: its jvp op's call, differentiated by that op's
            # rules.
            dres = [ad.instantiate_zeros(t) for t in dres]
            _, extra = jax.jvp(lambda *r: tuple(linear.apply(list(r), lin)),
                               tuple(res), tuple(dres))
            dout = [a + b for a, b in zip(dout, extra)]
        return out, dout

    def transpose(cts, *args, linear):
        res, lin = linear.split(args)
        if any(ad.is_undefined_primal(r) for r in res):
            raise TypeError(
                "kcall_tangent is linear in its tangents only, not in the "
                "call's inputs and outputs")
        cts = [ad.instantiate_zeros(ct) if type(ct) is ad.Zero else ct
               for ct in cts]
        return [None] * len(res) + list(linear.transpose(res, cts))

    def batch(args, dims, *, linear):
        size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
        res, lin = linear.split(list(args))
        rdims, ldims = linear.split(list(dims))
        # Residuals keep their batch axis (or none); tangents all get
        # one, in front.
        moved = []
        for t, d in zip(lin, ldims):
            if d is None:
                moved.append(jax.numpy.broadcast_to(t, (size,) + t.shape))
            else:
                moved.append(jax.numpy.moveaxis(t, d, 0))
        avals = [jax.ShapeDtypeStruct((size,) + tuple(a.shape), a.dtype)
                 for a in linear.avals]
        mapped = _Linear(linear.rules, linear.num_in, linear.num_out,
                         linear.lin, linear.outs, avals,
                         batched=linear.batched + ((rdims, size),))
        out = p.bind(*res, *moved, linear=mapped)
        return out, [0] * len(out)

    p.def_impl(impl)
    p.def_abstract_eval(abstract_eval)
    ad.primitive_jvps[p] = jvp
    ad.primitive_transposes[p] = transpose
    batching.primitive_batchers[p] = batch
    mlir.register_lowering(p, mlir.lower_fun(impl, multiple_results=True))
    _primitive = p
    return p


def differentiable(call, single, rules):
    """`call` (inputs -> one array, `single`, or a tuple) as a
    jax.custom_jvp whose tangents and cotangents come from `rules`
    (Rules), through kcall_tangent."""
    p = _tangent_primitive()

    @jax.custom_jvp
    def f(*xs):
        return call(*xs)

    def f_jvp(primals, tangents):
        # Through `f` itself, so that differentiating this rule again
        # (second derivatives) comes back to it.
        out = f(*primals)
        outs = [out] if single else list(out)
        # The float inputs JAX differentiates in: the others' tangents are
        # symbolic zeros, so neither the jvp op's result nor, transposed,
        # the gradient op's cotangents depend on them (a gradient op that
        # takes kc_needed then skips them).
        lin = [i for i, x in enumerate(primals)
               if _inexact(x) and not isinstance(tangents[i], _SymbolicZero)]
        floats = [j for j, o in enumerate(outs) if _inexact(o)]
        avals = [jax.ShapeDtypeStruct(outs[j].shape, outs[j].dtype)
                 for j in floats]
        linear = _Linear(rules, len(primals), len(outs), lin, floats, avals)
        touts = [_zeros_like(o) for o in outs]
        if floats:
            results = p.bind(*primals, *outs, *[tangents[i] for i in lin],
                             linear=linear)
            for j, t in zip(floats, results):
                touts[j] = t
        return out, touts[0] if single else tuple(touts)

    f.defjvp(f_jvp, symbolic_zeros=True)
    return f
