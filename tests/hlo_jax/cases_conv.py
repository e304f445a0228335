"""Convolutions in their dimension numbers, strides, padding, dilations
and groups, and a small CNN with pooling and its training step.

Part of the fixture generator: see generate.py."""

import numpy as np

import jax
import jax.numpy as jnp

from cases_common import F32, F64, normal, single


CONV_TOL = {"rtol": 1e-4, "atol": 1e-5}


def ref_conv(x, w, stride, pad, groups=1, lhs_dil=(1, 1), rhs_dil=(1, 1)):
    """NHWC x HWIO in float64, as XLA defines a convolution: lhs_dil holes
    between input elements, rhs_dil between kernel taps, then pad
    ((lo, hi) per spatial dimension), then windows at `stride`."""
    n, h, wd, c = x.shape
    kh, kw, ci, o = w.shape
    dh, dw = (h - 1) * lhs_dil[0] + 1, (wd - 1) * lhs_dil[1] + 1
    xd = np.zeros((n, dh, dw, c))
    xd[:, ::lhs_dil[0], ::lhs_dil[1], :] = x
    lo = [max(p[0], 0) for p in pad]
    hi = [max(p[1], 0) for p in pad]
    xp = np.pad(xd, ((0, 0), (lo[0], hi[0]), (lo[1], hi[1]), (0, 0)))
    xp = xp[:, max(-pad[0][0], 0):xp.shape[1] - max(-pad[0][1], 0),
            max(-pad[1][0], 0):xp.shape[2] - max(-pad[1][1], 0), :]
    eh, ew = (kh - 1) * rhs_dil[0] + 1, (kw - 1) * rhs_dil[1] + 1
    oh = (xp.shape[1] - eh) // stride[0] + 1
    ow = (xp.shape[2] - ew) // stride[1] + 1
    out = np.zeros((n, oh, ow, o))
    og = o // groups
    for g in range(groups):
        for i in range(kh):
            for j in range(kw):
                patch = xp[:, i * rhs_dil[0]:i * rhs_dil[0] + (oh - 1) * stride[0] + 1:stride[0],
                           j * rhs_dil[1]:j * rhs_dil[1] + (ow - 1) * stride[1] + 1:stride[1],
                           g * ci:(g + 1) * ci]
                out[..., g * og:(g + 1) * og] += patch @ w[i, j, :, g * og:(g + 1) * og]
    return out


def ref_batch_groups(x, w, groups):
    """batch_group_count: the batch in `groups` groups, output feature
    group g reading batch group g."""
    nb, og = x.shape[0] // groups, w.shape[3] // groups
    return np.concatenate(
        [ref_conv(x[g * nb:(g + 1) * nb], w[..., g * og:(g + 1) * og],
                  (1, 1), ((0, 0), (0, 0))) for g in range(groups)], axis=3)


def conv_nhwc(x, w, stride, padding, **kw):
    return jax.lax.conv_general_dilated(
        x, w, stride, padding, dimension_numbers=("NHWC", "HWIO", "NHWC"), **kw)


def ref_maxpool(x):
    n, h, w, c = x.shape
    return x.reshape(n, h // 2, 2, w // 2, 2, c).max(axis=(2, 4))


def cnn_forward(params, x):
    w1, b1, w2, b2, w3, b3 = params
    h = jax.nn.relu(conv_nhwc(x, w1, (1, 1), "SAME") + b1)
    h = jax.nn.relu(conv_nhwc(h, w2, (2, 2), "SAME") + b2)
    h = jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, (1, 2, 2, 1),
                              (1, 2, 2, 1), "VALID")
    return h.reshape(h.shape[0], -1) @ w3 + b3


def cnn_loss(params, x, y):
    return jnp.mean((cnn_forward(params, x) - y) ** 2)


def cnn_train_step(x, y, *params):
    loss, grads = jax.value_and_grad(cnn_loss)(params, x, y)
    return (loss,) + tuple(p - 0.1 * g for p, g in zip(params, grads))


def ref_cnn(params, x, y=None):
    """The CNN's forward pass in float64 and, given targets, its loss and
    one SGD step, by hand-written backpropagation."""
    w1, b1, w2, b2, w3, b3 = params
    z1 = ref_conv(x, w1, (1, 1), ((1, 1), (1, 1))) + b1
    h1 = np.maximum(z1, 0)
    z2 = ref_conv(h1, w2, (2, 2), ((0, 1), (0, 1))) + b2
    h2 = np.maximum(z2, 0)
    pooled = ref_maxpool(h2)
    flat = pooled.reshape(x.shape[0], -1)
    out = flat @ w3 + b3
    if y is None:
        return [out]
    loss = np.mean((out - y) ** 2)
    dout = 2 * (out - y) / out.size
    dw3, db3 = flat.T @ dout, dout.sum(axis=0)
    dpool = (dout @ w3.T).reshape(pooled.shape)
    # Max pooling's gradient goes to the first maximum of each window.
    dh2 = np.zeros_like(h2)
    n, ph, pw, c = pooled.shape
    for b in range(n):
        for i in range(ph):
            for j in range(pw):
                for ch in range(c):
                    win = h2[b, 2 * i:2 * i + 2, 2 * j:2 * j + 2, ch].reshape(-1)
                    k = int(np.argmax(win))
                    dh2[b, 2 * i + k // 2, 2 * j + k % 2, ch] += dpool[b, i, j, ch]
    dz2 = dh2 * (z2 > 0)
    dw2, dh1 = conv_backward(h1, w2, dz2, (2, 2), ((0, 1), (0, 1)))
    db2 = dz2.sum(axis=(0, 1, 2))
    dz1 = dh1 * (z1 > 0)
    dw1, _ = conv_backward(x, w1, dz1, (1, 1), ((1, 1), (1, 1)))
    db1 = dz1.sum(axis=(0, 1, 2))
    grads = [dw1, db1, dw2, db2, dw3, db3]
    return [loss] + [p - 0.1 * g for p, g in zip(params, grads)]


def conv_backward(x, w, dout, stride, pad):
    """The gradients of ref_conv (no dilation, no groups, padding >= 0)
    with respect to the kernel and the input."""
    kh, kw = w.shape[:2]
    xp = np.pad(x, ((0, 0), pad[0], pad[1], (0, 0)))
    dxp = np.zeros_like(xp)
    dw = np.zeros_like(w, dtype=F64)
    oh, ow = dout.shape[1:3]
    for i in range(kh):
        for j in range(kw):
            sl = (slice(None), slice(i, i + (oh - 1) * stride[0] + 1, stride[0]),
                  slice(j, j + (ow - 1) * stride[1] + 1, stride[1]))
            dw[i, j] = np.einsum("nhwc,nhwo->co", xp[sl], dout)
            dxp[sl] += dout @ w[i, j].T
    h, wd = x.shape[1:3]
    return dw, dxp[:, pad[0][0]:pad[0][0] + h, pad[1][0]:pad[1][0] + wd]


def conv_programs():
    x = normal(50, (2, 7, 6, 3))
    w = normal(51, (3, 3, 3, 4), 0.5)
    xc = normal(52, (2, 3, 7, 6))
    wc = normal(53, (5, 3, 2, 3), 0.5)
    xd = normal(54, (2, 6, 6, 4))
    wd = normal(55, (3, 3, 1, 8), 0.5)
    cnn_params = [normal(56, (3, 3, 1, 4), 0.5), normal(57, (4,), 0.1),
                  normal(58, (3, 3, 4, 4), 0.5), normal(59, (4,), 0.1),
                  normal(60, (16, 3), 0.5), normal(61, (3,), 0.1)]
    cnn_x = normal(62, (2, 8, 8, 1))
    cnn_y = normal(63, (2, 3))

    def nchw(f):
        return lambda x, w: f(np.transpose(x, (0, 2, 3, 1)),
                              np.transpose(w, (2, 3, 1, 0))).transpose(0, 3, 1, 2)

    return [
        single("conv_nhwc",
               lambda x, w: (conv_nhwc(x, w, (1, 1), "SAME"),
                             conv_nhwc(x, w, (2, 1), ((2, 0), (1, 2)),
                                       rhs_dilation=(1, 2))),
               lambda x, w: [ref_conv(x, w, (1, 1), ((1, 1), (1, 1))),
                             ref_conv(x, w, (2, 1), ((2, 0), (1, 2)),
                                      rhs_dil=(1, 2))],
               [x, w], CONV_TOL,
               "lax.conv_general_dilated in NHWC/HWIO: a 3x3 SAME "
               "convolution, and one with strides 2x1, asymmetric padding "
               "and kernel dilation 1x2"),
        single("conv_nchw",
               lambda x, w: jax.lax.conv_general_dilated(
                   x, w, (1, 2), ((1, 0), (0, 1)), lhs_dilation=(2, 1),
                   dimension_numbers=("NCHW", "OIHW", "NCHW")),
               lambda x, w: [nchw(lambda a, b: ref_conv(
                   a, b, (1, 2), ((1, 0), (0, 1)), lhs_dil=(2, 1)))(x, w)],
               [xc, wc], CONV_TOL,
               "lax.conv_general_dilated in NCHW/OIHW with input dilation "
               "2x1, strides 1x2 and asymmetric padding"),
        single("conv_depthwise",
               lambda x, w: conv_nhwc(x, w, (1, 1), "SAME",
                                      feature_group_count=4),
               lambda x, w: [ref_conv(x, w, (1, 1), ((1, 1), (1, 1)),
                                      groups=4)],
               [xd, wd], CONV_TOL,
               "a depthwise 3x3 convolution: feature_group_count 4, two "
               "outputs per input feature"),
        single("conv_groups",
               lambda x, w, xb, wb: (
                   conv_nhwc(x, w, (1, 1), ((1, 0), (0, 1)),
                             feature_group_count=2),
                   conv_nhwc(xb, wb, (1, 1), "VALID", batch_group_count=2)),
               lambda x, w, xb, wb: [
                   ref_conv(x, w, (1, 1), ((1, 0), (0, 1)), groups=2),
                   ref_batch_groups(xb, wb, 2)],
               [normal(64, (2, 5, 5, 6)), normal(65, (2, 2, 3, 4), 0.5),
                normal(66, (4, 5, 5, 3)), normal(67, (2, 2, 3, 6), 0.5)],
               CONV_TOL,
               "feature_group_count 2 (three input features per group), and "
               "batch_group_count 2 over a batch of 4 (the result's batch is "
               "2, output features 0-2 read batch elements 0-1, 3-5 read "
               "2-3)"),
        single("conv_bf16",
               lambda x, w: jax.lax.conv_general_dilated(
                   x.astype(jnp.bfloat16), w.astype(jnp.bfloat16), (1, 1),
                   "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"),
                   preferred_element_type=F32),
               lambda x, w: [ref_conv(
                   x.astype(jnp.bfloat16).astype(F64),
                   w.astype(jnp.bfloat16).astype(F64), (1, 1),
                   ((1, 1), (1, 1)))],
               [x, w], CONV_TOL,
               "a convolution of bf16 operands with an f32 result "
               "(preferred_element_type), the operands converted from f32 "
               "parameters (.npy has no bf16)"),
        single("cnn",
               lambda x, *p: cnn_forward(p, x),
               lambda x, *p: ref_cnn(p, x),
               [cnn_x] + cnn_params, CONV_TOL,
               "a small CNN: two 3x3 convolutions (the second with stride "
               "2) with relu, a 2x2 max pool and a dense layer"),
        single("cnn_train_step",
               cnn_train_step,
               lambda x, y, *p: ref_cnn(p, x, y),
               [cnn_x, cnn_y] + cnn_params, CONV_TOL,
               "one SGD step of the CNN on a squared error (jax.grad): "
               "convolutions for the kernel gradients, an input-dilated one "
               "for the strided convolution's input gradient, "
               "select-and-scatter for the max pool's"),
    ]
