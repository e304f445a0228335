#!/bin/sh
# Adding an element-wise operation is one row: in a scratch copy of the
# tree, add an operation (asinh, which HLO does not have) as
# src/kernels/README.md says, with its row in src/kernels/elementwise_ops.h,
# its opcode in include/kcall/hlo_opcode.h and its name in
# docs/programs.md, and nothing else; check that exactly those three files
# differ, build the library and the kcall tool (and the CUDA backend when
# nvcc is here), and run the new instruction from HLO text in f32, f64,
# f16 and c64, fused with others, and refused for s32 naming its types.
#
#   sh tests/check_elementwise_row.sh SOURCE_DIR
set -eu
src=$(cd "$1" && pwd)
scratch=$(mktemp -d "${TMPDIR:-/tmp}/kcall-row.XXXXXX")
trap 'rm -rf "$scratch"' EXIT INT TERM
fail() {
  echo "check_elementwise_row: $*" >&2
  exit 1
}

mkdir "$scratch/tree"
for d in CMakeLists.txt cmake include src tools docs abi; do
  cp -R "$src/$d" "$scratch/tree/$d"
done
cp -R "$scratch/tree" "$scratch/before"
tree=$scratch/tree

# 1. The row.
row='  X(ASINH, "asinh", 1, SAME, KC__EW_FC, -1, 10, KC__F(asinh)(x), KC__C(asinh)(z), KC__NO) \\'
awk -v row="$row" '{ print } /^#define KC__EW_MATH_OPS\(X\)/ { print row }' \
  "$tree/src/kernels/elementwise_ops.h" > "$scratch/h" && mv "$scratch/h" "$tree/src/kernels/elementwise_ops.h"
# 2. Its opcode: an unused number of the one-operand group.
awk '{ print } /KC_OP_REDUCE_PRECISION,/ { print "  KC_OP_ASINH = 63," }' \
  "$tree/include/kcall/hlo_opcode.h" > "$scratch/h" && mv "$scratch/h" "$tree/include/kcall/hlo_opcode.h"
# 3. Its docs line.
sed 's/^| `abs` `sign` `sqrt`/| `asinh` `abs` `sign` `sqrt`/' "$tree/docs/programs.md" > "$scratch/m" &&
  mv "$scratch/m" "$tree/docs/programs.md"

changed=$(diff -rq "$scratch/before" "$tree" | sed "s|^Files $scratch/before/\([^ ]*\) and .*|\1|" | sort | tr '\n' ' ')
want="docs/programs.md include/kcall/hlo_opcode.h src/kernels/elementwise_ops.h "
[ "$changed" = "$want" ] || fail "expected the change to touch $want; it touched $changed"
grep -q 'KC__EW_MATH_OPS(X)' "$tree/src/kernels/elementwise_ops.h" || fail "no table"

cuda=OFF
command -v nvcc >/dev/null 2>&1 && cuda=ON
cmake -S "$tree" -B "$scratch/build" -DCMAKE_BUILD_TYPE=Release -DKCALL_BUILD_TESTS=OFF \
  -DKCALL_BUILD_BENCH=OFF -DKCALL_BUILD_EXAMPLES=OFF -DKCALL_CUDA=$cuda \
  -DKCALL_CUDA_ARCHITECTURES=90-real >"$scratch/configure.log" 2>&1 ||
  { cat "$scratch/configure.log" >&2; fail "configure failed"; }
targets="kcall kcall_cli"
[ "$cuda" = ON ] && targets="$targets kcall_cuda"
# shellcheck disable=SC2086
cmake --build "$scratch/build" -j 2 --target $targets >"$scratch/build.log" 2>&1 ||
  { tail -n 40 "$scratch/build.log" >&2; fail "build failed"; }
kc=$(find "$scratch/build" -name kcall -type f -perm -u+x | head -n 1)
[ -n "$kc" ] || fail "no kcall tool built"

run() { # TYPE VALUES EXPECTED
  cat >"$scratch/p.hlo" <<EOF
HloModule m
ENTRY e {
  x = $1[4] parameter(0)
  a = $1[4] asinh(x)
  n = $1[4] negate(a)
  ROOT r = $1[4] add(a, n)
}
EOF
  out=$("$kc" run "$scratch/p.hlo" --input "x=$2" 2>&1) || fail "$1: $out"
  echo "$out" | grep -qF "$3" || fail "$1: expected $3, got $out"
  cat >"$scratch/q.hlo" <<EOF
HloModule m
ENTRY e {
  x = $1[4] parameter(0)
  ROOT a = $1[4] asinh(x)
}
EOF
  out=$("$kc" run "$scratch/q.hlo" --input "x=$2" 2>&1) || fail "$1: $out"
  echo "$out" | grep -qF "$4" || fail "$1: expected $4, got $out"
}
run f32 '[0, 1, -2, 0.5]' '[0.0, 0.0, 0.0, 0.0]' '[0.0, 0.8813736, -1.4436355, 0.48121184]'
run f64 '[0, 1, -2, 0.5]' '[0.0, 0.0, 0.0, 0.0]' \
  '[0.0, 0.881373587019543, -1.4436354751788103, 0.48121182505960347]'
run f16 '[0, 1, -2, 0.5]' '[0.0, 0.0, 0.0, 0.0]' '[0.0, 0.8813, -1.443, 0.4812]'

cat >"$scratch/c.hlo" <<EOF
HloModule m
ENTRY e {
  x = f32[2] parameter(0)
  z = c64[2] complex(x, x)
  ROOT a = c64[2] asinh(z)
}
EOF
out=$("$kc" run "$scratch/c.hlo" --input 'x=[0, 1]' 2>&1) || fail "c64: $out"
echo "$out" | grep -qF '[0.0+0.0j, 1.0612751+0.66623944j]' || fail "c64: got $out"

cat >"$scratch/s.hlo" <<EOF
HloModule m
ENTRY e {
  x = s32[2] parameter(0)
  ROOT a = s32[2] asinh(x)
}
EOF
if out=$("$kc" run "$scratch/s.hlo" --input 'x=[0, 1]' 2>&1); then
  fail "s32: expected a refusal, got $out"
fi
echo "$out" | grep -qF 'asinh: element type s32 is not supported (f16, bf16, f32, f64, c64 and c128)' ||
  fail "s32: got $out"
echo "check_elementwise_row: one row, one opcode, one docs line ($want); cuda=$cuda: ok"
