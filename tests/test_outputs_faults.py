"""Outputs under faults: nothing the user owns is deleted or written over (a folder or file
that looks like a checkpoint or the lock, an input, a link's target of somebody else's),
every job takes the output's lock, what killed runs left is cleared and nothing a running one
holds, and a rerun replaces its own earlier output. (Room and names: test_outputs_room.py;
columns text cannot hold: test_text_columns.py.)"""

import os
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

from pipeline import generate
from pipeline.errors import InputError
from pipeline.io.output import OutputLock
from pipeline.jobs.generate.job import generate_file
from tests.conftest import COMMAND, assert_one_line_error, cli, linux_only

CORPUS = generate(30, seed=8)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    path = tmp_path / "corpus.csv"
    CORPUS.write_csv(path)
    return path


def names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def dead_pid() -> int:
    """The id of a process that has ended (Linux gives ids in turn: not reused soon)."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    return int(done.stdout)


# --- what looks like a checkpoint but is the user's -------------------------------------------


def test_a_folder_of_the_users_named_like_the_checkpoint_is_never_deleted(tmp_path, corpus):
    folder = tmp_path / "out.parquet.partial"
    folder.mkdir()
    (folder / "notes.txt").write_text("my notes")

    for force in ((), ("--force",)):
        result = cli("solve", corpus, "-o", tmp_path / "out.parquet", *force)

        assert result.exit_code == 2, result.output
        assert_one_line_error(result.stderr, str(folder), "not a checkpoint of sudoku-pipeline",
                              "move it away")  # fmt: skip
        assert "discarding" not in result.stderr
    assert (folder / "notes.txt").read_text() == "my notes"
    assert names(tmp_path) == ["corpus.csv", "out.parquet.partial"]


def test_a_file_of_the_users_named_like_the_checkpoint_is_one_line_and_kept(tmp_path, corpus):
    mine = tmp_path / "out.parquet.partial"
    mine.write_text("mine")

    result = cli("solve", corpus, "-o", tmp_path / "out.parquet")

    assert result.exit_code == 2, result.output
    assert_one_line_error(result.stderr, str(mine), "not a checkpoint of sudoku-pipeline")
    assert mine.read_text() == "mine"
    assert names(tmp_path) == ["corpus.csv", "out.parquet.partial"]


def test_an_empty_or_own_stale_checkpoint_is_still_started_over(tmp_path, corpus):
    out = tmp_path / "out.parquet"
    folder = tmp_path / "out.parquet.partial"
    folder.mkdir()  # what a kill -9 between the folder and its run.json leaves
    assert cli("solve", corpus, "-o", out).exit_code == 0
    folder.mkdir()
    (folder / "run.json").write_text("{}")
    (folder / f".part-000000000000-7-0-0-00000000.parquet.tmp-{dead_pid()}").write_bytes(b"x")

    result = cli("solve", corpus, "-o", out)

    assert result.exit_code == 0, result.output
    assert "note: starting over; discarding the checkpoint" in result.stderr
    assert names(tmp_path) == ["corpus.csv", "out.parquet"]


# --- inputs -----------------------------------------------------------------------------------


def test_bench_never_writes_over_its_input(tmp_path, corpus):
    data = tmp_path / "solved.parquet"
    assert cli("solve", corpus, "-o", data).exit_code == 0  # a result of this tool: replaceable
    before = data.read_bytes()

    result = cli("bench", data, "-o", data, "--strategy", "fast", "--repeats", 1, "-q")

    assert result.exit_code == 2, result.output
    assert_one_line_error(result.stderr, "is the input", "will not write over an input")
    assert data.read_bytes() == before


# --- one run per output -----------------------------------------------------------------------


def test_generate_and_bench_take_the_output_lock(tmp_path, corpus):
    for name in ("g.parquet", "b.parquet"):
        out = tmp_path / name
        with OutputLock(out):  # as a running solve holds it
            if name == "g.parquet":
                result = cli("generate", 5, "-o", out)
            else:
                result = cli("bench", corpus, "-o", out, "--strategy", "fast", "--repeats", 1)
        assert result.exit_code == 2, result.output
        assert_one_line_error(result.stderr, str(out), "another run is writing this output")
        assert not out.exists()
    assert names(tmp_path) == ["corpus.csv"]


@linux_only
def test_a_solve_started_on_a_running_generates_output_refuses_and_deletes_nothing(
    tmp_path, corpus
):
    out = tmp_path / "g.parquet"
    run = subprocess.Popen([*COMMAND, "generate", "200000", "-o", str(out)],
                           stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not list(tmp_path.glob(".g.parquet.tmp-*")):  # generate is writing
            assert time.monotonic() < deadline and run.poll() is None, run.stderr
            time.sleep(0.02)
        temporary = list(tmp_path.glob(".g.parquet.tmp-*"))

        result = cli("solve", corpus, "-o", out)

        assert result.exit_code == 2, result.output
        assert_one_line_error(result.stderr, "another run is writing this output")
        assert all(t.exists() for t in temporary)
    finally:
        run.terminate()
        run.communicate(timeout=60)


def test_only_temporary_files_of_ended_runs_are_cleared(tmp_path, corpus):
    alive = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                             stdin=subprocess.PIPE)  # fmt: skip
    try:
        running = tmp_path / f".out.parquet.tmp-{alive.pid}"
        running.write_bytes(b"another writer's")
        ended = tmp_path / f".out.parquet.tmp-{dead_pid()}"
        ended.write_bytes(b"left by a kill -9")

        assert cli("solve", corpus, "-o", tmp_path / "out.parquet").exit_code == 0

        assert running.read_bytes() == b"another writer's"
        assert not ended.exists()
    finally:
        alive.communicate(b"")


# --- generate's options -----------------------------------------------------------------------


def test_a_negative_seed_is_one_line_before_any_work(tmp_path):
    result = cli("generate", 5, "-o", tmp_path / "g.csv", "--seed", -1)

    assert result.exit_code == 2, result.output
    assert_one_line_error(result.stderr, "seed", "-1")
    assert names(tmp_path) == []
    with pytest.raises(ValueError, match="seed must be"):
        generate(5, seed=-1)
    with pytest.raises(InputError, match="seed must be"):
        generate_file(5, tmp_path / "g.csv", seed=-1)


# --- links ------------------------------------------------------------------------------------


@pytest.mark.parametrize("job", ["solve", "generate"])
def test_an_output_through_a_link_is_written_to_its_target_and_the_link_stays(
    tmp_path, corpus, job
):
    (tmp_path / "results").mkdir()
    target = tmp_path / "results" / "out.csv"
    link = tmp_path / "link.csv"
    link.symlink_to(Path("results") / "out.csv")  # dangling: its target is made
    argv = ("solve", corpus) if job == "solve" else ("generate", 30, "--seed", 8)

    for _ in range(2 if job == "solve" else 1):  # then the target is there: a rerun replaces it
        result = cli(*argv, "-o", link)

        assert result.exit_code == 0, result.output
        assert link.is_symlink() and os.readlink(link) == str(Path("results") / "out.csv")
        assert (
            pl.read_csv(target, infer_schema=False)["puzzle"].to_list()
            == CORPUS["puzzle"].to_list()
        )
    assert names(tmp_path) == ["corpus.csv", "link.csv", "results"]
    assert names(tmp_path / "results") == ["out.csv"]


def test_a_link_to_somebody_elses_file_is_refused_without_force(tmp_path, corpus):
    target = tmp_path / "notes.csv"
    target.write_text("a,b\n1,2\n")
    link = tmp_path / "link.csv"
    link.symlink_to(target)

    result = cli("solve", corpus, "-o", link)

    assert result.exit_code == 2
    assert_one_line_error(result.stderr, "not a result of sudoku-pipeline", "--force")
    assert target.read_text() == "a,b\n1,2\n" and link.is_symlink()


# --- the lock file ------------------------------------------------------------------------------


def test_a_file_of_the_users_named_like_the_lock_is_never_used_or_deleted(tmp_path, corpus):
    mine = tmp_path / ".out.parquet.lock"
    mine.write_text("my notes")

    result = cli("solve", corpus, "-o", tmp_path / "out.parquet")

    assert result.exit_code == 2, result.output
    assert_one_line_error(result.stderr, str(mine), "not made by sudoku-pipeline")
    assert mine.read_text() == "my notes"
    assert names(tmp_path) == [".out.parquet.lock", "corpus.csv"]


def test_a_lock_left_by_a_killed_run_is_taken_over_and_removed(tmp_path, corpus):
    out = tmp_path / "out.parquet"
    killed = ("import os, sys; from pathlib import Path; from pipeline.io.output import "
              "OutputLock; OutputLock(Path(sys.argv[1])).__enter__(); os._exit(9)")  # fmt: skip
    subprocess.run([sys.executable, "-c", killed, str(out)], check=False)
    assert (tmp_path / ".out.parquet.lock").exists()

    result = cli("solve", corpus, "-o", out)

    assert result.exit_code == 0, result.output
    assert names(tmp_path) == ["corpus.csv", "out.parquet"]


# --- reruns ------------------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_generate_replaces_its_own_earlier_output_and_nobody_elses(tmp_path, suffix):
    out = tmp_path / f"g{suffix}"
    assert cli("generate", 5, "-o", out, "--seed", 1).exit_code == 0

    rerun = cli("generate", 5, "-o", out, "--seed", 8)

    assert rerun.exit_code == 0, rerun.output
    read = {".csv": read_text_csv, ".jsonl": pl.read_ndjson, ".parquet": pl.read_parquet}[suffix]
    got = read(out)
    assert got["puzzle"].to_list() == generate(5, seed=8)["puzzle"].to_list()
    assert names(tmp_path) == [f"g{suffix}"]
    assert cli("generate", 0, "-o", out).exit_code == 0  # no puzzles: no JSON Lines at all
    assert cli("generate", 0, "-o", out).exit_code == 0
    theirs = tmp_path / f"theirs{suffix}"
    CORPUS.head(5).write_parquet(theirs) if suffix == ".parquet" else theirs.write_text("id,x\n")
    assert cli("generate", 5, "-o", theirs).exit_code == 2


def read_text_csv(path: Path) -> pl.DataFrame:
    return pl.read_csv(path, infer_schema=False)


# --- validate's spool -------------------------------------------------------------------------


@linux_only
def test_the_findings_spool_a_killed_validate_left_is_cleared_by_the_next_run(tmp_path):
    corpus = tmp_path / "corpus.csv"
    pl.concat([generate(1000, seed=2)] * 40).write_csv(corpus)  # --minimal: many seconds
    out = tmp_path / "out.parquet"
    run = subprocess.Popen([*COMMAND, "validate", str(corpus), "-o", str(out), "--minimal",
                            "--batch-size", "500", "-q"], stderr=subprocess.PIPE)  # fmt: skip
    deadline = time.monotonic() + 60
    while not list(tmp_path.glob(".out.parquet.findings-*.arrow")):
        assert time.monotonic() < deadline and run.poll() is None, run.stderr
        time.sleep(0.02)
    run.kill()
    run.communicate(timeout=30)
    assert list(tmp_path.glob(".out.parquet.findings-*.arrow"))  # what kill -9 leaves

    result = cli("validate", corpus, "-o", out, "-q")

    assert result.exit_code == 0, result.output
    assert names(tmp_path) == ["corpus.csv", "out.parquet"]
