#!/bin/sh
# run_case.sh KCALL NPY_EQUAL WORKDIR CASE.mlir KIND...
#
# One case of tests/stablehlo_interp/cases (converted from the StableHLO
# interpreter's tests by convert.py): runs `KCALL run CASE.mlir --output
# WORKDIR` and compares the outputs pairwise, out(2k) (what kcall computed)
# with out(2k+1) (what the upstream check expects), the k-th KIND saying how:
#   eq             exact: the same bits (NaN matches NaN whatever its
#                  payload; -0 does not match +0)   [check.expect_eq(_const)]
#   almost_eq      |got - want| <= 0.0001, the upstream default tolerance
#                  (stablehlo/tests/CheckOps.td, Element.cpp)
#   almost_eq:TOL  the same with the tolerance the check gives
#                  [check.expect_almost_eq(_const)]
#   close:N        check.expect_close with max_ulp_difference N, approximated
#                  as a relative tolerance of N * 2^-(mantissa bits) of the
#                  dtype (up to 2x looser than N ulps)
# The KIND arguments of each case are in manifest.json ("run_case_kinds").
#
# Exit status (ctest's SKIP_RETURN_CODE 77):
#   0   every pair matches;
#   77  kcall refused the program: it exited 1 with an error saying
#       "not supported" or "UNIMPLEMENTED" (the refusal is printed);
#   1   anything else: another error, a crash, a time-out, a missing or
#       extra output, a mismatch.
# The verdict is also written to WORKDIR/result as "passed",
# "refused<TAB>MESSAGE" or "failed<TAB>REASON" (run_all.py reads it).
# KCALL_TIMEOUT (seconds, default 120) bounds the run where timeout(1) exists.
set -u

if [ "$#" -lt 5 ]; then
  echo "usage: run_case.sh KCALL NPY_EQUAL WORKDIR CASE.mlir KIND..." >&2
  exit 2
fi
kcall=$1
npy_equal=$2
work=$3
case_file=$4
shift 4

rm -rf "$work"
mkdir -p "$work" || exit 2

verdict() {
  printf '%s\t%s\n' "$1" "$2" >"$work/result"
}

fail() {
  echo "run_case.sh: FAILED: $1" >&2
  verdict failed "$1"
  exit 1
}

# The mantissa bits of a float .npy file's dtype (for close:N).
mantissa_bits() {
  descr=$(head -c 256 "$1" | tr -d '\000' | grep -o "'descr': *'[^']*'" | sed "s/.*: *'//; s/'\$//")
  case "$descr" in
    *f2) echo 10 ;;
    *f4 | *c8) echo 23 ;;
    *f8 | *c16) echo 52 ;;
    *bfloat16* | *V2*) echo 7 ;;
    *) echo 0 ;;
  esac
}

timeout_cmd=
if command -v timeout >/dev/null 2>&1; then
  timeout_cmd="timeout ${KCALL_TIMEOUT:-120}"
fi

# shellcheck disable=SC2086
$timeout_cmd "$kcall" run "$case_file" --output "$work" >"$work/stdout" 2>"$work/stderr"
rc=$?
cat "$work/stdout" "$work/stderr"
if [ "$rc" -eq 1 ]; then
  message=$(grep -m 1 -e 'not supported' -e 'UNIMPLEMENTED' "$work/stderr")
  if [ -n "$message" ]; then
    message=${message#kcall: error: }
    echo "run_case.sh: REFUSED: kcall does not support this program yet: $message"
    verdict refused "$message"
    exit 77
  fi
fi
if [ "$rc" -eq 124 ] && [ -n "$timeout_cmd" ]; then
  fail "kcall timed out after ${KCALL_TIMEOUT:-120} s"
fi
if [ "$rc" -gt 128 ]; then
  fail "kcall crashed (status $rc): $(grep -v '^wrote ' "$work/stderr" | head -n 1)"
fi
[ "$rc" -eq 0 ] || fail "kcall exited with status $rc: $(head -n 1 "$work/stderr")"

k=0
for kind in "$@"; do
  got=$work/out$((2 * k)).npy
  want=$work/out$((2 * k + 1)).npy
  if [ ! -e "$got" ] || [ ! -e "$want" ]; then
    fail "out$((2 * k)).npy/out$((2 * k + 1)).npy missing: expected $(($# * 2)) outputs"
  fi
  case "$kind" in
    eq) rtol=0 atol=0 ;;
    almost_eq) rtol=0 atol=0.0001 ;;
    almost_eq:*) rtol=0 atol=${kind#almost_eq:} ;;
    close:*)
      bits=$(mantissa_bits "$want")
      [ "$bits" -gt 0 ] || fail "close: out$((2 * k + 1)).npy is not a float dtype run_case.sh knows"
      rtol=$(awk -v n="${kind#close:}" -v b="$bits" 'BEGIN { printf "%.17g", n * 2 ^ -b }')
      atol=0
      ;;
    *) echo "run_case.sh: unknown KIND '$kind'" >&2; exit 2 ;;
  esac
  out=$("$npy_equal" --rtol "$rtol" --atol "$atol" "$got" "$want" 2>&1)
  erc=$?
  [ -n "$out" ] && echo "$out"
  if [ "$erc" -ne 0 ]; then
    first=$(echo "$out" | head -n 1)
    fail "pair $k (out$((2 * k)) vs out$((2 * k + 1)), $kind): $first$(echo "$out" | sed -n '2{s/^npy_equal:/;/;p;}')"
  fi
  k=$((k + 1))
done
[ ! -e "$work/out$((2 * k)).npy" ] || fail "kcall wrote more than the $((2 * k)) outputs expected"
echo "run_case.sh: passed: $k pair(s) match"
verdict passed ""
