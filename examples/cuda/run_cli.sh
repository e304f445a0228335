#!/bin/sh
# run_cli.sh KCALL CUDA_PLUGIN SEED_HLO RUN_CUDA: the seed program on the
# GPU through `kcall run --platform cuda`, inputs generated on the host
# (i * 0.01) and copied in, the output copied back and printed. Exits 77
# (skipped) with the reason where there is no CUDA device (RUN_CUDA --probe
# says).
kcall=$1
plugin=$2
hlo=$3
"$4" --probe || exit $?
out=$("$kcall" run "$hlo" --plugin "$plugin" --platform cuda --generate-inputs 2>&1)
rc=$?
printf '%s\n' "$out"
if [ "$rc" -ne 0 ]; then
  echo "run_cli.sh: kcall exited with $rc" >&2
  exit 1
fi
# A[i] = 0.01 (i % 128) + 0.01 i: A[2047] = 1.27 + 20.47.
expected='[0.0, 0.02, 0.04, ..., 21.7, 21.72, 21.74]'
if ! printf '%s\n' "$out" | grep -qxF "$expected"; then
  echo "run_cli.sh: expected the line $expected" >&2
  exit 1
fi
echo "the seed program ran on the GPU through kcall run"
