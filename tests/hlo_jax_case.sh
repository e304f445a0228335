#!/bin/sh
# hlo_jax_case.sh KCALL NPY_EQUAL WORK RTOL ATOL N EXPECTED_1..N -- ARGS...
#
# One variant of a case of tests/fixtures/hlo_jax: runs
# `KCALL run ARGS --output WORK` and compares WORK/out0.npy.. with the N
# expected files (what JAX computed) within RTOL and ATOL (both 0: exact).
#
# Exit status, as ctest reads it (SKIP_RETURN_CODE 77):
#   0   kcall ran the program and every output is JAX's;
#   77  kcall refused the program because it does not support something
#       in it yet (see refusal below); the refusal is printed;
#   1   anything else: another error, a crash, a missing or extra output,
#       an output that differs.
# The verdict and its first line are also written to WORK/result
# ("passed", "skipped\tMESSAGE" or "failed\tREASON") for hlo_jax_summary.sh.
set -u

kcall=$1
npy_equal=$2
work=$3
rtol=$4
atol=$5
n=$6
shift 6
expected=
i=0
while [ "$i" -lt "$n" ]; do
  expected="$expected $1"
  shift
  i=$((i + 1))
done
[ "${1:-}" = "--" ] || { echo "hlo_jax_case.sh: expected -- before the arguments" >&2; exit 2; }
shift

rm -rf "$work"
mkdir -p "$work"

verdict() {
  printf '%s\t%s\n' "$1" "$2" >"$work/result"
}

fail() {
  echo "hlo_jax_case.sh: FAILED: $1" >&2
  verdict failed "$1"
  exit 1
}

# A refusal: what kcall says when a program uses something it does not
# support yet, as the parser and compile word it today:
#   INVALID_ARGUMENT ... opcode 'dot' is not supported (supported: ...)
#   INVALID_ARGUMENT ... expected the row-major layout {1,0} (non-default
#                        layouts are not supported), got '{0,1}'
#   UNIMPLEMENTED    ... dtype '<c8' is not supported (an input file)
#   UNIMPLEMENTED    ... convert is not implemented for f32 -> bf16 (...)
#   INVALID_ARGUMENT ... constant 'c': the element type of f8e5m2[4] is not
#                        supported (pred, s8..s64, ...)
# Only these count; any other error fails the test, so that a program kcall
# misreads is never passed over as merely unsupported.
refusal() {
  grep -m 1 '^kcall: error: ' "$1" | sed -n \
    -e '/^kcall: error: INVALID_ARGUMENT: .*not supported/{p;q;}' \
    -e '/^kcall: error: UNIMPLEMENTED: .*not supported/{p;q;}' \
    -e '/^kcall: error: UNIMPLEMENTED: .* is not implemented for /{p;q;}'
}

"$kcall" run "$@" --output "$work" >"$work/stdout" 2>"$work/stderr"
rc=$?
cat "$work/stdout" "$work/stderr"
if [ "$rc" -eq 1 ]; then
  message=$(refusal "$work/stderr")
  if [ -n "$message" ]; then
    message=${message#kcall: error: }
    echo "hlo_jax_case.sh: SKIPPED: kcall does not support this program yet: $message"
    verdict skipped "$message"
    exit 77
  fi
fi
[ "$rc" -eq 0 ] || fail "kcall exited with status $rc: $(head -n 1 "$work/stderr")"
i=0
for want in $expected; do
  [ -e "$work/out$i.npy" ] || fail "out$i.npy is missing: kcall wrote $i output(s), JAX computed $n"
  "$npy_equal" --rtol "$rtol" --atol "$atol" "$work/out$i.npy" "$want" ||
    fail "out$i.npy differs from $want (rtol $rtol, atol $atol)"
  i=$((i + 1))
done
[ ! -e "$work/out$i.npy" ] || fail "kcall wrote more outputs than the $n JAX computed"
echo "hlo_jax_case.sh: passed: $i output(s) as JAX computed them (rtol $rtol, atol $atol)"
verdict passed ""
