"""kcall ops inside TensorFlow: the cases of tf_cases.py, run by pytest in
a process of their own and reported here one by one.

TensorFlow makes the LLVM it carries global to the process, and
torch.compile's triton, loaded later into the same process, then aborts
it (LLVM's "Option registered more than once"), so the TensorFlow cases
never run in the process that runs test_torch.py. TensorFlow is not part
of the default test environment: `make test EXTRAS=tf` installs it, and
these tests skip without it.
"""

import ast
import importlib.util
import os
import pathlib
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

HERE = pathlib.Path(__file__).resolve().parent
CASES = HERE / "tf_cases.py"

if importlib.util.find_spec("tensorflow") is None:
    pytest.skip("TensorFlow is not installed: `make test EXTRAS=tf` installs it",
                allow_module_level=True)


def case_names():
    tree = ast.parse(CASES.read_text())
    return [n.name for n in tree.body
            if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory, build_dir):
    report = tmp_path_factory.mktemp("tf") / "report.xml"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "--rootdir", str(HERE.parent.parent), f"--junitxml={report}", str(CASES)],
        cwd=HERE.parent.parent, env=dict(os.environ), capture_output=True, text=True)
    assert report.is_file(), done.stdout + done.stderr
    results = {}
    for case in ET.parse(report).iter("testcase"):
        failed = [c for c in case if c.tag in ("failure", "error", "skipped")]
        results[case.get("name")] = (failed[0].tag + ": " + (failed[0].text or
                                     failed[0].get("message", ""))) if failed else None
    return results, done.stdout[-4000:]


@pytest.mark.parametrize("name", case_names())
def test_tensorflow_case(outcomes, name):
    results, log = outcomes
    assert name in results, f"tf_cases.py::{name} did not run:\n{log}"
    assert results[name] is None, f"tf_cases.py::{name}: {results[name]}"
