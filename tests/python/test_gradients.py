"""Gradients and forward-mode rules declared once in C
(kc_op_builder_set_gradient, kc_op_builder_set_jvp) and used by JAX
(jax.custom_jvp with kcall's transposable tangent) and PyTorch (autograd,
forward AD and torch.func): the example ops Add (with broadcasting),
MatMul, Softplus and Scale checked against finite differences in both
modes, to second order where the rule ops have rules of their own, and a
few SGD steps of a 2-layer MLP matched against the same loop
written in the framework alone. JAX and PyTorch come with `make test
EXTRAS="jax torch"`; each half skips, saying so, without its framework."""

import numpy as np
import pytest

import kcall


@pytest.fixture(scope="module")
def plugins(ops_plugin, scale_plugin):
    kcall.load_plugin(str(ops_plugin))
    kcall.load_plugin(str(scale_plugin))


def test_the_declarations_are_read_back(plugins):
    add = kcall.ops.Add.definition["gradient"]
    assert add == {"op": "AddGrad",
                   "spec": "AddGrad(x, y, grad(z)) -> (grad(x), grad(y))",
                   "args": [("input", 0), ("input", 1), ("cotangent", 0)],
                   "results": [0, 1]}
    assert kcall.ops.Scale.definition["gradient"]["spec"] == \
        "Scale(grad(y)) -> grad(x)"
    assert kcall.ops.Concat.definition["gradient"] is None
    assert kcall.ops.Scale.definition["defaults"] == {"factor": 1.0}
    assert "gradient: AddGrad(x, y, grad(z)) -> (grad(x), grad(y))" in \
        kcall.ops.Add.__doc__
    assert kcall.ops.MatMul.definition["jvp"] == {
        "op": "MatMulJvp",
        "spec": "MatMulJvp(a, b, tangent(a), tangent(b)) -> tangent(product)",
        "args": [("input", 0), ("input", 1), ("tangent", 0), ("tangent", 1)],
        "results": [0]}
    assert kcall.ops.Concat.definition["jvp"] is None
    assert "jvp: Add(tangent(x), tangent(y)) -> tangent(z)" in \
        kcall.ops.Add.__doc__


def test_the_gradient_ops_compute_what_they_declare(plugins):
    """Eagerly, without a framework: AddGrad sums over broadcast dims,
    MatMulGrad is the two products, SoftplusGrad is dy * logistic(x)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4))
    y = rng.standard_normal((1, 4))
    dz = rng.standard_normal((3, 4))
    dx, dy = kcall.ops.AddGrad(x, y, dz)
    np.testing.assert_allclose(np.asarray(dx), dz)
    np.testing.assert_allclose(np.asarray(dy), dz.sum(0, keepdims=True))
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal((4, 5)).astype(np.float32)
    dp = rng.standard_normal((3, 5)).astype(np.float32)
    da, db = kcall.ops.MatMulGrad(a, b, dp)
    np.testing.assert_allclose(np.asarray(da), dp @ b.T, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(db), a.T @ dp, rtol=1e-5)
    g = kcall.ops.SoftplusGrad(x, dz)
    np.testing.assert_allclose(np.asarray(g), dz / (1 + np.exp(-x)))


def test_a_target_declaration_is_read_back(plugins, xla_plugin):
    kcall.load_plugin(str(xla_plugin))
    assert kcall._core.target_info("scale", "host")["gradient"] == {
        "op": "scale", "spec": "scale(grad(result0)) -> grad(arg0)",
        "args": [("cotangent", 0)], "results": [0]}
    assert kcall._core.target_info("rms_norm", "host")["gradient"] is None


# ---- JAX ---------------------------------------------------------------

@pytest.fixture(scope="module")
def jx(plugins):
    jax = pytest.importorskip(
        "jax", reason="JAX is not installed: `make test EXTRAS=jax` "
        "installs it")
    import kcall.jax  # noqa: F401
    return jax


def _jax_call(name, **attrs):
    import kcall.jax
    return lambda *xs: kcall.jax.call_op(name, *xs, **attrs)


def test_jax_check_grads(jx):
    from jax.test_util import check_grads
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 4))
    y = rng.standard_normal((4,))
    both = ["fwd", "rev"]
    with _x64(jx):
        check_grads(_jax_call("Add"), (x, y), order=2, modes=both)
        check_grads(_jax_call("Softplus"), (x,), order=2, modes=both)
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal((4, 5)).astype(np.float32)
    check_grads(_jax_call("MatMul"), (a, b), order=1, modes=both,
                atol=2e-2, rtol=2e-2)
    s = rng.standard_normal((5,)).astype(np.float32)
    check_grads(_jax_call("Scale", factor=3.0), (s,), order=2,
                modes=both, atol=1e-2, rtol=1e-2)


def test_jax_forward_mode_jacobians_and_hessians(jx):
    """jax.jvp, jacfwd and hessian (forward over reverse) through the
    declared rules, eager, jitted and under vmap, against the closed
    forms: softplus' = s, softplus'' = s (1 - s) with s the logistic
    function; MatMul's tangent ta b + a tb."""
    jnp = jx.numpy
    with _x64(jx):
        x = np.array([-1.5, 0.25, 2.0])
        sp = _jax_call("Softplus")
        s = 1 / (1 + np.exp(-x))
        _, t = jx.jvp(sp, (x,), (np.ones(3),))
        np.testing.assert_allclose(t, s, rtol=1e-12)
        np.testing.assert_allclose(jx.jacfwd(sp)(x), np.diag(s), rtol=1e-12)
        np.testing.assert_allclose(
            jx.hessian(lambda v: sp(v).sum())(x), np.diag(s * (1 - s)),
            rtol=1e-12)
        _, t = jx.jit(lambda v, dv: jx.jvp(sp, (v,), (dv,)))(x, 2 * x)
        np.testing.assert_allclose(t, 2 * x * s, rtol=1e-12)
        batch = np.stack([x, -x])
        tb = jx.vmap(lambda v: jx.jvp(sp, (v,), (jnp.ones(3),))[1])(batch)
        np.testing.assert_allclose(tb[1], 1 / (1 + np.exp(x)), rtol=1e-12)
    rng = np.random.default_rng(2)
    a, ta = (rng.standard_normal((3, 4)).astype(np.float32) for _ in "12")
    b, tb = (rng.standard_normal((4, 5)).astype(np.float32) for _ in "12")
    _, t = jx.jvp(_jax_call("MatMul"), (a, b), (ta, tb))
    np.testing.assert_allclose(t, ta @ b + a @ tb, rtol=1e-5, atol=1e-5)


def test_jax_refuses_a_mode_without_its_rule_naming_the_op(jx):
    """Concat declares neither rule: each mode is refused naming it, not
    run with JAX's generic error."""
    x = np.ones(3, np.float32)

    def concat(v):
        return _jax_call("Concat")([v, v])
    with pytest.raises(TypeError, match="kcall op 'Concat' declares no "
                       "forward-mode rule"):
        jx.jvp(concat, (x,), (x,))
    with pytest.raises(TypeError, match="kcall op 'Concat' declares no "
                       "gradient"):
        jx.grad(lambda v: concat(v).sum())(x)


class _x64:
    def __init__(self, jax):
        self.jax = jax

    def __enter__(self):
        self.old = self.jax.config.jax_enable_x64
        self.jax.config.update("jax_enable_x64", True)

    def __exit__(self, *exc):
        self.jax.config.update("jax_enable_x64", self.old)


def test_jax_grad_forwards_attributes_and_jits(jx):
    """Scale's gradient op gets the forward call's factor (given, else its
    default); the backward pass runs under jit."""
    import jax.numpy as jnp
    x = np.arange(4, dtype=np.float32)
    scale = _jax_call("Scale", factor=2.5)
    g = jx.jit(jx.grad(lambda x: jnp.sum(scale(x))))(x)
    np.testing.assert_allclose(np.asarray(g), np.full(4, 2.5))
    g = jx.grad(lambda x: jnp.sum(_jax_call("Scale")(x)))(x)
    np.testing.assert_allclose(np.asarray(g), np.ones(4))


def test_jax_refuses_an_op_without_a_gradient(jx):
    import jax.numpy as jnp
    x = np.ones((2, 2), np.float32)
    with pytest.raises(TypeError, match="kcall op 'Concat' declares no "
                       "gradient"):
        jx.grad(lambda x: jnp.sum(_jax_call("Concat")([x, x])))(x)
    # Without differentiation the op still runs.
    out = _jax_call("Concat")([x, x])
    assert out.shape == (4, 2)


def _jax_target(name, **attrs):
    import kcall.jax
    return lambda x: kcall.jax.call_target(
        name, jx_struct(x), x, **attrs)


def jx_struct(x):
    import jax
    return jax.ShapeDtypeStruct(x.shape, x.dtype)


def test_jax_target_gradients(jx):
    """The typed target "scale" declares itself as its gradient: checked to
    second order, under jit, with the factor forwarded."""
    from jax.test_util import check_grads
    import jax.numpy as jnp
    s = np.random.default_rng(2).standard_normal((5,)).astype(np.float32)
    scale = _jax_target("scale", factor=np.float32(3))
    check_grads(scale, (s,), order=2, modes=["rev"], atol=1e-2, rtol=1e-2)
    g = jx.jit(jx.grad(lambda x: jnp.sum(scale(x) ** 2)))(s)
    np.testing.assert_allclose(np.asarray(g), 18 * s, rtol=1e-5)
    # Under vmap, per example.
    per = jx.vmap(jx.grad(lambda x: jnp.sum(scale(x))))(np.ones((2, 3),
                                                          np.float32))
    np.testing.assert_allclose(np.asarray(per), np.full((2, 3), 3.0))


def test_jax_refuses_a_target_without_a_gradient(jx, xla_plugin):
    import jax.numpy as jnp
    import kcall.jax
    kcall.load_plugin(str(xla_plugin))
    x = np.ones((2, 4), np.float32)

    def rms(x):
        return kcall.jax.call_target("rms_norm", jx_struct(x), x,
                                     eps=np.float32(1e-5))
    with pytest.raises(TypeError, match="kcall target 'rms_norm' declares "
                       "no gradient"):
        jx.grad(lambda x: jnp.sum(rms(x)))(x)
    with pytest.raises(TypeError, match="kcall target 'rms_norm' has no "
                       "forward-mode rule"):
        jx.jvp(rms, (x,), (x,))
    # Without differentiation the target still runs.
    np.testing.assert_allclose(np.asarray(rms(x)), np.ones((2, 4)),
                               rtol=1e-4)


def _mlp_data():
    rng = np.random.default_rng(2)
    return (rng.standard_normal((16, 8)).astype(np.float32),
            rng.standard_normal((16, 1)).astype(np.float32),
            (rng.standard_normal((8, 32)) * 0.3).astype(np.float32),
            np.zeros((32,), np.float32),
            (rng.standard_normal((32, 1)) * 0.3).astype(np.float32))


def test_jax_mlp_training_matches_pure_jax(jx):
    """Five SGD steps of a 2-layer MLP: MatMul, Add and Softplus from
    kcall, against jnp's matmul, + and jax.nn.softplus."""
    import jax.numpy as jnp

    def loss(params, x, t, mm, add, act):
        w1, b1, w2 = params
        h = act(add(mm(x, w1), b1))
        return jnp.mean((mm(h, w2) - t) ** 2)

    kc = (_jax_call("MatMul"), _jax_call("Add"), _jax_call("Softplus"))
    ref = (jnp.matmul, jnp.add, jx.nn.softplus)
    x, t, w1, b1, w2 = _mlp_data()
    runs = []
    for fns in (kc, ref):
        step = jx.jit(jx.value_and_grad(lambda p: loss(p, x, t, *fns)))
        params, losses = (w1, b1, w2), []
        for _ in range(5):
            value, grads = step(params)
            params = tuple(p - 0.02 * g for p, g in zip(params, grads))
            losses.append(float(value))
        runs.append((losses, params))
    np.testing.assert_allclose(runs[0][0], runs[1][0], rtol=1e-4)
    assert runs[0][0][-1] < runs[0][0][0]
    for p, q in zip(runs[0][1], runs[1][1]):
        np.testing.assert_allclose(np.asarray(p), np.asarray(q), rtol=1e-3,
                                   atol=1e-5)


# ---- PyTorch -----------------------------------------------------------

@pytest.fixture(scope="module")
def tops(plugins):
    torch = pytest.importorskip(
        "torch", reason="PyTorch is not installed: `make test EXTRAS=torch` "
        "installs it")
    import kcall.torch
    names = ("Add", "MatMul", "Softplus", "Scale", "Concat", "AddGrad",
             "MatMulGrad", "SoftplusGrad", "SoftplusGradGrad")
    return torch, {n: kcall.torch.register_op(n) for n in names}


def test_torch_gradcheck(tops):
    torch, ops = tops
    d = dict(dtype=torch.float64, requires_grad=True)
    x, y = torch.rand(3, 4, **d), torch.rand(4, **d)
    assert torch.autograd.gradcheck(ops["Add"], (x, y))
    assert torch.autograd.gradgradcheck(ops["Add"], (x, y))
    assert torch.autograd.gradcheck(ops["Softplus"], (x,))
    assert torch.autograd.gradgradcheck(ops["Softplus"], (x,))
    a = torch.rand(3, 4, requires_grad=True)
    b = torch.rand(4, 5, requires_grad=True)
    assert torch.autograd.gradcheck(ops["MatMul"], (a, b), eps=1e-2,
                                    atol=1e-2, rtol=1e-2)
    s = torch.rand(5, requires_grad=True)
    assert torch.autograd.gradcheck(lambda s: ops["Scale"](s, factor=3.0),
                                    (s,), eps=1e-2, atol=1e-2)


def test_torch_parameters_and_no_grad(tops):
    """An nn.Parameter goes in; under no_grad and inference_mode the
    forward runs without a graph."""
    torch, ops = tops
    w = torch.nn.Parameter(torch.ones(3))
    out = ops["Scale"](w, factor=2.0)
    assert out.requires_grad
    out.sum().backward()
    assert torch.equal(w.grad, torch.full((3,), 2.0))
    with torch.no_grad():
        assert not ops["Add"](w, w).requires_grad
    with torch.inference_mode():
        assert torch.equal(ops["Add"](w, w), torch.full((3,), 2.0))


def test_torch_refuses_backward_without_a_gradient(tops):
    torch, ops = tops
    x = torch.ones(2, 2, requires_grad=True)
    out = ops["Concat"]([x, x])  # the forward runs
    assert out.shape == (4, 2)
    with pytest.raises(RuntimeError, match="kcall op 'Concat'.*declares no "
                       "gradient"):
        out.sum().backward()


def test_torch_mlp_training_matches_pure_torch(tops):
    torch, ops = tops
    x, t, w1, b1, w2 = (torch.from_numpy(a) for a in _mlp_data())
    impls = ((ops["MatMul"], ops["Add"], ops["Softplus"]),
             (torch.matmul, torch.add, torch.nn.functional.softplus))
    runs = []
    for mm, add, act in impls:
        params = [p.clone().requires_grad_(True) for p in (w1, b1, w2)]
        opt = torch.optim.SGD(params, lr=0.02)
        losses = []
        for _ in range(5):
            opt.zero_grad()
            h = act(add(mm(x, params[0]), params[1]))
            loss = ((mm(h, params[2]) - t) ** 2).mean()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        runs.append((losses, params))
    np.testing.assert_allclose(runs[0][0], runs[1][0], rtol=1e-4)
    assert runs[0][0][-1] < runs[0][0][0]
    for p, q in zip(runs[0][1], runs[1][1]):
        torch.testing.assert_close(p, q, rtol=1e-3, atol=1e-5)


def test_torch_opcheck_with_gradients(tops):
    torch, ops = tops
    from torch.library import opcheck
    d = dict(dtype=torch.float64, requires_grad=True)
    opcheck(ops["Add"], (torch.rand(3, 4, **d), torch.rand(4, **d)))
    opcheck(ops["Softplus"], (torch.rand(5, **d),))
    opcheck(ops["MatMul"], (torch.rand(2, 3, requires_grad=True),
                            torch.rand(3, 4, requires_grad=True)))
    opcheck(ops["Scale"], (torch.rand(4, requires_grad=True),),
            {"factor": 2.0})


def test_torch_forward_mode_through_the_declared_rules(tops):
    """Forward-mode AD (dual tensors, gradcheck's forward check) runs the
    declared jvp ops, on native kernels and on the Python kernel path."""
    torch, ops = tops
    import torch.autograd.forward_ad as fwad
    d = dict(dtype=torch.float64)
    x, t = torch.rand(3, 4, **d), torch.rand(3, 4, **d)
    y, ty = torch.rand(4, **d), torch.rand(4, **d)
    with fwad.dual_level():
        out = ops["Softplus"](fwad.make_dual(x, t))
        torch.testing.assert_close(fwad.unpack_dual(out).tangent,
                                   t * torch.sigmoid(x))
        # Only y carries a tangent: x's is taken as zero.
        out = ops["Add"](x, fwad.make_dual(y, ty))
        torch.testing.assert_close(fwad.unpack_dual(out).tangent,
                                   ty.expand(3, 4))
    r = dict(dtype=torch.float64, requires_grad=True)
    x, y = torch.rand(3, 4, **r), torch.rand(4, **r)
    for name, args in (("Add", (x, y)), ("Softplus", (x,))):
        assert torch.autograd.gradcheck(ops[name], args,
                                        check_forward_ad=True)
    a = torch.rand(3, 4, requires_grad=True)
    b = torch.rand(4, 5, requires_grad=True)
    assert torch.autograd.gradcheck(ops["MatMul"], (a, b), eps=1e-2,
                                    atol=1e-2, rtol=1e-2,
                                    check_forward_ad=True)
    s = torch.rand(5, requires_grad=True)
    assert torch.autograd.gradcheck(lambda s: ops["Scale"](s, factor=3.0),
                                    (s,), eps=1e-2, atol=1e-2,
                                    check_forward_ad=True)
    # Off dual levels, and on plain tensors inside one, nothing changes.
    with fwad.dual_level():
        torch.testing.assert_close(ops["Softplus"](x.detach()),
                                   torch.nn.functional.softplus(x.detach()))


def test_torch_forward_mode_is_refused_without_a_rule(tops):
    """Concat (a list input: the Python kernel path) declares no jvp
    rule: forward mode is refused naming it, never a zero tangent."""
    torch, ops = tops
    import torch.autograd.forward_ad as fwad
    x = torch.rand(4, dtype=torch.float64)
    with fwad.dual_level():
        with pytest.raises(RuntimeError, match="kcall op 'Concat'.*declares "
                           "no forward-mode rule"):
            ops["Concat"]([fwad.make_dual(x, torch.ones(4, **_f64(torch))),
                           x])
    with pytest.raises(RuntimeError, match="kcall op 'Concat'.*declares no "
                       "forward-mode rule"):
        torch.func.jvp(lambda v: ops["Concat"]([v, v]), (x,), (x,))


def _f64(torch):
    return dict(dtype=torch.float64)


def test_torch_func_transforms_through_the_declared_rules(tops):
    """torch.func's transforms meet the op's rules above the dispatcher:
    grad, vjp, jacrev (the gradient), jvp, jacfwd (the jvp rule), hessian
    (forward over reverse: SoftplusGrad's jvp rule) and vmap."""
    torch, ops = tops
    f = ops["Softplus"]
    x = torch.tensor([-1.5, 0.25, 2.0], dtype=torch.float64)
    s = torch.sigmoid(x)
    fn = torch.func
    torch.testing.assert_close(fn.grad(lambda v: f(v).sum())(x), s)
    out, vjp = fn.vjp(f, x)
    torch.testing.assert_close(vjp(torch.ones_like(x))[0], s)
    torch.testing.assert_close(fn.jacrev(f)(x), torch.diag(s))
    _, t = fn.jvp(f, (x,), (2 * x,))
    torch.testing.assert_close(t, 2 * x * s)
    torch.testing.assert_close(fn.jacfwd(f)(x), torch.diag(s))
    torch.testing.assert_close(fn.hessian(lambda v: f(v).sum())(x),
                               torch.diag(s * (1 - s)))
    torch.testing.assert_close(fn.vmap(f)(x.reshape(3, 1)).reshape(3),
                               torch.nn.functional.softplus(x))
    # Per-example gradients: vmap over grad.
    batch = torch.stack([x, -x])
    per = fn.vmap(fn.grad(lambda v: f(v).sum()))(batch)
    torch.testing.assert_close(per, torch.sigmoid(batch))
    # Two inputs, one broadcast: Add's gradient sums it back.
    y = torch.rand(3, dtype=torch.float64)
    X = torch.rand(2, 3, dtype=torch.float64)
    gx, gy = fn.grad(lambda a, b: ops["Add"](a, b).sum(),
                     argnums=(0, 1))(X, y)
    torch.testing.assert_close(gy, torch.full((3,), 2.0, **_f64(torch)))
    torch.testing.assert_close(gx, torch.ones(2, 3, **_f64(torch)))


@pytest.fixture(scope="module")
def bad_gradient(fixture_dir):
    """kt_bad.Square, whose gradient op returns [2] + x's shape."""
    kcall.load_plugin(str(fixture_dir / "kt_plugin_bad_gradient.so"))
    return "kt_bad.Square"


BAD_SHAPE = ("gradient op 'kt_bad.SquareGrad' of op 'kt_bad.Square' returned "
             "a float32 tensor of shape \\[2, 3\\] for input 0, which is a "
             "float32 tensor of shape \\[3\\]")


def test_torch_refuses_a_gradient_of_the_wrong_shape(bad_gradient):
    """torch would sum a [2, 3] gradient back into x's [3] one: x.grad
    twice the truth."""
    torch = pytest.importorskip(
        "torch", reason="PyTorch is not installed: `make test EXTRAS=torch` "
        "installs it")
    import kcall.torch
    square = kcall.torch.register_op(bad_gradient)
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    torch.testing.assert_close(square(x), x.detach() ** 2)
    with pytest.raises(ValueError, match=BAD_SHAPE):
        square(x).sum().backward()
    assert x.grad is None


def test_jax_refuses_a_gradient_of_the_wrong_shape(bad_gradient):
    jax = pytest.importorskip(
        "jax", reason="JAX is not installed: `make test EXTRAS=jax` "
        "installs it")
    import kcall.jax
    x = np.array([1.0, 2.0, 3.0], np.float32)

    def loss(v):
        return kcall.jax.call_op(bad_gradient, v).sum()
    with pytest.raises(ValueError, match=BAD_SHAPE):
        jax.grad(loss)(x)
    with pytest.raises(ValueError, match=BAD_SHAPE):
        jax.jit(jax.grad(loss))(x)


BAD_TANGENT = ("jvp op 'kt_bad.SquareGrad' of op 'kt_bad.Square' returned "
               "a float32 tensor of shape \\[2, 3\\] for output 0, which is "
               "a float32 tensor of shape \\[3\\]: a tangent has its "
               "output's shape and dtype")


def test_a_tangent_of_the_wrong_shape_is_refused(bad_gradient):
    """The forward-mode half: a jvp op whose result is not its output's
    shape is refused naming both ops, in torch's forward AD, torch.func
    and jax.jvp (eager and jitted)."""
    x = np.array([1.0, 2.0, 3.0], np.float32)
    torch = _optional("torch")
    if torch is not None:
        import kcall.torch
        square = kcall.torch.register_op(bad_gradient)
        import torch.autograd.forward_ad as fwad
        # Raised inside the op's kernel, the ValueError reaches the caller
        # through torch's dispatcher, which makes it a RuntimeError that
        # keeps its text.
        with fwad.dual_level():
            with pytest.raises((ValueError, RuntimeError), match=BAD_TANGENT):
                square(fwad.make_dual(torch.from_numpy(x),
                                      torch.ones(3)))
        with pytest.raises((ValueError, RuntimeError), match=BAD_TANGENT):
            torch.func.jvp(square, (torch.from_numpy(x),), (torch.ones(3),))
    jax = _optional("jax")
    if jax is not None:
        import kcall.jax

        def f(v):
            return kcall.jax.call_op(bad_gradient, v)
        with pytest.raises(ValueError, match=BAD_TANGENT):
            jax.jvp(f, (x,), (np.ones(3, np.float32),))
        with pytest.raises(ValueError, match=BAD_TANGENT):
            jax.jit(lambda v, t: jax.jvp(f, (v,), (t,)))(
                x, np.ones(3, np.float32))
    if torch is None and jax is None:
        pytest.skip("neither PyTorch nor JAX is installed: `make test "
                    "EXTRAS=\"jax torch\"` installs them")


def _optional(name):
    try:
        return __import__(name)
    except ImportError:
        return None


def test_a_gradient_of_the_wrong_dtype_is_refused(plugins):
    """The dtype half of the check, on the result a gradient op gives."""
    from kcall import _gradient
    x = np.ones(3, np.float32)
    plan = _gradient.Call("Softplus", kcall.ops.Softplus.definition, [x],
                          {}, 1)
    assert plan.input_cotangents([np.ones(3, np.float32)], [x])[0].shape \
        == (3,)
    with pytest.raises(ValueError, match=(
            "gradient op 'SoftplusGrad' of op 'Softplus' returned a float64 "
            "tensor of shape \\[3\\] for input 0, which is a float32 tensor")):
        plan.input_cotangents([np.ones(3, np.float64)], [x])
