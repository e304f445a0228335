#!/usr/bin/env python3
"""abi_rules_test.py --cc CC --root SOURCE_DIR --work DIR

Tests the ABI check itself (abi/abi.sh, abi/compare.py): that it fails on
the changes the ABI rules forbid and passes the ones they allow. Each case
edits a copy of kcall/abi.h (or the list of abi/kcall_abi_h.c), builds
abi/kcall_abi_h.c against it, and compares the library's ABI with that of
the unedited build, as `make abi-check` compares with the baseline.

Exits 77 (skipped, with the reason) when abigail-tools is not installed.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys


def edit(pattern, replacement):
    """An edit of a file: re.sub of the first match, which must exist."""
    def apply(text):
        new, n = re.subn(pattern, replacement, text, count=1, flags=re.M)
        assert n == 1, f"no match for {pattern!r}"
        return new
    return apply


def edit_abi_h(pattern, replacement):
    return {"abi.h": edit(pattern, replacement)}


def edit_source(pattern, replacement):
    return {"kcall_abi_h.c": edit(pattern, replacement)}


# kc_xcall_signature as API 1.0 shipped it: flags, its last field, ends at
# byte 60 of 64. Applied to both sides of the tail-padding cases, which
# need a growable struct with tail padding (the current one has none).
SIGNATURE_1_0 = (r"^(  uint32_t flags;\n)(?:  /\*(?:[^*]|\*(?!/))*\*/\n)?  const kc_attr\* attr_defaults;\n"
                 r"(?:  /\*(?:[^*]|\*(?!/))*\*/\n)?  const char\* gradient;\n(} kc_xcall_signature;)",
                 r"\1\2")


def on_signature_1_0(pattern, replacement):
    """An edit of abi.h made on top of kc_xcall_signature as 1.0 had it."""
    first = edit(*SIGNATURE_1_0)
    then = edit(pattern, replacement)
    return {"abi.h": lambda text: then(first(text)), "base": "signature_1_0"}


# (name, edits of abi.h and kcall_abi_h.c, expected status, text the
#  comparison's output must contain)
CASES = [
    ("unchanged", {}, 0, "the same ABI as the baseline"),

    # Forbidden: the layout of a shipped struct changes.
    ("reorder a growable struct's fields",
     edit_abi_h(r"^(  const char\* name;.*\n)(  const char\* version;.*\n)",
                r"\2\1"),
     1, "kc_plugin_info"),
    ("reorder DLTensor's fields",
     edit_abi_h(r"^(  int64_t\* shape;\n)(  int64_t\* strides;.*\n)",
                r"\2\1"),
     1, "DLTensor"),
    ("insert a host table entry in the middle",
     edit_abi_h(r"^(  kc_status_code \(\*status_get_code\))",
                r"  int (*kt_inserted)(void);\n\1"),
     1, "kc_host_api"),
    ("remove the last host table entry",
     edit_abi_h(r"^  [^\n]*\n(} kc_host_api;)", r"\1"),
     1, "kc_host_api"),
    ("change a field's type",
     edit_abi_h(r"^(  )uint32_t( api_major;     /\* KC_API_VERSION_MAJOR)",
                r"\1int64_t\2"),
     1, "api_major"),
    ("append to a struct without struct_size",
     edit_abi_h(r"^(  size_t size;\n)(} kc_string_view;)",
                r"\1  int kt_extra;\n\2"),
     1, "kc_string_view"),
    ("append into a growable struct's tail padding",
     # flags ends at byte 60 of 64: a field there lies inside the
     # struct_size an old writer sets, and would be read as garbage.
     on_signature_1_0(r"^(  uint32_t flags;\n)(} kc_xcall_signature;)",
                      r"\1  uint32_t kt_extra;\n\2"),
     1, "kc_xcall_signature"),
    ("change a function type's parameters",
     edit_abi_h(r"^(typedef kc_status\* \(\*kc_packed_fn\)\(void\* self, const kc_any\* args,\n\s+)int32_t nargs",
                r"\1int64_t nargs"),
     1, "kc_packed_fn"),
    ("change an enumerator's value",
     edit_abi_h(r"X\(UNAUTHENTICATED, 16\)", "X(UNAUTHENTICATED, 18)"),
     1, "KC_UNAUTHENTICATED"),
    ("remove a function", edit_source(r"^  X\(kc_closure\)", ""), 1,
     "kc_abi_h_kc_closure"),

    # Allowed: the ABI grows.
    ("append a host table entry",
     edit_abi_h(r"^(} kc_host_api;)", r"  int (*kt_appended)(int);\n\1"),
     0, "kc_host_api: 1 field(s) appended: kt_appended"),
    ("append past a growable struct's tail padding",
     on_signature_1_0(r"^(  uint32_t flags;\n)(} kc_xcall_signature;)",
                      r"\1  const void* kt_extra;\n\2"),
     0, "kc_xcall_signature: 1 field(s) appended: kt_extra"),
    ("add an enumerator",
     edit_abi_h(r"X\(UNAUTHENTICATED, 16\)",
                r"X(UNAUTHENTICATED, 16) X(KT_NEW_CODE, 17)"),
     0, "kc_status_code: 1 enumerator(s) added: KC_KT_NEW_CODE"),
    ("add a function",
     edit_source(r"\Z", "KC_API int kt_abi_rules_added(int x);\n"
                        "int kt_abi_rules_added(int x) { return x + 1; }\n"),
     0, "1 function(s) added: kt_abi_rules_added"),
]


def run(args, **kwargs):
    return subprocess.run(args, capture_output=True, text=True, **kwargs)


def copy_edited(source, dest, edit_fn):
    with open(source) as f:
        text = f.read()
    with open(dest, "w") as f:
        f.write(edit_fn(text) if edit_fn else text)


def build(cc, root, work, name, edits):
    """Builds the types library from copies of its source and the headers,
    edited, and returns the path of its ABI dump."""
    case_dir = os.path.join(work, name)
    shutil.rmtree(case_dir, ignore_errors=True)
    include = os.path.join(case_dir, "include")
    shutil.copytree(os.path.join(root, "include"), include)
    header = os.path.join(include, "kcall", "abi.h")
    copy_edited(header, header, edits.get("abi.h"))
    source = os.path.join(case_dir, "kcall_abi_h.c")
    copy_edited(os.path.join(root, "abi", "kcall_abi_h.c"), source,
                edits.get("kcall_abi_h.c"))
    lib = os.path.join(case_dir, "libkcall_abi_h.so")
    # As abi/CMakeLists.txt builds it, unoptimised.
    done = run([cc, "-std=c11", "-g", "-O0", "-fPIC", "-shared",
                "-fvisibility=hidden", "-I", include, source, "-o", lib])
    if done.returncode:
        raise SystemExit(f"{name}: compiling failed:\n{done.stderr}")
    dump = os.path.join(case_dir, "kcall_abi_h.abi")
    done = run(["sh", os.path.join(root, "abi", "abi.sh"), "dump", lib, dump])
    if done.returncode:
        raise SystemExit(f"{name}: abi.sh dump failed:\n{done.stderr}")
    return dump


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cc", required=True)
    parser.add_argument("--root", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    for tool in ("abidw", "abidiff"):
        if not shutil.which(tool):
            print(f"skipped: {tool} not found (install abigail-tools to test "
                  "the ABI check)")
            return 77

    os.makedirs(args.work, exist_ok=True)
    # The baselines: the headers as they are, and with the edits a case
    # makes on both sides ("base").
    baselines = {None: build(args.cc, args.root, args.work, "baseline", {})}
    baselines["signature_1_0"] = build(args.cc, args.root, args.work,
                                       "baseline_signature_1_0",
                                       {"abi.h": edit(*SIGNATURE_1_0)})
    failures = 0
    for name, edits, expected, needle in CASES:
        dump = build(args.cc, args.root, args.work,
                     re.sub(r"\W+", "_", name), edits)
        done = run(["sh", os.path.join(args.root, "abi", "abi.sh"),
                    "compare", baselines[edits.get("base")], dump])
        output = done.stdout + done.stderr
        verdict = "passes" if done.returncode == 0 else "fails"
        if done.returncode != expected or needle not in output:
            failures += 1
            print(f"FAILED: {name}: the check {verdict} (status "
                  f"{done.returncode}, expected {expected}); its output "
                  f"should contain {needle!r}:\n{output}")
        else:
            print(f"ok: {name}: the check {verdict}")
    print(f"{len(CASES) - failures} of {len(CASES)} cases as expected")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
