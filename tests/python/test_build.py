"""kcall.build: plugins compiled from files or source text, cached, loaded,
and compiler errors as exceptions carrying the compiler's message."""

import gc
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

import kcall
from conftest import tvm_ffi_build_flags


def plugin_text(prefix, value):
    """A plugin registering `prefix`.answer, which returns `value`, and
    `prefix`.add(a, b)."""
    return textwrap.dedent("""\
        #include <kcall/abi.h>

        static kc_status* answer(void* self, const kc_any* args, int32_t nargs,
                                 kc_any* ret) {
          (void)self; (void)args; (void)nargs;
          *ret = kc_any_int(%(value)s);
          return NULL;
        }

        static kc_status* add(void* self, const kc_any* args, int32_t nargs,
                              kc_any* ret) {
          const kc_host_api* host = (const kc_host_api*)self;
          int64_t a = 0, b = 0;
          kc_status* st = kc_host_args_check_count(host, "%(p)s.add", nargs, 2, 2);
          if (!st) st = kc_host_args_get_int(host, "%(p)s.add", args, nargs, 0, &a);
          if (!st) st = kc_host_args_get_int(host, "%(p)s.add", args, nargs, 1, &b);
          if (!st) *ret = kc_any_int(a + b);
          return st;
        }

        static kc_status* init(const kc_host_api* host) {
          static const kc_func_entry fns[] = {{"%(p)s.answer", answer},
                                              {"%(p)s.add", add}};
          return kc_host_register_functions(host, fns, 2, (void*)host);
        }

        static const kc_plugin_info info = {
            .struct_size = sizeof(kc_plugin_info),
            .api_major = KC_API_VERSION_MAJOR,
            .api_minor = KC_API_VERSION_MINOR,
            .name = "%(p)s",
            .init = init,
        };

        KC_PLUGIN_ENTRY(host) { (void)host; return &info; }
        """) % {"p": prefix, "value": value}


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A cache of the test's own, also as KCALL_CACHE_DIR."""
    path = tmp_path / "cache"
    monkeypatch.setenv("KCALL_CACHE_DIR", str(path))
    return path


def built(cache):
    return sorted(p.name for p in cache.glob("*.so"))


def test_build_from_source_text_and_call(cache):
    plugin = kcall.build("bt_text", source=plugin_text("bt_text", 42))
    assert isinstance(plugin, kcall.Plugin)
    assert plugin.name == "bt_text"
    assert sorted(plugin.functions) == ["bt_text.add", "bt_text.answer"]
    assert os.path.dirname(plugin.path) == str(cache)
    assert kcall.get_func("bt_text.answer")() == 42
    assert kcall.get_func("bt_text.add")(2, 3) == 5
    with pytest.raises(kcall.InvalidArgumentError, match="argument 1"):
        kcall.get_func("bt_text.add")(2, "x")


def test_build_from_files(tmp_path, cache):
    # A plugin of two files: the C source and a header it includes, named
    # so that a change to it is seen.
    (tmp_path / "value.h").write_text("#define VALUE 42\n")
    (tmp_path / "bt_file.c").write_text(
        '#include "value.h"\n' + plugin_text("bt_file", "VALUE"))
    plugin = kcall.build("bt_file", [tmp_path / "bt_file.c",
                                     str(tmp_path / "value.h")])
    assert plugin.name == "bt_file"
    assert kcall.get_func("bt_file.answer")() == 42
    assert kcall.get_func("bt_file.add")(20, 22) == 42
    (tmp_path / "value.h").write_text("#define VALUE 43\n")
    assert kcall.build_path("bt_file", [tmp_path / "bt_file.c",
                                        tmp_path / "value.h"]) != plugin.path
    # One path alone, as a str or a path, is a build too.
    (tmp_path / "bt_one.c").write_text(plugin_text("bt_one", 1))
    assert kcall.build_path("bt_one", str(tmp_path / "bt_one.c")) == \
        kcall.build_path("bt_one", tmp_path / "bt_one.c")


def test_build_c_and_cpp_from_a_dict_of_texts(cache):
    cpp = textwrap.dedent("""\
        #include <string>
        extern "C" long bt_twice(long x);
        extern "C" long bt_twice(long x) {
          return std::stol(std::to_string(x)) * 2;
        }
        """)
    c = "long bt_twice(long x);\n" + plugin_text("bt_mixed", "bt_twice(21)")
    plugin = kcall.build("bt_mixed", {"twice.cpp": cpp, "main.c": c})
    assert plugin.name == "bt_mixed"
    assert kcall.get_func("bt_mixed.answer")() == 42


def test_build_cpp_source_text(cache):
    text = plugin_text("bt_cpp", "static_cast<int64_t>(sizeof(std::string) > 0)")
    text = "#include <string>\n" + text
    kcall.build("bt_cpp", source=text, language="c++")
    assert kcall.get_func("bt_cpp.answer")() == 1


def test_a_second_build_is_cached(cache):
    text = plugin_text("bt_cached", 1)
    first = kcall.build_path("bt_cached", source=text)
    stamp = os.stat(first)
    again = kcall.build("bt_cached", source=text)
    assert again.path == first
    assert os.stat(first).st_mtime_ns == stamp.st_mtime_ns
    assert os.stat(first).st_ino == stamp.st_ino
    assert built(cache) == [os.path.basename(first)]


def test_a_changed_source_or_flag_builds_again(cache):
    first = kcall.build_path("bt_changed", source=plugin_text("bt_changed", 1))
    second = kcall.build_path("bt_changed", source=plugin_text("bt_changed", 2))
    third = kcall.build_path("bt_changed", source=plugin_text("bt_changed", 2),
                             flags=["-DSOMETHING=1"])
    assert len({first, second, third}) == 3
    assert len(built(cache)) == 3
    # The newest answers 2; the first file is still there, unchanged.
    kcall.load_plugin(third)
    assert kcall.get_func("bt_changed.answer")() == 2


def test_flags_reach_the_compiler(cache):
    text = plugin_text("bt_flags", "VALUE")
    kcall.build("bt_flags", source=text, flags=["-DVALUE=7", "-O0"])
    assert kcall.get_func("bt_flags.answer")() == 7
    with pytest.raises(kcall.InvalidArgumentError, match="expected a list"):
        kcall.build_path("bt_flags", source=text, flags="-DVALUE=7")


def test_compiler_errors_carry_the_compilers_message(cache):
    text = "int f(void) { return undeclared_thing; }\n"
    with pytest.raises(kcall.InvalidArgumentError) as info:
        kcall.build("bt_bad", source=text)
    e = info.value
    assert isinstance(e, ValueError)
    assert e.code == "INVALID_ARGUMENT"
    first, _, rest = str(e).partition("\n")
    # Source text is named as it was given (its file's name).
    assert first.startswith("building plugin 'bt_bad': compiling 'bt_bad.c' "
                            "failed: C compiler '")
    assert first.endswith("' exited with status 1:")
    assert "bt_bad.c:1:" in rest and "undeclared_thing" in rest
    assert built(cache) == []


def test_relative_paths_are_the_callers(cache, tmp_path, monkeypatch):
    (tmp_path / "bt_rel.c").write_text(plugin_text("bt_rel", 3))
    monkeypatch.chdir(tmp_path)
    plugin = kcall.build("bt_rel", ["bt_rel.c"], cache_dir="relcache")
    assert os.path.dirname(plugin.path) == str(tmp_path / "relcache")
    assert kcall.get_func("bt_rel.answer")() == 3


def test_a_missing_compiler_or_source_is_not_found(cache, tmp_path):
    with pytest.raises(kcall.NotFoundError,
                       match="no CUDA compiler: '/nonexistent/nvcc'"):
        kcall.build("bt_cu", source="__global__ void k(void) {}\n",
                    language="cuda", nvcc="/nonexistent/nvcc")
    with pytest.raises(kcall.NotFoundError, match="nope.c"):
        kcall.build("bt_missing", [tmp_path / "nope.c"])


def test_bad_arguments(cache):
    with pytest.raises(kcall.InvalidArgumentError, match="no sources"):
        kcall.build("bt_none")
    with pytest.raises(kcall.InvalidArgumentError, match="language 'fortran'"):
        kcall.build("bt_lang", source="", language="fortran")
    with pytest.raises(kcall.InvalidArgumentError,
                       match="the key 'sub/a.c' is not a file name"):
        kcall.build("bt_key", {"sub/a.c": ""})
    # What the tool refuses as a usage error arrives the same way.
    with pytest.raises(kcall.InvalidArgumentError,
                       match="plugin name 'a b': expected 1 to 64 letters"):
        kcall.build("a b", source="int x;\n")
    with pytest.raises(kcall.InvalidArgumentError, match="source '.*a.f90'"):
        kcall.build("bt_f90", {"a.f90": ""})


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="no nvcc on PATH")
def test_build_cuda(cache):
    text = plugin_text("bt_cuda", 5).replace(
        "#include <kcall/abi.h>",
        "#include <kcall/abi.h>\n__global__ void twice(float* x) "
        "{ x[threadIdx.x] *= 2; }")
    kcall.build("bt_cuda", source=text, language="cuda")
    assert kcall.get_func("bt_cuda.answer")() == 5


def test_concurrent_builds_from_processes(cache, tmp_path):
    """Four interpreters build and load the same new plugin at once."""
    (tmp_path / "bt_conc.c").write_text(plugin_text("bt_conc", 9))
    script = ("import kcall, sys; p = kcall.build('bt_conc', [sys.argv[1]]); "
              "print(p.path, kcall.get_func('bt_conc.answer')())")
    procs = [subprocess.Popen([sys.executable, "-c", script,
                               str(tmp_path / "bt_conc.c")],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(4)]
    outs = [p.communicate() for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
    assert len({out for out, _ in outs}) == 1
    assert outs[0][0].split()[1] == "9"
    assert len(built(cache)) == 1


def test_the_packaged_tool_uses_the_packages_headers(cache, tmp_path):
    """bin/kcall in the package finds include/ beside it (no source tree)."""
    from kcall import config
    (tmp_path / "bt_inc.c").write_text(plugin_text("bt_inc", 1))
    done = subprocess.run([sys.executable, "-m", "kcall", "build", "-v",
                           "bt_inc", str(tmp_path / "bt_inc.c")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    include = os.path.realpath(config.get_include())
    assert " -I%s " % include in done.stderr
    assert done.stdout.strip().startswith(str(cache) + "/libbt_inc-")


def test_a_plugin_unloads_when_nothing_holds_it(cache):
    text = plugin_text("bt_unl", 5).replace(
        "    .init = init,\n",
        "    .init = init,\n    .fini = fini,\n").replace(
        "static const kc_plugin_info info",
        "static void fini(const kc_host_api* host) { (void)host; }\n\n"
        "static const kc_plugin_info info")
    plugin = kcall.build("bt_unl", source=text)
    held = kcall.get_func("bt_unl.answer")
    with pytest.raises(kcall.FailedPreconditionError,
                       match="bt_unl.answer' is held by 1 reference"):
        plugin.unload()
    assert held() == 5  # a refused unload changes nothing
    del held
    gc.collect()
    plugin.unload()
    assert kcall.list_funcs("bt_unl.") == []
    with pytest.raises(kcall.FailedPreconditionError, match="not loaded"):
        plugin.unload()
    # Loaded again, it registers again.
    again = kcall.load_plugin(plugin.path)
    assert kcall.get_func("bt_unl.answer")() == 5
    again.unload()


def test_a_plugin_without_fini_is_not_unloaded(cache):
    plugin = kcall.build("bt_nofini", source=plugin_text("bt_nofini", 6))
    with pytest.raises(kcall.FailedPreconditionError, match="has no fini"):
        plugin.unload()
    assert kcall.get_func("bt_nofini.answer")() == 6


def test_kcall_build_names_a_tvm_ffi_module_after_its_name(tmp_path):
    """kcall.build of a tvm-ffi module: its functions are NAME.f, from
    the name given (characters a prefix may not hold made '_'), not from
    the cached file's name, which carries the cache key and so changes
    with every edit; prefix= chooses another."""
    cflags, libs = tvm_ffi_build_flags()  # skips without tvm-ffi
    flags = cflags + libs + ["-std=c++17"]
    for version in (1, 2):  # an edit: another cache key, the same names
        source = (
            "#include <tvm/ffi/function.h>\n"
            "int64_t Twice(int64_t a) { return %d * a; }\n"
            "TVM_FFI_DLL_EXPORT_TYPED_FUNC(twice, Twice);\n" % (2 * version))
        plugin = kcall.build("tvm-built", source=source, language="c++",
                             flags=flags, cache_dir=tmp_path)
        assert plugin.functions == ["tvm_built.twice"]
        assert kcall.get_func("tvm_built.twice")(21) == 42 * version
        plugin.unload()
    plugin = kcall.build("tvm-built", source=source, language="c++",
                         flags=flags, cache_dir=tmp_path, prefix="mine")
    assert plugin.functions == ["mine.twice"]
    plugin.unload()

