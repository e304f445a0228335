"""Dynamic (symbolic) shapes: shape functions run on symbolic dims
(op.h, "Symbolic dims"), kcall's op_infer_symbolic, and what the
frameworks make of it: SymInt sizes in kcall.torch (torch.compile with
dynamic shapes, mark_dynamic, torch.export) and symbolic dims in
kcall.jax (jax.export with symbolic_shape). The framework tests skip
without the framework (`make test EXTRAS="jax torch"` installs both)."""

import os
import subprocess
import sys

import numpy as np
import pytest

import kcall
from kcall import _core


@pytest.fixture(scope="module")
def ops(ops_plugin, scale_plugin, fixture_dir):
    kcall.load_plugin(str(ops_plugin))
    kcall.load_plugin(str(scale_plugin))
    # kt_ops.Scale: a shape function that does not declare symbolic shapes.
    kcall.load_plugin(str(fixture_dir / "kt_plugin_ops.so"))


def handle(name):
    return _core.op_lookup(name)


# ---- kcall's side --------------------------------------------------------


def test_symbolic_inference_gives_expressions(ops):
    add = _core.op_infer_symbolic(
        handle("Add"), [(["b", 3], "f32"), ([3], "f32")], {})
    assert add == {"outputs": [((("input", 0, 0), 3), "float32")],
                   "assumptions": []}
    # Two different symbols broadcast: assumed equal, never guessed.
    add = _core.op_infer_symbolic(
        handle("Add"), [(["n"], "f32"), (["m"], "f32")], {})
    assert add["outputs"] == [((("input", 0, 0),), "float32")]
    assert add["assumptions"] == [("eq", ("input", 0, 0), ("input", 1, 0))]
    matmul = _core.op_infer_symbolic(
        handle("MatMul"), [(["b", "k"], "f32"), (["k", 5], "f32")], {})
    assert matmul == {"outputs": [((("input", 0, 0), 5), "float32")],
                      "assumptions": []}
    concat = _core.op_infer_symbolic(
        handle("Concat"), [(["n", 2], "f32"), ([3, 2], "f32")], {"axis": 0})
    assert concat["outputs"] == [((("add", ("input", 0, 0), 3), 2), "float32")]
    softplus = _core.op_infer_symbolic(handle("Softplus"),
                                       [(["n", 4], "f64")], {})
    assert softplus["outputs"] == [((("input", 0, 0), 4), "float64")]


def test_symbolic_inference_of_op_flags(ops):
    def flags(name):
        return _core.op_describe(handle(name))["flags"]
    for name in ("Add", "AddGrad", "MatMul", "MatMulGrad", "Softplus",
                 "SoftplusGrad", "Concat", "Bitcast", "Scale"):
        assert "symbolic_shapes" in flags(name), name
    assert "symbolic_shapes" not in flags("kt_ops.Scale")


def test_symbolic_inference_refuses_a_numeric_shape_function(ops):
    with pytest.raises(kcall.FailedPreconditionError,
                       match=r"calling op 'kt_ops.Scale': op 'kt_ops.Scale': "
                       r"its shape function is not symbolic"):
        _core.op_infer_symbolic(handle("kt_ops.Scale"), [(["n"], "f32")], {})
    # Concrete sizes run it all the same.
    assert _core.op_infer_symbolic(handle("kt_ops.Scale"), [([3], "f32")],
                                   {})["outputs"] == [((3,), "float32")]


def test_symbolic_inference_bad_input(ops):
    with pytest.raises(ValueError, match=r"input 0: dim 1 is -3: expected a "
                       r"size \(>= 0\) or a symbol's name"):
        _core.op_infer_symbolic(handle("Add"), [([2, -3], "f32"),
                                                ([3], "f32")], {})
    with pytest.raises(TypeError):
        _core.op_infer_symbolic(handle("Add"), [([2.5], "f32")], {})
    with pytest.raises(TypeError, match="op_infer_symbolic"):
        _core.op_infer_symbolic(handle("Add"), ([], "f32"), {})
    with pytest.raises(kcall.InvalidArgumentError,
                       match=r"cannot broadcast \[in0\[0\],2\] with \[3\]"):
        _core.op_infer_symbolic(handle("Add"), [(["n", 2], "f32"),
                                                ([3], "f32")], {})


# ---- PyTorch -------------------------------------------------------------


@pytest.fixture(scope="module")
def torch_ops(ops):
    torch = pytest.importorskip(
        "torch", reason="PyTorch is not installed: `make test EXTRAS=torch` "
        "installs it")
    import kcall.torch
    return torch, {name: kcall.torch.register_op(name)
                   for name in ("Add", "MatMul", "Softplus", "Scale",
                                "kt_ops.Scale")}


def counter(torch):
    from torch._dynamo.testing import CompileCounterWithBackend
    return CompileCounterWithBackend("aot_eager")


def test_torch_readme_example_compiles_at_most_twice(torch_ops):
    """README.md's from_torch.py, over 20 lengths: sizes stay symbolic, so
    torch.compile does not recompile per length (it used to, and
    fullgraph=True hit the recompile limit at the 9th)."""
    torch, op = torch_ops
    for dynamic in (True, None):
        torch._dynamo.reset()
        count = counter(torch)

        @torch.compile(fullgraph=True, dynamic=dynamic, backend=count)
        def f(x):
            return op["Scale"](x, factor=3.0) + 1

        for n in range(2, 22):
            x = torch.arange(n, dtype=torch.float32, requires_grad=True)
            y = f(x)
            y.sum().backward()
            torch.testing.assert_close(y.detach(), x.detach() * 3 + 1)
            torch.testing.assert_close(x.grad, torch.full((n,), 3.0))
        assert count.frame_count <= 2, (dynamic, count.frame_count)


def test_torch_mark_dynamic(torch_ops):
    torch, op = torch_ops
    torch._dynamo.reset()
    count = counter(torch)

    @torch.compile(fullgraph=True, backend=count)
    def f(x, y, w):
        return op["Softplus"](op["MatMul"](op["Add"](x, y), w))

    y, w = torch.randn(3), torch.randn(3, 5)
    for n in (4, 7, 11):
        x = torch.randn(n, 3)
        torch._dynamo.mark_dynamic(x, 0)
        torch.testing.assert_close(
            f(x, y, w), torch.nn.functional.softplus((x + y) @ w))
    assert count.frame_count == 1


def test_torch_export_with_dynamic_shapes(torch_ops):
    torch, op = torch_ops

    class Model(torch.nn.Module):
        def forward(self, x, y, w):
            return op["Softplus"](op["MatMul"](op["Add"](x, y), w))

    b, k = torch.export.Dim("b"), torch.export.Dim("k")
    args = (torch.randn(4, 3), torch.randn(3), torch.randn(3, 5))
    exported = torch.export.export(
        Model(), args, dynamic_shapes=({0: b, 1: k}, {0: k}, {0: k}))
    out_shape = exported.graph_signature.output_specs[0].arg.name
    node = next(n for n in exported.graph.nodes if n.name == out_shape)
    assert str(node.meta["val"].shape[0]) != "4"  # symbolic
    for n, kk in [(2, 6), (9, 1), (5, 3)]:
        x, y, w = torch.randn(n, kk), torch.randn(kk), torch.randn(kk, 5)
        torch.testing.assert_close(
            exported.module()(x, y, w),
            torch.nn.functional.softplus((x + y) @ w), rtol=1e-5, atol=1e-5)


def test_torch_assumption_is_a_constraint(torch_ops):
    """MatMul's inner dims as two export Dims: the shape function assumes
    them equal, and torch says so instead of exporting a wrong program."""
    torch, op = torch_ops

    class Model(torch.nn.Module):
        def forward(self, a, b):
            return op["MatMul"](a, b)

    k1, k2 = torch.export.Dim("k1"), torch.export.Dim("k2")
    with pytest.raises(Exception, match="k1|k2"):
        torch.export.export(Model(), (torch.randn(2, 3), torch.randn(3, 4)),
                            dynamic_shapes=({1: k1}, {0: k2}))


def test_torch_op_without_symbolic_shapes(torch_ops):
    """An op that does not declare symbolic shapes: torch.compile retraces
    per size as before; a size marked dynamic is refused, naming it."""
    torch, op = torch_ops
    torch._dynamo.reset()
    count = counter(torch)

    @torch.compile(dynamic=True, backend=count)
    def f(x):
        return op["kt_ops.Scale"](x) + 1

    for n in (3, 4, 5):
        torch.testing.assert_close(f(torch.ones(n)), torch.full((n,), 3.0))
    assert count.frame_count == 3

    class Model(torch.nn.Module):
        def forward(self, x):
            return op["kt_ops.Scale"](x)

    message = (r"kt_ops.Scale.{1,4}: its shape function is not symbolic "
               r"\(the op does not declare KC_OP_SYMBOLIC_SHAPES\)")
    with pytest.raises(Exception, match=message):
        torch.export.export(Model(), (torch.ones(4),),
                            dynamic_shapes=({0: torch.export.Dim("n")},))
    torch._dynamo.reset()
    g = torch.compile(lambda x: op["kt_ops.Scale"](x), fullgraph=True,
                      backend="aot_eager")
    x = torch.ones(4)
    torch._dynamo.mark_dynamic(x, 0)
    with pytest.raises(Exception, match=message):
        g(x)


def test_torch_gradients_with_dynamic_shapes(torch_ops):
    """Backward through Add (broadcast) and MatMul, compiled with dynamic
    shapes: AddGrad and MatMulGrad trace symbolically too."""
    torch, op = torch_ops
    torch._dynamo.reset()
    count = counter(torch)

    @torch.compile(fullgraph=True, dynamic=True, backend=count)
    def loss(x, bias, w):
        return op["Softplus"](op["MatMul"](op["Add"](x, bias), w)).sum()

    for n in (3, 6, 10, 13):
        x = torch.randn(n, 4, requires_grad=True)
        bias = torch.randn(4, requires_grad=True)
        w = torch.randn(4, 2, requires_grad=True)
        loss(x, bias, w).backward()
        x2, b2, w2 = (t.detach().clone().requires_grad_() for t in
                      (x, bias, w))
        torch.nn.functional.softplus((x2 + b2) @ w2).sum().backward()
        for got, want in [(x.grad, x2.grad), (bias.grad, b2.grad),
                          (w.grad, w2.grad)]:
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
    assert count.frame_count <= 2


def test_torch_readme_example_runs(repo, scale_plugin):
    """The README's from_torch.py itself, as the docs show it."""
    pytest.importorskip("torch")
    done = subprocess.run(
        [sys.executable, str(repo / "examples/everywhere/from_torch.py"),
         str(scale_plugin)], capture_output=True, text=True, timeout=300,
        env=os.environ)
    assert done.returncode == 0, done.stdout + done.stderr


# ---- JAX -----------------------------------------------------------------


@pytest.fixture(scope="module")
def jax_ops(ops):
    jax = pytest.importorskip(
        "jax", reason="JAX is not installed: `make test EXTRAS=jax` installs "
        "it")
    import jax.export  # noqa: F401
    import kcall.jax
    with jax.default_device(jax.devices("cpu")[0]):
        yield jax, kcall.jax.call_op


def export(jax, f, *specs, names=("Add", "MatMul", "Softplus")):
    checks = [jax.export.DisabledSafetyCheck.custom_call("kcall." + n)
              for n in names]
    return jax.export.export(jax.jit(f), disabled_checks=checks)(*specs)


def test_jax_export_with_symbolic_shapes(jax_ops):
    jax, call = jax_ops
    n, = jax.export.symbolic_shape("n")
    exp = export(jax, lambda x, y: call("Softplus", call("Add", x, y)),
                 jax.ShapeDtypeStruct((n,), np.float32),
                 jax.ShapeDtypeStruct((n,), np.float32))
    assert str(exp.out_avals[0].shape) == "(n,)"
    for size in (3, 8):
        x = np.linspace(-2, 2, size, dtype=np.float32)
        np.testing.assert_allclose(np.asarray(exp.call(x, x)),
                                   np.log1p(np.exp(2 * x)), rtol=1e-5)

    b, n = jax.export.symbolic_shape("b, n")
    exp = export(jax, lambda x, y, w: call("Softplus",
                                           call("MatMul", call("Add", x, y),
                                                w)),
                 jax.ShapeDtypeStruct((b, n), np.float32),
                 jax.ShapeDtypeStruct((n,), np.float32),
                 jax.ShapeDtypeStruct((n, 5), np.float32))
    assert str(exp.out_avals[0].shape) == "(b, 5)"
    rng = np.random.default_rng(0)
    for bb, nn in [(2, 3), (6, 4)]:
        x = rng.standard_normal((bb, nn), dtype=np.float32)
        y = rng.standard_normal(nn, dtype=np.float32)
        w = rng.standard_normal((nn, 5), dtype=np.float32)
        np.testing.assert_allclose(np.asarray(exp.call(x, y, w)),
                                   np.log1p(np.exp((x + y) @ w)), rtol=1e-4,
                                   atol=1e-5)


def test_jax_export_of_a_gradient(jax_ops):
    jax, call = jax_ops
    b, n = jax.export.symbolic_shape("b, n")
    grad = jax.grad(lambda x, y: call("Add", x, y).sum(), argnums=(0, 1))
    exp = export(jax, grad, jax.ShapeDtypeStruct((b, n), np.float32),
                 jax.ShapeDtypeStruct((n,), np.float32),
                 names=("Add", "AddGrad"))
    for bb, nn in [(2, 3), (5, 7)]:
        gx, gy = exp.call(np.ones((bb, nn), np.float32),
                          np.ones(nn, np.float32))
        np.testing.assert_array_equal(np.asarray(gx), np.ones((bb, nn)))
        np.testing.assert_array_equal(np.asarray(gy), np.full(nn, bb))


def test_jax_refuses_what_it_cannot_prove(jax_ops):
    jax, call = jax_ops
    n, m = jax.export.symbolic_shape("n, m")
    with pytest.raises(ValueError, match=r"op 'Add': its shape function "
                       r"assumes n == m"):
        export(jax, lambda x, y: call("Add", x, y),
               jax.ShapeDtypeStruct((n,), np.float32),
               jax.ShapeDtypeStruct((m,), np.float32))


def test_jax_refuses_an_op_without_symbolic_shapes(jax_ops):
    jax, call = jax_ops
    n, = jax.export.symbolic_shape("n")
    with pytest.raises(ValueError, match=r"op 'kt_ops.Scale': its shape "
                       r"function is not symbolic"):
        export(jax, lambda x: call("kt_ops.Scale", x),
               jax.ShapeDtypeStruct((n,), np.float32),
               names=("kt_ops.Scale",))
    # Concrete shapes work as before.
    np.testing.assert_allclose(
        np.asarray(jax.jit(lambda x: call("kt_ops.Scale", x))(
            np.ones(3, np.float32))), np.full(3, 2.0))
