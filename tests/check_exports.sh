#!/bin/sh
# check_exports.sh LIBRARY
#
# The library exports functions only, all named kc_*: a data object's size
# would be part of the ABI, and any other name is a leak of an internal.
set -u
lib=$1
nm=${NM:-nm}
syms=$("$nm" -D --defined-only "$lib") || { echo "cannot list $lib's symbols" >&2; exit 2; }
bad=$(printf '%s\n' "$syms" | awk 'NF == 3 && ($2 != "T" || $3 !~ /^kc_/) { print }')
if [ -n "$bad" ]; then
  echo "$lib exports what it should not (anything but kc_* functions):" >&2
  printf '%s\n' "$bad" >&2
  exit 1
fi
count=$(printf '%s\n' "$syms" | awk 'NF == 3' | wc -l)
echo "$lib: $count exported functions, no data"
