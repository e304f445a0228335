# use_typed.py: the typed plugins from Python.
import sys

import numpy as np

import kcall

for path in sys.argv[1:]:  # libtyped_plugin.so libtyped_c_plugin.so
    kcall.load_plugin(path)

add = kcall.get_func("typed.add")
print(add(2, 3))
try:
    add(2, "three")
except kcall.InvalidArgumentError as e:
    print(e)
print(kcall.get_func("typed.greet")("kcall", 2))
y = kcall.get_func("typed.scaled")(np.arange(4, dtype=np.float32), 0.5)
print(np.asarray(y).tolist())
print(kcall.get_func("typed.twice")(lambda v: v * 3, 2))
scaler = kcall.get_func("typed.make_scaler")(10)
print(scaler(1.5))
x = np.zeros(3, dtype=np.float32)
kcall.get_func("ctyped.fill")(x, 2.5)
print(x.tolist())
