#!/bin/sh
# test_external.sh BUILD_DIR WORK_DIR CC [EXTRA_CFLAGS]
#
# Installs the kcall build in BUILD_DIR into WORK_DIR/prefix, builds this
# directory's plugins and the quickstart's (examples/quickstart) against the
# installed package (find_package, kcall_add_plugin), runs the installed
# kcall on them, then compiles host.c with the flags pkg-config gives and
# runs it, and double_plugin.c with its --cflags alone, then with the
# installed `kcall build`. EXTRA_CFLAGS
# are the sanitizer flags libkcall was built with, which a program linking
# it needs too.
set -eu

build=$1
work=$2
cc=$3
extra=${4:-}
src=$(cd "$(dirname "$0")" && pwd)
prefix=$work/prefix

# Runs a command with its output in a log, shown only when it fails.
logged() {
  log=$work/$1.log
  shift
  if ! "$@" >"$log" 2>&1; then
    echo "test_external.sh: failed: $*"
    cat "$log"
    exit 1
  fi
}

# Fails unless COMMAND prints exactly TEXT.
expect() {
  want=$1
  shift
  got=$("$@") || { echo "test_external.sh: failed: $*"; exit 1; }
  printf '%s\n' "$got"
  if [ "$got" != "$want" ]; then
    echo "test_external.sh: expected: $want"
    exit 1
  fi
}

# Cflags and Libs of a .pc file, for machines without pkg-config: each
# ${var} is replaced by the file's own variables (and pcfiledir), in order.
pc_flags() {
  expand="s|\${pcfiledir}|$(dirname "$1")|g"
  vars=$(sed -n 's/^\([A-Za-z0-9_.]*\)=\(.*\)$/\1 \2/p' "$1")
  while read -r name value; do
    [ -n "$name" ] || continue
    value=$(printf '%s\n' "$value" | sed "$expand")
    expand="$expand;s|\${$name}|$value|g"
  done <<VARS
$vars
VARS
  sed -n -e 's/^Cflags: *//p' -e 's/^Libs: *//p' "$1" | sed "$expand" |
    tr '\n' ' '
}

rm -rf "$work"
mkdir -p "$work"

echo "-- installing $build into $prefix"
logged install cmake --install "$build" --prefix "$prefix"

echo "-- building $src against it with find_package(kcall)"
logged configure cmake -S "$src" -B "$work/build" \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc"
logged build cmake --build "$work/build"
plugin=$work/build/libgreet.so

echo "-- the installed kcall runs the plugin"
"$prefix/bin/kcall" inspect "$plugin" >"$work/inspect.out"
cat "$work/inspect.out"
grep -Eq '^  function +greet\.hello$' "$work/inspect.out" ||
  { echo "test_external.sh: greet.hello is not listed"; exit 1; }
expect "Hello, world!" "$prefix/bin/kcall" call --plugin "$plugin" \
  greet.hello world

echo "-- the plugin written with <kcall/plugin_api.h>, built by kcall_add_plugin"
expect "f32[3]:2,4,6" "$prefix/bin/kcall" call --plugin "$work/build/libdouble.so" \
  op.Double f32[3]:1,2,3

echo "-- the quickstart's plugin (examples/quickstart, README.md) the same way"
logged quickstart_configure cmake -S "$src/../quickstart" -B "$work/quickstart" \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc"
logged quickstart_build cmake --build "$work/quickstart"
expect "5" "$prefix/bin/kcall" call --plugin "$work/quickstart/libmylib.so" \
  mylib.add 2 3
expect "out0: f32[4]
[2.5, 4.5, 6.5, 8.5]" "$prefix/bin/kcall" run "$src/../quickstart/axpy.hlo" \
  --plugin "$work/quickstart/libmylib.so" --input x=[1,2,3,4] --input y=0.5

echo "-- a host program built with pkg-config"
pc=$(find "$prefix" -name kcall.pc | head -n 1)
[ -n "$pc" ] || { echo "test_external.sh: no kcall.pc installed"; exit 1; }
pcdir=$(dirname "$pc")
if command -v pkg-config >/dev/null 2>&1 && [ -z "${KCALL_TEST_NO_PKG_CONFIG:-}" ]; then
  flags=$(PKG_CONFIG_PATH=$pcdir pkg-config --cflags --libs kcall)
else
  echo "(no pkg-config: reading $pc directly)"
  flags=$(pc_flags "$pc")
fi
echo "flags: $flags"
# $extra and $flags are lists of words.
# shellcheck disable=SC2086
logged compile "$cc" $extra -o "$work/greet_host" "$src/host.c" $flags
expect "Hello, pkg-config! (kcall $("$prefix/bin/kcall" version | sed -n 's/^kcall //p'))" \
  env LD_LIBRARY_PATH="$pcdir/.." "$work/greet_host" "$plugin" pkg-config
echo "-- the <kcall/plugin_api.h> plugin built with pkg-config's --cflags alone"
if command -v pkg-config >/dev/null 2>&1 && [ -z "${KCALL_TEST_NO_PKG_CONFIG:-}" ]; then
  cflags=$(PKG_CONFIG_PATH=$pcdir pkg-config --cflags kcall)
else
  cflags=$(pc_flags "$pc" | sed 's/ -L.*//')
fi
# shellcheck disable=SC2086
logged compile_double "$cc" $extra -std=c11 -shared -fPIC -fvisibility=hidden \
  $cflags "$src/double_plugin.c" -o "$work/libdouble_pc.so"
expect "f32[3]:2,4,6" "$prefix/bin/kcall" call --plugin "$work/libdouble_pc.so" \
  op.Double f32[3]:1,2,3
echo "-- the same plugin built by the installed kcall build, with its headers"
logged kcall_build "$prefix/bin/kcall" build -v --cc "$cc" --cache-dir "$work/cache" \
  double "$src/double_plugin.c"
grep -q -- "-I$(cd "$prefix/include" && pwd -P) " "$work/kcall_build.log" ||
  { echo "test_external.sh: not built with $prefix/include:"; cat "$work/kcall_build.log"; exit 1; }
built=$(grep '\.so$' "$work/kcall_build.log")
expect "f32[3]:2,4,6" "$prefix/bin/kcall" call --plugin "$built" op.Double f32[3]:1,2,3
echo "-- ok"
