"""The whole programs (an MLP, a layer norm, a softmax, a scan, a
conditional, an attention block), each without and with custom calls.

Part of the fixture generator: see generate.py."""

import numpy as np

import jax
import jax.numpy as jnp

from cases_common import F32, F32_TOL, F64, add_one, normal, row_sum, scale_shift


def mlp(ffi):
    def f(x, w1, b1, w2, b2):
        h = jax.nn.relu(x @ w1 + b1)
        if ffi:
            h = add_one(h)
        return h @ w2 + b2

    def r(x, w1, b1, w2, b2):
        h = np.maximum(x @ w1 + b1, 0)
        if ffi:
            h = h + 1
        return [h @ w2 + b2]
    return f, r


def layer_norm(ffi):
    eps = 1e-5

    def f(x, gamma, beta):
        n = x.shape[-1]
        if ffi:
            mean = row_sum(x)[0][:, None] / n
            d = x - mean
            var = row_sum(d * d)[0][:, None] / n
        else:
            mean = jnp.mean(x, axis=-1, keepdims=True)
            d = x - mean
            var = jnp.mean(d * d, axis=-1, keepdims=True)
        return d * jax.lax.rsqrt(var + eps) * gamma + beta

    def r(x, gamma, beta):
        x = x.astype(F64)
        d = x - x.mean(axis=-1, keepdims=True)
        var = (d * d).mean(axis=-1, keepdims=True)
        return [d / np.sqrt(var + eps) * gamma + beta]
    return f, r


def softmax(ffi):
    def f(x):
        if ffi:
            m = row_sum(x)[1][:, None]
            e = jnp.exp(x - m)
            return e / row_sum(e)[0][:, None]
        return jax.nn.softmax(x, axis=-1)

    def r(x):
        e = np.exp(x.astype(F64) - x.max(axis=-1, keepdims=True))
        return [e / e.sum(axis=-1, keepdims=True)]
    return f, r


def scan(ffi):
    # h_t = 0.5 * h_{t-1} + x_t (plus one through the custom call), every
    # h_t stacked: a while loop over 5 steps.
    def f(h0, xs):
        def step(h, x):
            h = h * 0.5
            if ffi:
                h = add_one(h)
            h = h + x
            return h, h
        return jax.lax.scan(step, h0, xs)

    def r(h0, xs):
        h = h0.astype(F64)
        ys = []
        for x in xs:
            h = h * 0.5 + (1 if ffi else 0) + x
            ys.append(h)
        return [h, np.stack(ys)]
    return f, r


def cond(ffi):
    # Two conditionals on two predicate parameters, one true and one
    # false, so that both branches run.
    def f(p, q, x):
        if ffi:
            def g(c):
                return jax.lax.cond(c, lambda v: add_one(v * 2.0),
                                    lambda v: scale_shift(v, 0.5, -1.0), x)
        else:
            def g(c):
                return jax.lax.cond(c, lambda v: v * 2.0 + 1.0,
                                    lambda v: v - 3.0, x)
        return g(p), g(q)

    def r(p, q, x):
        def g(c):
            if c:
                return x * 2 + 1
            return x * 0.5 - 1 if ffi else x - 3
        return [g(p), g(q)]
    return f, r


def attention(ffi):
    def f(x, wq, wk, wv):
        d = x.shape[-1]
        q, k, v = x @ wq, x @ wk, x @ wv
        s = jnp.einsum("bqd,bkd->bqk", q, k)
        if ffi:
            s = scale_shift(s, 1.0 / np.sqrt(d), 0.0)
        else:
            s = s / np.sqrt(d).astype(F32)
        p = jax.nn.softmax(s, axis=-1)
        return jnp.einsum("bqk,bkd->bqd", p, v)

    def r(x, wq, wk, wv):
        x = x.astype(F64)
        q, k, v = x @ wq, x @ wk, x @ wv
        s = np.einsum("bqd,bkd->bqk", q, k) / np.sqrt(x.shape[-1])
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        p = e / e.sum(axis=-1, keepdims=True)
        return [np.einsum("bqk,bkd->bqd", p, v)]
    return f, r


def whole_programs():
    cases = []

    def both(name, make, inputs, tol, about, targets):
        for ffi in (False, True):
            f, r = make(ffi)
            cases.append(dict(
                name=name + ("_ffi" if ffi else ""), program=name, fn=f,
                reference=r, inputs=inputs, tolerance=tol,
                targets=targets if ffi else [],
                about=about[ffi]))

    mlp_inputs = [normal(1, (4, 8)), normal(2, (8, 16), 0.5), normal(3, (16,), 0.1),
                  normal(4, (16, 4), 0.5), normal(5, (4,), 0.1)]
    both("mlp", mlp, mlp_inputs, F32_TOL,
         ["two dense layers with relu between: dot, add, maximum",
          "the MLP with ffi_test.add_one on the hidden activation"],
         ["ffi_test.add_one"])
    both("layer_norm", layer_norm,
         [normal(6, (4, 16), 2.0, F32) + F32(1),
          normal(7, (16,), 0.5) + F32(1), normal(8, (16,), 0.1)],
         F32_TOL,
         ["layer normalisation over the last axis: reduce, rsqrt",
          "the layer norm with its two sums from ffi_test.row_sum"],
         ["ffi_test.row_sum"])
    both("softmax", softmax, [normal(9, (4, 8), 2.0)], F32_TOL,
         ["softmax over the last axis: reduce (max, add), exponential, "
          "divide",
          "the softmax with the row maxima and sums from ffi_test.row_sum"],
         ["ffi_test.row_sum"])
    both("scan", scan, [normal(10, (8,)), normal(11, (5, 8))], F32_TOL,
         ["jax.lax.scan over 5 steps of h = 0.5 h + x: a while loop",
          "the scan with ffi_test.add_one in the loop body"],
         ["ffi_test.add_one"])
    both("cond", cond, [np.bool_(True), np.bool_(False), normal(12, (3, 4))],
         F32_TOL,
         ["jax.lax.cond on a true and a false predicate parameter: two "
          "conditionals, each branch taken once",
          "the conditionals with ffi_test.add_one in one branch and "
          "ffi_test.scale_shift in the other"],
         ["ffi_test.add_one", "ffi_test.scale_shift"])
    both("attention", attention,
         [normal(13, (2, 4, 8)), normal(14, (8, 8), 0.5),
          normal(15, (8, 8), 0.5), normal(16, (8, 8), 0.5)],
         F32_TOL,
         ["an attention block: q/k/v projections, scores and output as dots "
          "with a batch dimension, softmax",
          "the attention block with the scores scaled by "
          "ffi_test.scale_shift"],
         ["ffi_test.scale_shift"])
    return cases
