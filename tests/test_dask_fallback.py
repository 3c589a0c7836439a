"""What runs on the Dask client, and says so: with `--executor dask`, the workers read their
own slices and keep their own parts only for input files they can open themselves; standard
input (`-`), a pipe or a URL, output to stdout, folders of arrays (`augment`'s and
`split`'s), and `validate`'s leak audit against a training input the workers cannot open
are read and written by this process, the batches sent to the workers and their results sent
back. A run that falls back so says it in one line (a `note:`, unless `--quiet`), naming why;
its output is the local executor's.
(`enumerate` takes no `--executor`: it runs on this machine's threads.)

The cluster here is a LocalCluster (`--workers 1`), as tests/test_dask.py's quicker tests use.
"""

from pathlib import Path

import polars as pl
import pytest

from pipeline import generate
from pipeline.jobs.solve.job import solve_file
from tests.conftest import command

pytest.importorskip("distributed")

ON_DASK = ("--executor", "dask", "--workers", "1", "--json")  # the summary to stdout


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("dask-fallback") / "corpus.csv"
    generate(400, seed=8).select("id", "puzzle", "solution").write_csv(path)
    return path


def _notes(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("note: ")]


def test_standard_input_on_dask_is_read_by_the_client_and_said_once(corpus, tmp_path):
    out, local = tmp_path / "out.parquet", tmp_path / "local.parquet"
    with corpus.open("rb") as stdin:
        run = command("solve", "-", "-o", out, *ON_DASK, stdin=stdin)
    assert run.returncode == 0, run.stderr
    assert _notes(run.stderr) == [
        "note: on Dask, this process reads standard input and writes the output itself "
        "(the workers cannot open a stream); the workers solve the batches it sends them"
    ]
    assert run.stderr.strip().splitlines() == _notes(run.stderr)  # nothing else said
    solve_file(corpus, local, workers=1, progress=False)
    timing = ["solve_ns"]
    assert pl.read_parquet(out).drop(timing).equals(pl.read_parquet(local).drop(timing))


def test_quiet_says_nothing(corpus, tmp_path):
    with corpus.open("rb") as stdin:
        run = command("solve", "-", "-o", tmp_path / "out.parquet", *ON_DASK, "--quiet",
                      stdin=stdin)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""


def test_output_to_stdout_on_dask_is_written_by_the_client(corpus):
    run = command("solve", corpus, "-o", "-", "--executor", "dask", "--workers", "1")
    assert run.returncode == 0, run.stderr
    assert _notes(run.stderr) == [
        f"note: on Dask, this process reads {corpus} and writes the output itself (the output "
        "goes to stdout); the workers solve the batches it sends them"
    ]


def test_validate_on_dask_says_nothing_with_or_without_a_leak_audit(corpus, tmp_path):
    """A file's validate runs on the workers (tests/test_dask_validate.py), and so does its
    leak audit against training files (`--against`, tests/test_dask_leaks.py): nothing said."""
    run = command("validate", corpus, "-o", tmp_path / "findings.parquet", *ON_DASK)
    assert run.returncode == 0, run.stderr
    assert _notes(run.stderr) == []
    train = tmp_path / "train.csv"
    pl.read_csv(corpus, infer_schema=False).head(10).write_csv(train)
    run = command("validate", corpus, "--against", train, "-o", tmp_path / "f.parquet",
                  *ON_DASK, "--exit-zero")  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert _notes(run.stderr) == []


def test_input_files_on_dask_say_nothing(corpus, tmp_path):
    run = command("solve", corpus, "-o", tmp_path / "out.parquet", *ON_DASK)
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""


def test_enumerate_takes_no_executor(corpus, tmp_path):
    run = command("enumerate", corpus, "-o", tmp_path / "e.parquet", "--executor", "dask")
    assert run.returncode == 2
    assert "--executor" in run.stderr
