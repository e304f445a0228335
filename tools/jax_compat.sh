#!/bin/sh
# Runs kcall's JAX tests against several jax/jaxlib releases, each in a
# throwaway virtual environment, and prints one line per release.
#
#   tools/jax_compat.sh [BUILD] [VERSION ...]     (make compat runs it)
#
# BUILD is a C build of this tree (default: build); the VERSIONs default
# to the oldest release kcall supports, one in the middle and the newest
# it is pinned to (0.5.3 0.7.2 0.10.2). Each release gets
# $KCALL_COMPAT_DIR/jax-VERSION (default /tmp/kcall-jax-compat), made
# afresh: jax, jaxlib, numpy, pytest and absl-py (jax.export needs it on
# older jax) from PyPI (pip's cache keeps the wheels), then kcall from this
# tree, its extension built once in BUILD/pip-build. What runs:
# tests/python/test_jax*.py, test_stablehlo.py (the StableHLO that
# release prints) and the JAX half of tests/python/test_gradients.py. The status is 0 when every release
# passed. CI runs the oldest (0.5.3) here and the pinned one in make test EXTRAS=jax.
set -u

BUILD=${1:-build}
[ $# -gt 0 ] && shift
VERSIONS=${*:-0.5.3 0.7.2 0.10.2}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "$ROOT" && cd "$BUILD" && pwd) || {
  echo "jax_compat: no C build at '$1': run make build first" >&2; exit 2; }
DIR=${KCALL_COMPAT_DIR:-/tmp/kcall-jax-compat}
PYTHON=${PYTHON:-python3}
CMAKE_ARGS=${CMAKE_ARGS:-}
mkdir -p "$DIR"

status=0
summary=""
for v in $VERSIONS; do
  venv="$DIR/jax-$v"
  log="$DIR/jax-$v.log"
  echo "-- jax $v: $venv (log: $log)"
  rm -rf "$venv"
  if ! { "$PYTHON" -m venv "$venv" &&
         "$venv/bin/python" -m pip install -q --disable-pip-version-check \
           "jax==$v" "jaxlib==$v" numpy pytest absl-py 'scikit-build-core>=0.10' &&
         CMAKE_ARGS="$CMAKE_ARGS -DKCALL_PREBUILT_DIR=$BUILD" \
         "$venv/bin/python" -m pip install -q --disable-pip-version-check \
           --no-build-isolation --no-deps \
           --config-settings=build-dir="$BUILD/pip-build" "$ROOT"; } >"$log" 2>&1
  then
    echo "   install failed: see $log"
    summary="$summary
jax $v: install failed"
    status=1
    continue
  fi
  (cd "$ROOT" && KCALL_BUILD_DIR="$BUILD" "$venv/bin/python" -m pytest -q -ra -p no:cacheprovider \
     tests/python/test_jax*.py tests/python/test_stablehlo.py "tests/python/test_gradients.py" \
     -k "not torch") \
     >>"$log" 2>&1
  rc=$?
  line=$(tail -n 1 "$log")
  echo "   $line"
  summary="$summary
jax $v: $line"
  [ $rc -eq 0 ] || status=1
done
echo "-- summary$summary"
exit $status
