#!/usr/bin/env python3
"""Converts the StableHLO interpreter's own tests into kcall fixtures.

    convert.py [SRC_DIR] [--git-dir GIT_DIR] [--commit HASH] [--out DIR]

Reads the .mlir files of stablehlo/tests/interpret (and its chlo/
subfolder) of openxla/stablehlo, either from SRC_DIR (a folder holding
those files, e.g. a checkout's stablehlo/tests/interpret) or, without it,
from the git directory GIT_DIR (default: $STABLEHLO_GIT_DIR) of a clone
of openxla/stablehlo, whose HEAD is exported to a temporary folder first. Every test (one `// -----` chunk of a file, run
upstream as `stablehlo-translate --interpret -split-input-file`: the
chunk's @main, or its only function) becomes one module,
cases/<file>__<function>.mlir, whose

    func.func @main() -> (actual0, expected0, actual1, expected1, ...)

holds the test's ops with each check.expect_* op replaced by returning the
checked value and the value it is checked against (an expected constant
becomes a stablehlo.constant); the chunk's other functions (helpers the
test calls) are kept as they are. manifest.json lists every case (its
comparisons, element types and ops) and every test not converted, with the
reason. Standard library only.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

UPSTREAM = "https://github.com/openxla/stablehlo"
UPSTREAM_DIR = "stablehlo/tests/interpret"
HERE = os.path.dirname(os.path.abspath(__file__))

# The tolerance check.expect_almost_eq(_const) uses when it gives none
# (stablehlo/tests/CheckOps.td: DefaultValuedOptionalAttr<F64Attr, "1e-4">;
# stablehlo/reference/Element.cpp areApproximatelyEqual: |a - b| <= tol,
# NaN matches NaN, complex parts compared one by one).
DEFAULT_ALMOST_EQ_TOLERANCE = 1e-4
# check.expect_close's default max_ulp_difference (CheckOps.td).
DEFAULT_MAX_ULP = 1

# Ops that need several processes (replicas or partitions), and other
# reasons a test cannot run as one program with no inputs.
COLLECTIVE_OPS = {
    "all_reduce", "all_gather", "all_to_all", "collective_permute",
    "reduce_scatter", "collective_broadcast", "collective_reduce", "partition_id",
    "replica_id",
}
IO_OPS = {"infeed", "outfeed", "send", "recv"}


# ---- text helpers ----------------------------------------------------------

def strip_comments(text):
    """Removes // comments (outside string literals), keeping the lines."""
    out = []
    for line in text.split("\n"):
        in_str = False
        i = 0
        cut = len(line)
        while i < len(line):
            c = line[i]
            if in_str:
                if c == "\\":
                    i += 1
                elif c == '"':
                    in_str = False
            elif c == '"':
                in_str = True
            elif line.startswith("//", i):
                cut = i
                break
            i += 1
        out.append(line[:cut].rstrip())
    return "\n".join(out)


def split_chunks(text):
    """The `// -----` chunks of a file (as -split-input-file does)."""
    return re.split(r"^.*// -----.*$", text, flags=re.M)


def match_group(text, i, open_c, close_c):
    """Index just past the group that opens at text[i] (== open_c)."""
    assert text[i] == open_c
    depth = 0
    in_str = False
    while i < len(text):
        c = text[i]
        if in_str:
            if c == "\\":
                i += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif c == open_c:
            depth += 1
        elif c == close_c and not (close_c == ">" and text[i - 1] == "-"):
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError("unbalanced %r" % open_c)


def bracket_depth_delta(line):
    """Net ( [ { opened minus closed on a line, outside strings."""
    d = 0
    in_str = False
    i = 0
    while i < len(line):
        c = line[i]
        if in_str:
            if c == "\\":
                i += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif c in "([{":
            d += 1
        elif c in ")]}":
            d -= 1
        i += 1
    return d


# ---- functions --------------------------------------------------------------

class Func:
    def __init__(self, name, start, header_end, body_start, end, text):
        self.name = name
        self.start = start          # index of "func.func"
        self.header = text[start:header_end]
        self.body = text[body_start:end - 1]   # between { and }
        self.text = text[start:end]
        self.args = ""
        self.results = ""


FUNC_RE = re.compile(r"func\.func\s+(?:(?:private|public|nested)\s+)?@([\w.$-]+|\"[^\"]*\")")


def find_functions(text):
    funcs = []
    pos = 0
    while True:
        m = FUNC_RE.search(text, pos)
        if not m:
            return funcs
        name = m.group(1).strip('"')
        i = m.end()
        while text[i].isspace():
            i += 1
        args_end = match_group(text, i, "(", ")")
        args = text[i + 1:args_end - 1]
        j = args_end
        # Results, `attributes {...}`, then the body's {.
        results = ""
        while True:
            while text[j].isspace():
                j += 1
            if text.startswith("->", j):
                k = j + 2
                while text[k].isspace():
                    k += 1
                if text[k] == "(":
                    r_end = match_group(text, k, "(", ")")
                else:
                    # One result type, up to `{` or `attributes` at depth 0.
                    r_end = k
                    while text[r_end] != "{" and not text.startswith("attributes", r_end):
                        if text[r_end] in "<":
                            r_end = match_group(text, r_end, "<", ">")
                        else:
                            r_end += 1
                results = text[k:r_end].strip()
                j = r_end
            elif text.startswith("attributes", j):
                j += len("attributes")
                while text[j].isspace():
                    j += 1
                j = match_group(text, j, "{", "}")
            elif text[j] == "{":
                break
            else:
                raise ValueError("unexpected text after func.func @%s: %r" % (name, text[j:j + 40]))
        end = match_group(text, j, "{", "}")
        f = Func(name, m.start(), j, j + 1, end, text)
        f.args = args.strip()
        f.results = results
        funcs.append(f)
        pos = end


# ---- statements of a body ---------------------------------------------------

STMT_START_RE = re.compile(
    r"^\s*(%[\w$.#:-]+(\s*,\s*%[\w$.#:-]+)*\s*=|\"?[a-z_][\w]*\.[\w.]+\"?|return\b|\^)")


def split_statements(body):
    """Splits a function body into top-level statements (lists of lines).

    A statement starts on a line at bracket depth 0 that begins with
    `%x =`, an op name, `return` or a block label; other lines (a while's
    `cond {`, `} do {`, a multi-line dense<...>) continue the statement
    before them."""
    stmts = []
    depth = 0
    for line in body.split("\n"):
        if not line.strip():
            if stmts and depth > 0:
                stmts[-1].append(line)
            continue
        if depth == 0 and (STMT_START_RE.match(line) or not stmts):
            stmts.append([line])
        else:
            stmts[-1].append(line)
        depth += bracket_depth_delta(line)
    return ["\n".join(s) for s in stmts]


# ---- check ops ----------------------------------------------------------------

class Unconvertible(Exception):
    pass


def parse_typed_attr(s, i):
    """Parses `dense<...> : T` at s[i:]; returns (value, type, end)."""
    m = re.compile(r"\s*(dense|dense_resource|sparse)<").match(s, i)
    if not m:
        raise Unconvertible("expected dense<...> in %r" % s.strip())
    v_end = match_group(s, m.end() - 1, "<", ">")
    value = s[m.start(1):v_end]
    m2 = re.compile(r"\s*:\s*").match(s, v_end)
    if not m2:
        raise Unconvertible("expected ': TYPE' after the value in %r" % s.strip())
    t_start = m2.end()
    t_end = parse_type_end(s, t_start)
    return value, s[t_start:t_end], t_end


def parse_type_end(s, i):
    m = re.compile(r"(tensor|tuple|complex|!\w+\.\w+)<").match(s, i)
    if m:
        return match_group(s, m.end() - 1, "<", ">")
    m = re.compile(r"[\w!.]+").match(s, i)
    if not m:
        raise Unconvertible("expected a type at %r" % s[i:i + 30])
    return m.end()


def parse_tail_attrs(s, i):
    """`, name = value`... and `{name = value : type, ...}` up to the end."""
    attrs = {}
    rest = s[i:].strip()
    while rest:
        m = re.match(r",\s*(\w+)\s*=\s*([^,{:]+?)\s*(?=,|:|\{|$)", rest)
        if m:
            attrs[m.group(1)] = m.group(2).strip()
            rest = rest[m.end():].strip()
            continue
        if rest.startswith("{"):
            end = match_group(rest, 0, "{", "}")
            for part in re.finditer(r"(\w+)\s*=\s*([^,}]+)", rest[1:end - 1]):
                v = part.group(2).strip()
                v = re.sub(r"\s*:\s*\w+$", "", v)  # "0.1 : f64"
                attrs[part.group(1)] = v
            rest = rest[end:].strip()
            continue
        break
    return attrs, rest


def parse_number(text):
    return float(text) if re.search(r"[.eE]", text) else int(text)


OPERAND = r"(%[\w$.-]+(?:#\d+)?)"


def convert_check(stmt, n):
    """One check op: returns (lines to add, [(actual, type), (expected, type)],
    comparison)."""
    s = " ".join(line.strip() for line in stmt.split("\n"))
    m = re.match(r"check\.(\w+)\s+", s)
    if not m:
        raise Unconvertible("not a check op: %r" % s)
    op = m.group(1)
    i = m.end()
    if op in ("expect_eq_const", "expect_almost_eq_const"):
        m = re.compile(OPERAND + r"\s*,").match(s, i)
        if not m:
            raise Unconvertible("cannot read %s: %r" % (op, s))
        actual = m.group(1)
        value, typ, j = parse_typed_attr(s, m.end())
        attrs, rest = parse_tail_attrs(s, j)
        if rest:
            raise Unconvertible("unexpected text after %s: %r" % (op, rest))
        name = "%%expected%d" % n
        lines = ["  %s = stablehlo.constant %s : %s" % (name, value, typ)]
        comp = {"kind": "eq"} if op == "expect_eq_const" else {"kind": "almost_eq"}
    elif op in ("expect_eq", "expect_almost_eq", "expect_close"):
        m = re.compile(OPERAND + r"\s*,\s*" + OPERAND).match(s, i)
        if not m:
            raise Unconvertible("cannot read %s: %r" % (op, s))
        actual, name = m.group(1), m.group(2)
        j = m.end()
        # Attributes up to the top-level ':' that starts the types.
        colon = s.rfind(" : ") if op != "expect_close" else s.find(" : ", j)
        attrs, rest = parse_tail_attrs(s[:colon], j)
        if rest:
            raise Unconvertible("unexpected text in %s: %r" % (op, rest))
        types = s[colon + 3:].strip()
        typ = types[:parse_type_end(types, 0)]
        lines = []
        comp = {"kind": {"expect_eq": "eq", "expect_almost_eq": "almost_eq",
                         "expect_close": "close"}[op]}
    else:
        raise Unconvertible("check.%s is not converted" % op)
    if comp["kind"] == "almost_eq" and "tolerance" in attrs:
        comp["tolerance"] = parse_number(attrs.pop("tolerance"))
    if comp["kind"] == "close":
        comp["max_ulp_difference"] = int(attrs.pop("max_ulp_difference", DEFAULT_MAX_ULP))
        if "min_ulp_difference" in attrs:
            comp["min_ulp_difference"] = int(attrs.pop("min_ulp_difference"))
    if attrs:
        raise Unconvertible("check.%s attributes not understood: %s" % (op, attrs))
    comp["check"] = "check." + op
    return lines, [(actual, typ), (name, typ)], comp


# ---- what a test uses ----------------------------------------------------------

OP_RE = re.compile(r"(?<![#!\w.])\"?((?:stablehlo|chlo|func|check|interpreter|mhlo|tensor|arith|shape)"
                   r"\.[a-z_][\w]*)\"?")


def ops_used(text):
    ops = set()
    # A composite's name ("stablehlo.add_n") is not an op of the program.
    text = re.sub(r'(stablehlo\.composite\s+)"[^"]*"', r"\1", text)
    for m in OP_RE.finditer(text):
        ops.add(m.group(1))
    # `stablehlo.reduce ... applies stablehlo.add` names an op too; keep it.
    if re.search(r"(?<![\w.])return\b", text):
        ops.add("func.return")
    return sorted(ops)


def tensor_types(text):
    """The text inside every tensor<...> of text."""
    out = []
    for m in re.finditer(r"tensor<", text):
        end = match_group(text, m.end() - 1, "<", ">")
        out.append(text[m.end():end - 1])
    return out


def element_type(inner):
    # Drop dimensions (4x, ?x) and an encoding (", #...").
    depth = 0
    for k, c in enumerate(inner):
        if c in "<([{":
            depth += 1
        elif c in ">)]}":
            depth -= 1
        elif c == "," and depth == 0:
            inner = inner[:k]
            break
    inner = inner.strip()
    while True:
        m = re.match(r"(\d+|\?)x", inner)
        if not m:
            break
        inner = inner[m.end():]
    return inner.strip()


def element_types(text):
    types = set()
    for inner in tensor_types(text):
        types.add(element_type(inner))
    if "!stablehlo.token" in text:
        types.add("!stablehlo.token")
    return sorted(types)


# ---- one chunk -------------------------------------------------------------------

def skip_reason(chunk, entry, ops):
    """Why a test cannot be one program kcall runs without inputs, or None."""
    short = {o.split(".", 1)[1] for o in ops if o.startswith("stablehlo.")}
    why = []
    coll = sorted(short & COLLECTIVE_OPS)
    if "interpreter.run_parallel" in ops:
        why.append("interpreter.run_parallel: needs several processes")
    if coll:
        why.append("collective op(s) %s: need several processes" % ", ".join(coll))
    for a in ("num_replicas", "num_partitions", "process_grid"):
        if a in chunk:
            why.append("%s: needs several processes" % a)
    io = sorted(short & IO_OPS)
    if io:
        why.append("%s: needs host I/O (infeed/outfeed/send/recv)" % ", ".join(io))
    other = sorted(o for o in ops if o.startswith("interpreter.") and o != "interpreter.run_parallel")
    if other:
        why.append("%s: interpreter-only op (probe/print instrumentation)" % ", ".join(other))
    if "!stablehlo.token" in chunk:
        why.append("tokens (!stablehlo.token values)")
    if why:
        return "; ".join(why)
    if entry.args:
        return "entry function takes arguments (%s), given upstream by --args" % entry.args
    if not any(o.startswith("check.") for o in ops):
        return "no check ops (upstream checks printed output with FileCheck, or nothing)"
    return None


def convert_chunk(src_name, chunk, commit):
    """Returns (entry name, module name, case text or None, info dict)."""
    text = strip_comments(chunk)
    if not text.strip():
        return None
    funcs = find_functions(text)
    if not funcs:
        return None
    module = re.search(r"^\s*module\s+@([\w.$-]+)", text, flags=re.M)
    module = module.group(1) if module else None
    mains = [f for f in funcs if f.name == "main"]
    if mains:
        entry = mains[0]
    elif len(funcs) == 1:
        entry = funcs[0]
    else:
        return (None, module, None, {
            "reason": "no @main and several functions: upstream runs none of them",
            "functions": [f.name for f in funcs]})
    helpers = [f for f in funcs if f is not entry]
    ops = ops_used(text)
    info = {"ops": ops, "element_types": element_types(text)}
    reason = skip_reason(text, entry, ops)
    if reason:
        info["reason"] = reason
        return entry.name, module, None, info
    # Rewrite the entry's body.
    out_lines = []
    returns = []
    comparisons = []
    n = 0
    try:
        for stmt in split_statements(entry.body):
            head = stmt.strip()
            if head.startswith("check."):
                lines, vals, comp = convert_check(stmt, n)
                n += 1
                out_lines.extend(lines)
                returns.extend(vals)
                comparisons.append(comp)
            elif re.match(r"(func\.)?return\b", head):
                pass  # replaced by the return of the checked values
            else:
                out_lines.append(stmt)
    except Unconvertible as e:
        info["reason"] = "check op not converted: %s" % e
        return entry.name, module, None, info
    types = [t for _, t in returns]
    parts = []
    parts.append("// Converted from %s/blob/%s/%s/%s, func @%s" % (
        UPSTREAM, commit, UPSTREAM_DIR, src_name, entry.name))
    parts.append("// (Apache License 2.0; see tests/stablehlo_interp/README.md). Results come")
    parts.append("// in pairs: the value computed, then the value the upstream check expects.")
    for h in helpers:
        parts.append("")
        parts.append(dedent_block(h.text))
    parts.append("")
    parts.append("func.func @main() -> (%s) {" % ", ".join(types))
    parts.append(dedent_block("\n".join(out_lines), keep=2))
    parts.append("  func.return %s : %s" % (", ".join(v for v, _ in returns), ", ".join(types)))
    parts.append("}")
    case_text = "\n".join(parts) + "\n"
    info["comparisons"] = comparisons
    info["ops"] = ops_used(strip_comments(case_text))
    info["element_types"] = element_types(strip_comments(case_text))
    return entry.name, module, case_text, info


def dedent_block(text, keep=0):
    lines = text.split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    indents = [len(l) - len(l.lstrip()) for l in lines if l.strip()]
    cut = min(indents) if indents else 0
    return "\n".join((" " * keep + l[cut:]) if l.strip() else "" for l in lines)


# ---- sources -----------------------------------------------------------------------

def export_git(git_dir, dest):
    def git(*args):
        return subprocess.run(["git", "--git-dir=" + git_dir] + list(args), check=True,
                              stdout=subprocess.PIPE).stdout
    commit = git("rev-parse", "HEAD").decode().strip()
    names = git("ls-tree", "-r", "--name-only", "HEAD", UPSTREAM_DIR + "/").decode().split("\n")
    for name in names:
        if not name.endswith(".mlir"):
            continue
        path = os.path.join(dest, os.path.relpath(name, UPSTREAM_DIR))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(git("show", "HEAD:" + name))
    return commit


def case_kinds(comparisons):
    """The KIND arguments of run_case.sh."""
    out = []
    for c in comparisons:
        if c["kind"] == "eq":
            out.append("eq")
        elif c["kind"] == "almost_eq":
            out.append("almost_eq:%r" % c["tolerance"] if "tolerance" in c else "almost_eq")
        else:
            out.append("close:%d" % c["max_ulp_difference"])
    return out


def dump_manifest(manifest):
    """JSON with one line per case and per skipped test."""
    lines = ["{"]
    keys = list(manifest)
    for n, k in enumerate(keys):
        comma = "," if n + 1 < len(keys) else ""
        v = manifest[k]
        if isinstance(v, list):
            lines.append(" %s: [" % json.dumps(k))
            for i, item in enumerate(v):
                lines.append("  %s%s" % (json.dumps(item), "," if i + 1 < len(v) else ""))
            lines.append(" ]%s" % comma)
        else:
            lines.append(" %s: %s%s" % (json.dumps(k), json.dumps(v), comma))
    lines.append("}")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("src", nargs="?", help="folder of the upstream .mlir files")
    ap.add_argument("--git-dir", default=os.environ.get("STABLEHLO_GIT_DIR"))
    ap.add_argument("--commit", help="the upstream commit SRC is from")
    ap.add_argument("--out", default=HERE, help="where cases/ and manifest.json go")
    args = ap.parse_args()
    if not args.src and not args.git_dir:
        ap.error("give SRC_DIR, or --git-dir (or $STABLEHLO_GIT_DIR): a clone of "
                 "openxla/stablehlo")

    tmp = None
    if args.src:
        src = args.src
        commit = args.commit or "unknown"
    else:
        tmp = tempfile.mkdtemp(prefix="stablehlo_interp.")
        src = tmp
        commit = export_git(args.git_dir, tmp)
    try:
        files = []
        for root, _, names in os.walk(src):
            for n in names:
                if n.endswith(".mlir"):
                    files.append(os.path.relpath(os.path.join(root, n), src))
        files.sort()
        case_dir = os.path.join(args.out, "cases")
        if os.path.isdir(case_dir):
            shutil.rmtree(case_dir)
        os.makedirs(case_dir)
        cases, skipped = [], []
        used = set()
        for rel in files:
            with open(os.path.join(src, rel), encoding="utf-8") as f:
                text = f.read()
            stem = rel[:-len(".mlir")].replace(os.sep, "_")
            for k, chunk in enumerate(split_chunks(text)):
                try:
                    r = convert_chunk(rel.replace(os.sep, "/"), chunk, commit)
                except (ValueError, IndexError) as e:
                    skipped.append({"file": rel, "chunk": k, "reason": "not read: %s" % e})
                    continue
                if r is None:
                    continue
                entry, module, case_text, info = r
                base = "%s__%s" % (stem, module if (module and entry == "main") else entry)
                name, i = base, 2
                while name in used:
                    name = "%s_%d" % (base, i)
                    i += 1
                used.add(name)
                rec = {"name": name, "file": rel.replace(os.sep, "/"), "chunk": k,
                       "function": entry}
                if module:
                    rec["module"] = module
                if case_text is None:
                    rec.update(info)
                    skipped.append(rec)
                    continue
                rec["case"] = "cases/%s.mlir" % name
                rec["comparisons"] = info["comparisons"]
                rec["run_case_kinds"] = case_kinds(info["comparisons"])
                rec["element_types"] = info["element_types"]
                rec["ops"] = info["ops"]
                cases.append(rec)
                with open(os.path.join(case_dir, name + ".mlir"), "w", encoding="utf-8") as f:
                    f.write(case_text)
        manifest = {
            "upstream": {
                "repository": UPSTREAM,
                "commit": commit,
                "path": UPSTREAM_DIR,
                "license": "Apache-2.0",
                "license_file": "LICENSE (Apache License, Version 2.0)",
                "note": "The cases are derived from the upstream interpreter tests "
                        "(ops and expected values); the copyright holders are the "
                        "OpenXLA / StableHLO authors.",
            },
            "converted_by": "tests/stablehlo_interp/convert.py",
            "almost_eq_default_tolerance": DEFAULT_ALMOST_EQ_TOLERANCE,
            "num_cases": len(cases),
            "num_skipped": len(skipped),
            "cases": cases,
            "skipped": skipped,
        }
        with open(os.path.join(args.out, "manifest.json"), "w", encoding="utf-8") as f:
            f.write(dump_manifest(manifest))
        # The same list for CMake (tests/CMakeLists.txt), which reads lines
        # far faster than JSON: "NAME KIND..." per case.
        with open(os.path.join(args.out, "cases.txt"), "w", encoding="utf-8") as f:
            for c in cases:
                f.write(" ".join([c["name"]] + c["run_case_kinds"]) + "\n")
        print("convert.py: %d cases, %d skipped, commit %s" % (len(cases), len(skipped), commit))
    finally:
        if tmp:
            shutil.rmtree(tmp)


if __name__ == "__main__":
    sys.exit(main())
