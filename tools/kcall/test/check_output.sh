#!/bin/sh
# check_output.sh [-r RC] [-x TEXT] [-o REGEX]... [-e REGEX]... COMMAND [ARG]...
#
# Runs COMMAND and fails, saying why, unless it exits with RC (default 0),
# its standard output is exactly the line TEXT (when -x is given), and each
# extended REGEX matches some line of its standard output (-o) or standard
# error (-e).
set -u

rc_want=0
exact=
have_exact=0
out_res=
err_res=
nl='
'
while getopts r:x:o:e: opt; do
  case $opt in
    r) rc_want=$OPTARG ;;
    x) exact=$OPTARG; have_exact=1 ;;
    o) out_res=$out_res$OPTARG$nl ;;
    e) err_res=$err_res$OPTARG$nl ;;
    *) echo "usage: check_output.sh [-r RC] [-x TEXT] [-o RE] [-e RE] CMD..." >&2
       exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { echo "check_output.sh: no command" >&2; exit 2; }

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
"$@" >"$tmp/out" 2>"$tmp/err"
rc=$?

fail=0
complain() {
  echo "check_output.sh: $*"
  fail=1
}
expect_lines() { # FILE STREAM-NAME REGEXES
  while IFS= read -r re; do
    [ -n "$re" ] || continue
    grep -Eq -- "$re" "$1" || complain "no line of $2 matches: $re"
  done <<LIST
$3
LIST
}

[ "$rc" -eq "$rc_want" ] || complain "exit status $rc, expected $rc_want"
if [ "$have_exact" = 1 ]; then
  printf '%s\n' "$exact" >"$tmp/want"
  cmp -s "$tmp/want" "$tmp/out" || complain "standard output is not: $exact"
fi
expect_lines "$tmp/out" "standard output" "$out_res"
expect_lines "$tmp/err" "standard error" "$err_res"

if [ "$fail" = 1 ]; then
  echo "---- command:"
  printf '%s\n' "$*"
  echo "---- standard output:"
  cat "$tmp/out"
  echo "---- standard error:"
  cat "$tmp/err"
  exit 1
fi
exit 0
