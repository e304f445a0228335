#!/usr/bin/env python3
"""kcall ops inside ONNX Runtime, against ONNX Runtime's own ops, in one run.

    KCALL_BUILD_DIR=build python bench/python/bench_ort.py --out build/bench

A one-node model run by an onnxruntime.InferenceSession: the example
plugin's Add (examples/ops, libops_plugin.so from KCALL_BUILD_DIR) as a
node of the kcall domain (kcall.ort), next to the same model with ONNX's
own Add, on f32[1] (what a call costs: ONNX Runtime's run, the bridge's
input and output handling, kcall's call) and f32[1M] (target: at most
1.2x). Both use every core, on ONNX Runtime's intra-op pool (kcall's
kernels through KernelContext_ParallelFor). Inputs are bound once (io_binding), so the figures are the
session's run, not NumPy's conversions. Merged into OUT/results.json as
the object "ort_add".
"""

import argparse
import os
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_jax import best_of  # noqa: E402
from run_bench import merge_results  # noqa: E402

TARGET_1M = 1.2


def session(ort, kcall, domain, n):
    from onnx import TensorProto, helper
    node = helper.make_node("Add", ["x", "y"], ["z"], domain=domain)
    graph = helper.make_graph(
        [node], "add", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n]),
                        helper.make_tensor_value_info("y", TensorProto.FLOAT, [n])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [n])])
    opsets = [helper.make_opsetid("", 17)]
    if domain:
        opsets.append(helper.make_opsetid(domain, 1))
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 8
    options = ort.SessionOptions()
    if domain:
        import kcall.ort
        kcall.ort.register(options)
    return ort.InferenceSession(model.SerializeToString(), options)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="build/bench", type=Path)
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args(argv)
    build = os.environ.get("KCALL_BUILD_DIR")
    if not build:
        parser.error("KCALL_BUILD_DIR must name the C build (it has "
                     "examples/ops/libops_plugin.so)")
    import onnxruntime as ort
    import kcall
    kcall.load_plugin(str(Path(build) / "examples/ops/libops_plugin.so"))
    result = {"benchmark": "ort_add", "onnxruntime_version": ort.__version__}
    print("ort_add: a one-node model, kcall's Add (domain kcall) against ONNX's Add")
    for n, inner, label in ((1, 2000, "1"), (1 << 20, 20, "1m")):
        x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
        y = np.ones(n, np.float32)
        times = {}
        for name, domain in (("ort", ""), ("kcall", "kcall")):
            s = session(ort, kcall, domain, n)
            binding = s.io_binding()
            binding.bind_cpu_input("x", x)
            binding.bind_cpu_input("y", y)
            binding.bind_output("z")
            s.run_with_iobinding(binding)
            np.testing.assert_allclose(binding.copy_outputs_to_cpu()[0], x + y)
            times[name] = best_of(lambda: s.run_with_iobinding(binding), args.repeat, inner)
        ratio = times["kcall"] / times["ort"]
        print("  f32[%-7d] ort %9.2f us  kcall %9.2f us  %.2fx" %
              (n, times["ort"] * 1e6, times["kcall"] * 1e6, ratio))
        result["f32_%s_ort_us" % label] = round(times["ort"] * 1e6, 3)
        result["f32_%s_kcall_us" % label] = round(times["kcall"] * 1e6, 3)
        result["f32_%s_ratio_to_ort" % label] = round(ratio, 4)
    result["target_f32_1m_ratio_to_ort"] = TARGET_1M
    result["met_f32_1m_ratio_to_ort"] = int(result["f32_1m_ratio_to_ort"] <= TARGET_1M)
    args.out.mkdir(parents=True, exist_ok=True)
    merge_results(args.out, [result])
    return 0


if __name__ == "__main__":
    sys.exit(main())
