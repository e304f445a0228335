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
                "lib/libkcall.so", "lib/libkcall.a",
                "lib/cmake/kcall/kcallConfig.cmake",
                "lib/cmake/kcall/kcallConfigVersion.cmake",
                "lib/cmake/kcall/kcallTargets.cmake",
                "lib/pkgconfig/kcall.pc"]:
        assert (PKG / rel).is_file(), rel
    assert list(PKG.glob("lib/libkcall.so.*")), "no versioned libkcall.so"
    assert os.access(PKG / "bin" / "kcall", os.X_OK)


@pytest.mark.skipif(not shutil.which("readelf"), reason="needs readelf")
def test_rpaths_point_inside_the_package():
    core = next(PKG.glob("_core*.so"))
    assert "[$ORIGIN/lib]" in run("readelf", "-d", core).stdout
    assert "[$ORIGIN/../lib]" in run("readelf", "-d", PKG / "bin/kcall").stdout


def test_extension_imports_without_ld_library_path(tmp_path):
    run(sys.executable, "-c", "import kcall._core", cwd=tmp_path,
        env=env_without_loader_path())


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
    pairs = [(PKG / "lib" / "libkcall.so", build_dir / "src" / "libkcall.so"),
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
            / "libkcall.so").is_file()
    assert (pathlib.Path(kcall_config("--cmake-dir").strip())
            / "kcallConfig.cmake").is_file()
    assert (pathlib.Path(kcall_config("--pkgconfig-dir").strip())
            / "kcall.pc").is_file()
    assert pathlib.Path(kcall_config("--prefix").strip()) == PKG


def test_config_flags_in_the_order_given_on_one_line():
    inc, lib = PKG / "include", PKG / "lib"
    assert kcall_config("--cflags") == "-I%s\n" % inc
    assert kcall_config("--libs") == "-L%s -lkcall -Wl,-rpath,%s\n" % (lib, lib)
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
