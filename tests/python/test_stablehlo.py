"""StableHLO from JAX in Python: kcall.Program.from_jax, from_exported,
parse and load of what jax prints by default, each checked against JAX
and against the same program read as HLO text."""
import numpy as np
import pytest

import kcall

jax = pytest.importorskip("jax", reason="the StableHLO tests need jax")
jnp = jax.numpy
from jax import export  # noqa: E402  (jax 0.5.3 does not import it itself)


def _mlp(params, x):
    for w, b in params[:-1]:
        x = jax.nn.gelu(x @ w + b)
    w, b = params[-1]
    return jax.nn.log_softmax(x @ w + b, axis=-1)


def _params(rng, sizes):
    return [((rng.standard_normal((m, n)) / np.sqrt(m)).astype(np.float32),
             (rng.standard_normal(n) * 0.1).astype(np.float32))
            for m, n in zip(sizes[:-1], sizes[1:])]


def _loss(params, x, y):
    return -jnp.mean(jnp.sum(_mlp(params, x) * y, axis=-1))


def test_from_jax_runs_a_training_step_as_jax_does():
    """The gradient of an MLP's loss and an SGD step: dot_general, reduce,
    broadcast_in_dim, erf (gelu), log_softmax, transposes."""
    rng = np.random.default_rng(0)
    params = _params(rng, [16, 32, 8])
    x = rng.standard_normal((4, 16)).astype(np.float32)
    y = np.eye(8, dtype=np.float32)[rng.integers(0, 8, 4)]

    def step(params, x, y):
        loss, g = jax.value_and_grad(_loss)(params, x, y)
        return loss, jax.tree.map(lambda p, d: p - 0.1 * d, params, g)

    program = kcall.Program.from_jax(step, params, x, y)
    flat = jax.tree.leaves((params, x, y))
    got = program.compile()(*flat)
    want = jax.tree.leaves(jax.jit(step)(params, x, y))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-5, atol=2e-6)


def test_stablehlo_and_hlo_text_give_the_same_bits():
    """The same function read from both texts: one plan, the same result."""
    rng = np.random.default_rng(1)
    params = _params(rng, [8, 16, 4])
    x = rng.standard_normal((5, 8)).astype(np.float32)
    lowered = jax.jit(_mlp).lower(params, x)
    flat = jax.tree.leaves((params, x))
    a = kcall.Program.parse(lowered.as_text()).compile()(*flat)
    b = kcall.Program.parse(lowered.as_text(dialect="hlo")).compile()(*flat)
    assert np.array_equal(np.asarray(a), np.asarray(b))


def test_control_flow_sort_and_gather():
    """scan (a while whose body captures values), cond (a case), sort,
    take (gather) and a scatter-add."""
    def f(xs, i, idx):
        def body(c, x):
            return c * 0.5 + jnp.sin(x), c
        c, ys = jax.lax.scan(body, jnp.zeros(3, jnp.float32), xs)
        z = jax.lax.cond(i > 0, lambda v: v * 2.0, lambda v: v - 1.0, c)
        s = jnp.sort(ys, axis=0)
        g = jnp.take(xs, idx, axis=0)
        h = jnp.zeros((6, 3), jnp.float32).at[idx].add(g)
        return z, s, g, h

    rng = np.random.default_rng(2)
    xs = rng.standard_normal((6, 3)).astype(np.float32)
    idx = np.array([5, 0, 0, 3], np.int32)
    run = kcall.Program.from_jax(f, xs, np.int32(1), idx).compile()
    for i in (1, -1):
        got = run(xs, np.int32(i), idx)
        want = jax.jit(f)(xs, np.int32(i), idx)
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6, atol=1e-6)


def test_from_exported_and_load(tmp_path):
    rng = np.random.default_rng(3)
    params = _params(rng, [8, 4])
    x = rng.standard_normal((2, 8)).astype(np.float32)
    exported = export.export(jax.jit(_mlp), platforms=["cpu"])(params, x)
    flat = jax.tree.leaves((params, x))
    want = np.asarray(jax.jit(_mlp)(params, x))
    got = kcall.Program.from_exported(exported).compile()(*flat)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-6)
    path = tmp_path / "mlp.mlir"
    path.write_text(exported.mlir_module())
    program = kcall.Program.load(str(path))
    assert [name for name, _ in program.parameters] == ["arg0", "arg1", "arg2"]
    np.testing.assert_allclose(np.asarray(program.compile()(*flat)), want,
                               rtol=1e-6, atol=1e-6)


def test_exports_for_several_platforms_run_the_cpu_lowering():
    """A serialized export's calling convention: the platform index
    argument bound to the CPU's lowering, not a parameter."""
    pytest.importorskip("flatbuffers", reason="JAX serializes an export only with the "
                        "flatbuffers package, which jax does not install")
    x = np.linspace(-1, 1, 6, dtype=np.float32)
    both = export.export(jax.jit(jnp.sin), platforms=["cuda", "cpu"])(x)
    program = kcall.Program.from_exported(both)
    assert len(program.parameters) == 1
    np.testing.assert_allclose(np.asarray(program.compile()(x)), np.sin(x), rtol=1e-6)
    again = kcall.Program.parse(bytes(both.serialize()))
    np.testing.assert_allclose(np.asarray(again.compile()(x)), np.sin(x), rtol=1e-6)


def test_what_cannot_run_is_refused_by_name():
    def f(x):
        return jax.lax.lgamma(x)

    x = np.ones((3,), np.float32)
    with pytest.raises(kcall.InvalidArgumentError, match=r"line \d+, column \d+: op "
                       r"chlo.lgamma is not supported"):
        kcall.Program.from_jax(f, x)
    tpu = export.export(jax.jit(jnp.sin), platforms=["tpu"])(x)
    # Refused from the serialized form (kcall.UnimplementedError), or,
    # without flatbuffers to serialize with, before (ValueError).
    with pytest.raises((kcall.UnimplementedError, ValueError), match="tpu"):
        kcall.Program.from_exported(tpu)
    with pytest.raises(TypeError, match="expected a jax.export.Exported, got str"):
        kcall.Program.from_exported("module {}")
    with pytest.raises(TypeError, match="expected a function, got int"):
        kcall.Program.from_jax(3, x)


def test_shape_polymorphic_exports_compile_once_per_shape():
    """jax.export with a symbolic batch: one module, run for three batch
    sizes, compiled for two; what it computes is what the export's own
    call computes."""
    rng = np.random.default_rng(4)
    params = _params(rng, [8, 16, 4])
    b, = export.symbolic_shape("b")
    spec = jax.ShapeDtypeStruct((b, 8), np.float32)
    exported = export.export(jax.jit(_mlp), platforms=["cpu"])(params, spec)
    poly = kcall.Program.from_exported(exported)
    assert isinstance(poly, kcall.ShapePolymorphicProgram)
    run = poly.compile()
    for n in (3, 17, 3):
        x = rng.standard_normal((n, 8)).astype(np.float32)
        got = run(*jax.tree.leaves((params, x)))
        np.testing.assert_allclose(np.asarray(got), np.asarray(exported.call(params, x)),
                                   rtol=1e-5, atol=1e-6)
    assert [shapes[-1] for shapes in run.compiled_shapes] == ["f32[3,8]", "f32[17,8]"]
    # The same through from_jax, with the symbolic spec as the example.
    again = kcall.Program.from_jax(_mlp, params, spec)
    assert isinstance(again, kcall.ShapePolymorphicProgram)
    assert again.program(shapes={"arg4": "f32[2,8]"}).result_shape == "f32[2,4]"
    text = exported.mlir_module()
    assert kcall.Program.parse(text, shapes=[None] * 4 + ["f32[5,8]"]).result_shape == "f32[5,4]"
    # The module's own checks: an empty batch fails its shape assertion.
    with pytest.raises(kcall.InvalidArgumentError,
                       match="Expected value >= 1 for dimension variable 'b'"):
        poly.program(shapes={"arg4": "f32[0,8]"})
    with pytest.raises(kcall.FailedPreconditionError, match=r"parameter 4 \(%arg4\) has the "
                       r"type f32\[\?,8\]"):
        kcall.Program.parse(text)
    with pytest.raises(kcall.InvalidArgumentError, match="not of its type f32"):
        poly.program(shapes={"arg4": "f32[5,9]"})
    with pytest.raises(TypeError, match="shapes: expected a list of shapes or a dict"):
        kcall.Program.parse(text, shapes=3)


def test_from_jax_int4_and_float8_weights_take_their_bytes():
    """A function of int4 and f8 weights (dequantised, then a matmul): the
    program's parameters take the weights' bytes (an ml_dtypes array is
    refused with the view to pass), and give JAX's result."""
    if not hasattr(jnp, "int4") or not hasattr(jnp, "float8_e4m3fn"):
        pytest.skip("this jax has no int4 or float8_e4m3fn")

    def f(w4, w8, x):
        return x @ (w4.astype(jnp.float32) * 0.5 + w8.astype(jnp.float32))

    w4 = np.arange(-8, 8).reshape(4, 4).astype(jnp.int4)
    w8 = np.linspace(-3, 3, 16).reshape(4, 4).astype(jnp.float8_e4m3fn)
    x = np.random.default_rng(3).standard_normal((2, 4)).astype(np.float32)
    program = kcall.Program.from_jax(f, w4, w8, x)
    assert [p[1] for p in program.parameters] == ["s8[4,4]", "u8[4,4]", "f32[2,4]"]
    exe = program.compile()
    with pytest.raises(TypeError, match=r"dtype int4.*x\.view\(np\.int8\)"):
        exe(w4, w8, x)
    with pytest.raises(TypeError, match=r"dtype float8_e4m3fn.*x\.view\(np\.uint8\)"):
        exe(w4.view(np.int8), w8, x)
    got = np.asarray(exe(w4.view(np.int8), w8.view(np.uint8), x))
    np.testing.assert_allclose(got, np.asarray(jax.jit(f)(w4, w8, x)), rtol=1e-6, atol=1e-6)
