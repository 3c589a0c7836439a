"""Outputs under faults: nothing the user owns is deleted or written over (a folder or file
that looks like a checkpoint, an input, a lock file, a link), every job takes the output's
lock, columns text cannot hold are encoded or refused before any work, and a full disk or a
name too long is one line that says what was kept and what to do, before the work where it
can be known."""

import contextlib
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline import generate
from pipeline.errors import InputError
from pipeline.io.output import OutputLock
from pipeline.io.text_columns import check_text_columns
from pipeline.jobs.generate import generate_file
from tests.conftest import COMMAND, assert_one_line_error, cli, command, linux_only

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


# --- columns text cannot hold as they are -----------------------------------------------------

# a pass-through column, its values (the last one null), and how CSV and JSON Lines hold them
PASSING = {
    "struct": (pa.array([{"a": 1, "b": "x"}, None]), '{"a":1,"b":"x"}', {"a": 1, "b": "x"}),
    "list of text": (pa.array([["a", "b,c"], None]), '["a","b,c"]', ["a", "b,c"]),
    "map": (pa.array([[("k", 1)], None], pa.map_(pa.string(), pa.int64())), '{"k":1}', {"k": 1}),
    "duration": (pa.array([1000, None], pa.duration("us")), "PT0.001S", "PT0.001S"),
    "binary": (pa.array([b"\x00\xff", None]), "00ff", "00ff"),
    "fixed binary": (pa.array([b"\x0a\x0b", None], pa.binary(2)), "0a0b", "0a0b"),
    "list of binary": (pa.array([[b"\x01", None], None]), '["01",null]', ["01", None]),
    "uuid": (
        pa.array([bytes(range(16)), None], pa.uuid()),
        bytes(range(16)).hex(),
        bytes(range(16)).hex(),
    ),
    "256-bit decimal": (pa.array([150, None]).cast(pa.decimal256(40, 2)), "150.00", "150.00"),
}


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
@pytest.mark.parametrize("kind", PASSING)
def test_pass_through_columns_are_written_to_text_in_a_faithful_form(tmp_path, fmt, kind):
    values, as_csv, as_json = PASSING[kind]
    data = tmp_path / "in.parquet"
    puzzles = CORPUS["puzzle"].head(2).to_list()
    pq.write_table(pa.table({"puzzle": puzzles, "extra": values}), data)
    out = tmp_path / f"out.{fmt}"

    result = cli("solve", data, "-o", out, "--batch-size", 1)

    assert result.exit_code == 0, result.output
    if fmt == "csv":
        got = pl.read_csv(out, infer_schema=False)["extra"].to_list()
        assert got == [as_csv, None]
    else:
        got = [json.loads(line)["extra"] for line in out.read_text().splitlines()]
        assert got == [as_json, None]
    assert names(tmp_path) == ["in.parquet", f"out.{fmt}"]


def test_a_column_text_cannot_hold_is_refused_before_any_work_naming_it():
    schema = pa.schema([("puzzle", pa.string()), ("when", pa.month_day_nano_interval())])

    with pytest.raises(InputError) as refused:
        check_text_columns(schema, "csv")

    assert "column 'when'" in str(refused.value) and "write Parquet" in str(refused.value)
    check_text_columns(schema, "parquet")  # Parquet holds every column


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


# --- a full disk, a file-size limit -----------------------------------------------------------


@pytest.fixture
def rows_3300(tmp_path: Path) -> Path:
    """3,300 rows: about 660 kB of CSV results."""
    path = tmp_path / "rows.csv"
    pl.concat([CORPUS] * 110).write_csv(path)
    return path


def test_a_disk_too_full_for_the_final_join_says_so_and_resume_joins_once_there_is_room(
    rows_3300, tiny_disk
):
    filler = tiny_disk / "filler"
    filler.write_bytes(bytes(1_000_000))  # room for the parts (660 kB), not for them twice
    out = tiny_disk / "out.csv"
    argv = ("solve", rows_3300, "-o", out, "--batch-size", 500, "-q")

    for resume in ((), ("--resume",)):
        done = command(*argv, *resume)

        assert done.returncode == 2, done.stderr
        assert_one_line_error(done.stderr, str(out), "needs about", "free",
                              "3,300 rows", f"kept in {out}.partial", "--resume")  # fmt: skip
        assert not out.exists()
    filler.unlink()
    resumed = command(*argv, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert pl.read_csv(out, infer_schema=False)["row"].to_list() == [str(i) for i in range(3300)]
    assert names(tiny_disk) == ["out.csv"]


def test_a_full_disk_mid_run_names_the_checkpoint_and_what_it_keeps(tmp_path, tiny_disk):
    corpus = tmp_path / "big.csv"
    pl.concat([CORPUS] * 700).write_csv(corpus)  # about 4 MB of results: more than the disk
    out = tiny_disk / "out.csv"

    done = command("solve", corpus, "-o", out, "--batch-size", 2000, "--workers", 1, "-q")

    assert done.returncode == 2, done.stderr
    assert_one_line_error(done.stderr, f"{out}.partial", "No space left on device",
                          "rows done are kept", "--resume")  # fmt: skip
    assert not out.exists()


@linux_only
def test_a_file_size_limit_at_the_final_join_names_the_output_and_what_is_kept(tmp_path, rows_3300):
    out = tmp_path / "out.csv"

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (400_000, 400_000))  # parts fit, the output not

    done = command("solve", rows_3300, "-o", out, "--batch-size", 500, "-q",
                   preexec_fn=small_files)  # fmt: skip

    assert done.returncode == 2, done.stderr
    assert_one_line_error(done.stderr, str(out), "File too large", "3,300 rows",
                          f"kept in {out}.partial", "--resume")  # fmt: skip
    assert not out.exists()
    resumed = command("solve", rows_3300, "-o", out, "--batch-size", 500, "-q", "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert names(tmp_path) == ["out.csv", "rows.csv"]


@linux_only
def test_a_file_size_limit_in_generate_names_the_output_and_leaves_nothing(tmp_path):
    out = tmp_path / "g.csv"

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, 20_000))

    done = command("generate", 500, "-o", out, preexec_fn=small_files)

    assert done.returncode == 2, done.stderr
    assert_one_line_error(done.stderr, str(out), "File too large")
    assert names(tmp_path) == []


# --- names near the file system's limit -------------------------------------------------------

NAME_MAX = 255  # bytes in a file name: Linux file systems, macOS


def long_name(length: int, suffix: str) -> str:
    return "n" * (length - len(suffix)) + suffix


def test_an_output_name_too_long_for_the_files_beside_it_is_refused_before_the_work(
    tmp_path, corpus
):
    out = tmp_path / long_name(NAME_MAX - 8, ".csv")  # NAME.partial fits, .NAME.tmp-PID not

    for command_line in (("solve", corpus), ("solve", corpus, "--resume"), ("generate", 5),
                         ("validate", corpus)):  # fmt: skip
        result = cli(*command_line, "-o", out)

        assert result.exit_code == 2, result.output
        assert_one_line_error(result.stderr, "name is too long", "shorter")
        assert names(tmp_path) == ["corpus.csv"]


def test_the_longest_name_allowed_works_for_every_job(tmp_path, corpus):
    limit = NAME_MAX - len(".") - len(".findings-4194304.arrow")  # validate's spool, the longest
    for job in ("solve", "validate"):
        out = tmp_path / long_name(limit, f".{job}.csv")

        result = cli(job, corpus, "-o", out)

        assert result.exit_code == 0, result.output
        assert out.exists()
    out = tmp_path / long_name(limit, ".g.csv")
    assert cli("generate", 5, "-o", out).exit_code == 0


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


def fill(disk: Path) -> None:
    with contextlib.suppress(OSError), open(disk / "filler", "wb", buffering=0) as filler:
        while True:
            filler.write(bytes(4096))


def test_a_disk_full_before_the_run_leaves_no_lock_or_checkpoint(corpus, tiny_disk):
    fill(tiny_disk)

    done = command("solve", corpus, "-o", tiny_disk / "out.csv")

    assert done.returncode == 2, done.stderr
    assert_one_line_error(done.stderr, "No space left on device")
    assert names(tiny_disk) == ["filler"]


def test_generates_free_space_estimate_is_told_in_a_size_that_shows(tiny_disk):
    fill(tiny_disk)

    done = command("generate", 5, "-o", tiny_disk / "g.csv")

    assert done.returncode == 2, done.stderr
    assert_one_line_error(done.stderr, "5 puzzles need about 900 bytes", "are free")
    assert "0.0 GB" not in done.stderr
    assert names(tiny_disk) == ["filler"]


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
