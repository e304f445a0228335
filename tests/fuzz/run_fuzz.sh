#!/bin/sh
# run_fuzz.sh BUILD_DIR SECONDS [HARNESS]...
#
# Runs each libFuzzer harness built in BUILD_DIR (configured with
# -DKCALL_FUZZ=ON; `make fuzz` does all this) for SECONDS, one after the
# other: hlo, stablehlo, stablehlo_bytecode, op_spec, npy, cli_literal and
# xla_ffi_frame, or the ones named.
#
# The checked-in corpus, tests/fuzz/corpus/NAME, is read but never written:
# what a run finds goes under BUILD_DIR/fuzz, so the tree stays as it was.
#   BUILD_DIR/fuzz/corpus/NAME     new inputs that reached new code (kept
#                                  between runs, so a later run goes on
#                                  from there)
#   BUILD_DIR/fuzz/artifacts/NAME  inputs that crashed, leaked or timed out
#   BUILD_DIR/fuzz/NAME.log        libFuzzer's output
# Exits 1 when any harness found something, naming the inputs and how to
# reproduce them; see docs/fuzzing.md.
set -u

if [ $# -lt 2 ]; then
  echo "usage: run_fuzz.sh BUILD_DIR SECONDS [HARNESS]..." >&2
  exit 2
fi
build=$1
seconds=$2
shift 2
[ $# -gt 0 ] || set -- hlo stablehlo stablehlo_bytecode op_spec npy cli_literal xla_ffi_frame

here=$(cd "$(dirname "$0")" && pwd)
out=$build/fuzz
mkdir -p "$out"
# Artifacts of earlier runs stay where they are, but only this run's count.
stamp=$out/.started
: >"$stamp"
failed=
for name in "$@"; do
  exe=$build/tests/fuzz/kcall_fuzz_$name
  if [ ! -x "$exe" ]; then
    echo "run_fuzz.sh: no harness '$exe' (build with -DKCALL_FUZZ=ON)" >&2
    exit 2
  fi
  mkdir -p "$out/corpus/$name" "$out/artifacts/$name"
  dict=
  [ -f "$here/$name.dict" ] && dict=-dict=$here/$name.dict
  echo "== fuzzing $name for ${seconds}s (log: $out/$name.log)"
  # The first corpus directory receives new inputs; the seeds are second.
  # Leaks are errors (detect_leaks); an input may take 10 s at most.
  # shellcheck disable=SC2086
  ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1} \
  UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
    "$exe" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$out/artifacts/$name/" $dict \
      "$out/corpus/$name" "$here/corpus/$name" >"$out/$name.log" 2>&1
  rc=$?
  grep -E '^(stat::number_of_executed_units|stat::new_units_added|Done )' "$out/$name.log" |
    sed 's/^/   /'
  if [ "$rc" -ne 0 ]; then
    failed="$failed $name"
    echo "   FAILED (status $rc); the end of its log:"
    tail -n 40 "$out/$name.log" | sed 's/^/   | /'
  fi
done

found=$(find "$out/artifacts" -type f -newer "$stamp" 2>/dev/null)
if [ -n "$failed" ] || [ -n "$found" ]; then
  echo "run_fuzz.sh: fuzzing found problems in:$failed"
  for f in $found; do
    name=$(basename "$(dirname "$f")")
    echo "  $f"
    echo "    reproduce: $build/tests/fuzz/kcall_fuzz_$name $f"
  done
  echo "  Fix the bug, then add the input to tests/fuzz/corpus/NAME/ (docs/fuzzing.md)."
  exit 1
fi
echo "run_fuzz.sh: nothing found"
