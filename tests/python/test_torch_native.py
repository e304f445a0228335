"""kcall.torch's native kernels (python/src/torch_native.c): the op's CPU
kernel and its Autograd router registered through PyTorch's stable C ABI,
and the Python kernel where the torch here lacks that ABI. Skips without
PyTorch (`make test EXTRAS=torch` installs it)."""

import os
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed: `make test EXTRAS=torch` "
    "installs it")

import kcall  # noqa: E402
import kcall.torch  # noqa: E402

native = pytest.mark.skipif(
    kcall.torch.native_reason is not None,
    reason=f"kcall.torch runs the Python kernel: {kcall.torch.native_reason}")


@pytest.fixture(scope="module")
def ops(torch_example_ops):
    return torch_example_ops


def kernels(qualified):
    """{dispatch key: where its kernel was registered} from torch's dump."""
    out = {}
    for line in torch._C._dispatch_dump(qualified).splitlines():
        key, sep, rest = line.partition(": registered at ")
        if sep:
            out[key.strip()] = rest
    return out


def test_this_torch_is_native():
    """The pinned torch (2.15) has every symbol the native kernels use:
    a reason here would mean the shim lookup broke."""
    major, minor = (int(p) for p in torch.__version__.split(".")[:2])
    if (major, minor) >= (2, 14):
        assert kcall.torch.native_reason is None


@native
def test_the_native_kernels_are_the_registered_ones(ops):
    """CPU kernels of the op and its companions, and the op's Autograd
    kernel, are torch_native.c's; the autograd companion keeps the Python
    rule; an op with a list input (Concat) stays on the Python kernel."""
    add = kernels("kcall::Add")
    assert "torch_native.c" in add["CPU"]
    assert "torch_native.c" in add["Autograd[alias]"]
    for companion in ("kcall::Add_kcall_nograd", "kcall::Add_kcall_autograd"):
        assert "torch_native.c" in kernels(companion)["CPU"]
    assert "Autograd[alias]" not in kernels("kcall::Add_kcall_nograd")
    assert "torch_native.c" not in kernels("kcall::Add_kcall_autograd").get(
        "Autograd[alias]", "torch_native.c")
    assert "torch_native.c" in kernels("kcall::Scale")["CPU"]
    assert "torch_native.c" not in str(kernels("kcall::Concat"))


def python_calls(fn, op_name):
    """The Python functions (and C functions called from Python) that run
    while fn() does, other than fn itself and torch's op call."""
    seen = []

    def profile(frame, event, arg):
        if event == "call":
            seen.append(f"{frame.f_code.co_filename}:{frame.f_code.co_name}")
        elif event == "c_call":
            seen.append(f"<c>:{getattr(arg, '__qualname__', arg)}")

    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    # torch's op call: OpOverloadPacket.__call__ and the pybind11 function
    # it calls (named NAME).
    return [s for s in seen if not s.endswith("_ops.py:__call__")
            and not (s.startswith("<c>:pybind11") and s.endswith(op_name))
            and s != "<c>:setprofile" and "<lambda>" not in s]


@native
def test_no_python_runs_when_no_gradient_is_needed(ops):
    """Without a gradient to record (grad mode off, or no input requiring
    grad) a call runs no Python beyond torch's op call: no DLPack capsule,
    no kcall.Tensor, no kcall._core.op_call."""
    x, y = torch.ones(3), torch.arange(3.0)
    add = ops["Add"]
    assert python_calls(lambda: add(x, y), ".Add") == []
    with torch.no_grad():
        xg = torch.ones(3, requires_grad=True)
        assert python_calls(lambda: add(xg, y), ".Add") == []
    assert python_calls(lambda: ops["Scale"](x, factor=2.0), ".Scale") == []
    # A gradient to record goes through the Python autograd rule.
    xg = torch.ones(3, requires_grad=True)
    assert python_calls(lambda: add(xg, y), ".Add") != []


@native
def test_no_dlpack_on_the_native_path(ops, monkeypatch):
    """The capsule route is gone: with DLPack and kcall's Python call
    broken, native calls still work."""
    def refuse(*args, **kwargs):
        raise AssertionError("DLPack or op_call on the native path")

    monkeypatch.setattr(torch, "from_dlpack", refuse)
    monkeypatch.setattr(torch.Tensor, "__dlpack__", refuse)
    monkeypatch.setattr(kcall._core, "op_call", refuse)
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    assert torch.equal(ops["Add"](x, x), x + x)
    assert torch.equal(ops["Scale"](x, factor=3.0), x * 3)
    assert torch.equal(ops["MatMul"](x, x.T), x @ x.T)  # made compact


@native
def test_routes_by_grad_mode_and_requires_grad(ops):
    add = ops["Add"]
    x, y = torch.ones(3, requires_grad=True), torch.arange(3.0)
    z = add(x, y)
    assert z.requires_grad and z.grad_fn is not None
    z.sum().backward()
    assert torch.equal(x.grad, torch.ones(3))
    with torch.no_grad():
        assert not add(x, y).requires_grad
    assert add(y, y).grad_fn is None
    with torch.inference_mode():  # no autograd key: the CPU kernel alone
        assert torch.equal(add(y, y), y + y)


@native
def test_outputs_come_from_torchs_allocator(ops):
    """The output is a plain torch tensor (resizable storage, its own), not
    a view of kcall's memory."""
    z = ops["Add"](torch.ones(4), torch.ones(4))
    assert z._base is None and z.is_contiguous()
    z.resize_(8)  # from_dlpack storage would refuse to grow
    assert z.shape == (8,)


@native
def test_kernel_errors_are_runtime_errors_with_kcalls_message(ops):
    with pytest.raises(RuntimeError, match=r"calling op 'Add': input 1 "
                       r"\('y'\): expected f32 \(T, as input 0 set it\), "
                       r"got f64"):
        ops["Add"](torch.ones(2), torch.ones(2, dtype=torch.float64))
    # Through the router too (an input requiring grad).
    with pytest.raises(RuntimeError, match="MatMul: inner dimensions"):
        ops["MatMul"](torch.ones(2, 3, requires_grad=True), torch.ones(2, 3))


@native
def test_dtypes_kcall_lacks_are_refused(ops):
    x = torch.zeros(2, dtype=torch.complex32)
    with pytest.raises(RuntimeError, match=r"kcall op 'Add': input 0: "
                       r"torch.complex32 has no kcall dtype"):
        ops["Add"](x, x)


@native
def test_strided_and_offset_inputs(ops):
    """A view with a storage offset is read where it lies; a
    non-compact one is made compact first."""
    base = torch.arange(12, dtype=torch.float32)
    a = base[3:7]
    assert torch.equal(ops["Add"](a, a), a + a)
    m = base.reshape(3, 4)[:, 1:3]
    assert torch.equal(ops["Add"](m, m), m + m)
    assert torch.equal(ops["Add"](m.T, m.T), m.T + m.T)


def rss_kib():
    with open(f"/proc/{os.getpid()}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def assert_no_leak(calls):
    """calls(n) 10^5 times' worth, after a warm-up of 10^4 (torch's and
    kcall's caches), leaves the resident size within 4 MiB."""
    calls(10_000)
    before = rss_kib()
    calls(100_000)
    grown = rss_kib() - before
    assert grown < 4096, f"RSS grew by {grown} KiB over 10^5 calls"


@native
def test_many_calls_leak_nothing(ops):
    """10^5 calls on each path (the native kernel, an error raised from
    it, and the router) leave the resident size where it was."""
    add = ops["Add"]
    x, y = torch.ones(16), torch.ones(16)
    bad = torch.ones(16, dtype=torch.float64)

    def calls(n):
        for _ in range(n):
            add(x, y)
        with torch.no_grad():
            for _ in range(n // 10):
                add(x, y)
        for _ in range(n // 100):
            try:
                add(x, bad)
            except RuntimeError:
                pass

    assert_no_leak(calls)


@native
def test_list_attrs_are_native_and_leak_nothing():
    """An op with an int[] attr (kc.Sum's axes) runs natively, no Python
    beyond torch's op call; its list and an error raised after reading it
    are freed (10^5 calls leave the resident size where it was)."""
    assert kcall._core.torch_native_info()["lists"]
    s = kcall.torch.register_op("kc.Sum")
    assert "torch_native.c" in kernels("kcall::kc_Sum")["CPU"]
    x = torch.arange(12.0).reshape(3, 4)
    assert python_calls(lambda: s(x, axes=[1]), ".kc_Sum") == []
    assert torch.equal(s(x, axes=[1]), x.sum(1))
    assert torch.equal(s(x, axes=[0, -1], keepdims=True), x.sum((0, 1), keepdim=True))
    assert torch.equal(s(x, axes=[]), x)
    with pytest.raises(RuntimeError, match="axis 5 is out of range for rank 2"):
        s(x, axes=[5])
    x.requires_grad_()
    (g,) = torch.autograd.grad(s(x, axes=[0]).sum(), x)
    assert torch.equal(g, torch.ones(3, 4))

    def calls(n):
        with torch.no_grad():
            for _ in range(n):
                s(x, axes=[0, 1])
            for _ in range(n // 100):
                try:
                    s(x, axes=[0, 7])
                except RuntimeError:
                    pass

    assert_no_leak(calls)


@native
def test_string_attrs_are_native():
    """An op with a str attr (kc.CrossEntropy's reduction) runs natively;
    a value outside its set is kcall's error."""
    assert kcall._core.torch_native_info()["strings"]
    ce = kcall.torch.register_op("kc.CrossEntropy")
    assert "torch_native.c" in kernels("kcall::kc_CrossEntropy")["CPU"]
    x, labels = torch.randn(6, 4), torch.tensor([0, 3, 1, 1, 2, 0])
    assert python_calls(lambda: ce(x, labels, reduction="sum"),
                        ".kc_CrossEntropy") == []
    for reduction in ("mean", "sum", "none"):
        torch.testing.assert_close(
            ce(x, labels, reduction=reduction),
            torch.nn.functional.cross_entropy(x, labels, reduction=reduction))
    with pytest.raises(RuntimeError, match="'avg' is not one of the allowed"):
        ce(x, labels, reduction="avg")

    def calls(n):
        with torch.no_grad():
            for _ in range(n):
                ce(x, labels, reduction="sum")

    assert_no_leak(calls)


def run_python(code):
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=300,
                          env=os.environ)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_a_torch_without_the_shim_runs_the_python_kernel(ops_plugin):
    """A torch that lacks a symbol of the stable C ABI (simulated: the
    lookup is told to miss torch_tensor_to_pyobject, which came in 2.14)
    gets the Python kernel, still correct, and says why."""
    out = run_python(f"""
        import torch
        from kcall import _core
        real = _core.torch_native_init
        _core.torch_native_init = lambda path, hidden=(): real(
            path, ("torch_tensor_to_pyobject",))
        import kcall, kcall.torch
        print(kcall.torch.native_reason)
        kcall.load_plugin({str(ops_plugin)!r})
        add = kcall.torch.register_op("Add")
        dump = torch._C._dispatch_dump("kcall::Add")
        assert "torch_native.c" not in dump, dump
        x = torch.ones(3, requires_grad=True)
        z = add(x, torch.arange(3.0))
        z.sum().backward()
        assert torch.equal(z, torch.arange(1.0, 4.0)), z
        assert torch.equal(x.grad, torch.ones(3)), x.grad
        try:
            add(torch.ones(2), torch.ones(2, dtype=torch.float64))
        except ValueError as e:
            print("ValueError", e)
        """)
    reason, error = out.strip().splitlines()
    assert "torch_tensor_to_pyobject" in reason
    assert torch.__version__ in reason and ">= 2.14" in reason
    assert error.startswith("ValueError calling op 'Add'")


@native
def test_the_shim_lookup_names_what_is_missing():
    """torch_native_init refuses a library it cannot find loaded, and names
    a missing required symbol; once it succeeded it stays."""
    out = run_python("""
        import os, torch
        from kcall import _core
        lib = os.path.join(os.path.dirname(torch.__file__), "lib",
                           "libtorch_cpu.so")
        try:
            _core.torch_native_init("/nonexistent/libtorch_cpu.so")
        except RuntimeError as e:
            assert "is not loaded (import torch first)" in str(e), e
        try:
            _core.torch_native_init(lib, ("aoti_torch_call_dispatcher",))
        except RuntimeError as e:
            print(e)
        assert _core.torch_native_info() is None
        _core.torch_native_init(lib, ("torch_delete_stable_ivalue",))
        print(_core.torch_native_info()["optional"])
        """)
    assert out.split() == ["aoti_torch_call_dispatcher", "False"]


@native
def test_kernels_split_their_loops_on_torchs_threads(ops_plugin):
    """A kernel's parallel loop (Add on 1M elements splits its row) runs
    on torch's intra-op threads, at any thread count torch is set to:
    kcall's own pool never starts, so the process gains no thread, and
    every result is torch.add's. Without torch_parallel_for (simulated)
    the loop runs on kcall's pool, which starts its workers."""
    code = f"""
        import os, sys, torch
        from kcall import _core
        real = _core.torch_native_init
        hidden = tuple(sys.argv[1:])
        _core.torch_native_init = lambda path, h=(): real(path, hidden)
        import kcall, kcall.torch
        kcall.load_plugin({str(ops_plugin)!r})
        add = kcall.torch.register_op("Add")
        x, y = torch.randn(1 << 20), torch.randn(1 << 20)
        threads = lambda: len(os.listdir("/proc/self/task"))
        for n in (2, 1, 3):
            torch.set_num_threads(n)
            torch.add(x, y)  # torch's threads start
            before = threads()
            for _ in range(5):
                assert torch.equal(add(x, y), torch.add(x, y))
            print(n, threads() - before)
        print(_core.torch_native_info()["threads"])
        """
    def run(*hidden):
        done = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code), *hidden],
            capture_output=True, text=True, timeout=300, env=os.environ)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout.split()

    out = run()
    assert out == ["2", "0", "1", "0", "3", "0", "True"], out
    out = run("torch_parallel_for")
    assert out[-1] == "False" and out[1] != "0", out
