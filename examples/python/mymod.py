import kcall

@kcall.register_func("mymod.add")
def add(a, b):
    return a + b

@kcall.register_func("mymod.fail")
def fail(x):
    raise ValueError(f"refusing {x}")
