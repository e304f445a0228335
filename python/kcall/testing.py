"""Native functions for tests and benchmarks, registered on import as
"kcall.testing.NAME": nop(*args), echo(x), apply(f, *args), catch(f, *args) (None, or the
[code, text] of the status a C caller of f(*args) sees), types(*args),
fail(code, message), sum(t), fill(t, value), describe(t), arange(dtype, n),
keep(x) / kept(), call_in_thread(f, *args), call_parallel(f, n).

They are written as a plugin's functions are, so they exercise kcall's
calling convention from the native side.
"""

from . import _core, get_func

_core._register_testing()

nop = get_func("kcall.testing.nop")
echo = get_func("kcall.testing.echo")
apply = get_func("kcall.testing.apply")
catch = get_func("kcall.testing.catch")
types = get_func("kcall.testing.types")
fail = get_func("kcall.testing.fail")
sum = get_func("kcall.testing.sum")  # noqa: A001 (the native function's name)
fill = get_func("kcall.testing.fill")
describe = get_func("kcall.testing.describe")
arange = get_func("kcall.testing.arange")
keep = get_func("kcall.testing.keep")
kept = get_func("kcall.testing.kept")
call_in_thread = get_func("kcall.testing.call_in_thread")
call_parallel = get_func("kcall.testing.call_parallel")
