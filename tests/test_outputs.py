"""Where results go, and what is never written over: formats by suffix, stdout, several inputs
and globs into one output, inputs and devices and other tools' files left alone, one run per
output at a time."""

import json
import os
import stat
import subprocess

import polars as pl
import pyarrow.parquet as pq
import pytest

from pipeline import generate
from pipeline.errors import InputError
from pipeline.io.output import OutputLock
from pipeline.jobs.solve.job import solve_file
from tests.conftest import COMMAND, assert_one_line_error, cli, command, linux_only

CORPUS = generate(30, seed=8)


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "corpus.csv"
    CORPUS.write_csv(path)
    return path


def read_csv(path) -> pl.DataFrame:
    return pl.read_csv(path, infer_schema=False)  # puzzles and solutions stay text


READERS = {"parquet": pl.read_parquet, "csv": read_csv, "jsonl": pl.read_ndjson}


# --- formats ----------------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".parquet", ".csv", ".jsonl"])
def test_the_output_format_follows_its_suffix(tmp_path, corpus, suffix):
    out = tmp_path / f"out{suffix}"

    result = cli("solve", corpus, "-o", out, "--workers", 2, "--batch-size", 7)

    assert result.exit_code == 0, result.output
    got = READERS[suffix[1:]](out)
    rows = got["row"].cast(pl.Int64).to_list()
    assert got.height == CORPUS.height and rows == list(range(CORPUS.height))
    assert got["puzzle"].to_list() == CORPUS["puzzle"].to_list()
    assert set(got["verdict"].cast(pl.String)) == {"solved"}
    if suffix == ".csv":
        assert out.read_text().splitlines()[0].startswith("row,id,puzzle,verdict,")  # one header


def test_a_suffix_that_names_no_format_is_refused_before_any_work(tmp_path, corpus):
    result = cli("solve", corpus, "-o", tmp_path / "out.txt")

    assert result.exit_code == 2
    assert_one_line_error(result.stderr, "out.txt", "cannot tell the output format", "--format")
    assert not (tmp_path / "out.txt").exists()
    assert cli("solve", corpus, "-o", tmp_path / "out.txt", "--format", "csv").exit_code == 0
    assert (tmp_path / "out.txt").read_text().startswith("row,")


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_dash_o_dash_streams_to_stdout(tmp_path, corpus, fmt):
    done = subprocess.run([*COMMAND, "solve", str(corpus), "-o", "-", "--format", fmt,
                           "--batch-size", "7", "-q"], capture_output=True)  # fmt: skip

    assert done.returncode == 0, done.stderr
    assert not list(tmp_path.glob("*.partial")) and not list(tmp_path.glob(".*"))
    path = tmp_path / f"got.{fmt}"
    path.write_bytes(done.stdout)
    got = READERS[fmt](path)
    assert got["puzzle"].to_list() == CORPUS["puzzle"].to_list()
    if fmt == "parquet":
        assert json.loads(pq.read_schema(path).metadata[b"sudoku_pipeline"])["command"] == "solve"


def test_json_summary_goes_to_stderr_when_stdout_holds_the_results(corpus):
    done = command("solve", corpus, "-o", "-", "--json", "-q")

    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("row,id,puzzle,")
    assert json.loads(done.stderr)["rows"] == CORPUS.height


def test_parquet_is_not_written_to_a_terminal(corpus):
    import pty

    main, secondary = pty.openpty()
    try:
        done = subprocess.run([*COMMAND, "solve", str(corpus), "-o", "-", "--format", "parquet"],
                              stdout=secondary, stderr=subprocess.PIPE, text=True)  # fmt: skip
    finally:
        os.close(main)
        os.close(secondary)
    assert done.returncode == 2
    assert_one_line_error(done.stderr, "will not write Parquet to a terminal")


# --- several inputs ---------------------------------------------------------------------------


def test_several_inputs_and_a_quoted_glob_go_into_one_output_with_a_source_column(tmp_path):
    for i in range(3):
        CORPUS.slice(10 * i, 10).write_csv(tmp_path / f"part-{i}.csv")
    out = tmp_path / "all.parquet"

    result = cli("solve", tmp_path / "part-*.csv", "-o", out, "--batch-size", 4)

    assert result.exit_code == 0, result.output
    got = pl.read_parquet(out)
    assert got.columns[:2] == ["source", "row"]
    assert got["source"].cast(pl.String).to_list() == [
        str(tmp_path / f"part-{i}.csv") for i in range(3) for _ in range(10)
    ]
    assert got["row"].to_list() == list(range(10)) * 3  # counted per input
    assert got["puzzle"].to_list() == CORPUS["puzzle"].to_list()
    meta = json.loads(pq.read_schema(out).metadata[b"sudoku_pipeline"])
    assert [i["path"] for i in meta["inputs"]] == [
        str(tmp_path / f"part-{i}.csv") for i in range(3)
    ]


def test_several_inputs_need_an_output_and_a_glob_must_match(tmp_path, corpus):
    result = cli("solve", corpus, corpus)
    assert result.exit_code == 2
    assert_one_line_error(result.stderr, "several inputs", "-o")
    result = cli("solve", tmp_path / "nothing-*.csv", "-o", tmp_path / "x.parquet")
    assert result.exit_code == 2
    assert_one_line_error(result.stderr, "no file matches")


def test_inputs_with_other_columns_cannot_share_an_output(tmp_path, corpus):
    other = tmp_path / "other.txt"
    other.write_text("\n".join(CORPUS["puzzle"].to_list()) + "\n")

    result = cli("solve", corpus, other, "-o", tmp_path / "x.parquet")

    assert result.exit_code == 2
    assert_one_line_error(result.stderr, "other.txt", "differ from")


# --- what is never written over ---------------------------------------------------------------


@pytest.mark.parametrize("spelling", ["same", "dotted", "symlink", "hardlink"])
def test_an_input_is_never_the_output(tmp_path, corpus, spelling):
    before = corpus.read_bytes()
    if spelling == "same":
        out = corpus
    elif spelling == "dotted":
        out = tmp_path / "." / ".." / tmp_path.name / "corpus.csv"
    elif spelling == "symlink":
        out = tmp_path / "link.csv"
        out.symlink_to(corpus)
    else:
        out = tmp_path / "hard.csv"
        os.link(corpus, out)

    result = cli("solve", corpus, "-o", out, "--force")

    assert result.exit_code == 2
    assert_one_line_error(result.stderr, "is the input", "will not write over an input")
    assert corpus.read_bytes() == before


def test_standard_input_read_from_a_file_is_never_the_output(tmp_path, corpus):
    before = corpus.read_bytes()
    with corpus.open("rb") as stdin:  # `solve - -o corpus.csv < corpus.csv`
        done = command("solve", "-", "-o", corpus, "--format", "csv", "--force", stdin=stdin)

    assert done.returncode == 2, done.stderr
    assert_one_line_error(done.stderr, "is the input -", "will not write over an input")
    assert corpus.read_bytes() == before


@linux_only
def test_a_device_or_fifo_is_never_the_output(tmp_path, corpus):
    fifo = tmp_path / "fifo.parquet"
    os.mkfifo(fifo)
    for target in (fifo, "/dev/null"):
        result = cli("solve", corpus, "-o", target, "--format", "parquet", "--force")
        assert result.exit_code == 2
        assert_one_line_error(result.stderr, "not a regular file", "-o -")
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_somebody_elses_file_is_replaced_only_with_force_and_our_result_always(tmp_path, corpus):
    out = tmp_path / "out.parquet"
    pl.DataFrame({"precious": [1, 2, 3]}).write_parquet(out)

    refused = cli("solve", corpus, "-o", out)

    assert refused.exit_code == 2
    assert_one_line_error(refused.stderr, "not a result of sudoku-pipeline", "--force")
    assert pl.read_parquet(out)["precious"].to_list() == [1, 2, 3]
    assert cli("solve", corpus, "-o", out, "--force").exit_code == 0
    assert cli("solve", corpus, "-o", out).exit_code == 0  # a rerun replaces its own result
    text = tmp_path / "notes.csv"
    text.write_text("a,b\n1,2\n")
    assert cli("solve", corpus, "-o", text).exit_code == 2
    assert text.read_text() == "a,b\n1,2\n"


def test_a_second_run_on_the_same_output_refuses_in_one_line(tmp_path, corpus):
    out = tmp_path / "out.parquet"
    with OutputLock(out):  # as a first run holds it
        result = cli("solve", corpus, "-o", out)
        with pytest.raises(InputError, match="another run is writing this output"):
            solve_file(corpus, out)
    assert result.exit_code == 2
    assert_one_line_error(result.stderr, "another run is writing this output")
    assert not out.exists() and not (tmp_path / "out.parquet.partial").exists()
    assert cli("solve", corpus, "-o", out).exit_code == 0  # the lock went with its holder
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.csv", "out.parquet"]
