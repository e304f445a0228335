"""The package as pip installs it: the C files it carries, plugins and hosts
built against it (with kcall.config's flags and with CMake's find_package),
the bundled kcall tool, and `pip install .` from scratch.
"""

import importlib.metadata
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import time

import pytest

import kcall
from kcall import config

REPO = pathlib.Path(__file__).resolve().parents[2]
PKG = pathlib.Path(kcall.__file__).resolve().parent
CC = os.environ.get("CC") or "cc"


def run(*args, check=True, **kwargs):
    """Runs a command; on an unexpected status, fails showing its output."""
    result = subprocess.run([str(a) for a in args], capture_output=True,
                            text=True, **kwargs)
    if check and result.returncode != 0:
        pytest.fail("%s: exit %d\nstdout:\n%s\nstderr:\n%s" % (
            shlex.join(str(a) for a in args), result.returncode,
            result.stdout, result.stderr))
    return result


def kcall_config(*flags):
    return run(sys.executable, "-m", "kcall.config", *flags).stdout


def env_without_loader_path():
    """The environment less LD_LIBRARY_PATH: what is found must be found
    through rpaths, as on a user's machine."""
    env = dict(os.environ)
    env.pop("LD_LIBRARY_PATH", None)
    return env


# A plugin with one packed function, NAME.add, in the style of
# examples/hello; each test gives it its own NAME, since a name can be
# registered once per process.
PLUGIN_SOURCE = r"""
#include <kcall/abi.h>

static kc_status* add(void* self, const kc_any* args, int32_t nargs,
                      kc_any* ret) {
  const kc_host_api* host = self;
  int64_t a, b;
  kc_status* st = kc_host_args_check_count(host, "@NAME@.add", nargs, 2, 2);
  if (!st) st = kc_host_args_get_int(host, "@NAME@.add", args, nargs, 0, &a);
  if (!st) st = kc_host_args_get_int(host, "@NAME@.add", args, nargs, 1, &b);
  if (st) return st;
  *ret = kc_any_int(a + b);
  return NULL;
}

static kc_status* init(const kc_host_api* host) {
  static const kc_func_entry fns[] = {{"@NAME@.add", add}};
  return kc_host_register_functions(host, fns, 1, (void*)host);
}

static const kc_plugin_info info = {
    .struct_size = sizeof(kc_plugin_info),
    .api_major = KC_API_VERSION_MAJOR,
    .api_minor = KC_API_VERSION_MINOR,
    .name = "@NAME@",
    .init = init,
};

KC_PLUGIN_ENTRY(host) { (void)host; return &info; }
"""


def compile_plugin(source, out, cflags):
    run(CC, "-std=c11", "-shared", "-fPIC", "-fvisibility=hidden", "-Wall",
        "-Wextra", "-Werror", *shlex.split(cflags), source, "-o", out)


def registrations(plugin):
    return [tuple(r) for r in plugin.registrations]


# ---- what the wheel holds ---------------------------------------------------

def test_tests_import_the_installed_package():
    # Against python/kcall the C files below would not be there.
    assert PKG != REPO / "python" / "kcall"
    assert (PKG / "config.py").is_file()


def test_package_holds_the_c_install():
    assert list(PKG.glob("_core*.so")), "no extension in %s" % PKG
    for rel in ["include/kcall/abi.h", "include/kcall/abi_helpers.h",
                "include/kcall/kcall.h",
                "lib/libkcall.so.0",
                "lib/cmake/kcall/kcallConfig.cmake",
                "lib/cmake/kcall/kcallConfigVersion.cmake",
                "lib/cmake/kcall/kcallTargets.cmake",
                "lib/pkgconfig/kcall.pc"]:
        assert (PKG / rel).is_file(), rel
    assert os.access(PKG / "bin" / "kcall", os.X_OK)


def test_package_holds_libkcall_once():
    # A wheel is a zip, which stores a symbolic link as a copy: the package
    # keeps one file, by the soname the binaries record, and no static
    # library (cmake/kcall_wheel.cmake).
    libs = sorted(p.name for p in (PKG / "lib").glob("libkcall.*"))
    assert libs == ["libkcall.so.0"], libs
    assert not (PKG / "lib" / "libkcall.so.0").is_symlink()
    assert not list((PKG / "lib" / "cmake" / "kcall").glob("kcallStaticTargets*"))
    pc = (PKG / "lib" / "pkgconfig" / "kcall.pc").read_text()
    assert "-l:libkcall.so.0" in pc, pc
    for exported in (PKG / "lib" / "cmake" / "kcall").glob("kcallTargets-*.cmake"):
        text = exported.read_text()
        assert "/lib/libkcall.so.0\"" in text and "libkcall.so.0." not in text, text
    assert "-l:libkcall.so.0" in kcall_config("--libs")


@pytest.mark.skipif(not shutil.which("readelf"), reason="needs readelf")
def test_rpaths_point_inside_the_package():
    core = next(PKG.glob("_core*.so"))
    assert "[$ORIGIN/lib]" in run("readelf", "-d", core).stdout
    assert "[$ORIGIN/../lib]" in run("readelf", "-d", PKG / "bin/kcall").stdout


def test_extension_imports_without_ld_library_path(tmp_path):
    run(sys.executable, "-c", "import kcall._core", cwd=tmp_path,
        env=env_without_loader_path())


def test_numpy_is_a_dependency():
    # The quickstart imports NumPy; `pip install kcall` must bring it.
    requires = importlib.metadata.requires("kcall") or []
    plain = [r for r in requires if "extra ==" not in r]
    assert [r.split(";")[0].strip() for r in plain] == ["numpy"], requires


def build_id(path):
    """The GNU build ID of an ELF file: the same for the same link, and
    kept by strip."""
    found = re.search(r"Build ID: ([0-9a-f]+)", run("readelf", "-n", path).stdout)
    assert found, "%s has no build ID" % path
    return found.group(1)


@pytest.mark.skipif(not shutil.which("readelf"), reason="needs readelf")
def test_the_package_carries_the_library_the_c_build_made(build_dir):
    # `make pytest` configures the package in $(BUILD)/pip-build with
    # KCALL_PREBUILT_DIR=$(BUILD): the library is compiled once, and what
    # these tests load is what the C tests ran.
    cache = build_dir / "pip-build" / "CMakeCache.txt"
    if not cache.is_file():
        pytest.skip("%s holds no package build: this package was not "
                    "installed by `make pytest` from %s" % (cache.parent, build_dir))
    prebuilt = re.search(r"^KCALL_PREBUILT_DIR:PATH=(.*)$", cache.read_text(),
                         re.MULTILINE)
    assert prebuilt and prebuilt.group(1), (
        "%s: the package was built without KCALL_PREBUILT_DIR, compiling "
        "the library a second time" % cache)
    assert pathlib.Path(prebuilt.group(1)).resolve() == build_dir
    pairs = [(PKG / "lib" / "libkcall.so.0", build_dir / "src" / "libkcall.so"),
             (PKG / "bin" / "kcall", build_dir / "tools" / "kcall" / "kcall")]
    cuda = build_dir / "src" / "libkcall_cuda.so"
    if cuda.exists():
        pairs.append((PKG / "lib" / "libkcall_cuda.so", cuda))
    for installed, built in pairs:
        assert build_id(installed) == build_id(built), (installed, built)


def test_prebuilt_dir_must_be_a_kcall_build_of_this_tree(tmp_path):
    cmake = shutil.which("cmake")
    if not cmake:
        pytest.skip("needs cmake")

    def configure(prebuilt):
        return run(cmake, "-S", REPO, "-B", tmp_path / "b", "-DKCALL_CUDA=OFF",
                   "-DKCALL_PREBUILT_DIR=%s" % prebuilt, check=False)

    empty = tmp_path / "empty"
    empty.mkdir()
    done = configure(empty)
    assert done.returncode != 0
    assert ("KCALL_PREBUILT_DIR='%s': expected a configured kcall build "
            "directory (holding kcallPrebuilt.cmake), found none there" % empty
            in " ".join(done.stderr.split()))
    other = tmp_path / "other"
    other.mkdir()
    (other / "kcallPrebuilt.cmake").write_text(
        'set(KCALL_PREBUILT_SOURCE_DIR "%s")\n' % other)
    done = configure(other)
    assert done.returncode != 0
    assert ("KCALL_PREBUILT_DIR='%s': expected a build of this source tree "
            "(%s), found a build of %s" % (other, REPO.resolve(), other.resolve())
            in " ".join(done.stderr.split()))


# ---- python -m kcall.config -------------------------------------------------

def test_config_paths_name_the_installed_files():
    assert (pathlib.Path(kcall_config("--includedir").strip())
            / "kcall" / "abi.h").is_file()
    assert (pathlib.Path(kcall_config("--libdir").strip())
            / "libkcall.so.0").is_file()
    assert (pathlib.Path(kcall_config("--cmake-dir").strip())
            / "kcallConfig.cmake").is_file()
    assert (pathlib.Path(kcall_config("--pkgconfig-dir").strip())
            / "kcall.pc").is_file()
    assert pathlib.Path(kcall_config("--prefix").strip()) == PKG


def test_config_flags_in_the_order_given_on_one_line():
    inc, lib = PKG / "include", PKG / "lib"
    assert kcall_config("--cflags") == "-I%s\n" % inc
    assert kcall_config("--libs") == "-L%s -l:libkcall.so.0 -Wl,-rpath,%s\n" % (lib, lib)
    assert kcall_config("--libdir", "--cflags", "--prefix") == \
        "%s -I%s %s\n" % (lib, inc, PKG)


def test_config_functions_agree_with_the_command():
    assert config.get_include() == kcall_config("--includedir").strip()
    assert config.get_lib_dir() == kcall_config("--libdir").strip()
    assert config.get_cmake_dir() == kcall_config("--cmake-dir").strip()
    assert config.get_prefix() == str(PKG)


def test_config_help():
    out = kcall_config("--help")
    assert out.startswith("usage: python -m kcall.config")
    assert "--cmake-dir" in out


@pytest.mark.parametrize("args,message", [
    (["--frob"], "unrecognized arguments: --frob"),
    (["--cflags", "extra"], "unrecognized arguments: extra"),
    ([], "no flag given"),
])
def test_config_refuses_bad_flags(args, message):
    result = run(sys.executable, "-m", "kcall.config", *args, check=False)
    assert result.returncode == 2
    assert result.stdout == ""
    assert message in result.stderr
    assert "usage:" in result.stderr


# ---- plugins and hosts built against the installed package ------------------

def test_plugin_built_with_cflags_loads_and_calls(tmp_path):
    src = tmp_path / "pkg_cflags.c"
    src.write_text(PLUGIN_SOURCE.replace("@NAME@", "pkg_cflags"))
    lib = tmp_path / "libpkg_cflags.so"
    compile_plugin(src, lib, kcall_config("--cflags"))

    plugin = kcall.load_plugin(str(lib))
    assert plugin.name == "pkg_cflags"
    assert ("function", "pkg_cflags.add") in registrations(plugin)
    assert kcall.get_func("pkg_cflags.add")(40, 2) == 42


def test_example_plugin_built_with_cflags_runs_in_the_tool(tmp_path):
    # Run by the bundled tool, in its own process: examples/hello's names
    # are taken in this one by tests loading the build's hello plugin.
    lib = tmp_path / "libhello.so"
    compile_plugin(REPO / "examples/hello/hello_plugin.c", lib,
                   kcall_config("--cflags"))
    result = run(sys.executable, "-m", "kcall", "call", "--plugin", lib,
                 "hello.concat", "pip", "-", "built")
    assert result.stdout == "pip-built\n"


def test_plugin_built_with_pkg_config(tmp_path):
    if not shutil.which("pkg-config"):
        pytest.skip("needs pkg-config")
    env = dict(os.environ, PKG_CONFIG_PATH=kcall_config("--pkgconfig-dir").strip())
    cflags = run("pkg-config", "--cflags", "kcall", env=env).stdout
    # pkg-config may print the path normalised; compare what it names.
    assert [pathlib.Path(f[2:]).resolve() for f in cflags.split()] == \
        [(PKG / "include").resolve()]
    assert run("pkg-config", "--modversion", "kcall", env=env).stdout.strip() \
        == importlib.metadata.version("kcall")


def test_host_built_with_pkg_config_links_the_one_libkcall(greet_build, tmp_path):
    # The wheel's kcall.pc names libkcall by its soname (-l:libkcall.so.0).
    if not shutil.which("pkg-config"):
        pytest.skip("needs pkg-config")
    env = dict(os.environ, PKG_CONFIG_PATH=kcall_config("--pkgconfig-dir").strip())
    flags = run("pkg-config", "--cflags", "--libs", "kcall", env=env).stdout
    host = tmp_path / "greet_host_pc"
    lib = kcall_config("--libdir").strip()
    run(CC, "-std=c11", REPO / "examples/external/host.c", "-o", host,
        *shlex.split(flags), "-Wl,-rpath," + lib)
    result = run(host, greet_build / "libgreet.so", "pc",
                 env=env_without_loader_path())
    assert result.stdout.startswith("Hello, pc!")


# examples/external/double_plugin.c: the op Double, written with
# <kcall/plugin_api.h> (kc_shape_fn_unchanged and the kernel builder are
# the calls a plugin built in host mode cannot resolve in Python). Each
# route gives the flags alone, no define; Python loads libkcall privately,
# so a plugin that called libkcall directly would fail here.
DOUBLE_SOURCE = REPO / "examples/external/double_plugin.c"


def check_double_plugin(lib, op_name):
    import numpy as np
    plugin = kcall.load_plugin(str(lib))
    assert ("op", op_name) in registrations(plugin)
    x = np.array([1, 2, 3], dtype=np.float32)
    y = np.asarray(getattr(kcall.ops, op_name)(x))
    assert y.tolist() == [2, 4, 6]


def compile_double(tmp_path, op_name, cflags):
    # One op name per route: a name is registered once per process.
    src = tmp_path / ("%s.c" % op_name)
    src.write_text(DOUBLE_SOURCE.read_text().replace('"Double"', '"%s"' % op_name)
                   .replace('.name = "double"', '.name = "%s"' % op_name))
    lib = tmp_path / ("lib%s.so" % op_name)
    compile_plugin(src, lib, cflags)
    return lib


def test_plugin_api_plugin_built_with_cflags(tmp_path):
    lib = compile_double(tmp_path, "DoubleCflags", kcall_config("--cflags"))
    check_double_plugin(lib, "DoubleCflags")


def test_plugin_api_plugin_built_with_pkg_config(tmp_path):
    # The README's line: cc ... $(pkg-config --cflags kcall) mylib.c.
    if not shutil.which("pkg-config"):
        pytest.skip("needs pkg-config")
    env = dict(os.environ, PKG_CONFIG_PATH=kcall_config("--pkgconfig-dir").strip())
    cflags = run("pkg-config", "--cflags", "kcall", env=env).stdout
    lib = compile_double(tmp_path, "DoublePkgConfig", cflags)
    check_double_plugin(lib, "DoublePkgConfig")


def test_plugin_compiled_in_host_mode_is_refused_naming_what_to_do(fixture_dir):
    # Its kc_* calls are libkcall's own functions, unlinked: dlopen fails
    # in Python, and the loader says why and how to build it.
    with pytest.raises(kcall.Error) as info:
        kcall.load_plugin(str(fixture_dir / "kt_plugin_host_mode.so"))
    message = str(info.value)
    assert "it calls libkcall's kc_shape_fn_unchanged" in message
    assert "directly without linking libkcall" in message
    assert "build it in plugin mode, including only <kcall/abi.h> and " \
           "<kcall/plugin_api.h>" in message
    assert "older kcall headers need -DKC_BUILDING_PLUGIN" in message


@pytest.fixture(scope="module")
def greet_build(tmp_path_factory):
    """examples/external built with find_package(kcall) and kcall_DIR."""
    work = tmp_path_factory.mktemp("external")
    run("cmake", "-S", REPO / "examples/external", "-B", work,
        "-Dkcall_DIR=" + kcall_config("--cmake-dir").strip(),
        "-DCMAKE_C_COMPILER=" + CC)
    run("cmake", "--build", work)
    return work


def test_cmake_plugin_loads_and_calls(greet_build):
    plugin = kcall.load_plugin(str(greet_build / "libgreet.so"))
    assert plugin.name == "greet"
    assert registrations(plugin) == [("function", "greet.hello")]
    assert kcall.get_func("greet.hello")("pip") == "Hello, pip!"


def test_cmake_kcall_add_plugin_builds_a_plugin_api_plugin(greet_build):
    # examples/external builds double_plugin.c with the installed
    # kcall_add_plugin.
    check_double_plugin(greet_build / "libdouble.so", "Double")


def test_cmake_finds_kcall_from_the_prefix_path(tmp_path):
    # The other way to point CMake at it: CMAKE_PREFIX_PATH=<package dir>.
    run("cmake", "-S", REPO / "examples/external", "-B", tmp_path,
        "-DCMAKE_PREFIX_PATH=" + kcall_config("--prefix").strip(),
        "-DCMAKE_C_COMPILER=" + CC)
    cache = (tmp_path / "CMakeCache.txt").read_text()
    assert "kcall_DIR:PATH=%s\n" % (PKG / "lib/cmake/kcall") in cache
    run("cmake", "--build", tmp_path)
    result = run(sys.executable, "-m", "kcall", "call", "--plugin",
                 tmp_path / "libgreet.so", "greet.hello", "prefix")
    assert result.stdout == "Hello, prefix!\n"


def test_host_built_with_libs_runs_without_ld_library_path(greet_build, tmp_path):
    # --libs carries an rpath to the package's lib/, so nothing else is set.
    host = tmp_path / "greet_host"
    flags = kcall_config("--cflags", "--libs")
    run(CC, "-std=c11", REPO / "examples/external/host.c", "-o", host,
        *shlex.split(flags))
    result = run(host, greet_build / "libgreet.so", "host",
                 env=env_without_loader_path())
    assert result.stdout == "Hello, host! (kcall %s)\n" % (
        importlib.metadata.version("kcall"))


# ---- the kcall tool ---------------------------------------------------------

def test_python_m_kcall_runs_the_bundled_tool():
    result = run(sys.executable, "-m", "kcall", "version")
    assert result.stdout.splitlines()[0] == "kcall 0.1.0"
    assert importlib.metadata.version("kcall") == "0.1.0"


def test_console_script_runs_the_bundled_tool():
    script = pathlib.Path(sys.executable).parent / "kcall"
    assert script.is_file(), "pip installed no kcall script beside python"
    assert run(script, "version").stdout.splitlines()[0] == "kcall 0.1.0"


def test_tool_status_and_messages_pass_through():
    result = run(sys.executable, "-m", "kcall", "frobnicate", check=False)
    assert result.returncode == 2
    assert "unknown command 'frobnicate'" in result.stderr


# ---- pip install from scratch -----------------------------------------------

@pytest.mark.pip_install
def test_pip_install_into_a_fresh_venv(tmp_path):
    # With build isolation, as a user's `pip install .` runs: pip fetches
    # the build backend from PyPI and builds in a scratch directory, the
    # whole library again (this is the one test that does). CMAKE_ARGS and
    # CC, when set, apply here too. Without the CUDA backend, whose
    # kernels are most of the time such a build takes: the package of the
    # other tests carries it, built and installed by the same rules.
    venv = tmp_path / "venv"
    start = time.monotonic()
    run(sys.executable, "-m", "venv", venv)
    python = venv / "bin" / "python"
    env = dict(os.environ)
    env["CMAKE_ARGS"] = (env.get("CMAKE_ARGS", "") + " -DKCALL_CUDA=OFF").strip()
    run(python, "-m", "pip", "install", "--disable-pip-version-check",
        "--quiet", REPO, timeout=600, env=env)
    print("venv and pip install: %.1f s" % (time.monotonic() - start))
    # From tmp_path: the source tree must not be on the path.
    probe = ("import kcall, kcall._core, kcall.config as c, os; "
             "print(os.path.isfile(os.path.join(c.get_include(), 'kcall', 'abi.h')))")
    result = run(python, "-c", probe, cwd=tmp_path, env=env_without_loader_path())
    assert result.stdout == "True\n"
    assert run(venv / "bin" / "kcall", "version").stdout.startswith("kcall 0.1.0\n")


# ---- the wheel --------------------------------------------------------------

@pytest.fixture(scope="module")
def wheel(build_dir, tmp_path_factory):
    """A wheel of this tree, made by `pip wheel` in the CMake build directory
    that `make pytest` installed .venv's kcall from ($KCALL_BUILD_DIR/
    pip-build), so that only the packaging runs: seconds, not a build."""
    pip_build = build_dir / "pip-build"
    if not (pip_build / "CMakeCache.txt").is_file():
        pytest.skip("no %s: `make pytest` makes it when it installs the "
                    "package" % pip_build)
    try:
        import scikit_build_core  # noqa: F401 (the build backend)
    except ImportError:
        pytest.skip("needs scikit-build-core in this environment (`make "
                    "pytest` installs it into .venv)")
    out = tmp_path_factory.mktemp("wheel")
    start = time.monotonic()
    run(sys.executable, "-m", "pip", "wheel", "--quiet",
        "--disable-pip-version-check", "--no-build-isolation", "--no-deps",
        "--config-settings=build-dir=%s" % pip_build, "--wheel-dir", out,
        REPO, timeout=600)
    print("pip wheel: %.1f s" % (time.monotonic() - start))
    wheels = sorted(out.glob("kcall-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def test_wheel_carries_the_c_install(wheel, build_dir):
    import zipfile
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
        requires = [line for line in z.read(metadata).decode().splitlines()
                    if line.startswith("Requires-Dist:")]
    for rel in ["kcall/__init__.py", "kcall/config.py",
                "kcall/bin/kcall", "kcall/lib/libkcall.so.0",
                "kcall/include/kcall/abi.h", "kcall/include/kcall/plugin_api.h",
                "kcall/lib/cmake/kcall/kcallConfig.cmake",
                "kcall/lib/cmake/kcall/kcallPlugin.cmake",
                "kcall/lib/pkgconfig/kcall.pc"]:
        assert rel in names, rel
    assert any(n.startswith("kcall/_core") and n.endswith(".so") for n in names)
    # One libkcall, by its soname, and no static library (a zip would hold
    # each symbolic link as a copy).
    assert sorted(n for n in names if n.startswith("kcall/lib/libkcall.")) == \
        ["kcall/lib/libkcall.so.0"]
    assert "Requires-Dist: numpy" in requires, requires
    # The CUDA backend ships when the build made it, and only then: the
    # package's own build, or the C build it took the library from
    # (KCALL_PREBUILT_DIR, as `make pytest` configures it).
    pip_build = build_dir / "pip-build"
    prebuilt = re.search(r"^KCALL_PREBUILT_DIR:PATH=(.+)$",
                         (pip_build / "CMakeCache.txt").read_text(), re.MULTILINE)
    built_cuda = any(pip_build.rglob("libkcall_cuda.so")) or bool(
        prebuilt and (pathlib.Path(prebuilt.group(1)) / "src" /
                      "libkcall_cuda.so").exists())
    assert ("kcall/lib/libkcall_cuda.so" in names) == built_cuda


# What manylinux lets a wheel's binaries depend on outside the wheel (of
# what kcall could need): the C library's parts. Anything else, libpython
# above all, makes `auditwheel show` answer plain linux_x86_64.
MANYLINUX_SYSTEM_LIBS = {"libc.so.6", "libm.so.6", "libpthread.so.0",
                         "libdl.so.2", "librt.so.1", "ld-linux-x86-64.so.2",
                         "ld-linux-aarch64.so.1", "libgcc_s.so.1",
                         "libstdc++.so.6"}
# And what a bridge needs from the framework that loads it: libkcall_tf
# is loaded by TensorFlow, whose framework library it records.
FRAMEWORK_LIBS = {"libkcall_tf.so": {"libtensorflow_framework.so.2"}}


@pytest.mark.skipif(not shutil.which("readelf"), reason="needs readelf")
def test_wheel_binaries_need_only_the_system_and_each_other(wheel, tmp_path):
    import zipfile
    with zipfile.ZipFile(wheel) as z:
        z.extractall(tmp_path)
    binaries = [p for p in tmp_path.rglob("*")
                if p.is_file() and p.read_bytes()[:4] == b"\x7fELF"]
    assert len(binaries) >= 5, binaries  # _core, kcall, libkcall, plugins
    own = {p.name for p in binaries}
    for path in binaries:
        dynamic = run("readelf", "-d", path).stdout
        needed = set(re.findall(r"\(NEEDED\).*\[(.*)\]", dynamic))
        outside = needed - own - MANYLINUX_SYSTEM_LIBS - FRAMEWORK_LIBS.get(path.name, set())
        assert not outside, "%s needs %s" % (path.relative_to(tmp_path), outside)
        # Paths inside the package only: $ORIGIN, never the build machine's.
        for paths in re.findall(r"\((?:RPATH|RUNPATH)\).*\[(.*)\]", dynamic):
            for entry in paths.split(":"):
                assert entry.startswith("$ORIGIN"), (path, entry)


def test_wheel_is_manylinux_for_auditwheel(wheel):
    # auditwheel is not in the test environment; where it is installed
    # (pip install auditwheel), it is asked as well.
    auditwheel = shutil.which("auditwheel")
    if not auditwheel:
        pytest.skip("auditwheel is not on PATH (pip install auditwheel); "
                    "test_wheel_binaries_need_only_the_system_and_each_other "
                    "checks what it would")
    out = run(auditwheel, "show", wheel).stdout
    assert re.search(r'platform tag: "manylinux_2_[0-9]+_', out), out


def test_wheel_runs_the_quickstart_without_a_compiler(wheel, tmp_path):
    # A fresh venv, the wheel installed offline, NumPy taken from this
    # environment: then the quickstart (README.md) with a PATH that holds
    # the venv's bin/ only, so no compiler or other kcall can be found.
    import numpy
    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", "--without-pip", venv)
    python = venv / "bin" / "python"
    run(sys.executable, "-m", "pip", "--python", python, "install", "--quiet",
        "--disable-pip-version-check", "--no-index", "--no-deps", wheel)
    site = pathlib.Path(run(python, "-c", "import sysconfig; "
                            "print(sysconfig.get_paths()['purelib'])").stdout.strip())
    numpy_dir = pathlib.Path(numpy.__file__).resolve().parent
    for sibling in [numpy_dir, numpy_dir.parent / "numpy.libs"]:
        if sibling.exists():
            (site / sibling.name).symlink_to(sibling)

    # The plugin, built beforehand (the wheel needs no compiler; the
    # plugin does) against the wheel's headers.
    work = tmp_path / "quickstart"
    work.mkdir()
    for name in ["quickstart.py", "axpy.hlo"]:
        shutil.copy(REPO / "examples/quickstart" / name, work / name)
    cflags = run(python, "-m", "kcall.config", "--cflags").stdout
    assert str(site / "kcall" / "include") in cflags
    compile_plugin(REPO / "examples/quickstart/mylib.c", work / "libmylib.so",
                   cflags)

    env = {"PATH": str(venv / "bin"), "HOME": str(tmp_path),
           "LANG": os.environ.get("LANG", "C.UTF-8")}
    for tool in ["cc", "gcc", "clang", os.path.basename(CC)]:
        assert shutil.which(tool, path=env["PATH"]) is None, tool
    result = run(python, "quickstart.py", cwd=work, env=env)
    assert result.stdout == "[2.5 4.5 6.5 8.5]\n"
    result = run(venv / "bin" / "kcall", "run", "axpy.hlo", "--plugin",
                 "./libmylib.so", "--input", "x=[1,2,3,4]", "--input",
                 "y=0.5", cwd=work, env=env)
    assert result.stdout == "out0: f32[4]\n[2.5, 4.5, 6.5, 8.5]\n"
    # The package is the venv's, and a CPU run leaves the CUDA backend
    # (when the wheel has one) unloaded: it is opened only when a CUDA
    # device is asked for.
    probe = ("import kcall, numpy as np; kcall.load_plugin('./libmylib.so'); "
             "run = kcall.Program.load('axpy.hlo').compile(); "
             "run(np.ones(4, np.float32), np.ones(4, np.float32)); "
             "print(kcall.__file__); "
             "print('libkcall_cuda' in open('/proc/self/maps').read())")
    out = run(python, "-c", probe, cwd=work, env=env).stdout.splitlines()
    assert out == [str(site / "kcall" / "__init__.py"), "False"]
