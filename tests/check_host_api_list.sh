#!/bin/sh
# check_host_api_list.sh CC SOURCE_DIR
#
# The build-time check that every kc_host_api entry has its kc_* spelling
# in kcall/plugin_api.h (src/plugin/host_api.c) must refuse a list that
# lacks an entry, or gives one another type, naming the entry; and it must
# accept the list as it is. Compiles host_api.c against copies of the
# headers, altered one way at a time.
set -u

cc=$1
src=$2
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fail=0

# compile NAME: host_api.c against $tmp/NAME/kcall, errors in $tmp/NAME.log.
compile() {
  "$cc" -std=c11 -fsyntax-only -D_GNU_SOURCE -I"$tmp/$1" -I"$src/src" \
    "$src/src/plugin/host_api.c" >"$tmp/$1.log" 2>&1
}

# variant NAME SED_SCRIPT: the headers with plugin_api.h edited.
variant() {
  mkdir -p "$tmp/$1"
  cp -R "$src/include/kcall" "$tmp/$1/kcall"
  sed -e "$2" "$src/include/kcall/plugin_api.h" >"$tmp/$1/kcall/plugin_api.h"
}

# expect_refused NAME TEXT
expect_refused() {
  if compile "$1"; then
    echo "check_host_api_list.sh: $1: host_api.c compiled; expected it refused"
    fail=1
  elif ! grep -q "$2" "$tmp/$1.log"; then
    echo "check_host_api_list.sh: $1: refused without a message matching '$2':"
    head -20 "$tmp/$1.log"
    fail=1
  fi
}

variant as_is ''
if ! compile as_is; then
  echo "check_host_api_list.sh: host_api.c does not compile as it is:"
  head -20 "$tmp/as_is.log"
  fail=1
fi

variant missing '/X(R, const char\*, status_get_message,/d'
expect_refused missing "KC_HOST_API_FUNCTIONS in kcall/plugin_api.h does not list"

variant wrong_type 's/X(R, kc_status_code, status_get_code,/X(R, int, status_get_code,/'
expect_refused wrong_type "KC_HOST_API_FUNCTIONS gives .*status_get_code.* another type"

[ "$fail" -eq 0 ] && echo "check_host_api_list.sh: the list is checked against kc_host_api"
exit "$fail"
