#!/usr/bin/env python3
"""kcall ops inside TensorFlow, against TensorFlow's own ops and an op
written directly against its C API, in one run.

    KCALL_BUILD_DIR=build python bench/python/bench_tf.py --out build/bench

Eager calls of the example plugin's Add (examples/ops, libops_plugin.so
from KCALL_BUILD_DIR) as the TensorFlow op KcallAdd (kcall.tf), next to
BenchDirectAdd, the same f32 Add written directly against TensorFlow's C
API (bench/tf/direct_add.c, built here against the installed TensorFlow's
headers), on f32[1] (what a call costs: TensorFlow's eager dispatch, the
bridge's input and output handling, kcall's call; target at most 1.2x),
and against tf.add on f32[1M] (target: at most 1.2x). Merged into
OUT/results.json as the object "tf_add".
"""

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_jax import best_of  # noqa: E402
from run_bench import merge_results  # noqa: E402

TARGET_1 = 1.2
TARGET_1M = 1.2


def direct_library(tf, scratch):
    """bench/tf/direct_add.c built against this TensorFlow."""
    out = os.path.join(scratch, "libbench_direct_add.so")
    cmd = [os.environ.get("CC", "cc"), "-O2", "-shared", "-fPIC", "-std=c11",
           str(HERE.parent / "tf/direct_add.c"), "-o", out,
           "-I", tf.sysconfig.get_include(), "-L", tf.sysconfig.get_lib(),
           "-l:libtensorflow_framework.so.2"]
    subprocess.run(cmd, check=True)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="build/bench", type=Path)
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args(argv)
    build = os.environ.get("KCALL_BUILD_DIR")
    if not build:
        parser.error("KCALL_BUILD_DIR must name the C build (it has "
                     "examples/ops/libops_plugin.so)")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf
    import kcall
    import kcall.tf
    kcall.load_plugin(str(Path(build) / "examples/ops/libops_plugin.so"))
    ops = kcall.tf.load()
    with tempfile.TemporaryDirectory() as scratch:
        direct = tf.load_op_library(direct_library(tf, scratch)).bench_direct_add
    result = {"benchmark": "tf_add", "tensorflow_version": tf.__version__}
    print("tf_add: eager KcallAdd against an Add written on TensorFlow's C API "
          "(f32[1]) and tf.add (f32[1M])")
    for n, inner, label, baseline_name, baseline in (
            (1, 2000, "1", "direct", direct), (1 << 20, 20, "1m", "tf", tf.add)):
        rng = np.random.default_rng(0)
        x = tf.constant(rng.standard_normal(n).astype(np.float32))
        y = tf.constant(np.ones(n, np.float32))
        np.testing.assert_allclose(ops.Add(x, y).numpy(), baseline(x, y).numpy())
        times = {baseline_name: best_of(lambda: baseline(x, y), args.repeat, inner),
                 "kcall": best_of(lambda: ops.Add(x, y), args.repeat, inner)}
        ratio = times["kcall"] / times[baseline_name]
        print("  f32[%-7d] %s %9.2f us  kcall %9.2f us  %.2fx" %
              (n, baseline_name, times[baseline_name] * 1e6, times["kcall"] * 1e6, ratio))
        result["f32_%s_%s_us" % (label, baseline_name)] = round(times[baseline_name] * 1e6, 3)
        result["f32_%s_kcall_us" % label] = round(times["kcall"] * 1e6, 3)
        result["f32_%s_ratio_to_%s" % (label, baseline_name)] = round(ratio, 4)
    result["target_f32_1_ratio_to_direct"] = TARGET_1
    result["met_f32_1_ratio_to_direct"] = int(result["f32_1_ratio_to_direct"] <= TARGET_1)
    result["target_f32_1m_ratio_to_tf"] = TARGET_1M
    result["met_f32_1m_ratio_to_tf"] = int(result["f32_1m_ratio_to_tf"] <= TARGET_1M)
    args.out.mkdir(parents=True, exist_ok=True)
    merge_results(args.out, [result])
    return 0


if __name__ == "__main__":
    sys.exit(main())
