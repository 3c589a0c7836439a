"""Outputs and the room they need: a full disk or a file-size limit is one line naming the
file and what is kept for `--resume`; a name too long for the files kept beside the output,
and a corpus larger than the free space, are refused before the work."""

import contextlib
import resource
from pathlib import Path

import polars as pl
import pytest

from pipeline.run.warmup import warm
from tests.conftest import assert_one_line_error, cli, command, linux_only
from tests.test_outputs_faults import CORPUS, names


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    path = tmp_path / "corpus.csv"
    CORPUS.write_csv(path)
    return path


# --- a full disk, a file-size limit -----------------------------------------------------------


@pytest.fixture
def rows_3300(tmp_path: Path) -> Path:
    """3,300 rows: about 660 kB of CSV results."""
    path = tmp_path / "rows.csv"
    pl.concat([CORPUS] * 110).write_csv(path)
    return path


def test_a_disk_with_room_for_the_output_once_is_enough(rows_3300, tiny_disk):
    """The join copies a part at a time and frees each: room for the output once (and a
    part) is enough; it used to need the output twice, and failed after all the work."""
    filler = tiny_disk / "filler"
    filler.write_bytes(bytes(1_000_000))  # room for the parts (660 kB), not for them twice
    out = tiny_disk / "out.csv"

    done = command("solve", rows_3300, "-o", out, "--batch-size", 500, "-q")

    assert done.returncode == 0, done.stderr
    assert pl.read_csv(out, infer_schema=False)["row"].to_list() == [str(i) for i in range(3300)]
    assert names(tiny_disk) == ["filler", "out.csv"]


def test_a_disk_too_full_even_for_one_part_says_so_and_resume_joins_once_there_is_room(
    rows_3300, tiny_disk
):
    filler = tiny_disk / "filler"
    filler.write_bytes(bytes(1_000_000))  # room for the one part (660 kB), not for its copy
    out = tiny_disk / "out.csv"
    argv = ("solve", rows_3300, "-o", out, "--batch-size", 3300, "-q")

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


@pytest.fixture
def kernels_cached() -> None:
    """The kernels compiled and in numba's cache (CORPUS made generate's): under a file-size
    limit, a first run's cache files could fail before the output does."""
    warm(("fast", "clash"))


@linux_only
@pytest.mark.usefixtures("kernels_cached")
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
def test_a_job_that_does_not_resume_never_tells_to_resume(tmp_path, rows_3300):
    """enumerate's join hit a file-size limit and said "all 3,300 rows are kept in
    out.csv.partial; make room, then run the same command with --resume": enumerate has no
    --resume, and its parts were gone (a run that does not resume keeps nothing)."""
    warm(("fast", "clash", "enumerate"))  # no cache file written under the limit
    out = tmp_path / "out.csv"

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (150_000, 150_000))  # parts fit, the output not

    done = command("enumerate", rows_3300, "-o", out, "--batch-size", 500, "-q", "--limit", 2,
                   preexec_fn=small_files)  # fmt: skip

    assert done.returncode == 2, done.stderr
    assert_one_line_error(done.stderr, str(out), "File too large", "nothing is kept")
    assert "--resume" not in done.stderr and "kept in" not in done.stderr
    assert names(tmp_path) == ["rows.csv"]


def test_a_full_disk_in_a_job_that_does_not_resume_says_nothing_is_kept(tmp_path, tiny_disk):
    corpus = tmp_path / "big.csv"
    pl.concat([CORPUS] * 700).write_csv(corpus)  # more solutions than the disk holds
    out = tiny_disk / "out.csv"

    done = command("enumerate", corpus, "-o", out, "--batch-size", 2000, "--workers", 1, "-q",
                   "--limit", 2)  # fmt: skip

    assert done.returncode == 2, done.stderr
    assert_one_line_error(done.stderr, str(out), "nothing is kept", "make room")
    assert "--resume" not in done.stderr
    assert names(tiny_disk) == []


@linux_only
@pytest.mark.usefixtures("kernels_cached")
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


# --- a disk full before the run ------------------------------------------------------------


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
