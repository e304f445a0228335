"""README.md and docs/*.md, as tests/check_docs.py (whose opening comment
has the rules) checks them: each document's blocks follow the rules, and
every step they make (a command of a session, a run block, a python block,
an output block) is a test of its own, run in order in its document's
world, with the package as pip installed it and plugins from the C build.

The documents are found when the tests are collected: a new docs/*.md is
checked with no change here.
"""

import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))
import check_docs  # noqa: E402

DOCS = check_docs.docs_of(REPO)
BLOCKS, PROBLEMS = check_docs.check_docs(REPO, DOCS)
STEPS = {doc: check_docs.steps_of(BLOCKS[doc]) for doc in DOCS}


@pytest.mark.parametrize("doc", DOCS, ids=str)
def test_doc_follows_the_rules(doc):
    found = [p for p in PROBLEMS if p.startswith(f"{doc}:")]
    assert not found, "\n".join(found)


def test_every_document_runs_something():
    """A document with code runs some of it: one that is all files and
    excerpts and skips would be checked only for being in the tree."""
    for doc in DOCS:
        kinds = {b.kind for b in BLOCKS[doc]}
        if kinds - {"text"}:
            assert STEPS[doc], f"{doc}: no block of it runs"


@pytest.fixture(scope="session")
def worlds(build_dir, tmp_path_factory):
    """world(doc): the document's directory, shell and interpreter, made
    when its first step runs."""
    made = {}

    def world(doc):
        if doc not in made:
            directory = tmp_path_factory.mktemp(doc.name.replace(".", "_"))
            made[doc] = check_docs.World(REPO, build_dir, directory / "world",
                                         sys.executable)
        return made[doc]

    yield world
    for w in made.values():
        w.close()


@pytest.mark.parametrize(
    "doc,index",
    [(doc, i) for doc in DOCS for i in range(len(STEPS[doc]))],
    ids=[step.id for doc in DOCS for step in STEPS[doc]])
def test_doc_step(doc, index, worlds):
    world = worlds(doc)
    steps = STEPS[doc]
    # Selected alone (-k), a step still finds what the steps before it made;
    # their own results are their own tests'.
    while world.done < index:
        try:
            check_docs.run_step(world, steps[world.done])
        except (check_docs.StepFailed, check_docs.StepSkipped):
            pass
        world.done += 1
    world.done = index + 1
    try:
        check_docs.run_step(world, steps[index])
    except check_docs.StepSkipped as e:
        pytest.skip(str(e))
    except check_docs.StepFailed as e:
        pytest.fail(str(e), pytrace=False)


def test_tour(repo, hello_plugin):
    done = subprocess.run([sys.executable, str(repo / "examples/python/tour.py"),
                           str(hello_plugin)], cwd=repo, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("<kcall.Plugin 'hello'")
    assert lines[1:] == [
        "hello.add(2, 3) = 5",
        "scaled columns 0 and 2: [[0.0, 1.0, 20.0], [30.0, 4.0, 50.0]]",
        "hello.call('demo.square', 7) = 49",
        "InvalidArgumentError: hello.add: argument 1: expected int, got str",
        "axpy: [2.5, 4.5, 6.5, 8.5]",
    ]
