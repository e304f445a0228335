#!/bin/sh
# Runs every benchmark built in $1 and collects their JSON objects into
# $2/results.json (an array, one object per benchmark).
set -eu
build=$1
out=$2
mkdir -p "$out"
first=1
{
  printf '[\n'
  for exe in "$build"/bench/bench_*; do
    [ -x "$exe" ] || continue
    name=$(basename "$exe")
    "$exe" --json "$out/$name.json" >&2
    [ $first -eq 1 ] || printf ',\n'
    first=0
    tr -d '\n' < "$out/$name.json"
  done
  printf '\n]\n'
} > "$out/results.json.tmp"
mv "$out/results.json.tmp" "$out/results.json"
echo "wrote $out/results.json" >&2
