"""validate on Dask with no row through the client (issue 36): the workers read their slices,
find the repeats among themselves, hash-partitioned, and write the findings file's parts; the
file and the summary are a local run's.

The corpus plants what the repeats must be found across: exact copies and copies in disguise
of rows many slices earlier, malformed rows, clashing givens, wrong solutions, and ids. Slices
are 4 batches of 100 rows here: 2,000 rows make 5 slices, and the keys go to 4 shards.
"""

import socket

import numpy as np
import polars as pl
import pytest

from pipeline import generate
from pipeline.grid import format_grids, parse_puzzles
from pipeline.jobs.validate import validate_file
from pipeline.symmetry import random_symmetries
from tests.test_dask import refuse_on_the_client, run_with_a_worker_killed

pytest.importorskip("distributed")

BATCH = 100  # rows a batch: a slice is 4 of them


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> "pl.DataFrame":
    made = generate(1500, seed=36)
    rng = np.random.default_rng(36)
    puzzles = made["puzzle"].to_list()
    solutions = made["solution"].to_list()
    copies = rng.integers(0, 1500, 300)  # exact copies, and copies of copies
    disguised_of = rng.integers(0, 1500, 150)
    grids = parse_puzzles(made["puzzle"]).grids[disguised_of]
    disguised = pl.Series(format_grids(random_symmetries(grids, rng))).to_list()
    rows = [
        *zip(puzzles, solutions, strict=True),
        *((puzzles[i], solutions[i]) for i in copies),
        *((p, None) for p in disguised),
        *(("not a puzzle", None) for _ in range(20)),
        *(("11" + p[2:], None) for p in puzzles[:30]),  # clashing givens
    ]
    order = rng.permutation(len(rows))
    frame = pl.DataFrame(
        {
            "id": [f"p{i}" for i in range(len(rows))],
            "puzzle": [rows[i][0] for i in order],
            "solution": [rows[i][1] for i in order],
        }
    )
    wrong = frame["solution"].to_list()
    for i in range(0, 200, 17):  # a wrong shipped solution now and then
        if wrong[i] is not None:
            wrong[i] = wrong[i][::-1]
    return frame.with_columns(pl.Series("solution", wrong))


def _validate(path, out, **options):
    return validate_file(path, out, batch_size=BATCH, progress=False, **options)


def _no_row_through_the_client(monkeypatch) -> None:
    """Fail a run whose client would write findings or look up keys itself."""
    from pipeline.io.writers import TableWriter
    from pipeline.jobs.validate.duplicates import RepeatFinder

    why = "the client handled rows: the run was not sharded"
    refuse_on_the_client(monkeypatch, why, (TableWriter, "add"), (RepeatFinder, "add"))


@pytest.mark.parametrize("fmt", ["parquet", "csv", "jsonl"])
def test_validate_on_dask_equals_local(corpus, tmp_path, monkeypatch, fmt):
    path = tmp_path / "corpus.csv"
    corpus.write_csv(path)
    local = tmp_path / f"local.{fmt}"
    expected = _validate(path, local, symmetry=True)
    assert expected.findings["duplicate"] >= 300 and expected.findings["symmetry_duplicate"]
    assert expected.findings["malformed"] == 20 and expected.findings["wrong_solution"]
    _no_row_through_the_client(monkeypatch)
    monkeypatch.setenv("SUDOKU_PIPELINE_SLICE_ROWS", str(4 * BATCH))
    out = tmp_path / f"dask.{fmt}"
    summary = _validate(path, out, symmetry=True, executor="dask", workers=2)
    if fmt == "parquet":  # row groups a part, not 65,536 rows each: the same table
        assert pl.read_parquet(out).equals(pl.read_parquet(local))
    else:  # text: the same bytes
        assert out.read_bytes() == local.read_bytes()
    for name in ("rows", "findings", "levels", "rows_with_errors", "clues", "examples", "clean"):
        assert getattr(summary, name) == getattr(expected, name), name
    assert not out.with_name(out.name + ".partial").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["corpus.csv", local.name, out.name]
    )


def test_no_symmetry_and_numeric_ids_from_parquet(corpus, tmp_path, monkeypatch):
    path = tmp_path / "corpus.parquet"
    corpus.with_columns(pl.int_range(pl.len()).alias("id") * 7).write_parquet(
        path, row_group_size=BATCH
    )
    local = tmp_path / "local.parquet"
    expected = _validate(path, local)
    _no_row_through_the_client(monkeypatch)
    monkeypatch.setenv("SUDOKU_PIPELINE_SLICE_ROWS", str(3 * BATCH))
    out = tmp_path / "dask.parquet"
    summary = _validate(path, out, executor="dask", workers=2)
    assert pl.read_parquet(out).equals(pl.read_parquet(local))
    assert summary.findings == expected.findings and summary.examples == expected.examples


def test_a_task_run_twice_writes_the_same(corpus, tmp_path, monkeypatch):
    """Dask may run any task twice (a worker it thought lost): each writes the same files."""
    import pipeline.jobs.validate.sharded as sharded

    path = tmp_path / "corpus.csv"
    corpus.write_csv(path)
    local = tmp_path / "local.parquet"
    _validate(path, local, symmetry=True)
    for name in ("_check_slice", "_repeats_of_shard", "_write_findings"):
        once = getattr(sharded, name)
        monkeypatch.setattr(sharded, name, lambda item, once=once: (once(item), once(item))[1])
    monkeypatch.setenv("SUDOKU_PIPELINE_SLICE_ROWS", str(4 * BATCH))
    out = tmp_path / "dask.parquet"
    _validate(path, out, symmetry=True, executor="dask", workers=2)
    assert pl.read_parquet(out).equals(pl.read_parquet(local))


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_an_empty_input_on_dask_is_an_empty_findings_file(tmp_path, fmt):
    path = tmp_path / "empty.csv"
    path.write_text("id,puzzle\n")
    local, out = tmp_path / f"local.{fmt}", tmp_path / f"dask.{fmt}"
    expected = _validate(path, local)
    summary = _validate(path, out, executor="dask", workers=1)
    assert summary.rows == 0 == expected.rows and summary.findings == expected.findings
    if fmt == "csv":  # the header alone
        assert out.read_bytes() == local.read_bytes()
    else:  # the schema alone
        assert pl.read_parquet(out).equals(pl.read_parquet(local))


def test_a_full_disk_on_a_worker_is_one_line_and_leaves_nothing(corpus, tmp_path, monkeypatch):
    """validate does not resume: a worker that cannot write its shard ends the run with one
    line, and neither the output nor the shards' scratch stays."""
    import pipeline.run.scratch as scratch
    from pipeline.errors import InputError

    keep = scratch.keep_bytes

    def full(path, data):
        if "repeats" in path.name:
            raise OSError(28, "No space left on device")
        keep(path, data)

    path = tmp_path / "corpus.csv"
    corpus.head(500).write_csv(path)
    monkeypatch.setattr(scratch, "keep_bytes", full)
    monkeypatch.setenv("SUDOKU_PIPELINE_SLICE_ROWS", str(2 * BATCH))
    with pytest.raises(InputError) as error:
        _validate(path, tmp_path / "out.parquet", executor="dask", workers=2)
    assert str(error.value).endswith(
        ": No space left on device on the worker at "
        f"{socket.gethostname()}; nothing is kept (this command does not resume): "
        "once that is put right, run it again"
    )
    assert [p.name for p in tmp_path.iterdir()] == ["corpus.csv"]


def test_on_a_running_cluster_a_worker_killed_mid_run_changes_nothing(corpus, tmp_path):
    """A real scheduler and two worker processes: the worker holding a slice's batch is
    killed (kill -9); Dask gives its tasks to the other, and the findings are a local run's."""
    path = tmp_path / "corpus.csv"
    corpus.write_csv(path)
    local, out = tmp_path / "local.parquet", tmp_path / "dask.parquet"
    _validate(path, local, symmetry=True)
    args = ["validate", path, "-o", out, "--symmetry", "--batch-size", BATCH]
    code, err = run_with_a_worker_killed(args, tmp_path, "validate", slice_rows=4 * BATCH)
    assert code == 1, err  # findings of errors: exit 1
    assert pl.read_parquet(out).equals(pl.read_parquet(local))
