#!/bin/sh
# demo.sh BUILD_DIR — the hello plugin, called through the kcall CLI and
# from a C host program. `make demo` runs it after building.
set -eu

build=${1:-build}
kcall=$build/tools/kcall/kcall
plugin=$build/examples/hello/libhello_plugin.so
host=$build/examples/hello/call_hello

for f in "$kcall" "$plugin" "$host"; do
  if [ ! -f "$f" ]; then
    echo "demo.sh: $f is missing; run 'make build' first" >&2
    exit 1
  fi
done

heading() {
  printf '\n== %s\n' "$*"
}

# Shows a kcall command line as a user would type it, then runs it.
kcall() {
  printf '$ kcall'
  for word in "$@"; do
    case $word in
      "$plugin") printf ' %s' "libhello_plugin.so" ;;
      *" "*|"") printf " '%s'" "$word" ;;
      *) printf ' %s' "$word" ;;
    esac
  done
  printf '\n'
  "$kcall" "$@"
}

heading "The library and the plugin API it offers"
kcall version

heading "What the plugin registers"
kcall inspect "$plugin"

heading "Calling its functions by name; arguments are typed by their form"
kcall call --plugin "$plugin" hello.add 2 3
kcall call --plugin "$plugin" hello.add 0x10 -7
kcall call --plugin "$plugin" hello.concat "hello," " " world
kcall call --plugin "$plugin" hello.make_adder 10

heading "A function that calls another one by name"
kcall call --plugin "$plugin" hello.call hello.add 2 3

heading "Errors name the function, the argument, and what was expected"
# Shown on standard output so that it reads in order; the failure is the
# expected outcome here.
if kcall call --plugin "$plugin" hello.add 1 two 2>&1; then
  echo "demo.sh: that call should have failed" >&2
  exit 1
else
  echo "(exit status $?)"
fi
if kcall call --plugin "$plugin" hello.ad 1 2 2>&1; then
  echo "demo.sh: that call should have failed" >&2
  exit 1
else
  echo "(exit status $?)"
fi

heading "The same plugin from a C host program (call_hello.c)"
printf '$ call_hello libhello_plugin.so\n'
"$host" "$plugin"
