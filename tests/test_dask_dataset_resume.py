"""`--resume` of a run whose output is a Parquet dataset folder (`-o DIR/`), as a single
file's: a client killed by `kill -9` mid-way, then `--resume`, ends with the folder an unbroken
run makes (timing columns aside); `--resume` of a folder that is complete already says so in
one line and leaves it as it is (no file rewritten, none added).

The clusters are `tests/test_dask.py`'s: a real scheduler and workers on 127.0.0.1, a worker
holding every batch from a given row on, so that the client is killed certainly mid-way.
"""

import json
import os
import subprocess
from pathlib import Path

import polars as pl
import pytest

from pipeline import generate
from pipeline.jobs.solve.job import solve_file
from tests.test_dask import BIN, TIMING, _finish, dask_cluster, wait_for

pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("dask-dataset-corpus") / "corpus.csv"
    generate(3000, seed=21).select("id", "puzzle", "solution").write_csv(path)
    return path


def _solve(corpus: Path, folder: Path, *extra: str) -> list[str]:
    """`sudoku-pipeline solve CORPUS -o FOLDER/` in batches of 250 rows (slices of 1,000)."""
    return [str(BIN / "sudoku-pipeline"), "solve", str(corpus), "-o", f"{folder}/", "--quiet",
            "--batch-size", "250", *extra]  # fmt: skip


def _files(folder: Path) -> dict[str, tuple[int, int]]:
    """Each file of `folder` with its inode and modification time: what a rewrite changes."""
    return {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in folder.iterdir()}


def same_folder(expected: Path, folder: Path) -> None:
    """`folder` is the dataset `expected` is: the same files, each of the same rows (timing
    aside), the same manifest but for what a run measures of itself; no checkpoint left."""
    ours, theirs = (json.loads((f / "_manifest.json").read_text()) for f in (expected, folder))
    assert theirs["files"] == ours["files"] and theirs["rows"] == ours["rows"]
    assert theirs["metadata"]["checkpoint"] == ours["metadata"]["checkpoint"]
    assert sorted(p.name for p in folder.iterdir()) == sorted(p.name for p in expected.iterdir())
    for entry in ours["files"]:
        left = pl.read_parquet(expected / entry["file"]).drop(TIMING)
        assert left.equals(pl.read_parquet(folder / entry["file"]).drop(TIMING)), entry
    assert not (folder.parent / f"{folder.name}.partial").exists()


def test_a_client_killed_mid_run_resumes_into_the_same_folder(corpus, tmp_path):
    unbroken, folder, log = tmp_path / "unbroken", tmp_path / "ds", tmp_path / "run.log"
    with dask_cluster(tmp_path / "cluster", hold_from_row={0: 1000}) as cluster:
        on = ("--executor", "dask", "--scheduler", cluster.address)
        with log.open("w") as err:
            run = subprocess.Popen(_solve(corpus, folder, *on), stderr=err)
        noted = tmp_path / "ds.partial" / "counts.jsonl"
        wait_for(lambda: cluster.held() and noted.exists() and noted.read_text(),
                 "a slice held, another noted done", run, log)  # fmt: skip
        run.kill()  # kill -9 of the client
        _finish(run, log)
    assert not folder.exists() and (tmp_path / "ds.partial").is_dir()
    with dask_cluster(tmp_path / "cluster2") as cluster:
        on = ("--executor", "dask", "--scheduler", cluster.address)
        whole = subprocess.run(_solve(corpus, unbroken, *on), capture_output=True, text=True)
        assert whole.returncode == 0, whole.stderr
        resumed = subprocess.run(_solve(corpus, folder, *on, "--resume"), capture_output=True,
                                 text=True)  # fmt: skip
        assert resumed.returncode == 0, resumed.stderr
        same_folder(unbroken, folder)
        before = _files(folder)
        again = subprocess.run(_solve(corpus, folder, *on, "--resume"), capture_output=True,
                               text=True)  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert again.stderr.strip().splitlines() == [
        f"note: {folder}/ is complete and its inputs and options are unchanged; left as it is"
    ]
    assert _files(folder) == before  # not one file rewritten, none added
    same_folder(unbroken, folder)


def test_resume_of_a_complete_folder_leaves_it_as_it_is(corpus, tmp_path, capfd):
    folder = tmp_path / "ds"
    first = solve_file(corpus, f"{folder}/", batch_size=700, workers=1, progress=False)
    before = _files(folder)
    capfd.readouterr()
    again = solve_file(corpus, f"{folder}/", resume=True, batch_size=700, workers=1,
                       progress=False)  # fmt: skip
    assert capfd.readouterr().err.strip().splitlines() == [
        f"note: {folder}/ is complete and its inputs and options are unchanged; left as it is"
    ]
    assert _files(folder) == before
    assert again.rows == first.rows == 3000 and again.verdicts == first.verdicts
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds"]  # no checkpoint, no lock left


def test_resume_of_another_runs_folder_runs_again(corpus, tmp_path, capfd):
    """A folder made with other options is not this run's work: `--resume` makes it again."""
    folder = tmp_path / "ds"
    solve_file(corpus, f"{folder}/", batch_size=700, workers=1, progress=False, solutions=1)
    capfd.readouterr()
    again = solve_file(corpus, f"{folder}/", resume=True, batch_size=700, workers=1,
                       progress=False)  # fmt: skip
    assert "is complete" not in capfd.readouterr().err
    assert again.resumed_rows == 0 and again.rows == 3000
    manifest = json.loads((folder / "_manifest.json").read_text())
    assert manifest["metadata"]["checkpoint"]["solutions"] == 2


class _Stop(BaseException):
    """A stop of the client (as a kill would) at a chosen point."""


def test_a_run_stopped_once_its_folder_is_in_place_is_complete(corpus, tmp_path, monkeypatch,
                                                              capfd):  # fmt: skip
    """Stopped after the folder is put in place, before its checkpoint is removed (a kill
    there): `--resume` finds the folder complete, leaves it as it is and clears the
    checkpoint, whose parts are the folder's files (hard links), not a second copy."""
    from pipeline.run.checkpoint import Checkpoint

    real = Checkpoint.remove

    def stop(self):  # a run starting over removes an old checkpoint first: not there
        if self.output.exists():
            raise _Stop
        real(self)

    folder = tmp_path / "ds"
    monkeypatch.setattr(Checkpoint, "remove", stop)
    with pytest.raises(_Stop):
        solve_file(corpus, f"{folder}/", batch_size=700, workers=1, progress=False)
    monkeypatch.undo()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds", "ds.partial"]
    before = _files(folder)
    capfd.readouterr()
    done = solve_file(corpus, f"{folder}/", resume=True, batch_size=700, workers=1,
                      progress=False)  # fmt: skip
    err = capfd.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"note: {folder}/ is complete"), err
    assert _files(folder) == before
    assert done.rows == 3000 and done.verdicts["solved"] == 3000
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds"]
    assert os.stat(folder / "part-00000.parquet").st_nlink == 1  # the checkpoint's link gone
