"""validate TEST --against TRAIN on Dask with no row through the client: TRAIN sliced as the
input is, its form keys in the repeats' shards, the hits confirmed word for word on the
workers, the leaks put in place per slice; the findings file and the summary are a local
run's.

The corpora: 600 generated puzzles; TRAIN holds some, TEST others, exact copies of TRAIN
rows and copies in disguise (relabelled, permuted, transposed: `random_symmetries`), with
TRAIN holding some puzzles twice (the first row is named) and malformed and pencilmark rows.
Slices are 2 batches of 50 rows: a few hundred rows make several slices on both sides.
"""

import numpy as np
import polars as pl
import pytest

from pipeline import generate
from pipeline.grid import format_grids, parse_puzzles
from pipeline.jobs.validate import validate_file
from pipeline.pencilmarks import candidates_of, format_pencilmarks
from pipeline.symmetry import random_symmetries
from tests.test_dask import refuse_on_the_client, run_with_a_worker_killed

pytest.importorskip("distributed")

BATCH = 50  # rows a batch: a slice is 2 of them
SUMMARY = ("rows", "findings", "levels", "rows_with_errors", "clues", "examples", "against")


@pytest.fixture(scope="module")
def puzzles() -> list[str]:
    return generate(600, seed=81)["puzzle"].to_list()


def disguised(puzzles: list[str], seed: int) -> list[str]:
    grids = parse_puzzles(puzzles).grids
    return format_grids(random_symmetries(grids, np.random.default_rng(seed))).to_pylist()


def marks(puzzles: list[str]) -> list[str]:
    return format_pencilmarks(candidates_of(parse_puzzles(puzzles).grids))


def write(path, puzzles: list[str], prefix: str = "p"):
    frame = pl.DataFrame({"id": [f"{prefix}{i}" for i in range(len(puzzles))], "puzzle": puzzles})
    if path.suffix == ".parquet":
        frame.write_parquet(path, row_group_size=BATCH)
    else:
        frame.write_csv(path)
    return path


def _validate(path, out, against, **options):
    return validate_file(path, out, against=against, batch_size=BATCH, progress=False, **options)


def no_row_through_the_client(monkeypatch) -> None:
    """Fail a run whose client would read a TEST or TRAIN batch, write findings, or look up
    keys or leaks itself (the workers, threads of this process here, call none of these)."""
    from pipeline.io.inputs import Inputs
    from pipeline.io.writers import TableWriter
    from pipeline.jobs.validate.duplicates import RepeatFinder
    from pipeline.jobs.validate.leaks import TestHits, TrainIndex

    why = "the client handled rows: the audit was not sharded"
    refuse_on_the_client(
        monkeypatch, why, (Inputs, "batches"), (TableWriter, "add"), (RepeatFinder, "add"),
        (TrainIndex, "add"), (TestHits, "add"),
    )  # fmt: skip


def same_as_local(tmp_path, monkeypatch, test, train, fmt="parquet", **options):
    """Validate `test` against `train` locally, then on Dask (2 workers, slices of 2
    batches, no row through the client): the same findings and summary. The local run's."""
    local = tmp_path / f"local.{fmt}"
    expected = _validate(test, local, train, **options)
    with monkeypatch.context() as patched:
        no_row_through_the_client(patched)
        patched.setenv("SUDOKU_PIPELINE_SLICE_ROWS", str(2 * BATCH))
        out = tmp_path / f"dask.{fmt}"
        summary = _validate(test, out, train, executor="dask", workers=2, **options)
    if fmt == "parquet":  # row groups a part, not 65,536 rows each: the same table
        assert pl.read_parquet(out).equals(pl.read_parquet(local))
    else:  # text: the same bytes
        assert out.read_bytes() == local.read_bytes()
    for name in SUMMARY:
        assert getattr(summary, name) == getattr(expected, name), name
    assert not out.with_name(out.name + ".partial").exists()  # the scratch cleared too
    return expected


@pytest.mark.parametrize("fmt", ["parquet", "csv", "jsonl"])
def test_exact_and_disguised_copies_are_named_as_locally(puzzles, tmp_path, monkeypatch, fmt):
    train = puzzles[:300]
    copies = train[10:40] + disguised(train[200:260], seed=1)
    test = write(tmp_path / "test.csv", puzzles[300:500] + copies + ["not a puzzle"])
    expected = same_as_local(tmp_path, monkeypatch, test, write(tmp_path / "train.csv", train,
                             "t"), fmt, symmetry=True)  # fmt: skip
    assert expected.against["exact"] == 30 and expected.against["in_disguise"] == 60
    assert expected.findings["symmetry_duplicate"] == 0 and expected.findings["malformed"] == 1


def test_the_first_training_row_is_named_across_inputs(puzzles, tmp_path, monkeypatch):
    """A puzzle held by several TRAIN inputs, or twice in one: the first input given, its
    first row; a row holding it exactly before any holding it in disguise."""
    a = disguised(puzzles[:100], seed=2) + puzzles[100:200]  # 0-99 in disguise only
    b = puzzles[:150] + puzzles[50:60]  # 0-99 exactly (after a's disguise), 100-149 again
    c = puzzles[250:300] + disguised(puzzles[200:250], seed=3)
    test = write(tmp_path / "test.csv", puzzles[::2] + disguised(puzzles[1:300:3], seed=4))
    names = [
        write(tmp_path / f"{n}.csv", rows, n) for n, rows in zip("abc", (a, b, c), strict=True)
    ]
    same_as_local(tmp_path, monkeypatch, test, names)
    leaks = pl.read_parquet(tmp_path / "dask.parquet").filter(pl.col("code") == "leak")
    named = {row: (train_input, train_row, exact) for row, train_input, train_row, exact
             in leaks.select("row", "train_input", "train_row", "exact").iter_rows()}  # fmt: skip
    a_csv, b_csv, c_csv = map(str, names)
    assert named[5] == (b_csv, 10, True)  # puzzle 10: in disguise in a, exactly in b
    assert named[25] == (b_csv, 50, True)  # puzzle 50: twice in b, its first row
    assert named[60] == (a_csv, 120, True)  # puzzle 120: exactly in a and in b
    assert named[105] == (c_csv, 60, False)  # puzzle 210: in disguise in c only
    assert named[300] == (a_csv, 1, False)  # puzzle 1 disguised: a's disguise is the first


def test_a_parquet_training_input_and_a_csv_input(puzzles, tmp_path, monkeypatch):
    train = write(tmp_path / "train.parquet", puzzles[:400], "t")
    test = write(tmp_path / "test.csv", puzzles[350:450] + disguised(puzzles[:80], seed=5))
    expected = same_as_local(tmp_path, monkeypatch, test, train, fmt="csv")
    assert expected.against["exact"] == 50 and expected.against["in_disguise"] == 80


def test_numeric_ids_and_a_parquet_input(puzzles, tmp_path, monkeypatch):
    train = tmp_path / "train.parquet"
    pl.DataFrame({"id": range(0, 1500, 5), "puzzle": puzzles[:300]}).write_parquet(
        train, row_group_size=BATCH
    )
    test = tmp_path / "test.parquet"
    rows = puzzles[250:400] + disguised(puzzles[:40], seed=6)
    pl.DataFrame({"id": range(len(rows)), "puzzle": rows}).write_parquet(test, row_group_size=BATCH)
    expected = same_as_local(tmp_path, monkeypatch, test, train)
    assert expected.against["leaks"] == 90


def test_malformed_and_pencilmark_rows_are_counted_as_locally(puzzles, tmp_path, monkeypatch):
    train = puzzles[:200]
    with_bad = [*train[:60], "12", *marks(train[60:70]), *train[70:150], "x" * 81, "", *train[150:]]
    test = write(tmp_path / "test.csv", [*puzzles[200:300], *train[55:75], *marks(train[:5])])
    expected = same_as_local(tmp_path, monkeypatch, test, write(tmp_path / "train.csv", with_bad))
    audit = expected.against
    assert audit["train"][0]["malformed"] == 3 and audit["train"][0]["pencilmarks"] == 10
    assert audit["pencilmarks_skipped"] == 5 and audit["leaks"] == 10  # 60-69: marks in TRAIN


def test_no_leak_at_all(puzzles, tmp_path, monkeypatch):
    test = write(tmp_path / "test.csv", puzzles[:250])
    train = write(tmp_path / "train.csv", puzzles[250:] + disguised(puzzles[300:400], seed=7))
    expected = same_as_local(tmp_path, monkeypatch, test, train, fmt="csv")
    assert expected.against["leaks"] == 0 and expected.clean


def test_an_empty_training_input(puzzles, tmp_path, monkeypatch):
    empty = tmp_path / "empty.csv"
    empty.write_text("id,puzzle\n")
    test = write(tmp_path / "test.csv", puzzles[:250])
    train = [empty, write(tmp_path / "train.csv", puzzles[200:260])]
    expected = same_as_local(tmp_path, monkeypatch, test, train, fmt="jsonl")
    assert expected.against["train"][0]["rows"] == 0 and expected.against["exact"] == 50


def test_an_empty_input_still_counts_the_training_rows(puzzles, tmp_path, monkeypatch):
    test = tmp_path / "test.csv"
    test.write_text("id,puzzle\n")
    expected = same_as_local(tmp_path, monkeypatch, test, write(tmp_path / "t.csv", puzzles[:99]))
    assert expected.against["train"][0]["rows"] == 99 and expected.rows == 0


def test_a_task_run_twice_writes_the_same(puzzles, tmp_path, monkeypatch):
    """Dask may run any task twice (a worker it thought lost): each writes the same files."""
    import pipeline.jobs.validate.leak_shards as leak_shards
    import pipeline.jobs.validate.sharded as sharded

    for module, name in ((leak_shards, "_train_slice"), (sharded, "leaks_of_shard"),
                         (sharded, "_check_slice"), (sharded, "_write_findings")):  # fmt: skip
        once = getattr(module, name)
        monkeypatch.setattr(module, name, lambda item, once=once: (once(item), once(item))[1])
    test = write(tmp_path / "test.csv", puzzles[300:450] + disguised(puzzles[:60], seed=8))
    same_as_local(tmp_path, monkeypatch, test, write(tmp_path / "train.csv", puzzles[:350]))


def test_the_command_on_dask_says_no_note(puzzles, tmp_path):
    """The audit no longer keeps the client reading: no `note:` line, and leaks exit 1."""
    from tests.conftest import command

    test = write(tmp_path / "test.csv", puzzles[:200])
    train = write(tmp_path / "train.csv", puzzles[150:300])
    out = tmp_path / "f.parquet"
    run = command(
        "validate", test, "--against", train, "-o", out, "--executor", "dask", "--workers", "1",
    )  # fmt: skip
    assert run.returncode == 1, run.stderr  # leaks are errors
    assert "note:" not in run.stderr
    assert pl.read_parquet(out).filter(pl.col("code") == "leak").height == 50


@pytest.mark.parametrize("held", ["validate", "validate-train"])
def test_on_a_running_cluster_a_worker_killed_mid_run_changes_nothing(puzzles, tmp_path, held):
    """A real scheduler and two worker processes: the worker holding the first batch of the
    input (or of TRAIN) is killed (kill -9); Dask gives its tasks to the other, and the leaks
    found (and every other finding) are a local run's."""
    test = write(tmp_path / "test.csv", puzzles[300:500] + disguised(puzzles[:80], seed=9))
    train = write(tmp_path / "train.csv", puzzles[:350])
    local, out = tmp_path / "local.parquet", tmp_path / "dask.parquet"
    _validate(test, local, train)
    args = ["validate", test, "-o", out, "--against", train, "--batch-size", BATCH]
    code, err = run_with_a_worker_killed(args, tmp_path, held, slice_rows=2 * BATCH)
    assert code == 1, err  # leaks: exit 1
    assert pl.read_parquet(out).equals(pl.read_parquet(local))


def test_a_training_input_at_a_url_is_read_by_the_workers(puzzles, server, tmp_path,
                                                          monkeypatch):  # fmt: skip
    """TRAIN at a URL read by ranges: the workers download its slices (each kept once, as
    the input's are) and the audit is a local run's."""
    write(server.folder / "train.csv", puzzles[:300], "t")
    test = write(tmp_path / "test.csv", puzzles[250:400] + disguised(puzzles[:30], seed=10))
    expected = same_as_local(tmp_path, monkeypatch, test, str(server / "train.csv"), fmt="csv")
    assert expected.against["exact"] == 50 and expected.against["in_disguise"] == 30


def test_a_training_input_the_workers_cannot_open_keeps_the_client_reading(puzzles, server,
                                                                           tmp_path):  # fmt: skip
    """TRAIN at a URL whose server takes no range requests: the workers cannot read slices
    of it, so this process reads (TRAIN twice, as a local run), says why, and finds what a
    local run finds."""
    from tests.conftest import command

    write(server.folder / "train.csv", puzzles[:300], "t")
    server.ranges = False
    test = write(tmp_path / "test.csv", puzzles[250:400])
    local, out = tmp_path / "local.parquet", tmp_path / "dask.parquet"
    _validate(test, local, str(server / "train.csv"))
    run = command("validate", test, "--against", server / "train.csv", "-o", out,
                  "--executor", "dask", "--workers", "1")  # fmt: skip
    assert run.returncode == 1, run.stderr  # leaks are errors
    assert [line for line in run.stderr.splitlines() if line.startswith("note:")] == [
        f"note: on Dask, this process reads {test} and writes the output itself (a training "
        "input (--against) is one the workers cannot read themselves); the workers check the "
        "batches it sends them"
    ]
    assert pl.read_parquet(out).equals(pl.read_parquet(local))
