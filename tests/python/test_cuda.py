"""kcall on CUDA devices from Python.

The first tests run in subprocesses on the fake backend
(tests/device/fake_backend.c, named by KCALL_CUDA_BACKEND before the first
device use), whose "device" memory is host memory: copies to and from
cuda:0, DLPack export and import of device tensors with the consumer's
stream, and eager op calls on device tensors with `stream=`. The last ones
need a real GPU with torch or CuPy and are skipped, saying why, without one.
"""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import kcall


def run_on_fake(build_file, script, devices=1):
    env = dict(os.environ)
    env["KCALL_CUDA_BACKEND"] = str(build_file("tests/libkcall_fake_cuda.so"))
    env["KCALL_FAKE_CUDA_DEVICES"] = str(devices)
    env["KT_FAKE_OPS"] = str(
        build_file("tests/fixtures/kt_plugin_fake_cuda_ops.so"))
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(script)],
                            env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_copies_and_dlpack_export_on_a_device(build_file):
    out = run_on_fake(build_file, """
        import numpy as np, kcall
        x = np.arange(6, dtype=np.float32).reshape(2, 3)
        t = kcall.to_device(x, "cuda:1")
        assert t.device == "cuda:1", t.device
        assert t.__dlpack_device__() == (2, 1)
        assert t.shape == (2, 3)
        # no host view of device memory, a clear error instead
        try:
            np.asarray(t)
        except BufferError as e:
            assert "needs host memory, the tensor is on cuda:1" in str(e), e
            assert 'kcall.to_device(t, "cpu")' in str(e), e
        else:
            raise AssertionError("np.asarray read device memory")
        back = kcall.to_device(t, "cpu")
        assert back.device == "cpu:0", back.device
        np.testing.assert_array_equal(np.asarray(back), x)
        # kcall imports its own device tensor through DLPack, without a copy
        u = kcall.from_dlpack(t)
        assert u.device == "cuda:1" and u.data_ptr == t.data_ptr
        print("ok")
    """, devices=2)
    assert out.strip() == "ok"


def test_op_calls_on_device_tensors_with_streams(build_file):
    out = run_on_fake(build_file, """
        import os, numpy as np, kcall
        kcall.load_plugin(os.environ["KT_FAKE_OPS"])
        add_one = getattr(kcall.ops, "fake.AddOne")
        x = kcall.to_device(np.array([1, 2, 3], dtype=np.float32), "cuda:0")
        y, s = add_one(x)
        assert y.device == "cuda:0" and s.device == "cpu:0", s.device
        np.testing.assert_array_equal(np.asarray(kcall.to_device(y, "cpu")),
                                      [2, 3, 4])
        own = int(np.asarray(s))
        assert own == kcall.default_stream("cuda:0"), own  # kcall's own
        assert kcall.default_stream("cpu") == 0

        class TorchLike:                 # torch.cuda.Stream has cuda_stream
            cuda_stream = 0x5000
        class CupyLike:                  # cupy's streams have ptr
            ptr = 0x6000
        for stream, want in ((0x4000, 0x4000), (TorchLike(), 0x5000),
                             (CupyLike(), 0x6000), (None, own)):
            _, s = add_one(x, stream=stream)
            assert int(np.asarray(s)) == want, (stream, int(np.asarray(s)))
        try:
            add_one(x, stream="fast")
        except TypeError as e:
            assert "stream: expected None, an int" in str(e), e
        else:
            raise AssertionError("a str stream was accepted")

        # A DLPack producer on the device is asked for the call's stream.
        class Producer:
            def __init__(self, t):
                self.t, self.streams = t, []
            def __dlpack_device__(self):
                return self.t.__dlpack_device__()
            def __dlpack__(self, stream=None, max_version=None, **kw):
                self.streams.append(stream)
                return self.t.__dlpack__(stream=stream,
                                         max_version=max_version)
        p = Producer(x)
        y, s = add_one(p, stream=0x4000)
        y, s = add_one(p)
        assert p.streams == [0x4000, own], p.streams
        np.testing.assert_array_equal(np.asarray(kcall.to_device(y, "cpu")),
                                      [2, 3, 4])
        print("ok")
    """)
    assert out.strip() == "ok"


def test_no_cuda_device_is_a_clear_error(build_file, tmp_path):
    env = dict(os.environ)
    env["KCALL_CUDA_BACKEND"] = str(tmp_path / "libkcall_cuda.so")
    script = textwrap.dedent("""
        import numpy as np, kcall
        try:
            kcall.to_device(np.zeros(2, np.float32), "cuda:0")
        except kcall.FailedPreconditionError as e:
            print(e)
        else:
            raise AssertionError("to_device without a device")
    """)
    result = subprocess.run([sys.executable, "-c", script], env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "no CUDA device: " in result.stdout


# ---- on a real GPU ---------------------------------------------------------


def _cuda_or_skip():
    try:
        kcall.to_device(np.zeros(1, np.float32), "cuda:0")
    except kcall.FailedPreconditionError as e:
        pytest.skip(str(e)[str(e).find("no CUDA device"):])


def test_torch_cuda_tensors_round_trip():
    _cuda_or_skip()
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device: torch sees none")
    x = torch.arange(1000, dtype=torch.float32, device="cuda") * 0.5
    stream = torch.cuda.Stream()
    t = kcall.to_device(x, "cuda:0", stream=stream)
    assert t.device == "cuda:0"
    back = torch.from_dlpack(t)          # no copy: the same memory
    assert back.device.type == "cuda"
    assert back.data_ptr() == t.data_ptr
    assert torch.equal(back, x)


def test_cupy_arrays_round_trip():
    _cuda_or_skip()
    cupy = pytest.importorskip("cupy")
    x = cupy.arange(257, dtype=cupy.float64)
    t = kcall.to_device(x, "cuda:0", stream=cupy.cuda.Stream())
    y = cupy.from_dlpack(t)
    assert int(y.data.ptr) == t.data_ptr
    assert bool((y == x).all())
    np.testing.assert_array_equal(np.asarray(kcall.to_device(t, "cpu")),
                                  cupy.asnumpy(x))


def test_jax_gpu_arrays_round_trip():
    _cuda_or_skip()
    jax = pytest.importorskip("jax")
    try:
        gpus = jax.devices("gpu")
    except RuntimeError as e:
        pytest.skip("no CUDA device: JAX has no GPU backend (%s)" % e)
    x = jax.device_put(jax.numpy.arange(300, dtype=jax.numpy.float32), gpus[0])
    t = kcall.to_device(x, "cuda:0")
    np.testing.assert_array_equal(np.asarray(kcall.to_device(t, "cpu")),
                                  np.asarray(x))
    y = jax.dlpack.from_dlpack(t)
    np.testing.assert_array_equal(np.asarray(y), np.asarray(x))


def test_cuda_kernels_of_the_examples_from_torch(ops_plugin):
    """examples/cuda's Add and MatMul kernels on torch tensors, on torch's
    stream, against torch's own results."""
    _cuda_or_skip()
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device: torch sees none")
    path = ops_plugin.parent.parent / "cuda" / "libcuda_examples.so"
    if not path.exists():
        pytest.skip("the CUDA examples are not built (no nvcc): %s" % path)
    kcall.load_plugin(ops_plugin)
    kcall.load_plugin(path)
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        a = torch.rand(67, 45, device="cuda")
        b = torch.rand(45, 33, device="cuda")
        c = kcall.ops.MatMul(a, b, stream=stream)
        z = kcall.ops.Add(a, torch.ones(45, device="cuda"), stream=stream)
    stream.synchronize()
    assert c.device == "cuda:0"
    torch.testing.assert_close(torch.from_dlpack(c), a @ b, rtol=1e-4,
                               atol=1e-4)
    torch.testing.assert_close(torch.from_dlpack(z), a + 1)
    # kcall's own stream when none is given: done when the call returns.
    c2 = kcall.ops.MatMul(a, b)
    torch.testing.assert_close(torch.from_dlpack(c2), a @ b, rtol=1e-4,
                               atol=1e-4)


def test_a_typed_cuda_target_in_jax_on_the_gpu(ops_plugin):
    """examples/cuda's typed target "cuda_scale" registered with JAX for
    the GPU: XLA hands it device buffers and its stream."""
    _cuda_or_skip()
    jax = pytest.importorskip("jax")
    try:
        gpu = jax.devices("gpu")[0]
    except RuntimeError as e:
        pytest.skip("no CUDA device: JAX has no GPU backend (%s)" % e)
    path = ops_plugin.parent.parent / "cuda" / "libcuda_examples.so"
    if not path.exists():
        pytest.skip("the CUDA examples are not built (no nvcc): %s" % path)
    import kcall.jax
    kcall.load_plugin(path)
    assert kcall.jax.register_target("cuda_scale", platform="cuda") == \
        "cuda_scale"

    @jax.jit
    def f(x):
        y = jax.ffi.ffi_call("cuda_scale",
                             jax.ShapeDtypeStruct(x.shape, x.dtype))(
            x, factor=np.float32(2.5))
        return y + 1

    x = jax.device_put(
        jax.numpy.arange(3 * 1001, dtype=jax.numpy.float32).reshape(3, 1001),
        gpu)
    y = f(x)
    assert y.devices() == {gpu}
    np.testing.assert_array_equal(np.asarray(y), np.asarray(x) * 2.5 + 1)
    # An empty operand launches nothing.
    e = jax.device_put(jax.numpy.zeros((0, 4), jax.numpy.float32), gpu)
    assert f(e).shape == (0, 4)


PROGRAM = """HloModule twice
ENTRY main {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  ROOT z = f32[4] add(x, y)
}
"""


def test_programs_on_cuda(build_file):
    out = run_on_fake(build_file, """
        import numpy as np, kcall
        PROGRAM = %r
        prog = kcall.Program.parse(PROGRAM)
        exe = prog.compile(platform="cuda", device=0)
        x = np.arange(4, dtype=np.float32)
        z = exe(x, x)                          # host inputs, copied in
        assert z.device == "cuda:0", z.device
        np.testing.assert_array_equal(
            np.asarray(kcall.to_device(z, "cpu")), 2 * x)
        gx = kcall.to_device(x, "cuda:0")      # device inputs, in place
        own = kcall.default_stream("cuda:0")
        z = exe(gx, gx, stream=own)
        np.testing.assert_array_equal(
            np.asarray(kcall.to_device(z, "cpu")), 2 * x)
        # out=: into the caller's tensor, given back
        out = kcall.to_device(np.zeros(4, np.float32), "cuda:0")
        r = exe(gx, z, out=[out])
        assert r is out
        np.testing.assert_array_equal(
            np.asarray(kcall.to_device(out, "cpu")), 3 * x)
        try:
            exe(gx, gx, out=[kcall.to_device(np.zeros(3, np.float32), "cuda:0")])
        except kcall.InvalidArgumentError as e:
            assert "output 0" in str(e), e
        else:
            raise AssertionError("a wrong out= was accepted")
        try:
            exe(gx, gx, speed=2)
        except TypeError as e:
            assert "stream= and out=" in str(e), e
        # graphs=False, and device= only for CUDA
        exe2 = prog.compile(platform="cuda", device=0, graphs=False)
        np.testing.assert_array_equal(
            np.asarray(kcall.to_device(exe2(gx, gx), "cpu")), 2 * x)
        try:
            prog.compile(device=1)
        except ValueError as e:
            assert "device=1 names a CUDA ordinal" in str(e), e
        else:
            raise AssertionError("device=1 on the host was accepted")
        # host programs take out= too
        host = prog.compile()
        hout = np.zeros(4, np.float32)
        host(x, x, out=[hout])
        np.testing.assert_array_equal(hout, 2 * x)
        print("ok")
    """ % PROGRAM)
    assert out.strip() == "ok"
