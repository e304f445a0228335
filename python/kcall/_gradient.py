"""What the JAX and PyTorch adapters share to differentiate a kcall op: its
gradient and forward-mode declarations (op.h, "Gradients", "Forward-mode
rules"), read once, and the bookkeeping of
one call's tensors, framework-neutral (arrays are whatever the framework
passes).

A declaration names args (an "N * T" input is one arg of N tensors); a call
passes tensors, flat. `Call` keeps the grouping of one call so that the
gradient op gets, for each item the declaration names, the tensor (or the
list of tensors) of that arg, and its outputs land on the right inputs.
"""

from . import _core
from .ops import _attr_value, _list_inputs, _spec_parts

_described = {}


def describe(name):
    """(handle, info) of the op `name`, cached."""
    known = _described.get(name)
    if known is None:
        handle = _core.op_lookup(name)
        known = _described[name] = (handle, _core.op_describe(handle))
    return known


def inferred_attrs(info):
    """The attrs a call infers from its inputs (T of "x: T", N and T of
    "xs: N * T", L of "xs: L"): never given, so never passed on."""
    names = set()
    for spec in info["inputs"]:
        _, kind = _spec_parts(spec)
        names.update(kind.replace("*", " ").split())
    return names


def gradient_attrs(info, grad_info, attrs):
    """The attrs the gradient op gets: each attr of the forward op that the
    gradient op declares under the same name and does not infer, with the
    value the forward call used (given, else its default)."""
    values = {k: _attr_value(v) for k, v in info["defaults"].items()}
    values.update(attrs)
    wanted = {_spec_parts(s)[0] for s in grad_info["attrs"]}
    wanted -= inferred_attrs(grad_info)
    return {k: v for k, v in values.items() if k in wanted}


def _groups(counts):
    groups, start = [], 0
    for n in counts:
        groups.append((start, n))
        start += n
    return groups


class Call:
    """One call of an op with a derivative rule: how its flat inputs and
    outputs group into the declared args, and what the rule's op takes.
    `kind` is "gradient" (the reverse-mode declaration, whose op returns
    input cotangents) or "jvp" (the forward-mode one, whose op returns
    output tangents)."""

    def __init__(self, name, info, inputs, attrs, num_outputs,
                 kind="gradient"):
        self.name = name
        self.kind = kind
        self.grad = info[kind]
        self.grad_name = self.grad["op"]
        lists = _list_inputs(info)
        counts = [len(x) if lists[i][1] and isinstance(x, (list, tuple))
                  else 1 for i, x in enumerate(inputs)]
        self.input_groups = _groups(counts)
        self.input_lists = [flag for _, flag in lists]
        out_lists = _list_inputs({"inputs": info["outputs"],
                                  "attrs": info["attrs"]})
        nlist = sum(1 for _, flag in out_lists if flag)
        fixed = len(out_lists) - nlist
        if nlist > 1:
            raise NotImplementedError(
                f"op {name!r}: differentiating an op with more than one list "
                f"output is not supported")
        self.output_lists = [flag for _, flag in out_lists]
        self.output_groups = _groups(
            [num_outputs - fixed if flag else 1 for _, flag in out_lists])
        _, grad_info = describe(self.grad_name)
        self.grad_attrs = gradient_attrs(info, grad_info, attrs)
        # Whether the rule op is told which of its outputs are used
        # (kcall/op.h, "Gradients": the attr kc_needed).
        self.takes_needed = kind == "gradient" and any(
            _spec_parts(s)[0] == "kc_needed" for s in grad_info["attrs"])

    def needed_attrs(self, needs):
        """{"kc_needed": mask} for a gradient op that takes it, when
        `needs` (a flag per flat input: does it want a cotangent) leaves
        some of the op's outputs unused; else {}."""
        if not self.takes_needed:
            return {}
        mask = 0
        for j, index in enumerate(self.grad["results"]):
            if any(needs[s] for s in range(*self._span(index))):
                mask |= 1 << j
        return {} if mask == (1 << len(self.grad["results"])) - 1 else \
            {"kc_needed": mask}

    def _span(self, index):
        start, n = self.input_groups[index]
        return start, start + n

    def _arg(self, flat, groups, lists, index):
        start, n = groups[index]
        return list(flat[start:start + n]) if lists[index] else flat[start]

    def grad_inputs(self, inputs, outputs, extra):
        """The rule op's inputs, from the flat inputs, outputs and `extra`
        of the call: the output cotangents for a gradient, the input
        tangents for a jvp."""
        args = []
        for source, index in self.grad["args"]:
            if source == "input":
                args.append(self._arg(inputs, self.input_groups,
                                      self.input_lists, index))
            elif source == "output":
                args.append(self._arg(outputs, self.output_groups,
                                      self.output_lists, index))
            elif source == "tangent":
                args.append(self._arg(extra, self.input_groups,
                                      self.input_lists, index))
            else:
                args.append(self._arg(extra, self.output_groups,
                                      self.output_lists, index))
        return args

    def tangent_inputs(self):
        """The flat input positions whose tangents the jvp op reads."""
        used = []
        for source, index in self.grad["args"]:
            if source == "tangent":
                start, n = self.input_groups[index]
                used.extend(range(start, start + n))
        return used

    def input_cotangents(self, results, inputs):
        """The gradient op's flat outputs placed on the flat `inputs` they
        belong to; None for the inputs the declaration leaves out. Each
        must have its input's shape and dtype: a framework would otherwise
        sum a wrong shape back into the input's, or cast a wrong dtype,
        and give a wrong gradient."""
        return self._place(results, inputs, self.input_groups, "input")

    def output_tangents(self, results, outputs):
        """The jvp op's flat outputs placed on the flat `outputs` whose
        tangents they are; None for the outputs it leaves out. Each must
        have its output's shape and dtype."""
        return self._place(results, outputs, self.output_groups, "output")

    def _place(self, results, like, groups, side):
        out = [None] * len(like)
        pos = 0
        what = "gradient" if self.kind == "gradient" else "jvp"
        for index in self.grad["results"]:
            start, n = groups[index]
            for k in range(n):
                if pos >= len(results):
                    raise ValueError(
                        f"{what} op {self.grad_name!r} of op "
                        f"{self.name!r} returned {len(results)} tensors, "
                        f"fewer than its declaration "
                        f"{self.grad['spec']!r} needs")
                self._check_like(results[pos], like[start + k], start + k,
                                 side)
                out[start + k] = results[pos]
                pos += 1
        if pos != len(results):
            raise ValueError(
                f"{what} op {self.grad_name!r} of op {self.name!r} "
                f"returned {len(results)} tensors, more than its "
                f"declaration {self.grad['spec']!r} gives")
        return out

    def _check_like(self, result, x, index, side):
        def dtype(t):  # "float32" for NumPy's, JAX's and torch's alike
            return str(t.dtype).replace("torch.", "")
        got = (tuple(result.shape), dtype(result))
        want = (tuple(x.shape), dtype(x))
        if got != want:
            what = "gradient" if self.kind == "gradient" else "tangent"
            op = "gradient" if self.kind == "gradient" else "jvp"
            raise ValueError(
                f"{op} op {self.grad_name!r} of op {self.name!r} "
                f"returned a {got[1]} tensor of shape {list(got[0])} for "
                f"{side} {index}, which is a {want[1]} tensor of shape "
                f"{list(want[0])}: a {what} has its {side}'s shape and dtype")
