"""kcall.build: a plugin from its sources, compiled and loaded in one call.

The work is the package's own `kcall build` tool (bin/kcall, see `kcall
help build`): this module writes sources given as text to files, runs the
tool, turns its errors into kcall.Error subclasses and loads the result.
"""

import os
import re
import subprocess
import tempfile

from . import _core

# language -> the ending of a file written from source text.
_ENDINGS = {"c": ".c", "c++": ".cpp", "cuda": ".cu"}


def _error_class(code):
    cls = getattr(_core, "".join(w.capitalize() for w in code.split("_"))
                  + "Error", None)
    return cls if isinstance(cls, type) and issubclass(cls, _core.Error) \
        else _core.UnknownError


def _raise_tool_error(returncode, stderr):
    """The tool's error, as the kcall.Error subclass its code names."""
    text = stderr.rstrip("\n")
    prefix = "kcall: error: "
    if text.startswith(prefix):
        code, _, message = text[len(prefix):].partition(": ")
        cls = _error_class(code)
    else:
        # A usage error (status 2): what Python passed was wrong.
        cls = _core.InvalidArgumentError
        message = text.split("\n\n")[0]
        if message.startswith("kcall: "):
            message = message[len("kcall: "):]
    if not message:
        message = "kcall build exited with status %d" % returncode
    raise cls(message)


def _words(value, what):
    if value is None:
        return []
    if isinstance(value, (str, bytes, os.PathLike)):
        raise _core.InvalidArgumentError(
            "%s: expected a list of flags, got %s %r (write it as [%r] or "
            "split it)" % (what, type(value).__name__, value, value))
    return [os.fspath(v) for v in value]


def _write_texts(texts, directory):
    """Writes {file name: text} into `directory`."""
    for filename, text in texts.items():
        if (not isinstance(filename, str) or not filename
                or os.path.basename(filename) != filename
                or filename in (".", "..")):
            raise _core.InvalidArgumentError(
                "sources: the key %r is not a file name: expected a name "
                "without a directory, such as 'mylib.c'" % (filename,))
        if not isinstance(text, str):
            raise _core.InvalidArgumentError(
                "sources[%r]: expected the source text (str), got %s"
                % (filename, type(text).__name__))
        path = os.path.join(directory, filename)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


def build_path(name, sources=None, *, source=None, language="c", flags=(),
               nvcc_flags=(), cc=None, cxx=None, nvcc=None, cache_dir=None):
    """What :func:`build` does, without loading: the path of the plugin."""
    if language not in _ENDINGS:
        raise _core.InvalidArgumentError(
            "language %r: expected one of %s" % (language, ", ".join(
                repr(k) for k in _ENDINGS)))
    texts = {}
    paths = []
    if isinstance(sources, dict):
        texts.update(sources)
    elif isinstance(sources, (str, os.PathLike)):
        paths.append(os.path.abspath(sources))
    elif sources is not None:
        paths.extend(os.path.abspath(s) for s in sources)
    if source is not None:
        filename = name + _ENDINGS[language]
        if filename in texts:
            raise _core.InvalidArgumentError(
                "source: %r is also a key of sources" % filename)
        texts[filename] = source
    if not paths and not texts:
        raise _core.InvalidArgumentError(
            "kcall.build(%r): no sources: give sources= (paths, or a dict "
            "of file name to text) or source= (text)" % (name,))

    # Imported here: `python -m kcall.config` must not find it imported.
    from . import config
    command = [os.path.join(config.get_bin_dir(), "kcall"), "build"]
    command += ["--flag=" + f for f in _words(flags, "flags")]
    command += ["--nvcc-flags=" + f for f in _words(nvcc_flags, "nvcc_flags")]
    # The tool runs in the directory of the sources given as text, so that
    # messages name them as given; what names a file here is made whole.
    if cache_dir is None:
        cache_dir = os.environ.get("KCALL_CACHE_DIR") or None
    for option, value in (("--cc", cc), ("--cxx", cxx), ("--nvcc", nvcc),
                          ("--cache-dir", cache_dir)):
        if value is not None:
            value = os.fspath(value)
            if option == "--cache-dir" or os.sep in value:
                value = os.path.abspath(value)
            command.append("%s=%s" % (option, value))
    with tempfile.TemporaryDirectory(prefix="kcall-build-") as directory:
        # Only the files' names and bytes are part of the cache key, so a
        # fresh directory each time still finds an earlier build.
        _write_texts(texts, directory)
        command += ["--", name] + paths + list(texts)
        done = subprocess.run(command, stdin=subprocess.DEVNULL, cwd=directory,
                              capture_output=True, text=True)
    if done.returncode != 0:
        _raise_tool_error(done.returncode, done.stderr)
    return done.stdout.strip()


def build(name, sources=None, *, source=None, language="c", flags=(),
          nvcc_flags=(), cc=None, cxx=None, nvcc=None, cache_dir=None,
          prefix=None):
    """Compiles a plugin from its sources, loads it and returns the
    kcall.Plugin (as :func:`kcall.load_plugin` does).

    ``sources`` is a path or a list of paths (``.c``; ``.cc``, ``.cpp`` or
    ``.cxx`` for C++; ``.cu`` for CUDA, with nvcc; headers such as ``.h``
    are hashed, not compiled), or a dict ``{file name: source text}``.
    ``source`` is one source as text, of ``language`` ("c", "c++" or
    "cuda"), written to a file named after the plugin. The sources include
    ``<kcall/abi.h>`` (or ``<kcall/plugin_api.h>``, ``<kcall/kcall.hpp>``)
    and link nothing of kcall.

    ``flags`` (a list) go to the C and C++ compilers and the link,
    ``nvcc_flags`` to nvcc; ``cc``, ``cxx`` and ``nvcc`` choose the
    compilers (default cc, c++, nvcc on PATH); ``cache_dir`` where built
    plugins are kept (default $KCALL_CACHE_DIR, $XDG_CACHE_HOME/kcall or
    ~/.cache/kcall).

    The package's ``kcall build`` tool does the work: the result is cached
    under a SHA-256 of the sources' names and bytes, the flags, the
    compilers and kcall's headers, so a second call with the same input
    compiles nothing, and concurrent calls build once. Errors:
    InvalidArgumentError when a compiler fails, with its message (``e.g.
    "building plugin 'mylib': compiling 'mylib.c' failed: C compiler
    '/usr/bin/cc' exited with status 1:\\nmylib.c:3:5: error: ..."``) or
    for bad arguments; NotFoundError for a missing source or compiler
    (nvcc for a ``.cu``); and those of :func:`kcall.load_plugin`.

    A tvm-ffi module built so (sources exporting ``__tvm_ffi_NAME``
    functions, docs/tvm_ffi.md) registers its functions as
    ``PREFIX.NAME`` with ``prefix``, by default ``name`` up to its first
    ``.``, each character other than a letter, digit or ``_`` made ``_``
    (``name="my-kernels"`` gives ``my_kernels.add_one``): the names stay
    the same from one edit of the sources to the next, while the cached
    file's name carries the cache key. ``prefix`` given for a kcall plugin
    is refused (InvalidArgumentError), as :func:`kcall.load_plugin` does.
    """
    from . import Plugin, load_plugin
    path = build_path(
        name, sources, source=source, language=language, flags=flags,
        nvcc_flags=nvcc_flags, cc=cc, cxx=cxx, nvcc=nvcc,
        cache_dir=cache_dir)
    if prefix is not None:
        return load_plugin(path, prefix=prefix)
    default = re.sub(r"[^A-Za-z0-9_]", "_", name.split(".")[0]) or "tvmffi"
    try:
        # Refused before the file is opened when it is no tvm-ffi module.
        return Plugin(_core.load_plugin(path, default))
    except _core.InvalidArgumentError as e:
        if "not a tvm-ffi module" not in str(e):
            raise
        return load_plugin(path)
    except _core.FailedPreconditionError:
        # A tvm-ffi module whose runtime the process lacks: load_plugin
        # imports the tvm_ffi package that brings it.
        return load_plugin(path, prefix=default)
