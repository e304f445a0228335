#!/bin/sh
# run_case.sh CASE KCALL PLUGIN CHECKER SRC_DIR WORK_DIR
#
# The example tests that take more than one command: run a program with
# `kcall run --output`, then check the .npy files it wrote (with
# check_outputs, or by feeding them back in).
set -eu

case_name=$1
kcall=$2
plugin=$3
check=$4
src=$5
work=$6

rm -rf "$work"
mkdir -p "$work"

# Runs kcall, expecting it to fail with status 1 and `pattern` (an
# extended regex) on standard error.
expect_error() {
  pattern=$1
  shift
  if "$kcall" "$@" >"$work/out" 2>"$work/err"; then
    echo "run_case.sh: expected a failure from: kcall $*" >&2
    exit 1
  else
    rc=$?
  fi
  cat "$work/err"
  [ "$rc" -eq 1 ] || { echo "run_case.sh: exit status $rc, expected 1" >&2; exit 1; }
  grep -Eq -- "$pattern" "$work/err" || {
    echo "run_case.sh: standard error does not match: $pattern" >&2
    exit 1
  }
}

case $case_name in
  seed_values)
    "$kcall" run "$src/seed_add.hlo" --plugin "$plugin" --generate-inputs \
      --output "$work/out"
    "$check" seed "$work/out"
    ;;
  tuple_values)
    "$kcall" run "$src/tuple.hlo" --plugin "$plugin" --generate-inputs \
      --output "$work/out"
    "$check" tuple "$work/out"
    ;;
  rms_norm_values)
    "$kcall" run "$src/rms_norm.hlo" --plugin "$plugin" --generate-inputs \
      --output "$work/out"
    "$check" rms_norm "$work/out"
    ;;
  npy_round_trip)
    # With B = 0 the seed computes A = C, so an output written by one run
    # and read as C by the next must come back byte for byte.
    "$kcall" run "$src/seed_add.hlo" --plugin "$plugin" --generate-inputs \
      --output "$work/first"
    "$kcall" run "$src/seed_add.hlo" --plugin "$plugin" --input p0=0 \
      --input "p1=$work/first/out0.npy" --output "$work/second"
    for k in 0 1 2; do
      cmp "$work/first/out0.npy" "$work/second/out$k.npy"
    done
    ;;
  npy_wrong_shape)
    "$kcall" run "$src/tuple.hlo" --plugin "$plugin" --generate-inputs \
      --output "$work/tuple"
    expect_error "input 'p1': '.*out0\\.npy'( \\([0-9]+ bytes\\))? holds f32\\[512\\], the input is f32\\[2048\\]" \
      run "$src/seed_add.hlo" --plugin "$plugin" --input p0=1 \
      --input "p1=$work/tuple/out0.npy"
    ;;
  npy_not_npy)
    printf 'not numpy' >"$work/bad.npy"
    expect_error "input 'p1': reading '.*bad\\.npy'( \\([0-9]+ bytes\\))?: not a \\.npy file" \
      run "$src/seed_add.hlo" --plugin "$plugin" --input p0=1 \
      --input "p1=$work/bad.npy"
    printf '\223NUMPY\001\000\166\000{' >"$work/short.npy"
    expect_error "truncated file: the header needs 118 bytes, found 1" \
      run "$src/seed_add.hlo" --plugin "$plugin" --input p0=1 \
      --input "p1=$work/short.npy"
    ;;
  output_dir_error)
    : >"$work/file"
    expect_error "^kcall: error: INVALID_ARGUMENT: --output: cannot create directory '.*file/sub'( \\([0-9]+ bytes\\))?: '.*/file'( \\([0-9]+ bytes\\))? is a file, expected a directory$" \
      run "$src/seed_add.hlo" --plugin "$plugin" --generate-inputs \
      --output "$work/file/sub"
    # Missing parents are made, as mkdir -p makes them.
    "$kcall" run "$src/seed_add.hlo" --plugin "$plugin" --generate-inputs \
      --output "$work/new/deeper/outs" >/dev/null || exit 1
    [ -f "$work/new/deeper/outs/out2.npy" ] || { echo "run_case.sh: --output made no parents" >&2; exit 1; }
    # A file where the directory should be.
    expect_error "^kcall: error: INVALID_ARGUMENT: --output: '.*/file'( \\([0-9]+ bytes\\))? is a file, expected a directory$" \
      run "$src/seed_add.hlo" --plugin "$plugin" --generate-inputs \
      --output "$work/file"
    # A directory where an output file goes: the directory's state is wrong.
    mkdir -p "$work/outs/out1.npy"
    expect_error "^kcall: error: FAILED_PRECONDITION: cannot write output 1: '.*out1\\.npy'( \\([0-9]+ bytes\\))? is a directory, expected a file \\(or nothing\\) there$" \
      run "$src/seed_add.hlo" --plugin "$plugin" --generate-inputs \
      --output "$work/outs"
    [ -f "$work/outs/out0.npy" ] || { echo "run_case.sh: out0.npy was not written" >&2; exit 1; }
    ;;
  paths_of_the_wrong_kind)
    # Directories named where files are expected: the path and what was
    # expected, with INVALID_ARGUMENT; missing files are NOT_FOUND.
    mkdir -p "$work/dir"
    expect_error "^kcall: error: INVALID_ARGUMENT: '.*/dir'( \\([0-9]+ bytes\\))? is a directory, expected an HLO or StableHLO text file$" \
      run "$work/dir" --plugin "$plugin" --generate-inputs
    expect_error "^kcall: error: INVALID_ARGUMENT: input 'p1': '.*/dir'( \\([0-9]+ bytes\\))? is a directory, expected a \\.npy file$" \
      run "$src/seed_add.hlo" --plugin "$plugin" --input p0=1 --input "p1=$work/dir"
    expect_error "^kcall: error: NOT_FOUND: input 'p1': cannot open '.*/nope\\.npy'( \\([0-9]+ bytes\\))?: No such file or directory$" \
      run "$src/seed_add.hlo" --plugin "$plugin" --input p0=1 --input "p1=$work/nope.npy"
    expect_error "^kcall: error: INVALID_ARGUMENT: loading plugin '.*/dir'( \\([0-9]+ bytes\\))?: it is a directory, expected a shared object file$" \
      run "$src/seed_add.hlo" --plugin "$work/dir" --generate-inputs
    expect_error "^kcall: error: INVALID_ARGUMENT: --xla-ffi: cannot load '.*/dir'( \\([0-9]+ bytes\\))?: it is a directory, expected a shared object file$" \
      run "$src/seed_add.hlo" --xla-ffi "$work/dir:handler" --generate-inputs
    expect_error "^kcall: error: NOT_FOUND: --xla-ffi: cannot load '.*/nope\\.so'( \\([0-9]+ bytes\\))?: no such file$" \
      run "$src/seed_add.hlo" --xla-ffi "$work/nope.so:handler" --generate-inputs
    expect_error "^kcall: error: INVALID_ARGUMENT: loading plugin '/dev/null': it is not a regular file, expected a shared object file$" \
      run "$src/seed_add.hlo" --plugin /dev/null --generate-inputs
    ;;
  *)
    echo "run_case.sh: unknown case '$case_name'" >&2
    exit 2
    ;;
esac
