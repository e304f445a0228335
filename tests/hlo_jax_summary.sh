#!/bin/sh
# hlo_jax_summary.sh BUILD/tests/hlo_jax_cases.sh
#
# Runs every variant of every case of tests/fixtures/hlo_jax, as ctest's
# hlo_jax_* tests do (the list is the one tests/CMakeLists.txt writes into
# the build directory), and prints a table: case, variant, result, and the
# first line of kcall's refusal for a skipped variant (it names what kcall
# does not support yet) or of the reason for a failed one. `make
# hlo-summary` runs it. Exit status 1 when any variant failed, else 0.
set -u

cases=${1:?usage: hlo_jax_summary.sh BUILD/tests/hlo_jax_cases.sh}
here=$(cd "$(dirname "$0")" && pwd)
# A directory of its own, so that two summaries (ctest's and make's) may
# run at once.
work=$(mktemp -d "$(cd "$(dirname "$cases")" && pwd)/hlo_jax_summary.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT
rows=$work/rows
: >"$rows"

# The message without what the table does not need: the fixture
# directory before CASE/VARIANT.hlo, and the list of supported opcodes.
shorten() {
  sed -e "s|'[^']*/\([^/']*/[^/']*\.hlo\)'|'\1'|g" -e 's| (supported: [^)]*)||'
}

# kt_case CASE VARIANT RTOL ATOL N EXPECTED... -- ARGS: the arguments of
# hlo_jax_case.sh after its work directory. kt_unavailable CASE VARIANT
# WHY: a variant this build cannot run.
kt_case() {
  name=$1
  variant=$2
  shift 2
  dir=$work/$name-$variant
  sh "$here/hlo_jax_case.sh" "$kt_kcall" "$kt_npy_equal" "$dir" "$@" >/dev/null 2>&1
  if [ -f "$dir/result" ]; then
    result=$(cut -f 1 "$dir/result")
    why=$(cut -f 2- "$dir/result" | shorten)
  else
    result=failed
    why="hlo_jax_case.sh wrote no result"
  fi
  printf '%s\t%s\t%s\t%s\n' "$name" "$variant" "$result" "$why" >>"$rows"
}

kt_unavailable() {
  printf '%s\t%s\t%s\t%s\n' "$1" "$2" skipped "$3" >>"$rows"
}

. "$cases"

awk -F '\t' '
  BEGIN { printf "%-22s %-10s %-8s %s\n", "case", "variant", "result", "first line of the refusal or failure" }
  { printf "%-22s %-10s %-8s %s\n", $1, $2, $3, $4; count[$3]++ }
  END {
    printf "\nhlo_jax: %d variants: %d passed, %d skipped (not supported yet), %d failed\n",
           NR, count["passed"], count["skipped"], count["failed"]
  }' "$rows"
! grep -q "$(printf '\tfailed\t')" "$rows"
