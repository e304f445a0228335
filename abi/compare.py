#!/usr/bin/env python3
"""compare.py BASELINE.abi CURRENT.abi: is CURRENT compatible with BASELINE?

Both files are abidw's XML (abi/abi.sh dump makes them). The answer is
abidiff's, with the changes the ABI rules allow (docs/abi.md) allowed:

  - added functions (abidiff --no-added-syms);
  - added enumerators (abidiff counts them harmless);
  - fields appended to a struct that starts with `size_t struct_size`
    (a growable struct: readers check struct_size before they read). The
    fields CURRENT has past the baseline's size of such a struct are
    removed from a copy of CURRENT before abidiff sees it, so any other
    change to the struct (a field moved, removed, retyped, or one placed in
    what was tail padding, which an old writer's struct_size covers) is
    still reported.

abidiff's own suppression rule for appended members
(has_data_member_inserted_at = end) is not used: it also hides fields that
were merely reordered, when nothing was inserted.

Exit status: 0 compatible, 1 incompatible (abidiff's report is printed),
2 the comparison could not be made.
"""

import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET


def definitions(root, name=None):
    """The struct definitions (not declarations) in a corpus."""
    for el in root.iter("class-decl"):
        if el.get("is-declaration-only") == "yes":
            continue
        if name is None or el.get("name") == name:
            yield el


def members(cls):
    """[(offset in bits, name, element)] of a struct's data members."""
    out = []
    for dm in cls.findall("data-member"):
        var = dm.find("var-decl")
        out.append((int(dm.get("layout-offset-in-bits", "0")),
                    var.get("name") if var is not None else "?", dm))
    return out


def growable_sizes(root):
    """{name: size in bits} of the structs whose first field is struct_size."""
    sizes = {}
    for cls in definitions(root):
        fields = members(cls)
        if fields and fields[0][0] == 0 and fields[0][1] == "struct_size":
            sizes[cls.get("name")] = int(cls.get("size-in-bits", "0"))
    return sizes


def forget_appended(root, sizes):
    """Drops from `root` the fields of growable structs that lie past the
    baseline's size; returns {struct: [field names dropped]}."""
    appended = {}
    for name, old_bits in sizes.items():
        for cls in definitions(root, name):
            if int(cls.get("size-in-bits", "0")) <= old_bits:
                continue
            for offset, field, dm in members(cls):
                if offset >= old_bits:
                    cls.remove(dm)
                    if field not in appended.setdefault(name, []):
                        appended[name].append(field)
            cls.set("size-in-bits", str(old_bits))
    return appended


def enumerators(root):
    """{enum name: set of enumerator names}."""
    out = {}
    for el in root.iter("enum-decl"):
        if el.get("is-declaration-only") != "yes":
            out.setdefault(el.get("name"), set()).update(
                e.get("name") for e in el.findall("enumerator"))
    return out


def function_symbols(root):
    return {el.get("name") for el in root.iter("elf-symbol")
            if el.get("type") == "func-type"}


def main(argv):
    if len(argv) != 3:
        print("usage: compare.py BASELINE.abi CURRENT.abi", file=sys.stderr)
        return 2
    baseline_path, current_path = argv[1], argv[2]
    try:
        baseline = ET.parse(baseline_path).getroot()
        current_tree = ET.parse(current_path)
    except (OSError, ET.ParseError) as e:
        print(f"compare.py: {e}", file=sys.stderr)
        return 2
    current = current_tree.getroot()
    label = os.path.basename(baseline_path)

    added = sorted(function_symbols(current) - function_symbols(baseline))
    old_enums = enumerators(baseline)
    new_enumerators = {
        name: sorted(values - old_enums[name])
        for name, values in enumerators(current).items()
        if name in old_enums and values - old_enums[name]}
    appended = forget_appended(current, growable_sizes(baseline))

    with tempfile.TemporaryDirectory() as tmp:
        trimmed = os.path.join(tmp, "current.abi")
        current_tree.write(trimmed)
        try:
            done = subprocess.run(
                ["abidiff", "--no-added-syms", baseline_path, trimmed],
                capture_output=True, text=True)
        except OSError as e:
            print(f"compare.py: cannot run abidiff: {e}", file=sys.stderr)
            return 2
    # abidiff's status is a bit set: 1 error, 2 usage error, 4 ABI change,
    # 8 incompatible ABI change.
    if done.returncode & 3:
        print(f"compare.py: abidiff failed ({done.returncode}) on {label}:\n"
              f"{done.stdout}{done.stderr}", file=sys.stderr)
        return 2
    if done.returncode:
        print(f"{label}: INCOMPATIBLE with the baseline "
              f"(abidiff status {done.returncode}):")
        print(done.stdout.rstrip())
        return 1

    notes = []
    if added:
        notes.append(f"{len(added)} function(s) added: {', '.join(added)}")
    for name, fields in sorted(appended.items()):
        notes.append(f"{name}: {len(fields)} field(s) appended: "
                     f"{', '.join(fields)}")
    for name, values in sorted(new_enumerators.items()):
        notes.append(f"{name}: {len(values)} enumerator(s) added: "
                     f"{', '.join(values)}")
    if notes:
        print(f"{label}: compatible with the baseline, with additions "
              "(allowed; `make abi-baseline` records them):")
        for note in notes:
            print(f"  {note}")
    else:
        print(f"{label}: the same ABI as the baseline")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
