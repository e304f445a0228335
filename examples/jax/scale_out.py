"""A kcall kernel on several devices and processes, through JAX.

    python scale_out.py XLA_PLUGIN.so                      # 4 CPU devices
    python scale_out.py XLA_PLUGIN.so --process 0 --of 2 --port 12345 &
    python scale_out.py XLA_PLUGIN.so --process 1 --of 2 --port 12345

XLA_PLUGIN.so is examples/xla built (build/examples/xla/libxla_plugin.so);
its typed target rms_norm normalises each row. The step below runs it on
every shard of the rows under jax.shard_map, sums the rows across all
shards (a collective between the two kernel calls), and runs it again; the result is
checked against the same step on one device. With --of N the N processes
join one JAX distributed runtime (jax.distributed.initialize) with 2 CPU
devices each, and the collective crosses processes. On a cluster the same
code runs with the coordinator's address in place of localhost and one
process per host (or per accelerator), each started with its --process.
"""
import argparse
import os
import sys

parser = argparse.ArgumentParser()
parser.add_argument("plugin")
parser.add_argument("--process", type=int, default=0)
parser.add_argument("--of", type=int, default=1)
parser.add_argument("--port", type=int, default=0)
args = parser.parse_args()

local_devices = 4 if args.of == 1 else 2
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                           f" --xla_force_host_platform_device_count={local_devices}")

import jax  # noqa: E402  (XLA_FLAGS must be set first)
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import NamedSharding, PartitionSpec as P  # noqa: E402

import kcall.jax  # noqa: E402

if args.of > 1:
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(coordinator_address=f"localhost:{args.port}",
                               num_processes=args.of, process_id=args.process)

kcall.jax.register_plugin(args.plugin)


def rms_norm(x):
    """The kcall kernel, called from JAX."""
    return jax.ffi.ffi_call("rms_norm", jax.ShapeDtypeStruct(x.shape, x.dtype))(
        x, eps=np.float32(1e-5))


def step(x, total_of):
    y = rms_norm(x)
    # The sum over all rows, on every shard: the collective.
    return rms_norm(y + 0.01 * total_of(jnp.sum(y, axis=0)))


mesh = jax.make_mesh((jax.device_count(),), ("rows",))
sharded_step = jax.jit(jax.shard_map(
    lambda x: step(x, lambda s: jax.lax.psum(s, "rows")),
    mesh=mesh, in_specs=P("rows"), out_specs=P("rows")))

rows, cols = 8 * jax.device_count(), 16
x = np.random.default_rng(0).standard_normal((rows, cols), dtype=np.float32)
xs = jax.make_array_from_callback(x.shape, NamedSharding(mesh, P("rows")),
                                  lambda index: x[index])
out = sharded_step(xs)

# The same step on one device of this process, the sum taken whole.
whole = jax.jit(lambda x: step(x, lambda s: s))
expected = np.asarray(whole(jax.device_put(x, jax.local_devices()[0])))
for shard in out.addressable_shards:
    np.testing.assert_allclose(np.asarray(shard.data), expected[shard.index],
                               rtol=1e-5, atol=1e-5)
print(f"process {args.process} of {args.of}: {len(out.addressable_shards)} "
      f"shards of {jax.device_count()} match the single-device run")
