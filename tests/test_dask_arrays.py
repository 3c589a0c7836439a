"""Folders of arrays from the workers (issue 36): `augment --format npy|hrm` on Dask, the
workers reading their slices and keeping each batch's arrays as one part file, then writing
the parts' rows into the folder's files at the places the client made for them
(`run.join_arrays`): no row through the client.

First the laying out itself, with no cluster: a folder laid out from part files, in any
order, a part written twice, is byte for byte the folder the same batches appended make
(nulls arriving late, dictionary columns whose labels change from batch to batch). Then whole
runs on Dask against local runs.
"""

import json
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pytest

from pipeline.io.array_folders import NpyFolder
from pipeline.io.array_parts import array_part_bytes, read_footer
from pipeline.io.arrays import column_arrays
from pipeline.io.hrm_folders import HrmArrays, HrmSet, encode_cells
from pipeline.run.join_arrays import array_part_of, finish, lay_out

pytest.importorskip("distributed")

PUZZLE = "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79"


def _batches() -> list[pa.Table]:
    """Three batches of one schema: a grid, a number whose nulls come in the second batch
    only, a fixed-size list, and a dictionary column whose labels are new, then reordered."""
    grade = pa.dictionary(pa.int8(), pa.string())
    relabel = pa.list_(pa.int8(), 3)

    def batch(n: int, nulls: bool, labels: list[str], codes: list[int]) -> pa.Table:
        rating = [None if nulls and i % 2 else float(i) for i in range(n)]
        return pa.table(
            {
                "puzzle": [PUZZLE] * n,
                "rating": pa.array(rating, pa.float64()),
                "copy": pa.array([None if nulls and i == 0 else i for i in range(n)], pa.int32()),
                "relabel": pa.array([[i, i + 1, i + 2] for i in range(n)], relabel),
                "grade": pa.DictionaryArray.from_arrays(
                    pa.array(codes, pa.int8()), pa.array(labels)
                ).cast(grade),
                "id": [f"r{i}" for i in range(n)],  # text: skipped
            }
        )

    return [
        batch(3, False, ["easy"], [0, 0, 0]),
        batch(4, True, ["easy", "hard"], [1, 0, 1, 1]),  # labels grown: codes kept
        batch(2, False, ["fiendish", "easy"], [0, 1]),  # reordered: codes renumbered
    ]


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _parts(tmp_path: Path, datas: list) -> list[Path]:
    paths = []
    for i, data in enumerate(datas):
        path = tmp_path / f"part-{i}.arrays"
        path.write_bytes(array_part_of(data))
        paths.append(path)
    return paths


def _backwards_and_twice(fn, items):
    """A mapper as a cluster may be: the parts written last first, each twice."""
    for item in reversed(list(items)):
        fn(item)
        yield fn(item)


def _joined(paths: list[Path], folder: Path, fmt: str, schema: pa.Schema) -> None:
    finish(lay_out(paths, folder, fmt, schema, _backwards_and_twice), folder, fmt, {"run": 1})


def test_a_folder_laid_out_from_parts_is_the_folder_appended(tmp_path):
    batches = _batches()
    schema = batches[0].schema
    with NpyFolder(tmp_path / "appended", schema) as out:
        for table in batches:
            out.append(column_arrays(table))
        out.commit({"run": 1})
    _joined(_parts(tmp_path, [column_arrays(t) for t in batches]), tmp_path / "joined", "npy",
            schema)  # fmt: skip
    assert _files(tmp_path / "joined") == _files(tmp_path / "appended")
    meta = json.loads((tmp_path / "joined" / "meta.json").read_text())
    assert meta["labels"]["grade"] == ["easy", "hard", "fiendish"]
    assert np.load(tmp_path / "joined" / "grade.npy").tolist() == [0, 0, 0, 1, 0, 1, 1, 2, 0]
    valid = np.load(tmp_path / "joined" / "copy.valid.npy").tolist()
    assert valid == [True] * 3 + [False] + [True] * 5


def test_an_hrm_split_laid_out_from_parts_is_the_split_appended(tmp_path):
    batches = _batches()
    extras = pa.schema([f for f in batches[0].schema if f.name != "puzzle"])
    datas = []
    for table in batches:
        cells = column_arrays(table)["puzzle"]
        n = table.num_rows
        sizes = np.array([1] * (n % 2) + [2] * (n // 2), np.int64)  # groups of 1 and 2
        datas.append(
            HrmArrays(encode_cells(cells), encode_cells(cells), sizes, column_arrays(table, ()))
        )
    out = tmp_path / "appended" / "train"
    out.parent.mkdir()
    with HrmSet(out, extras) as hrm:
        for data in datas:
            hrm.append(data.inputs, data.labels, data.sizes, data.extras, encoded=True)
        hrm.commit({"run": 1})
    joined = tmp_path / "joined" / "train"
    joined.parent.mkdir()
    _joined(_parts(tmp_path, datas), joined, "hrm", extras)
    assert _files(joined) == _files(out)
    assert (joined.parent / "identifiers.json").read_text() == '["<blank>"]'
    assert np.load(joined / "all__group_indices.npy").tolist() == [0, 1, 3, 5, 7, 9]
    assert np.load(joined / "all__puzzle_indices.npy").tolist() == list(range(10))


def test_a_folder_not_laid_out_whole_leaves_nothing(tmp_path):
    batches = _batches()
    parts = _parts(tmp_path, [column_arrays(t) for t in batches])

    def failing(fn, items):
        for item in items:
            yield fn(item)
            raise OSError(28, "No space left on device")

    with pytest.raises(OSError):
        lay_out(parts, tmp_path / "out", "npy", batches[0].schema, failing)
    assert sorted(p.name for p in tmp_path.iterdir()) == [p.name for p in parts]


def test_a_part_file_reads_back_its_footer(tmp_path):
    blocks = {"a": np.arange(6, dtype=np.uint16).reshape(3, 2), "b": np.array([True, False])}
    path = tmp_path / "p.arrays"
    path.write_bytes(array_part_bytes(blocks, {"b": ["x"]}))
    footer = read_footer(path)
    assert footer.rows("a") == 3 and footer.blocks["b"][2] == np.bool_
    assert footer.labels == {"b": ["x"]}
    path.write_bytes(path.read_bytes()[:-1])
    with pytest.raises(ValueError, match="not a part of a folder of arrays"):
        read_footer(path)


# --- on Dask ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """A Parquet corpus in row groups of 170 rows, some rows not puzzles (left out), a rating
    with nulls in a few row groups only, and a column of text (not in the arrays)."""
    from pipeline import generate

    frame = generate(900, seed=31).select("id", "puzzle", "solution")
    n = pl.int_range(pl.len())
    frame = frame.with_columns(
        puzzle=pl.when(n % 11 == 0).then(pl.lit("1" * 81)).otherwise("puzzle"),
        rating=pl.when(n.is_between(400, 420)).then(None).otherwise(n.cast(pl.Float64)),
        level=pl.when(n < 500).then(pl.lit("easy")).otherwise(pl.lit("hard")).cast(pl.Categorical),
    )
    path = tmp_path_factory.mktemp("arrays") / "corpus.parquet"
    frame.write_parquet(path, row_group_size=170)
    return path


def _no_row_through_the_client(monkeypatch) -> None:
    """Fail a run whose client would append a batch to the folder (not sliced)."""
    from pipeline.io.writers import PartWriter
    from pipeline.run.checkpoint import Checkpoint

    def refuse(*args):
        raise AssertionError("the client wrote a part: the run was not sliced")

    monkeypatch.setattr(PartWriter, "add", refuse)
    monkeypatch.setattr(Checkpoint, "add", refuse)


RUN_ONLY = {"wall_s", "rows_per_s", "started_at", "executor", "scheduler", "workers", "cpu"}


def _same_folder(local: Path, made: Path) -> None:
    """The same files, the same bytes in each but `meta.json`, whose run's figures (how
    fast, on what) differ."""
    expected, got = _files(local), _files(made)
    assert expected.keys() == got.keys()
    for name in expected:
        if name != "meta.json":
            assert got[name] == expected[name], name
    metas = [json.loads(files["meta.json"]) for files in (expected, got)]
    for meta in metas:
        run = meta.pop("sudoku_pipeline")
        meta["run"] = {k: v for k, v in run.items() if k not in RUN_ONLY}
    assert metas[0] == metas[1]


@pytest.mark.parametrize("fmt", ["npy", "hrm"])
def test_augment_to_arrays_on_workers_equals_a_local_run(corpus, tmp_path, monkeypatch, fmt):
    from pipeline.jobs.augment.job import augment_file

    copies = 2 if fmt == "hrm" else 3  # hrm: groups of 3, the puzzle and its copies
    local = tmp_path / "local" / "train"
    local.parent.mkdir()
    expected = augment_file(corpus, local, copies=copies, seed=5, batch_size=50, format=fmt,
                            workers=1, progress=False)  # fmt: skip
    _no_row_through_the_client(monkeypatch)
    out = tmp_path / "dask" / "train"
    out.parent.mkdir()
    summary = augment_file(corpus, out, copies=copies, seed=5, batch_size=50, format=fmt,
                           executor="dask", workers=2, progress=False)  # fmt: skip
    _same_folder(local, out)
    assert (summary.copies, summary.left_out, summary.skipped_columns) == (
        expected.copies,
        expected.left_out,
        expected.skipped_columns,
    )
    assert summary.left_out and summary.skipped_columns  # the text column `level`
    assert not out.with_name(out.name + ".partial").exists()
    if fmt == "hrm":
        assert (out.parent / "identifiers.json").read_text() == '["<blank>"]'
    else:
        assert np.load(out / "rating.valid.npy").sum() < len(np.load(out / "rating.npy"))


def test_augment_to_npy_task_run_twice_keeps_its_rows_once(corpus, tmp_path, monkeypatch):
    import pipeline.run.sliced as sliced
    from pipeline.jobs.augment.job import augment_file

    local = tmp_path / "local"
    augment_file(corpus, local, copies=2, seed=1, batch_size=50, format="npy", workers=1,
                 progress=False)  # fmt: skip
    once = sliced.slice_task
    monkeypatch.setattr(sliced, "slice_task", lambda *a: (once(*a), once(*a))[1])
    _no_row_through_the_client(monkeypatch)
    out = tmp_path / "dask"
    augment_file(corpus, out, copies=2, seed=1, batch_size=50, format="npy", executor="dask",
                 workers=2, progress=False)  # fmt: skip
    _same_folder(local, out)


def test_augment_to_npy_of_nothing_on_dask_is_the_columns_alone(tmp_path):
    from pipeline.jobs.augment.job import augment_file

    bad = tmp_path / "bad.csv"
    pl.DataFrame({"puzzle": ["1" * 81] * 30}).write_csv(bad)
    outs = {}
    for executor in ("local", "dask"):
        outs[executor] = tmp_path / executor
        summary = augment_file(bad, outs[executor], copies=2, seed=1, format="npy",
                               executor=executor, workers=2, progress=False)  # fmt: skip
        assert summary.copies == 0
    _same_folder(outs["local"], outs["dask"])


def test_augment_to_hrm_on_a_real_cluster_with_a_worker_killed(corpus, tmp_path):
    """Worker processes apart from the client write the folder's files; one of them killed
    (kill -9) while it holds a batch changes nothing."""
    from pipeline.jobs.augment.job import augment_file
    from tests.test_dask import run_with_a_worker_killed

    local = tmp_path / "local" / "train"
    local.parent.mkdir()
    augment_file(corpus, local, copies=2, seed=5, batch_size=50, format="hrm", workers=1,
                 progress=False)  # fmt: skip
    out = tmp_path / "dask" / "train"
    out.parent.mkdir()
    args = ["augment", corpus, "-o", out, "--format", "hrm", "--copies", "2", "--seed", "5",
            "--batch-size", "50"]  # fmt: skip
    code, stderr = run_with_a_worker_killed(args, tmp_path, "augment", slice_rows=200)
    assert code == 0, stderr
    _same_folder(local, out)
    assert not out.with_name(out.name + ".partial").exists()


def test_a_relative_output_on_a_real_cluster(corpus, tmp_path):
    """`-o train` in the client's folder: the worker processes, elsewhere, write the folder's
    files where the client makes them, not under their own working folder."""
    from pipeline.jobs.augment.job import augment_file
    from tests.conftest import command
    from tests.test_dask import dask_cluster

    local = tmp_path / "local"
    augment_file(corpus, local, copies=1, seed=5, batch_size=50, format="npy", workers=1,
                 progress=False)  # fmt: skip
    here = tmp_path / "here"
    here.mkdir()
    with dask_cluster(tmp_path / "cluster", workers=1) as cluster:
        run = command("augment", corpus, "-o", "train", "--format", "npy", "--copies", 1,
                      "--seed", 5, "--batch-size", 50, "--executor", "dask", "--scheduler",
                      cluster.address, "--quiet", cwd=here)  # fmt: skip
    assert run.returncode == 0, run.stderr
    _same_folder(local, here / "train")
