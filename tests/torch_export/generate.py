"""Generates tests/fixtures/torch_export: PyTorch models as StableHLO.

    python tests/torch_export/generate.py [--out DIR]

Each model (a small MLP, and a convolutional net: two Conv2d, max-pooling,
a Linear) is exported with torch.export, turned into a jax.export.Exported
by torchax (`torchax.export.exported_program_to_stablehlo`, the route
PyTorch models take to StableHLO without XLA), and written as
DIR/CASE/module.mlir (`Exported.mlir_module()`), DIR/CASE/module.bc (the
portable artifact) and DIR/CASE/exported.jax_exported (`serialize()`).
The module's parameters are the model's weights, then its input, in the
order torchax flattens them; DIR/CASE/inputN.npy holds them and
DIR/CASE/output0.npy what the PyTorch model itself computes (not JAX), and
manifest.json lists each case's counts. ctest runs every form with `kcall
run` and compares with PyTorch's output.

Needs torch, torchax (0.0.13), jax and jaxlib 0.10.2, flatbuffers and
numpy. torchax 0.0.13 names operator overloads that newer torch (2.15)
dropped (named-tensor variants such as aten.prod.dim_Dimname, and
aten.cholesky): while torchax loads, a missing overload or operator reads
as a placeholder that no exported model uses. Deterministic (fixed seeds).
"""

import argparse
import json
import os

import numpy as np
import torch
# torch's own modules first, while its operator lookups are untouched.
import torch._dynamo  # noqa: F401
import torch._functorch.aot_autograd  # noqa: F401
import torch.export
import torch.export._trace  # noqa: F401
import torch._ops as torch_ops

HERE = os.path.dirname(os.path.abspath(__file__))


def _tolerate_missing_overloads():
    """Placeholders for the operators torchax names and torch no longer has."""
    packet_getattr = torch_ops.OpOverloadPacket.__getattr__
    namespace_getattr = torch_ops._OpNamespace.__getattr__

    class Missing:
        def __init__(self, name):
            self.name = name

        def __getattr__(self, key):
            if key.startswith("__"):
                raise AttributeError(key)
            return ("missing operator", self.name, key)

    def packet(self, key):
        try:
            return packet_getattr(self, key)
        except AttributeError:
            if key.startswith("__"):
                raise
            return ("missing overload", str(self), key)

    def namespace(self, key):
        try:
            return namespace_getattr(self, key)
        except AttributeError:
            if key.startswith("__"):
                raise
            return Missing(key)

    torch_ops.OpOverloadPacket.__getattr__ = packet
    torch_ops._OpNamespace.__getattr__ = namespace


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = torch.nn.Linear(8, 32)
        self.l2 = torch.nn.Linear(32, 5)

    def forward(self, x):
        return torch.log_softmax(self.l2(torch.nn.functional.gelu(self.l1(x))), dim=-1)


class CNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.c2 = torch.nn.Conv2d(8, 8, 3, stride=2)
        self.fc = torch.nn.Linear(8 * 3 * 3, 10)

    def forward(self, x):
        h = torch.relu(self.c1(x))
        h = torch.nn.functional.max_pool2d(h, 2)
        h = torch.relu(self.c2(h))
        return self.fc(h.flatten(1))


CASES = {
    "mlp": (MLP, (4, 8)),
    "cnn": (CNN, (2, 3, 16, 16)),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(HERE, "..", "fixtures", "torch_export"))
    args = ap.parse_args()
    torch.manual_seed(0)
    exported = {}
    for name, (cls, shape) in CASES.items():
        model = cls().eval()
        x = torch.randn(*shape)
        with torch.no_grad():
            want = model(x).numpy()
        exported[name] = (torch.export.export(model, (x,)), x, want)
    _tolerate_missing_overloads()
    import jax
    from torchax import export as tx_export
    jax.config.update("jax_platforms", "cpu")
    jax.config.update("jax_hlo_source_file_canonicalization_regex", r".*/")
    manifest = {"torch": torch.__version__, "cases": []}
    for name, (program, x, want) in exported.items():
        weights, exp = tx_export.exported_program_to_stablehlo(program)
        leaves = jax.tree_util.tree_leaves((weights, (x.numpy(),)))
        case_dir = os.path.join(args.out, name)
        os.makedirs(case_dir, exist_ok=True)
        with open(os.path.join(case_dir, "module.mlir"), "w") as f:
            f.write(exp.mlir_module())
        with open(os.path.join(case_dir, "module.bc"), "wb") as f:
            f.write(exp.mlir_module_serialized)
        with open(os.path.join(case_dir, "exported.jax_exported"), "wb") as f:
            f.write(exp.serialize())
        for i, leaf in enumerate(leaves):
            np.save(os.path.join(case_dir, f"input{i}.npy"), np.asarray(leaf))
        np.save(os.path.join(case_dir, "output0.npy"), want)
        manifest["cases"].append({"name": name, "inputs": len(leaves), "outputs": 1})
        print(name, len(leaves), "inputs", want.shape)
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
