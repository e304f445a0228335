"""Symbolic shapes, framework-neutral: what the JAX and PyTorch adapters
share to give an op's output sizes as expressions of its inputs' symbolic
sizes (op.h, "Symbolic dims").

The op's shape function runs once on named symbols (kcall's
``op_infer_symbolic``); its answer is a tree of ``("input", i, d)``,
``("add"|"sub"|"mul"|"floordiv", x, y)`` and integers, evaluated here on
the framework's own sizes (JAX's symbolic dims, torch's SymInts), which
carry the arithmetic. Each assumption the shape function made comes back
as ``(a, kind, b)`` on those sizes; the adapter decides what to do with it
(JAX refuses what its dims do not show, torch turns it into a
``torch._check``).
"""

import operator

from . import _core

_ARITHMETIC = {"add": operator.add, "sub": operator.sub,
               "mul": operator.mul, "floordiv": operator.floordiv}

# How each kind of assumption reads in a message, and its test.
RELATIONS = {
    "eq": ("==", lambda a, b: a == b),
    "ge": (">=", lambda a, b: a >= b),
    "divisible": ("divisible by", lambda a, b: a % b == 0),
}


def infer(handle, shapes, dtypes, attrs, is_symbolic, symbol_name):
    """Runs the op's shape function on `shapes` (sequences of the
    framework's sizes, one per input, with `dtypes` their kcall dtype
    names). `is_symbolic(d)` tells a symbolic size; `symbol_name(d)` names
    it, one name per distinct expression (equal sizes, one symbol).

    Returns ``(outputs, assumptions)``: outputs ``[(shape, dtype)]``, each
    shape a tuple of the framework's sizes (None for an unknown rank);
    assumptions ``[(a, kind, b)]`` with `kind` a key of RELATIONS."""
    described = [([symbol_name(d) if is_symbolic(d) else int(d) for d in shape],
                  dtype) for shape, dtype in zip(shapes, dtypes)]
    result = _core.op_infer_symbolic(handle, described, attrs)

    def size(e):
        if e is None or isinstance(e, int):
            return e
        kind, x, y = e
        if kind == "input":
            return shapes[x][y]
        return _ARITHMETIC[kind](size(x), size(y))

    outputs = [(None if shape is None else tuple(size(d) for d in shape), dtype)
               for shape, dtype in result["outputs"]]
    assumptions = [(size(x), kind, size(y))
                   for kind, x, y in result["assumptions"]]
    return outputs, assumptions
