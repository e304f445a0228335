#!/bin/sh
# check_types_listed.sh ABI_H LIST_C
#
# Every type ABI_H (kcall/abi.h) declares must be named X(type) in LIST_C
# (abi/kcall_abi_h.c), the library whose debug information the ABI check
# reads: a type left out there would go unchecked. The declarations are
# found as the header writes them, each at the start of a line:
#   } name;                          a struct or enum typedef
#   typedef struct name name;        an opaque handle (or a struct defined
#                                    after its typedef, as kc_attr is)
#   typedef ... (*name)(...          a function type
set -u
abi_h=$1
list_c=$2
names=$({
  sed -n 's/^} *\([A-Za-z_][A-Za-z0-9_]*\);.*/\1/p' "$abi_h"
  sed -n 's/^typedef struct \([A-Za-z_][A-Za-z0-9_]*\) \1;.*/\1/p' "$abi_h"
  sed -n 's/^typedef [^;]*(\*\([A-Za-z_][A-Za-z0-9_]*\))(.*/\1/p' "$abi_h"
} | sort -u)
[ -n "$names" ] || { echo "check_types_listed.sh: no types found in $abi_h" >&2; exit 2; }
missing=""
count=0
for name in $names; do
  count=$((count + 1))
  grep -qF "X($name)" "$list_c" || missing="$missing $name"
done
if [ -n "$missing" ]; then
  echo "check_types_listed.sh: $abi_h declares types that $list_c does not list" >&2
  echo "(add X(TYPE) to KC_ABI_H_TYPES there, then make abi-baseline):$missing" >&2
  exit 1
fi
echo "check_types_listed.sh: all $count types of $abi_h are listed in $list_c"
