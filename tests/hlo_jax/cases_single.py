"""Programs that each isolate one feature of HLO, and the sorting and
indexing ones (sort, top-k, gather, scatter).

Part of the fixture generator: see generate.py."""

import numpy as np

import jax
import jax.numpy as jnp

from cases_common import (BF16_TOL, EXACT, F16, F16_TOL, F32, F32_TOL, F64,
                          normal, single, uniform)


def single_programs():
    a = normal(20, (2, 3, 4))
    b = normal(21, (2, 4, 5))
    c = normal(22, (3, 2))
    m = normal(23, (3, 5))
    i5 = np.arange(4 * 6, dtype=F32).reshape(4, 6) * F32(0.5) - F32(5)
    cases = [
        single("elementwise",
               lambda x, y: (jnp.maximum(x * y - x / (y + 3.0), 0.0),
                             jnp.exp(-x) + jnp.log(y + 3.0),
                             (x * 4).astype(jnp.int32),
                             jnp.broadcast_to(y, (2, 3, 4)).reshape(6, 4)),
               lambda x, y: [np.maximum(x * y - x / (y + 3.0), 0),
                             np.exp(-x) + np.log(y + 3.0),
                             np.trunc(x.astype(F32) * F32(4)).astype(np.int32),
                             np.broadcast_to(y, (2, 3, 4)).reshape(6, 4)],
               [normal(24, (3, 4)), uniform(25, (3, 4), -2, 2)], F32_TOL,
               "what kcall runs today: elementwise arithmetic, exponential, "
               "log, convert, broadcast, reshape"),
        single("dot",
               lambda x, y, z, w: (jnp.einsum("bij,bjk->bik", x, y),
                                   jnp.einsum("jb,jk->bk", z, w)),
               lambda x, y, z, w: [np.einsum("bij,bjk->bik", x, y),
                                   np.einsum("jb,jk->bk", z, w)],
               [a, b, c, m], F32_TOL,
               "dot with a batch dimension (bij,bjk->bik), and one "
               "contracting the lhs's first dimension (jb,jk->bk)"),
        single("reduce",
               lambda x: (x.sum(axis=1), x.max(axis=(0, 2)), x.sum()),
               lambda x: [x.sum(axis=1), x.max(axis=(0, 2)), x.sum()],
               [a], F32_TOL,
               "reduce: sums over one axis, maxima over two, the total"),
        single("reduce_window",
               lambda x: (jax.lax.reduce_window(
                   x, -jnp.inf, jax.lax.max, (2, 2), (2, 2), "VALID"),
                   jax.lax.reduce_window(
                       x, 0.0, jax.lax.add, (3, 3), (1, 2),
                       ((1, 1), (1, 1)))),
               lambda x: [ref_pool(x, np.max, -np.inf, (2, 2), (2, 2),
                                   ((0, 0), (0, 0))),
                          ref_pool(x, np.sum, 0.0, (3, 3), (1, 2),
                                   ((1, 1), (1, 1)))],
               [i5 * F32(0.25)], F32_TOL,
               "reduce-window: a 2x2 max pool with stride 2, a padded 3x3 "
               "sum with strides 1, 2"),
        single("compare_select",
               lambda x, y: (jnp.where(x > y, x, y * 2.0), x <= y),
               lambda x, y: [np.where(x > y, x, y * 2), x <= y],
               [normal(26, (3, 4)), normal(27, (3, 4))], EXACT,
               "compare (gt, le) and select"),
        single("slice",
               lambda x: (x[1:3, ::2], x[:, 4:1:-1]),
               lambda x: [x[1:3, ::2], x[:, 4:1:-1]],
               [i5], EXACT,
               "slice with a stride, and a reversed slice (rev)"),
        single("dynamic_slice",
               lambda x, i: jax.lax.dynamic_slice(x, (i, 1), (2, 3)),
               lambda x, i: [x[int(i):int(i) + 2, 1:4]],
               [i5, np.int32(1)], EXACT,
               "dynamic-slice at a start index read from a parameter"),
        single("dynamic_update_slice",
               lambda x, u, i: jax.lax.dynamic_update_slice(x, u, (i, 2)),
               lambda x, u, i: [ref_dus(x, u, (int(i), 2))],
               [i5, normal(28, (2, 3)), np.int32(2)], EXACT,
               "dynamic-update-slice at a start index read from a parameter"),
        single("concatenate",
               lambda x, y: jnp.concatenate([x, y, x], axis=1),
               lambda x, y: [np.concatenate([x, y, x], axis=1)],
               [normal(29, (2, 3)), normal(30, (2, 1))], EXACT,
               "concatenate along dimension 1"),
        single("pad",
               lambda x: jax.lax.pad(x, F32(-1), ((1, 2, 0), (0, -1, 1))),
               lambda x: [ref_pad(x)],
               [normal(31, (3, 4))], EXACT,
               "pad with edge padding low and high, negative high padding "
               "and interior padding"),
        single("iota",
               lambda x, n: (x + jax.lax.broadcasted_iota(F32, (3, 4), 1),
                             jnp.arange(6, dtype=jnp.int32) * n),
               lambda x, n: [x + np.arange(4, dtype=F32)[None, :],
                             np.arange(6, dtype=np.int32) * n],
               [normal(32, (3, 4)), np.int32(3)], EXACT,
               "iota along dimension 1 of f32[3,4], and an s32 iota"),
        single("transpose",
               lambda x: (jnp.transpose(x, (2, 0, 1)), x.T),
               lambda x: [np.transpose(x, (2, 0, 1)), x.T],
               [a], EXACT,
               "transpose of f32[2,3,4] by (2,0,1) and by (2,1,0)"),
        single("unary_math",
               lambda x: (jnp.tanh(x), jnp.sqrt(jnp.abs(x)),
                          jax.lax.rsqrt(x * x + 1.0)),
               lambda x: [np.tanh(x), np.sqrt(np.abs(x)),
                          1 / np.sqrt(x * x + 1)],
               [normal(33, (3, 4), 2.0)], F32_TOL,
               "tanh, abs, sqrt, rsqrt"),
        single("f16",
               lambda x, y: (x + y) * y - x / (y + F16(4)),
               lambda x, y: [(x + y) * y - x / (y + 4)],
               [normal(34, (3, 4), 1.0, F16), uniform(35, (3, 4), -1, 1, F16)],
               F16_TOL,
               "f16 arithmetic on f16 parameters and result"),
        single("bf16",
               lambda x, y: ((x.astype(jnp.bfloat16) * y.astype(jnp.bfloat16)
                              + y.astype(jnp.bfloat16)).astype(F32)),
               lambda x, y: [x * y + y],
               [normal(36, (3, 4)), normal(37, (3, 4))], BF16_TOL,
               "bf16 arithmetic between converts from and to f32 (.npy has "
               "no bf16)"),
        single("complex",
               lambda xr, xi, yr, yi: complex_parts(
                   jax.lax.complex(xr, xi), jax.lax.complex(yr, yi)),
               lambda xr, xi, yr, yi: ref_complex_parts(
                   xr + 1j * xi, yr + 1j * yi),
               [normal(38, (2, 3)), normal(39, (2, 3)),
                normal(40, (2, 3)), normal(41, (2, 3))], F32_TOL,
               "c64 arithmetic (multiply, divide, add, exp) between complex, "
               "real and imag, on f32 parameters and results (kcall's .npy "
               "files have no complex)"),
        single("column_major",
               lambda x, y: x * 2.0 + y,
               lambda x, y: [x * 2 + y],
               [normal(42, (3, 4)), normal(43, (3, 4))], EXACT,
               "x * 2 + y with x, an f32[3,4] parameter, in column-major "
               "layout ({0,1}), asked for with jax.experimental.layout; XLA "
               "sets the layout when it compiles, so only the optimized "
               "module has it",
               column_major=True),
    ]
    return cases


def ref_pool(x, op, init, window, strides, padding):
    x = np.pad(x, padding, constant_values=init)
    rows = (x.shape[0] - window[0]) // strides[0] + 1
    cols = (x.shape[1] - window[1]) // strides[1] + 1
    out = np.empty((rows, cols), F64)
    for i in range(rows):
        for j in range(cols):
            r, c = i * strides[0], j * strides[1]
            out[i, j] = op(x[r:r + window[0], c:c + window[1]])
    return out


def ref_dus(x, u, start):
    y = x.copy()
    y[start[0]:start[0] + u.shape[0], start[1]:start[1] + u.shape[1]] = u
    return y


def ref_pad(x):
    # ((1, 2, 0), (0, -1, 1)): interior 1 between columns, then the last
    # column cut; one row above, two below; the value -1.
    rows, cols = x.shape
    inner = np.full((rows, 2 * cols - 1), -1.0)
    inner[:, ::2] = x
    inner = inner[:, :-1]
    out = np.full((rows + 3, inner.shape[1]), -1.0)
    out[1:1 + rows] = inner
    return out


def complex_parts(z, w):
    r = z * w + z / w - jnp.exp(z)
    return jnp.real(r), jnp.imag(r)


def ref_complex_parts(z, w):
    r = z * w + z / w - np.exp(z)
    return [r.real, r.imag]


def ref_stable_order(x, axis, descending=False):
    """Indices of a stable sort along `axis`, -0 equal to 0 and NaNs
    last, as JAX's comparator orders floats."""
    keys = np.where(np.isnan(x), np.inf, x)
    rank = np.where(np.isnan(x), 1, 0)  # NaN after inf
    if descending:
        keys, rank = -keys, -rank
    # lexsort sorts by the last key first; it is stable.
    moved_k = np.moveaxis(keys, axis, -1)
    moved_r = np.moveaxis(rank, axis, -1)
    out = np.empty(moved_k.shape, np.int64)
    for idx in np.ndindex(moved_k.shape[:-1]):
        out[idx] = np.lexsort((moved_k[idx], moved_r[idx]))
    return np.moveaxis(out, -1, axis)


def grad_sin_sin(x):
    return jnp.sum(jnp.sin(jnp.sin(x)))


def random_draws(key):
    k1, k2 = jax.random.split(jax.random.wrap_key_data(key))
    return (jax.random.bits(k1, (6,)), jax.random.uniform(k2, (2, 3)))


def sorting_programs():
    """sort, top_k, checkpoint and random: the cases of instr_sort.c and
    instr_bits.c (`--cases` makes only these)."""
    nan = np.nan
    x = np.array([[3, nan, -0.0, 1, 0.0, -2], [5, 5, -1, nan, 2, 5],
                  [0.5, -0.0, 0.0, -np.inf, np.inf, 1]], F32)
    keys = np.array([2, 0, 2, 1, 0, 2, 1], np.int32)
    vals = normal(50, (7,))
    ties = np.array([[1, 4, 4, 2, 4, 0], [-1, 3, 3, 3, 7, 7]], F32)
    key = np.asarray(jax.random.key_data(jax.random.PRNGKey(42)))
    with jax.disable_jit():
        draws = [np.asarray(a) for a in random_draws(key)]
    return [
        single("sort",
               lambda a: jnp.sort(a, axis=-1),
               lambda a: [np.take_along_axis(a, ref_stable_order(a, -1), -1)],
               [x], EXACT,
               "jnp.sort of f32[3,6] along the last axis, with NaN, -0, 0 "
               "and infinities: JAX's comparator (-0 equal to 0, NaN last)"),
        single("argsort",
               lambda a: jnp.argsort(a, axis=0),
               lambda a: [ref_stable_order(a, 0)],
               [x], EXACT,
               "jnp.argsort along axis 0 of f32[3,6] (a sort of two "
               "operands, the values and an iota, along a dimension that is "
               "not the last)"),
        single("sort_two",
               lambda k, v: jax.lax.sort((k, v), num_keys=1),
               lambda k, v: [np.sort(k, kind="stable"),
                             v[np.argsort(k, kind="stable")]],
               [keys, vals], EXACT,
               "lax.sort of (s32 keys, f32 values) by the keys: stable, the "
               "values carried along"),
        single("top_k",
               lambda a: jax.lax.top_k(a, 3),
               lambda a: [np.take_along_axis(
                   a, ref_stable_order(a, -1, True)[:, :3], -1),
                   ref_stable_order(a, -1, True)[:, :3]],
               [ties], EXACT,
               "lax.top_k with k=3 of rows with ties (lower indices first): "
               "topk lowered, XLA:CPU's TopK custom call optimized"),
        single("checkpoint",
               jax.grad(jax.checkpoint(grad_sin_sin)),
               lambda a: [np.cos(np.sin(a)) * np.cos(a)],
               [normal(51, (2, 5))], F32_TOL,
               "the gradient of a jax.checkpoint-ed function: the saved "
               "values pass an opt-barrier"),
        single("random_uniform",
               random_draws,
               lambda k: draws,
               [key], EXACT,
               "jax.random.split, bits and uniform on a u32[2] key (threefry "
               "as integer arithmetic, bitcast-convert to floats); the "
               "reference is JAX's own result without jit"),
    ]


def indexing_programs():
    """gather and scatter as JAX writes indexing: an embedding lookup and
    its gradient, NumPy's fancy indexing, .at[] updates and
    take_along_axis."""
    table = normal(50, (10, 4))
    ids = np.array([3, 0, 7, 3, 9, 3], np.int32)
    x = np.arange(5 * 6, dtype=F32).reshape(5, 6) * F32(0.25) - F32(3)
    rows = np.array([[0, 4], [2, 2], [4, 1]], np.int32)
    cols = np.array([[5, 0], [1, 3], [2, 2]], np.int32)
    dup = np.array([1, 3, 1, 1, 4], np.int32)
    n = np.arange(5 * 3, dtype=np.int32).reshape(5, 3)

    def embedding(t, i):
        def loss(t):
            return jnp.sum(jnp.tanh(t[i]) * 2.0)
        return t[i], jax.grad(loss)(t)

    def ref_embedding(t, i):
        g = np.zeros_like(t)
        np.add.at(g, i, 2.0 * (1.0 - np.tanh(t[i]) ** 2))
        return [t[i], g]

    def ref_add(x, i, v, n, w):
        y, m, z = x.copy(), n.copy(), x.copy()
        np.add.at(y, i, v)
        np.add.at(m, i, w)
        np.maximum.at(z, i, v)
        return [y, m, z]

    def ref_set(x, i, v):
        y = x.copy()
        for k, j in enumerate(i):
            if -len(y) <= j < len(y):  # JAX drops the others
                y[j] = v[k]
        return [y]

    return [
        single("embedding",
               embedding, ref_embedding,
               [table, ids], F32_TOL,
               "an embedding lookup table[ids] (gather) and the gradient of "
               "a loss over it with respect to the table (a scatter-add, "
               "with repeated ids)"),
        single("gather_fancy",
               lambda x, i, j: (x[i], x[i, j], x[i, 1:4]),
               lambda x, i, j: [x[i], x[i, j], x[i, 1:4]],
               [x, rows, cols], EXACT,
               "NumPy fancy indexing: x[idx] with 2-D indices, x[idx, jdx] "
               "and x[idx, 1:4] (gather)"),
        single("scatter_add",
               lambda x, i, v, n, w: (x.at[i].add(v), n.at[i].add(w),
                                      x.at[i].max(v)),
               ref_add,
               [x, dup, normal(51, (5, 6)), n,
                np.arange(5 * 3, dtype=np.int32).reshape(5, 3) - 7],
               F32_TOL,
               "x.at[idx].add(v) with repeated indices, on f32 and s32, and "
               "x.at[idx].max(v) (scatter with add and maximum)"),
        single("scatter_set",
               lambda x, i, v: x.at[i].set(v),
               ref_set,
               [x, np.array([4, 9, 0, -2], np.int32), normal(52, (4, 6))],
               EXACT,
               "x.at[idx].set(v) with a negative index and one past the end, "
               "which JAX drops (scatter assigning its update)"),
        single("take_along_axis",
               lambda x, i: jnp.take_along_axis(x, i, axis=1),
               lambda x, i: [np.take_along_axis(x, i, axis=1)],
               [x, np.array([[5, 0, 2], [1, 1, 1], [0, 3, 5], [2, 4, 4],
                             [3, 3, 0]], np.int32)],
               EXACT,
               "jnp.take_along_axis along axis 1 (a gather with batching "
               "dimensions as JAX lowers it)"),
    ]


# ---------------------------------------------------------------------------
