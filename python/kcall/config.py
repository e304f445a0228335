"""Where an installed kcall keeps its C files, for building against it.

    cc -shared -fPIC $(python -m kcall.config --cflags) plugin.c -o libp.so
    cc host.c $(python -m kcall.config --cflags --libs) -o host
    cmake -Dkcall_DIR=$(python -m kcall.config --cmake-dir) ...
    KCALL_PYTHON_MODULES=mymod \
        kcall call --plugin $(python -m kcall.config --python-plugin) NAME ...

The wheel installs the CMake project into the package directory itself
(pyproject.toml: wheel.install-dir), so every path here is relative to this
file and stays right wherever the environment is moved.
"""

import argparse
import os
import sys

_PREFIX = os.path.dirname(os.path.abspath(__file__))

__all__ = ["get_prefix", "get_include", "get_lib_dir", "get_cmake_dir",
           "get_pkgconfig_dir", "get_bin_dir", "get_python_plugin"]


def get_prefix():
    """The install prefix: the package directory."""
    return _PREFIX


def get_include():
    """The directory holding kcall/abi.h and the other public headers."""
    return os.path.join(_PREFIX, "include")


def get_lib_dir():
    """The directory holding libkcall (libkcall.so.0 in a wheel)."""
    return os.path.join(_PREFIX, "lib")


def get_cmake_dir():
    """The directory holding kcallConfig.cmake (a value for kcall_DIR)."""
    return os.path.join(_PREFIX, "lib", "cmake", "kcall")


def get_pkgconfig_dir():
    """The directory holding kcall.pc (a value for PKG_CONFIG_PATH)."""
    return os.path.join(_PREFIX, "lib", "pkgconfig")


def get_bin_dir():
    """The directory holding the kcall command-line tool."""
    return os.path.join(_PREFIX, "bin")


def get_python_plugin():
    """The plugin that runs the Python modules named in KCALL_PYTHON_MODULES
    (what they register with kcall.register_func becomes callable from
    `kcall call`, `kcall run` and C). FileNotFoundError when this package
    has none: it is built only for a Python with a shared libpython."""
    path = os.path.join(get_lib_dir(), "libkcall_python.so")
    if not os.path.isfile(path):
        raise FileNotFoundError(
            "this kcall has no Python plugin (%s): the Python it was built "
            "for has no shared libpython" % path)
    return path


def _libs():
    # The rpath lets a host program run without LD_LIBRARY_PATH: nothing
    # else would tell the loader to look inside site-packages. A wheel
    # holds libkcall once, by its soname (libkcall.so.0: a zip has no
    # symbolic links), which -l:NAME links by that name.
    lib = get_lib_dir()
    name = "-lkcall"
    if not os.path.exists(os.path.join(lib, "libkcall.so")):
        sonames = sorted(f for f in os.listdir(lib) if f.startswith("libkcall.so."))
        if sonames:
            name = "-l:" + sonames[0]
    return "-L%s %s -Wl,-rpath,%s" % (lib, name, lib)


# flag -> (help, what it prints), in the order --help lists them.
_FLAGS = {
    "--cflags": ("compiler flags for the headers",
                 lambda: "-I" + get_include()),
    "--libs": ("linker flags for libkcall, with an rpath to it", _libs),
    "--cmake-dir": ("the directory holding kcallConfig.cmake", get_cmake_dir),
    "--pkgconfig-dir": ("the directory holding kcall.pc", get_pkgconfig_dir),
    "--includedir": ("the include directory", get_include),
    "--libdir": ("the library directory", get_lib_dir),
    "--prefix": ("the install prefix (the package directory)", get_prefix),
    "--python-plugin": ("the plugin that runs the Python modules named in "
                        "KCALL_PYTHON_MODULES", get_python_plugin),
}


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m kcall.config",
        description="Print the flags and paths for building against this "
                    "kcall, space-separated on one line, in the order the "
                    "flags are given.")
    for flag, (text, _) in _FLAGS.items():
        # One shared list keeps the order the flags were given in.
        parser.add_argument(flag, dest="wanted", action="append_const",
                            const=flag, help=text)
    args = parser.parse_args(argv)
    if not args.wanted:
        parser.error("no flag given (try --cflags or --cmake-dir)")
    try:
        words = [_FLAGS[flag][1]() for flag in args.wanted]
    except FileNotFoundError as e:
        parser.exit(1, "%s: error: %s\n" % (parser.prog, e))
    print(" ".join(words))
    return 0


if __name__ == "__main__":
    sys.exit(main())
