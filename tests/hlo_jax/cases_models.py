"""Model-sized programs: what the model benchmark
(bench/python/bench_models.py) times besides the other cases.

Part of the fixture generator: see generate.py."""

import numpy as np

import jax
import jax.numpy as jnp

from cases_common import F32, F32_TOL, normal, single


# f32 sums of hundreds of products, then exp, tanh and rsqrt on them.
MODEL_TOL = {"rtol": 2e-4, "atol": 2e-5}
HEADS = 4


def ref_gelu(x):
    """jax.nn.gelu's default, the tanh approximation, in float64."""
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def ref_layer_norm(x, g, b, eps=1e-5):
    d = x - x.mean(axis=-1, keepdims=True)
    return d / np.sqrt((d * d).mean(axis=-1, keepdims=True) + eps) * g + b


def jax_layer_norm(x, g, b, eps=1e-5):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    d = x - mean
    var = jnp.mean(d * d, axis=-1, keepdims=True)
    return d * jax.lax.rsqrt(var + eps) * g + b


def transformer_block(x, g1, b1, wqkv, wo, g2, b2, w1, c1, w2, c2):
    """A pre-norm transformer block on f32[seq, width]: layer norm,
    multi-head self-attention (HEADS heads), a residual; layer norm, an MLP
    of 4x the width with gelu, a residual."""
    s, w = x.shape
    h = jax_layer_norm(x, g1, b1)
    q, k, v = jnp.split(h @ wqkv, 3, axis=-1)
    q, k, v = (a.reshape(s, HEADS, w // HEADS).transpose(1, 0, 2)
               for a in (q, k, v))
    p = jax.nn.softmax(jnp.einsum("hqd,hkd->hqk", q, k)
                       / np.sqrt(w // HEADS).astype(F32), axis=-1)
    a = jnp.einsum("hqk,hkd->hqd", p, v).transpose(1, 0, 2).reshape(s, w)
    x = x + a @ wo
    h = jax_layer_norm(x, g2, b2)
    return x + jax.nn.gelu(h @ w1 + c1) @ w2 + c2


def ref_transformer_block(x, g1, b1, wqkv, wo, g2, b2, w1, c1, w2, c2):
    s, w = x.shape
    q, k, v = np.split(ref_layer_norm(x, g1, b1) @ wqkv, 3, axis=-1)
    q, k, v = (a.reshape(s, HEADS, w // HEADS).transpose(1, 0, 2)
               for a in (q, k, v))
    e = np.einsum("hqd,hkd->hqk", q, k) / np.sqrt(w // HEADS)
    e = np.exp(e - e.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    x = x + np.einsum("hqk,hkd->hqd", p, v).transpose(1, 0, 2).reshape(s, w) @ wo
    h = ref_layer_norm(x, g2, b2)
    return [x + ref_gelu(h @ w1 + c1) @ w2 + c2]


def mlp_wide(x, w1, b1, w2, b2):
    return jax.nn.gelu(jnp.tanh(x @ w1 + b1) @ w2 + b2)


def ref_mlp_wide(x, w1, b1, w2, b2):
    return [ref_gelu(np.tanh(x @ w1 + b1) @ w2 + b2)]


def random_normal_draws(key):
    k1, k2, k3 = jax.random.split(jax.random.wrap_key_data(key), 3)
    return (jax.random.normal(k1, (4, 5)),
            jax.random.uniform(k2, (3, 2), minval=-2.0, maxval=3.0),
            jax.random.key_data(k3))


def model_programs():
    """The model set's programs that the cases above lack: a transformer
    block at width 256, an MLP at batch 256, jax.random.normal."""
    width, seq, hidden = 256, 128, 1024
    block = [normal(80, (seq, width)),
             normal(81, (width,), 0.1) + F32(1), normal(82, (width,), 0.1),
             normal(83, (width, 3 * width), width ** -0.5),
             normal(84, (width, width), width ** -0.5),
             normal(85, (width,), 0.1) + F32(1), normal(86, (width,), 0.1),
             normal(87, (width, hidden), width ** -0.5),
             normal(88, (hidden,), 0.1),
             normal(89, (hidden, width), hidden ** -0.5),
             normal(90, (width,), 0.1)]
    mlp_in = [normal(91, (256, 512)), normal(92, (512, 1024), 512 ** -0.5),
              normal(93, (1024,), 0.1), normal(94, (1024, 256), 1024 ** -0.5),
              normal(95, (256,), 0.1)]
    key = np.asarray(jax.random.key_data(jax.random.PRNGKey(43)))
    with jax.disable_jit():
        draws = [np.asarray(a) for a in random_normal_draws(key)]
    return [
        single("transformer",
               transformer_block, ref_transformer_block, block, MODEL_TOL,
               "a pre-norm transformer block on f32[128,256]: layer norm, "
               "4-head self-attention, residual, layer norm, a 1024-wide "
               "gelu MLP, residual"),
        single("mlp_wide",
               mlp_wide, ref_mlp_wide, mlp_in, MODEL_TOL,
               "an MLP at batch 256: f32[256,512] @ [512,1024] with tanh, "
               "@ [1024,256] with gelu"),
        single("random_normal",
               random_normal_draws,
               lambda k: draws,
               [key], F32_TOL,
               "jax.random.split into three, normal f32[4,5], uniform "
               "f32[3,2] in [-2, 3), and a split key's data; the reference "
               "is JAX's own result without jit"),
    ]
