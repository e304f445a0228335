#!/bin/sh
# test_build.sh CASE KCALL REPO SCRATCH
#
# `kcall build` from the outside: CASE names one check (see the cases
# below); KCALL is the tool, REPO the source tree (for its examples),
# SCRATCH a directory this case may empty and fill. Exits 0 when the check
# holds, 77 when it cannot run here (no nvcc), else 1 saying why.
set -u
case_name=$1
kcall=$2
repo=$3
dir=$4/$case_name
rm -rf "$dir"
mkdir -p "$dir" || exit 1
cd "$dir" || exit 1
cache=$dir/cache
hello=$repo/examples/hello/hello_plugin.c

fail() {
  echo "test_build.sh $case_name: $*"
  exit 1
}

# build ARGS...: runs `kcall build --cache-dir $cache ARGS`, its output in
# out and err; the status in $rc.
build() {
  "$kcall" build --cache-dir "$cache" "$@" >out 2>err
  rc=$?
}

# A plugin registering NAME, a packed function answering VALUE (a C
# expression of type int64_t).
write_plugin() { # FILE NAME VALUE
  cat >"$1" <<EOC
#include <math.h>
#include <kcall/abi.h>

static kc_status* answer(void* self, const kc_any* args, int32_t nargs,
                         kc_any* ret) {
  (void)self; (void)args; (void)nargs;
  *ret = kc_any_int($3);
  return NULL;
}

static kc_status* init(const kc_host_api* host) {
  static const kc_func_entry fns[] = {{"$2", answer}};
  return kc_host_register_functions(host, fns, 1, (void*)host);
}

static const kc_plugin_info info = {
    .struct_size = sizeof(kc_plugin_info),
    .api_major = KC_API_VERSION_MAJOR,
    .api_minor = KC_API_VERSION_MINOR,
    .name = "answer",
    .init = init,
};

KC_PLUGIN_ENTRY(host) { (void)host; return &info; }
EOC
}

# What the function NAME of the plugin at PATH answers.
call() { # PATH NAME ARGS...
  p=$1
  shift
  "$kcall" call --plugin "$p" "$@" 2>&1
}

stamp() { stat -c '%i %Y' "$1"; }

case $case_name in
load)
  # Builds, prints one whole path in the cache, and the plugin works.
  build hello "$hello"
  [ $rc = 0 ] || fail "status $rc: $(cat err)"
  path=$(cat out)
  case $path in "$cache"/libhello-*.so) ;; *) fail "path '$path'" ;; esac
  [ "$(wc -l <out)" = 1 ] || fail "more than the path printed: $(cat out)"
  [ ! -s err ] || fail "printed on stderr: $(cat err)"
  got=$(call "$path" hello.add 2 3)
  [ "$got" = 5 ] || fail "hello.add 2 3 gave '$got'"
  # No scratch directory is left behind.
  ls -A "$cache" | grep -q '^\.tmp' && fail "scratch left: $(ls -A "$cache")"
  ;;
cache)
  write_plugin a.c ans.a 1
  build -v ans a.c
  [ $rc = 0 ] || fail "status $rc: $(cat err)"
  grep -q "^kcall: built 'ans'" err || fail "not built: $(cat err)"
  first=$(cat out)
  before=$(stamp "$first")
  sleep 1
  # Again, from another directory by another path: the same file, untouched.
  mkdir sub && cp a.c sub/a.c
  build -v ans sub/a.c
  [ $rc = 0 ] || fail "status $rc: $(cat err)"
  [ "$(cat out)" = "$first" ] || fail "second path $(cat out), first $first"
  grep -q "^kcall: 'ans' is up to date" err || fail "rebuilt: $(cat err)"
  grep -q '^+ ' err && fail "ran a compiler: $(cat err)"
  [ "$(stamp "$first")" = "$before" ] || fail "the plugin was written again"
  ;;
libm)
  # A kernel calling the math library links without being told to (the
  # argument count keeps expf from being folded at compile time).
  write_plugin m.c m.e '(int64_t)(100.0f * expf((float)nargs + 1.0f))'
  build -v m m.c
  [ $rc = 0 ] || fail "status $rc: $(cat err)"
  grep -q -- " -lm$" err || fail "not linked with -lm: $(cat err)"
  got=$(call "$(cat out)" m.e)
  [ "$got" = 271 ] || fail "m.e gave '$got'"
  ;;
rebuild)
  write_plugin a.c ans.a 1
  build ans a.c
  first=$(cat out)
  [ "$(call "$first" ans.a)" = 1 ] || fail "first build answers $(call "$first" ans.a)"
  # A changed source: a new plugin beside the old one, which stays.
  write_plugin a.c ans.a 2
  build -v ans a.c
  second=$(cat out)
  [ $rc = 0 ] && [ "$second" != "$first" ] || fail "source change: $second"
  grep -q "^kcall: built 'ans'" err || fail "source change not built: $(cat err)"
  [ "$(call "$second" ans.a)" = 2 ] || fail "rebuilt answers $(call "$second" ans.a)"
  [ -f "$first" ] || fail "the first build was removed"
  # Changed flags: rebuilt with them.
  build -v --flags "-DUNUSED=1 -O1" ans a.c
  third=$(cat out)
  [ $rc = 0 ] && [ "$third" != "$second" ] || fail "flags change: $third"
  grep -q -- "-DUNUSED=1 -O1 .*a.c" err || fail "flags not passed: $(cat err)"
  # The same flags given one by one are the same build.
  build -v --flag -DUNUSED=1 --flag=-O1 ans a.c
  [ "$(cat out)" = "$third" ] || fail "--flag: $(cat out), --flags: $third"
  grep -q "is up to date" err || fail "--flag rebuilt: $(cat err)"
  # A header named as a source is hashed: changing it rebuilds.
  echo '#define X 1' >a.h
  build ans a.c a.h
  with_h=$(cat out)
  echo '#define X 2' >a.h
  build ans a.c a.h
  [ "$(cat out)" != "$with_h" ] || fail "a header change kept $(cat out)"
  # Another compiler (a link to cc is another path): rebuilt.
  ln -s "$(command -v cc)" mycc
  build --cc "$dir/mycc" ans a.c
  [ $rc = 0 ] && [ "$(cat out)" != "$second" ] || fail "compiler change: $(cat out) $(cat err)"
  ;;
concurrent)
  # Eight processes build the same new plugin at once: all succeed with
  # the same path, and one of them compiled it.
  write_plugin a.c ans.a 7
  i=0
  while [ $i -lt 8 ]; do
    ("$kcall" build -v --cache-dir "$cache" ans a.c >out.$i 2>err.$i; echo $? >rc.$i) &
    i=$((i + 1))
  done
  wait
  first=$(cat out.0)
  i=0
  while [ $i -lt 8 ]; do
    [ "$(cat rc.$i)" = 0 ] || fail "process $i: status $(cat rc.$i): $(cat err.$i)"
    [ "$(cat out.$i)" = "$first" ] || fail "process $i: $(cat out.$i), process 0: $first"
    i=$((i + 1))
  done
  built=$(cat err.* | grep -c "^kcall: built 'ans'")
  [ "$built" = 1 ] || fail "built $built times: $(cat err.*)"
  [ "$(call "$first" ans.a)" = 7 ] || fail "answers $(call "$first" ans.a)"
  [ "$(ls "$cache" | grep -c '\.so$')" = 1 ] || fail "cache holds $(ls -A "$cache")"
  ls -A "$cache" | grep -q '^\.tmp' && fail "scratch left: $(ls -A "$cache")"
  ;;
compile_error)
  printf 'int f(void) { return undeclared_thing; }\n' >bad.c
  build bad bad.c
  [ $rc = 1 ] || fail "status $rc"
  [ ! -s out ] || fail "printed a path: $(cat out)"
  head -n 1 err | grep -q "^kcall: error: INVALID_ARGUMENT: building plugin 'bad': compiling 'bad.c' failed: C compiler '.*' exited with status 1:$" \
    || fail "first line: $(head -n 1 err)"
  grep -q "bad.c:1:.*undeclared_thing" err || fail "no compiler message: $(cat err)"
  [ "$(ls "$cache" | grep -c '\.so$')" = 0 ] || fail "cache holds $(ls -A "$cache")"
  ls -A "$cache" | grep -q '^\.tmp' && fail "scratch left: $(ls -A "$cache")"
  # A link error (an undefined function) is one too.
  printf '#include <kcall/abi.h>\nvoid nowhere(void);\nvoid g(void);\nvoid g(void) { nowhere(); }\n' >undef.c
  build undef undef.c
  [ $rc = 1 ] || fail "undefined symbol: status $rc"
  grep -q "^kcall: error: INVALID_ARGUMENT: building plugin 'undef': linking failed" err \
    || fail "link error: $(cat err)"
  grep -q "nowhere" err || fail "no linker message: $(cat err)"
  ;;
no_nvcc)
  printf '__global__ void k(void) {}\n' >k.cu
  build --nvcc /nonexistent/nvcc cu k.cu
  [ $rc = 1 ] || fail "status $rc"
  grep -q "^kcall: error: NOT_FOUND: building plugin 'cu': compiling 'k.cu': no CUDA compiler: '/nonexistent/nvcc' is not an executable file (choose one with --nvcc)$" err \
    || fail "message: $(cat err)"
  # A PATH without nvcc that still finds the tool's launcher (make
  # valgrind runs the tool under valgrind): valgrind's own directory, when
  # nvcc is not there too.
  nopath=/nonexistent
  if t=$(command -v valgrind) && [ ! -e "$(dirname "$t")/nvcc" ]; then
    nopath=$(dirname "$t")
  fi
  PATH=$nopath build cu k.cu
  grep -q "no CUDA compiler: 'nvcc' is not on PATH (choose one with --nvcc)" err \
    || fail "not on PATH: $(cat err)"
  build --cc /nonexistent/cc c a.c
  grep -q "NOT_FOUND: .*no C compiler: '/nonexistent/cc'" err || fail "no cc: $(cat err)"
  ;;
cxx)
  # C++ with kcall's C++ layer, and C and C++ in one plugin.
  build clip "$repo/examples/ops_cpp/clip_plugin.cpp"
  [ $rc = 0 ] || fail "status $rc: $(cat err)"
  got=$(call "$(cat out)" op.cpp.Clip f32[4]:-1,0.5,2,7 lo=0 hi=1)
  [ "$got" = "f32[4]:0,0.5,1,1" ] || fail "op.cpp.Clip gave '$got'"
  cat >twice.cc <<'EOC'
#include <string>
extern "C" long twice(long x);
extern "C" long twice(long x) { return std::stol(std::to_string(x)) * 2; }
EOC
  write_plugin m.c mixed.answer "twice(21)"
  sed -i 's|^#include <kcall/abi.h>|#include <kcall/abi.h>\nlong twice(long x);|' m.c
  build mixed m.c twice.cc
  [ $rc = 0 ] || fail "mixed: status $rc: $(cat err)"
  got=$(call "$(cat out)" mixed.answer)
  [ "$got" = 42 ] || fail "mixed.answer gave '$got'"
  ;;
cuda)
  command -v nvcc >/dev/null || { echo "no nvcc on PATH"; exit 77; }
  cat >k.cu <<'EOC'
#include <kcall/abi.h>
__global__ void twice(float* x) { x[threadIdx.x] *= 2; }
EOC
  write_plugin c.c cuda.answer 3
  build -v cu k.cu c.c
  [ $rc = 0 ] || fail "status $rc: $(cat err)"
  grep -q "^+ .*nvcc -c .*k.cu" err || fail "nvcc did not compile: $(cat err)"
  grep -q "^+ .*nvcc -shared" err || fail "nvcc did not link: $(cat err)"
  [ "$(call "$(cat out)" cuda.answer)" = 3 ] || fail "answers $(call "$(cat out)" cuda.answer)"
  ;;
include_dir)
  # KCALL_INCLUDE_DIR chooses the headers, and is checked.
  KCALL_INCLUDE_DIR=$dir build hello "$hello"
  [ $rc = 1 ] || fail "status $rc"
  grep -q "NOT_FOUND: building plugin 'hello': KCALL_INCLUDE_DIR='.*' holds no kcall/abi.h" err \
    || fail "message: $(cat err)"
  mkdir -p inc && cp -r "$repo/include/kcall" inc/
  KCALL_INCLUDE_DIR=$dir/inc build -v hello "$hello"
  [ $rc = 0 ] || fail "status $rc: $(cat err)"
  grep -q -- "-I$dir/inc " err || fail "not used: $(cat err)"
  # Other headers are another build.
  first=$(cat out)
  echo '/* changed */' >>inc/kcall/abi.h
  KCALL_INCLUDE_DIR=$dir/inc build hello "$hello"
  [ "$(cat out)" != "$first" ] || fail "a header change kept $first"
  ;;
cache_dir)
  # The default cache: KCALL_CACHE_DIR, XDG_CACHE_HOME/kcall, ~/.cache/kcall.
  KCALL_CACHE_DIR=$dir/k "$kcall" build hello "$hello" >out || fail "KCALL_CACHE_DIR"
  case $(cat out) in "$dir"/k/libhello-*.so) ;; *) fail "KCALL_CACHE_DIR: $(cat out)" ;; esac
  env -u KCALL_CACHE_DIR XDG_CACHE_HOME=$dir/x "$kcall" build hello "$hello" >out || fail "XDG"
  case $(cat out) in "$dir"/x/kcall/libhello-*.so) ;; *) fail "XDG_CACHE_HOME: $(cat out)" ;; esac
  env -u KCALL_CACHE_DIR -u XDG_CACHE_HOME HOME=$dir/h "$kcall" build hello "$hello" >out || fail "HOME"
  case $(cat out) in "$dir"/h/.cache/kcall/libhello-*.so) ;; *) fail "HOME: $(cat out)" ;; esac
  # A file where the directory should be.
  touch file
  "$kcall" build --cache-dir "$dir/file" hello "$hello" >out 2>err && fail "a file as cache"
  grep -q "INVALID_ARGUMENT: building plugin 'hello': the cache directory: '.*file' is a file, expected a directory" err \
    || fail "file as cache: $(cat err)"
  ;;
*)
  fail "no such case"
  ;;
esac
exit 0
