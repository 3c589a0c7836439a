"""`sudoku-pipeline generate N [-o FILE] [--seed S] [--clues K]`: seeded corpora, CSV or Parquet."""

import subprocess
from io import StringIO

import polars as pl
import pyarrow.parquet as pq
import pytest

from pipeline import generate
from tests.conftest import COMMAND, assert_one_line_error, cli


def test_csv_by_suffix_is_the_python_generator_written_out(tmp_path):
    out = tmp_path / "corpus.csv"

    result = cli("generate", 25, "-o", out, "--seed", 4)

    assert result.exit_code == 0, result.output
    assert result.stderr.startswith(f"wrote 25 puzzles to {out} in ")
    assert len(result.stderr.splitlines()) == 1
    assert out.read_text().splitlines()[0] == "id,puzzle,solution,clues"
    written = pl.read_csv(out, schema_overrides={"puzzle": pl.String, "solution": pl.String})
    assert written.equals(generate(25, seed=4).with_columns(pl.col("clues").cast(pl.Int64)))


@pytest.mark.parametrize("suffix", [".parquet", ".pq"])
def test_parquet_by_suffix(tmp_path, suffix):
    out = tmp_path / f"corpus{suffix}"

    result = cli("generate", 10, "-o", out, "--seed", 2)

    assert result.exit_code == 0, result.output
    assert pl.read_parquet(out).equals(generate(10, seed=2))
    assert pq.ParquetFile(out).metadata.row_group(0).column(1).compression == "ZSTD"


def test_csv_on_stdout_without_an_output(tmp_path):
    result = cli("generate", 5, "--seed", 9)

    assert result.exit_code == 0, result.output
    texts = {"puzzle": pl.String, "solution": pl.String}
    read = pl.read_csv(StringIO(result.stdout), schema_overrides=texts)
    assert read["puzzle"].to_list() == generate(5, seed=9)["puzzle"].to_list()


def test_same_seed_same_file_other_seed_other_file(tmp_path):
    for name, seed in [("a.csv", 1), ("b.csv", 1), ("c.csv", 2)]:
        assert cli("generate", 20, "-o", tmp_path / name, "--seed", seed).exit_code == 0
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    assert (tmp_path / "a.csv").read_bytes() != (tmp_path / "c.csv").read_bytes()


def test_clue_target(tmp_path):
    out = tmp_path / "easy.parquet"

    result = cli("generate", 30, "-o", out, "--clues", 35)

    assert result.exit_code == 0, result.output
    frame = pl.read_parquet(out)
    assert (frame["clues"] == 35).all()
    assert (frame["puzzle"].str.count_matches(r"[1-9]") == 35).all()


def test_zero_puzzles_give_a_header_only_csv(tmp_path):
    out = tmp_path / "none.csv"
    assert cli("generate", 0, "-o", out).exit_code == 0
    assert out.read_text().strip() == "id,puzzle,solution,clues"


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["-o", "corpus.txt"], "cannot tell the output format"),
        (["-o", "no-such-folder/corpus.csv"], "no-such-folder"),
        (["--clues", "16"], "--clues"),
        (["--clues", "82"], "--clues"),
        (["--seed", "x"], "--seed"),
        (["--grade", "x-wing"], "x_wing, hidden_pair"),
        (["--grade", "x_wing", "--min-grade", "search"], "--grade or --min-grade"),
    ],
)
def test_bad_options_are_one_line_and_exit_code_2(tmp_path, monkeypatch, args, fragment):
    monkeypatch.chdir(tmp_path)

    result = cli("generate", 5, *args)

    assert result.exit_code == 2, result.output
    assert_one_line_error(result.stderr, fragment)
    assert list(tmp_path.iterdir()) == []


def test_a_negative_count_is_a_usage_error():
    result = cli("generate", "--", "-3")

    assert result.exit_code == 2
    assert_one_line_error(result.stderr, "N")


def test_generate_then_solve_as_real_commands(tmp_path):
    corpus = tmp_path / "corpus.csv"
    made = subprocess.run(
        [*COMMAND, "generate", "40", "-o", str(corpus), "--seed", "6"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert made.returncode == 0, made.stderr

    solved = subprocess.run(
        [*COMMAND, "solve", str(corpus), "--workers", "1", "--quiet"],
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert solved.returncode == 0, solved.stderr
    result = pl.read_parquet(tmp_path / "corpus.solved.parquet")
    assert result.height == 40
    assert (result["verdict"] == "solved").all() and result["expected_ok"].all()
    assert result["id"].to_list() == list(range(40))  # integer ids stay integers


def test_a_grade_asked_for(tmp_path):
    out = tmp_path / "hard.csv"

    result = cli("generate", 4, "-o", out, "--seed", 3, "--min-grade", "search")

    assert result.exit_code == 0, result.output
    written = pl.read_csv(out, infer_schema=False)
    assert written.columns == ["id", "puzzle", "solution", "clues", "grade"]
    assert written["grade"].to_list() == ["search"] * 4
    assert written["puzzle"].equals(generate(4, seed=3, min_grade="search")["puzzle"])


def test_json_summarises_the_run_on_stdout_or_beside_the_puzzles(tmp_path):
    import json

    out = tmp_path / "corpus.parquet"
    to_file = cli("generate", 12, "-o", out, "--seed", 3, "--json")
    to_stdout = subprocess.run([*COMMAND, "generate", "4", "--json"], capture_output=True,
                               text=True)  # fmt: skip

    assert to_file.exit_code == 0, to_file.output
    summary = json.loads(to_file.stdout)
    assert summary["command"] == "generate"
    assert (summary["rows"], summary["seed"], summary["output"]) == (12, 3, str(out))
    assert summary["wall_s"] > 0 and summary["rows_per_s"] > 0
    assert to_file.stderr == ""  # the JSON says it all
    assert to_stdout.returncode == 0, to_stdout.stderr
    puzzles = pl.read_csv(StringIO(to_stdout.stdout), infer_schema=False)
    assert puzzles.columns == ["id", "puzzle", "solution", "clues"]  # and nothing else
    assert len(puzzles) == 4
    assert json.loads(to_stdout.stderr)["rows"] == 4


def test_a_terminal_sees_the_progress_in_puzzles(tmp_path):
    """On a terminal (a pseudo-terminal here) a bar counts the puzzles; in a pipe, no bar."""
    import os
    import pty

    out = tmp_path / "corpus.csv"
    pid, fd = pty.fork()
    if pid == 0:  # the child: stderr is the terminal, 80 columns wide
        import fcntl
        import struct
        import termios

        fcntl.ioctl(2, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
        os.execvp(COMMAND[0], [*COMMAND, "generate", "30", "-o", str(out), "--workers", "1"])
    seen = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # the child is gone: the terminal hung up
            break
        if not chunk:
            break
        seen += chunk
    _, status = os.waitpid(pid, 0)

    assert os.waitstatus_to_exitcode(status) == 0, seen
    assert b"generate: 100%" in seen and b"30.0/30.0 " in seen
    piped = cli("generate", 30, "-o", tmp_path / "piped.csv", "--force")
    assert "%" not in piped.stderr
