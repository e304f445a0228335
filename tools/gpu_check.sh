#!/bin/sh
# The checks that need an NVIDIA GPU, in one run: builds this tree with the
# CUDA backend (Release, for ARCH), then runs the C tests labelled gpu,
# bench_cuda, tests/python/test_cuda.py against the package pip builds
# (with whatever torch, CuPy and JAX the Python has), and last the whole
# C suite and the torch and JAX Python tests. Each step has its own time
# limit and log in OUTDIR; a step's failure does not stop the ones after
# it, and the status is that of the first failure.
#
#   tools/gpu_check.sh OUTDIR [ARCH]
#
# ARCH: KCALL_CUDA_ARCHITECTURES in CMake's syntax (90 for SASS of the
# H100/H200 alone); without it, the project's default.
#
# KCALL_GPU_QUICK=1 stops after test_cuda.py.
#
# It installs the package into the Python it runs (python3, or $PYTHON):
# run it on a machine that is thrown away afterwards, or in a venv.
set -u
out=${1:?usage: tools/gpu_check.sh OUTDIR [ARCH]}
arch=${2:+-DKCALL_CUDA_ARCHITECTURES=$2}
py=${PYTHON:-python3}
build=${KCALL_GPU_BUILD:-/tmp/kcall-gpu-build}
jobs=$(nproc 2>/dev/null || echo 4)
mkdir -p "$out"
rm -f "$out"/*.log
status=0

# step NAME LOG SECONDS COMMAND...: runs COMMAND with a limit, its output
# appended to OUTDIR/LOG.log, and prints one line with its status and time.
step() {
  name=$1 log=$2 limit=$3
  shift 3
  start=$(date +%s)
  timeout "$limit" "$@" >>"$out/$log.log" 2>&1
  rc=$?
  echo "$name: rc=$rc in $(($(date +%s) - start)) s"
  if [ $rc -ne 0 ] && [ $status -eq 0 ]; then status=$rc; fi
  return $rc
}

{
  nvidia-smi -L 2>&1
  nvcc --version 2>&1 | tail -n 2
  "$py" -c 'import sys; print("python", sys.version.split()[0])'
  for m in torch cupy jax jaxlib numpy; do
    "$py" -c "import $m; print('$m', $m.__version__)" 2>&1 | tail -n 1
  done
} >"$out/env.log"
cat "$out/env.log"

step configure build 120 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DKCALL_CUDA=ON $arch || exit $status
step build build 300 cmake --build "$build" -j "$jobs" || { tail -n 40 "$out/build.log"; exit $status; }
step ctest_gpu ctest_gpu 180 sh -c "cd '$build' && ctest -L gpu --output-on-failure -j 4"
step bench_cuda bench_cuda 120 "$build/bench/bench_cuda" --json "$out/bench_cuda.json"
step pip_install build 300 env CMAKE_BUILD_PARALLEL_LEVEL="$jobs" \
  CMAKE_ARGS="-DKCALL_CUDA=ON $arch" \
  "$py" -m pip install -q --disable-pip-version-check --no-build-isolation \
  --no-deps --config-settings=build-dir=/tmp/kcall-gpu-pip .
step pytest_cuda pytest_cuda 180 env KCALL_BUILD_DIR="$build" "$py" -m pytest -ra -v \
  tests/python/test_cuda.py
if [ -z "${KCALL_GPU_QUICK:-}" ]; then
  step ctest_all ctest_all 120 sh -c "cd '$build' && ctest --output-on-failure -j $jobs"
  step pytest_frameworks pytest_frameworks 200 env KCALL_BUILD_DIR="$build" \
    "$py" -m pytest -ra tests/python/test_torch.py tests/python/test_jax.py
fi
for name in ctest_gpu bench_cuda pytest_cuda; do
  echo "---- $name"
  tail -n 30 "$out/$name.log"
done
exit $status
