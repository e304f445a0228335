#!/bin/sh
# xla_ffi_jax_case.sh KCALL NPY_EQUAL WORK CODE MESSAGE N EXPECTED_1..N -- ARGS...
#
# One case of tests/fixtures/xla_ffi: runs `KCALL run ARGS --output WORK`
# and then either compares WORK/out0.npy.. with the N expected files (what
# JAX computed) or, when CODE is not empty, expects the run to fail with
# that status code and MESSAGE in its error.
set -u

kcall=$1
npy_equal=$2
work=$3
code=$4
message=$5
n=$6
shift 6
expected=
i=0
while [ "$i" -lt "$n" ]; do
  expected="$expected $1"
  shift
  i=$((i + 1))
done
[ "${1:-}" = "--" ] || { echo "xla_ffi_jax_case.sh: expected -- before the arguments" >&2; exit 2; }
shift

rm -rf "$work"
mkdir -p "$work"
"$kcall" run "$@" --output "$work" >"$work/stdout" 2>"$work/stderr"
rc=$?
cat "$work/stdout" "$work/stderr"
if [ -n "$code" ]; then
  [ "$rc" -eq 1 ] || { echo "xla_ffi_jax_case.sh: exit status $rc, expected 1" >&2; exit 1; }
  grep -q "^kcall: error: $code: " "$work/stderr" &&
    grep -qF -- "$message" "$work/stderr" || {
      echo "xla_ffi_jax_case.sh: expected $code: ...$message..." >&2
      exit 1
    }
  exit 0
fi
[ "$rc" -eq 0 ] || { echo "xla_ffi_jax_case.sh: exit status $rc, expected 0" >&2; exit 1; }
i=0
for want in $expected; do
  "$npy_equal" "$work/out$i.npy" "$want" || {
    echo "xla_ffi_jax_case.sh: out$i.npy differs from $want" >&2
    exit 1
  }
  i=$((i + 1))
done
[ ! -e "$work/out$i.npy" ] || { echo "xla_ffi_jax_case.sh: more outputs than expected" >&2; exit 1; }
echo "xla_ffi_jax_case.sh: $i output(s) as JAX computed them"
