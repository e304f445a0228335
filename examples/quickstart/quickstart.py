# quickstart.py
import numpy as np

import kcall

kcall.load_plugin("./libmylib.so")
run = kcall.Program.load("axpy.hlo").compile()
x = np.array([1, 2, 3, 4], dtype=np.float32)
y = np.full(4, 0.5, dtype=np.float32)
print(np.asarray(run(x, y)))
