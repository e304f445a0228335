"""Fixtures shared by the Python tests.

The tests run against kcall as pip installed it (`make pytest` installs it
into .venv from this tree), never against python/kcall in the source tree.
Plugins come from a C build of the same tree, named by KCALL_BUILD_DIR
(`make pytest` sets it to the absolute path of $(BUILD)).
"""

import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def repo():
    """The source tree (examples/ and include/ are read from it)."""
    return REPO


@pytest.fixture(scope="session")
def build_dir():
    """The C build directory; tests that need it skip when it is not set."""
    value = os.environ.get("KCALL_BUILD_DIR")
    if not value:
        pytest.skip("KCALL_BUILD_DIR is not set: run `make pytest`, or set it "
                    "to a C build directory of this tree (e.g. build/)")
    path = pathlib.Path(value).resolve()
    if not (path / "CMakeCache.txt").is_file():
        # Set but wrong is a mistake to report, not a reason to skip.
        pytest.fail("KCALL_BUILD_DIR=%s is not a CMake build directory" % value)
    return path


@pytest.fixture(scope="session")
def build_file(build_dir):
    """build_file("examples/hello/libhello_plugin.so"): a path in the C
    build, failing the test when the build did not make it."""
    def find(relative):
        path = build_dir / relative
        if not path.exists():
            pytest.fail("%s is not built (is KCALL_BUILD_DIR=%s a complete "
                        "build? `make build` makes it)" % (path, build_dir))
        return path
    return find


@pytest.fixture(scope="session")
def hello_plugin(build_file):
    """examples/hello: hello.add, hello.concat, hello.make_adder, ..."""
    return build_file("examples/hello/libhello_plugin.so")


@pytest.fixture(scope="session")
def ops_plugin(build_file):
    """examples/ops: the ops Bitcast, Add, MatMul, Concat and Counter."""
    return build_file("examples/ops/libops_plugin.so")


@pytest.fixture(scope="session")
def fixture_dir(build_file):
    """tests/fixtures: kt_plugin_<name>.so, good and broken plugins."""
    return build_file("tests/fixtures")


@pytest.fixture(scope="session")
def scale_plugin(build_file):
    """examples/everywhere: the typed target "scale" and the op "Scale"."""
    return build_file("examples/everywhere/libscale_plugin.so")


@pytest.fixture(scope="session")
def torch_example_ops(ops_plugin, scale_plugin):
    """The example ops Add, MatMul, Concat and Scale as torch ops
    (kcall.torch.register_op); skips without torch."""
    pytest.importorskip("torch", reason="PyTorch is not installed: `make "
                        "test EXTRAS=torch` installs it")
    import kcall.torch
    kcall.load_plugin(str(ops_plugin))
    kcall.load_plugin(str(scale_plugin))
    return {name: kcall.torch.register_op(name)
            for name in ("Add", "MatMul", "Concat", "Scale")}


@pytest.fixture(scope="session")
def torch_builtin():
    """torch and a function giving the built-in op kc.NAME as a torch op
    (kcall.torch.register_op); skips without torch."""
    torch = pytest.importorskip("torch", reason="PyTorch is not installed: "
                                "`make test EXTRAS=torch` installs it")
    import kcall.torch
    return torch, lambda name: kcall.torch.register_op("kc." + name)


# torch.autograd.gradcheck's options that check forward mode only.
TORCH_FORWARD_AD = dict(check_forward_ad=True, check_backward_ad=False,
                        check_undefined_grad=False, check_batched_grad=False)


@pytest.fixture(scope="session")
def xla_plugin(build_file):
    """examples/xla: the legacy targets and the typed target rms_norm."""
    return build_file("examples/xla/libxla_plugin.so")


# ---- tvm-ffi ------------------------------------------------------------------

TVM_FFI_SKIP = ("tvm-ffi (apache-tvm-ffi) is not installed: `make test "
                "EXTRAS=tvm` installs it")


def tvm_ffi_build_flags():
    """The compiler flags for code written against the installed
    apache-tvm-ffi wheel: its headers (and DLPack's), libtvm_ffi and an
    rpath to it. Skips the test without tvm-ffi."""
    libinfo = pytest.importorskip("tvm_ffi.libinfo", reason=TVM_FFI_SKIP)
    lib = pathlib.Path(libinfo.find_libtvm_ffi())
    includes = []
    for path in (libinfo.find_include_path(),
                 libinfo.find_dlpack_include_path()):
        if path not in includes:
            includes.append(path)
    flags = []
    for path in includes:
        flags += ["-isystem", str(path)]
    return flags, ["-L" + str(lib.parent), "-ltvm_ffi",
                   "-Wl,-rpath," + str(lib.parent)]


@pytest.fixture(scope="session")
def tvm_ffi_kernels(tmp_path_factory):
    """tests/tvm_ffi/kernels.cc, a tvm-ffi module written with tvm-ffi's
    own C++ headers, compiled once per session with $CXX (else c++)
    against the installed wheel: the path of libtvm_kernels.so. Skips
    without tvm-ffi; a compile error fails the test."""
    import shlex
    import subprocess
    cflags, libs = tvm_ffi_build_flags()
    out = tmp_path_factory.mktemp("tvm_ffi") / "libtvm_kernels.so"
    cmd = (shlex.split(os.environ.get("CXX") or "c++")
           + ["-std=c++17", "-O2", "-shared", "-fPIC", "-Wall", "-Wextra"]
           + cflags + [str(REPO / "tests" / "tvm_ffi" / "kernels.cc"),
                       "-o", str(out)] + libs)
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        pytest.fail("building the tvm-ffi test module failed:\n%s\n%s"
                    % (" ".join(cmd), done.stderr))
    return out
