#!/bin/sh
# demo.sh BUILD_DIR — kcall's main job: a program that calls native
# custom calls, run with `kcall run`. `make demo` runs it after building.
set -eu

build=${1:-build}
here=$(dirname "$0")
kcall=$build/tools/kcall/kcall
plugin=$build/examples/xla/libxla_plugin.so
host=$build/examples/xla/run_program

for f in "$kcall" "$plugin" "$host"; do
  if [ ! -f "$f" ]; then
    echo "demo.sh: $f is missing; run 'make build' first" >&2
    exit 1
  fi
done

# Files the demo writes, inside the build so that their paths stay short.
work=$build/examples/xla/demo-out
rm -rf "$work"
trap 'rm -rf "$work"' EXIT

heading() {
  printf '\n== %s\n' "$*"
}

# Shows a kcall command line as a user would type it (the plugin as $P).
show_command() {
  printf '$ kcall'
  for word in "$@"; do
    case $word in
      "$plugin") word='$P' ;;
    esac
    case $word in
      *" "*|*"["*|"") printf " '%s'" "$word" ;;
      *) printf ' %s' "$word" ;;
    esac
  done
  printf '\n'
}

kcall() {
  show_command "$@"
  "$kcall" "$@"
}

# The same, showing only the first lines of what it prints.
kcall_head() {
  lines=$1
  shift
  show_command "$@"
  "$kcall" "$@" >"$work.txt"
  head -n "$lines" "$work.txt"
  printf '  ... (%s lines in all)\n' "$(wc -l <"$work.txt" | tr -d ' ')"
  rm -f "$work.txt"
}

# Prints the part of an .hlo file from ENTRY on: the program itself.
show_program() {
  printf -- '--- %s\n' "$1"
  sed -n '/^ENTRY/,$p' "$1"
}

cat <<EOF
kcall runs XLA-style programs (HLO text) whose custom calls are native
functions registered by plugins. The plugin here, examples/xla/xla_plugin.c,
holds the targets of XLA's custom-call guide. Below, P is its build:
  P=$plugin
EOF

heading "What the plugin registers: targets, their platform and calling convention"
kcall inspect "$plugin"

heading "A program that calls a target in each CPU calling convention"
show_program "$here/seed_add.hlo"

heading "Running it: A[i] = B[i % 128] + C[i]; missing inputs generated as i * 0.01"
kcall run "$here/seed_add.hlo" --plugin "$plugin" --generate-inputs

heading "Inputs by name: a scalar fills the array (or give [1, 2, ...] or a .npy file)"
kcall run "$here/seed_add.hlo" --plugin "$plugin" --input p0=1 --input p1=0.5

heading "Outputs as .npy files, read back as the input of another run"
kcall run "$here/seed_add.hlo" --plugin "$plugin" --generate-inputs \
  --output "$work"
kcall run "$here/seed_add.hlo" --plugin "$plugin" --input p0=100 \
  --input "p1=$work/out0.npy"

heading "Tuples: a nested tuple operand, and a tuple result whose 2nd element is scratch"
show_program "$here/tuple.hlo"
kcall_head 4 run "$here/tuple.hlo" --plugin "$plugin" --generate-inputs

heading "A typed handler with an attribute (rms_norm, eps), then ordinary HLO"
show_program "$here/rms_norm.hlo"
kcall run "$here/rms_norm.hlo" --plugin "$plugin" \
  --input "x=[[1,2,3,4,5,6,7,8],[8,7,6,5,4,3,2,1],[1,1,1,1,1,1,1,1],[0,0,0,0,0,0,0,4]]" \
  --input scale=2

heading "Where memory and time go: --stats"
kcall run "$here/rms_norm.hlo" --plugin "$plugin" --generate-inputs --stats

heading "A custom call that fails stops the run; the error names target and instruction"
show_program "$here/fails.hlo"
# Shown on standard output so that it reads in order; the failure is the
# expected outcome here.
if kcall run "$here/fails.hlo" --plugin "$plugin" --input x=1 2>&1; then
  echo "demo.sh: that run should have failed" >&2
  exit 1
else
  echo "(exit status $?)"
fi

heading "The same seed program from C, built with the builder API (run_program.c)"
printf '$ run_program\n'
"$host"

printf '\nNext: packed functions, called by name (examples/hello/demo.sh).\n'
