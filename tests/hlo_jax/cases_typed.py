"""Element types: f16 and bf16 models, int8 and mixed-type dots, and a
complex model.

Part of the fixture generator: see generate.py."""

import numpy as np

import jax
import jax.numpy as jnp

from cases_common import EXACT, F16, F32, F64, normal, single


def mlp_half(x, w1, b1, w2, b2, gamma, beta, dt):
    """dense, gelu (tanh form), layer norm, dense, tanh, softmax, each in
    `dt` (the parameters are converted to it first)."""
    x, w1, b1, w2, b2, gamma, beta = (
        a.astype(dt) for a in (x, w1, b1, w2, b2, gamma, beta))
    h = jax.nn.gelu(x @ w1 + b1, approximate=True)
    mean = jnp.mean(h, axis=-1, keepdims=True)
    d = h - mean
    var = jnp.mean(d * d, axis=-1, keepdims=True)
    h = d * jax.lax.rsqrt(var + dt(1e-3)) * gamma + beta
    return jax.nn.softmax(jnp.tanh(h @ w2 + b2), axis=-1)


def ref_mlp_half(x, w1, b1, w2, b2, gamma, beta):
    h = x @ w1 + b1
    h = 0.5 * h * (1 + np.tanh(np.sqrt(2 / np.pi) * (h + 0.044715 * h ** 3)))
    d = h - h.mean(axis=-1, keepdims=True)
    var = (d * d).mean(axis=-1, keepdims=True)
    h = d / np.sqrt(var + 1e-3) * gamma + beta
    e = np.exp(np.tanh(h @ w2 + b2))
    return [e / e.sum(axis=-1, keepdims=True)]


def complex_model(xr, xi, wr, wi, yr, yi):
    """A c64 matmul, then abs, exp, tanh, sqrt, expm1 of it and a compare
    (NE) with another complex value."""
    h = jax.lax.complex(xr, xi) @ jax.lax.complex(wr, wi)
    y = jax.lax.complex(yr, yi)
    e = jnp.exp(h * 0.25) + jnp.tanh(h * 0.5) - jnp.sqrt(h) * jnp.expm1(y)
    return jnp.real(e), jnp.imag(e), jnp.abs(h), h != y


def ref_complex_model(xr, xi, wr, wi, yr, yi):
    h = (xr + 1j * xi) @ (wr + 1j * wi)
    y = yr + 1j * yi
    e = np.exp(h * 0.25) + np.tanh(h * 0.5) - np.sqrt(h) * np.expm1(y)
    return [e.real, e.imag, np.abs(h), h != y]


def typed_programs():
    """f16, bf16 and complex models, and dot with JAX's
    preferred_element_type (`--cases` makes only these)."""
    rng = np.random.default_rng(80)
    s8a = rng.integers(-128, 128, (4, 16)).astype(np.int8)
    s8b = rng.integers(-128, 128, (16, 3)).astype(np.int8)
    u8a = rng.integers(0, 256, (2, 3, 8)).astype(np.uint8)
    u8b = rng.integers(0, 256, (2, 8, 5)).astype(np.uint8)
    mlp_in = [normal(81, (4, 8)), normal(82, (8, 16), 0.5),
              normal(83, (16,), 0.1), normal(84, (16, 6), 0.5),
              normal(85, (6,), 0.1), normal(86, (16,), 0.2) + F32(1),
              normal(87, (16,), 0.1)]
    h16 = [a.astype(F16) for a in mlp_in]
    ra, rb = normal(88, (5, 8)), normal(89, (8, 3))
    return [
        single("dot_int8",
               lambda a, b, c, d: (
                   jnp.matmul(a, b, preferred_element_type=jnp.int32),
                   jnp.einsum("bij,bjk->bik", c, d,
                              preferred_element_type=jnp.int32),
                   jnp.matmul(c[0], d[0], preferred_element_type=jnp.uint32)),
               lambda a, b, c, d: [
                   a.astype(np.int64) @ b.astype(np.int64),
                   np.einsum("bij,bjk->bik", c.astype(np.int64),
                             d.astype(np.int64)),
                   c[0].astype(np.int64) @ d[0].astype(np.int64)],
               [s8a, s8b, u8a, u8b], EXACT,
               "dot of s8 operands with an s32 result "
               "(preferred_element_type), with a batch dimension of u8 "
               "operands giving s32, and u8 giving u32"),
        single("dot_half_f32",
               lambda a, b: (
                   jnp.matmul(a.astype(jnp.bfloat16), b.astype(jnp.bfloat16),
                              preferred_element_type=F32),
                   jnp.matmul(a.astype(F16), b.astype(F16),
                              preferred_element_type=F32),
                   jnp.matmul(a.astype(F16), b.astype(F16)).astype(F32)),
               lambda a, b: [
                   a.astype(jnp.bfloat16).astype(F64)
                   @ b.astype(jnp.bfloat16).astype(F64),
                   a.astype(F16).astype(F64) @ b.astype(F16).astype(F64),
                   a.astype(F16).astype(F64) @ b.astype(F16).astype(F64)],
               [ra, rb], {"rtol": 2e-3, "atol": 2e-3},
               "dot of bf16 and of f16 operands with an f32 result "
               "(preferred_element_type), and of f16 operands with an f16 "
               "result, converted from f32 parameters and to f32 results"),
        single("mlp_f16",
               lambda *a: mlp_half(*a, F16),
               ref_mlp_half, h16, {"rtol": 1e-2, "atol": 1e-2},
               "an MLP in f16: dense, gelu (tanh form), layer norm, dense, "
               "tanh, softmax, on f16 parameters and result"),
        single("mlp_bf16",
               lambda *a: mlp_half(*a, jnp.bfloat16).astype(F32),
               lambda *a: ref_mlp_half(*(
                   np.asarray(x).astype(jnp.bfloat16).astype(F64) for x in a)),
               mlp_in, {"rtol": 5e-2, "atol": 2e-2},
               "the MLP of mlp_f16 in bf16, between converts from and to f32 "
               "(.npy has no bf16)"),
        single("complex_model",
               complex_model, ref_complex_model,
               [normal(90, (4, 3)), normal(91, (4, 3)), normal(92, (3, 5), 0.5),
                normal(93, (3, 5), 0.5), normal(94, (4, 5)),
                normal(95, (4, 5))],
               {"rtol": 1e-5, "atol": 1e-5},
               "a c64 matmul, then abs, exp, tanh, sqrt and expm1 and a "
               "compare (NE) of complex values, on f32 parts"),
    ]


# ---------------------------------------------------------------------------
