# from_torch.py
import sys

import torch

import kcall
import kcall.torch

kcall.load_plugin(sys.argv[1])
scale = kcall.torch.register_op("Scale")  # torch.ops.kcall.Scale


@torch.compile(fullgraph=True)
def f(x):
    return scale(x, factor=3.0) + 1


print(f(torch.arange(4, dtype=torch.float32)))
