"""Generates the XLA FFI fixtures in tests/fixtures/xla_ffi/ with JAX.

    python tests/xla_ffi/generate.py [--out DIR]

(or `make fixtures`, which makes a virtual environment, .venv-jax, with
jax, jaxlib and numpy, and runs this script in it). It needs jax and jaxlib
0.10.2 and numpy, a C++17 compiler (CXX; default clang++, else g++), strip and nm.

What it does:

1. Builds tests/xla_ffi/handlers.cc, handlers written against XLA's FFI
   headers as jaxlib ships them (jax.ffi.include_dir()), into
   libjax_handlers.so: libstdc++ linked statically, stripped, exporting
   only the handlers and the state type's id and info (checked).
2. Registers every handler with JAX (jax.ffi.register_ffi_target, and the
   state type with jax.ffi.register_ffi_type), defines jitted programs that
   call them through jax.ffi.ffi_call, attributes given as keyword
   arguments, and runs them on fixed inputs.
3. Checks each result against a NumPy reference computed here, bit for bit
   (the handlers' float arithmetic is exact or rounded once, as the
   references compute it), and each expected failure's message.
4. Writes, per case, into DIR/<case>/: lowered.hlo (the HLO text of
   jax.jit(f).lower(...), what tests run), optimized.hlo (XLA:CPU's
   compiled module, for the cases that keep it), inputN.npy and
   outputN.npy (JAX's results); and DIR/manifest.json, which describes
   every case (see tests/fixtures/xla_ffi/README.md).

The output is deterministic: running the script again with the same
versions of jax, jaxlib, numpy and the compiler rewrites the same bytes.
Source file names in optimized.hlo's metadata are reduced to their base
names, so the checkout's location does not show.
"""

import argparse
import ctypes
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

import jax
import jax.numpy as jnp
import jaxlib

JAX_VERSION = "0.10.2"
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_OUT = os.path.join(ROOT, "tests", "fixtures", "xla_ffi")
LIBRARY = "libjax_handlers.so"

# The state type of the Affine handlers: its name as registered, and the
# library's symbols for its XLA_FFI_TypeId and XLA_FFI_TypeInfo.
STATE_TYPE = {
    "name": "AffineState",
    "type_id": "AffineStateTypeId",
    "type_info": "AffineStateTypeInfo",
}

# Target name -> the handler symbols of each stage (and the state type the
# handler keeps, if any). Every target is registered for platform "cpu"
# with the typed FFI (api_version 1 in JAX, API_VERSION_TYPED_FFI in HLO).
TARGETS = {
    "ffi_test.add_one": {"execute": "AddOne"},
    "ffi_test.scale_shift": {"execute": "ScaleShift"},
    "ffi_test.attrs_echo": {"execute": "AttrsEcho"},
    "ffi_test.row_sum": {"execute": "RowSum"},
    "ffi_test.affine": {
        "instantiate": "AffineInstantiate",
        "execute": "AffineExecute",
        "state_type": STATE_TYPE["name"],
    },
    "ffi_test.pool_square": {"execute": "PoolSquare"},
    "ffi_test.fail_if_negative": {"execute": "FailIfNegative"},
}

EXPORTED = sorted(
    [s for t in TARGETS.values() for k, s in t.items() if k != "state_type"]
    + [STATE_TYPE["type_id"], STATE_TYPE["type_info"]]
)


# ---------------------------------------------------------------------------
# Building the handler library
# ---------------------------------------------------------------------------


def run(cmd):
    subprocess.run(cmd, check=True)


def build_library(out_path):
    # clang++ by default, as XLA itself is built: g++ cannot honour the
    # always_inline of ffi.h's decoding templates, and its AddOne costs
    # about twice as much per call (28 against 14.5 ns in kcall's runtime).
    cxx = os.environ.get("CXX") or (shutil.which("clang++") and "clang++") \
        or "g++"
    strip = os.environ.get("STRIP", "strip")
    nm = os.environ.get("NM", "nm")
    with tempfile.TemporaryDirectory() as tmp:
        version_script = os.path.join(tmp, "exports.map")
        with open(version_script, "w") as f:
            f.write("{\n  global:\n")
            for sym in EXPORTED:
                f.write(f"    {sym};\n")
            f.write("  local: *;\n};\n")
        so = os.path.join(tmp, LIBRARY)
        run([
            cxx, "-std=c++17", "-O2", "-fPIC", "-shared",
            # No assertions: they would embed the headers' paths.
            "-DNDEBUG",
            # Results must match the NumPy references bit for bit.
            "-ffp-contract=off",
            "-fvisibility=hidden", "-fvisibility-inlines-hidden",
            "-ffunction-sections", "-fdata-sections",
            "-isystem", jax.ffi.include_dir(),
            os.path.join(HERE, "handlers.cc"),
            "-o", so,
            "-static-libstdc++", "-static-libgcc",
            "-Wl,--gc-sections", "-Wl,--exclude-libs,ALL",
            "-Wl,--version-script=" + version_script,
        ])
        run([strip, "--strip-all", so])
        exported = subprocess.run(
            [nm, "-D", "--defined-only", "--format=posix", so],
            check=True, capture_output=True, text=True).stdout.split("\n")
        names = sorted(line.split()[0] for line in exported if line.strip())
        if names != EXPORTED:
            sys.exit(f"{LIBRARY} exports {names}, expected {EXPORTED}")
        shutil.copyfile(so, out_path)
        os.chmod(out_path, 0o755)


# ---------------------------------------------------------------------------
# Registering the handlers with JAX
# ---------------------------------------------------------------------------


def register(lib_path):
    # Registrations made before the CPU backend exists are replayed when it
    # starts, handlers before types, and a stateful handler is refused
    # unless its type came first: so start the backend now.
    jax.devices("cpu")
    lib = ctypes.CDLL(lib_path)

    def capsule(symbol):
        addr = ctypes.cast(getattr(lib, symbol), ctypes.c_void_p).value
        return jax.ffi.pycapsule(addr)

    def data_capsule(symbol):
        return jax.ffi.pycapsule(
            ctypes.addressof(ctypes.c_byte.in_dll(lib, symbol)))

    jax.ffi.register_ffi_type(
        STATE_TYPE["name"],
        {"type_id": data_capsule(STATE_TYPE["type_id"]),
         "type_info": data_capsule(STATE_TYPE["type_info"])},
        platform="cpu")
    for name, stages in TARGETS.items():
        handlers = {stage: capsule(symbol) for stage, symbol in stages.items()
                    if stage != "state_type"}
        fn = handlers["execute"] if len(handlers) == 1 else handlers
        jax.ffi.register_ffi_target(name, fn, platform="cpu")
    return lib


# ---------------------------------------------------------------------------
# The programs
# ---------------------------------------------------------------------------


def like(x, dtype=None, shape=None):
    return jax.ShapeDtypeStruct(x.shape if shape is None else shape,
                                x.dtype if dtype is None else dtype)


def add_one(x, **kwargs):
    return jax.ffi.ffi_call("ffi_test.add_one", like(x), **kwargs)(x)


def scale_shift(x, scale, shift):
    return jax.ffi.ffi_call("ffi_test.scale_shift", like(x))(
        x, scale=scale, shift=shift)


def affine(x, scale, offset):
    return jax.ffi.ffi_call("ffi_test.affine", like(x))(
        x, scale=np.float32(scale), offset=np.float32(offset))


def pool_square(x):
    return jax.ffi.ffi_call("ffi_test.pool_square", like(x))(x)


def fail_if_negative(x):
    return jax.ffi.ffi_call("ffi_test.fail_if_negative", like(x))(x)


def row_sum(x):
    row = like(x, shape=(x.shape[0],))
    return jax.ffi.ffi_call("ffi_test.row_sum", (row, row))(x)


# Every attribute kind JAX makes from ffi_call's keyword arguments.
ECHO_ATTRS = {
    "int32_value": np.int32(-123456789),
    "int64_value": np.int64(-(2**53) - 1),  # not a double
    "flag": True,
    "float32_value": np.float32(0.1),
    "float64_value": np.float64(1.0) / 3.0,
    "name": "kcall",
    "int64_array": np.array([1, -2, 3, 2**40], dtype=np.int64),
    "float32_array": np.array([0.5, -1.25, 0.1], dtype=np.float32),
    "options": {"count": np.int64(3), "alpha": np.float32(0.5),
                "label": "dict"},
}


def echo_encoding(attrs):
    """What AttrsEcho writes for `attrs` (the layout in handlers.cc)."""
    ints = [int(attrs["int32_value"]), int(attrs["int64_value"]),
            int(bool(attrs["flag"])), len(attrs["int64_array"])]
    ints += [int(v) for v in attrs["int64_array"]]
    name = attrs["name"].encode()
    ints += [len(name)] + list(name)
    opts = attrs["options"]
    ints += [int(opts["count"]), len(opts["label"].encode())]
    ints += list(opts["label"].encode())
    floats = [float(attrs["float32_value"]), float(attrs["float64_value"]),
              len(attrs["float32_array"])]
    floats += [float(v) for v in attrs["float32_array"]]
    floats += [float(opts["alpha"])]
    return np.array(ints, np.int64), np.array(floats, np.float64)


# Strings as MLIR prints them: quotes, backslashes, control characters and
# UTF-8 come out as escapes (`\22`, `\\`, `\09`, `\C3\A9`).
ECHO_STRING_ATTRS = dict(
    ECHO_ATTRS, name='say "hi"\\ \t caf\u00e9',
    options=dict(ECHO_ATTRS["options"], label="line\nbreak"))


def echo(attrs):
    ints, floats = echo_encoding(attrs)

    def attrs_echo(x):
        results = (like(x), like(x, np.int64, ints.shape),
                   like(x, np.float64, floats.shape))
        return jax.ffi.ffi_call("ffi_test.attrs_echo", results)(x, **attrs)

    def reference(x):
        return [x, ints, floats]

    return attrs_echo, reference


def chain(n):
    def f(x):
        for _ in range(n):
            x = add_one(x)
        return x
    f.__name__ = f"add_one_chain{n}"
    return f


def add_one_aliased(x):
    return add_one(x, input_output_aliases={0: 0})


def mixed_builtin(x):
    return jnp.maximum(add_one(x * 2) - x, 0)


def scale_shift_2x3(x):
    return scale_shift(x, np.float32(0.1), np.float64(1.0) / 3.0)


def affine_two_sites(x):
    return affine(affine(x, 2.0, 1.0), -0.5, 0.25)


# ---------------------------------------------------------------------------
# The cases
# ---------------------------------------------------------------------------

F32 = np.float32


def f32_inputs(shape, scale=0.25, shift=0.0):
    n = int(np.prod(shape, dtype=np.int64))
    return (np.arange(n, dtype=F32) * F32(scale) + F32(shift)).reshape(shape)


def ref_scale_shift(x):
    y = x.astype(np.float64) * np.float64(F32(0.1)) + 1.0 / 3.0
    return y.astype(F32)


def ref_affine(x):
    y = x * F32(2.0) + F32(1.0)
    return y * F32(-0.5) + F32(0.25)


CASES = [
    dict(name="add_one", fn=add_one, targets=["ffi_test.add_one"],
         inputs=[f32_inputs((2, 3, 4), 0.5, -3.0)],
         reference=lambda x: [x + F32(1)],
         about="y = x + 1 on f32[2,3,4]"),
    dict(name="add_one_scalar", fn=add_one, targets=["ffi_test.add_one"],
         inputs=[np.array(2.5, F32)],
         reference=lambda x: [x + F32(1)],
         about="y = x + 1 on a rank-0 f32[]"),
    dict(name="add_one_chain3", fn=chain(3), targets=["ffi_test.add_one"],
         inputs=[f32_inputs((16,))],
         reference=lambda x: [x + F32(3)],
         about="three chained custom calls on f32[16]"),
    dict(name="add_one_chain1000", fn=chain(1000),
         targets=["ffi_test.add_one"], inputs=[f32_inputs((16,))],
         reference=lambda x: [x + F32(1000)], optimized=False, bench=True,
         about="1000 chained custom calls on f32[16], for the benchmark"),
    dict(name="add_one_aliased", fn=add_one_aliased,
         targets=["ffi_test.add_one"], inputs=[f32_inputs((16,))],
         reference=lambda x: [x + F32(1)],
         about="y = x + 1 with output_to_operand_aliasing (in place)"),
    dict(name="mixed_builtin", fn=mixed_builtin, targets=["ffi_test.add_one"],
         inputs=[f32_inputs((16,), 1.0, -8.0)],
         reference=lambda x: [np.maximum((x * F32(2) + F32(1)) - x, F32(0))],
         about="maximum(add_one(x * 2) - x, 0): built-in instructions "
               "around a custom call"),
    dict(name="scale_shift", fn=scale_shift_2x3,
         targets=["ffi_test.scale_shift"],
         inputs=[f32_inputs((2, 3), 0.25, -0.5)],
         reference=lambda x: [ref_scale_shift(x)],
         about="y = x * scale + shift, scale an f32 and shift an f64 "
               "attribute"),
    dict(name="attrs_echo", fn=echo(ECHO_ATTRS)[0],
         targets=["ffi_test.attrs_echo"], inputs=[f32_inputs((4,))],
         reference=echo(ECHO_ATTRS)[1],
         about="every attribute kind (i32, i64, bool, f32, f64, string, "
               "i64 and f32 arrays, dictionary) decoded and written back"),
    dict(name="attrs_echo_strings", fn=echo(ECHO_STRING_ATTRS)[0],
         targets=["ffi_test.attrs_echo"], inputs=[f32_inputs((4,))],
         reference=echo(ECHO_STRING_ATTRS)[1],
         about="attrs_echo with strings that the HLO text escapes: a "
               "quote, a backslash, a tab, a newline, UTF-8"),
    dict(name="row_sum", fn=row_sum, targets=["ffi_test.row_sum"],
         inputs=[f32_inputs((3, 5), 0.125, -0.75)],
         reference=lambda x: [x.sum(axis=1, dtype=F32), x.max(axis=1)],
         about="two results: the sums and the maxima of the rows of "
               "f32[3,5]"),
    dict(name="affine_state", fn=affine_two_sites,
         targets=["ffi_test.affine"], inputs=[f32_inputs((2, 3), 0.5, -1.0)],
         reference=lambda x: [ref_affine(x)],
         about="two call sites of a handler whose state is made at "
               "instantiate from the attributes"),
    dict(name="pool_square", fn=pool_square, targets=["ffi_test.pool_square"],
         inputs=[f32_inputs((1000,), 0.5, -250.0)],
         reference=lambda x: [x * x],
         about="y = x * x in 16 tasks on the FFI thread pool, completed "
               "through a future"),
    dict(name="fail_if_negative", fn=fail_if_negative,
         targets=["ffi_test.fail_if_negative"],
         inputs=[np.array([0, 1, 2, 4, 9, 16, 0.25, 2.25], F32)],
         reference=lambda x: [np.sqrt(x)],
         about="y = sqrt(x) on inputs that pass"),
    dict(name="fail_if_negative_error", fn=fail_if_negative,
         targets=["ffi_test.fail_if_negative"],
         inputs=[np.array([0, 1, 2, 4, 9, -16, 0.25, -2.25], F32)],
         error=("INVALID_ARGUMENT", "negative input at index 5"),
         about="the same program failing: the handler returns "
               "INVALID_ARGUMENT"),
]


# ---------------------------------------------------------------------------
# Writing the fixtures
# ---------------------------------------------------------------------------

INSTRUCTION = re.compile(
    r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*(.+?)\s+([a-z][\w\-]*)\((.*?)\)")


def entry_instructions(hlo):
    """(name, opcode, operands) of each instruction of the ENTRY
    computation, in order."""
    out = []
    in_entry = False
    for line in hlo.splitlines():
        if line.startswith("ENTRY"):
            in_entry = True
        elif in_entry and line.startswith("}"):
            break
        elif in_entry:
            m = INSTRUCTION.match(line)
            if m:
                out.append((m.group(1), m.group(3), m.group(4)))
    return out


def hlo_summary(hlo):
    instrs = entry_instructions(hlo)
    params = {}
    for name, opcode, operands in instrs:
        if opcode == "parameter":
            params[int(operands)] = name
    return {
        "opcodes": sorted({op for _, op, _ in instrs}),
        "params": [params[i] for i in sorted(params)],
    }


def leaves(tree):
    return [np.asarray(a) for a in jax.tree_util.tree_leaves(tree)]


def npy_entry(case_dir, name, array):
    path = os.path.join(case_dir, name)
    np.save(path, array, allow_pickle=False)
    return {"file": os.path.relpath(path, os.path.dirname(case_dir)),
            "dtype": str(array.dtype), "shape": list(array.shape)}


def same(a, b):
    return (a.dtype == b.dtype and a.shape == b.shape
            and np.array_equal(a, b, equal_nan=True))


def generate_case(case, out_dir):
    name = case["name"]
    fn = jax.jit(case["fn"])
    inputs = case["inputs"]
    case_dir = os.path.join(out_dir, name)
    os.makedirs(case_dir)

    lowered = fn.lower(*inputs)
    hlo = lowered.as_text(dialect="hlo")
    with open(os.path.join(case_dir, "lowered.hlo"), "w") as f:
        f.write(hlo)
    summary = hlo_summary(hlo)

    entry = {"name": name, "about": case["about"],
             "hlo": f"{name}/lowered.hlo"}
    if case.get("optimized", True):
        optimized = lowered.compile().as_text()
        with open(os.path.join(case_dir, "optimized.hlo"), "w") as f:
            f.write(optimized)
        entry["optimized_hlo"] = f"{name}/optimized.hlo"
        optimized_opcodes = hlo_summary(optimized)["opcodes"]
    else:
        entry["optimized_hlo"] = None
        optimized_opcodes = None

    # `--xla-ffi LIB:SYMBOL=TARGET` names a handler for the execute stage
    # only; a target with more stages is described in "targets" alone.
    entry["targets"] = case["targets"]
    entry["xla_ffi"] = [
        f"{LIBRARY}:{TARGETS[t]['execute']}={t}" for t in case["targets"]
        if list(TARGETS[t]) == ["execute"]]
    entry["inputs"] = []
    for i, (x, pname) in enumerate(zip(inputs, summary["params"])):
        item = npy_entry(case_dir, f"input{i}.npy", x)
        item.update({"param": i, "hlo_name": pname})
        entry["inputs"].append(item)

    if "error" in case:
        code, message = case["error"]
        try:
            fn(*inputs)
        except Exception as e:  # JAX raises a subclass per status code
            text = str(e)
            if f"{code}: {message}" not in text:
                sys.exit(f"{name}: JAX failed with {text!r}, expected "
                         f"'{code}: {message}'")
        else:
            sys.exit(f"{name}: JAX ran the program; it should have failed")
        entry["outputs"] = []
        entry["error"] = {"code": code, "message": message}
    else:
        got = leaves(fn(*inputs))
        want = [np.asarray(r) for r in case["reference"](*inputs)]
        if len(got) != len(want) or not all(map(same, got, want)):
            sys.exit(f"{name}: JAX's results {got} differ from the "
                     f"reference {want}")
        entry["outputs"] = [npy_entry(case_dir, f"output{i}.npy", y)
                            for i, y in enumerate(got)]
        entry["error"] = None

    entry["lowered_opcodes"] = summary["opcodes"]
    entry["optimized_opcodes"] = optimized_opcodes
    entry["bench"] = bool(case.get("bench", False))
    return entry


def clear(out_dir):
    """Removes what an earlier run wrote (the case directories its manifest
    lists, the library, the manifest), nothing else."""
    manifest = os.path.join(out_dir, "manifest.json")
    if os.path.exists(manifest):
        with open(manifest) as f:
            old = json.load(f)
        for case in old.get("cases", []):
            shutil.rmtree(os.path.join(out_dir, case["name"]),
                          ignore_errors=True)
        os.remove(manifest)
    for case in CASES:
        shutil.rmtree(os.path.join(out_dir, case["name"]), ignore_errors=True)
    lib = os.path.join(out_dir, LIBRARY)
    if os.path.exists(lib):
        os.remove(lib)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=DEFAULT_OUT,
                        help="output directory (default: %(default)s)")
    args = parser.parse_args()

    if jax.__version__ != JAX_VERSION:
        sys.exit(f"jax {JAX_VERSION} is needed, this is {jax.__version__} "
                 "(`make fixtures` makes a virtual environment with it)")
    jax.config.update("jax_platforms", "cpu")
    # AttrsEcho's results are s64 and f64.
    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_hlo_source_file_canonicalization_regex", ".*/")

    out_dir = os.path.abspath(args.out)
    os.makedirs(out_dir, exist_ok=True)
    clear(out_dir)
    lib_path = os.path.join(out_dir, LIBRARY)
    build_library(lib_path)
    register(lib_path)

    cases = []
    for case in CASES:
        cases.append(generate_case(case, out_dir))
    manifest = {
        "format": 1,
        "about": "XLA FFI handlers and the programs JAX makes with them; "
                 "see README.md",
        "jax_version": jax.__version__,
        "jaxlib_version": jaxlib.__version__,
        "xla_ffi_api_version": [0, 3],
        "platform": "cpu",
        "machine": platform.machine(),
        "library": LIBRARY,
        "types": [STATE_TYPE],
        "targets": TARGETS,
        "cases": cases,
    }
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
    print(f"wrote {len(cases)} cases and {LIBRARY} to {out_dir}")


if __name__ == "__main__":
    main()
