"""`split` through the job (`split_file`: threads, processes, Dask; Parquet and npy folders)
and the command line, on the corpus of test_split.py (planted disguises, repeats, bad rows)."""

import hashlib
import json
from collections import Counter

import numpy as np
import polars as pl
import pytest

import pipeline
from pipeline.jobs.split import split, split_file
from tests.conftest import assert_one_line_error, cli
from tests.test_split import BASE, COPIES, CORPUS, DISGUISED, _strings

# -- files, workers, executors ------------------------------------------------------------


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("split") / "corpus.csv"
    CORPUS.write_csv(path)
    return path


def _read(folder) -> dict[str, pl.DataFrame]:
    manifest = json.loads((folder / "manifest.json").read_text())
    return {
        name: pl.read_parquet(folder / f"{name}.parquet") for name in manifest["options"]["names"]
    }


def test_the_file_job_writes_the_splits_and_a_manifest_that_defends_them(corpus_file, tmp_path):
    out = tmp_path / "splits"

    manifest = split_file(corpus_file, out, fractions="0.5,0.25,0.25", seed=11, progress=False)

    frames = _read(out)
    in_memory = split(CORPUS, fractions="0.5,0.25,0.25", seed=11)
    for name, frame in frames.items():  # the file job and its twin agree (CSV columns: text)
        assert frame.equals(in_memory[name].with_columns(pl.col("base").cast(pl.String))), name
    written = json.loads((out / "manifest.json").read_text())
    assert (
        written["splits"]["train"]["rows"]
        == len(frames["train"])
        == manifest.splits["train"]["rows"]
    )
    assert written["left_out"]["duplicate"] == 3 and written["left_out"]["multiple"] == 2
    assert written["inputs"][0]["size_bytes"] == corpus_file.stat().st_size
    assert len(written["inputs"][0]["sha256"]) == 64
    assert written["version"] == pipeline.__version__ and written["options"]["seed"] == 11
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "test.parquet",
                                                     "train.parquet", "val.parquet"]  # fmt: skip
    assert not list(tmp_path.glob(".splits*"))  # no lock or temporary folder left
    for name, digest in written["sha256"].items():
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == digest
    assert sorted(written["sha256"]) == ["test.parquet", "train.parquet", "val.parquet"]


def test_the_same_seed_gives_the_same_files_on_any_workers_batches_and_processes(
    corpus_file, tmp_path
):
    runs = [dict(workers=1, batch_size=1000), dict(workers=2, batch_size=37),
            dict(workers=2, batch_size=100, executor="processes")]  # fmt: skip
    results = []
    for i, run in enumerate(runs):
        split_file(corpus_file, tmp_path / f"s{i}", seed=5, progress=False, **run)
        results.append(_read(tmp_path / f"s{i}"))
    for other in results[1:]:
        for name in results[0]:
            assert results[0][name].equals(other[name]), name


def test_the_dask_executor_gives_the_same_files(corpus_file, tmp_path):
    pytest.importorskip("distributed")
    split_file(corpus_file, tmp_path / "local", seed=5, progress=False)
    split_file(corpus_file, tmp_path / "dask", seed=5, progress=False, batch_size=64,
               executor="dask", workers=2)  # fmt: skip

    local, dask = _read(tmp_path / "local"), _read(tmp_path / "dask")
    for name in local:
        assert local[name].equals(dask[name]), name


def test_npy_folders_load_in_numpy(corpus_file, tmp_path):
    out = tmp_path / "arrays"

    split_file(corpus_file, out, fractions=(0.5, 0.5), seed=2, format="npy", progress=False)

    frames = split(CORPUS, fractions=(0.5, 0.5), seed=2)
    for name, frame in frames.items():
        puzzles = np.load(out / name / "puzzle.npy")
        solutions = np.load(out / name / "solution.npy")
        groups = np.load(out / name / "group.npy")
        assert puzzles.dtype == solutions.dtype == np.uint8
        assert puzzles.shape == solutions.shape == (len(frame), 81)
        assert _strings(puzzles) == frame["puzzle"].to_list()
        assert _strings(solutions) == frame["solution"].to_list()
        assert groups.tolist() == frame["group"].to_list()
        assert ((puzzles == 0) | (puzzles == solutions)).all()
    written = json.loads((out / "manifest.json").read_text())["sha256"]
    assert "train/puzzle.npy" in written and "test/meta.json" in written


def test_several_inputs_are_one_corpus_with_a_source(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    BASE.head(60).write_csv(a)
    BASE.slice(40, 80).write_csv(b)  # rows 40..59 repeat a's

    manifest = split_file([a, b], tmp_path / "out", fractions=(0.5, 0.5), progress=False)

    assert manifest.left_out["duplicate"] == 20 and manifest.rows_kept == 120
    frames = _read(tmp_path / "out")
    sources = Counter(pl.concat(frames.values())["source"].to_list())
    assert sources == {str(a): 60, str(b): 60}


# -- the command line -----------------------------------------------------------------------


def test_cli_split_prints_the_manifest_as_json(corpus_file, tmp_path):
    result = cli("split", corpus_file, "-o", tmp_path / "out", "--fractions", "0.8,0.2",
                 "--names", "fit,holdout", "--seed", "3", "--json")  # fmt: skip

    assert result.exit_code == 0, result.stderr
    printed = json.loads(result.stdout)
    assert list(printed["splits"]) == ["fit", "holdout"]
    assert (tmp_path / "out" / "holdout.parquet").exists()


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--fractions", "0.5,0.6"], "sum to 1"),
        (["--fractions", "0.25,0.25,0.25,0.25"], "--names"),
        (["--names", "a,b"], "3 fractions need 3 names"),
    ],
)
def test_cli_bad_options_are_one_line_and_exit_2(corpus_file, tmp_path, args, fragment):
    result = cli("split", corpus_file, "-o", tmp_path / "out", *args)

    assert result.exit_code == 2
    assert_one_line_error(result.stderr, fragment)
    assert not (tmp_path / "out").exists()


def test_cli_needs_an_output_folder(corpus_file):
    result = cli("split", corpus_file)

    assert result.exit_code == 2
    assert_one_line_error(result.stderr, "-o DIR")


def test_a_folder_of_the_users_is_replaced_only_with_force(corpus_file, tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "old.parquet").write_text("an earlier split of another tool")

    refused = cli("split", corpus_file, "-o", out)
    assert refused.exit_code == 2
    assert_one_line_error(refused.stderr, "not empty", "--force")
    assert (out / "old.parquet").exists()

    again = cli("split", corpus_file, "-o", out, "--force", "-q")
    assert again.exit_code == 0, again.stderr
    assert not (out / "old.parquet").exists() and (out / "train.parquet").exists()
    rerun = cli("split", corpus_file, "-o", out, "--seed", "9", "-q")  # its own: replaced
    assert rerun.exit_code == 0, rerun.stderr
    assert json.loads((out / "manifest.json").read_text())["options"]["seed"] == 9


def test_a_folder_of_other_work_is_never_deleted_even_with_force(corpus_file, tmp_path):
    out = tmp_path / "work"
    (out / "notes").mkdir(parents=True)
    (out / "notes" / "todo.txt").write_text("keep me")

    refused = cli("split", corpus_file, "-o", out, "--force")

    assert refused.exit_code == 2
    assert_one_line_error(refused.stderr, "other than a split's", "even with --force")
    assert (out / "notes" / "todo.txt").read_text() == "keep me"


def test_a_file_or_a_folder_holding_the_input_is_refused(corpus_file, tmp_path):
    file = tmp_path / "file"
    file.write_text("x")
    assert_one_line_error(cli("split", corpus_file, "-o", file).stderr, "is a file")
    assert_one_line_error(cli("split", corpus_file, "-o", corpus_file.parent, "--force").stderr,
                          "holds the input")  # fmt: skip
    assert file.read_text() == "x"


def test_inputs_where_nothing_is_kept_give_empty_splits_of_the_same_columns(tmp_path):
    bad, empty = tmp_path / "bad.csv", tmp_path / "empty.csv"
    bad.write_text("puzzle\nabc\n12\n")
    empty.write_text("puzzle\n")

    manifest = split_file([bad, empty], tmp_path / "out", fractions=(0.5, 0.5), progress=False)

    assert manifest.left_out["malformed"] == 2 and manifest.rows_kept == 0
    assert [i["rows"] for i in manifest.inputs] == [2, 0]
    train = pl.read_parquet(tmp_path / "out" / "train.parquet")
    assert train.columns == ["puzzle", "solution", "clues", "source", "row", "group"]
    assert train.is_empty()


def test_a_second_run_on_the_same_folder_is_refused_while_the_first_holds_it(corpus_file, tmp_path):
    from pipeline.errors import InputError
    from pipeline.io.sidecars import OutputLock

    out = tmp_path / "splits"
    with OutputLock(out), pytest.raises(InputError, match="another run"):
        split_file(corpus_file, out, progress=False)
    assert not out.exists()


def test_what_a_killed_run_left_beside_the_folder_is_cleared(corpus_file, tmp_path):
    dead = 4_194_000  # above any PID this machine gives out
    left = [tmp_path / f".splits.tmp-{dead}", tmp_path / f".splits.old-{dead}"]
    for folder in left:
        folder.mkdir()
        (folder / "train.parquet").write_text("half")

    split_file(corpus_file, tmp_path / "splits", progress=False)

    assert not any(folder.exists() for folder in left)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["splits"]


def test_stdin_is_split_and_named_without_a_checksum(corpus_file, tmp_path):
    from tests.conftest import command

    done = command("split", "-", "-o", tmp_path / "out", "--fractions", "0.5,0.5", "--json",
                   input=corpus_file.read_text())  # fmt: skip

    assert done.returncode == 0, done.stderr
    manifest = json.loads(done.stdout)
    assert manifest["inputs"][0]["sha256"] is None and manifest["inputs"][0]["rows"] == len(CORPUS)
    assert manifest["rows_kept"] == len(BASE) + DISGUISED * COPIES
