#!/bin/sh
# check_types_listed.sh LIST_C HEADER...
#
# Every type the HEADERs (kcall/abi.h and kcall/abi_helpers.h, which it
# includes) declare must be named X(type) in LIST_C (abi/kcall_abi_h.c),
# the library whose debug information the ABI check reads: a type left out
# there would go unchecked. The declarations are found as the headers write
# them, each at the start of a line:
#   } name;                          a struct or enum typedef
#   typedef struct name name;        an opaque handle (or a struct defined
#                                    after its typedef, as kc_attr is)
#   typedef ... (*name)(...          a function type
set -u
list_c=$1
shift
[ $# -gt 0 ] || { echo "usage: check_types_listed.sh LIST_C HEADER..." >&2; exit 2; }
status=0
total=0
for header in "$@"; do
  names=$({
    sed -n 's/^} *\([A-Za-z_][A-Za-z0-9_]*\);.*/\1/p' "$header"
    sed -n 's/^typedef struct \([A-Za-z_][A-Za-z0-9_]*\) \1;.*/\1/p' "$header"
    sed -n 's/^typedef [^;]*(\*\([A-Za-z_][A-Za-z0-9_]*\))(.*/\1/p' "$header"
  } | sort -u)
  missing=""
  for name in $names; do
    total=$((total + 1))
    grep -qF "X($name)" "$list_c" || missing="$missing $name"
  done
  if [ -n "$missing" ]; then
    echo "check_types_listed.sh: $header declares types that $list_c does not list" >&2
    echo "(add X(TYPE) to KC_ABI_H_TYPES there, then make abi-baseline):$missing" >&2
    status=1
  fi
done
[ "$total" -gt 0 ] || { echo "check_types_listed.sh: no types found in $*" >&2; exit 2; }
[ "$status" -eq 0 ] || exit 1
echo "check_types_listed.sh: all $total types of $* are listed in $list_c"
