"""A kcall kernel on several devices and processes, through JAX.

    python scale_out.py XLA_PLUGIN.so                       # 4 CPU devices
    python scale_out.py XLA_PLUGIN.so --devices 8           # 8 CPU devices
    python scale_out.py XLA_PLUGIN.so --processes 2         # 2 processes, 2 devices each
    python scale_out.py XLA_PLUGIN.so --processes 2 --process 0 --coordinator HOST:PORT
                                                            # one process of 2, as on a cluster

XLA_PLUGIN.so is examples/xla built (build/examples/xla/libxla_plugin.so);
its typed target rms_norm normalises each row. The step below runs it on
every shard of the rows under jax.shard_map, sums the rows across all
shards (a collective between the two kernel calls), and runs it again.
Every process checks the shards it holds against the same step computed
by NumPy in float64.

--devices N gives each process N CPU devices (default: 4 for one process,
2 each for several) through XLA_FLAGS, keeping the flags XLA_FLAGS already
holds; without --devices, a device count XLA_FLAGS already sets is kept.

--processes N joins N processes in one JAX distributed runtime
(jax.distributed.initialize), and the collective crosses processes. With
--process I, this is process I only: start one per host (or accelerator),
each with its number and the coordinator's address (process 0's host and
a free port). Without --process, this script starts the N processes itself
on this machine and waits for them. "{process}" in the plugin's path is
replaced by the process's number, for hosts whose paths differ.

A run never hangs: a process that fails says why ("process I of N failed:
..."), publishes that message in the distributed runtime's key-value store
and exits at once (without waiting at JAX's shutdown barrier for the
others); every other process sees the message within a second, even while
it is blocked in a collective, prints it ("process J of N: stopping:
process I of N failed: ...") and exits. A process that dies without a word
is caught by the runtime's heartbeats, and --timeout bounds the whole run.
The launcher (no --process) ends the processes still running when one
fails, and repeats the failure's message. Exit status: 0 when every shard
matches; 1 for a process's own failure; 2 for one stopped by another's.
"""
import argparse
import inspect
import os
import subprocess
import sys
import threading
import time

DEVICE_COUNT_FLAG = "--xla_force_host_platform_device_count="
FAILED_KEY = "kcall_scale_out/failed"
DONE_DIR = "kcall_scale_out/done/"


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description="A kcall kernel under jax.shard_map on several devices "
                    "and processes, checked against NumPy in float64.")
    parser.add_argument("plugin", help="the plugin (examples/xla built); "
                        "'{process}' is replaced by the process's number")
    parser.add_argument("--devices", type=int, default=None,
                        help="CPU devices in each process (default: 4 for "
                             "one process, 2 for several, or the count "
                             "XLA_FLAGS already sets)")
    parser.add_argument("--processes", "--of", type=int, default=1,
                        help="processes in the run (default 1)")
    parser.add_argument("--process", type=int, default=None,
                        help="run as this process of --processes only; "
                             "without it the script starts them all here")
    parser.add_argument("--coordinator", default=None,
                        help="process 0's HOST:PORT (default "
                             "localhost:PORT)")
    parser.add_argument("--port", type=int, default=0,
                        help="the coordinator's port on localhost "
                             "(default: a free one, when launching)")
    parser.add_argument("--timeout", type=float, default=180,
                        help="seconds the whole run may take (default 180)")
    args = parser.parse_args(argv)
    if args.processes < 1:
        parser.error(f"--processes: expected at least 1, got {args.processes}")
    if args.devices is not None and args.devices < 1:
        parser.error(f"--devices: expected at least 1, got {args.devices}")
    if args.process is not None and not 0 <= args.process < args.processes:
        parser.error(f"--process: expected 0 to {args.processes - 1}, "
                     f"got {args.process}")
    if (args.process is not None and args.processes > 1
            and not args.coordinator and not args.port):
        parser.error("--process needs --coordinator HOST:PORT (or --port)")
    return args


def xla_flags(existing, devices, default):
    """XLA_FLAGS with the device count set: `existing` flags are kept; a
    device count among them is replaced when `devices` is given, and kept
    otherwise."""
    flags = existing.split()
    has_count = any(f.startswith(DEVICE_COUNT_FLAG) for f in flags)
    if devices is None and has_count:
        return " ".join(flags)
    flags = [f for f in flags if not f.startswith(DEVICE_COUNT_FLAG)]
    flags.append(f"{DEVICE_COUNT_FLAG}{devices or default}")
    return " ".join(flags)


# ---- the launcher: all processes on this machine ------------------------------

def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def launch(args, argv):
    """Starts args.processes copies of this script, relays what they print
    (prefixed with their number), and ends the others as soon as one fails.
    Returns the exit status."""
    coordinator = args.coordinator or f"localhost:{args.port or free_port()}"
    procs, lines = [], [[] for _ in range(args.processes)]
    for i in range(args.processes):
        procs.append(subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), *argv,
             "--process", str(i), "--coordinator", coordinator],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))

    def relay(i, stream):
        for line in stream:
            lines[i].append(line.rstrip("\n"))
            print(f"[{i}] {line}", end="", flush=True)
    relays = [threading.Thread(target=relay, args=(i, p.stdout), daemon=True)
              for i, p in enumerate(procs)]
    for t in relays:
        t.start()

    deadline = time.monotonic() + args.timeout + 10
    failed = None
    while failed is None:
        codes = [p.poll() for p in procs]
        if all(c == 0 for c in codes):
            break
        bad = [i for i, c in enumerate(codes) if c not in (None, 0)]
        if bad:
            # The first to fail on its own account (1) over those it stopped.
            failed = min(bad, key=lambda i: (codes[i] != 1, i))
        elif time.monotonic() > deadline:
            failed = -1
        else:
            time.sleep(0.05)
    if failed is not None:
        # The others stop by themselves within a second or so; a process
        # that does not (one stuck before it joined the runtime) is ended.
        grace = time.monotonic() + 5
        for p in procs:
            try:
                p.wait(timeout=max(0.0, grace - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    for t in relays:
        t.join(timeout=5)
    if failed is None:
        return 0
    if failed == -1:
        print(f"scale_out: the run took more than {args.timeout:g} s: "
              "ended every process", file=sys.stderr)
        return 1
    said = [ln for ln in lines[failed] if " failed: " in ln] or lines[failed][-1:]
    why = said[-1] if said else f"exit status {procs[failed].returncode}"
    print(f"scale_out: {why}", file=sys.stderr)
    return 1


# ---- one process -----------------------------------------------------------------

class Peers:
    """The other processes of a distributed run, through the runtime's
    key-value store: a failure is published there, and a watcher thread
    ends this process when another's failure appears, even while the main
    thread is blocked in a collective."""

    def __init__(self, client, process, processes):
        self.client, self.process, self.processes = client, process, processes
        self.name = f"process {process} of {processes}"
        self.stop = threading.Event()
        self.watcher = threading.Thread(target=self._watch, daemon=True)
        self.watcher.start()

    def _failure(self):
        """The failure another process published, or None."""
        try:
            return self.client.key_value_try_get(FAILED_KEY)
        except Exception as e:  # NOT_FOUND while nobody failed
            if "NOT_FOUND" in str(e):
                return None
            return f"the coordinator cannot be reached: {e}".splitlines()[0]

    def _watch(self):
        while not self.stop.wait(0.2):
            failure = self._failure()
            if failure is not None and not self.stop.is_set():
                stopped(f"{self.name}: stopping: {failure}")

    def publish(self, message):
        self.stop.set()  # this process's own failure is not news to it
        try:
            self.client.key_value_set(FAILED_KEY, message)
        except Exception:
            pass  # another process failed first: its message stands
        # The coordinator lives in process 0: give the others a moment to
        # read the message before it goes.
        if self.process == 0:
            time.sleep(1.0)

    def finish(self):
        """Waits until every process has checked its shards (or one fails),
        so that none reaches JAX's shutdown barrier while another may still
        fail."""
        self.client.key_value_set(f"{DONE_DIR}{self.process}", "ok")
        while len(self.client.key_value_dir_get(DONE_DIR)) < self.processes:
            time.sleep(0.05)
        self.stop.set()
        self.watcher.join()


def stopped(message, status=2):
    """Ends this process at once, skipping JAX's shutdown barrier, which
    would wait for processes that are gone."""
    print(message, file=sys.stderr, flush=True)
    sys.stdout.flush()
    os._exit(status)


def reference(x, eps=1e-5):
    """The step of run_process, in NumPy float64."""
    def rms_norm(v):
        return v / np.sqrt((v ** 2).mean(axis=-1, keepdims=True) + eps)
    y = rms_norm(x.astype(np.float64))
    return rms_norm(y + 0.01 * y.sum(axis=0))


def run_process(args):
    process = args.process or 0
    name = f"process {process} of {args.processes}"
    timer = threading.Timer(args.timeout, stopped, (
        f"{name} failed: the run took more than {args.timeout:g} s", 1))
    timer.daemon = True
    timer.start()

    os.environ["XLA_FLAGS"] = xla_flags(os.environ.get("XLA_FLAGS", ""),
                                        args.devices,
                                        4 if args.processes == 1 else 2)
    # The devices are XLA's host devices and the kernel a CPU target: the
    # CPU backend, also where JAX would default to a GPU.
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    global jax, jnp, np
    import jax  # XLA_FLAGS must be set first
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import NamedSharding, PartitionSpec as P

    import kcall.jax

    peers = None
    if args.processes > 1:
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
        wait = max(10, int(args.timeout))
        # jax before 0.6 has no heartbeat and shutdown timeouts to set.
        timeouts = {name: min(wait, 30) for name in
                    ("heartbeat_timeout_seconds", "shutdown_timeout_seconds")
                    if name in inspect.signature(
                        jax.distributed.initialize).parameters}
        jax.distributed.initialize(
            coordinator_address=args.coordinator or f"localhost:{args.port}",
            num_processes=args.processes, process_id=process,
            initialization_timeout=wait, **timeouts)
        from jax._src import distributed  # the runtime's key-value store
        peers = Peers(distributed.global_state.client, process, args.processes)

    try:
        kcall.jax.register_plugin(args.plugin.replace("{process}", str(process)))

        def rms_norm(x):
            """The kcall kernel, called from JAX."""
            return jax.ffi.ffi_call(
                "rms_norm", jax.ShapeDtypeStruct(x.shape, x.dtype))(
                    x, eps=np.float32(1e-5))

        def step(x):
            y = rms_norm(x)
            # The sum over all rows, on every shard: the collective.
            return rms_norm(y + 0.01 * jax.lax.psum(jnp.sum(y, axis=0), "rows"))

        mesh = jax.make_mesh((jax.device_count(),), ("rows",))
        # jax.shard_map, or jax.experimental's before jax 0.7.
        shard_map = getattr(jax, "shard_map", None)
        if shard_map is None:
            from jax.experimental.shard_map import shard_map
        sharded_step = jax.jit(shard_map(
            step, mesh=mesh, in_specs=P("rows"), out_specs=P("rows")))

        rows, cols = 8 * jax.device_count(), 16
        x = np.random.default_rng(0).standard_normal((rows, cols),
                                                     dtype=np.float32)
        xs = jax.make_array_from_callback(
            x.shape, NamedSharding(mesh, P("rows")), lambda index: x[index])
        out = sharded_step(xs)

        expected = reference(x)
        for shard in out.addressable_shards:
            np.testing.assert_allclose(np.asarray(shard.data),
                                       expected[shard.index],
                                       rtol=2e-5, atol=2e-5)
    except BaseException as e:  # noqa: BLE001 (every failure is reported)
        first = (str(e).strip().splitlines() or [""])[0]
        message = f"{name} failed: {type(e).__name__}: {first}"
        if peers is not None:
            peers.publish(message)
        stopped(message, 1)

    print(f"{name}: {len(out.addressable_shards)} shards of "
          f"{jax.device_count()} match the float64 reference", flush=True)
    if peers is not None:
        peers.finish()
    timer.cancel()
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.processes > 1 and args.process is None:
        return launch(args, argv)
    return run_process(args)


if __name__ == "__main__":
    sys.exit(main())
