"""The argument-conversion fuzz harness (tests/fuzz/python_args_fuzz.py)
on a fixed set of random inputs: nothing crashes, and every refusal is a
clean kcall, TypeError, ValueError, OverflowError or BufferError with a
message. `make fuzz` runs the same harness under atheris."""

import pathlib
import random
import sys

import pytest

pytest.importorskip("numpy", reason="the harness makes NumPy arrays")

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "fuzz"))
import python_args_fuzz as harness  # noqa: E402

import kcall  # noqa: E402


def inputs(seed, count):
    rng = random.Random(seed)
    return [rng.randbytes(rng.randrange(1, 96)) for _ in range(count)]


@pytest.mark.parametrize("seed", range(8))
def test_random_arguments_are_refused_cleanly(seed):
    for data in inputs(seed, 2000):
        harness.one_input(data)


def test_random_op_arguments_are_refused_cleanly(ops_plugin):
    kcall.load_plugin(ops_plugin)
    targets = harness.op_targets()
    assert targets, "the ops plugin registered no ops"
    for data in inputs(100, 5000):
        harness.one_input(data, targets)


def test_the_harness_tells_a_bug_from_a_refusal():
    """An exception outside the clean ones reaches the fuzzer."""
    def buggy(r, args):
        raise KeyError("a bug")
    with pytest.raises(KeyError):
        harness.one_input(b"\x00", [buggy])
    def refusing(r, args):
        raise TypeError("")
    with pytest.raises(AssertionError, match="without a message"):
        harness.one_input(b"\x00", [refusing])
