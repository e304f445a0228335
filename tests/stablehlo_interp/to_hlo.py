#!/usr/bin/env python3
"""Writes the HLO form of each case: cases_hlo/<name>.hlo and cases_hlo.txt.

    .venv-jax/bin/python tests/stablehlo_interp/to_hlo.py

Each case of manifest.json (cases/<name>.mlir) is converted to HLO text by
the StableHLO-to-HLO translation jaxlib ships (the one XLA compiles JAX's
StableHLO with: `mlir_module_to_xla_computation(...).as_hlo_text()`), so
that ctest also runs every test through kcall's HLO text parser
(stablehlo_interp_hlo_<name>). cases_hlo.txt lists the converted cases with
their run_case.sh KIND arguments, as cases.txt does; hlo_skipped.txt lists
the others with the translation's message (ops and types XLA's HLO has no
form for: quantized ops, dynamic_conv, complex cbrt, an i1 bitcast). Each
translation runs in a forked child, since the translation aborts the
process on some inputs rather than raising.

Needs jax and jaxlib 0.10.2 (the Makefile's fixtures environment).
"""
import json
import os
import sys

from jax._src.lib import hlo, xla_client as xc

HERE = os.path.dirname(os.path.abspath(__file__))


def translate(text):
    """(hlo, None) or (None, why), the translation run in a child."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            comp = xc._xla.mlir.mlir_module_to_xla_computation(
                text, use_tuple_args=False, return_tuple=False)
            # As Lowered.as_text(dialect="hlo") prints it, every constant
            # written out.
            opts = hlo.HloPrintOptions.short_parsable()
            opts.print_large_constants = True
            opts.print_metadata = False
            msg = "OK\n" + comp.as_hlo_module().to_string(opts)
        except Exception as e:  # the translation's refusal, passed on as text
            msg = "ERR " + " ".join(str(e).split())[:300]
        data = msg.encode()
        while data:
            data = data[os.write(w, data):]
        os._exit(0)
    os.close(w)
    chunks = []
    while True:
        chunk = os.read(r, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(r)
    _, status = os.waitpid(pid, 0)
    out = b"".join(chunks).decode()
    if out.startswith("OK\n"):
        return out[3:], None
    return None, out[4:] if out.startswith("ERR ") else "the translation aborted (status %d)" % status


def main():
    with open(os.path.join(HERE, "manifest.json"), encoding="utf-8") as f:
        manifest = json.load(f)
    out_dir = os.path.join(HERE, "cases_hlo")
    os.makedirs(out_dir, exist_ok=True)
    for old in os.listdir(out_dir):
        os.remove(os.path.join(out_dir, old))
    listed, skipped = [], []
    for case in manifest["cases"]:
        with open(os.path.join(HERE, case["case"]), encoding="utf-8") as f:
            text = f.read()
        hlo_text, why = translate(text)
        if hlo_text is None:
            skipped.append("%s %s" % (case["name"], why))
            continue
        with open(os.path.join(out_dir, case["name"] + ".hlo"), "w", encoding="utf-8") as f:
            f.write("// The HLO form of cases/%s.mlir (to_hlo.py).\n" % case["name"])
            f.write(hlo_text)
        listed.append(" ".join([case["name"]] + case["run_case_kinds"]))
    with open(os.path.join(HERE, "cases_hlo.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(listed) + "\n")
    with open(os.path.join(HERE, "hlo_skipped.txt"), "w", encoding="utf-8") as f:
        f.write("# Cases XLA's StableHLO-to-HLO translation does not convert (to_hlo.py).\n")
        f.write("\n".join(skipped) + "\n")
    print("%d cases in HLO, %d not converted" % (len(listed), len(skipped)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
