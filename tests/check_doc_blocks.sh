#!/bin/sh
# check_doc_blocks.sh DOC.md DIR [DIR]...
#
# Every fenced code block of DOC.md in c, cpp or hlo must be a file of one
# of the DIRs (the first that has a file of that name), whole and
# unchanged: its first line names the file ("// add_one.cc: ...",
# "/* register.c: ...", "// add_one.hlo"). The tests build and run those
# files, so the document shows only code that works. Blocks of other
# languages (sh, text, none; python, tested where its files are) are left
# alone.
set -u

doc=$1
shift
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

# Splits the code blocks into $tmp/block.N, one per block, with the
# language in $tmp/lang.N.
awk -v out="$tmp" '
  /^```/ {
    if (inside) { inside = 0; close(file); next }
    lang = substr($0, 4); inside = 1; n++
    file = out "/block." n
    printf "%s\n", lang > (out "/lang." n); close(out "/lang." n)
    printf "" > file
    next
  }
  inside { print > file }
' "$doc"

fail=0
checked=0
for lang_file in "$tmp"/lang.*; do
  [ -e "$lang_file" ] || break
  n=${lang_file##*.}
  lang=$(cat "$lang_file")
  case $lang in
    c|cpp|c++|hlo) ;;
    *) continue ;;
  esac
  block=$tmp/block.$n
  name=$(head -n 1 "$block" | sed -n 's@^\(//\|/\*\|#\) *\([A-Za-z0-9_.-]*\.[A-Za-z0-9]*\)\($\|[: ].*\)@\2@p')
  file=
  for dir in "$@"; do
    if [ -n "$name" ] && [ -f "$dir/$name" ]; then file=$dir/$name; break; fi
  done
  if [ -z "$name" ]; then
    echo "check_doc_blocks.sh: $doc: $lang block $n does not name its file on its first line"
    fail=1
  elif [ -z "$file" ]; then
    echo "check_doc_blocks.sh: $doc: block $n shows $name, which is not in $*"
    fail=1
  elif ! cmp -s "$block" "$file"; then
    echo "check_doc_blocks.sh: $doc: block $n differs from $file:"
    diff "$block" "$file" | head -20
    fail=1
  else
    checked=$((checked + 1))
  fi
done
[ "$checked" -gt 0 ] || { echo "check_doc_blocks.sh: $doc: no code blocks found"; fail=1; }
[ "$fail" -eq 0 ] && echo "check_doc_blocks.sh: $checked block(s) of $doc are the files of $*"
exit "$fail"
