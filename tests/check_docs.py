#!/usr/bin/env python3
"""check_docs.py: README.md and docs/*.md show only what works.

Every fenced code block of README.md and docs/*.md is checked: code is a
file of the tree, or a part of one, that the build compiles and the tests
run; commands are run and what they print is compared. ctest checks each
document's blocks, files and excerpts (`check_docs.py DOC...`, no build
needed); pytest (tests/python/test_docs.py) also runs them, one test per
step. A block that follows none of the rules below fails both.

THE LANGUAGE of a block (its fence's info string) says what it is:

  console   a shell session: `$ COMMAND` lines, each followed by what it
            prints. Run and compared (SESSIONS, below).
  sh, bash  commands whose output is not shown: run one by one (a line, or
            lines joined by a `\\` at their end), each must succeed.
  python    run in the document's Python interpreter, after the python
            blocks before it; it fails when it raises (what it prints is
            not compared: assert what matters).
  c, cpp, hlo, mlir, cmake
            code: annotated `file` or `excerpt` (below).
  text      not code (a grammar, a layout, a usage line, a format): not
            checked, unless annotated `output`. It may not hold a `$ `
            prompt: a session is a console block.

  A fence without a language, or with another one, is an error.

AN ANNOTATION is an HTML comment on the line(s) right before the fence
(rendered Markdown shows nothing of it): a directive, then options, one a
line.

  <!-- doc-test: file PATH -->     the block is the file PATH, whole.
  <!-- doc-test: excerpt PATH -->  the block is a part of PATH: each run of
        its lines between elisions (a line `...`, or a comment of nothing
        else: `/* ... */`, `// ...`, `# ...`) is lines of PATH, in order,
        the same up to a common indentation.
  <!-- doc-test: output COMMAND --> (text) the block is what COMMAND prints,
        compared as a session's output is. COMMAND runs unseen, in a
        subshell of the document's shell (so a `cd` in it stays there).
  <!-- doc-test: skip REASON -->   not run: for what the tests cannot run
        from inside (`make test` itself). REASON is required.
  <!-- doc-test: session -->, `run`, `python`: the kinds a console, sh and
        python block have anyway, written to give options.

  For example, before a console block:

    <!-- doc-test: session
         files: build/examples/hello/libhello_plugin.so
         needs: jax
    -->

  Options:
    files: PATH...    linked into the document's directory, under their own
                      names, before the block runs.
    needs: MODULE...  the block runs only where the tests' Python imports
                      each MODULE (jax, torch: `make test EXTRAS=...`), and
                      is skipped elsewhere, saying so. A command also needs
                      what the file blocks of the files it names need.
    setup: COMMAND    run in the document's shell before the block, unseen;
                      must succeed.
    notice: TEXT      a line holding TEXT is left out of what the block's
                      commands print before it is compared: for a notice
                      another library prints on some machines only, after
                      a prefix of its own (PyTorch's log line `W1126 ...
                      cpp_extension.py:183] No CUDA runtime is found` where
                      the CUDA toolkit is installed without a driver).
                      Every other line is compared; the status is checked
                      as always.
    wrapped           (output) a line indented by four spaces continues the
                      line before it, joined to it with one space.

  PATH is relative to the repository's root; `build/...` is in the build
  directory. A file or excerpt under examples/ or tests/ must be named by a
  CMakeLists.txt, a test, or a command of the documents, so that something
  builds and runs it (include/ and src/ are the library: always built).

THE DOCUMENT'S WORLD. Each document runs in a directory of its own, block
by block in order, in one bash shell (files, variables and `cd` carry over
from block to block, as for a reader at one terminal) and one Python
interpreter (names carry over from one python block to the next):
  - the directory links the repository's top-level entries (examples/,
    include/, Makefile, ...) and holds `build`, a link to the build
    directory, so paths are written as from the repository's root;
  - HOME is that directory; PATH begins with the bin directory of the
    Python that runs the tests, so `python` is the interpreter kcall is
    installed in, and `kcall` the tool that package carries.

SESSIONS. `$ ` begins a command; a line ending in `\\` continues it. The
lines up to the next command are its output: standard output and standard
error together, as a terminal shows them. They are compared line by line,
blanks at the end of a line ignored, where
  - a line `...` stands for any number of lines (none too), and
  - `...` within a line stands for any text (a path, an address, a time).
Every command must exit 0, except one whose output shows a line beginning
`kcall: error:`, which must exit 1 (the tool's status for an error), and
one followed by `$ echo $?`, which shows the status itself.
"""

import argparse
import dataclasses
import difflib
import json
import os
import pathlib
import re
import secrets
import selectors
import signal
import subprocess
import sys
import textwrap
import time

ANNOTATION = "doc-test:"
CODE_LANGS = {"c", "cpp", "hlo", "mlir", "cmake"}
SHELL_LANGS = {"sh", "bash"}
LANGS = CODE_LANGS | SHELL_LANGS | {"console", "python", "text"}
# The kind a block has without an annotation (code has none: it needs one).
DEFAULT_KIND = {"console": "session", "sh": "run", "bash": "run",
                "python": "python", "text": "text"}
# The kinds each directive may be given to.
KIND_LANGS = {
    "file": CODE_LANGS | {"python"},
    "excerpt": CODE_LANGS | {"python"},
    "output": {"text"},
    "skip": LANGS - {"text"},
    "session": {"console"},
    "run": SHELL_LANGS,
    "python": {"python"},
}
OPTIONS = {"files", "needs", "notice", "setup", "wrapped"}
# Directories of the tree that are the library itself: always built.
PRODUCT_DIRS = ("include/", "src/", "tools/", "python/")
# A fence; its language is the first word of its info string.
FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([^`\s]*)[^`]*$")
COMMAND_TIMEOUT = 300


def docs_of(repo):
    """README.md and every docs/*.md, relative to repo, in a fixed order."""
    repo = pathlib.Path(repo)
    found = [pathlib.Path("README.md")]
    found += sorted(p.relative_to(repo) for p in (repo / "docs").glob("*.md"))
    return found


# ---- parsing ------------------------------------------------------------------

@dataclasses.dataclass
class Block:
    doc: pathlib.Path      # relative to the repository
    line: int              # of the opening fence, from 1
    lang: str
    text: str              # the body, without the fence's indentation
    kind: str = ""
    arg: str = ""          # the path, command or reason of the directive
    files: list = dataclasses.field(default_factory=list)
    needs: list = dataclasses.field(default_factory=list)
    setup: list = dataclasses.field(default_factory=list)
    notices: list = dataclasses.field(default_factory=list)
    wrapped: bool = False

    @property
    def where(self):
        return f"{self.doc}:{self.line}"


class Problems(list):
    def add(self, where, message):
        self.append(f"{where}: {message}")


def _parse_annotation(comment, block, problems):
    """Fills block's kind and options from the text of an HTML comment."""
    lines = [l.strip() for l in comment.strip().splitlines()]
    head = lines[0][len(ANNOTATION):].strip()
    kind, _, arg = head.partition(" ")
    block.kind, block.arg = kind, arg.strip()
    for line in lines[1:]:
        if not line:
            continue
        key, colon, value = line.partition(":")
        key = key.strip()
        if key == "wrapped" and not colon:
            block.wrapped = True
        elif key in ("files", "needs") and colon:
            getattr(block, key).extend(value.split())
        elif key == "setup" and colon and value.strip():
            block.setup.append(value.strip())
        elif key == "notice" and colon and value.strip():
            block.notices.append(value.strip())
        else:
            problems.add(block.where, f"annotation: unknown option {line!r} "
                         f"(expected one of {', '.join(sorted(OPTIONS))})")


def parse(repo, doc, problems):
    """The fenced blocks of doc (relative to repo), with their annotations."""
    lines = (pathlib.Path(repo) / doc).read_text().splitlines()
    blocks = []
    pending = None          # (line, comment text) of an annotation
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if stripped.startswith("<!--"):
            start = i
            text = stripped[4:]
            while "-->" not in text and i + 1 < len(lines):
                i += 1
                text += "\n" + lines[i]
            if "-->" not in text:
                problems.add(f"{doc}:{start + 1}", "comment never closed")
                break
            body, _, after = text.partition("-->")
            i += 1
            if ANNOTATION not in body:
                continue        # a comment for the document's readers
            if not body.strip().startswith(ANNOTATION) or after.strip():
                problems.add(f"{doc}:{start + 1}", "an annotation is a comment "
                             f"of its own that starts with {ANNOTATION!r}")
            if pending:
                problems.add(f"{doc}:{pending[0]}", "annotation not followed by "
                             "a fenced block")
            pending = (start + 1, body)
            continue
        fence = FENCE.match(line)
        if not fence:
            if stripped and pending:
                problems.add(f"{doc}:{pending[0]}", "annotation not followed by "
                             "a fenced block")
                pending = None
            i += 1
            continue
        indent, marks, lang = fence.groups()
        start = i
        body = []
        i += 1
        while i < len(lines):
            close = lines[i].strip()
            if close.startswith(marks) and not close.strip(marks[0]):
                break
            text = lines[i]
            # The fence's indentation (in a list item) is not the code's.
            if text[:len(indent)].strip() == "":
                text = text[len(indent):]
            body.append(text)
            i += 1
        else:
            problems.add(f"{doc}:{start + 1}", "fenced block never closed")
        i += 1
        block = Block(doc, start + 1, lang, "".join(l + "\n" for l in body))
        if pending:
            _parse_annotation(pending[1], block, problems)
            pending = None
        else:
            block.kind = DEFAULT_KIND.get(lang, "")
        blocks.append(block)
    if pending:
        problems.add(f"{doc}:{pending[0]}", "annotation not followed by a "
                     "fenced block")
    return blocks


# ---- what may be checked without running anything -----------------------------

def _dedent(lines):
    return textwrap.dedent("".join(l + "\n" for l in lines)).splitlines()


ELISIONS = ("...", "/* ... */", "// ...", "# ...")


def excerpt_pieces(text):
    """The runs of lines of an excerpt, split at its elisions."""
    pieces, piece = [], []
    for line in text.splitlines():
        if line.strip() in ELISIONS:
            if piece:
                pieces.append(piece)
            piece = []
        else:
            piece.append(line)
    if piece:
        pieces.append(piece)
    return pieces


def find_excerpt(text, source):
    """None when every piece of text is lines of source, in order; else
    the first piece that is not (after the ones found)."""
    source_lines = source.splitlines()
    at = 0
    for piece in excerpt_pieces(text):
        want = _dedent(piece)
        n = len(piece)
        for start in range(at, len(source_lines) - n + 1):
            if _dedent(source_lines[start:start + n]) == want:
                at = start + n
                break
        else:
            return "\n".join(piece)
    return None


def source_path(repo, path, build_dir=None):
    """A PATH of an annotation: build/... in the build directory."""
    if path.startswith("build/"):
        base = pathlib.Path(build_dir) if build_dir else pathlib.Path(repo) / "build"
        return base / path[len("build/"):]
    return pathlib.Path(repo) / path


class References:
    """The text that names the files the tests build and run: every
    CMakeLists.txt, the tests' sources and the documents' commands."""

    def __init__(self, repo, docs_blocks):
        repo = pathlib.Path(repo)
        parts = []
        for pattern in ("CMakeLists.txt", "*/CMakeLists.txt",
                        "*/*/CMakeLists.txt", "*/*/*/CMakeLists.txt"):
            parts += [p.read_text() for p in repo.glob(pattern)
                      if not _ignored(repo, p)]
        for p in (repo / "tests").rglob("*"):
            if p.suffix in (".py", ".sh", ".c", ".cc", ".txt") and p.is_file() \
                    and p.name != "check_docs.py":
                parts.append(p.read_text(errors="replace"))
        for block in docs_blocks:
            parts += block.files + block.setup
            if block.kind == "session":
                parts += [c for _, c, _ in session_commands(block)]
            elif block.kind in ("run", "output"):
                parts.append(block.text if block.kind == "run" else block.arg)
        self.text = "\n".join(parts)

    def names(self, path):
        return pathlib.PurePath(path).name in self.text


def _ignored(repo, path):
    top = path.relative_to(repo).parts[0]
    return top.startswith(("build", ".venv", ".git"))


def check_block(repo, block, problems, references=None):
    """Checks one block without running it."""
    where = block.where
    if not block.lang:
        problems.add(where, "a fenced block needs a language: "
                     f"one of {', '.join(sorted(LANGS))} ('text' if it is "
                     "not code)")
        return
    if block.lang not in LANGS:
        problems.add(where, f"unknown language {block.lang!r}: expected one of "
                     f"{', '.join(sorted(LANGS))}")
        return
    if not block.kind:
        problems.add(where, f"a {block.lang} block must be a file of the tree "
                     "or a part of one: annotate it "
                     f"'<!-- {ANNOTATION} file PATH -->' or "
                     f"'<!-- {ANNOTATION} excerpt PATH -->'")
        return
    if block.kind == "text":
        for n, line in enumerate(block.text.splitlines()):
            if line.startswith("$ "):
                problems.add(f"{block.doc}:{block.line + 1 + n}",
                             "a shell prompt in a text block: a session is a "
                             "console block, which the tests run")
                break
        return
    if block.kind not in KIND_LANGS:
        problems.add(where, f"annotation: unknown directive {block.kind!r} "
                     f"(expected one of {', '.join(sorted(KIND_LANGS))})")
        return
    if block.lang not in KIND_LANGS[block.kind]:
        problems.add(where, f"annotation: '{block.kind}' is not for a "
                     f"{block.lang} block (it is for "
                     f"{', '.join(sorted(KIND_LANGS[block.kind]))})")
        return
    if block.kind in ("file", "excerpt", "output", "skip") and not block.arg:
        what = {"file": "a path", "excerpt": "a path", "output": "a command",
                "skip": "a reason"}[block.kind]
        problems.add(where, f"annotation: '{block.kind}' needs {what}")
        return
    if block.kind in ("session", "run", "python") and block.arg:
        problems.add(where, f"annotation: '{block.kind}' takes no argument, "
                     f"got {block.arg!r}")
    if block.wrapped and block.kind != "output":
        problems.add(where, "annotation: 'wrapped' is for output blocks")
    for path in block.files:
        if not path.startswith("build/") and not (pathlib.Path(repo) / path).exists():
            problems.add(where, f"files: {path} is not in the tree")
    if block.kind == "session":
        first = next((l for l in block.text.splitlines() if l.strip()), "")
        if not first.startswith("$ "):
            problems.add(where, "a console block begins with a command "
                         f"('$ ...'), not {first!r}")
    if block.kind in ("file", "excerpt"):
        _check_source(repo, block, problems, references)


def _check_source(repo, block, problems, references):
    where = block.where
    path = pathlib.Path(repo) / block.arg
    if not path.is_file():
        problems.add(where, f"{block.kind}: {block.arg} is not a file of the tree")
        return
    source = path.read_text()
    if block.kind == "file" and block.text != source:
        diff = difflib.unified_diff(block.text.splitlines(), source.splitlines(),
                                    f"{block.where} (the block)", block.arg,
                                    lineterm="", n=1)
        problems.add(where, f"the block differs from {block.arg}:\n" +
                     "\n".join(list(diff)[:40]))
    elif block.kind == "excerpt":
        missing = find_excerpt(block.text, source)
        if missing is not None:
            problems.add(where, f"these lines of the block are not lines of "
                         f"{block.arg} (in the order shown):\n{missing}")
    if references and not block.arg.startswith(PRODUCT_DIRS) \
            and not references.names(block.arg):
        problems.add(where, f"{block.arg}: no CMakeLists.txt, test or command "
                     "of the documents names it, so nothing builds or runs it")


def check_docs(repo, docs):
    """Parses and checks docs (relative to repo) without running them:
    (the blocks of each document, the problems found)."""
    problems = Problems()
    docs = [pathlib.Path(d) for d in docs]
    blocks = {doc: parse(repo, doc, problems) for doc in docs}
    # What every document runs names files too, whichever are checked.
    every = [b for doc in dict.fromkeys(docs + docs_of(repo))
             for b in blocks.get(doc) or parse(repo, doc, Problems())]
    references = References(repo, every)
    for doc in docs:
        for block in blocks[doc]:
            check_block(repo, block, problems, references)
    return blocks, problems


# ---- sessions --------------------------------------------------------------------

def session_commands(block):
    """[(line, command, expected output lines)] of a console block."""
    found = []
    lines = block.text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.startswith("$ "):
            i += 1      # only before the first command; check_block says so
            continue
        start = block.line + 1 + i
        command = line[2:]
        while command.endswith("\\") and i + 1 < len(lines):
            i += 1
            command += "\n" + lines[i]
        i += 1
        output = []
        while i < len(lines) and not lines[i].startswith("$ "):
            output.append(lines[i])
            i += 1
        found.append((start, command, output))
    return found


def shell_commands(text):
    """The commands of a run block: its lines, with those ending in `\\`
    joined to the next; blank lines and comments left out."""
    commands, command = [], ""
    for line in text.splitlines():
        command += line
        if line.endswith("\\"):
            command += "\n"
            continue
        if command.strip() and not command.lstrip().startswith("#"):
            commands.append(command)
        command = ""
    if command.strip():
        commands.append(command)
    return commands


def unwrap(lines):
    """Joins each line indented by four spaces to the one before it."""
    out = []
    for line in lines:
        if line.startswith("    ") and out:
            out[-1] = out[-1].rstrip() + " " + line.strip()
        else:
            out.append(line)
    return out


def _line_pattern(line):
    parts = line.rstrip().split("...")
    return re.compile(".*".join(re.escape(p) for p in parts), re.S)


def match_output(expected, actual):
    """Whether actual lines are what the expected lines show (SESSIONS)."""
    actual = [l.rstrip() for l in actual]
    pats = [None if l.strip() == "..." else _line_pattern(l) for l in expected]
    # ok[i][j]: pats[i:] matches actual[j:]
    ok = [[False] * (len(actual) + 1) for _ in range(len(pats) + 1)]
    ok[len(pats)][len(actual)] = True
    for i in range(len(pats) - 1, -1, -1):
        for j in range(len(actual), -1, -1):
            if pats[i] is None:
                ok[i][j] = ok[i + 1][j] or (j < len(actual) and ok[i][j + 1])
            else:
                ok[i][j] = (j < len(actual) and pats[i].fullmatch(actual[j])
                            is not None and ok[i + 1][j + 1])
    return ok[0][0]


@dataclasses.dataclass
class Step:
    """One thing the tests run: a command of a session, a run block, a
    python block or an output block."""
    block: Block
    line: int
    command: str
    expected: list = None          # output lines, or None: not compared
    status: str = "zero"           # "zero", "one" (an error shown), "any"
    first: bool = False            # the first step of its block
    needs: tuple = ()

    @property
    def id(self):
        text = self.command if self.block.kind != "python" else "python block"
        text = " ".join(text.split())
        return f"{self.block.doc}:{self.line}: {text[:60]}"


def steps_of(blocks):
    """The steps of one document's blocks, in order."""
    needs_of_file = {pathlib.PurePath(b.arg).name: b.needs for b in blocks
                     if b.kind == "file" and b.needs}
    steps = []
    for block in blocks:
        if block.kind == "session":
            cmds = session_commands(block)
            for n, (line, command, output) in enumerate(cmds):
                shows_status = (n + 1 < len(cmds) and
                                cmds[n + 1][1].strip() == "echo $?")
                if shows_status:
                    status = "any"
                elif any(l.startswith("kcall: error:") for l in output):
                    status = "one"
                else:
                    status = "zero"
                needs = list(block.needs)
                for word in re.split(r"[\s:=]+", command):
                    needs += needs_of_file.get(pathlib.PurePath(word).name, [])
                steps.append(Step(block, line, command, output, status,
                                  n == 0, tuple(dict.fromkeys(needs))))
        elif block.kind == "run":
            steps.append(Step(block, block.line, block.text, first=True,
                              needs=tuple(block.needs)))
        elif block.kind == "python":
            steps.append(Step(block, block.line, block.text, first=True,
                              needs=tuple(block.needs)))
        elif block.kind == "output":
            lines = block.text.splitlines()
            # In a subshell: what it does (a `cd`) stays out of the session.
            steps.append(Step(block, block.line, f"( {block.arg}\n)",
                              unwrap(lines) if block.wrapped else lines,
                              "any", True, tuple(block.needs)))
    return steps


class StepFailed(Exception):
    pass


class StepSkipped(Exception):
    pass


_PY_DRIVER = r'''
import json, sys, traceback
ns = {"__name__": "__main__"}
mark = sys.argv[1]
for request in sys.stdin:
    request = json.loads(request)
    code = "\n" * (request["line"] - 1) + request["code"]
    try:
        exec(compile(code, request["file"], "exec"), ns)
        error = ""
    except BaseException:
        error = traceback.format_exc()
    sys.stdout.flush()
    sys.stderr.flush()
    sys.stdout.write("\n" + mark + " " + json.dumps(error) + "\n")
    sys.stdout.flush()
'''


class _Process:
    """A child that reads requests on stdin and ends each answer with a
    line `MARK STATUS`."""

    def __init__(self, args, cwd, env, mark):
        self.mark = mark
        self.proc = subprocess.Popen(args, cwd=cwd, env=env,
                                     stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT,
                                     start_new_session=True)

    def ask(self, request, timeout):
        """(the output before the mark, the rest of the mark's line)."""
        try:
            self.proc.stdin.write(request.encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise StepFailed("the shell has exited") from None
        data = b""
        end = re.compile(b"\n" + re.escape(self.mark.encode()) + b" ([^\n]*)\n")
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while True:
                found = end.search(data)
                if found:
                    return (data[:found.start()].decode(errors="replace"),
                            found.group(1).decode())
                left = deadline - time.monotonic()
                if left <= 0:
                    self.close()
                    raise StepFailed(f"no answer in {timeout} s; output so "
                                     f"far:\n{data.decode(errors='replace')}")
                if sel.select(left):
                    chunk = os.read(fd, 65536)
                    if not chunk:
                        self.proc.wait()
                        raise StepFailed(
                            "the shell exited (status "
                            f"{self.proc.returncode}); output:\n"
                            f"{data.decode(errors='replace')}")
                    data += chunk

    def close(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                f.close()
            except OSError:
                pass


class World:
    """A document's directory, shell and Python interpreter."""

    # Variables of the test's own environment that would change what the
    # documents' commands do (make's, the build's, a preloaded runtime).
    DROP = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "BUILD",
            "CMAKE_ARGS", "PREFIX", "JOBS", "EXTRAS", "PKG_CONFIG_PATH",
            "KCALL_PYTHON_MODULES", "LD_PRELOAD", "LD_LIBRARY_PATH",
            "PYTHONPATH", "CMAKE_BUILD_PARALLEL_LEVEL",
            # `kcall build`'s cache goes under HOME, as the documents show.
            "KCALL_CACHE_DIR", "XDG_CACHE_HOME", "KCALL_INCLUDE_DIR")

    def __init__(self, repo, build_dir, directory, python=sys.executable):
        self.repo = pathlib.Path(repo).resolve()
        self.build_dir = pathlib.Path(build_dir).resolve()
        self.dir = pathlib.Path(directory)
        self.python = python
        self.dir.mkdir(parents=True, exist_ok=True)
        for entry in self.repo.iterdir():
            if not _ignored(self.repo, entry):
                (self.dir / entry.name).symlink_to(entry)
        (self.dir / "build").symlink_to(self.build_dir)
        env = {k: v for k, v in os.environ.items() if k not in self.DROP}
        bindir = os.path.dirname(os.path.abspath(python))
        env.update(HOME=str(self.dir), PYTHONUNBUFFERED="1",
                   PATH=bindir + os.pathsep + env.get("PATH", ""))
        self.env = env
        self.mark = "@@doc-test-" + secrets.token_hex(8)
        self._shell = None
        self._py = None
        self._imports = {}
        self.done = 0       # the steps run so far

    def shell(self, command, timeout=COMMAND_TIMEOUT):
        """Runs command in the shell: (output, exit status)."""
        if self._shell is None:
            self._shell = _Process(["bash", "--noprofile", "--norc"],
                                   self.dir, self.env, self.mark)
            # `$?` in a command is the status of the one before it, not of
            # the marker line between them.
            self._shell.ask("__doc_test_status=0\n__doc_test_restore() "
                            "{ return \"$1\"; }\n"
                            f"printf '\\n%s 0\\n' '{self.mark}'\n", timeout)
        request = ("__doc_test_restore \"$__doc_test_status\"\n"
                   f"{{ {command}\n}} </dev/null 2>&1\n"
                   "__doc_test_status=$?\n"
                   f"printf '\\n%s %d\\n' '{self.mark}' \"$__doc_test_status\"\n")
        output, status = self._shell.ask(request, timeout)
        return output, int(status)

    def run_python(self, code, file, line, timeout=COMMAND_TIMEOUT):
        """Runs code in the interpreter: (output, traceback or "")."""
        if self._py is None:
            self._py = _Process([self.python, "-u", "-c", _PY_DRIVER, self.mark],
                                self.dir, self.env, self.mark)
        request = json.dumps({"code": code, "file": file, "line": line}) + "\n"
        output, error = self._py.ask(request, timeout)
        return output, json.loads(error)

    def can_import(self, module):
        if module not in self._imports:
            done = subprocess.run([self.python, "-c", f"import {module}"],
                                  env=self.env, cwd=self.dir,
                                  capture_output=True)
            self._imports[module] = done.returncode == 0
        return self._imports[module]

    def link(self, path):
        source = source_path(self.repo, path, self.build_dir)
        target = self.dir / source.name
        if not source.exists():
            raise StepFailed(f"files: {path} does not exist ({source}): is the "
                             "build complete?")
        if target.is_symlink() or target.exists():
            target.unlink()
        target.symlink_to(source)

    def close(self):
        for p in (self._shell, self._py):
            if p:
                p.close()


def run_step(world, step):
    """Runs step in world; raises StepFailed or StepSkipped."""
    block = step.block
    # The block's files come first, even when this step is skipped: the
    # block's later steps may need none of what this one lacks. Its setup
    # runs when what the block itself needs is there.
    if step.first:
        for path in block.files:
            world.link(path)
        block_ready = all(world.can_import(m) for m in block.needs)
        for command in block.setup if block_ready else ():
            output, status = world.shell(command)
            if status != 0:
                raise StepFailed(f"{block.where}: setup `{command}` exited "
                                 f"{status}:\n{output}")
    missing = [m for m in step.needs if not world.can_import(m)]
    if missing:
        raise StepSkipped(f"{step.id}: needs {', '.join(missing)}, which this "
                          "Python does not have (`make test EXTRAS="
                          f"{' '.join(missing)}` installs it)")
    if block.kind == "python":
        output, error = world.run_python(step.command, str(block.doc),
                                         block.line + 1)
        if error:
            raise StepFailed(f"{step.id}: the python block failed:\n{output}"
                             f"{error}")
        return
    if block.kind == "run":
        for command in shell_commands(step.command):
            output, status = world.shell(command)
            if status != 0:
                raise StepFailed(f"{step.id}\n$ {command}\nexited {status}, "
                                 f"expected 0; output:\n{output}")
        return
    output, status = world.shell(step.command)
    lines = [l for l in output.splitlines()
             if not any(n in l for n in block.notices)]
    problems = []
    if step.status == "zero" and status != 0:
        problems.append(f"exited {status}, expected 0")
    elif step.status == "one" and status != 1:
        problems.append(f"exited {status}; a command that shows `kcall: "
                        "error:` must exit 1")
    if step.expected is not None and not match_output(step.expected, lines):
        diff = difflib.unified_diff(step.expected, lines, "shown", "printed",
                                    lineterm="", n=2)
        problems.append("its output is not what the block shows:\n" +
                        "\n".join(diff))
    elif step.expected is None and problems:
        problems.append("output:\n" + output)
    if problems:
        raise StepFailed(f"{step.id}\n$ {step.command}\n" + "\n".join(problems))


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Checks the code blocks of README.md and docs/*.md "
                    "(see this file's opening comment for the rules).")
    parser.add_argument("docs", nargs="*", help="documents, relative to "
                        "--repo (default: README.md and docs/*.md)")
    parser.add_argument("--repo", default=pathlib.Path(__file__).resolve().parents[1])
    parser.add_argument("--run", metavar="BUILD_DIR",
                        help="also run every step, with this build directory "
                             "(and this Python, which must have kcall)")
    args = parser.parse_args(argv)
    docs = [pathlib.Path(d) for d in args.docs] or docs_of(args.repo)
    blocks, problems = check_docs(args.repo, docs)
    for problem in problems:
        print(f"check_docs.py: {problem}")
    if problems:
        return 1
    count = sum(len(b) for b in blocks.values())
    print(f"check_docs.py: {count} block(s) of {len(docs)} document(s) follow "
          "the rules")
    if not args.run:
        return 0
    failed = 0
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        for doc in docs:
            world = World(args.repo, args.run, pathlib.Path(tmp) / doc.name)
            try:
                for step in steps_of(blocks[doc]):
                    try:
                        run_step(world, step)
                        print(f"ok    {step.id}")
                    except StepSkipped as e:
                        print(f"skip  {e}")
                    except StepFailed as e:
                        failed += 1
                        print(f"FAIL  {e}")
            finally:
                world.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
