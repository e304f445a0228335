#!/bin/sh
# Runs kcall's tests of one framework against several of its releases,
# each in a throwaway virtual environment, and prints one line per release.
#
#   tools/compat.sh jax [BUILD] [VERSION ...]     (make compat runs it)
#   tools/compat.sh ort [BUILD] [VERSION ...]     (make compat-ort runs it)
#   tools/compat.sh tf [BUILD] [VERSION ...]      (make compat-tf runs it)
#
# BUILD is a C build of this tree (default: build). Each release gets
# $KCALL_COMPAT_DIR/FRAMEWORK-VERSION (default /tmp/kcall-compat), made
# afresh: the release, numpy, pytest and what the tests need besides, from
# PyPI (pip's cache keeps the wheels), then kcall from this tree, its
# extension built once in BUILD/pip-build. The status is 0 when every
# release passed.
#
#   jax  jax==V and jaxlib==V, and absl-py (jax.export needs it on older
#        jax); runs tests/python/test_jax*.py, test_stablehlo.py (the
#        StableHLO that release prints) and the JAX half of
#        test_gradients.py. Default versions: the oldest release kcall
#        supports, one in the middle and the pinned one (0.5.3 0.7.2
#        0.10.2). CI runs 0.5.3 here and the pinned one in make test
#        EXTRAS=jax.
#   ort  onnxruntime==V and onnx (the pinned one, $ONNX_VERSION: it only
#        builds the models); runs tests/python/test_onnxruntime.py.
#        Default versions: an older release and the pinned one (1.20.1
#        1.32.0). CI runs 1.20.1 here and the pinned one in make test
#        EXTRAS=ort.
#   tf   tensorflow-cpu==V; runs tests/python/test_tensorflow.py. Default
#        versions: an older release and the pinned one (2.17.1 2.21.0).
#        CI runs 2.17.1 here and the pinned one in make test EXTRAS=tf.
set -u

KIND=${1:-}
case "$KIND" in
  jax) DEFAULT="0.5.3 0.7.2 0.10.2"; NAME=jax ;;
  ort) DEFAULT="1.20.1 1.32.0"; NAME=onnxruntime ;;
  tf) DEFAULT="2.17.1 2.21.0"; NAME=tensorflow-cpu ;;
  *) echo "usage: compat.sh jax|ort|tf [BUILD] [VERSION ...]" >&2; exit 2 ;;
esac
shift
BUILD=${1:-build}
[ $# -gt 0 ] && shift
VERSIONS=${*:-$DEFAULT}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "$ROOT" && cd "$BUILD" && pwd) || {
  echo "compat: no C build at '$1': run make build first" >&2; exit 2; }
DIR=${KCALL_COMPAT_DIR:-/tmp/kcall-compat}
PYTHON=${PYTHON:-python3}
CMAKE_ARGS=${CMAKE_ARGS:-}
ONNX=${ONNX_VERSION:-1.23.2}
mkdir -p "$DIR"

status=0
summary=""
for v in $VERSIONS; do
  venv="$DIR/$KIND-$v"
  log="$DIR/$KIND-$v.log"
  case "$KIND" in
    jax) set -- "jax==$v" "jaxlib==$v" absl-py ;;
    ort) set -- "onnxruntime==$v" "onnx==$ONNX" ;;
    tf) set -- "tensorflow-cpu==$v" ;;
  esac
  echo "-- $NAME $v: $venv (log: $log)"
  rm -rf "$venv"
  if ! { "$PYTHON" -m venv "$venv" &&
         "$venv/bin/python" -m pip install -q --disable-pip-version-check \
           "$@" numpy pytest 'scikit-build-core>=0.10' &&
         CMAKE_ARGS="$CMAKE_ARGS -DKCALL_PREBUILT_DIR=$BUILD" \
         "$venv/bin/python" -m pip install -q --disable-pip-version-check \
           --no-build-isolation --no-deps \
           --config-settings=build-dir="$BUILD/pip-build" "$ROOT"; } >"$log" 2>&1
  then
    echo "   install failed: see $log"
    summary="$summary
$NAME $v: install failed"
    status=1
    continue
  fi
  case "$KIND" in
    jax) set -- tests/python/test_jax*.py tests/python/test_stablehlo.py \
           tests/python/test_gradients.py -k "not torch" ;;
    ort) set -- tests/python/test_onnxruntime.py ;;
    tf) set -- tests/python/test_tensorflow.py ;;
  esac
  (cd "$ROOT" && KCALL_BUILD_DIR="$BUILD" "$venv/bin/python" -m pytest -q -ra \
     -p no:cacheprovider "$@") >>"$log" 2>&1
  rc=$?
  line=$(tail -n 1 "$log")
  echo "   $line"
  summary="$summary
$NAME $v: $line"
  [ $rc -eq 0 ] || status=1
done
echo "-- summary$summary"
exit $status
