"""LAPACK for programs' linear algebra: NumPy's bundled OpenBLAS offered as
the last resort.

kcall's programs run the LAPACK custom calls JAX emits for ``jnp.linalg``
(``lapack_spotrf_ffi``, ...) with a LAPACK loaded when one is first
compiled: ``KCALL_LAPACK_LIBRARY`` if set, else the system's
(``liblapack.so.3``, ...), else ``KCALL_LAPACK_FALLBACK``. Importing kcall
sets that last one, unless it is set already, to the OpenBLAS in NumPy's
wheel (``numpy.libs/libscipy_openblas*.so``), found without importing
NumPy, so that a pip install runs them on a machine with no system LAPACK.
"""

import glob
import importlib.util
import os


def numpy_openblas():
    """The path of the OpenBLAS NumPy's wheel bundles, or None."""
    try:
        spec = importlib.util.find_spec("numpy")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    site = os.path.dirname(os.path.dirname(spec.origin))
    found = sorted(glob.glob(os.path.join(site, "numpy.libs",
                                          "libscipy_openblas*.so*")))
    return found[0] if found else None


def offer_numpy_openblas():
    """Sets KCALL_LAPACK_FALLBACK to NumPy's OpenBLAS, unless it is set."""
    if os.environ.get("KCALL_LAPACK_FALLBACK"):
        return
    path = numpy_openblas()
    if path:
        os.environ["KCALL_LAPACK_FALLBACK"] = path
