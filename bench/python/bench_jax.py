"""Custom calls in JAX and in kcall: 1,000 chained calls of y = x + 1 on
f32[16], in one run.

  jax_native   a jitted JAX function calling an XLA FFI handler built with
               XLA's C++ headers (AddOne in tests/xla_ffi/handlers.cc, the
               checked-in tests/fixtures/xla_ffi/libjax_handlers.so);
  jax_kcall    the same function calling the same kernel written as a kcall
               typed target (add_one_target.c) through kcall's XLA FFI
               adapter (kcall.jax.register_target);
  jax_kcall_instantiate
               the same again with a target that has an INSTANTIATE stage
               (registered with XLA's instantiate stage too): the adapter
               looks its call-site record up in XLA's state on every call.
               Its cost over jax_kcall is the figure docs/xla_ffi.md
               quotes;
  kcall_run    the XLA FFI handler of jax_native, registered with kcall
               (kcall.register_xla_ffi) and run by kcall's program runtime,
               the engine of `kcall run`, on the HLO JAX printed for the
               same chain (tests/fixtures/xla_ffi/add_one_chain1000).

And large_add_loop: a jitted loop of 1,000 kcall ops Add (the example
plugin's) on f32[1M], against the same loop with jnp's add: what running
an op's parallel loops on XLA's intra-op pool (rather than on kcall's own
pool beside it) gives; kcall's figure was 1.4x slower on kcall's pool.

Each figure is the time of one execution, minus the time of an execution
with no custom call (an identity jit for JAX, a one-instruction program for
kcall), divided by 1,000: the cost of one custom call. The best of
--repeat runs is kept. Targets: jax_kcall at most 1.10x jax_native;
kcall_run at most 0.15x jax_native. Writes its object into
OUT/results.json (see run_bench.py).
"""
import argparse
import ctypes
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
FIXTURES = REPO / "tests/fixtures/xla_ffi"
CALLS = 1000
ADAPTER_TARGET = 1.10
KCALL_RUN_TARGET = 0.15

sys.path.insert(0, str(HERE))
from run_bench import merge_results  # noqa: E402


def build_plugin(out):
    """add_one_target.c against the installed package's headers."""
    cflags = subprocess.run([sys.executable, "-m", "kcall.config", "--cflags"],
                            capture_output=True, text=True,
                            check=True).stdout.split()
    path = out / "libbench_add_one.so"
    cc = os.environ.get("CC", "cc")
    subprocess.run([cc, "-std=c11", "-O2", "-shared", "-fPIC", *cflags,
                    str(HERE / "add_one_target.c"), "-o", str(path)],
                   check=True)
    return path


def best_of(fn, repeat, inner):
    """The best mean time of `inner` calls of fn, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        best = min(best, (time.perf_counter() - start) / inner)
    return best


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="build/bench", type=Path)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--inner", type=int, default=20,
                        help="executions per timed repeat (default: 20)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)

    import jax
    import jax.numpy as jnp

    import kcall
    import kcall.jax

    lib = ctypes.CDLL(str(FIXTURES / "libjax_handlers.so"))
    jax.ffi.register_ffi_target("bench.native_add_one",
                                jax.ffi.pycapsule(lib.AddOne), platform="cpu")
    kcall.load_plugin(str(build_plugin(args.out)))
    kcall.jax.register_target("bench.add_one")
    kcall.jax.register_target("bench.add_one_stateful")

    def chain(name):
        def f(x):
            for _ in range(CALLS):
                x = jax.ffi.ffi_call(
                    name, jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
            return x
        return jax.jit(f)

    x = jnp.zeros(16, jnp.float32)
    xn = np.zeros(16, np.float32)
    empty_jax = jax.jit(lambda x: x + 0)
    native = chain("bench.native_add_one")
    adapted = chain("bench.add_one")
    stateful = chain("bench.add_one_stateful")
    for f in (native, adapted, stateful):
        np.testing.assert_array_equal(np.asarray(f(x)), xn + CALLS)
    empty_jax(x).block_until_ready()

    kcall.register_xla_ffi("ffi_test.add_one", lib.AddOne)
    program = FIXTURES / "add_one_chain1000" / "lowered.hlo"
    run = kcall.Program.load(str(program)).compile()
    empty_run = kcall.Program.parse(
        "HloModule empty\nENTRY main {\n  x = f32[16] parameter(0)\n"
        "  ROOT y = f32[16] add(x, x)\n}\n").compile()
    np.testing.assert_array_equal(np.asarray(run(xn)), xn + CALLS)

    def per_call(fn, empty):
        t = best_of(fn, args.repeat, args.inner)
        t0 = best_of(empty, args.repeat, args.inner)
        return (t - t0) / CALLS * 1e9

    figures = {
        "jax_native": per_call(lambda: native(x).block_until_ready(),
                               lambda: empty_jax(x).block_until_ready()),
        "jax_kcall": per_call(lambda: adapted(x).block_until_ready(),
                              lambda: empty_jax(x).block_until_ready()),
        "jax_kcall_instantiate": per_call(lambda: stateful(x).block_until_ready(),
                                          lambda: empty_jax(x).block_until_ready()),
        "kcall_run": per_call(lambda: run(xn), lambda: empty_run(xn)),
    }
    adapter_ratio = figures["jax_kcall"] / figures["jax_native"]
    run_ratio = figures["kcall_run"] / figures["jax_native"]
    print("custom calls: %d chained y = x + 1 on f32[16], ns per call"
          % CALLS)
    print("  %-44s %8.1f" % ("JAX, native XLA FFI handler", figures["jax_native"]))
    print("  %-44s %8.1f  %.3fx native  (target <= %.2fx: %s)"
          % ("JAX, kcall target through the adapter", figures["jax_kcall"],
             adapter_ratio, ADAPTER_TARGET,
             "PASS" if adapter_ratio <= ADAPTER_TARGET else "MISS"))
    print("  %-44s %8.1f  %.3fx native  (+%.1f for the state lookup)"
          % ("JAX, kcall target with INSTANTIATE", figures["jax_kcall_instantiate"],
             figures["jax_kcall_instantiate"] / figures["jax_native"],
             figures["jax_kcall_instantiate"] - figures["jax_kcall"]))
    print("  %-44s %8.1f  %.3fx JAX     (target <= %.2fx: %s)"
          % ("kcall runtime, the same XLA FFI handler", figures["kcall_run"],
             run_ratio, KCALL_RUN_TARGET,
             "PASS" if run_ratio <= KCALL_RUN_TARGET else "MISS"))
    obj = {
        "benchmark": "jax_custom_call_chain",
        "calls": CALLS,
        "jax_native_per_call_ns": round(figures["jax_native"], 2),
        "jax_kcall_adapter_per_call_ns": round(figures["jax_kcall"], 2),
        "jax_kcall_adapter_instantiate_per_call_ns":
            round(figures["jax_kcall_instantiate"], 2),
        "adapter_state_lookup_per_call_ns":
            round(figures["jax_kcall_instantiate"] - figures["jax_kcall"], 2),
        "kcall_run_xla_ffi_per_call_ns": round(figures["kcall_run"], 2),
        "adapter_ratio_to_native": round(adapter_ratio, 4),
        "target_adapter_ratio_to_native": ADAPTER_TARGET,
        "met_adapter_ratio_to_native": int(adapter_ratio <= ADAPTER_TARGET),
        "kcall_run_ratio_to_jax_native": round(run_ratio, 4),
        "target_kcall_run_ratio_to_jax_native": KCALL_RUN_TARGET,
        "met_kcall_run_ratio_to_jax_native": int(run_ratio <= KCALL_RUN_TARGET),
    }
    merge_results(args.out, [obj, large_add_loop(args)])
    return 0


def large_add_loop(args):
    """1,000 Adds of f32[1M] in a jitted fori_loop: kcall's op, jnp's."""
    import jax
    import jax.numpy as jnp

    import kcall
    import kcall.jax
    plugin = REPO / "build/examples/ops/libops_plugin.so"
    if os.environ.get("KCALL_BUILD_DIR"):
        plugin = Path(os.environ["KCALL_BUILD_DIR"]) / "examples/ops/libops_plugin.so"
    kcall.load_plugin(str(plugin))
    n = 1 << 20
    x = jnp.ones(n, jnp.float32)
    y = jnp.ones(n, jnp.float32)

    def loop(add):
        return jax.jit(lambda c: jax.lax.fori_loop(
            0, 1000, lambda i, c: add(c, y), c))
    with_kcall = loop(lambda a, b: kcall.jax.call_op("Add", a, b))
    with_jnp = loop(jnp.add)
    np.testing.assert_array_equal(np.asarray(with_kcall(x)),
                                  np.asarray(with_jnp(x)))
    repeat = max(3, args.repeat // 3)
    t_kcall = best_of(lambda: with_kcall(x).block_until_ready(), repeat, 1)
    t_jnp = best_of(lambda: with_jnp(x).block_until_ready(), repeat, 1)
    print("a jitted loop of 1,000 Adds of f32[1M]: kcall op %.1f ms, jnp "
          "%.1f ms, %.2fx jnp" % (t_kcall * 1e3, t_jnp * 1e3, t_kcall / t_jnp))
    return {
        "benchmark": "jax_large_add_loop",
        "kcall_op_loop_ms": round(t_kcall * 1e3, 2),
        "jnp_loop_ms": round(t_jnp * 1e3, 2),
        "kcall_ratio_to_jnp": round(t_kcall / t_jnp, 4),
    }


if __name__ == "__main__":
    sys.exit(main())
