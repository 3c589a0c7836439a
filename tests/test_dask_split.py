"""split on Dask with no row through the client (issue 36): the workers keep their slices'
rows, shuffle them into the splits' buckets among themselves and write the splits' parts; the
client cuts from the small columns and joins. The splits and the manifest are a local run's.

The corpus holds what the cut and the shuffle must see across slices: copies in disguise of
earlier rows (one group), exact copies (dropped as repeats), rows with two solutions and
malformed rows (left out), a `rating` column (sudoku-extreme's layout) to stratify by.
Slices are 3 batches of 100 rows: 1,200 rows make 4 slices.
"""

import json

import numpy as np
import polars as pl
import pytest

from pipeline import generate
from pipeline.grid import format_grids, parse_puzzles
from pipeline.jobs.split.job import split_file
from pipeline.symmetry import random_symmetries
from tests.conftest import command
from tests.test_dask import refuse_on_the_client, run_with_a_worker_killed
from tests.test_dask_arrays import _same_folder

pytest.importorskip("distributed")

BATCH = 100
NAMES = ("train", "val", "test")
VARIES = ("wall_s", "rows_per_s", "workers", "executor", "created_at")  # how it ran, not what


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    made = generate(900, seed=37)
    rng = np.random.default_rng(37)
    puzzles = made["puzzle"].to_list()
    of = rng.integers(0, 900, 150)
    disguised = format_grids(random_symmetries(parse_puzzles(made["puzzle"]).grids[of], rng))
    copies = [puzzles[i] for i in rng.integers(0, 900, 100)]
    two = ["." * 81] * 10  # an empty grid: many solutions
    bad = ["not a puzzle"] * 10
    rows = [*puzzles, *pl.Series(disguised).to_list(), *copies, *two, *bad]
    order = rng.permutation(len(rows))
    frame = pl.DataFrame(
        {
            "source": ["gen"] * len(rows),
            "question": [rows[i] for i in order],
            "answer": [None] * len(rows),
            "rating": rng.integers(0, 50, len(rows)),
        }
    )
    path = tmp_path_factory.mktemp("dask-split") / "extreme.csv"
    frame.write_csv(path)
    return path


def _split(inputs, out, **options):
    return split_file(inputs, out, batch_size=BATCH, progress=False, **options)


def _no_row_through_the_client(monkeypatch) -> None:
    from pipeline.jobs.split.spill import KeptRows

    why = "the client kept rows: the split was not sharded"
    refuse_on_the_client(monkeypatch, why, (KeptRows, "add"))


def _same_split(local, dask, local_manifest, dask_manifest) -> None:
    for name in NAMES:
        expected = pl.read_parquet(local / f"{name}.parquet")
        got = pl.read_parquet(dask / f"{name}.parquet")
        assert got.equals(expected), name
    a, b = json.loads(local_manifest.to_json()), json.loads(dask_manifest.to_json())
    for key in (*VARIES, "output"):
        a.pop(key, None), b.pop(key, None)
    sums_a, sums_b = a.pop("sha256"), b.pop("sha256")  # row groups differ: other bytes
    assert sums_a.keys() == sums_b.keys()
    assert a == b


@pytest.mark.parametrize(
    "options",
    [
        {"seed": 3},
        {"seed": 4, "stratify": "rating", "fractions": "0.6,0.2,0.2"},
        {"seed": 5, "subsample": 300},
        {"seed": 6, "min_rating": 20},
    ],
    ids=["plain", "stratified", "subsample", "min-rating"],
)
def test_split_on_dask_equals_local(corpus, tmp_path, monkeypatch, options):
    local = tmp_path / "local"
    expected = _split(corpus, local, **options)
    assert expected.left_out["duplicate"] and expected.left_out["malformed"]  # across slices
    _no_row_through_the_client(monkeypatch)
    monkeypatch.setenv("SUDOKU_PIPELINE_SLICE_ROWS", str(3 * BATCH))
    out = tmp_path / "dask"
    manifest = _split(corpus, out, executor="dask", workers=2, **options)
    _same_split(local, out, expected, manifest)
    assert manifest.executor == "dask"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dask", "local"]  # nothing left


def test_several_inputs_name_their_source(corpus, tmp_path, monkeypatch):
    first, second = tmp_path / "a.csv", tmp_path / "b.csv"
    frame = pl.read_csv(corpus, infer_schema=False)
    frame.head(700).write_csv(first)
    frame.slice(700).write_csv(second)
    local = tmp_path / "local"
    expected = _split([first, second], local, seed=8)
    _no_row_through_the_client(monkeypatch)
    monkeypatch.setenv("SUDOKU_PIPELINE_SLICE_ROWS", str(2 * BATCH))
    out = tmp_path / "dask"
    manifest = _split([first, second], out, seed=8, executor="dask", workers=2)
    _same_split(local, out, expected, manifest)
    sources = pl.read_parquet(out / "train.parquet")["source"].unique().sort().to_list()
    assert sources == [str(first), str(second)]


def test_an_empty_corpus_on_dask(tmp_path):
    path = tmp_path / "empty.csv"
    path.write_text("puzzle\n")
    expected = _split(path, tmp_path / "local", seed=1)
    manifest = _split(path, tmp_path / "dask", seed=1, executor="dask", workers=1)
    _same_split(tmp_path / "local", tmp_path / "dask", expected, manifest)


@pytest.mark.parametrize(
    "options",
    [
        {"seed": 3, "format": "npy"},
        {"seed": 4, "format": "hrm", "augment": 2},
        {"seed": 5, "format": "hrm", "augment": 1, "subsample": 300},
    ],
    ids=["npy", "hrm-augmented", "hrm-subsample"],
)
def test_arrays_on_dask_equal_local(corpus, tmp_path, monkeypatch, options):
    """Folders of arrays too: the workers write their rows (`run.join_arrays`), byte for byte
    the local run's files (`meta.json`'s run figures aside)."""
    local = tmp_path / "local"
    expected = _split(corpus, local, **options)
    _no_row_through_the_client(monkeypatch)
    monkeypatch.setenv("SUDOKU_PIPELINE_SLICE_ROWS", str(3 * BATCH))
    out = tmp_path / "dask"
    manifest = _split(corpus, out, executor="dask", workers=2, **options)
    for name in NAMES:
        _same_folder(local / name, out / name)
    a, b = json.loads(expected.to_json()), json.loads(manifest.to_json())
    for key in (*VARIES, "output"):
        a.pop(key, None), b.pop(key, None)
    sums_a, sums_b = a.pop("sha256"), b.pop("sha256")  # meta.json: its run figures differ
    assert {k: v for k, v in sums_a.items() if not k.endswith("meta.json")} == {
        k: v for k, v in sums_b.items() if not k.endswith("meta.json")
    }
    assert a == b
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dask", "local"]  # nothing left


def test_arrays_on_dask_say_nothing_of_the_client(corpus, tmp_path):
    run = command("split", corpus, "-o", tmp_path / "out", "--format", "npy",
                  "--executor", "dask", "--workers", "1")  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "note:" not in run.stderr


def test_a_split_of_a_url_on_dask(server, corpus, tmp_path, monkeypatch):
    """The workers read the URL's slices and take its sha256 for the manifest."""
    import shutil

    shutil.copy(corpus, server.folder / "extreme.csv")
    expected = _split(corpus, tmp_path / "local", seed=9)
    _no_row_through_the_client(monkeypatch)
    monkeypatch.setenv("SUDOKU_PIPELINE_SLICE_ROWS", str(4 * BATCH))
    url = server / "extreme.csv"
    manifest = _split(url, tmp_path / "dask", seed=9, executor="dask", workers=2)
    for name in NAMES:  # `source`: one input, the input's own column
        local = pl.read_parquet(tmp_path / "local" / f"{name}.parquet")
        assert pl.read_parquet(tmp_path / "dask" / f"{name}.parquet").equals(local)
    (given,) = manifest.inputs
    (local_input,) = expected.inputs
    assert (
        given["sha256"] == local_input["sha256"]
        and given["size_bytes"] == local_input["size_bytes"]
    )
    assert given["path"] == str(url)


def test_a_full_disk_on_a_worker_is_one_line_and_leaves_nothing(corpus, tmp_path, monkeypatch):
    import pipeline.run.scratch as scratch
    from pipeline.errors import InputError

    keep = scratch.keep_bytes

    def full(path, data):
        if "routed" in path.name:
            raise OSError(28, "No space left on device")
        keep(path, data)

    monkeypatch.setattr(scratch, "keep_bytes", full)
    with pytest.raises(InputError, match="No space left on device on the worker at"):
        _split(corpus, tmp_path / "out", seed=1, executor="dask", workers=2)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("fmt", ["parquet", "hrm"])
def test_on_a_running_cluster_a_worker_killed_mid_run_changes_nothing(corpus, tmp_path, fmt):
    """A real scheduler and two worker processes: the worker holding a slice's batch is
    killed (kill -9); Dask gives its tasks to the other, and the splits are a local run's
    (HRM's folders written by the worker processes, apart from the client)."""
    local, out = tmp_path / "local", tmp_path / "dask"
    _split(corpus, local, seed=2, format=fmt)
    args = ["split", corpus, "-o", out, "--seed", 2, "--batch-size", BATCH, "--format", fmt]
    code, err = run_with_a_worker_killed(args, tmp_path, "split", slice_rows=3 * BATCH)
    assert code == 0, err
    for name in NAMES:
        if fmt == "hrm":
            _same_folder(local / name, out / name)
            continue
        assert pl.read_parquet(out / f"{name}.parquet").equals(
            pl.read_parquet(local / f"{name}.parquet")
        )


def test_hrm_from_stdin_on_a_scheduler_started_apart(corpus, tmp_path):
    """The client writes HRM's folders itself here (a stream: not sliced), making the copies
    on this machine's threads: their count is this machine's, not the cluster's workers'
    (unknown until connected; it was 0: "workers must be between 1 and 1,024, not 0")."""
    from tests.test_dask import dask_cluster

    local = tmp_path / "local"
    _split(corpus, local, seed=2, format="hrm", augment=1)
    out = tmp_path / "dask"
    with dask_cluster(tmp_path / "cluster", workers=1) as cluster:
        run = command("split", "-", "-o", out, "--format", "hrm", "--augment", 1, "--seed", 2,
                      "--batch-size", BATCH, "--executor", "dask", "--scheduler",
                      cluster.address, "--quiet", input=corpus.read_text())  # fmt: skip
    assert run.returncode == 0, run.stderr
    for name in NAMES:  # the same arrays (`meta.json` names the input: here, stdin)
        files = sorted(p.name for p in (local / name).iterdir() if p.name != "meta.json")
        assert files == sorted(p.name for p in (out / name).iterdir() if p.name != "meta.json")
        for file in files:
            assert (out / name / file).read_bytes() == (local / name / file).read_bytes(), file


def test_a_relative_output_on_a_real_cluster(corpus, tmp_path):
    """`-o out` in the client's folder: worker processes, elsewhere, write the splits'
    folders where the client makes them, not under their own working folder."""
    from tests.test_dask import dask_cluster

    local = tmp_path / "local"
    _split(corpus, local, seed=2, format="npy")
    here = tmp_path / "here"
    here.mkdir()
    with dask_cluster(tmp_path / "cluster", workers=1) as cluster:
        run = command("split", corpus, "-o", "out", "--format", "npy", "--seed", 2,
                      "--batch-size", BATCH, "--executor", "dask", "--scheduler",
                      cluster.address, "--quiet", cwd=here)  # fmt: skip
    assert run.returncode == 0, run.stderr
    for name in NAMES:
        _same_folder(local / name, here / "out" / name)
