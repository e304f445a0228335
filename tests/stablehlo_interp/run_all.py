#!/usr/bin/env python3
"""Runs every case of manifest.json with run_case.sh and summarises.

    run_all.py KCALL NPY_EQUAL [--hlo] [--work DIR] [--jobs N] [--tsv FILE]
               [--no-check-expected] [--update-readme] [CASE...]

--hlo runs the HLO form of each case instead (cases_hlo/, to_hlo.py's
translation; the cases it lists in cases_hlo.txt).

Unless --no-check-expected, each expected value kcall wrote (the
%expectedK constants of a case) is also checked against this script's own
reading of the dense<...> literal, so that a constant kcall misreads fails
the case even when the computed value was misread the same way (as in the
tests of stablehlo.constant itself). Prints one line per case (name, passed/refused/failed, the refusal or the
reason), then the counts and the refusals grouped by message (numbers,
names and quoted text folded, so that one missing feature is one group).
--tsv writes the per-case lines to FILE; --update-readme rewrites the
results section of README.md (between its RESULTS markers). Exit status 1 when any case
failed, else 0. Standard library only.
"""
import argparse
import ast
import collections
import concurrent.futures
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


# ---- an independent reading of the expected constants -------------------------

NPY_DESCR = {
    "i1": "|b1", "i8": "|i1", "i16": "<i2", "i32": "<i4", "i64": "<i8",
    "si8": "|i1", "si16": "<i2", "si32": "<i4", "si64": "<i8",
    "ui8": "|u1", "ui16": "<u2", "ui32": "<u4", "ui64": "<u8",
    "f16": "<f2", "f32": "<f4", "f64": "<f8",
    "complex<f32>": "<c8", "complex<f64>": "<c16",
}
FLOAT_FMT = {"f16": ("<e", 2), "f32": ("<f", 4), "f64": ("<d", 8)}


def read_npy(path):
    """(descr, shape, raw data) of a .npy file."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        raise ValueError("not a .npy file")
    if data[6] == 1:
        hlen = struct.unpack("<H", data[8:10])[0]
        start = 10
    else:
        hlen = struct.unpack("<I", data[8:12])[0]
        start = 12
    header = ast.literal_eval(data[start:start + hlen].decode("latin1"))
    if header.get("fortran_order"):
        raise ValueError("Fortran order")
    return header["descr"], tuple(header["shape"]), data[start + hlen:]


def dense_tokens(text):
    return re.findall(r"[-+]?0x[0-9A-Fa-f]+|[-+]?[0-9.]+(?:[eE][-+]?\d+)?|true|false|[()\[\],]",
                      text)


def dense_elements(text):
    """The elements of a dense<...> literal in row-major order: numbers as
    their token text, complex numbers as (re, im) pairs; and whether it is a
    splat."""
    toks = dense_tokens(text)
    pos = [0]

    def value():
        t = toks[pos[0]]
        if t == "(":
            re_, im = toks[pos[0] + 1], toks[pos[0] + 3]
            assert toks[pos[0] + 2] == "," and toks[pos[0] + 4] == ")"
            pos[0] += 5
            return [(re_, im)]
        if t == "[":
            pos[0] += 1
            out = []
            while toks[pos[0]] != "]":
                out.extend(value())
                if toks[pos[0]] == ",":
                    pos[0] += 1
            pos[0] += 1
            return out
        pos[0] += 1
        return [t]

    splat = bool(toks) and toks[0] != "["
    elems = value()
    if pos[0] != len(toks):
        raise ValueError("trailing text in dense<%s>" % text)
    return elems, splat


def encode(elem_type, tok):
    if elem_type == "i1":
        return b"\x01" if tok in ("true", "1") else b"\x00"
    if elem_type in FLOAT_FMT:
        fmt, width = FLOAT_FMT[elem_type]
        if tok.lower().lstrip("+-").startswith("0x"):
            return int(tok, 16).to_bytes(width, "little")
        return struct.pack(fmt, float(tok))
    if elem_type.startswith("complex<"):
        inner = elem_type[len("complex<"):-1]
        return encode(inner, tok[0]) + encode(inner, tok[1])
    width = int(NPY_DESCR[elem_type][2:])
    v = int(tok, 16) if "0x" in tok.lower() else int(tok)
    return v.to_bytes(width, "little", signed=not elem_type.startswith("ui") and v < 0)


CONST_RE = re.compile(r"(%expected\d+) = stablehlo\.constant dense<(.*?)> : tensor<([^>]*>?)>", re.S)


def check_expected(case_file, work, returned):
    """None when every %expectedK kcall wrote holds the literal's values;
    else what differs."""
    with open(case_file, encoding="utf-8") as f:
        text = f.read()
    for m in CONST_RE.finditer(text):
        name, literal, ttype = m.group(1), m.group(2), m.group(3)
        dims = re.findall(r"(\d+)x", ttype)
        elem_type = re.sub(r"^(\d+x)*", "", ttype)
        if elem_type not in NPY_DESCR or name not in returned:
            continue
        path = os.path.join(work, "out%d.npy" % returned.index(name))
        if not os.path.exists(path):
            return None  # kcall wrote nothing: run_case.sh says why
        try:
            descr, shape, data = read_npy(path)
            elems, splat = dense_elements(literal)
            count = 1
            for d in dims:
                count *= int(d)
            if splat:
                elems = elems * count
            want = b"".join(encode(elem_type, e) for e in elems)
        except (ValueError, AssertionError, IndexError, OverflowError, struct.error) as e:
            return "%s: cannot check: %s" % (name, e)
        if shape != tuple(int(d) for d in dims) or descr.replace("=", "<") != NPY_DESCR[elem_type]:
            return "%s: kcall wrote %s%s, the literal is %s" % (name, descr, shape, ttype)
        if data != want:
            width = len(want) // max(len(elems), 1)
            for i in range(len(elems)):
                if data[i * width:(i + 1) * width] != want[i * width:(i + 1) * width]:
                    return ("%s (the expected constant) read differently by kcall: element %d "
                            "of dense<...> is %s, kcall has bytes %s, want %s" % (
                                name, i, elems[i], data[i * width:(i + 1) * width].hex(),
                                want[i * width:(i + 1) * width].hex()))
    return None


def returned_values(case_file):
    with open(case_file, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^  func\.return (.*?) :", text.split("func.func @main()")[-1], re.M)
    return [v.strip() for v in m.group(1).split(",")] if m else []


def run_one(args, work, case):
    d = os.path.join(work, case["name"])
    program = (os.path.join(HERE, "cases_hlo", case["name"] + ".hlo") if args.hlo
               else os.path.join(HERE, case["case"]))
    cmd = ["sh", os.path.join(HERE, "run_case.sh"), args.kcall, args.npy_equal, d,
           program] + case["run_case_kinds"]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        with open(os.path.join(d, "result"), encoding="utf-8", errors="replace") as f:
            verdict, _, why = f.read().rstrip("\n").partition("\t")
    except OSError:
        out = p.stdout.decode(errors="replace").strip().split("\n")
        verdict, why = "failed", "run_case.sh exited %d: %s" % (p.returncode, out[-1] if out else "")
    if args.check_expected and verdict in ("passed", "failed"):
        case_file = os.path.join(HERE, case["case"])
        bad = check_expected(case_file, d, returned_values(case_file))
        if bad:
            verdict, why = "failed", bad + ("" if verdict == "passed" else "; " + why)
    return case["name"], verdict, why


def group_key(msg):
    """A refusal without its specifics (line/column, names, numbers)."""
    m = re.sub(r"^(\w+): (parsing|writing|reading) '[^']*'(\.\.\.'[^']*')?( \(\d+ bytes\))?: ",
               r"\1: \2: ", msg)
    m = re.sub(r"instruction '[^']*' \(line \d+\): ", "", m)
    m = re.sub(r"line \d+, column \d+: ", "", m)
    m = re.sub(r" \((supported:|element types:|kcall reads the StableHLO ops)[^)]*\)", "", m)
    m = re.sub(r"%[\w#.$-]+", "%x", m)
    m = re.sub(r"tensor<[^>]*>+: ", "", m)
    m = re.sub(r"'!quant[^']*'", "'!quant.uniform<...>'", m)
    return m


BEGIN, END = "<!-- RESULTS BEGIN (run_all.py --update-readme) -->", "<!-- RESULTS END -->"
HLO_BEGIN = "<!-- HLO RESULTS BEGIN (run_all.py --hlo --update-readme) -->"
HLO_END = "<!-- HLO RESULTS END -->"


def results_markdown(manifest, results, hlo):
    by_case = {c["name"]: c for c in manifest["cases"]}
    counts = collections.Counter(v for _, v, _ in results)
    if hlo:
        out = ["HLO forms: %d; passed %d, refused %d, failed %d (cases the translation does "
               "not convert: %d, see hlo_skipped.txt)." % (
                   len(results), counts["passed"], counts["refused"], counts["failed"],
                   len(manifest["cases"]) - len(results)), ""]
    else:
        out = ["Cases: %d; passed %d, refused %d, failed %d (tests not converted: %d, "
               "see manifest.json \"skipped\")." % (
                   len(results), counts["passed"], counts["refused"], counts["failed"],
                   len(manifest["skipped"])), ""]
    per_file = collections.defaultdict(collections.Counter)
    for name, v, _ in results:
        per_file[by_case[name]["file"]][v] += 1
    clean = [f for f in sorted(per_file) if set(per_file[f]) == {"passed"}]
    out += ["All %d cases of these %d files pass: %s." % (
        sum(per_file[f]["passed"] for f in clean), len(clean),
        ", ".join(f[:-len(".mlir")] for f in clean)), ""]
    out += ["| upstream file | passed | refused | failed |", "| --- | ---: | ---: | ---: |"]
    for f in sorted(per_file):
        if f in clean:
            continue
        c = per_file[f]
        out.append("| %s | %d | %d | %d |" % (f, c["passed"], c["refused"], c["failed"]))
    out += ["", "Failed:", ""]
    for name, v, why in results:
        if v == "failed":
            out.append("- `%s`: %s" % (name, shorten(why)))
    out += ["", "Refused, by reason:", ""]
    groups = collections.defaultdict(list)
    for name, v, why in results:
        if v == "refused":
            groups[group_key(why)].append(name)
    for g, names in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        shown = ", ".join("`%s`" % n for n in names[:4])
        if len(names) > 4:
            shown += " and %d more" % (len(names) - 4)
        out.append("- %d: %s (%s)" % (len(names), g, shown))
    return "\n".join(out)


def shorten(why):
    why = re.sub(r"'[^']*/cases/[^']*'(\.\.\.'[^']*')?( \(\d+ bytes\))?", "CASE", why)
    return why.replace("kcall exited with status 1: kcall: error: ", "")


def update_readme(text, hlo):
    path = os.path.join(HERE, "README.md")
    with open(path, encoding="utf-8") as f:
        readme = f.read()
    begin, end = (HLO_BEGIN, HLO_END) if hlo else (BEGIN, END)
    a, b = readme.index(begin) + len(begin), readme.index(end)
    with open(path, "w", encoding="utf-8") as f:
        f.write(readme[:a] + "\n" + text + "\n" + readme[b:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kcall")
    ap.add_argument("npy_equal")
    ap.add_argument("cases", nargs="*", help="case names (default: all)")
    ap.add_argument("--hlo", action="store_true", help="run the HLO forms (cases_hlo/)")
    ap.add_argument("--work", help="work folder (default: a temporary one, removed)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--no-check-expected", dest="check_expected", action="store_false")
    ap.add_argument("--update-readme", action="store_true")
    ap.add_argument("--tsv", help="write name<TAB>verdict<TAB>message lines here")
    args = ap.parse_args()
    if args.update_readme and args.cases:
        ap.error("--update-readme runs every case")
    args.kcall = os.path.abspath(args.kcall)
    args.npy_equal = os.path.abspath(args.npy_equal)
    with open(os.path.join(HERE, "manifest.json"), encoding="utf-8") as f:
        manifest = json.load(f)
    cases = manifest["cases"]
    if args.hlo:
        with open(os.path.join(HERE, "cases_hlo.txt"), encoding="utf-8") as f:
            converted = {line.split()[0] for line in f if line.strip()}
        cases = [c for c in cases if c["name"] in converted]
    if args.cases:
        want = set(args.cases)
        cases = [c for c in cases if c["name"] in want]
    work = args.work or tempfile.mkdtemp(prefix="stablehlo_interp_run.")
    try:
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
            results = list(ex.map(lambda c: run_one(args, work, c), cases))
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    counts = collections.Counter(v for _, v, _ in results)
    lines = ["%s\t%s\t%s" % r for r in results]
    print("\n".join(lines))
    if args.tsv:
        with open(args.tsv, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
    print()
    print("cases: %d; passed %d, refused %d, failed %d" % (
        len(results), counts["passed"], counts["refused"], counts["failed"]))
    if args.update_readme:
        update_readme(results_markdown(manifest, results, args.hlo), args.hlo)
    groups = collections.Counter(group_key(w) for _, v, w in results if v == "refused")
    if groups:
        print("\nrefusals by reason:")
        for g, n in groups.most_common():
            print("%5d  %s" % (n, g))
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
