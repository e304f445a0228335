#!/bin/sh
# Runs kcall's ONNX Runtime tests against several onnxruntime releases,
# each in a throwaway virtual environment, and prints one line per release.
#
#   tools/ort_compat.sh [BUILD] [VERSION ...]     (make compat-ort runs it)
#
# BUILD is a C build of this tree (default: build); the VERSIONs default to
# an older release and the one the Makefile pins (1.20.1 1.32.0). Each gets
# $KCALL_COMPAT_DIR/ort-VERSION (default /tmp/kcall-ort-compat), made
# afresh: onnxruntime==VERSION, onnx (the pinned one: it only builds the
# models), numpy and pytest from PyPI, then kcall from this tree, its
# extension built once in BUILD/pip-build. What runs:
# tests/python/test_onnxruntime.py. The status is 0 when every release
# passed. CI runs the older one here and the pinned one in make test
# EXTRAS=ort.
set -u

BUILD=${1:-build}
[ $# -gt 0 ] && shift
VERSIONS=${*:-1.20.1 1.32.0}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "$ROOT" && cd "$BUILD" && pwd) || {
  echo "ort_compat: no C build at '$1': run make build first" >&2; exit 2; }
DIR=${KCALL_COMPAT_DIR:-/tmp/kcall-ort-compat}
PYTHON=${PYTHON:-python3}
CMAKE_ARGS=${CMAKE_ARGS:-}
ONNX=${ONNX_VERSION:-1.23.2}
mkdir -p "$DIR"

status=0
summary=""
for v in $VERSIONS; do
  venv="$DIR/ort-$v"
  log="$DIR/ort-$v.log"
  echo "-- onnxruntime $v: $venv (log: $log)"
  rm -rf "$venv"
  if ! { "$PYTHON" -m venv "$venv" &&
         "$venv/bin/python" -m pip install -q --disable-pip-version-check \
           "onnxruntime==$v" "onnx==$ONNX" numpy pytest 'scikit-build-core>=0.10' &&
         CMAKE_ARGS="$CMAKE_ARGS -DKCALL_PREBUILT_DIR=$BUILD" \
         "$venv/bin/python" -m pip install -q --disable-pip-version-check \
           --no-build-isolation --no-deps \
           --config-settings=build-dir="$BUILD/pip-build" "$ROOT"; } >"$log" 2>&1
  then
    echo "   install failed: see $log"
    summary="$summary
onnxruntime $v: install failed"
    status=1
    continue
  fi
  (cd "$ROOT" && KCALL_BUILD_DIR="$BUILD" "$venv/bin/python" -m pytest -q -ra -p no:cacheprovider \
     tests/python/test_onnxruntime.py) >>"$log" 2>&1
  rc=$?
  line=$(tail -n 1 "$log")
  echo "   $line"
  summary="$summary
onnxruntime $v: $line"
  [ $rc -eq 0 ] || status=1
done
echo "-- summary$summary"
exit $status
