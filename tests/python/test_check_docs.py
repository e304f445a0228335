"""tests/check_docs.py itself: each rule refuses what breaks it, on small
documents made here, so that a document that drifts fails its tests."""

import pathlib
import sys
import textwrap

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import check_docs  # noqa: E402


def make_repo(tmp_path, doc, files=None):
    """A tree with docs/x.md holding `doc` and the given files."""
    repo = tmp_path / "repo"
    (repo / "docs").mkdir(parents=True, exist_ok=True)
    (repo / "README.md").write_text("# r\n")
    (repo / "docs" / "x.md").write_text(textwrap.dedent(doc))
    for name, text in (files or {}).items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return repo


def problems_of(tmp_path, doc, files=None):
    repo = make_repo(tmp_path, doc, files)
    _, problems = check_docs.check_docs(repo, [pathlib.Path("docs/x.md")])
    return problems


def one_problem(tmp_path, doc, files=None):
    problems = problems_of(tmp_path, doc, files)
    assert len(problems) == 1, problems
    return problems[0]


# ---- languages and annotations --------------------------------------------------

def test_a_block_without_a_language_is_refused(tmp_path):
    assert "docs/x.md:2: a fenced block needs a language" in one_problem(
        tmp_path, "text\n```\nls\n```\n")


def test_an_unknown_language_is_refused(tmp_path):
    assert "unknown language 'rust'" in one_problem(
        tmp_path, "```rust\nfn main() {}\n```\n")


def test_code_must_be_a_file_or_an_excerpt(tmp_path):
    problem = one_problem(tmp_path, "```c\nint x;\n```\n")
    assert "docs/x.md:1: a c block must be a file of the tree or a part of one" in problem


def test_a_prompt_in_a_text_block_is_refused(tmp_path):
    problem = one_problem(tmp_path, "```text\nusage\n$ kcall version\n```\n")
    assert "docs/x.md:3: a shell prompt in a text block" in problem


def test_an_annotation_must_precede_a_block(tmp_path):
    problem = one_problem(tmp_path, "<!-- doc-test: skip why -->\nprose\n")
    assert "docs/x.md:1: annotation not followed by a fenced block" in problem


def test_an_annotation_must_fit_its_block(tmp_path):
    assert "'session' is not for a sh block" in one_problem(
        tmp_path, "<!-- doc-test: session -->\n```sh\nls\n```\n")
    assert "unknown directive 'fil'" in one_problem(
        tmp_path, "<!-- doc-test: fil a.c -->\n```c\nint x;\n```\n")
    assert "'skip' needs a reason" in one_problem(
        tmp_path, "<!-- doc-test: skip -->\n```sh\nmake test\n```\n")
    assert "unknown option 'file: a'" in one_problem(
        tmp_path, "<!-- doc-test: run\n     file: a\n-->\n```sh\nls\n```\n")


def test_other_comments_and_info_words_are_left_alone(tmp_path):
    doc = ("<!-- a note for editors -->\n"
           "<!--\n  another one\n-->\n"
           "```console title=x\n$ true\n```\n")
    assert not problems_of(tmp_path, doc)
    assert "a fenced block needs a language" not in " ".join(
        problems_of(tmp_path, "```c  {.numbered}\nint x;\n```\n"))


def test_a_session_begins_with_a_command(tmp_path):
    assert "a console block begins with a command" in one_problem(
        tmp_path, "```console\nkcall version\n```\n")


def test_files_must_be_in_the_tree(tmp_path):
    assert "files: examples/nope.so is not in the tree" in one_problem(
        tmp_path, "<!-- doc-test: session\n     files: examples/nope.so\n-->\n"
                  "```console\n$ ls\n```\n")


# ---- files and excerpts -----------------------------------------------------------

PLUGIN = """\
/* p.c */
static int add(int a, int b) {
  return a + b;
}

static int sub(int a, int b) {
  return a - b;
}
"""
CMAKE = {"examples/CMakeLists.txt": "add_library(p MODULE p.c)\n",
         "examples/p.c": PLUGIN}


def test_a_file_block_is_the_whole_file(tmp_path):
    doc = "<!-- doc-test: file examples/p.c -->\n```c\n" + PLUGIN + "```\n"
    assert not problems_of(tmp_path, doc, CMAKE)


def test_a_file_block_that_differs_is_refused_with_the_difference(tmp_path):
    doc = ("<!-- doc-test: file examples/p.c -->\n```c\n" +
           PLUGIN.replace("a - b", "b - a") + "```\n")
    problem = one_problem(tmp_path, doc, CMAKE)
    assert "the block differs from examples/p.c" in problem
    assert "-  return b - a;" in problem and "+  return a - b;" in problem


def test_an_excerpt_is_pieces_of_the_file_in_order(tmp_path):
    doc = """\
        <!-- doc-test: excerpt examples/p.c -->
        ```c
        static int add(int a, int b) {
        /* ... */
        }
        ...
            return a - b;
        ```
        """
    assert not problems_of(tmp_path, doc, CMAKE)


def test_an_excerpt_out_of_order_or_changed_is_refused(tmp_path):
    doc = """\
        <!-- doc-test: excerpt examples/p.c -->
        ```c
        return a - b;
        ...
        return a + b;
        ```
        """
    problem = one_problem(tmp_path, doc, CMAKE)
    assert "are not lines of examples/p.c (in the order shown):\nreturn a + b;" in problem
    doc = doc.replace("return a + b;", "return a * b;").replace(
        "return a - b;\n        ...\n", "")
    assert "return a * b;" in one_problem(tmp_path, doc, CMAKE)


def test_an_excerpt_keeps_relative_indentation(tmp_path):
    doc = ("<!-- doc-test: excerpt examples/p.c -->\n```c\n"
           "static int add(int a, int b) {\nreturn a + b;\n```\n")
    assert "are not lines of" in one_problem(tmp_path, doc, CMAKE)


def test_a_file_nothing_builds_is_refused(tmp_path):
    doc = "<!-- doc-test: file examples/p.c -->\n```c\n" + PLUGIN + "```\n"
    problem = one_problem(tmp_path, doc, {"examples/p.c": PLUGIN})
    assert "examples/p.c: no CMakeLists.txt, test or command" in problem


def test_the_library_is_always_built(tmp_path):
    doc = "<!-- doc-test: excerpt include/k.h -->\n```c\nint k(void);\n```\n"
    assert not problems_of(tmp_path, doc, {"include/k.h": "int k(void);\n"})


# ---- comparing output --------------------------------------------------------------

@pytest.mark.parametrize("shown,printed,same", [
    (["a", "b"], ["a", "b"], True),
    (["a", "b"], ["a", "c"], False),
    (["a"], ["a", "b"], False),
    (["a", "..."], ["a", "b", "c"], True),
    (["...", "c"], ["a", "b", "c"], True),
    (["a", "...", "c"], ["a", "c"], True),
    (["a", "...", "d"], ["a", "b", "c"], False),
    (["path: .../lib.so"], ["path: /tmp/x/lib.so"], True),
    (["path: .../lib.so"], ["path: /tmp/x/lib.a"], False),
    (["[1.5, ..., 1.5]"], ["[1.5, ..., 1.5]"], True),
    (["x  "], ["x"], True),
])
def test_output_matching(shown, printed, same):
    assert check_docs.match_output(shown, printed) is same


def test_wrapped_lines_are_joined():
    assert check_docs.unwrap(["a b", "    c", "d", "    e", "    f"]) == \
        ["a b c", "d e f"]


def session_steps(text):
    block = check_docs.Block(pathlib.Path("docs/x.md"), 1, "console",
                             textwrap.dedent(text), "session")
    return check_docs.steps_of([block])


def test_a_session_splits_into_commands_and_their_output():
    steps = session_steps("""\
        $ printf 'a\\n' \\
            && printf 'b\\n'
        a
        b
        $ kcall nope
        kcall: error: NOT_FOUND: nope
        $ false
        $ echo $?
        1
        """)
    assert [s.line for s in steps] == [2, 6, 8, 9]
    assert steps[0].command == "printf 'a\\n' \\\n    && printf 'b\\n'"
    assert steps[0].expected == ["a", "b"]
    assert [s.status for s in steps] == ["zero", "one", "any", "zero"]


# ---- running ----------------------------------------------------------------------

@pytest.fixture
def world(tmp_path):
    repo = make_repo(tmp_path, "# x\n", {"examples/data.txt": "from the tree\n"})
    build = tmp_path / "build"
    (build / "lib").mkdir(parents=True)
    (build / "lib" / "built.txt").write_text("from the build\n")
    w = check_docs.World(repo, build, tmp_path / "world", sys.executable)
    yield w
    w.close()


def run_doc(world, text):
    """Runs the steps of a document; [(step, None or the exception)]."""
    problems = check_docs.Problems()
    (world.repo / "docs" / "run.md").write_text(textwrap.dedent(text))
    blocks = check_docs.parse(world.repo, pathlib.Path("docs/run.md"), problems)
    assert not problems, problems
    results = []
    for step in check_docs.steps_of(blocks):
        try:
            check_docs.run_step(world, step)
            results.append((step, None))
        except (check_docs.StepFailed, check_docs.StepSkipped) as e:
            results.append((step, e))
    return results


def test_sessions_share_a_shell_and_see_the_tree_and_the_build(world):
    results = run_doc(world, """\
        <!-- doc-test: session
             files: build/lib/built.txt
        -->
        ```console
        $ X=42; mkdir sub; cd sub
        $ cat ../examples/data.txt ../build/lib/built.txt ../built.txt
        from the tree
        from the build
        from the build
        ```

        ```console
        $ echo "$X in $(basename "$PWD"), home $(basename "$HOME")"
        42 in sub, home world
        ```
        """)
    assert [e for _, e in results] == [None, None, None]


def test_a_wrong_output_fails_with_the_difference(world):
    (_, error), = run_doc(world, "```console\n$ echo 1\n2\n```\n")
    assert isinstance(error, check_docs.StepFailed)
    assert "docs/run.md:2: echo 1" in str(error)
    assert "-2\n+1" in str(error)


def test_exit_statuses(world):
    results = run_doc(world, """\
        ```console
        $ false
        $ sh -c 'echo "kcall: error: X"; exit 2'
        kcall: error: X
        $ sh -c 'echo "kcall: error: X"; exit 1'
        kcall: error: X
        $ sh -c 'exit 3'
        $ echo $?
        3
        ```
        """)
    errors = [str(e) if e else None for _, e in results]
    assert "exited 1, expected 0" in errors[0]
    assert "exited 2; a command that shows `kcall: error:` must exit 1" in errors[1]
    assert errors[2:] == [None, None, None]


def test_a_run_block_stops_at_the_first_failing_command(world):
    (_, error), = run_doc(world, """\
        ```sh
        touch made
        false
        touch never
        ```
        """)
    assert "$ false\nexited 1, expected 0" in str(error)
    assert (world.dir / "made").exists() and not (world.dir / "never").exists()


def test_an_output_block_runs_its_command_in_a_subshell(world):
    results = run_doc(world, """\
        <!-- doc-test: output cd examples && cat data.txt -->
        ```text
        from the tree
        ```

        ```console
        $ basename "$PWD"
        world
        ```
        """)
    assert [e for _, e in results] == [None, None]


def test_python_blocks_share_one_interpreter(world):
    results = run_doc(world, """\
        ```python
        x = 6
        ```

        ```python
        assert x * 7 == 42
        ```

        ```python
        assert x == 7, "x is 6"
        ```
        """)
    assert [e for _, e in results[:2]] == [None, None]
    error = str(results[2][1])
    assert 'File "docs/run.md", line 10' in error and "AssertionError: x is 6" in error


def test_needs_skips_where_the_module_is_missing(world):
    (_, error), = run_doc(world, """\
        <!-- doc-test: session
             needs: no_such_module_anywhere
        -->
        ```console
        $ false
        ```
        """)
    assert isinstance(error, check_docs.StepSkipped)
    assert "needs no_such_module_anywhere" in str(error)


def test_a_command_needs_what_the_files_it_runs_need(world):
    (world.repo / "examples" / "s.py").write_text("print(1)\n")
    results = run_doc(world, """\
        <!-- doc-test: file examples/s.py
             needs: no_such_module_anywhere
        -->
        ```python
        print(1)
        ```

        ```console
        $ python s.py
        1
        $ echo other
        other
        ```
        """)
    assert isinstance(results[0][1], check_docs.StepSkipped)
    assert [e for _, e in results[1:]] == [None]


def test_a_failing_setup_fails_the_block(world):
    (_, error), = run_doc(world, """\
        <!-- doc-test: session
             setup: exit_with_nothing_found_here
        -->
        ```console
        $ true
        ```
        """)
    assert "setup `exit_with_nothing_found_here` exited 127" in str(error)


def test_a_notice_line_is_left_out_and_nothing_else(world):
    # As PyTorch logs it (on stderr) where the CUDA toolkit is installed
    # and no driver is; on other machines the line is not there at all.
    notice = ("W1126 01:51:28.065000 24582 torch/utils/cpp_extension.py:183] "
              "[0/0] No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda'")
    results = run_doc(world, f"""\
        <!-- doc-test: session
             notice: No CUDA runtime is found
        -->
        ```console
        $ echo "{notice}" >&2; echo result
        result
        $ echo result
        result
        $ echo "{notice}"; echo other; echo result
        result
        $ sh -c 'echo "{notice}"; exit 3'
        ```

        ```console
        $ echo "{notice}" >&2; echo result
        result
        ```
        """)
    errors = [str(e) if e else None for _, e in results]
    assert errors[:2] == [None, None]
    # Another line is compared, and the status is checked, as always.
    assert "+other" in errors[2]
    assert "exited 3, expected 0" in errors[3]
    # Only the block that names the notice leaves it out.
    assert "+" + notice in errors[4]
