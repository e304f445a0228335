#!/bin/sh
# abi/abi.sh check|baseline [BUILD_DIR]
# abi/abi.sh dump LIBRARY OUT.abi
# abi/abi.sh compare BASELINE.abi CURRENT.abi
#
# The ABI check (docs/abi.md, "Checking the ABI"). Two libraries are
# recorded with abidw, from abigail-tools:
#   libkcall.abi     libkcall.so: every exported function and the public
#                    types they reach (types defined outside
#                    include/kcall are private: only their names are kept)
#   kcall_abi_h.abi  libkcall_abi_h.so (abi/kcall_abi_h.c): every type of
#                    kcall/abi.h, the plugin ABI, which is only a header
#                    (and of kcall/abi_helpers.h, which it includes)
#
#   check     builds both in BUILD_DIR (default build-abi) with the flags
#             below and compares each with its baseline in abi/
#             (compare.py): exit 1 on an incompatible change, 0 when the
#             ABI is the same or only grew (functions added, fields
#             appended to a struct that starts with struct_size).
#   baseline  builds both the same way and writes them to abi/, with
#             abi/baseline.txt saying how they were made.
#
# The flags are fixed here, so that a baseline and a check are built alike
# whatever the caller's CC or build type. ABI_CC (default gcc) picks the
# compiler; baseline.txt records which was used, and a check made with
# another says so.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
ABI_CC=${ABI_CC:-gcc}
case $ABI_CC in
  *clang*) ABI_CXX=${ABI_CXX:-$(printf '%s' "$ABI_CC" | sed 's/clang/clang++/')} ;;
  *) ABI_CXX=${ABI_CXX:-$(printf '%s' "$ABI_CC" | sed 's/gcc/g++/;s/^cc$/c++/')} ;;
esac
# CMake's RelWithDebInfo, spelled out so that no default can change it.
ABI_CFLAGS="-O2 -g -DNDEBUG"
ABI_CMAKE_ARGS="-DCMAKE_BUILD_TYPE=RelWithDebInfo
-DCMAKE_C_FLAGS_RELWITHDEBINFO=$ABI_CFLAGS
-DCMAKE_C_FLAGS=
-DKCALL_SANITIZE=
-DKCALL_BUILD_TESTS=OFF
-DKCALL_BUILD_BENCH=OFF
-DKCALL_BUILD_EXAMPLES=OFF
-DKCALL_BUILD_PYTHON=OFF"
# Types defined outside include/kcall (--headers-dir) are private: only
# their names are kept. What the library calls (libc) is not its ABI and
# is left out. So are locations and paths, so that a baseline does not
# change with the checkout's directory or a comment in a header; type ids
# are hashes, so that it changes only where a type does.
ABIDW_ARGS="--drop-private-types --drop-undefined-syms
--no-corpus-path --no-comp-dir-path --no-show-locs --short-locs --no-elf-needed
--type-id-style hash"

die() {
  echo "abi.sh: $*" >&2
  exit 2
}

need_tools() {
  for tool in abidw abidiff; do
    command -v "$tool" >/dev/null 2>&1 ||
      die "$tool not found: install abigail-tools (apt-get install abigail-tools)"
  done
  command -v python3 >/dev/null 2>&1 || die "python3 not found"
}

# dump LIBRARY OUT.abi
dump() {
  # shellcheck disable=SC2086 # the argument lists split on purpose
  abidw --headers-dir "$root/include/kcall" $ABIDW_ARGS --out-file "$2" "$1" ||
    die "abidw failed on $1"
}

# build BUILD_DIR: libkcall.so and libkcall_abi_h.so, with the flags above.
build() {
  old_ifs=$IFS
  IFS='
'
  mkdir -p "$1"
  # shellcheck disable=SC2086
  cmake -S "$root" -B "$1" -DCMAKE_C_COMPILER="$ABI_CC" \
    -DCMAKE_CXX_COMPILER="$ABI_CXX" $ABI_CMAKE_ARGS >"$1/configure.log" 2>&1 || {
    IFS=$old_ifs
    cat "$1/configure.log" >&2
    die "configuring $1 failed"
  }
  IFS=$old_ifs
  cmake --build "$1" -j "${JOBS:-2}" --target kcall kcall_abi_h ||
    die "building $1 failed"
  mkdir -p "$1/abi"
  dump "$1/src/libkcall.so" "$1/abi/libkcall.abi"
  dump "$1/abi/libkcall_abi_h.so" "$1/abi/kcall_abi_h.abi"
}

# What made a baseline: compared line by line by a check.
describe() {
  echo "compiler: $("$ABI_CC" --version | head -n 1)"
  abidw --version
  echo "cmake arguments:"
  printf '%s\n' "-DCMAKE_C_COMPILER=$ABI_CC" "$ABI_CMAKE_ARGS" | sed 's/^/  /'
  echo "  (libkcall_abi_h.so adds -O0: abi/CMakeLists.txt)"
  echo "abidw arguments:"
  printf '%s\n' "--headers-dir include/kcall" "$ABIDW_ARGS" | sed 's/^/  /'
}

mode=${1:-}
case $mode in
  dump)
    [ $# -eq 3 ] || die "usage: abi.sh dump LIBRARY OUT.abi"
    need_tools
    dump "$2" "$3"
    ;;
  compare)
    [ $# -eq 3 ] || die "usage: abi.sh compare BASELINE.abi CURRENT.abi"
    need_tools
    python3 "$root/abi/compare.py" "$2" "$3"
    ;;
  baseline)
    need_tools
    dir=${2:-$root/build-abi}
    build "$dir"
    cp "$dir/abi/libkcall.abi" "$dir/abi/kcall_abi_h.abi" "$root/abi/"
    {
      echo "# How abi/libkcall.abi and abi/kcall_abi_h.abi were made:"
      echo "# make abi-baseline (abi/abi.sh baseline). Rewritten with them."
      describe
    } >"$root/abi/baseline.txt"
    echo "abi.sh: wrote abi/libkcall.abi, abi/kcall_abi_h.abi and abi/baseline.txt;"
    echo "abi.sh: review them with git diff abi/ and commit them."
    ;;
  check)
    need_tools
    dir=${2:-$root/build-abi}
    [ -f "$root/abi/libkcall.abi" ] && [ -f "$root/abi/kcall_abi_h.abi" ] ||
      die "no baseline in abi/: make abi-baseline writes one"
    build "$dir"
    # A baseline made with another compiler or abigail may differ in ways
    # that are no change of the ABI: say so before the verdict.
    describe >"$dir/abi/setup.txt"
    if [ -f "$root/abi/baseline.txt" ] &&
       ! grep -v '^#' "$root/abi/baseline.txt" | cmp -s - "$dir/abi/setup.txt"; then
      echo "abi.sh: note: built otherwise than the baseline (abi/baseline.txt):"
      grep -v '^#' "$root/abi/baseline.txt" | diff - "$dir/abi/setup.txt" |
        sed -n 's/^< /  baseline: /p; s/^> /  now:      /p'
    fi
    status=0
    for name in libkcall kcall_abi_h; do
      python3 "$root/abi/compare.py" "$root/abi/$name.abi" "$dir/abi/$name.abi" ||
        status=$?
      [ "$status" -le 1 ] || exit "$status"
    done
    if [ "$status" -ne 0 ]; then
      echo "abi.sh: the ABI changed incompatibly (see above). Undo the change," >&2
      echo "abi.sh: or, for a new major version, make abi-baseline (docs/abi.md)." >&2
      exit 1
    fi
    echo "abi.sh: the ABI is compatible with the baseline in abi/"
    ;;
  *)
    die "usage: abi.sh check|baseline [BUILD_DIR] | dump LIB OUT.abi | compare OLD.abi NEW.abi"
    ;;
esac
