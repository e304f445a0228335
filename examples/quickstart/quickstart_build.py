# quickstart_build.py
import numpy as np

import kcall

kcall.build("mylib", ["mylib.c"])  # compiles (once: cached) and loads it
run = kcall.Program.load("axpy.hlo").compile()
x = np.array([1, 2, 3, 4], dtype=np.float32)
y = np.full(4, 0.5, dtype=np.float32)
print(np.asarray(run(x, y)))
print(kcall.get_func("mylib.add")(2, 3))
