"""The test suite itself: `pytest`, typed alone anywhere, collects every module.

Modules import helpers as `from tests.conftest import ...` and `from scripts import docs`; those
resolve only with the project's root on the import path, which `python -m pytest` run from the
root gives by chance and `pytest` does not (pyproject's `pythonpath` gives it always).
"""

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FROM_THE_ROOT = re.compile(r"^(from|import) (tests|scripts|benchmarks)\b", re.MULTILINE)


PYTHONPATH = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
# A day later by the clock of the process it is put on the path of (`sitecustomize`).
A_DAY_LATER = "import time\n_now = time.time\ntime.time = lambda: _now() + 86_400\n"


def test_pytest_alone_collects_every_module_and_the_same_tests_a_day_later(tmp_path, request):
    """The same tests as this run, whatever the time of day: `make test` runs the suite in
    worker processes (pytest-xdist), which refuse to start when their collections differ (a
    parameter's id made of `gzip.compress(...)` bytes held the time of day once)."""
    modules = [str(p) for p in sorted(ROOT.glob("tests/test_*.py"))]
    assert any(FROM_THE_ROOT.search(Path(m).read_text()) for m in modules)
    (tmp_path / "sitecustomize.py").write_text(A_DAY_LATER)
    pytest = Path(sys.executable).with_name("pytest")
    run = subprocess.run(
        [str(pytest), "--collect-only", "-q", "-p", "no:cacheprovider", *modules],
        cwd=tmp_path,  # not the project's root: nothing on the path by chance
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *PYTHONPATH])},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr
    assert "error" not in run.stdout.splitlines()[-1], run.stdout[-3000:]
    collected = set(run.stdout.splitlines())
    files = {str(Path(m).relative_to(ROOT)) for m in modules}
    here = {item.nodeid for item in request.session.items if item.nodeid.split("::")[0] in files}
    assert here - collected == set()
