"""kcall ops inside ONNX Runtime (kcall.ort, libkcall_ort), against the
real onnxruntime and models built with the onnx package.

onnxruntime and onnx are not part of the default test environment: `make
test EXTRAS=ort` installs them, and these tests skip without them.
"""

import ctypes

import numpy as np
import pytest

ORT_SKIP = "onnxruntime and onnx are not installed: `make test EXTRAS=ort` installs them"
ort = pytest.importorskip("onnxruntime", reason=ORT_SKIP)
onnx = pytest.importorskip("onnx", reason=ORT_SKIP)
from onnx import TensorProto, helper  # noqa: E402

import kcall  # noqa: E402
import kcall.ort  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def ops(ops_plugin):
    kcall.load_plugin(ops_plugin)


def model(nodes, inputs, outputs, domain="kcall"):
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                helper.make_opsetid(domain, 1)])
    m.ir_version = 8
    return m.SerializeToString()


def tensor(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def session(nodes, inputs, outputs, domain="kcall"):
    options = ort.SessionOptions()
    skipped = kcall.ort.register(options, domain=domain)
    assert skipped == {}, skipped
    return ort.InferenceSession(model(nodes, inputs, outputs, domain), options)


F32 = TensorProto.FLOAT


def test_single_op_graphs_match_numpy():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 5)).astype(np.float32)
    b = rng.standard_normal((5, 2)).astype(np.float32)
    y = rng.standard_normal(5).astype(np.float32)
    cases = [
        ("Add", [("x", a), ("y", y)], a + y),
        ("MatMul", [("x", a), ("y", b)], a @ b),
        ("Softplus", [("x", a)], np.log1p(np.exp(a))),
    ]
    for op, feeds, want in cases:
        names = [n for n, _ in feeds]
        s = session([helper.make_node(op, names, ["out"], domain="kcall")],
                    [tensor(n, F32, v.shape) for n, v in feeds],
                    [tensor("out", F32, None)])
        # Output types and shapes come from the op's shape function.
        assert s.get_outputs()[0].shape == list(want.shape), op
        got = s.run(None, dict(feeds))[0]
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, err_msg=op)


def test_types_follow_the_inputs():
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    s = session([helper.make_node("Add", ["x", "y"], ["z"], domain="kcall")],
                [tensor("x", TensorProto.INT32, [2, 3]), tensor("y", TensorProto.INT32, [3])],
                [tensor("z", TensorProto.INT32, None)])
    assert s.get_outputs()[0].type == "tensor(int32)"
    np.testing.assert_array_equal(s.run(None, {"x": x, "y": x[0]})[0], x + x[0])


def test_a_variadic_input_and_an_attribute():
    # Concat(values: N * T, axis: int = 0): N from the node's inputs.
    a = np.ones((2, 3), np.float32)
    b = np.zeros((1, 3), np.float32)
    c = np.full((2, 3), 2, np.float32)
    s = session([helper.make_node("Concat", ["a", "b", "c"], ["out"], domain="kcall")],
                [tensor("a", F32, [2, 3]), tensor("b", F32, [1, 3]), tensor("c", F32, [2, 3])],
                [tensor("out", F32, None)])
    assert s.get_outputs()[0].shape == [5, 3]
    np.testing.assert_array_equal(s.run(None, {"a": a, "b": b, "c": c})[0],
                                  np.concatenate([a, b, c]))
    s = session([helper.make_node("Concat", ["a", "c"], ["out"], domain="kcall", axis=1)],
                [tensor("a", F32, [2, 3]), tensor("c", F32, [2, 3])],
                [tensor("out", F32, None)])
    assert s.get_outputs()[0].shape == [2, 6]
    np.testing.assert_array_equal(s.run(None, {"a": a, "c": c})[0],
                                  np.concatenate([a, c], axis=1))


def test_a_model_mixing_onnx_and_kcall_ops_with_a_dynamic_batch():
    # x [batch, 8] @ w [8, 4] (kcall MatMul) + bias (ONNX Add), then kcall's
    # Softplus and ONNX's ReduceSum over the features.
    rng = np.random.default_rng(1)
    w = rng.standard_normal((8, 4)).astype(np.float32)
    bias = rng.standard_normal(4).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["h"], domain="kcall"),
        helper.make_node("Add", ["h", "bias"], ["hb"]),
        helper.make_node("Softplus", ["hb"], ["s"], domain="kcall"),
        helper.make_node("ReduceSum", ["s", "axes"], ["out"], keepdims=0),
    ]
    graph = helper.make_graph(
        nodes, "mixed", [tensor("x", F32, ["batch", 8])], [tensor("out", F32, None)],
        initializer=[helper.make_tensor("w", F32, [8, 4], w.ravel()),
                     helper.make_tensor("bias", F32, [4], bias),
                     helper.make_tensor("axes", TensorProto.INT64, [1], [1])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                helper.make_opsetid("kcall", 1)])
    m.ir_version = 8
    options = ort.SessionOptions()
    kcall.ort.register(options)
    s = ort.InferenceSession(m.SerializeToString(), options)
    assert s.get_outputs()[0].shape == ["batch"]
    for batch in (1, 5, 64):
        x = rng.standard_normal((batch, 8)).astype(np.float32)
        want = np.log1p(np.exp(x @ w + bias)).sum(axis=1)
        np.testing.assert_allclose(s.run(None, {"x": x})[0], want, rtol=1e-5)


def test_the_batch_dim_keeps_its_name():
    s = session([helper.make_node("Add", ["x", "y"], ["z"], domain="kcall")],
                [tensor("x", F32, ["batch", 4]), tensor("y", F32, [4])],
                [tensor("z", F32, None)])
    assert s.get_outputs()[0].shape == ["batch", 4]


def test_another_domain():
    s = session([helper.make_node("Softplus", ["x"], ["y"], domain="mine")],
                [tensor("x", F32, [3])], [tensor("y", F32, None)], domain="mine")
    x = np.array([-1, 0, 1], np.float32)
    np.testing.assert_allclose(s.run(None, {"x": x})[0], np.log1p(np.exp(x)), rtol=1e-6)


def test_bad_nodes_are_refused_when_the_session_is_created():
    options = ort.SessionOptions()
    kcall.ort.register(options)
    # A type outside the op's allowed set (Add's T: {f32, f64, i32}): its
    # overloads carry their types, so ONNX Runtime itself refuses it.
    m = model([helper.make_node("Add", ["x", "y"], ["z"], domain="kcall")],
              [tensor("x", F32, [3]), tensor("y", TensorProto.INT64, [3])],
              [tensor("z", F32, None)])
    with pytest.raises(Exception, match=r"operator \(Add\)"):
        ort.InferenceSession(m, options)
    # Two allowed types that differ: no overload takes them.
    m = model([helper.make_node("Add", ["x", "y"], ["z"], domain="kcall")],
              [tensor("x", F32, [3]), tensor("y", TensorProto.DOUBLE, [3])],
              [tensor("z", F32, None)])
    with pytest.raises(Exception, match="Add"):
        ort.InferenceSession(m, options)
    # A wrong rank: the op's shape function, when the kernel is made.
    m = model([helper.make_node("MatMul", ["x", "y"], ["z"], domain="kcall")],
              [tensor("x", F32, [2, 2, 2]), tensor("y", F32, [2, 2])],
              [tensor("z", F32, None)])
    with pytest.raises(Exception, match="kcall op 'MatMul'"):
        ort.InferenceSession(m, options)
    # A bad attribute value.
    m = model([helper.make_node("Concat", ["x", "y"], ["z"], domain="kcall", axis=5)],
              [tensor("x", F32, [2, 2]), tensor("y", F32, [2, 2])],
              [tensor("z", F32, None)])
    with pytest.raises(Exception, match="kcall op 'Concat'.*axis"):
        ort.InferenceSession(m, options)
    # An attribute of another kind than the op's (a float axis): refused,
    # never left to the default.
    m = model([helper.make_node("Concat", ["x", "y"], ["z"], domain="kcall", axis=1.0)],
              [tensor("x", F32, [2, 2]), tensor("y", F32, [2, 2])],
              [tensor("z", F32, None)])
    with pytest.raises(Exception, match="kcall op 'Concat': attribute 'axis': expected an int"):
        ort.InferenceSession(m, options)


def test_a_wrong_shape_at_run_time_names_the_op():
    s = session([helper.make_node("MatMul", ["x", "y"], ["z"], domain="kcall")],
                [tensor("x", F32, ["m", "k"]), tensor("y", F32, ["k2", "n"])],
                [tensor("z", F32, None)])
    with pytest.raises(Exception, match="kcall op 'MatMul'"):
        s.run(None, {"x": np.ones((2, 3), np.float32), "y": np.ones((4, 2), np.float32)})


# ---- an ONNX Runtime older than the bridge needs ------------------------------

CREATE_STATUS = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p)
GET_API = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_uint32)
VERSION = ctypes.CFUNCTYPE(ctypes.c_char_p)


class ApiBase(ctypes.Structure):
    _fields_ = [("get_api", GET_API), ("get_version_string", VERSION)]


def test_an_onnx_runtime_older_than_1_17_is_refused_clearly():
    # A fake OrtApiBase of API version 16: GetApi(17) answers NULL, and the
    # version-1 table's CreateStatus records what the bridge says.
    said = []

    @CREATE_STATUS
    def create_status(code, message):
        said.append((code, message.decode()))
        return 1234

    table = (ctypes.c_void_p * 1)(ctypes.cast(create_status, ctypes.c_void_p))

    @GET_API
    def get_api(version):
        return ctypes.addressof(table) if version <= 16 else None

    @VERSION
    def version_string():
        return b"1.16.3"

    lib = ctypes.CDLL(kcall.ort.library())
    lib.RegisterCustomOps.restype = ctypes.c_void_p
    lib.RegisterCustomOps.argtypes = [ctypes.c_void_p, ctypes.POINTER(ApiBase)]
    base = ApiBase(get_api, version_string)
    assert lib.RegisterCustomOps(None, ctypes.byref(base)) == 1234
    assert said == [(1, "kcall: libkcall_ort needs ONNX Runtime 1.17 or newer (C API "
                        "version 17); this is ONNX Runtime 1.16.3")]


def test_a_type_attribute_given_by_name_and_an_op_without_inputs():
    # Bitcast(input: T) -> (output: type): the node names the result type.
    x = np.array([1.0, -2.0], np.float32)
    s = session([helper.make_node("Bitcast", ["x"], ["y"], domain="kcall", type="i32")],
                [tensor("x", F32, [2])], [tensor("y", TensorProto.INT32, None)])
    assert s.get_outputs()[0].type == "tensor(int32)"
    np.testing.assert_array_equal(s.run(None, {"x": x})[0], x.view(np.int32))
    # ... or as an ONNX element type, as Cast's `to` is (INT32).
    s = session([helper.make_node("Bitcast", ["x"], ["y"], domain="kcall",
                                  type=TensorProto.INT32)],
                [tensor("x", F32, [2])], [tensor("y", TensorProto.INT32, None)])
    np.testing.assert_array_equal(s.run(None, {"x": x})[0], x.view(np.int32))
    # Counter() -> (count: i64), start and step from the node: state lives
    # in the kernel, one per session node.
    s = session([helper.make_node("Counter", [], ["n"], domain="kcall", start=10, step=5)],
                [], [tensor("n", TensorProto.INT64, None)])
    assert [int(s.run(None, {})[0]) for _ in range(3)] == [10, 15, 20]


def test_ops_it_cannot_offer_are_named(build_file):
    # examples/ops offers every op; the names of those skipped come back.
    options = ort.SessionOptions()
    assert kcall.ort.register(options) == {}
    with pytest.raises(ValueError, match="domain"):
        kcall.ort.register(options, domain="")


def test_a_later_registration_takes_ops_loaded_since(scale_plugin):
    # Scale(x: f32, factor: float) from examples/everywhere: loaded after
    # the first registrations, offered by the next one; a session made
    # before keeps running.
    x = np.array([1, 2, 3], np.float32)
    before = session([helper.make_node("Softplus", ["x"], ["y"], domain="kcall")],
                     [tensor("x", F32, [3])], [tensor("y", F32, None)])
    kcall.load_plugin(scale_plugin)
    after = session([helper.make_node("Scale", ["x"], ["y"], domain="kcall", factor=2.5)],
                    [tensor("x", F32, [3])], [tensor("y", F32, None)])
    np.testing.assert_allclose(after.run(None, {"x": x})[0], 2.5 * x)
    np.testing.assert_allclose(before.run(None, {"x": x})[0], np.log1p(np.exp(x)), rtol=1e-6)


THREADS_SCRIPT = r"""
import os, sys
import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper
import kcall, kcall.ort
kcall.load_plugin(sys.argv[1])
n = 1 << 20
graph = helper.make_graph(
    [helper.make_node("Add", ["x", "y"], ["z"], domain="kcall")], "g",
    [helper.make_tensor_value_info(v, TensorProto.FLOAT, [n]) for v in "xy"],
    [helper.make_tensor_value_info("z", TensorProto.FLOAT, [n])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                helper.make_opsetid("kcall", 1)])
model.ir_version = 8
options = ort.SessionOptions()
options.intra_op_num_threads = 1
options.inter_op_num_threads = 1
kcall.ort.register(options)
session = ort.InferenceSession(model.SerializeToString(), options)
x = np.ones(n, np.float32)
before = len(os.listdir("/proc/self/task"))
for _ in range(3):
    assert (session.run(None, {"x": x, "y": x})[0] == 2).all()
print(before, len(os.listdir("/proc/self/task")))
"""


def test_kernels_run_on_the_sessions_threads(ops_plugin):
    # The example Add splits 1M elements across the pool it is given: here
    # ONNX Runtime's, of one thread, so no thread is started (kcall's own
    # pool would start its workers).
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-c", THREADS_SCRIPT, str(ops_plugin)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    before, after = map(int, done.stdout.split())
    assert after == before, done.stdout
