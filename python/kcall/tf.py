"""kcall ops as TensorFlow ops.

``libkcall_tf.so`` (beside libkcall in the package) is a TensorFlow op
library: loaded by TensorFlow, it defines every kcall op registered in
the process (those of loaded plugins) as a TensorFlow op with a CPU
kernel. ``load()`` loads it and attaches each op's declared gradient, so
``tf.GradientTape`` differentiates it::

    import kcall, kcall.tf, tensorflow as tf
    kcall.load_plugin("libops_plugin.so")
    ops = kcall.tf.load()
    z = ops.Add(tf.ones([3]), tf.ones([3]))      # TensorFlow op KcallAdd

``ops.NAME`` (``ops["dotted.name"]``) is TensorFlow's own wrapper of the
op: inputs positional, attrs by keyword, usable eagerly, in
``tf.function``, Keras layers and saved models (load the library again,
with ``load()``, before ``tf.saved_model.load``). docs/tensorflow.md has
the name, type and shape rules.
"""

import ctypes
import os
import re
import shutil
import tempfile
import threading

from . import config

__all__ = ["library", "load", "tf_name"]

_lock = threading.Lock()
_functions = {}    # kcall name -> TensorFlow's wrapper
_tf_names = {}     # kcall name -> TensorFlow op name
_skipped = {}      # kcall name -> why TensorFlow has it not
_graded = set()    # TensorFlow op names with a gradient registered
_loads = 0


def library():
    """The path of libkcall_tf.so."""
    path = os.path.join(config.get_lib_dir(), "libkcall_tf.so")
    if not os.path.isfile(path):
        raise FileNotFoundError("this kcall has no TensorFlow bridge (%s)" % path)
    return path


def tf_name(name):
    """The TensorFlow op name of the kcall op `name`: "Kcall" and the
    name with the first letter of each dotted part upper-cased and the
    dots dropped ("Add" -> "KcallAdd", "my.ops.rms_norm" ->
    "KcallMyOpsRms_norm")."""
    return "Kcall" + "".join(p[:1].upper() + p[1:] for p in name.split(".") if p)


class Ops:
    """The kcall ops TensorFlow has, by kcall name: ``ops.Add``,
    ``ops["my.Op"]``. Each is TensorFlow's wrapper of the op."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        fn = self[name]
        setattr(self, name, fn)  # found directly from now on
        return fn

    def __getitem__(self, name):
        fn = _functions.get(name)
        if fn is None:
            if name in _skipped:
                raise KeyError(f"kcall op {name!r} is not a TensorFlow op: "
                               f"{_skipped[name]}")
            raise KeyError(f"no kcall op {name!r} was registered when "
                           f"kcall.tf.load() last ran (load its plugin, "
                           f"then call load() again)")
        return fn

    def __contains__(self, name):
        return name in _functions

    def __dir__(self):
        return sorted(n for n in _functions if n.isidentifier())

    @property
    def tf_names(self):
        """{kcall name: TensorFlow op name} of the ops TensorFlow has."""
        return dict(_tf_names)

    @property
    def skipped(self):
        """{kcall name: why} of the ops TensorFlow could not take."""
        return dict(_skipped)


_ops = Ops()


def _snake(name):
    """TensorFlow's Python name of an op: its CamelCase in snake_case, an
    underscore before a capital that follows a lower-case letter or starts
    a word after a capital or a digit (MatMul: mat_mul, Conv2D: conv2d,
    Conv2DGrad: conv2d_grad)."""
    s = re.sub(r"(?<=[a-z])([A-Z])", r"_\1", name)
    s = re.sub(r"(?<=[A-Z0-9])([A-Z][a-z])", r"_\1", s)
    return s.lower()


def _read(path):
    """What the library loaded from `path` registered, {name: (TensorFlow
    name, whether its graph shapes need attrs)}, and skipped, {name: why}."""
    lib = ctypes.CDLL(path)
    for fn in (lib.kcall_tf_registered, lib.kcall_tf_skipped):
        fn.restype = ctypes.c_char_p
    registered = {}
    for line in (lib.kcall_tf_registered() or b"").decode().splitlines():
        name, tf, shapes = line.split("\t")
        registered[name] = (tf, shapes == "attrs")
    skipped = {}
    for line in (lib.kcall_tf_skipped() or b"").decode().splitlines():
        name, _, why = line.partition(": ")
        skipped[name] = why
    return registered, skipped


def _load_library(tf, names):
    """Loads the library for the ops `names` (None: every op): the
    package's file the first time, then a copy of it, since a process
    loads one file once and the library registers ops as it loads."""
    global _loads
    if _loads == 0:
        path = library()
        module = tf.load_op_library(path)
        _loads += 1
        return module, _read(path)
    scratch = tempfile.mkdtemp(prefix="kcall-tf-")
    path = os.path.join(scratch, "libkcall_tf_%d.so" % _loads)
    shutil.copyfile(library(), path)
    saved = os.environ.get("KCALL_TF_OPS")
    os.environ["KCALL_TF_OPS"] = ",".join(sorted(names))
    try:
        module = tf.load_op_library(path)
        _loads += 1
        return module, _read(path)
    finally:
        if saved is None:
            del os.environ["KCALL_TF_OPS"]
        else:
            os.environ["KCALL_TF_OPS"] = saved
        shutil.rmtree(scratch, ignore_errors=True)


def load():
    """Makes the kcall ops registered now TensorFlow ops (those a former
    call made stay), with their declared gradients, and returns them as
    an `Ops`. Ops registered later need another call. Imports
    TensorFlow."""
    import tensorflow as tf
    from . import _core, _gradient
    with _lock:
        known = set(_core.list_ops(""))
        new = known - set(_functions) - set(_skipped)
        if not new and _loads:
            return _ops
        module, (registered, skipped) = _load_library(tf, None if not _loads else new)
        _skipped.update(skipped)
        for name, (tfname, needs_attrs) in registered.items():
            fn = getattr(module, _snake(tfname), None)
            if fn is None:
                _skipped[name] = (f"TensorFlow made no Python function "
                                  f"{_snake(tfname)!r} for op {tfname}")
                continue
            _functions[name] = _with_graph_shapes(tf, name, fn) if needs_attrs else fn
            _tf_names[name] = tfname
        for name in registered:
            if name in _functions:
                _register_gradient(tf, name, _gradient.describe(name)[1])
    return _ops


def _kcall_value(v):
    """An attr value as TensorFlow's op.get_attr gives it, as kcall takes
    it: dtypes by name, bytes as text."""
    if isinstance(v, (list, tuple)):
        return [_kcall_value(x) for x in v]
    if isinstance(v, bytes):
        return v.decode()
    if hasattr(v, "as_numpy_dtype"):  # a tf.DType
        return v.name
    return v


def _with_graph_shapes(tf, name, fn):
    """`fn` (TensorFlow's wrapper of an op whose shape function could read
    an attr TensorFlow's shape context does not give) that, in a graph,
    runs the shape function on the node's attrs and its inputs' static
    shapes (unknown dims as symbols) and sets the outputs' shapes, so
    that a Keras layer or a tf.function sees them. Eager calls are the
    wrapper's own."""
    from . import _core, _gradient
    handle, info = _gradient.describe(name)
    inferred = _gradient.inferred_attrs(info)
    attr_names = [_gradient._spec_parts(s)[0] for s in info["attrs"]]

    def call(*args, **kwargs):
        out = fn(*args, **kwargs)
        if tf.executing_eagerly():
            return out
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        if not outs:
            return out
        op = outs[0].op
        inputs = list(op.inputs)
        described, symbols = [], 0
        for t in inputs:
            if t.shape.rank is None:
                return out  # nothing to go on
            dims = []
            for d in t.shape.as_list():
                if d is None:
                    dims.append("s%d" % symbols)
                    symbols += 1
                else:
                    dims.append(d)
            described.append((dims, t.dtype.name))
        attrs = {k: _kcall_value(op.get_attr(k)) for k in attr_names if k not in inferred}
        try:
            result = _core.op_infer_symbolic(handle, described, attrs)
        except Exception:
            return out  # the kernel reports it with the real shapes
        for t, (shape, _) in zip(outs, result["outputs"]):
            if shape is None:
                continue
            dims = []
            for d in shape:
                if isinstance(d, int):
                    dims.append(d)
                elif d and d[0] == "input":
                    dims.append(inputs[d[1]].shape[d[2]])
                else:
                    dims.append(None)
            t.set_shape(dims)
        return out

    call.__name__, call.__doc__ = fn.__name__, fn.__doc__
    return call


def _counts(op, info):
    """How many of op.inputs each declared input arg takes."""
    from .ops import _spec_parts
    counts = []
    for spec in info["inputs"]:
        _, kind = _spec_parts(spec)
        if "*" in kind:
            counts.append(op.get_attr(kind.split("*")[0].strip()))
        elif any(_spec_parts(a)[0] == kind and "list(" in _spec_parts(a)[1]
                 for a in info["attrs"]):
            counts.append(len(op.get_attr(kind)))
        else:
            counts.append(1)
    return counts


def _register_gradient(tf, name, info):
    """Attaches the op's gradient declaration (op.h, "Gradients") to its
    TensorFlow op: the gradient op, a TensorFlow op too, runs on the
    forward call's inputs, outputs and output cotangents."""
    from . import _gradient
    tfname = _tf_names[name]
    if not info.get("gradient") or tfname in _graded:
        return

    class _Call(_gradient.Call):
        def _check_like(self, result, x, index, side):
            if result.dtype != x.dtype or \
                    not result.shape.is_compatible_with(x.shape):
                raise ValueError(
                    f"gradient op {self.grad_name!r} of op {self.name!r} "
                    f"returned a {result.dtype.name} tensor of shape "
                    f"{result.shape} for {side} {index}, which is a "
                    f"{x.dtype.name} tensor of shape {x.shape}: a gradient "
                    f"has its {side}'s shape and dtype")

    def gradient(op, *grads):
        flat = list(op.inputs)
        counts = _counts(op, info)
        grouped, start = [], 0
        from .ops import _list_inputs
        for (_, is_list), n in zip(_list_inputs(info), counts):
            grouped.append(flat[start:start + n] if is_list else flat[start])
            start += n
        outputs = list(op.outputs)
        grads = [g if g is not None else tf.zeros_like(o)
                 for g, o in zip(grads, outputs)]
        call = _Call(name, info, grouped, {}, len(outputs))
        grad_name = call.grad_name
        if grad_name not in _functions:
            raise LookupError(
                f"the gradient op {grad_name!r} of kcall op {name!r} is not "
                f"a TensorFlow op: "
                f"{_skipped.get(grad_name, 'it was not registered when kcall.tf.load() ran')}")
        _, grad_info = _gradient.describe(grad_name)
        wanted = {_gradient._spec_parts(s)[0] for s in grad_info["attrs"]}
        wanted -= _gradient.inferred_attrs(grad_info)
        forward = {_gradient._spec_parts(s)[0] for s in info["attrs"]}
        attrs = {k: op.get_attr(k) for k in wanted & forward}
        results = _functions[grad_name](*call.grad_inputs(flat, outputs, grads),
                                        **attrs)
        if not isinstance(results, (list, tuple)):
            results = [results]
        return call.input_cotangents(list(results), flat)

    tf.RegisterGradient(tfname)(gradient)
    _graded.add(tfname)
