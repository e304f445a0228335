#!/bin/sh
# check_headers.sh CC CXX INCLUDE_DIR
#
# Every public header compiles on its own, included twice (its include
# guard), as C11 and as C++17 (kcall.hpp and kcall/cpp/*.hpp as C++ only),
# with the warnings the library is built with. The plugin's headers, kcall/abi.h and
# kcall/abi_helpers.h, include nothing but <stddef.h>, <stdint.h>,
# <stdbool.h> and each other.
set -u
cc=$1
cxx=$2
include=$3
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

c_flags="-std=c11 -fsyntax-only -Werror -Wall -Wextra -Wshadow -Wconversion
-Wstrict-prototypes -Wmissing-prototypes"
cxx_flags="-std=c++17 -fsyntax-only -Werror -Wall -Wextra -Wshadow"

failed=0
count=0
for header in "$include"/kcall/*.h "$include"/kcall/*.hpp "$include"/kcall/cpp/*.hpp; do
  name=${header#"$include"/}
  printf '#include <%s>\n#include <%s>\n' "$name" "$name" >"$tmp/alone.c"
  cp "$tmp/alone.c" "$tmp/alone.cpp"
  case $name in
    *.hpp) langs="cxx" ;;
    *) langs="c cxx" ;;
  esac
  for lang in $langs; do
    count=$((count + 1))
    if [ "$lang" = c ]; then
      # shellcheck disable=SC2086 # the flags split on purpose
      out=$("$cc" $c_flags -I "$include" "$tmp/alone.c" 2>&1)
    else
      # shellcheck disable=SC2086
      out=$("$cxx" $cxx_flags -I "$include" "$tmp/alone.cpp" 2>&1)
    fi
    if [ $? -ne 0 ]; then
      failed=1
      echo "check_headers.sh: $name does not compile alone as $lang:" >&2
      printf '%s\n' "$out" >&2
    fi
  done
done

for name in abi.h abi_helpers.h; do
  bad=$(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*//p' \
          "$include/kcall/$name" |
        grep -v -x -e '<stddef\.h>' -e '<stdint\.h>' -e '<stdbool\.h>' \
                   -e '"kcall/abi\.h"' -e '"kcall/abi_helpers\.h"')
  if [ -n "$bad" ]; then
    failed=1
    echo "check_headers.sh: kcall/$name, a plugin's header, includes more than" >&2
    echo "<stddef.h>, <stdint.h>, <stdbool.h> and kcall/abi*.h:" >&2
    printf '  %s\n' "$bad" >&2
  fi
done

[ "$failed" -eq 0 ] || exit 1
echo "check_headers.sh: $count compilations of the headers alone; the plugin's headers include only what they may"
