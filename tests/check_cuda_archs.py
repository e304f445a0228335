#!/usr/bin/env python3
"""check_cuda_archs.py LIB ARCHS [--once NVCC]: the device code LIB carries
(the fat binaries in its .nv_fatbin section) is what ARCHS, a
KCALL_CUDA_ARCHITECTURES value, asks for, no more and no less: SASS for
each `N-real` or plain `N`, PTX for each `N-virtual` or plain `N`.

With --once (the default architectures): every kernel is compiled once,
to PTX for the oldest architecture NVCC compiles for (the first
`nvcc --list-gpu-arch` names), plus SASS for one architecture.

Exit status 0: as asked; 1: not, saying what differs; 77 (skipped): ARCHS
is one of CMake's special values (all, all-major, native), which name no
fixed list.
"""

import re
import struct
import subprocess
import sys

FATBIN_MAGIC = 0xBA55ED50
KIND_NAMES = {1: "PTX", 2: "SASS"}


def section(data, name):
    """The bytes of the ELF64 little-endian section called name."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not a 64-bit little-endian ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)

    def header(i):
        off = shoff + i * shentsize
        name_off, = struct.unpack_from("<I", data, off)
        offset, size = struct.unpack_from("<QQ", data, off + 0x18)
        return name_off, offset, size

    _, str_off, _ = header(shstrndx)
    for i in range(shnum):
        name_off, offset, size = header(i)
        end = data.index(b"\0", str_off + name_off)
        if data[str_off + name_off:end].decode() == name:
            return data[offset:offset + size]
    return None


def device_code(lib):
    """{(kind, arch)} of every entry of every fat binary in lib."""
    data = open(lib, "rb").read()
    fatbins = section(data, ".nv_fatbin")
    if fatbins is None:
        raise ValueError("no .nv_fatbin section: no device code")
    found = set()
    pos = 0
    while pos + 16 <= len(fatbins):
        magic, _, header_size, size = struct.unpack_from("<IHHQ", fatbins, pos)
        if magic != FATBIN_MAGIC:
            pos += 8        # fat binaries are 8-byte aligned, padded between
            continue
        entry, end = pos + header_size, pos + header_size + size
        while entry < end:
            kind, _, entry_header, payload = struct.unpack_from("<HHIQ", fatbins, entry)
            arch, = struct.unpack_from("<I", fatbins, entry + 28)
            if kind not in KIND_NAMES:
                raise ValueError(f"fat binary entry of unknown kind {kind}")
            found.add((KIND_NAMES[kind], arch))
            entry += entry_header + payload
        pos = end
    if not found:
        raise ValueError(".nv_fatbin holds no fat binary")
    return found


def asked(archs):
    """{(kind, arch)} that a CUDA_ARCHITECTURES list asks for."""
    want = set()
    for item in archs.split(";"):
        m = re.fullmatch(r"(\d+)[a-z]?(-real|-virtual)?", item.strip())
        if not m:
            raise ValueError(f"architecture {item!r}: expected N, N-real or N-virtual")
        arch = int(m.group(1))
        if m.group(2) != "-virtual":
            want.add(("SASS", arch))
        if m.group(2) != "-real":
            want.add(("PTX", arch))
    return want


def describe(entries):
    return ", ".join(f"{kind} sm_{arch}" for kind, arch in sorted(entries)) or "nothing"


def main(argv):
    if len(argv) not in (3, 5) or (len(argv) == 5 and argv[3] != "--once"):
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    lib, archs = argv[1], argv[2]
    if archs.strip() in ("all", "all-major", "native"):
        print(f"check_cuda_archs: KCALL_CUDA_ARCHITECTURES={archs} names no fixed list")
        return 77
    try:
        have, want = device_code(lib), asked(archs)
    except (OSError, ValueError) as e:
        print(f"check_cuda_archs: {lib}: {e}", file=sys.stderr)
        return 1
    problems = []
    if have != want:
        problems.append(f"asked for {describe(want)} ({archs}), found {describe(have)}")
    if len(argv) == 5:
        listed = subprocess.run([argv[4], "--list-gpu-arch"], capture_output=True,
                                text=True, check=True).stdout.split()
        oldest = min(int(a.split("_")[1]) for a in listed if a.startswith("compute_"))
        ptx = {a for k, a in have if k == "PTX"}
        sass = {a for k, a in have if k == "SASS"}
        if ptx != {oldest} or len(sass) != 1:
            problems.append(f"expected each kernel compiled once, to PTX for sm_{oldest} "
                            f"(the oldest {argv[4]} compiles for) and SASS for one "
                            f"architecture; found {describe(have)}")
    for p in problems:
        print(f"check_cuda_archs: {lib}: {p}", file=sys.stderr)
    if not problems:
        print(f"check_cuda_archs: {lib}: {describe(have)}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
