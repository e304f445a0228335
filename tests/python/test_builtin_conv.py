"""The spatial built-in ops (kc.Conv2D, kc.MaxPool, kc.AvgPool) from
Python: against NumPy through kcall.ops, against PyTorch's F.conv2d and
pools with their gradients both ways and a small CNN's training step
through kcall.torch, and against lax.conv_general_dilated and
lax.reduce_window through kcall.jax. The PyTorch and JAX parts skip
without those frameworks."""

import numpy as np
import pytest

import kcall
from conftest import TORCH_FORWARD_AD

RNG = np.random.default_rng(5)


def rand(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def np_conv_nhwc(x, w, stride=(1, 1), pad=(0, 0, 0, 0), dil=(1, 1), groups=1):
    """y[n, oy, ox, o] = sum over the window and the group's features."""
    x = np.pad(x, ((0, 0), (pad[0], pad[1]), (pad[2], pad[3]), (0, 0)))
    n, h, wd, c = x.shape
    kh, kw, cg, o = w.shape
    og = o // groups
    oh = (h - dil[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd - dil[1] * (kw - 1) - 1) // stride[1] + 1
    y = np.zeros((n, oh, ow, o))
    for g in range(groups):
        for ky in range(kh):
            for kx in range(kw):
                win = x[:, ky * dil[0]: ky * dil[0] + stride[0] * (oh - 1) + 1: stride[0],
                        kx * dil[1]: kx * dil[1] + stride[1] * (ow - 1) + 1: stride[1],
                        g * cg:(g + 1) * cg]
                y[..., g * og:(g + 1) * og] += win @ w[ky, kx, :, g * og:(g + 1) * og]
    return y


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv2d_and_pools_match_numpy(dtype):
    x, w = rand(2, 9, 8, 4, dtype=dtype), rand(3, 2, 2, 6, dtype=dtype)
    got = np.asarray(kcall.ops.kc.Conv2D(x, w, strides=[2, 1], padding=[1, 2, 0, 1],
                                         dilations=[1, 2], groups=2))
    want = np_conv_nhwc(x.astype(np.float64), w.astype(np.float64), (2, 1), (1, 2, 0, 1),
                        (1, 2), 2)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    # NCHW with OIHW: the same convolution with its axes moved.
    got = np.asarray(kcall.ops.kc.Conv2D(x.transpose(0, 3, 1, 2).copy(),
                                         w.transpose(3, 2, 0, 1).copy(),
                                         data_format="NCHW", strides=[2, 1],
                                         padding=[1, 2, 0, 1], dilations=[1, 2], groups=2))
    np.testing.assert_allclose(got, want.transpose(0, 3, 1, 2), rtol=tol, atol=tol)
    x = rand(2, 6, 6, 3, dtype=dtype)
    blocks = x.reshape(2, 3, 2, 3, 2, 3)
    np.testing.assert_array_equal(np.asarray(kcall.ops.kc.MaxPool(x, ksize=[2])),
                                  blocks.max(axis=(2, 4)))
    np.testing.assert_allclose(np.asarray(kcall.ops.kc.AvgPool(x, ksize=[2, 2])),
                               blocks.mean(axis=(2, 4)), rtol=tol)


@pytest.mark.parametrize("name,attrs", [("Conv2D", {"padding": [1]}),
                                        ("MaxPool", {"ksize": [2]}),
                                        ("AvgPool", {"ksize": [3], "strides": [1]})])
def test_f16_is_the_f32_result_rounded_once(name, attrs):
    op = getattr(kcall.ops.kc, name)
    args = [rand(2, 6, 5, 4).astype(np.float16)]
    if name == "Conv2D":
        args.append(rand(3, 3, 4, 2).astype(np.float16))
    got = np.asarray(op(*args, **attrs))
    want = np.asarray(op(*[a.astype(np.float32) for a in args], **attrs)).astype(np.float16)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, want)


def test_errors_name_what_did_not_fit():
    with pytest.raises(kcall.InvalidArgumentError, match="input features"):
        kcall.ops.kc.Conv2D(rand(1, 5, 5, 4), rand(3, 3, 3, 2))
    with pytest.raises(kcall.InvalidArgumentError, match="spans 7"):
        kcall.ops.kc.Conv2D(rand(1, 5, 5, 4), rand(7, 7, 4, 2))
    with pytest.raises(kcall.InvalidArgumentError, match="padding"):
        kcall.ops.kc.MaxPool(rand(1, 5, 5, 4), ksize=[2], padding=[1, 1, 1])
    with pytest.raises(kcall.Error, match="data_format"):
        kcall.ops.kc.MaxPool(rand(1, 5, 5, 4), ksize=[2], data_format="NWHC")


# ---- PyTorch ---------------------------------------------------------------

NAMES = ["Conv2D", "MaxPool", "AvgPool", "MatMul", "Add", "Relu", "CrossEntropy"]


@pytest.fixture(scope="module")
def torch_ops(torch_builtin):
    torch, register = torch_builtin
    return torch, {n: register(n) for n in NAMES}


def test_torch_conv_and_pools_match_torch_with_gradients_both_ways(torch_ops):
    torch, ops = torch_ops
    F = torch.nn.functional
    f64 = dict(dtype=torch.float64, requires_grad=True)
    x, w = torch.randn(2, 4, 7, 6, **f64), torch.randn(6, 2, 3, 2, **f64)

    def conv(t, k):
        return ops["Conv2D"](t, k, data_format="NCHW", strides=[2, 1], padding=[1, 0],
                             dilations=[1, 2], groups=2)

    def conv_ref(t, k):
        return F.conv2d(t, k, stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=2)

    def maxp(t):
        return ops["MaxPool"](t, data_format="NCHW", ksize=[3], strides=[2], padding=[1])

    def avgp(t):
        return ops["AvgPool"](t, data_format="NCHW", ksize=[3, 2], strides=[1, 2],
                              padding=[1, 0], count_include_pad=False)

    cases = [
        (conv, conv_ref, (x, w)),
        (maxp, lambda t: F.max_pool2d(t, 3, 2, 1), (x,)),
        (avgp, lambda t: F.avg_pool2d(t, (3, 2), (1, 2), (1, 0), count_include_pad=False),
         (x,)),
    ]
    for mine, theirs, args in cases:
        torch.testing.assert_close(mine(*args), theirs(*args), rtol=1e-12, atol=1e-12)
        assert torch.autograd.gradcheck(mine, args)
        assert torch.autograd.gradcheck(mine, args, **TORCH_FORWARD_AD)


def test_torch_cnn_training_step_matches_torch(torch_ops):
    """Two convolutions (NCHW, padded), ReLU, a max pool, a dense layer and
    cross entropy: the loss and every parameter's gradient equal PyTorch's,
    and the input, which needs no gradient, gets none computed."""
    torch, ops = torch_ops
    F = torch.nn.functional
    g = torch.Generator().manual_seed(0)

    def param(*shape):
        return (torch.randn(*shape, generator=g) * 0.2).requires_grad_()
    w1, w2, dense = param(8, 3, 3, 3), param(16, 8, 3, 3), param(16 * 4 * 4, 10)
    x = torch.randn(4, 3, 8, 8, generator=g)
    labels = torch.randint(0, 10, (4,), generator=g)

    def loss_kcall():
        h = ops["Relu"](ops["Conv2D"](x, w1, data_format="NCHW", padding=[1]))
        h = ops["Relu"](ops["Conv2D"](h, w2, data_format="NCHW", padding=[1]))
        h = ops["MaxPool"](h, data_format="NCHW", ksize=[2])
        return ops["CrossEntropy"](ops["MatMul"](h.reshape(4, -1), dense), labels)

    def loss_torch():
        h = F.relu(F.conv2d(F.relu(F.conv2d(x, w1, padding=1)), w2, padding=1))
        return F.cross_entropy(F.max_pool2d(h, 2).reshape(4, -1) @ dense, labels)

    lk, lt = loss_kcall(), loss_torch()
    torch.testing.assert_close(lk, lt, rtol=1e-5, atol=1e-6)
    params = (w1, w2, dense)
    for gk, gt in zip(torch.autograd.grad(lk, params), torch.autograd.grad(lt, params)):
        torch.testing.assert_close(gk, gt, rtol=1e-4, atol=1e-5)


# ---- JAX -------------------------------------------------------------------


def test_jax_conv_and_pools_grad_and_jvp_match_jax():
    jax = pytest.importorskip("jax", reason="JAX is not installed: `make test "
                              "EXTRAS=jax` installs it")
    import jax.numpy as jnp
    from jax import lax
    import kcall.jax
    call = kcall.jax.call_op
    jax.config.update("jax_enable_x64", True)
    try:
        x, w = rand(2, 7, 6, 4), rand(3, 2, 2, 6)

        def f(x, w):
            y = call("kc.Conv2D", x, w, strides=[2, 1], padding=[1, 1, 0, 1], groups=2)
            y = call("kc.MaxPool", y, ksize=[2], strides=[1]) + call("kc.AvgPool", y, ksize=[2],
                                                                    strides=[1])
            return jnp.sum(jnp.tanh(y))

        def ref(x, w):
            y = lax.conv_general_dilated(x, w, (2, 1), ((1, 1), (0, 1)),
                                         dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                         feature_group_count=2)
            win = (1, 2, 2, 1)
            y = (lax.reduce_window(y, -jnp.inf, lax.max, win, (1,) * 4, "VALID")
                 + lax.reduce_window(y, 0.0, lax.add, win, (1,) * 4, "VALID") / 4)
            return jnp.sum(jnp.tanh(y))

        np.testing.assert_allclose(f(x, w), ref(x, w), rtol=1e-12)
        for gk, gr in zip(jax.grad(f, (0, 1))(x, w), jax.grad(ref, (0, 1))(x, w)):
            np.testing.assert_allclose(gk, gr, rtol=1e-9, atol=1e-12)
        u = (rand(2, 7, 6, 4), rand(3, 2, 2, 6))
        np.testing.assert_allclose(jax.jvp(f, (x, w), u)[1], jax.jvp(ref, (x, w), u)[1],
                                   rtol=1e-9)
    finally:
        jax.config.update("jax_enable_x64", False)
