"""The test suite itself: `pytest`, typed alone anywhere, collects every module.

Modules import helpers as `from tests.conftest import ...` and `from scripts import docs`; those
resolve only with the project's root on the import path, which `python -m pytest` run from the
root gives by chance and `pytest` does not (pyproject's `pythonpath` gives it always).
"""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FROM_THE_ROOT = re.compile(r"^(from|import) (tests|scripts|benchmarks)\b", re.MULTILINE)


def test_pytest_alone_collects_the_modules_that_import_from_the_root(tmp_path):
    # Only those: collecting the whole suite imports every module, seconds more for nothing.
    modules = [str(p) for p in sorted(ROOT.glob("tests/test_*.py"))
               if FROM_THE_ROOT.search(p.read_text())]  # fmt: skip
    assert modules
    pytest = Path(sys.executable).with_name("pytest")
    run = subprocess.run(
        [str(pytest), "--collect-only", "-q", "-p", "no:cacheprovider", *modules],
        cwd=tmp_path,  # not the project's root: nothing on the path by chance
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr
    assert "error" not in run.stdout.splitlines()[-1], run.stdout[-3000:]
