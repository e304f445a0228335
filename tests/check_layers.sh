#!/bin/sh
# The layers of src/ (DESIGN.md), checked on the library's object files:
# a module may call only modules below it, so no two modules call each
# other. Lowest first; runtime sits below value because tensors allocate
# and copy through devices, never the other way round.
#   check_layers.sh OBJECT...
# Prints each call that goes up a layer, naming both files and the symbol.
set -eu
order="base runtime value internal func op xcall program tvmffi plugin"
for obj in "$@"; do
  mod=${obj##*/kcall_objects.dir/}
  mod=${mod#./}            # Ninja names the objects kcall_objects.dir/./MODULE/...
  file=${mod%.o}
  mod=${mod%%/*}
  nm "$obj" | awk -v mod="$mod" -v file="$file" '
    NF == 3 && $2 ~ /^[TDRB]$/ { print "def", $3, mod, file }
    NF == 2 && $1 == "U"       { print "use", $2, mod, file }'
done | awk -v order="$order" '
  BEGIN { n = split(order, names, " "); for (i = 1; i <= n; ++i) rank[names[i]] = i }
  $1 == "def" { defmod[$2] = $3; deffile[$2] = $4; next }
  { uses[++nu] = $0 }
  END {
    bad = 0
    for (i = 1; i <= nu; ++i) {
      split(uses[i], u, " ")
      sym = u[2]; mod = u[3]
      if (!(mod in rank)) { print "check_layers: module " mod " is not in the layer list"; bad = 1; continue }
      if (!(sym in defmod) || defmod[sym] == mod) continue
      if (rank[defmod[sym]] > rank[mod]) {
        print "check_layers: " u[4] " (" mod ") calls " sym " in " deffile[sym] " (" defmod[sym] "), a layer above it"
        bad = 1
      }
    }
    if (!bad) print "check_layers: every call goes down the layers: " order
    exit bad
  }'
