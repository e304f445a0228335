"""The network layers' built-in ops (kc.Softmax, kc.LogSoftmax, kc.LayerNorm,
kc.RMSNorm, kc.Gelu, kc.Max, kc.Embedding, kc.CrossEntropy) from Python:
against NumPy through kcall.ops, against PyTorch's own layers with their
gradients and forward-mode rules through kcall.torch, and against JAX's
through kcall.jax. The PyTorch and JAX parts skip without those
frameworks."""

import math

import numpy as np
import pytest

import kcall
from conftest import TORCH_FORWARD_AD

RNG = np.random.default_rng(11)


def rand(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def np_log_softmax(x, axis):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_softmax_and_log_softmax_match_numpy(dtype, axis):
    x = rand(4, 6, 300, dtype=dtype) * 10
    tol = dict(rtol=2e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-14)
    want = np_log_softmax(x.astype(np.float64), axis)
    np.testing.assert_allclose(np.asarray(kcall.ops.kc.LogSoftmax(x, axis=axis)),
                               want, **tol)
    np.testing.assert_allclose(np.asarray(kcall.ops.kc.Softmax(x, axis=axis)),
                               np.exp(want), **tol)


def test_norms_gelu_max_embedding_and_cross_entropy_match_numpy():
    x, s, b = rand(5, 64), rand(64), rand(64)
    mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    np.testing.assert_allclose(np.asarray(kcall.ops.kc.LayerNorm(x, s, b)),
                               (x - mean) / np.sqrt(var + 1e-5) * s + b, rtol=1e-12)
    ms = (x * x).mean(-1, keepdims=True)
    np.testing.assert_allclose(np.asarray(kcall.ops.kc.RMSNorm(x, s, epsilon=1e-3)),
                               x / np.sqrt(ms + 1e-3) * s, rtol=1e-12)
    erf = np.vectorize(math.erf)
    np.testing.assert_allclose(np.asarray(kcall.ops.kc.Gelu(x)),
                               0.5 * x * (1 + erf(x / math.sqrt(2))), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(np.asarray(kcall.ops.kc.Max(x, axes=[0])), x.max(0))
    table, idx = rand(10, 4), np.array([[1, 9], [9, 0]], np.int64)
    np.testing.assert_array_equal(np.asarray(kcall.ops.kc.Embedding(table, idx)), table[idx])
    labels = np.array([3, 0, 63, 5, 5], np.int32)
    per = -np_log_softmax(x, -1)[np.arange(5), labels]
    np.testing.assert_allclose(np.asarray(kcall.ops.kc.CrossEntropy(x, labels)), per.mean(),
                               rtol=1e-12)
    np.testing.assert_allclose(
        np.asarray(kcall.ops.kc.CrossEntropy(x, labels, reduction="none")), per, rtol=1e-12)


def test_errors_name_what_did_not_fit():
    with pytest.raises(kcall.OutOfRangeError, match="indices: item 2 is 10"):
        kcall.ops.kc.Embedding(rand(10, 4), np.array([0, 1, 10]))
    with pytest.raises(kcall.OutOfRangeError, match="labels: item 0 is -100"):
        kcall.ops.kc.CrossEntropy(rand(2, 3), np.array([-100, 1]))
    with pytest.raises(kcall.InvalidArgumentError, match="scale"):
        kcall.ops.kc.LayerNorm(rand(2, 3), rand(2), rand(3))
    with pytest.raises(kcall.InvalidArgumentError, match="axis"):
        kcall.ops.kc.Softmax(rand(2, 3), axis=2)
    with pytest.raises(kcall.Error, match="reduction"):
        kcall.ops.kc.CrossEntropy(rand(2, 3), np.array([0, 1]), reduction="avg")


# ---- PyTorch ---------------------------------------------------------------

NAMES = ["Softmax", "LogSoftmax", "LayerNorm", "RMSNorm", "Gelu", "Max",
         "Embedding", "CrossEntropy", "MatMul", "Add", "Mean"]


@pytest.fixture(scope="module")
def torch_ops(torch_builtin):
    torch, register = torch_builtin
    return torch, {n: register(n) for n in NAMES}


def test_torch_layers_match_torch_with_gradients_both_ways(torch_ops):
    torch, ops = torch_ops
    F = torch.nn.functional
    f64 = dict(dtype=torch.float64, requires_grad=True)
    x, s, b = torch.randn(3, 4, 6, **f64), torch.randn(6, **f64), torch.randn(6, **f64)
    s2 = torch.randn(4, 6, **f64)
    cases = [
        (lambda t: ops["Softmax"](t, axis=1), lambda t: F.softmax(t, 1), (x,)),
        (lambda t: ops["LogSoftmax"](t), lambda t: F.log_softmax(t, -1), (x,)),
        (lambda t, w, c: ops["LayerNorm"](t, w, c),
         lambda t, w, c: F.layer_norm(t, (6,), w, c), (x, s, b)),
        (lambda t, w: ops["RMSNorm"](t, w, begin_axis=-2, epsilon=1e-6),
         lambda t, w: F.rms_norm(t, (4, 6), w, 1e-6), (x, s2)),
        (ops["Gelu"], F.gelu, (x,)),
        (lambda t: ops["Max"](t, axes=[-1]), lambda t: t.amax(-1), (x,)),
    ]
    for mine, theirs, args in cases:
        torch.testing.assert_close(mine(*args), theirs(*args), rtol=1e-12, atol=1e-12)
        assert torch.autograd.gradcheck(mine, args)
        assert torch.autograd.gradcheck(mine, args, **TORCH_FORWARD_AD)
    table = torch.randn(7, 5, **f64)
    idx = torch.tensor([[0, 6, 6], [2, 0, 1]])
    torch.testing.assert_close(ops["Embedding"](table, idx), F.embedding(idx, table))
    assert torch.autograd.gradcheck(lambda t: ops["Embedding"](t, idx), (table,))
    assert torch.autograd.gradcheck(lambda t: ops["Embedding"](t, idx), (table,), **TORCH_FORWARD_AD)
    logits, labels = torch.randn(8, 5, **f64), torch.tensor([0, 4, 4, 1, 2, 3, 0, 1])
    for reduction in ("mean", "sum", "none"):
        def ce(t, reduction=reduction):
            return ops["CrossEntropy"](t, labels, reduction=reduction)
        torch.testing.assert_close(ce(logits), F.cross_entropy(logits, labels,
                                                               reduction=reduction))
        assert torch.autograd.gradcheck(ce, (logits,))
        assert torch.autograd.gradcheck(ce, (logits,), **TORCH_FORWARD_AD)


def test_torch_max_shares_ties_as_torch_amax_does(torch_ops):
    torch, ops = torch_ops
    x = torch.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]], requires_grad=True)
    (g,) = torch.autograd.grad(ops["Max"](x, axes=[1]).sum(), x)
    (want,) = torch.autograd.grad(x.amax(1).sum(), x)
    torch.testing.assert_close(g, want)


def test_torch_transformer_block_step_matches_torch(torch_ops):
    """Embedding, LayerNorm, attention-like softmax, an MLP with Gelu and
    cross entropy: the loss and every parameter's gradient equal PyTorch's."""
    torch, ops = torch_ops
    F = torch.nn.functional
    g = torch.Generator().manual_seed(0)
    vocab, d, seq, batch = 50, 16, 6, 4

    def param(*shape):
        return (torch.randn(*shape, generator=g) * 0.3).requires_grad_()
    emb, ln_s, ln_b, wq, wk, w1, w2, head = (
        param(vocab, d), param(d), param(d), param(d, d), param(d, d),
        param(d, 4 * d), param(4 * d, d), param(d, vocab))
    tokens = torch.randint(0, vocab, (batch, seq), generator=g)
    targets = torch.randint(0, vocab, (batch * seq,), generator=g)
    params = (emb, ln_s, ln_b, wq, wk, w1, w2, head)

    def loss_kcall():
        h = ops["LayerNorm"](ops["Embedding"](emb, tokens), ln_s, ln_b)
        att = ops["Softmax"](ops["MatMul"](ops["MatMul"](h, wq),
                                           ops["MatMul"](h, wk), transpose_b=True))
        h = ops["Add"](h, ops["MatMul"](att, h))
        h = ops["Add"](h, ops["MatMul"](ops["Gelu"](ops["MatMul"](h, w1)), w2))
        logits = ops["MatMul"](h, head).reshape(batch * seq, vocab)
        return ops["CrossEntropy"](logits, targets)

    def loss_torch():
        h = F.layer_norm(F.embedding(tokens, emb), (d,), ln_s, ln_b)
        att = F.softmax((h @ wq) @ (h @ wk).transpose(-1, -2), -1)
        h = h + att @ h
        h = h + F.gelu(h @ w1) @ w2
        return F.cross_entropy((h @ head).reshape(batch * seq, vocab), targets)

    lk, lt = loss_kcall(), loss_torch()
    torch.testing.assert_close(lk, lt, rtol=1e-5, atol=1e-6)
    for gk, gt in zip(torch.autograd.grad(lk, params), torch.autograd.grad(lt, params)):
        torch.testing.assert_close(gk, gt, rtol=1e-4, atol=1e-5)


# ---- JAX -------------------------------------------------------------------


def test_jax_layers_grad_and_jvp_match_jax():
    jax = pytest.importorskip("jax", reason="JAX is not installed: `make test "
                              "EXTRAS=jax` installs it")
    import jax.numpy as jnp
    import kcall.jax
    call = kcall.jax.call_op
    jax.config.update("jax_enable_x64", True)
    try:
        x, s, b = rand(3, 8), rand(8), rand(8)
        labels = np.array([1, 7, 0], np.int32)

        def f(x, s, b):
            h = call("kc.LayerNorm", x, s, b)
            h = call("kc.Gelu", call("kc.Softmax", h) + call("kc.RMSNorm", h, s))
            return call("kc.CrossEntropy", h, labels) + jnp.sum(call("kc.Max", h, axes=[0]))

        def ref(x, s, b):
            m, v = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
            h = (x - m) / jnp.sqrt(v + 1e-5) * s + b
            rms = h / jnp.sqrt((h * h).mean(-1, keepdims=True) + 1e-6) * s
            h = jax.nn.gelu(jax.nn.softmax(h) + rms, approximate=False)
            lse = jax.nn.log_softmax(h)
            return -jnp.mean(lse[jnp.arange(3), labels]) + jnp.sum(h.max(0))

        np.testing.assert_allclose(f(x, s, b), ref(x, s, b), rtol=1e-12)
        for gk, gr in zip(jax.grad(f, (0, 1, 2))(x, s, b), jax.grad(ref, (0, 1, 2))(x, s, b)):
            np.testing.assert_allclose(gk, gr, rtol=1e-9, atol=1e-12)
        u = (rand(3, 8), rand(8), rand(8))
        np.testing.assert_allclose(jax.jvp(f, (x, s, b), u)[1],
                                   jax.jvp(ref, (x, s, b), u)[1], rtol=1e-9)
        table, idx = rand(9, 4), np.array([3, 3, 8], np.int32)

        def emb(t):
            return jnp.sum(call("kc.Embedding", t, idx) ** 2)
        np.testing.assert_allclose(jax.grad(emb)(table),
                                   jax.grad(lambda t: jnp.sum(t[idx] ** 2))(table))
    finally:
        jax.config.update("jax_enable_x64", False)


# ---- f16 and bf16 ----------------------------------------------------------


@pytest.mark.parametrize("name,args,attrs", [
    ("Add", (rand(3, 4), rand(4)), {}),
    ("Exp", (rand(5, 6),), {}),
    ("Gelu", (rand(5, 6),), {}),
    ("MatMul", (rand(3, 8), rand(8, 5)), {"transpose_a": False}),
    ("Sum", (rand(4, 9),), {"axes": [1]}),
    ("Softmax", (rand(4, 9),), {}),
    ("LayerNorm", (rand(4, 9), rand(9), rand(9)), {}),
    ("CrossEntropy", (rand(4, 9), np.array([0, 8, 3, 3])), {"reduction": "none"}),
])
def test_f16_is_the_f32_result_rounded_once(name, args, attrs):
    """f16 inputs are widened, the op runs in f32, each output is rounded
    once: exactly the f32 op on the widened inputs, rounded."""
    op = getattr(kcall.ops.kc, name)
    half = [a.astype(np.float16) if a.dtype.kind == "f" else a for a in args]
    got = np.asarray(op(*half, **attrs))
    want = np.asarray(op(*[a.astype(np.float32) if a.dtype.kind == "f" else a
                           for a in half], **attrs)).astype(np.float16)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, want)


def test_torch_bf16_training_step_runs_in_bf16(torch_ops):
    torch, ops = torch_ops
    g = torch.Generator().manual_seed(1)
    x = torch.randn(8, 16, generator=g, dtype=torch.bfloat16)
    w = torch.randn(16, 4, generator=g, dtype=torch.bfloat16, requires_grad=True)
    s = torch.ones(16, dtype=torch.bfloat16, requires_grad=True)
    labels = torch.tensor([0, 1, 2, 3, 0, 1, 2, 3])
    loss = ops["CrossEntropy"](ops["MatMul"](ops["RMSNorm"](x, s), w), labels)
    loss.backward()
    assert loss.dtype == w.grad.dtype == s.grad.dtype == torch.bfloat16
    w32, s32 = w.detach().float().requires_grad_(), s.detach().float().requires_grad_()
    ref = ops["CrossEntropy"](ops["MatMul"](ops["RMSNorm"](x.float(), s32), w32), labels)
    ref.backward()
    torch.testing.assert_close(loss.float(), ref, rtol=2e-2, atol=2e-2)
    torch.testing.assert_close(w.grad.float(), w32.grad, rtol=5e-2, atol=5e-2)
