#!/bin/sh
# check_cuda_backend.sh LIB: libkcall_cuda links neither libkcall nor the
# shared CUDA runtime (it carries the runtime, statically, and reaches the
# driver by dlopen), and exports kc_backend_entry and nothing else.
set -eu
lib=$1
fail() { echo "check_cuda_backend: $lib: $*" >&2; exit 1; }
needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
[ -n "$needed" ] || fail "readelf found no NEEDED entries (not a shared object?)"
for n in $needed; do
  case $n in
    libkcall*) fail "links $n: the backend must reach the core only through its table" ;;
    libcudart*) fail "links $n: the CUDA runtime must be linked statically" ;;
    libcuda.so*) fail "links $n: the driver is loaded when first used, never linked" ;;
  esac
done
exports=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[A-Z]$/ && $2 != "A" { print $3 }' | sort)
[ "$exports" = "kc_backend_entry" ] ||
  fail "exports: expected kc_backend_entry only, got: $(echo $exports)"
echo "check_cuda_backend: $lib: NEEDED: $(echo $needed); exports: $exports"
