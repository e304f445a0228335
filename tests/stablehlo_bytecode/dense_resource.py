"""Writes tests/fixtures/stablehlo_bytecode/dense_resource.mlir.

    .venv-with-jax-torch-tvm/bin/python tests/stablehlo_bytecode/dense_resource.py [--out DIR]

A module whose constants are dense_resource blobs, printed by MLIR itself
(jaxlib's bindings, as torch-mlir and other exporters hold large weights):
weights f32[2,3] (i/4) and a pred[3] mask, `main(x) = (x + w, mask)`. The blobs follow
the module in `{-# dialect_resources: { builtin: {...} } #-}`. Needs
jaxlib (0.10.2) and numpy; deterministic.
"""

import argparse
import os

import numpy as np
from jax._src.interpreters import mlir as jmlir
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func, stablehlo


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(here, "..", "fixtures", "stablehlo_bytecode"))
    args = ap.parse_args()
    with jmlir.make_ir_context(), ir.Location.unknown():
        module = ir.Module.create()
        f32 = ir.RankedTensorType.get([2, 3], ir.F32Type.get())
        i1 = ir.RankedTensorType.get([3], ir.IntegerType.get_signless(1))
        w = np.arange(6, dtype=np.float32).reshape(2, 3) / 4
        mask = np.array([True, False, True])
        w_attr = ir.DenseResourceElementsAttr.get_from_buffer(memoryview(w), "weights.0", f32)
        m_attr = ir.DenseResourceElementsAttr.get_from_buffer(
            memoryview(mask.astype(np.uint8)), "mask", i1)
        with ir.InsertionPoint(module.body):
            fn = func.FuncOp("main", ir.FunctionType.get([f32], [f32, i1]))
            fn.attributes["sym_visibility"] = ir.StringAttr.get("public")
            block = fn.add_entry_block()
            with ir.InsertionPoint(block):
                c = stablehlo.ConstantOp(w_attr)
                m = stablehlo.ConstantOp(m_attr)
                s = stablehlo.AddOp(block.arguments[0], c)
                func.ReturnOp([s, m])
        text = module.operation.get_asm(large_elements_limit=None)
    with open(os.path.join(args.out, "dense_resource.mlir"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
