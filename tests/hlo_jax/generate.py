"""Generates the HLO program fixtures in tests/fixtures/hlo_jax/ with JAX.

    python tests/hlo_jax/generate.py [--out DIR] [--cases NAME...]

(or `make hlo-fixtures`, which makes a virtual environment, .venv-jax,
with jax, jaxlib and numpy, and runs this script in it). It needs jax and
jaxlib 0.10.2 and numpy, and the XLA FFI handlers already checked in,
tests/fixtures/xla_ffi/libjax_handlers.so (`make fixtures` remakes them).

What it does:

1. Registers the handlers of libjax_handlers.so with JAX for the CPU
   (jax.ffi.register_ffi_target), so that programs can call them through
   jax.ffi.ffi_call.
2. For every case (cases_*.py beside this file), a small jitted JAX program on fixed inputs:
   whole programs (an MLP, a layer norm, a softmax, a scan, a conditional,
   an attention block), each also with custom calls in the middle, and
   programs that each isolate one feature of HLO (dot with batch
   dimensions, reduce, reduce-window, compare and select, slices, ...).
3. Runs each in JAX and checks the results against a NumPy reference
   computed here in float64, within the case's tolerance: the tolerance a
   test gives kcall must hold for JAX's own results too.
4. Writes, per case, into DIR/<case>/: lowered.hlo
   (`jax.jit(f).lower(*inputs).as_text(dialect="hlo")`), optimized.hlo
   (`.compile().as_text()`, XLA:CPU's optimized module), stablehlo.mlir
   (`.lower(*inputs).as_text(debug_info=True)`: the same lowered program
   as StableHLO, the MLIR text JAX makes, with its `loc(...)` locations
   and `#loc` aliases), inputN.npy and outputN.npy (JAX's results); and
   DIR/manifest.json, which describes every case (see
   tests/fixtures/hlo_jax/README.md).

With --cases, only the cases named are made again; the others stay as
the manifest lists them (their files untouched).

With --serialized, every case the manifest lists (or those --cases
names) gets DIR/<case>/exported.jax_exported (`jax.export.export(...,
platforms=["cpu"])(*inputs).serialize()`: JAX's deployment form, with its
calling convention) and the manifest variant "serialized", nothing else
being touched; a case jax.export refuses is said and left without it.

The output is deterministic: inputs come from fixed seeds, and source file
names in the modules' metadata and in the StableHLO locations are reduced
to base names, so the checkout's location does not show. Running it again
with the same jax, jaxlib and numpy on the same kind of CPU rewrites the
same bytes (XLA:CPU may pick other instructions on another CPU, and the
last bits of exp or tanh may differ, within the tolerances; an edit to
this file or cases_*.py moves the line numbers in the locations). --cases
makes only the named cases and keeps the rest as the manifest has them.
"""

import argparse
import hashlib
import json
import os
import platform
import re
import shutil
import sys

import numpy as np

import jax
import jax.numpy as jnp
import jaxlib
from jax.experimental.layout import Format, Layout

from cases_common import (DEFAULT_OUT, F64, HANDLERS, HANDLERS_REL,
                          JAX_VERSION, ROOT, TARGETS, as64, register)
from cases_conv import conv_programs
from cases_fft_linalg import fft_programs, linalg_programs
from cases_models import model_programs
from cases_single import indexing_programs, single_programs, sorting_programs
from cases_typed import typed_programs
from cases_whole import whole_programs


CASES = (whole_programs() + single_programs() + sorting_programs()
         + indexing_programs() + conv_programs() + fft_programs()
         + typed_programs() + model_programs() + linalg_programs())


# ---------------------------------------------------------------------------
# Reading the modules
# ---------------------------------------------------------------------------

INSTRUCTION = re.compile(
    r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*(.+?)\s+([a-z][\w\-]*)\((.*?)\)")
ELEMENT_TYPE = re.compile(
    r"\b(pred|s4|s8|s16|s32|s64|u4|u8|u16|u32|u64|f8\w*|f16|bf16|f32|f64"
    r"|c64|c128|token)\[")
LAYOUT = re.compile(r"\[([\d,]*)\]\{([\d,]*)")
TARGET = re.compile(r'custom_call_target="([^"]*)"')


def instructions(hlo):
    """(computation, name, shape, opcode, operands) of every instruction of
    every computation, in order; the entry's computation is "ENTRY"."""
    out = []
    comp = None
    for line in hlo.splitlines():
        if line.startswith("ENTRY"):
            comp = "ENTRY"
        elif line.startswith("%") or re.match(r"^[\w.\-]+ [({]", line):
            comp = line.split()[0].lstrip("%")
        elif line.startswith("}"):
            comp = None
        elif comp:
            m = INSTRUCTION.match(line)
            if m:
                out.append((comp, m.group(1), m.group(2), m.group(3),
                            m.group(4)))
    return out


def non_default_layouts(hlo):
    """The layouts in the module that are not row-major, e.g. "{0,1}"."""
    found = set()
    for dims, layout in LAYOUT.findall(hlo):
        rank = len(dims.split(",")) if dims else 0
        items = layout.split(",") if layout else []
        if [int(v) for v in items] != list(range(rank - 1, -1, -1)):
            found.add("{" + layout + "}")
    return sorted(found)


# An operation of the StableHLO text: after its results, if any (`%0 =`,
# `%0:2 =`, `%a, %b =`), its name, either pretty (`stablehlo.add %0, ...`,
# `call @f(...)`, `return %0`) or generic (`"stablehlo.sort"(%0) ...`).
MLIR_OP = re.compile(
    r'^\s*(?:%[\w.$#\-]+(?::\d+)?(?:\s*,\s*%[\w.$#\-]+(?::\d+)?)*\s*=\s*)?'
    r'("?)([A-Za-z_][\w$]*(?:\.[\w$]+)*)\1(?=[\s(<{@:]|$)')
# Words that start a line of the text but name no operation: the keywords
# of stablehlo.while's regions, and the module itself.
MLIR_NOT_OPS = {"cond", "do", "module"}
# Operations of the func dialect, which MLIR prints without "func." in a
# function's body (and with it, `func.call @f(...)`, in a region of a
# stablehlo operation).
MLIR_FUNC_OPS = {"call": "func.call", "return": "func.return"}
# stablehlo.reduce's short form, `stablehlo.reduce(%0 init: %1) applies
# stablehlo.add across dimensions = [1]`: its body is that one operation.
MLIR_APPLIES = re.compile(r"\bapplies\s+([A-Za-z_][\w$]*(?:\.[\w$]+)+)")
MLIR_TARGET = re.compile(
    r'stablehlo\.custom_call\s+@([\w.$\-]+)\(|call_target_name = "([^"]*)"')
# A file's path in a location, "PATH":LINE:COL as in loc("PATH":5:26 to
# :37), reduced to the file's base name
# (jax_hlo_source_file_canonicalization_regex already does it for the
# frames JAX records; this makes sure that no path is left).
MLIR_FILE_LOC = re.compile(r'"(?:[^"\\]|\\.)*/((?:[^"\\/]|\\.)*)"(?=:\d+:\d+)')


def mlir_base_names(text):
    return MLIR_FILE_LOC.sub(lambda m: '"' + m.group(1) + '"', text)


def mlir_summary(text):
    """The operations (their full names, "stablehlo.add", "func.call")
    and custom-call targets in a StableHLO module's text: every operation
    inside the module (func.func included, the module itself not), and
    the body of each short-form stablehlo.reduce."""
    ops = set()
    for line in text.splitlines():
        m = MLIR_OP.match(line)
        if not m:
            continue
        op = MLIR_FUNC_OPS.get(m.group(2), m.group(2))
        if op in MLIR_NOT_OPS:
            continue
        if "." not in op:
            sys.exit(f"an operation without a dialect in the StableHLO "
                     f"text: {line.strip()}")
        ops.add(op)
    ops.update(MLIR_APPLIES.findall(text))
    targets = {a or b for a, b in MLIR_TARGET.findall(text)}
    return {"ops": sorted(ops), "custom_call_targets": sorted(targets)}


def hlo_summary(hlo):
    instrs = instructions(hlo)
    params = {}
    for comp, name, _, opcode, operands in instrs:
        if comp == "ENTRY" and opcode == "parameter":
            params[int(operands)] = name
    body = "\n".join(line for line in hlo.splitlines()
                     if INSTRUCTION.match(line))
    return {
        "opcodes": sorted({op for _, _, _, op, _ in instrs}),
        "element_types": sorted(set(ELEMENT_TYPE.findall(body))),
        "non_default_layouts": non_default_layouts(body),
        "custom_call_targets": sorted(set(TARGET.findall(hlo))),
        "params": [params[i] for i in sorted(params)],
    }


# ---------------------------------------------------------------------------
# Writing the fixtures
# ---------------------------------------------------------------------------


def leaves(tree):
    return [np.asarray(a) for a in jax.tree_util.tree_leaves(tree)]


def npy_entry(case_dir, name, array):
    path = os.path.join(case_dir, name)
    np.save(path, array, allow_pickle=False)
    return {"file": os.path.relpath(path, os.path.dirname(case_dir)),
            "dtype": str(array.dtype), "shape": list(array.shape)}


def check(name, got, want, tol):
    """JAX's results against the float64 reference, within the case's
    tolerance (exact cases compare exactly)."""
    if len(got) != len(want):
        sys.exit(f"{name}: JAX gave {len(got)} results, the reference "
                 f"{len(want)}")
    for i, (g, w) in enumerate(zip(got, want)):
        w = np.asarray(w)
        if g.shape != w.shape:
            sys.exit(f"{name}: result {i} has shape {g.shape}, the "
                     f"reference {w.shape}")
        if g.dtype.kind in "fc":
            ok = np.isclose(g.astype(F64 if g.dtype.kind == "f" else
                                     np.complex128),
                            w.astype(g.dtype).astype(
                                F64 if g.dtype.kind == "f" else
                                np.complex128),
                            rtol=tol["rtol"], atol=tol["atol"],
                            equal_nan=True)
        else:
            ok = g == w.astype(g.dtype)
        if not np.all(ok):
            bad = np.argwhere(~np.asarray(ok))[0]
            sys.exit(f"{name}: result {i} at {tuple(bad)} is "
                     f"{g[tuple(bad)]!r}, the reference "
                     f"{w[tuple(bad)]!r}")


def jitted(case):
    if not case.get("column_major"):
        return jax.jit(case["fn"])
    # The first parameter only: major_to_minor (1, 0), dimension 1 major
    # and 0 minor, which XLA prints as the layout {0,1}. A layout needs a
    # concrete sharding. (Results with a layout would bring JAX's sharding
    # custom calls, xla.sdy.FuncResultSharding, into the lowered module.)
    s = jax.sharding.SingleDeviceSharding(jax.devices("cpu")[0])
    fmt = Format(Layout(major_to_minor=(1, 0)), s)
    rest = (None,) * (len(case["inputs"]) - 1)
    return jax.jit(case["fn"], in_shardings=(fmt,) + rest)


def generate_case(case, out_dir):
    name = case["name"]
    fn = jitted(case)
    inputs = case["inputs"]
    case_dir = os.path.join(out_dir, name)
    os.makedirs(case_dir)

    lowered = fn.lower(*inputs)
    lowered_hlo = lowered.as_text(dialect="hlo")
    stablehlo = mlir_base_names(lowered.as_text(debug_info=True))
    modules = {"lowered": lowered_hlo,
               "optimized": lowered.compile().as_text()}
    variants = {}
    for variant, text in modules.items():
        with open(os.path.join(case_dir, variant + ".hlo"), "w") as f:
            f.write(text)
        summary = hlo_summary(text)
        variants[variant] = {
            "hlo": f"{name}/{variant}.hlo",
            "opcodes": summary["opcodes"],
            "element_types": summary["element_types"],
            "non_default_layouts": summary["non_default_layouts"],
            "custom_call_targets": summary["custom_call_targets"],
        }
        params = summary["params"]
        if len(params) != len(inputs):
            sys.exit(f"{name}: the {variant} module has {len(params)} "
                     f"parameters, the case {len(inputs)} inputs")
        if variant == "lowered":
            lowered_params = params
    for found in (ROOT + "/", "site-packages/"):
        if found in stablehlo:
            sys.exit(f"{name}: the StableHLO text has a path: {found}")
    with open(os.path.join(case_dir, "stablehlo.mlir"), "w") as f:
        f.write(stablehlo)
    summary = mlir_summary(stablehlo)
    variants["stablehlo"] = {
        "hlo": f"{name}/stablehlo.mlir",
        "ops": summary["ops"],
        "custom_call_targets": summary["custom_call_targets"],
    }

    got = leaves(fn(*inputs))
    check(name, got, case["reference"](*as64(*inputs)), case["tolerance"])

    entry = {
        "name": name,
        "program": case["program"],
        "about": case["about"],
        "custom_calls": bool(case["targets"]),
        "targets": case["targets"],
        "xla_ffi": [f"{HANDLERS_REL}:{TARGETS[t]}={t}"
                    for t in case["targets"]],
        "tolerance": case["tolerance"],
        "inputs": [],
        "outputs": [npy_entry(case_dir, f"output{i}.npy", y)
                    for i, y in enumerate(got)],
        "variants": variants,
    }
    for i, (x, pname) in enumerate(zip(inputs, lowered_params)):
        item = npy_entry(case_dir, f"input{i}.npy", np.asarray(x))
        item.update({"param": i, "hlo_name": pname})
        entry["inputs"].append(item)
    return entry


SCALAR_LIST = re.compile(r"\[\s*([^\[\]{}]*?)\s*\]", re.S)
FLAT_OBJECT = re.compile(r"\{\s*([^{}\[\]]*(?:\[[^\[\]]*\][^{}\[\]]*)*?)\s*\}",
                         re.S)


def compact_json(value):
    """JSON indented by 2, with each list of numbers or strings and each
    object of such values on one line (opcodes, shapes, an input), so the
    manifest stays short and its diffs readable."""
    def one_line(m, open_, close):
        return open_ + re.sub(r",\s+", ", ", m.group(1).strip()) + close
    text = json.dumps(value, indent=2)
    text = SCALAR_LIST.sub(lambda m: one_line(m, "[", "]"), text)
    text = FLAT_OBJECT.sub(lambda m: one_line(m, "{", "}"), text)
    return text + "\n"


def clear(out_dir):
    """Removes what an earlier run wrote (the case directories its manifest
    lists, the manifest), nothing else."""
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


def add_serialized(out_dir, manifest_path, only):
    """Writes each case's exported.jax_exported and its manifest variant."""
    from jax import export
    with open(manifest_path) as f:
        manifest = json.load(f)
    by_name = {c["name"]: c for c in CASES}
    for entry in manifest["cases"]:
        name = entry["name"]
        if only and name not in only:
            continue
        case = by_name[name]
        checks = [export.DisabledSafetyCheck.custom_call(t) for t in case["targets"]]
        try:
            exported = export.export(jitted(case), platforms=["cpu"],
                                     disabled_checks=checks)(*case["inputs"])
            data = exported.serialize()
        except Exception as e:  # what jax.export refuses is not a fixture
            print(f"{name}: not serialized: {type(e).__name__}: {e}".splitlines()[0])
            entry["variants"].pop("serialized", None)
            continue
        with open(os.path.join(out_dir, name, "exported.jax_exported"), "wb") as f:
            f.write(data)
        entry["variants"]["serialized"] = {"hlo": f"{name}/exported.jax_exported"}
    with open(manifest_path, "w") as f:
        f.write(compact_json(manifest))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=DEFAULT_OUT,
                        help="output directory (default: %(default)s)")
    parser.add_argument("--cases", nargs="+", metavar="NAME",
                        help="make only these cases, keeping every other "
                             "case the manifest lists as it is (XLA:CPU may "
                             "round the last bits of other cases otherwise "
                             "on another CPU)")
    parser.add_argument("--serialized", action="store_true",
                        help="add each case's serialized export (and nothing else)")
    args = parser.parse_args()
    names = [c["name"] for c in CASES]
    unknown = sorted(set(args.cases or []) - set(names))
    if unknown:
        parser.error(f"no case {', '.join(unknown)}; the cases are "
                     f"{', '.join(names)}")

    if jax.__version__ != JAX_VERSION:
        sys.exit(f"jax {JAX_VERSION} is needed, this is {jax.__version__} "
                 "(`make hlo-fixtures` makes a virtual environment with it)")
    if not os.path.exists(HANDLERS):
        sys.exit(f"{HANDLERS} is missing (`make fixtures` makes it)")
    jax.config.update("jax_platforms", "cpu")
    jax.config.update("jax_hlo_source_file_canonicalization_regex", ".*/")

    out_dir = os.path.abspath(args.out)
    os.makedirs(out_dir, exist_ok=True)
    manifest_path = os.path.join(out_dir, "manifest.json")
    if args.serialized:
        register()
        add_serialized(out_dir, manifest_path, args.cases)
        add_bytecode(out_dir, manifest_path, args.cases)
        return
    if args.cases:
        if not os.path.exists(manifest_path):
            sys.exit(f"--cases adds to {manifest_path}, which is missing")
        with open(manifest_path) as f:
            kept = {c["name"]: c for c in json.load(f)["cases"]}
        for name in args.cases:
            shutil.rmtree(os.path.join(out_dir, name), ignore_errors=True)
    else:
        kept = {}
        clear(out_dir)
    register()

    made = {case["name"]: generate_case(case, out_dir) for case in CASES
            if not args.cases or case["name"] in args.cases}
    kept.update(made)
    cases = [kept[name] for name in names if name in kept]
    with open(HANDLERS, "rb") as f:
        handlers_sha256 = hashlib.sha256(f.read()).hexdigest()
    manifest = {
        "format": 1,
        "about": "HLO programs as JAX lowers them and XLA:CPU optimizes "
                 "them, with inputs and JAX's outputs; see README.md",
        "jax_version": jax.__version__,
        "jaxlib_version": jaxlib.__version__,
        "numpy_version": np.__version__,
        "platform": "cpu",
        "machine": platform.machine(),
        "handlers": {"library": HANDLERS_REL, "sha256": handlers_sha256,
                     "targets": {t: TARGETS[t] for t in sorted(TARGETS)}},
        "cases": cases,
    }
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        f.write(compact_json(manifest))
    print(f"wrote {len(cases)} cases to {out_dir}")


def add_bytecode(out_dir, manifest_path, only):
    """With --serialized, also each serialized case's portable artifact
    alone, as JAX deploys a module without its calling convention:
    DIR/<case>/exported.bc (`Exported.mlir_module_serialized`) and the
    manifest variant "bytecode". (Defined last, so that the lines the
    other exports' locations name stay where they were.)"""
    from jax import export
    with open(manifest_path) as f:
        manifest = json.load(f)
    by_name = {c["name"]: c for c in CASES}
    for entry in manifest["cases"]:
        name = entry["name"]
        if (only and name not in only) or "serialized" not in entry["variants"]:
            continue
        case = by_name[name]
        checks = [export.DisabledSafetyCheck.custom_call(t) for t in case["targets"]]
        exported = export.export(jitted(case), platforms=["cpu"],
                                 disabled_checks=checks)(*case["inputs"])
        with open(os.path.join(out_dir, name, "exported.bc"), "wb") as f:
            f.write(exported.mlir_module_serialized)
        entry["variants"]["bytecode"] = {"hlo": f"{name}/exported.bc"}
    with open(manifest_path, "w") as f:
        f.write(compact_json(manifest))


if __name__ == "__main__":
    main()
