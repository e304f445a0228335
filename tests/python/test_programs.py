"""Programs from Python: parse or build, compile, run with arrays."""

from pathlib import Path

import numpy as np
import pytest

import kcall

AXPY = """
HloModule axpy

ENTRY main {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  two = f32[] constant(2)
  b = f32[4] broadcast(two), dimensions={}
  m = f32[4] multiply(b, x)
  ROOT r = f32[4] add(m, y)
}
"""


def test_parse_compile_run():
    program = kcall.Program.parse(AXPY)
    assert program.name == "axpy"
    assert program.parameters == [("x", "f32[4]"), ("y", "f32[4]")]
    assert program.result_shape == "f32[4]"
    assert "axpy" in repr(program)
    exe = program.compile()
    x = np.array([1, 2, 3, 4], np.float32)
    y = np.full(4, 0.5, np.float32)
    r = exe(x, y)
    assert isinstance(r, kcall.Tensor)
    np.testing.assert_array_equal(np.asarray(r), 2 * x + y)
    assert exe.input_shapes == ["f32[4]", "f32[4]"]
    assert exe.output_shapes == ["f32[4]"]
    stats = exe.stats
    assert stats["num_inputs"] == 2 and stats["num_outputs"] == 1
    assert "add" in stats["plan"] or "r" in stats["plan"]
    times = exe.profile(x, y)
    assert [name for name, _ in times] and all(ns >= 0 for _, ns in times)


def test_wrong_inputs_are_refused():
    exe = kcall.Program.parse(AXPY).compile()
    with pytest.raises(TypeError, match="expected 2 inputs, got 1"):
        exe(np.zeros(4, np.float32))
    with pytest.raises(kcall.InvalidArgumentError, match="input 1"):
        exe(np.zeros(4, np.float32), np.zeros(5, np.float32))
    with pytest.raises(kcall.InvalidArgumentError, match="input 0"):
        exe(np.zeros(4, np.float64), np.zeros(4, np.float32))


def test_parse_error_has_line_and_column():
    with pytest.raises(kcall.InvalidArgumentError, match="line 3"):
        kcall.Program.parse("HloModule m\nENTRY main {\n  x = f32[4] frob(0)\n}\n")


def test_load(tmp_path):
    path = tmp_path / "axpy.hlo"
    path.write_text(AXPY)
    assert kcall.Program.load(path).name == "axpy"
    # A missing file is kcall.NotFoundError, as for kcall.load_plugin.
    with pytest.raises(kcall.NotFoundError,
                       match=r"loading program '.*missing.hlo': no such file"):
        kcall.Program.load(tmp_path / "missing.hlo")
    with pytest.raises(kcall.InvalidArgumentError, match="is a directory"):
        kcall.Program.load(tmp_path)
    bad = tmp_path / "bad.hlo"
    bad.write_text("HloModule\n")
    with pytest.raises(kcall.InvalidArgumentError, match="bad.hlo"):
        kcall.Program.load(bad)


def test_seed_program_with_plugin_targets(repo, build_file):
    kcall.load_plugin(build_file("examples/xla/libxla_plugin.so"))
    exe = kcall.Program.load(repo / "examples/xla/seed_add.hlo").compile()
    b = np.arange(128, dtype=np.float32)
    c = np.arange(2048, dtype=np.float32) * 0.5
    outs = exe(b, c)
    assert isinstance(outs, tuple) and len(outs) == 3
    expected = b[np.arange(2048) % 128] + c
    for out in outs:
        np.testing.assert_array_equal(np.asarray(out), expected)


def test_failing_target_names_the_instruction(repo, build_file):
    kcall.load_plugin(build_file("examples/xla/libxla_plugin.so"))
    exe = kcall.Program.load(repo / "examples/xla/fails.hlo").compile()
    args = [np.zeros(exe_shape_dims(s), np.float32) for s in exe.input_shapes]
    with pytest.raises(kcall.Error, match="always_fails"):
        exe(*args)


def exe_shape_dims(shape):
    inside = shape[shape.index("[") + 1:shape.index("]")]
    return tuple(int(d) for d in inside.split(",") if d)


def test_builder():
    b = kcall.ProgramBuilder("built")
    x = b.parameter("f32[3]", name="x")
    c = b.constant(np.array([1, 2, 3], np.float32))
    s = b.op("add", "f32[3]", [x, c])
    e = b.op("exponential", "f32[3]", [s])
    b.tuple([s, e])
    program = b.finish()
    with pytest.raises(ValueError, match="finish"):
        b.parameter("f32[3]")
    exe = program.compile()
    s_out, e_out = exe(np.zeros(3, np.float32))
    np.testing.assert_allclose(np.asarray(s_out), [1, 2, 3])
    np.testing.assert_allclose(np.asarray(e_out), np.exp([1, 2, 3]), rtol=1e-6)


def test_builder_errors():
    b = kcall.ProgramBuilder()
    with pytest.raises(ValueError, match="unknown opcode 'frob'"):
        b.op("frob", "f32[1]", [])
    with pytest.raises(kcall.InvalidArgumentError):
        b.parameter("f32[")
    with pytest.raises(kcall.InvalidArgumentError):
        b.op("add", "f32[1]", [7, 8])
    # What a message cites is quoted as the library quotes it: escaped,
    # and a long text cut to its ends and its length.
    with pytest.raises(ValueError, match=r"unknown opcode 'fr\\x1bob' \(expected"):
        b.op("fr\x1bob", "f32[1]", [])
    with pytest.raises(ValueError) as info:
        b.op("z" * 100000, "f32[1]", [])
    assert str(info.value).startswith(
        "op: unknown opcode '%s'...'%s' (100000 bytes) (expected add, "
        % ("z" * 56, "z" * 24))
    x = b.parameter("f32[2]")
    with pytest.raises(TypeError, match=r"attribute 'a\\tb': a object; "):
        b.custom_call("t", [x], "f32[2]", attrs={"a\tb": object()})


def test_builder_custom_call_to_python_target():
    @kcall.register_target("tests.prog.scale", args=["f32"], results=["f32"],
                           attrs={"factor": "f64"}, override=True)
    def scale(x, out, *, factor):
        out[...] = x * factor

    b = kcall.ProgramBuilder("cc")
    x = b.parameter("f32[4]")
    b.custom_call("tests.prog.scale", [x], "f32[4]", api_version=4,
                  attrs={"factor": 3.0})
    exe = b.finish().compile()
    out = exe(np.arange(4, dtype=np.float32))
    np.testing.assert_array_equal(np.asarray(out), np.arange(4) * 3.0)


def test_executable_from_many_threads():
    import threading
    exe = kcall.Program.parse(AXPY).compile()
    errors = []

    def work(k):
        x = np.full(4, k, np.float32)
        for _ in range(300):
            r = np.asarray(exe(x, x))
            if not (r == 3 * k).all():
                errors.append((k, r))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_programs_md_lists_every_instruction(repo):
    """docs/programs.md's instruction table names every opcode the parser
    reads (the instruction table's names, which an unknown opcode's
    message lists), so that the list cannot fall behind the table."""
    import re
    with pytest.raises(kcall.InvalidArgumentError) as info:
        kcall.Program.parse("HloModule m\nENTRY main {\n"
                            "  x = f32[4] frob()\n}\n")
    listed = re.search(r"\(supported: ([^)]*)\)", str(info.value))
    assert listed, str(info.value)
    opcodes = set(listed.group(1).split(", "))
    assert {"parameter", "custom-call", "dot", "while"} <= opcodes
    text = (repo / "docs/programs.md").read_text()
    table = text.split("### Instructions", 1)[1].split("\n#", 1)[0]
    documented = set()
    for row in table.splitlines():
        if row.startswith("| `"):
            first_cell = row.split(" | ", 1)[0]
            documented |= set(re.findall(r"`([a-z0-9-]+)`", first_cell))
    missing = sorted(opcodes - documented)
    assert not missing, f"docs/programs.md does not list: {missing}"


SHAPE_POLY = Path(__file__).resolve().parents[1] / "fixtures" / "shape_poly"


def test_stablehlo_and_shape_polymorphic_modules_without_jax():
    """A shape-polymorphic module jax.export wrote (checked in), loaded for
    two batch sizes given as shapes, by position and by name: what JAX
    computed for each."""
    for size, shapes in ((3, ["f32[3,8]"]), (17, {"arg0": "f32[17,8]"})):
        run = kcall.Program.load(str(SHAPE_POLY / "mlp" / "module.mlir"), shapes=shapes).compile()
        inputs = [np.load(SHAPE_POLY / "mlp" / str(size) / f"input{i}.npy") for i in range(5)]
        want = np.load(SHAPE_POLY / "mlp" / str(size) / "output0.npy")
        np.testing.assert_allclose(np.asarray(run(*inputs)), want, rtol=1e-5, atol=1e-6)
    with pytest.raises(kcall.FailedPreconditionError, match="has the type f32\\[\\?,8\\]"):
        kcall.Program.load(str(SHAPE_POLY / "mlp" / "module.mlir"))
    with pytest.raises(kcall.InvalidArgumentError, match="shapes\\[0\\]"):
        kcall.Program.load(str(SHAPE_POLY / "mlp" / "module.mlir"), shapes=["f32[3,8"])


def test_serialized_exports_and_artifacts_without_jax(repo):
    """Exported.serialize() files and portable artifacts (checked in),
    read from a path and from bytes, say what they were read from and
    compute what JAX did; the platform index of a two-platform export is
    bound, so the parameters are the function's."""
    d = Path(repo) / "tests/fixtures/stablehlo_bytecode"
    inputs = [np.load(d / f"mlp.input{i}.npy") for i in range(5)]
    want = np.load(d / "mlp.output0.npy")
    for name, format in (("mlp.bc", "StableHLO portable artifact (StableHLO_v1."),
                         ("mlp.jax_exported", "serialized jax.export (calling convention 10,"),
                         ("mlp_cpu_cuda.jax_exported", "serialized jax.export")):
        for program in (kcall.Program.load(str(d / name)),
                        kcall.Program.parse((d / name).read_bytes())):
            assert program.format.startswith(format), program.format
            assert len(program.parameters) == 5
            np.testing.assert_allclose(np.asarray(program.compile()(*inputs)), want,
                                       rtol=1e-5, atol=1e-6)
    assert kcall.Program.parse("HloModule m\nENTRY e {\n  ROOT p = f32[2] parameter(0)\n}\n"
                               ).format == "HLO text"
    assert kcall.Program.from_text((d / "mlp.mlir").read_text()).format == "StableHLO text"
    with pytest.raises(kcall.UnimplementedError, match="1 ordered effect"):
        kcall.Program.load(str(d / "effects.jax_exported"))
    with pytest.raises(TypeError, match="expected str or bytes, got int"):
        kcall.Program.parse(3)


def test_programs_name_their_outputs(repo):
    """The names JAX gave the outputs (jax.result_info), from the text, the
    artifact and the serialized export; None where the producer gave none."""
    d = Path(repo) / "tests/fixtures/stablehlo_bytecode"
    for name in ("sort.mlir", "sort.bc", "sort.jax_exported"):
        program = kcall.Program.load(str(d / name))
        assert program.output_names == [f"result[{i}]" for i in range(5)], name
    assert kcall.Program.parse("HloModule m\nENTRY e {\n  ROOT p = f32[2] parameter(0)\n}\n"
                               ).output_names == [None]


def test_int4_export_takes_and_gives_bytes(repo):
    """JAX's export with int4 weights and int4/uint4 results (narrow
    integers held one to a byte): its parameters and results are int8 and
    uint8 arrays, and a parameter's bytes count by their low four bits."""
    d = Path(repo) / "tests/fixtures/stablehlo_bytecode"
    inputs = [np.load(d / f"int4.input{i}.npy") for i in range(3)]
    wants = [np.load(d / f"int4.output{i}.npy") for i in range(6)]
    program = kcall.Program.load(str(d / "int4.jax_exported"))
    assert [p[1] for p in program.parameters] == ["f32[2,8]", "s8[8,4]", "s8[16]"]
    exe = program.compile()
    got = exe(*inputs)
    for i, (g, w) in enumerate(zip(got, wants)):
        g = np.asarray(g)
        assert g.dtype == w.dtype, (i, g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6, err_msg=f"output {i}")
    # The same weights with other bits above the low four: the same result.
    high = (inputs[1].view(np.uint8) ^ np.uint8(0xF0) * (inputs[1] >= 0)).view(np.int8)
    np.testing.assert_allclose(np.asarray(exe(inputs[0], high, inputs[2])[0]), wants[0],
                               rtol=1e-6, atol=1e-6)


def test_serialized_export_sized_by_its_dimension_variables(repo):
    """A shape-polymorphic serialized export ("b, 8"), its shapes given as
    the dimension variable b: rows of what JAX computed for batch 4."""
    d = Path(repo) / "tests/fixtures/stablehlo_bytecode"
    inputs = [np.load(d / f"mlp.input{i}.npy") for i in range(5)]
    want = np.load(d / "mlp.output0.npy")
    for b in (4, 2):
        program = kcall.Program.load(str(d / "mlp_batch.jax_exported"), dims={"b": b})
        assert program.parameters[0] == ("arg0", f"f32[{b},8]")
        got = program.compile()(inputs[0][:b], *inputs[1:])
        np.testing.assert_allclose(np.asarray(got), want[:b], rtol=1e-5, atol=1e-6)
    with pytest.raises(kcall.InvalidArgumentError,
                       match="no value is given for dimension variable 'b'"):
        kcall.Program.load(str(d / "mlp_batch.jax_exported"), dims={"c": 2})
    with pytest.raises(kcall.InvalidArgumentError, match="Expected value >= 1 for dimension "
                       "variable 'b'"):
        kcall.Program.load(str(d / "mlp_batch.jax_exported"), dims={"b": 0})
    with pytest.raises(kcall.InvalidArgumentError, match="only for a serialized jax.export"):
        kcall.Program.load(str(d / "mlp.bc"), dims={"b": 2})
    with pytest.raises(ValueError, match=r"dims\['b'\]: expected a size"):
        kcall.Program.load(str(d / "mlp_batch.jax_exported"), dims={"b": -1})
