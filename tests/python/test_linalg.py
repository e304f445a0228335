"""jnp.linalg programs (LAPACK custom calls) from Python, and where the
package finds LAPACK: NumPy's bundled OpenBLAS as the fallback."""

import os
import subprocess
import sys

import numpy as np

import kcall
from kcall import _lapack

FIXTURES = os.path.join(os.path.dirname(__file__), os.pardir, "fixtures",
                        "hlo_jax")

CHOLESKY = """
HloModule chol
ENTRY main {
  a = f64[2,3,3] parameter(0)
  c = (f64[2,3,3]{1,2,0}, s32[2]{0}) custom-call(a),
      custom_call_target="lapack_dpotrf_ffi",
      operand_layout_constraints={f64[2,3,3]{1,2,0}},
      output_to_operand_aliasing={{0}: (0, {})},
      api_version=API_VERSION_TYPED_FFI, backend_config={uplo = 76 : ui8}
  f = f64[2,3,3] get-tuple-element(c), index=0
  i = s32[2] get-tuple-element(c), index=1
  ROOT t = (f64[2,3,3], s32[2]) tuple(f, i)
}
"""


def spd(n, batch, seed):
    a = np.random.default_rng(seed).standard_normal((batch, n, n))
    return a @ a.transpose(0, 2, 1) + n * np.eye(n)


def test_cholesky_custom_call():
    a = spd(3, 2, 0)
    f, info = kcall.Program.parse(CHOLESKY).compile()(a)
    low = np.tril(np.asarray(f))
    np.testing.assert_allclose(low, np.linalg.cholesky(a), rtol=1e-12)
    # LAPACK leaves the upper triangle as it was.
    np.testing.assert_array_equal(np.triu(np.asarray(f), 1), np.triu(a, 1))
    np.testing.assert_array_equal(np.asarray(info), [0, 0])


def test_jax_fixture_svd():
    with open(os.path.join(FIXTURES, "linalg_svd", "optimized.hlo")) as f:
        exe = kcall.Program.parse(f.read()).compile()
    ins = [np.load(os.path.join(FIXTURES, "linalg_svd", f"input{i}.npy"))
           for i in range(2)]
    outs = exe(*ins)
    for i, got in enumerate(outs):
        want = np.load(os.path.join(FIXTURES, "linalg_svd",
                                    f"output{i}.npy"))
        np.testing.assert_allclose(np.asarray(got), want, rtol=2e-4,
                                   atol=2e-4)


def test_numpy_openblas_is_offered():
    path = _lapack.numpy_openblas()
    assert path and os.path.basename(path).startswith("libscipy_openblas")
    assert os.environ.get("KCALL_LAPACK_FALLBACK")


def test_numpy_openblas_runs_the_calls():
    # The 64-bit-integer OpenBLAS with scipy_ names, by KCALL_LAPACK_LIBRARY
    # (in a fresh process: the library is chosen once per process).
    env = dict(os.environ, KCALL_LAPACK_LIBRARY=_lapack.numpy_openblas())
    code = ("import numpy as np, kcall, test_linalg as t; "
            "t.test_cholesky_custom_call(); print('ok')")
    out = subprocess.run([sys.executable, "-c", code], env=env,
                         cwd=os.path.dirname(__file__), capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == "ok"


def test_no_lapack_is_refused():
    env = dict(os.environ, KCALL_LAPACK_LIBRARY="/nonexistent/liblapack.so.3")
    code = ("import kcall, test_linalg as t\n"
            "try:\n"
            "    kcall.Program.parse(t.CHOLESKY).compile()\n"
            "except kcall.FailedPreconditionError as e:\n"
            "    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], env=env,
                         cwd=os.path.dirname(__file__), capture_output=True,
                         text=True, check=True)
    assert "lapack_dpotrf_ffi" in out.stdout
    assert "KCALL_LAPACK_LIBRARY" in out.stdout
