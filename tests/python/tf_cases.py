"""kcall ops inside TensorFlow (kcall.tf, libkcall_tf), against the real
tensorflow-cpu: eager, tf.function with unknown dims, GradientTape to
second order, a Keras layer, saved models, bad inputs.

test_tensorflow.py runs these in a process of their own (TensorFlow and
torch.compile cannot share one) and reports each.
"""

import os
import subprocess
import sys
import sysconfig
import textwrap

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
tf = pytest.importorskip(
    "tensorflow", reason="TensorFlow is not installed: `make test EXTRAS=tf` installs it")

import kcall  # noqa: E402
import kcall.tf  # noqa: E402


@pytest.fixture(scope="module")
def ops(ops_plugin, build_file):
    kcall.load_plugin(str(ops_plugin))
    kcall.load_plugin(str(build_file("examples/ops_cpp/libops_cpp_plugin.so")))
    return kcall.tf.load()


def rng():
    return np.random.default_rng(0)


def test_every_op_of_the_examples_is_a_tensorflow_op(ops):
    assert ops.skipped == {}
    assert ops.tf_names["Add"] == "KcallAdd"
    assert ops.tf_names["cpp.Clip"] == "KcallCppClip"
    assert kcall.tf.tf_name("my.ops.rms_norm") == "KcallMyOpsRms_norm"
    assert "Add" in ops and "MatMul" in dir(ops)


def test_eager_calls_match_tensorflow(ops):
    r = rng()
    a = r.standard_normal((3, 5)).astype(np.float32)
    b = r.standard_normal((5, 2)).astype(np.float32)
    y = r.standard_normal(5).astype(np.float32)
    np.testing.assert_allclose(ops.Add(a, y).numpy(), a + y, rtol=1e-6)
    np.testing.assert_allclose(ops.MatMul(a, b).numpy(), a @ b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ops.Softplus(a).numpy(), tf.nn.softplus(a).numpy(), rtol=1e-6)
    d = r.standard_normal((2, 3))  # f64
    np.testing.assert_allclose(ops.Add(d, d).numpy(), d + d)
    # A list input ("N * T") with an attr, an attr with a non-finite
    # default, a non-inferred type attr, and an op without inputs.
    np.testing.assert_array_equal(ops.Concat([a, a], axis=1).numpy(),
                                  np.concatenate([a, a], axis=1))
    np.testing.assert_array_equal(ops["cpp.Clip"](y, lo=-0.5, hi=0.5).numpy(),
                                  np.clip(y, -0.5, 0.5))
    np.testing.assert_array_equal(ops["cpp.Clip"](y).numpy(), y)
    np.testing.assert_array_equal(ops.Bitcast(y, type=tf.int32).numpy(), y.view(np.int32))
    np.testing.assert_array_equal(ops["cpp.Range"](n=4).numpy(), np.arange(4))


def test_builtin_conv_and_pool_match_tensorflow_with_gradients(ops):
    """kc.Conv2D and kc.MaxPool in TensorFlow's NHWC and HWIO, against
    tf.nn.conv2d and tf.nn.max_pool2d, gradients through GradientTape."""
    r = rng()
    x = tf.constant(r.standard_normal((2, 9, 8, 4)), tf.float32)
    w = tf.constant(r.standard_normal((3, 3, 4, 6)), tf.float32)

    def mine(x, w):
        y = ops["kc.Conv2D"](x, w, strides=[2, 1], padding=[1], dilations=[1, 1])
        return ops["kc.MaxPool"](y, ksize=[2], strides=[1])

    def theirs(x, w):
        y = tf.nn.conv2d(x, w, [1, 2, 1, 1], [[0, 0], [1, 1], [1, 1], [0, 0]])
        return tf.nn.max_pool2d(y, 2, 1, "VALID")

    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, w])
        got, want = mine(x, w), theirs(x, w)
        lg, lw = tf.reduce_sum(tf.tanh(got)), tf.reduce_sum(tf.tanh(want))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)
    for g, t in zip(tape.gradient(lg, [x, w]), tape.gradient(lw, [x, w])):
        np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-4, atol=1e-4)


def test_stateful_op_runs_at_each_call_in_a_function(ops):
    @tf.function
    def twice():
        return ops.Counter(start=5), ops.Counter(start=5)

    first, second = twice()
    assert int(first) != int(second)  # stateful: neither merged nor cached


def test_function_with_unknown_batch_keeps_static_shapes(ops):
    shapes = {}

    @tf.function(input_signature=[tf.TensorSpec([None, 5], tf.float32),
                                  tf.TensorSpec([5, 3], tf.float32)])
    def f(a, b):
        z = ops.MatMul(a, b)
        w = ops.Add(z, z)
        c = ops.Concat([a, a], axis=0)
        t = ops["cpp.Twice"](a)
        shapes.update(z=z.shape.as_list(), w=w.shape.as_list(), c=c.shape,
                      t=t.shape.as_list())
        return w, c

    r = rng()
    for batch in (2, 7):
        a = r.standard_normal((batch, 5)).astype(np.float32)
        b = r.standard_normal((5, 3)).astype(np.float32)
        w, c = f(a, b)
        np.testing.assert_allclose(w.numpy(), 2 * (a @ b), rtol=1e-5, atol=1e-5)
        assert c.shape == (2 * batch, 5)
    assert shapes["z"] == [None, 3] and shapes["w"] == [None, 3]
    # An op whose shape function needs every dim (no KC_OP_SYMBOLIC_SHAPES):
    # its output's rank, the dims left to run time.
    assert shapes["t"] == [None, None]
    # Concat's shape depends on its axis attr, which TensorFlow's shape
    # context does not give: kcall.tf sets it from the node's attrs.
    assert shapes["c"].as_list() == [None, 5]


def test_gradient_tape_matches_compute_gradient(ops):
    r = rng()
    a = tf.constant(r.standard_normal((4, 5)), tf.float32)
    b = tf.constant(r.standard_normal((5, 3)), tf.float32)
    theoretical, numerical = tf.test.compute_gradient(lambda a, b: ops.MatMul(a, b), [a, b])
    for t, n in zip(theoretical, numerical):
        np.testing.assert_allclose(t, n, atol=2e-2)
    x = tf.constant(r.standard_normal((3, 4)))  # f64
    y = tf.constant(r.standard_normal((3, 4)))
    theoretical, numerical = tf.test.compute_gradient(
        lambda x, y: ops.Softplus(ops.Add(x, y)), [x, y])
    for t, n in zip(theoretical, numerical):
        np.testing.assert_allclose(t, n, atol=1e-7)


def test_second_order_gradient_matches_tensorflow(ops):
    x = tf.Variable([1.0, -2.0, 3.0, 0.25], dtype=tf.float64)

    def hessian_diag(softplus):
        with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
                y = tf.reduce_sum(softplus(x) ** 2)
            g = inner.gradient(y, x)
        return g, outer.gradient(g, x)

    got = hessian_diag(ops.Softplus)
    want = hessian_diag(tf.nn.softplus)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12)


def test_gradient_in_a_function_with_unknown_batch(ops):
    @tf.function(input_signature=[tf.TensorSpec([None, 5], tf.float32)])
    def grad(a):
        w = tf.ones([5, 2])
        with tf.GradientTape() as tape:
            tape.watch(a)
            y = tf.reduce_sum(ops.Softplus(ops.MatMul(a, w)))
        return tape.gradient(y, a)

    a = rng().standard_normal((6, 5)).astype(np.float32)
    with tf.GradientTape() as tape:
        t = tf.constant(a)
        tape.watch(t)
        y = tf.reduce_sum(tf.nn.softplus(t @ tf.ones([5, 2])))
    np.testing.assert_allclose(grad(a).numpy(), tape.gradient(y, t).numpy(), rtol=1e-5)


class KcallDense(tf.keras.layers.Layer):
    """A dense layer computed by kcall ops: softplus(x @ w + b)."""

    def __init__(self, units, ops):
        super().__init__()
        self.units, self.ops = units, ops

    def build(self, shape):
        self.w = self.add_weight(shape=(shape[-1], self.units), initializer="glorot_uniform")
        self.b = self.add_weight(shape=(self.units,), initializer="zeros")

    def call(self, x):
        return self.ops.Softplus(self.ops.Add(self.ops.MatMul(x, self.w), self.b))


def test_keras_layer_trains(ops):
    r = rng()
    x = r.standard_normal((64, 8)).astype(np.float32)
    y = (x @ r.standard_normal((8, 1))).astype(np.float32)
    tf.keras.utils.set_random_seed(0)
    model = tf.keras.Sequential([tf.keras.Input((8,)), KcallDense(16, ops),
                                 tf.keras.layers.Dense(1)])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.05), loss="mse")
    before = model.evaluate(x, y, verbose=0)
    model.fit(x, y, epochs=20, batch_size=16, verbose=0)
    after = model.evaluate(x, y, verbose=0)
    assert after < 0.5 * before, (before, after)
    # The same step through TensorFlow's own ops gives the same gradients.
    layer = model.layers[0]
    with tf.GradientTape() as tape:
        out = layer(x)
        mine = tf.reduce_sum(out)
    got = tape.gradient(mine, [layer.w, layer.b])
    with tf.GradientTape() as tape:
        theirs = tf.reduce_sum(tf.nn.softplus(tf.matmul(x, layer.w) + layer.b))
    want = tape.gradient(theirs, [layer.w, layer.b])
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-4, atol=1e-5)


def test_keras_sees_the_shapes_of_ops_with_attrs(ops, scale_plugin):
    """An op with a float attr (Scale) before a Dense layer, which needs
    its input's last dim when Keras builds the model."""
    kcall.load_plugin(str(scale_plugin))
    ops = kcall.tf.load()

    class Scaled(tf.keras.layers.Layer):
        def call(self, x):
            return ops.Concat([ops.Scale(x, factor=0.5), x], axis=1)

    model = tf.keras.Sequential([tf.keras.Input((4,)), Scaled(), tf.keras.layers.Dense(2)])
    assert model.layers[-1].kernel.shape == (8, 2)
    x = np.ones((3, 4), np.float32)
    y = model(x).numpy()
    want = np.concatenate([0.5 * x, x], axis=1) @ model.layers[-1].kernel.numpy()
    np.testing.assert_allclose(y, want + model.layers[-1].bias.numpy(), rtol=1e-5)


def test_saved_model_loads_in_a_new_process(ops, ops_plugin, tmp_path):
    class Module(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
        def __call__(self, x):
            return ops.Softplus(ops.Add(x, x))

    path = str(tmp_path / "saved")
    tf.saved_model.save(Module(), path)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    want = tf.nn.softplus(x + x).numpy()
    script = textwrap.dedent(f"""
        import numpy as np, kcall, kcall.tf, tensorflow as tf
        kcall.load_plugin({str(ops_plugin)!r})
        kcall.tf.load()
        m = tf.saved_model.load({path!r})
        np.save({str(tmp_path / 'got.npy')!r}, m(np.arange(6, dtype=np.float32).reshape(2, 3)).numpy())
    """)
    subprocess.run([sys.executable, "-c", script], check=True, env=dict(os.environ))
    np.testing.assert_allclose(np.load(tmp_path / "got.npy"), want, rtol=1e-6)


def test_bad_inputs_are_tensorflow_errors_naming_the_op(ops):
    x = tf.constant([1.0, 2.0, 3.0])
    # A dtype outside the op's type set: TensorFlow's own check.
    with pytest.raises((tf.errors.InvalidArgumentError, TypeError), match="KcallAdd|int64"):
        ops.Add(tf.constant([1], tf.int64), tf.constant([1], tf.int64))
    # Shapes kcall's shape function refuses, eagerly ...
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"kcall op 'Add' \(TensorFlow op KcallAdd\).*broadcast"):
        ops.Add(x, tf.constant([1.0, 2.0]))
    # ... and when a graph is built (rank refused at trace time).
    with pytest.raises(ValueError, match="kcall op 'MatMul'"):
        tf.function(lambda a: ops.MatMul(a, a)).get_concrete_function(
            tf.TensorSpec([3], tf.float32))
    # A required attr not given: TensorFlow's wrapper says which.
    with pytest.raises(TypeError, match="type"):
        ops.Bitcast(x)
    # An op that is not there.
    with pytest.raises(KeyError, match="no kcall op 'Nope'"):
        ops.Nope


def test_ops_registered_later_are_added_by_another_load(ops, build_file):
    kcall.load_plugin(str(build_file("examples/ops/libops_repeat.so")))
    assert "Twice" not in ops
    again = kcall.tf.load()
    assert again is ops and "Twice" in ops and ops.tf_names["Twice"] == "KcallTwice"
    np.testing.assert_array_equal(ops.Twice(tf.constant([1, 2])).numpy(), [1, 2, 1, 2])
    # Those of the first load still run.
    assert float(ops.Add(tf.constant(1.0), tf.constant(2.0))) == 3.0


def test_library_abi_matches_tensorflow_headers(tmp_path, repo):
    """src/tf/tf_abi.h's declarations against the installed TensorFlow's
    own C API headers: a prototype or constant that differs does not
    compile."""
    include = tf.sysconfig.get_include()
    cc = os.environ.get("CC") or sysconfig.get_config_var("CC").split()[0] or "cc"
    out = subprocess.run(
        [cc, "-std=c11", "-Wall", "-Werror", "-fsyntax-only", "-I", include,
         "-I", os.path.join(repo, "src"), os.path.join(repo, "tests/tf/check_tf_abi.c")],
        capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
