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


x = torch.arange(4, dtype=torch.float32, requires_grad=True)
y = f(x)
y.sum().backward()  # through Scale's declared gradient
print(y.detach(), x.grad)
