"""jnp.fft, rng-bit-generator, and jnp.linalg through JAX's LAPACK
custom calls.

Part of the fixture generator: see generate.py."""

import re

import numpy as np

import jax
import jax.numpy as jnp

from cases_common import EXACT, F32, FFT_TOL, normal, single


def parts(z):
    return [np.real(z), np.imag(z)]


def cx(re, im):
    return jax.lax.complex(re, im)


def fft_parts(*zs):
    out = []
    for z in zs:
        out += [jnp.real(z), jnp.imag(z)]
    return tuple(out)


def rbg_draws(key):
    k1, k2 = jax.random.split(jax.random.wrap_key_data(key, impl="rbg"))
    return (jax.random.bits(k1, (2, 3)), jax.random.uniform(k2, (5,)))


def fft_programs():
    """fft and rng-bit-generator: the cases of instr_fft.c and instr_rng.c
    (`--cases` makes only these). Complex values travel as f32 parts
    (kcall reads and writes no complex `.npy`)."""
    a8, b8 = normal(60, (3, 8)), normal(61, (3, 8))
    a97, b97 = normal(62, (97,)), normal(63, (97,))
    a7, b7 = normal(64, (2, 7)), normal(65, (2, 7))
    a16, b16 = normal(66, (16,)), normal(67, (16,))
    r97, r16 = normal(68, (4, 97)), normal(69, (2, 16))
    h5, g5 = normal(70, (3, 5)), normal(71, (3, 5))
    h49, g49 = normal(72, (2, 49)), normal(73, (2, 49))
    m6, n6 = normal(74, (2, 6, 5)), normal(75, (2, 6, 5))
    r3 = normal(76, (3, 4, 7))
    key = np.asarray(jax.random.key_data(jax.random.key(7, impl="rbg")))
    with jax.disable_jit():
        draws = [np.asarray(a) for a in rbg_draws(key)]
    return [
        single("fft",
               lambda a, b, c, d: fft_parts(jnp.fft.fft(cx(a, b)),
                                            jnp.fft.fft(cx(c, d))),
               lambda a, b, c, d: parts(np.fft.fft(a + 1j * b)) +
               parts(np.fft.fft(c + 1j * d)),
               [a8, b8, a97, b97], FFT_TOL,
               "jnp.fft.fft of c64[3,8] and of c64[97] (a prime length)"),
        single("ifft",
               lambda a, b, c, d: fft_parts(jnp.fft.ifft(cx(a, b)),
                                            jnp.fft.ifft(cx(c, d))),
               lambda a, b, c, d: parts(np.fft.ifft(a + 1j * b)) +
               parts(np.fft.ifft(c + 1j * d)),
               [a7, b7, a16, b16], FFT_TOL,
               "jnp.fft.ifft of c64[2,7] and of c64[16]: scaled by 1/N"),
        single("rfft",
               lambda a, b: fft_parts(jnp.fft.rfft(a), jnp.fft.rfft(b)),
               lambda a, b: parts(np.fft.rfft(a)) + parts(np.fft.rfft(b)),
               [r97, r16], FFT_TOL,
               "jnp.fft.rfft of f32[4,97] and of f32[2,16]: half spectra"),
        single("irfft",
               lambda a, b, c, d: (jnp.fft.irfft(cx(a, b), 8),
                                   jnp.fft.irfft(cx(c, d), 97)),
               lambda a, b, c, d: [np.fft.irfft(a + 1j * b, 8),
                                   np.fft.irfft(c + 1j * d, 97)],
               [h5, g5, h49, g49], FFT_TOL,
               "jnp.fft.irfft of c64[3,5] to 8 points and of c64[2,49] to "
               "97 (a prime length); the imaginary parts of the zero and "
               "Nyquist entries are ignored"),
        single("fft2",
               lambda a, b, c: fft_parts(jnp.fft.fft2(cx(a, b)),
                                         jnp.fft.rfftn(c)),
               lambda a, b, c: parts(np.fft.fft2(a + 1j * b)) +
               parts(np.fft.rfftn(c)),
               [m6, n6, r3], FFT_TOL,
               "jnp.fft.fft2 of c64[2,6,5] and jnp.fft.rfftn of f32[3,4,7] "
               "(three dimensions)"),
        single("random_rbg",
               rbg_draws,
               lambda k: draws,
               [key], EXACT,
               "jax.random.split, bits and uniform on an rbg key (u32[4]): "
               "rng-bit-generator lowered, XLA:CPU's expansion of it "
               "optimized; the reference is JAX's own result without jit"),
    ]

LINALG_TOL = {"rtol": 2e-4, "atol": 2e-4}


def spd(seed, batch, n):
    """Symmetric positive definite f32[batch, n, n]: A A^T + n I."""
    a = normal(seed, (batch, n, n))
    return (a @ a.transpose(0, 2, 1) + n * np.eye(n, dtype=F32)).astype(F32)


def linalg_programs():
    """jnp.linalg on the CPU: LAPACK custom calls (lapack_*_ffi), run by
    kcall's built-in targets (instr_linalg.c). Eigenvectors, singular vectors
    and Householder factors are defined up to signs (and LAPACKs differ in
    them), so the programs return what is not: reconstructions, values,
    Gram matrices."""
    s4 = spd(80, 2, 4)
    g = normal(81, (2, 4, 4)) + 4 * np.eye(4, dtype=F32)
    rhs = normal(82, (2, 4, 3))
    t43 = normal(83, (2, 4, 3))
    t35 = normal(84, (3, 5))
    s5 = spd(85, 3, 5)

    def ref_eigh(a):
        w, v = np.linalg.eigh(a)
        return [w, a, np.abs(np.swapaxes(v, -1, -2) @ v)]

    def usv(u, s, vt):
        return (u[..., :, :s.shape[-1]] * s[..., None, :]) @ vt[..., :s.shape[-1], :]

    return [
        single("linalg_cholesky",
               lambda a: (jnp.linalg.cholesky(a),
                          jnp.linalg.cholesky(a) @
                          jnp.swapaxes(jnp.linalg.cholesky(a), -1, -2)),
               lambda a: [np.linalg.cholesky(a), a],
               [s4], LINALG_TOL,
               "jnp.linalg.cholesky of f32[2,4,4]: lapack_spotrf_ffi in "
               "column-major layouts, its info turned into NaNs by the "
               "program; the factor and L L^T"),
        single("linalg_solve",
               lambda a, b: (jnp.linalg.solve(a, b), jnp.linalg.inv(a),
                             jnp.linalg.det(a), jnp.linalg.slogdet(a)[1]),
               lambda a, b: [np.linalg.solve(a, b), np.linalg.inv(a),
                             np.linalg.det(a), np.linalg.slogdet(a)[1]],
               [g, rhs], LINALG_TOL,
               "jnp.linalg.solve, inv, det and slogdet of f32[2,4,4]: "
               "lapack_sgetrf_ffi (pivots, info) and lapack_strsm_ffi"),
        single("linalg_eigh",
               lambda a: (lambda w, v: (w, (v * w[..., None, :]) @
                                        jnp.swapaxes(v, -1, -2),
                                        jnp.abs(jnp.swapaxes(v, -1, -2) @ v)))(
                   *jnp.linalg.eigh(a)),
               ref_eigh,
               [s5], LINALG_TOL,
               "jnp.linalg.eigh of f32[3,5,5]: lapack_ssyevd_ffi; the "
               "eigenvalues, V diag(w) V^T and |V^T V| (signs of "
               "eigenvectors are free)"),
        single("linalg_svd",
               lambda a, b: (lambda u, s, vt, u2, s2, vt2: (
                   s, usv(u, s, vt), jnp.abs(jnp.swapaxes(u, -1, -2) @ u),
                   s2, usv(u2, s2, vt2), jnp.linalg.svd(a, compute_uv=False)))(
                   *jnp.linalg.svd(a), *jnp.linalg.svd(b, full_matrices=False)),
               lambda a, b: [np.linalg.svd(a)[1], a, np.broadcast_to(
                   np.eye(4), (2, 4, 4)), np.linalg.svd(b)[1], b,
                   np.linalg.svd(a)[1]],
               [t43, t35], LINALG_TOL,
               "jnp.linalg.svd: lapack_sgesdd_ffi with mode A (f32[2,4,3], "
               "full matrices), S (f32[3,5]) and N (compute_uv=False); "
               "singular values, U S V^T and |U^T U|"),
        single("linalg_qr",
               lambda a, b: (lambda q, r, qc, rc: (
                   q @ r, jnp.abs(r), jnp.swapaxes(q, -1, -2) @ q,
                   qc @ rc, jnp.swapaxes(qc, -1, -2) @ qc))(
                   *jnp.linalg.qr(a), *jnp.linalg.qr(b, mode="complete")),
               lambda a, b: [a, np.abs(np.linalg.qr(a)[1]),
                             np.broadcast_to(np.eye(3), (2, 3, 3)), b,
                             np.broadcast_to(np.eye(4), (2, 4, 4))],
               [t43, t43], LINALG_TOL,
               "jnp.linalg.qr of f32[2,4,3], reduced and complete: "
               "lapack_sgeqrf_ffi and lapack_sorgqr_ffi; Q R, |R| and Q^T Q"),
    ]
