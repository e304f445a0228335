"""kcall ops as PyTorch custom ops (kcall.torch). PyTorch is not part of
the default test environment (its wheel is large): `make test
EXTRAS=torch` installs it, and these tests skip without it."""

import os
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed: `make test EXTRAS=torch` "
    "installs it")
from torch.library import opcheck  # noqa: E402

import kcall  # noqa: E402
import kcall.torch  # noqa: E402


@pytest.fixture(scope="module")
def ops(torch_example_ops):
    return torch_example_ops


def test_schemas_follow_the_op_definitions(ops):
    assert str(ops["Add"].default._schema) == \
        "kcall::Add(Tensor x, Tensor y) -> Tensor"
    assert str(ops["Concat"].default._schema) == \
        "kcall::Concat(Tensor[] values, *, int axis=0) -> Tensor"
    assert str(ops["Scale"].default._schema) == \
        "kcall::Scale(Tensor x, *, float factor=1.) -> Tensor"


def test_registering_again_returns_the_same_operator(ops):
    assert kcall.torch.register_op("Add") is ops["Add"]


def test_eager_calls(ops):
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    y = torch.ones(2, 3)
    assert torch.equal(ops["Add"](x, y), x + y)
    assert torch.equal(ops["MatMul"](x, y.T.contiguous()), x @ y.T)
    assert torch.equal(ops["Concat"]([x, y], axis=1), torch.cat([x, y], 1))
    assert torch.equal(ops["Scale"](x, factor=3.0), x * 3)
    # A non-contiguous input is made compact first.
    assert torch.equal(ops["MatMul"](x, y.T), x @ y.T)


def test_outputs_are_the_kernels_memory(ops):
    """The output is the kcall tensor's memory (DLPack, no copy): a NumPy
    view of it through DLPack sees the same address."""
    z = ops["Scale"](torch.ones(4), factor=2.0)
    assert z.data_ptr() == np.from_dlpack(z).ctypes.data


def test_opcheck(ops):
    x = torch.randn(2, 3)
    for op, args, kwargs in [
            (ops["Add"], (x, x), {}),
            (ops["MatMul"], (x, x.T.contiguous()), {}),
            (ops["Concat"], ([x, x],), {"axis": 0}),
            (ops["Scale"], (x,), {"factor": 0.5})]:
        result = opcheck(op.default, args, kwargs)
        assert all(v == "SUCCESS" for v in result.values()), result


def test_torch_compile_traces_through_the_shape_function(ops):
    @torch.compile(fullgraph=True, backend="aot_eager")
    def f(x, y):
        return ops["MatMul"](ops["Add"](x, 1.0 + x), y) * 2

    x = torch.randn(3, 4)
    y = torch.randn(4, 5)
    np.testing.assert_allclose(f(x, y).numpy(),
                               ((x + 1 + x) @ y * 2).numpy(), rtol=1e-5)


def test_errors_name_the_op_and_the_argument(ops):
    """kcall's message, as the RuntimeError torch's own ops raise (the
    Python kernel, without the native one, raises kcall's ValueError)."""
    error = RuntimeError if kcall.torch.native_reason is None else ValueError
    with pytest.raises(error, match=r"calling op 'Add': input 1 \('y'\): "
                       r"expected f32 \(T, as input 0 set it\), got f64"):
        ops["Add"](torch.ones(2), torch.ones(2, dtype=torch.float64))
    with pytest.raises(error, match="MatMul: inner dimensions"):
        ops["MatMul"](torch.ones(2, 3), torch.ones(2, 3))


def test_unknown_op():
    with pytest.raises(AttributeError):
        kcall.torch.register_op("NoSuchOp")


def test_everywhere_from_torch(repo, scale_plugin):
    done = subprocess.run(
        [sys.executable, str(repo / "examples/everywhere/from_torch.py"),
         str(scale_plugin)], capture_output=True, text=True, timeout=300,
        env=os.environ)
    assert done.returncode == 0, done.stdout + done.stderr
    # 3 x + 1, and its gradient (README.md shows this run too).
    assert done.stdout.strip() == \
        "tensor([ 1.,  4.,  7., 10.]) tensor([3., 3., 3., 3.])"


def test_every_empty_shape(ops):
    """Empty tensors whatever dim is 0 (torch strides (2, 0) as (1, 1))."""
    for shape in [(0,), (0, 3), (2, 0), (2, 0, 3)]:
        x = torch.ones(shape)
        assert ops["Add"](x, x).shape == shape


def test_devices_are_not_mixed(ops):
    """Real and meta tensors together are refused, as torch refuses them;
    meta tensors alone give meta outputs of the inferred shape."""
    with pytest.raises(RuntimeError, match="same device"):
        ops["Add"](torch.ones(3), torch.ones(3, device="meta"))
    out = ops["Add"](torch.ones(2, 3, device="meta"),
                     torch.ones(3, device="meta"))
    assert out.device.type == "meta" and out.shape == (2, 3)


def test_dotted_names_and_infinite_defaults(build_file):
    """cpp.Clip (the C++ layer's op) is torch.ops.kcall.cpp_Clip; its
    -inf and inf defaults, which a torch schema cannot write, are kept by
    kcall when the arguments are left out."""
    kcall.load_plugin(str(build_file(
        "examples/ops_cpp/libops_cpp_plugin.so")))
    clip = kcall.torch.register_op("cpp.Clip")
    assert clip is torch.ops.kcall.cpp_Clip
    assert str(clip.default._schema) == \
        "kcall::cpp_Clip(Tensor x, *, float? lo=None, float? hi=None) -> Tensor"
    x = torch.tensor([-5.0, 0.0, 5.0])
    assert torch.equal(clip(x), x)
    assert torch.equal(clip(x, lo=-1.0), torch.tensor([-1.0, 0.0, 5.0]))
    assert torch.equal(clip(x, hi=2.0), torch.tensor([-5.0, 0.0, 2.0]))
    opcheck(clip, (x,), {"lo": -1.0, "hi": 2.0})


def test_a_stateful_op_is_kept_by_compile_and_export(ops_plugin):
    # Counter (examples/ops) is declared stateful: three calls whose
    # results are unused must each run, under torch.compile and in an
    # exported program, as they do eagerly.
    kcall.load_plugin(str(ops_plugin))
    counter = kcall.torch.register_op("Counter")

    def now():
        return int(counter())  # itself one call

    def three(x):
        counter()
        counter()
        counter()
        return x * 2

    if not hasattr(torch.library, "_register_effectful_op"):
        # An older torch could not keep the calls: tracing is refused,
        # eager calls still count.
        before = now()
        assert now() == before + 1
        with pytest.raises(Exception, match="'Counter' is stateful, and "
                           "torch .* cannot keep its calls"):
            torch.compile(three, fullgraph=True)(torch.ones(2))
        return

    # Without the on-disk caches: their key leaves out effect
    # registrations, so a graph cached before the op was marked would
    # come back without its calls.
    with torch.compiler.config.patch(force_disable_caches=True):
        compiled = torch.compile(three, fullgraph=True)
        before = now()
        assert torch.equal(compiled(torch.ones(2)), torch.full((2,), 2.0))
        assert now() == before + 1 + 3
        before = now()
        compiled(torch.ones(2))
        assert now() == before + 1 + 3

    class Three(torch.nn.Module):
        def forward(self, x):
            return three(x)

    exported = torch.export.export(Three(), (torch.ones(2),))
    assert str(exported.graph).count("kcall.Counter") == 3
    before = now()
    exported.module()(torch.ones(2))
    assert now() == before + 1 + 3
