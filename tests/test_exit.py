"""How the program ends: quickly, with all it wrote delivered and its exit handlers run."""

import subprocess
from pathlib import Path

import pytest
from conftest import COMMAND, linux_only

SAMPLE = Path(__file__).parents[1] / "data" / "sample.csv"


JOBS_TO_STDOUT = {
    "solve": ["solve", str(SAMPLE), "-o", "-", "--format", "csv", "-q"],
    "validate": ["validate", "{clashing}", "-o", "-", "--format", "jsonl", "-q", "--exit-zero"],
    "generate": ["generate", "20000", "--clues", "40", "--seed", "1", "-q"],
}  # fmt: skip


@linux_only
@pytest.mark.parametrize("job", JOBS_TO_STDOUT)
def test_a_reader_that_stops_early_ends_the_job_quietly_with_141(job, tmp_path):
    clashing = tmp_path / "clashing.txt"  # 5,000 findings to report
    clashing.write_text(("1" * 81 + "\n") * 5000)
    argv = [arg.format(clashing=clashing) for arg in JOBS_TO_STDOUT[job]]
    # The first write is large: CPython's own buffered stdout would call it done and exit 0.
    run = subprocess.Popen([*COMMAND, *argv], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)  # fmt: skip
    assert run.stdout.readline()
    run.stdout.close()  # like `| head -1`

    assert run.wait(timeout=120) == 141
    assert run.stderr.read() == b""
