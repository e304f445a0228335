#!/bin/sh
# The layers of src/ (DESIGN.md, src/README.md), checked twice:
#  - on the library's object files: a module may call only modules below
#    it, so no two modules call each other;
#  - on the #include lines of every source file of src/, the CUDA backend
#    (runtime/cuda, kernels/cuda) and the ort/ and tf/ libraries included:
#    a module includes the internal headers of modules at or below it,
#    and the public headers that carry a module's meaning (program.h and
#    its opcodes' users, op.h, kernel.h, xcall.h, typed.h, xla_ffi.h,
#    tvm_ffi.h, the umbrellas) only at or above that module. The public
#    headers of types (abi.h, base.h, device.h, runtime.h, value.h,
#    tensor.h, func.h, plugin.h, version.h, hlo_opcode.h) and internal/'s
#    header-only helpers (common.h, object.h) are for every layer.
#    ort/ and tf/ use public headers only.
# Lowest first; runtime sits below value because tensors allocate and copy
# through devices, never the other way round.
#   check_layers.sh SRC_DIR OBJECT...
# Prints each call or include that goes up a layer, naming both files.
set -eu
order="base runtime value internal kernels func op xcall program builtin tvmffi plugin"
src=$1
shift
inc_bad=0
grep -rHo '^#include "[a-z_]*/[a-z_0-9]*\.[a-z]*"' --include='*.c' --include='*.h' \
    --include='*.cu' --include='*.cuh' --include='*.cc' "$src" |
  sed -e "s|^$src/||" -e 's|:#include "| |' -e 's|"$||' |
  awk -v order="$order" '
    BEGIN {
      n = split(order, names, " "); for (i = 1; i <= n; ++i) rank[names[i]] = i
      owner["program"] = "program"; owner["op"] = "op"; owner["kernel"] = "op"
      owner["xcall"] = "xcall"; owner["typed"] = "xcall"; owner["xla_ffi"] = "xcall"
      owner["tvm_ffi"] = "tvmffi"; owner["builtin"] = "builtin"; owner["plugin_api"] = "plugin"; owner["kcall"] = "plugin"
      free_inc["internal/common.h"] = 1
      free_inc["internal/object.h"] = 1
    }
    {
      file = $1; inc = $2
      mod = file; sub(/\/.*/, "", mod)
      top = inc; sub(/\/.*/, "", top)
      if (mod == "ort" || mod == "tf") {
        if (top != "kcall" && top != mod) { print "check_layers: " file " (" mod ") includes " inc ", not a public header"; bad = 1 }
        next
      }
      if (!(mod in rank)) { print "check_layers: module " mod " (" file ") is not in the layer list"; bad = 1; next }
      if (top == "kcall") {
        h = inc; sub(/^kcall\//, "", h); sub(/\.[a-z]*$/, "", h)
        if (!(h in owner)) next
        to = owner[h]
      } else {
        if (inc in free_inc) next
        to = top
      }
      if (!(to in rank)) next
      if (rank[to] > rank[mod]) {
        print "check_layers: " file " (" mod ") includes " inc " (" to "), a layer above it"
        bad = 1
      }
    }
    END { if (!bad) print "check_layers: every #include goes down the layers"; exit bad }' ||
  inc_bad=1
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
exit $inc_bad
