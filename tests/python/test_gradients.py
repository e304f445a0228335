"""Gradients declared once in C (kc_op_builder_set_gradient) and used by
JAX (jax.custom_vjp) and PyTorch (autograd): the example ops Add (with
broadcasting), MatMul, Softplus and Scale checked against finite
differences, to second order where the gradient op has a gradient of its
own, and a few SGD steps of a 2-layer MLP matched against the same loop
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
    with _x64(jx):
        check_grads(_jax_call("Add"), (x, y), order=2, modes=["rev"])
        check_grads(_jax_call("Softplus"), (x,), order=2, modes=["rev"])
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal((4, 5)).astype(np.float32)
    check_grads(_jax_call("MatMul"), (a, b), order=1, modes=["rev"],
                atol=2e-2, rtol=2e-2)
    s = rng.standard_normal((5,)).astype(np.float32)
    check_grads(_jax_call("Scale", factor=3.0), (s,), order=2,
                modes=["rev"], atol=1e-2, rtol=1e-2)


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


def test_torch_forward_mode_is_refused_naming_the_op(tops):
    """kcall ops declare reverse-mode gradients only: forward mode is
    refused on every path (native kernels, and the Python kernel of an op
    with a list input), never given a zero or missing tangent."""
    torch, ops = tops
    import torch.autograd.forward_ad as fwad
    x = torch.rand(4, dtype=torch.float64)
    t = torch.ones(4, dtype=torch.float64)
    for name, call in (("Softplus", lambda v: ops["Softplus"](v)),
                       ("Add", lambda v: ops["Add"](v, v)),
                       ("Concat", lambda v: ops["Concat"]([v, v]))):
        with fwad.dual_level():
            with pytest.raises(RuntimeError, match=f"kcall op '{name}'.*no "
                               "forward-mode derivative"):
                call(fwad.make_dual(x, t))
    with pytest.raises(RuntimeError, match="kcall op 'Softplus'"):
        torch.autograd.gradcheck(ops["Softplus"], (x.requires_grad_(),),
                                 check_forward_ad=True)
    # Off dual levels, and on plain tensors inside one, nothing changes.
    with fwad.dual_level():
        torch.testing.assert_close(ops["Softplus"](x.detach()),
                                   torch.nn.functional.softplus(x.detach()))


@pytest.mark.parametrize("transform", ["grad", "vjp", "jacrev", "jvp",
                                       "jacfwd", "hessian"])
def test_torch_func_transforms_are_refused_naming_the_op(tops, transform):
    torch, ops = tops
    f = ops["Softplus"]
    x = torch.rand(3, dtype=torch.float64)
    calls = {
        "grad": lambda: torch.func.grad(lambda v: f(v).sum())(x),
        "vjp": lambda: torch.func.vjp(f, x),
        "jacrev": lambda: torch.func.jacrev(f)(x),
        "jvp": lambda: torch.func.jvp(f, (x,), (torch.ones_like(x),)),
        "jacfwd": lambda: torch.func.jacfwd(f)(x),
        "hessian": lambda: torch.func.hessian(lambda v: f(v).sum())(x),
    }
    with pytest.raises(RuntimeError, match="kcall op 'Softplus'"):
        calls[transform]()
    # Without a gradient to take, a transform runs the op as it is.
    out = torch.func.vmap(f)(x.reshape(3, 1))
    torch.testing.assert_close(out.reshape(3),
                               torch.nn.functional.softplus(x))


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
