"""kcall's built-in ops (kcall/builtin.h) from Python: kcall.ops.kc.NAME
against NumPy, and through kcall.torch and kcall.jax with their declared
gradients and forward-mode rules against the frameworks' own ops. The
PyTorch and JAX parts skip without those frameworks."""

import numpy as np
import pytest

import kcall

RNG = np.random.default_rng(7)


def rand(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def test_registered_on_import_and_reached_through_their_namespace():
    names = kcall.list_ops("kc.")
    for name in ("kc.MatMul", "kc.Add", "kc.Relu", "kc.Sum", "kc.MatMulGrad"):
        assert name in names
    assert "MatMul" in dir(kcall.ops.kc)
    assert kcall.ops.kc.MatMul is getattr(kcall.ops, "kc.MatMul")
    assert "gradient" in kcall.ops.kc.MatMul.definition
    with pytest.raises(AttributeError, match="kc.NoSuchOp"):
        kcall.ops.kc.NoSuchOp
    kcall._core.builtin_ops_register()  # again: nothing


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("a_shape,b_shape,ta,tb", [
    ((5, 7), (7, 3), False, False),
    ((7, 5), (7, 3), True, False),
    ((5, 7), (3, 7), False, True),
    ((4, 5, 7), (7, 3), False, False),
    ((2, 1, 5, 7), (3, 7, 6), False, False),
    ((64, 130), (130, 33), False, False),
])
def test_matmul_matches_numpy(dtype, a_shape, b_shape, ta, tb):
    a, b = rand(*a_shape, dtype=dtype), rand(*b_shape, dtype=dtype)
    want = np.matmul(np.swapaxes(a, -1, -2) if ta else a,
                     np.swapaxes(b, -1, -2) if tb else b)
    got = np.asarray(kcall.ops.kc.MatMul(a, b, transpose_a=ta, transpose_b=tb))
    assert got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32
                               else 1e-12, atol=1e-5)


@pytest.mark.parametrize("name,fn", [
    ("Add", np.add), ("Sub", np.subtract), ("Mul", np.multiply),
    ("Div", np.divide), ("Maximum", np.maximum), ("Minimum", np.minimum)])
def test_binary_ops_broadcast_as_numpy(name, fn):
    x, y = rand(3, 1, 4), rand(5, 1) + 3
    np.testing.assert_allclose(np.asarray(getattr(kcall.ops.kc, name)(x, y)),
                               fn(x, y), rtol=1e-15)


@pytest.mark.parametrize("name,fn", [
    ("Neg", np.negative), ("Exp", np.exp), ("Tanh", np.tanh),
    ("Sigmoid", lambda x: 1 / (1 + np.exp(-x))),
    ("Relu", lambda x: np.maximum(x, 0)),
    ("Softplus", lambda x: np.logaddexp(0, x)),
    ("Log", lambda x: np.log(np.abs(x) + 0.5))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unary_ops_match_numpy(name, fn, dtype):
    x = rand(1000, dtype=dtype)
    if name == "Log":
        got = kcall.ops.kc.Log(np.abs(x) + dtype(0.5))
    else:
        got = getattr(kcall.ops.kc, name)(x)
    np.testing.assert_allclose(np.asarray(got), fn(x).astype(dtype),
                               rtol=4e-6 if dtype == np.float32 else 1e-14,
                               atol=1e-7)


def test_sum_and_mean_over_axes():
    x = rand(2, 3, 4)
    np.testing.assert_allclose(np.asarray(kcall.ops.kc.Sum(x, axes=[0, -1])),
                               x.sum(axis=(0, 2)), rtol=1e-14)
    np.testing.assert_allclose(
        np.asarray(kcall.ops.kc.Mean(x, axes=[1], keepdims=True)),
        x.mean(axis=1, keepdims=True), rtol=1e-14)
    # Long rows and wide columns: split across the pool, several runs
    # of columns each.
    w = rand(7, 5000, 3, dtype=np.float32)
    for axes in ([0], [1], [2], [1, 2], [0, 1]):
        np.testing.assert_allclose(np.asarray(kcall.ops.kc.Sum(w, axes=axes)),
                                   w.astype(np.float64).sum(axis=tuple(axes)),
                                   rtol=1e-5, atol=1e-4)


def test_errors_name_the_op_and_what_did_not_fit():
    with pytest.raises(kcall.InvalidArgumentError, match="contracted dims"):
        kcall.ops.kc.MatMul(np.ones((2, 3)), np.ones((4, 2)))
    with pytest.raises(kcall.InvalidArgumentError, match="kc.Add"):
        kcall.ops.kc.Add(np.ones(3), np.ones(4))
    with pytest.raises(kcall.Error, match="i32|int32|T"):
        kcall.ops.kc.Exp(np.ones(3, np.int32))


# ---- PyTorch ---------------------------------------------------------------


@pytest.fixture(scope="module")
def torch_ops():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed: "
                                "`make test EXTRAS=torch` installs it")
    import kcall.torch
    names = ["MatMul", "Add", "Sub", "Mul", "Div", "Maximum", "Minimum",
             "Neg", "Exp", "Log", "Tanh", "Sigmoid", "Relu", "Softplus", "Sum",
             "Mean"]
    return torch, {n: kcall.torch.register_op("kc." + n) for n in names}


def test_torch_gradients_and_forward_mode(torch_ops):
    torch, ops = torch_ops
    f64 = dict(dtype=torch.float64, requires_grad=True)
    a, b = torch.randn(3, 4, 5, **f64), torch.randn(5, 2, **f64)
    for ta, tb in [(False, False), (True, True)]:
        aa = a.detach().transpose(-1, -2).clone().requires_grad_() if ta else a
        bb = b.detach().t().clone().requires_grad_() if tb else b

        def mm(x, y, ta=ta, tb=tb):
            return ops["MatMul"](x, y, transpose_a=ta, transpose_b=tb)
        assert torch.autograd.gradcheck(mm, (aa, bb))
        assert torch.autograd.forward_ad is not None
        assert torch.autograd.gradcheck(mm, (aa, bb), check_forward_ad=True,
                                        check_backward_ad=False,
                                        check_undefined_grad=False,
                                        check_batched_grad=False)
    x, y = torch.randn(3, 4, **f64), torch.randn(4, **f64)
    for name in ("Add", "Sub", "Mul", "Div", "Maximum", "Minimum"):
        assert torch.autograd.gradcheck(ops[name], (x, y)), name
        assert torch.autograd.gradcheck(ops[name], (x, y), check_forward_ad=True,
                                        check_backward_ad=False,
                                        check_undefined_grad=False,
                                        check_batched_grad=False), name
    assert torch.autograd.gradgradcheck(ops["Add"], (x, y))
    pos = (torch.rand(3, 4, dtype=torch.float64) + 0.5).requires_grad_()
    forward = dict(check_forward_ad=True, check_backward_ad=False,
                   check_undefined_grad=False, check_batched_grad=False)
    for name in ("Neg", "Exp", "Log", "Tanh", "Sigmoid", "Relu", "Softplus"):
        arg = (pos if name == "Log" else x,)
        assert torch.autograd.gradcheck(ops[name], arg), name
        assert torch.autograd.gradcheck(ops[name], arg, **forward), name
    for name, attrs in (("Sum", dict(axes=[0])),
                        ("Mean", dict(axes=[-1], keepdims=True))):
        def reduce(t, name=name, attrs=attrs):
            return ops[name](t, **attrs)
        assert torch.autograd.gradcheck(reduce, (x,)), name
        assert torch.autograd.gradcheck(reduce, (x,), **forward), name


def test_torch_mlp_training_step_matches_torch(torch_ops):
    """A two-layer MLP's loss and gradients through the built-in ops equal
    PyTorch's own."""
    torch, ops = torch_ops
    g = torch.Generator().manual_seed(0)
    x = torch.randn(16, 8, generator=g)
    w1 = torch.randn(8, 32, generator=g, requires_grad=True)
    b1 = torch.zeros(32, requires_grad=True)
    w2 = torch.randn(32, 4, generator=g, requires_grad=True)

    def loss_kcall():
        h = ops["Relu"](ops["Add"](ops["MatMul"](x, w1), b1))
        return ops["Mean"](ops["Mul"](ops["MatMul"](h, w2), ops["MatMul"](h, w2)),
                           axes=[0, 1])

    def loss_torch():
        h = torch.relu(x @ w1 + b1)
        return ((h @ w2) ** 2).mean()

    got = torch.autograd.grad(loss_kcall(), (w1, b1, w2))
    want = torch.autograd.grad(loss_torch(), (w1, b1, w2))
    for gk, gt in zip(got, want):
        torch.testing.assert_close(gk, gt, rtol=1e-4, atol=1e-5)


# ---- JAX -------------------------------------------------------------------


def test_jax_grad_jvp_and_vmap():
    jax = pytest.importorskip("jax", reason="JAX is not installed: `make test "
                              "EXTRAS=jax` installs it")
    import jax.numpy as jnp
    import kcall.jax
    jax.config.update("jax_enable_x64", True)
    try:
        a, b = rand(4, 5), rand(5, 3)

        def f(a, b):
            p = kcall.jax.call_op("kc.MatMul", a, b)
            return jnp.sum(kcall.jax.call_op("kc.Tanh", p))

        def ref(a, b):
            return jnp.sum(jnp.tanh(a @ b))
        for ga, gr in zip(jax.grad(f, (0, 1))(a, b), jax.grad(ref, (0, 1))(a, b)):
            np.testing.assert_allclose(ga, gr, rtol=1e-12)
        u, v = rand(4, 5), rand(5, 3)
        np.testing.assert_allclose(jax.jvp(f, (a, b), (u, v))[1],
                                   jax.jvp(ref, (a, b), (u, v))[1], rtol=1e-12)
        batch = rand(6, 4, 5)
        np.testing.assert_allclose(
            jax.vmap(lambda t: kcall.jax.call_op("kc.MatMul", t, b))(batch),
            batch @ b, rtol=1e-12)
    finally:
        jax.config.update("jax_enable_x64", False)


def test_torch_skips_the_cotangents_nobody_needs(torch_ops):
    """kcall.torch tells kc.MatMulGrad (kc_needed) which cotangents the
    inputs that require grad take; the others are not computed, and the
    gradients that are stay right."""
    torch, ops = torch_ops
    x = torch.randn(5, 7, dtype=torch.float64)
    w = torch.randn(7, 3, dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(ops["MatMul"](x, w).sum(), w)
    torch.testing.assert_close(g, x.t() @ torch.ones(5, 3, dtype=torch.float64))
    assert torch.autograd.gradcheck(lambda t: ops["MatMul"](x, t), (w,))
    grad_op = kcall.ops.kc.MatMulGrad
    dp = np.ones((5, 3))
    da, db = grad_op(x.numpy(), w.detach().numpy(), dp, kc_needed=2)
    assert not np.asarray(da).any()
    np.testing.assert_allclose(np.asarray(db), x.numpy().T @ dp)


def test_jax_asks_only_for_the_cotangents_it_differentiates_in():
    """jax.grad in some inputs only: their tangents are symbolic zeros,
    and kc.MatMulGrad is told (kc_needed) to skip the others."""
    jax = pytest.importorskip("jax", reason="JAX is not installed: `make test "
                              "EXTRAS=jax` installs it")
    import jax.numpy as jnp
    import kcall.jax
    x, w = rand(4, 5, dtype=np.float32), rand(5, 3, dtype=np.float32)

    def f(x, w):
        return jnp.sum(kcall.jax.call_op("kc.MatMul", x, w))
    only_w = jax.jit(jax.grad(f, argnums=1))
    assert "kc_needed" in only_w.lower(x, w).as_text()
    assert "kc_needed" not in jax.jit(jax.grad(f, (0, 1))).lower(x, w).as_text()
    np.testing.assert_allclose(only_w(x, w), x.T @ np.ones((4, 3), np.float32),
                               rtol=1e-6)
