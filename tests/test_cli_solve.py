"""`sudoku-pipeline solve` and its Python twin `solve_file`, as a user meets them.

Every test writes its own small corpus into `tmp_path` with `pipeline.generate`, runs the
command (in-process with Typer's CliRunner, or as a real subprocess of the installed
`sudoku-pipeline` script) and opens the Parquet file it wrote. The slow part of a run is starting
the worker processes (about 0.7 s), so the corpora are tiny except where a run has to last:
the kill -9 / Ctrl-C tests.
"""

import datetime
import gzip
import io
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from polars.testing import assert_frame_equal

import pipeline
from pipeline import generate
from pipeline.errors import InputError
from pipeline.jobs.solve.job import RunSummary, solve_file
from pipeline.kernels.codes import VERDICT_NAMES
from pipeline.results.schema import result_schema
from pipeline.run.checkpoint import Checkpoint
from pipeline.run.executors import ThreadExecutor
from tests.conftest import (
    COMMAND,
    assert_one_line_error,
    cli,
    command,
    linux_only,
    live_processes,
)

SHARED = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
TIMING_COLUMNS = ["solve_ns"]  # the only columns that may differ between two runs


# --- helpers ---------------------------------------------------------------------------------


def compress(data: bytes, compression: str | None) -> bytes:
    if compression == "gzip":
        return gzip.compress(data)
    if compression == "zstd":
        return pa.compress(data, "zstd", asbytes=True)  # a standard zstd frame
    return data


def parquet_bytes(frame: pl.DataFrame) -> bytes:
    sink = io.BytesIO()
    frame.write_parquet(sink)
    return sink.getvalue()


def frame_of(path: Path) -> pl.DataFrame:
    return pl.read_parquet(path)


def assert_same_results(got: pl.DataFrame, want: pl.DataFrame) -> None:
    """Same rows in the same order, each once, timing columns aside."""
    assert got["row"].to_list() == list(range(want.height))
    assert_frame_equal(got.drop(TIMING_COLUMNS), want.drop(TIMING_COLUMNS))


def metadata_of(path: Path) -> dict:
    return json.loads(pq.read_schema(path).metadata[b"sudoku_pipeline"])


# --- every format and compression ------------------------------------------------------------

CORPUS = generate(12, seed=5)  # id, puzzle ('.' blanks), solution, clues; all unique
COMPRESSIONS = {None: "", "gzip": ".gz", "zstd": ".zst"}


def write_corpus(folder: Path, kind: str, compression: str | None) -> Path:
    """CORPUS in one of the input shapes the issue names, compressed as asked."""
    if kind == "csv":  # with a header: id, puzzle, solution, clues
        suffix, data = ".csv", CORPUS.write_csv().encode()
    elif kind == "kaggle-csv":  # no header, `0` blanks, puzzle then solution
        zeros = CORPUS.select(pl.col("puzzle").str.replace_all(r"\.", "0"), "solution")
        suffix, data = ".csv", zeros.write_csv(include_header=False).encode()
    elif kind == "tsv":
        suffix, data = ".tsv", CORPUS.write_csv(separator="\t").encode()
    elif kind == "parquet":
        suffix, data = ".parquet", parquet_bytes(CORPUS)
    elif kind == "txt":  # one puzzle a line; comments and blank lines are not rows
        lines = CORPUS["puzzle"].to_list()
        text = "# twelve puzzles\n#\n" + "\n".join(lines[:5]) + "\n\n# more\n"
        suffix, data = ".txt", (text + "\n".join(lines[5:]) + "\n").encode()
    else:
        raise ValueError(kind)
    path = folder / f"corpus{suffix}{COMPRESSIONS[compression]}"
    path.write_bytes(compress(data, compression))
    return path


def check_corpus_results(out: Path, kind: str) -> None:
    """The output of solving CORPUS: one row per puzzle, in order, solved, ids passed through."""
    got = frame_of(out)
    assert got["row"].to_list() == list(range(CORPUS.height))
    assert got["puzzle"].to_list() == CORPUS["puzzle"].to_list()  # normalized to '.' blanks
    assert set(got["verdict"]) == {"solved"}
    assert got["solution"].to_list() == CORPUS["solution"].to_list()
    assert got["clues"].to_list() == CORPUS["clues"].to_list()
    if kind == "txt":  # no solution column, so nothing to agree with
        assert got["expected_ok"].null_count() == CORPUS.height
    else:
        assert got["expected_ok"].to_list() == [True] * CORPUS.height
    if kind in ("csv", "tsv", "parquet"):  # ids pass through with their type: integers here
        assert got["id"].to_list() == CORPUS["id"].to_list()
        # so does the input's `clues`, renamed: text from text files, typed from Parquet
        clues = CORPUS["clues"].to_list()
        assert got["input_clues"].to_list() == (
            clues if kind == "parquet" else list(map(str, clues))
        )
    else:
        assert "id" not in got.columns
    assert got["error"].null_count() == CORPUS.height


KINDS = ["csv", "kaggle-csv", "tsv", "parquet", "txt"]


@pytest.mark.parametrize("compression", list(COMPRESSIONS))
@pytest.mark.parametrize("kind", KINDS)
def test_every_format_and_compression_in_process(tmp_path, kind, compression):
    corpus = write_corpus(tmp_path, kind, compression)
    out = tmp_path / "out.parquet"

    result = cli("solve", corpus, "-o", out, "--batch-size", 5, "--workers", 1, "--quiet")

    assert result.exit_code == 0, result.output
    check_corpus_results(out, kind)


# every format and every compression once (and CSV .gz in `solved_sample` below)
@pytest.mark.parametrize(
    "kind, compression",
    [("kaggle-csv", "zstd"), ("tsv", "gzip"), ("parquet", "zstd"), ("txt", None)],
)
def test_every_format_and_compression_as_a_real_command(tmp_path, kind, compression):
    corpus = write_corpus(tmp_path, kind, compression)
    out = tmp_path / "out.parquet"

    done = command("solve", corpus, "-o", out, "--batch-size", 5, "--workers", 1)

    assert done.returncode == 0, done.stderr
    assert done.stdout == ""  # data goes to the file, the summary to stderr
    assert f"{CORPUS.height} rows" in done.stderr and f"wrote {out}" in done.stderr
    check_corpus_results(out, kind)


def test_semicolon_csv_with_separator_option(tmp_path):
    corpus = tmp_path / "corpus.csv"
    corpus.write_text(CORPUS.write_csv(separator=";"))
    out = tmp_path / "out.parquet"

    result = cli("solve", corpus, "-o", out, "--separator", ";", "--workers", 1, "-q")

    assert result.exit_code == 0, result.output
    check_corpus_results(out, "csv")


@pytest.mark.parametrize(
    "name, rows", [("kaggle1m_first9999.csv", 9999), ("puzzles6_forum_hardest_1106.txt", 375)]
)
def test_shared_sets_are_read_with_no_options(tmp_path, name, rows):
    path = SHARED / name
    if not path.exists():
        pytest.skip(f"{path} not present")
    out = tmp_path / "out.parquet"

    result = cli("solve", path, "-o", out, "--quiet", "--json")

    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["rows"] == rows and summary["verdicts"]["solved"] == rows
    got = frame_of(out)
    assert got.height == rows
    if name.endswith(".csv"):  # header-less: column_0 puzzles with `0` blanks, column_1 solutions
        assert got["expected_ok"].all()
        assert got["puzzle"][0].startswith("..43..2.9")


# --- column detection ------------------------------------------------------------------------

OTHER = generate(3, seed=8)  # a second set of puzzles, to tell columns apart


@pytest.mark.parametrize("name", ["puzzle", "Quizzes", "board", "SUDOKU"])  # any case
def test_puzzle_column_found_by_name_before_content(tmp_path, name):
    # `first` holds puzzles too, but a column named like puzzles wins
    frame = pl.DataFrame({"first": OTHER["puzzle"], name: CORPUS["puzzle"][:3]})
    corpus = tmp_path / "named.csv"
    frame.write_csv(corpus)
    out = tmp_path / "out.parquet"

    result = cli("solve", corpus, "-o", out, "--workers", 1, "-q")

    assert result.exit_code == 0, result.output
    assert frame_of(out)["puzzle"].to_list() == CORPUS["puzzle"][:3].to_list()


def test_puzzle_column_found_by_content_and_overrides(tmp_path):
    # no column has a known name: the first one holding puzzles is taken
    frame = pl.DataFrame(
        {
            "label": ["a", "b", "c"],
            "givens": CORPUS["puzzle"][:3],
            "later": OTHER["puzzle"],
            "answer": CORPUS["solution"][:3],
        }
    )
    corpus = tmp_path / "unnamed.csv"
    frame.write_csv(corpus)
    out = tmp_path / "out.parquet"

    found = cli("solve", corpus, "-o", out, "--workers", 1, "-q")

    assert found.exit_code == 0, found.output
    got = frame_of(out)
    assert got["puzzle"].to_list() == CORPUS["puzzle"][:3].to_list()
    assert "id" not in got.columns and got["expected_ok"].null_count() == 3

    chosen = cli(
        "solve", corpus, "-o", out, "--column", "later", "--solution-column", "answer",
        "--id-column", "label", "--workers", 1, "-q",
    )  # fmt: skip

    assert chosen.exit_code == 0, chosen.output
    got = frame_of(out)
    assert got["puzzle"].to_list() == OTHER["puzzle"].to_list()
    assert got["id"].to_list() == ["a", "b", "c"]
    assert got["expected_ok"].to_list() == [False] * 3  # `answer` solves the other puzzles


def test_solution_and_id_columns_found_by_name(tmp_path):
    frame = pl.DataFrame(
        {"ID": [7, 8, 9], "quizzes": CORPUS["puzzle"][:3], "solutions": CORPUS["solution"][:3]}
    )
    corpus = tmp_path / "kaggle-header.parquet"
    frame.write_parquet(corpus)
    out = tmp_path / "out.parquet"

    result = cli("solve", corpus, "-o", out, "--workers", 1, "-q")

    assert result.exit_code == 0, result.output
    got = frame_of(out)
    assert got["id"].to_list() == [7, 8, 9] and got.schema["id"] == pl.Int64
    assert got["expected_ok"].to_list() == [True] * 3


@pytest.mark.parametrize(
    "option, name", [("--column", "nope"), ("--solution-column", "answer"), ("--id-column", "key")]
)
def test_a_missing_column_is_an_error_listing_the_columns(tmp_path, option, name):
    corpus = write_corpus(tmp_path, "csv", None)

    result = cli("solve", corpus, option, name)

    assert result.exit_code == 2
    assert_one_line_error(result.stderr, f"'{name}'", "id, puzzle, solution, clues")
    assert not (tmp_path / "corpus.solved.parquet").exists()


def test_no_puzzle_column_is_an_error_listing_the_columns(tmp_path):
    corpus = tmp_path / "numbers.csv"
    corpus.write_text("a,b\n1,2\n3,4\n")

    result = cli("solve", corpus)

    assert result.exit_code == 2
    assert_one_line_error(result.stderr, "no puzzle column", "a, b")


# --- bad rows and options that change verdicts ------------------------------------------------

GOOD, GOOD_SOLUTION = CORPUS["puzzle"][0], CORPUS["solution"][0]
BAD_ROWS = [  # (csv line after the id, verdict, has an error message)
    (f"{GOOD},{GOOD_SOLUTION}", "solved", False),
    (f"{GOOD[:80]},", "malformed", True),  # 80 cells
    ("x" * 81 + ",", "malformed", True),  # not digits
    (",", "malformed", True),  # no puzzle at all
    ("." * 81 + ",", "multiple", False),
    ("11" + "." * 79 + ",", "invalid", True),  # givens clash
    ("12345678." + "........9" + "." * 63 + ",", "unsolvable", False),
    (f"{GOOD},{CORPUS['solution'][1]}", "solved", False),  # the given solution is wrong
    (f"{GOOD},{GOOD_SOLUTION},extra,fields", "solved", False),
    ("", "malformed", True),  # a line with the id only: too few fields
    (f"{GOOD.replace('.', '0')},{GOOD_SOLUTION}", "solved", False),  # `0` blanks
]


def test_bad_rows_get_a_verdict_and_an_error_and_keep_their_place(tmp_path):
    lines = ["id,puzzle,solution"]
    lines += [f"r{i},{text}" if text else f"r{i}" for i, (text, *_) in enumerate(BAD_ROWS)]
    corpus = tmp_path / "bad.csv"
    corpus.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out.parquet"

    result = cli("solve", corpus, "-o", out, "--batch-size", 4, "--workers", 1, "-q")

    assert result.exit_code == 0, result.output
    got = frame_of(out)
    assert got.height == len(BAD_ROWS)  # row count in = out, always
    assert got["id"].to_list() == [f"r{i}" for i in range(len(BAD_ROWS))]
    assert got["verdict"].to_list() == [verdict for _, verdict, _ in BAD_ROWS]
    assert got["error"].is_not_null().to_list() == [has_error for *_, has_error in BAD_ROWS]
    assert got["error"][5] == "row 1 repeats 1 at columns 1 and 2"
    assert got["solution"][4] is not None  # `multiple` keeps the first solution found
    assert got["solution"][6] is None
    assert got["expected_ok"].to_list() == [
        True, None, None, None, None, None, None, False, True, None, True
    ]  # fmt: skip
    assert got["puzzle"][10] == GOOD  # normalized to '.' blanks


@pytest.mark.parametrize(
    "options, verdicts",
    [
        ([], ["multiple", "solved"]),
        (["--solutions", "1"], ["found", "found"]),  # stops at the first: cannot tell
        (["--strategy", "backtrack", "--max-nodes", "1"], ["limit", "limit"]),
    ],
)
def test_search_options_reach_the_solver(tmp_path, options, verdicts):
    corpus = tmp_path / "two.txt"
    corpus.write_text("." * 81 + "\n" + CORPUS["puzzle"][1] + "\n")
    out = tmp_path / "out.parquet"

    result = cli("solve", corpus, "-o", out, "--workers", 1, "-q", *options)

    assert result.exit_code == 0, result.output
    assert frame_of(out)["verdict"].to_list() == verdicts


# --- bad files and bad options ---------------------------------------------------------------


def bad_inputs(folder: Path) -> dict[str, tuple[Path, str]]:
    """Inputs that cannot be read: (path, a fragment of the one-line error)."""
    good_csv = CORPUS.write_csv().encode()
    files = {
        "missing.csv": (None, "no such file"),
        "unknown.json": (b"{}", "unknown format"),
        "plain.csv.gz": (good_csv, "not a gzip file"),
        "plain.txt.zst": (good_csv, "not a zstd file"),
        "text.parquet": (good_csv, "not a Parquet file"),
        "gzipped.csv": (gzip.compress(good_csv), "gzip-compressed"),
        "parquet.csv": (parquet_bytes(CORPUS), "Parquet"),
        "binary.txt": (b"\x00\x01\x02" * 100, "not a text file"),
        "broken.csv.gz": (gzip.compress(good_csv)[:-30], "broken.csv.gz"),
    }
    cases = {}
    for name, (data, fragment) in files.items():
        if data is not None:
            (folder / name).write_bytes(data)
        cases[name] = (folder / name, fragment)
    (folder / "folder.csv").mkdir()
    cases["folder.csv"] = (folder / "folder.csv", "is a directory")
    return cases


BAD_FILES = ["missing.csv", "unknown.json", "plain.csv.gz", "plain.txt.zst", "text.parquet",
             "gzipped.csv", "parquet.csv", "binary.txt", "broken.csv.gz", "folder.csv"]  # fmt: skip


@pytest.mark.parametrize("name", BAD_FILES)
def test_a_bad_file_is_one_line_and_exit_code_2(tmp_path, name):
    path, fragment = bad_inputs(tmp_path)[name]
    out = tmp_path / "out.parquet"

    result = cli("solve", path, "-o", out)

    assert result.exit_code == 2, result.output
    assert_one_line_error(result.stderr, fragment)
    assert not out.exists()


def test_a_truncated_file_fails_part_way_with_one_line(tmp_path):
    # more than the 1 MiB that is sniffed up front, so the read fails in the middle of the run
    line = f"{GOOD}\n".encode()
    data = gzip.compress(line * 20_000)
    corpus = tmp_path / "long.txt.gz"
    corpus.write_bytes(data[: len(data) // 2])
    out = tmp_path / "out.parquet"

    result = cli("solve", corpus, "-o", out, "--batch-size", 1000, "--workers", 1, "-q")

    assert result.exit_code == 2, result.output
    assert_one_line_error(result.stderr, "long.txt.gz")
    assert not out.exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_file(tmp_path):
    corpus = write_corpus(tmp_path, "csv", None)
    corpus.chmod(0)

    result = cli("solve", corpus)

    assert result.exit_code == 2
    assert_one_line_error(result.stderr, "permission denied")


@pytest.mark.parametrize(
    "options, fragment",
    [
        (["--workers", "0"], "--workers"),
        (["--workers", "two"], "--workers"),
        (["--solutions", "0"], "--solutions"),
        (["--batch-size", "0"], "--batch-size"),
        (["--max-nodes", "0"], "--max-nodes"),
        (["--strategy", "magic"], "--strategy"),
        (["--separator", "::"], "separator"),
        (["--no-such-option"], "--no-such-option"),
        (["-o", "missing-folder/out.parquet"], "missing-folder"),
        (["-o", "."], "is a directory"),
    ],
)
def test_a_bad_option_is_one_line_and_exit_code_2(tmp_path, monkeypatch, options, fragment):
    monkeypatch.chdir(tmp_path)
    corpus = write_corpus(tmp_path, "csv", None)

    result = cli("solve", corpus, *options)

    assert result.exit_code == 2, result.output
    assert_one_line_error(result.stderr, fragment)
    assert sorted(os.listdir(tmp_path)) == ["corpus.csv"]  # nothing written


@pytest.mark.parametrize("options", [["--separator", ";"], ["--header"]])
def test_csv_options_do_not_apply_to_text_or_parquet(tmp_path, options):
    corpus = write_corpus(tmp_path, "txt", None)

    result = cli("solve", corpus, *options)

    assert result.exit_code == 2
    assert_one_line_error(result.stderr, "CSV/TSV files only")


def test_bad_files_and_options_as_a_real_command(tmp_path):
    missing = command("solve", tmp_path / "missing.csv")
    assert missing.returncode == 2
    assert_one_line_error(missing.stderr, "no such file")

    corpus = write_corpus(tmp_path, "csv", None)
    bad_option = command("solve", corpus, "--workers", "0")
    assert bad_option.returncode == 2
    assert_one_line_error(bad_option.stderr, "--workers")

    no_column = command("solve", corpus, "--column", "quiz")
    assert no_column.returncode == 2
    assert_one_line_error(no_column.stderr, "columns are: id, puzzle, solution, clues")


# --- empty inputs ----------------------------------------------------------------------------

EMPTY_INPUTS = {
    "empty.csv": b"",
    "header-only.csv": b"id,puzzle,solution\n",
    "comments-only.txt": b"# nothing here\n\n",
    "empty.csv.gz": gzip.compress(b""),
    "empty.parquet": parquet_bytes(CORPUS.clear()),
}


@pytest.mark.parametrize("name", list(EMPTY_INPUTS))
def test_an_empty_input_gives_an_empty_parquet_with_the_full_schema(tmp_path, name):
    corpus = tmp_path / name
    corpus.write_bytes(EMPTY_INPUTS[name])
    out = tmp_path / "out.parquet"

    result = cli("solve", corpus, "-o", out, "--json")

    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["rows"] == 0
    table = pq.read_table(out)
    id_type = {"header-only.csv": pa.string(), "empty.parquet": pa.int64()}.get(name)
    extra = pa.schema([("input_clues", pa.int8())] if name == "empty.parquet" else [])
    assert table.num_rows == 0
    assert table.schema.remove_metadata() == result_schema(id_type, extra)
    assert frame_of(out).height == 0


def test_an_empty_input_as_a_real_command(tmp_path):
    corpus = tmp_path / "empty.txt"
    corpus.write_bytes(b"")

    done = command("solve", corpus, "--quiet")

    assert done.returncode == 0, done.stderr
    assert pq.read_table(tmp_path / "empty.solved.parquet").schema.names == result_schema().names


# --- the output file -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def solved_sample(tmp_path_factory):
    """One run with every default: `sample.csv.gz` -> `sample.solved.parquet` beside it."""
    folder = tmp_path_factory.mktemp("sample")
    corpus = write_corpus(folder, "csv", "gzip").rename(folder / "sample.csv.gz")
    started = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
    done = command("solve", corpus, "--workers", 2, "--batch-size", 5)
    assert done.returncode == 0, done.stderr
    return corpus, folder / "sample.solved.parquet", done, started


def test_default_output_is_beside_the_input(solved_sample):
    corpus, out, done, _ = solved_sample
    assert out.exists()
    assert f"wrote {out}" in done.stderr


def test_output_is_written_atomically_with_nothing_left_beside_it(solved_sample):
    corpus, out, *_ = solved_sample
    assert sorted(p.name for p in corpus.parent.iterdir()) == [corpus.name, out.name]


def test_output_opens_in_polars_and_pyarrow_with_the_schema(solved_sample):
    _, out, *_ = solved_sample
    table = pq.read_table(out)
    passed_through = pa.schema([("input_clues", pa.string())])  # the input's own `clues`
    assert table.schema.remove_metadata() == result_schema(pa.int64(), passed_through)
    assert table.schema.field("verdict").type == pa.dictionary(pa.int8(), pa.string(), ordered=True)
    frame = pl.read_parquet(out)
    assert dict(frame.schema) == (
        {
            "row": pl.Int64, "id": pl.Int64, "puzzle": pl.String,
            "verdict": pl.Enum(VERDICT_NAMES),
            "solution": pl.String, "clues": pl.Int8, "nodes": pl.Int64, "guesses": pl.Int64,
            "solve_ns": pl.Int64, "expected_ok": pl.Boolean, "error": pl.String,
            "input_clues": pl.String,
        }
    )  # fmt: skip
    assert frame.height == CORPUS.height
    columns = pq.ParquetFile(out).metadata.row_group(0)
    assert {columns.column(i).compression for i in range(columns.num_columns)} == {"ZSTD"}


def test_output_metadata_describes_the_run(solved_sample):
    corpus, out, _, started = solved_sample
    meta = metadata_of(out)
    assert meta["versions"]["sudoku_pipeline"] == pipeline.__version__
    assert {"python", "numba", "polars", "pyarrow", "numpy"} <= meta["versions"].keys()
    assert (
        meta["options"] | {"strategy": "fast", "solutions": 2, "max_nodes": None} == meta["options"]
    )
    assert meta["options"]["batch_size"] == 5
    assert meta["input"] == {
        "path": str(corpus),
        "format": "csv",
        "compression": "gzip",
        "size_bytes": corpus.stat().st_size,
        "rows": CORPUS.height,
        "header": True,  # its first line named the columns
        "separator": ",",  # sniffed
    }
    assert datetime.datetime.fromisoformat(meta["started_at"]) >= started
    assert meta["wall_s"] > 0
    assert meta["workers"] == 2
    assert meta["cpu"]["model"] and meta["cpu"]["count"] == os.cpu_count()


def test_summary_on_stderr_unless_quiet_and_json_summary_on_stdout(tmp_path):
    corpus = write_corpus(tmp_path, "txt", None)
    out = tmp_path / "out.parquet"

    chatty = cli("solve", corpus, "-o", out, "--workers", 1)
    quiet = cli("solve", corpus, "-o", out, "--workers", 1, "--quiet")
    as_json = cli("solve", corpus, "-o", out, "--workers", 1, "--quiet", "--json")

    assert chatty.exit_code == quiet.exit_code == as_json.exit_code == 0
    assert "solve: " not in chatty.stderr  # no progress bar: stderr is not a terminal
    assert chatty.stdout == "" and f"wrote {out}" in chatty.stderr
    assert quiet.stdout == quiet.stderr == ""  # nothing but errors
    assert as_json.stderr == ""
    summary = json.loads(as_json.stdout)
    assert summary["rows"] == CORPUS.height
    assert summary["verdicts"] == {
        "solved": CORPUS.height, "multiple": 0, "unsolvable": 0, "invalid": 0, "limit": 0,
        "malformed": 0, "found": 0,
    }  # fmt: skip
    assert summary["output"] == str(out) and summary["workers"] == 1


def test_two_workers_keep_input_order(tmp_path):
    # backtracking makes batch times uneven, so batches finish out of order
    corpus = tmp_path / "order.csv"
    puzzles = generate(150, seed=21)
    puzzles.write_csv(corpus)
    out = tmp_path / "out.parquet"

    result = cli(
        "solve", corpus, "-o", out, "--workers", 2, "--batch-size", 7, "--strategy", "backtrack",
        "-q", "--json",
    )  # fmt: skip

    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["workers"] == 2
    got = frame_of(out)
    assert got["row"].to_list() == list(range(150))
    assert got["id"].to_list() == list(range(150))
    assert got["solution"].to_list() == puzzles["solution"].to_list()


def square(x: int) -> int:
    return x * x


def test_the_executor_keeps_order_with_a_bounded_number_of_batches_in_flight():
    pulled = 0

    def items():
        nonlocal pulled
        for i in range(30):
            pulled += 1
            yield i

    executor = ThreadExecutor(workers=1)
    seen = []
    for value in executor.map_ordered(square, items()):
        seen.append(value)
        assert pulled <= len(seen) + executor.max_in_flight  # the input is never read far ahead
    assert seen == [i * i for i in range(30)]


# --- the Python twin -------------------------------------------------------------------------


def test_solve_file_is_the_python_twin(tmp_path):
    corpus = write_corpus(tmp_path, "parquet", None)

    summary = solve_file(corpus, workers=1, progress=False, batch_size=4)

    assert isinstance(summary, RunSummary)
    assert summary.output == str(tmp_path / "corpus.solved.parquet")
    assert summary.rows == CORPUS.height and summary.verdicts["solved"] == CORPUS.height
    assert json.loads(summary.to_json())["strategy"] == "fast"
    assert summary.metadata["input"]["rows"] == CORPUS.height
    check_corpus_results(Path(summary.output), "parquet")
    with pytest.raises(InputError, match="no such file"):
        solve_file(tmp_path / "missing.csv")
    with pytest.raises(InputError, match="unknown strategy"):
        solve_file(corpus, strategy="magic")


# --- interrupting and resuming ---------------------------------------------------------------


def interrupt_after(monkeypatch, parts: int) -> None:
    """Make the next run behave as if Ctrl-C came right after its `parts`-th finished batch."""
    add = Checkpoint.add
    count = 0

    def add_then_interrupt(self, part):
        nonlocal count
        add(self, part)
        count += 1
        if count == parts:
            raise KeyboardInterrupt

    monkeypatch.setattr(Checkpoint, "add", add_then_interrupt)


@pytest.fixture(scope="module")
def medium(tmp_path_factory):
    """A 60-row corpus as CSV and as Parquet (row groups of 13 rows), with their results."""
    folder = tmp_path_factory.mktemp("medium")
    puzzles = generate(60, seed=3)
    corpora = {"csv": folder / "medium.csv", "parquet": folder / "medium.parquet"}
    puzzles.write_csv(corpora["csv"])
    puzzles.write_parquet(corpora["parquet"], row_group_size=13)
    found = {}
    for kind, corpus in corpora.items():
        full = folder / f"full-{kind}.parquet"
        result = cli("solve", corpus, "-o", full, "--batch-size", 10, "--workers", 1, "-q")
        assert result.exit_code == 0, result.output
        found[kind] = (corpus, frame_of(full))
    return found


@pytest.mark.parametrize(
    "kind, parts",
    [("csv", 2), ("csv", 6), ("parquet", 3)],
    ids=["mid-way", "all batches done, not merged", "parquet, mid row group"],
)
def test_interrupted_run_keeps_a_checkpoint_and_resume_finishes_it(
    tmp_path, monkeypatch, medium, kind, parts
):
    corpus, full = medium[kind]
    out = tmp_path / "out.parquet"
    partial = tmp_path / "out.parquet.partial"
    interrupt_after(monkeypatch, parts=parts)

    stopped = cli("solve", corpus, "-o", out, "--batch-size", 10, "--workers", 1, "-q")

    assert stopped.exit_code == 130
    assert_one_line_error(stopped.stderr, f"{10 * parts} rows", str(partial), "--resume")
    assert not out.exists()
    assert part_starts(partial) == [10 * i for i in range(parts)]
    assert sorted(os.listdir(partial))[-1] == "run.json"
    monkeypatch.undo()
    # what a kill -9 in the middle of writing a part, or of the final merge, leaves behind
    (partial / ".part-000000000020-10-0-20-00000000.parquet.tmp-99999").write_bytes(b"half")
    (tmp_path / ".out.parquet.tmp-99999").write_bytes(b"half an output")

    # batch size and worker count may change on resume: they do not change results
    resumed = cli(
        "solve", corpus, "-o", out, "--batch-size", 7, "--workers", 2, "-q", "--json", "--resume"
    )

    assert resumed.exit_code == 0, resumed.output
    summary = json.loads(resumed.stdout)
    assert (summary["rows"], summary["resumed_rows"]) == (60, 10 * parts)
    assert metadata_of(out)["resumed_rows"] == 10 * parts
    assert_same_results(frame_of(out), full)
    assert sorted(os.listdir(tmp_path)) == ["out.parquet"]  # checkpoint and temp files gone


def test_resume_refuses_a_checkpoint_of_other_options(tmp_path, monkeypatch, medium):
    corpus, _ = medium["csv"]
    out = tmp_path / "out.parquet"
    interrupt_after(monkeypatch, parts=1)
    assert cli("solve", corpus, "-o", out, "--batch-size", 10, "--workers", 1).exit_code == 130
    monkeypatch.undo()

    for options, named in [
        (["--strategy", "mrv"], "strategy"),
        (["--solutions", "1"], "solutions"),
        (["--max-nodes", "1000"], "max_nodes"),
        (["--column", "puzzle"], "reading options"),
    ]:
        refused = cli("solve", corpus, "-o", out, "--resume", *options)
        assert refused.exit_code == 2, options
        assert_one_line_error(refused.stderr, "other", named, "without --resume")

    # a checkpoint another version of the tool made (its parts may have another schema)
    recorded = tmp_path / "out.parquet.partial" / "run.json"
    kept = recorded.read_text()
    recorded.write_text(kept.replace(f'"version": "{pipeline.__version__}"', '"version": "0.0.1"'))
    refused = cli("solve", corpus, "-o", out, "--resume")
    recorded.write_text(kept)
    assert refused.exit_code == 2
    assert_one_line_error(refused.stderr, "other", "version", "without --resume")

    stat = corpus.stat()
    os.utime(corpus, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # the input changed
    try:
        refused = cli("solve", corpus, "-o", out, "--resume")
    finally:
        os.utime(corpus, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert refused.exit_code == 2
    assert_one_line_error(refused.stderr, "input mtime")
    assert not out.exists() and (tmp_path / "out.parquet.partial" / "run.json").exists()

    # without --resume a run starts over, and says so
    again = cli("solve", corpus, "-o", out, "--strategy", "mrv", "--workers", 1, "-q")
    assert again.exit_code == 0, again.output
    assert "starting over" in again.stderr
    assert sorted(os.listdir(tmp_path)) == ["out.parquet"]


def test_resume_without_a_checkpoint_is_a_fresh_run_with_a_note(tmp_path):
    """As `make`, `rsync --partial` or `wget -c` do: nothing to continue is not an error (a
    script can always pass --resume); one line on stderr says so, even with -q."""
    corpus = write_corpus(tmp_path, "csv", None)

    result = cli("solve", corpus, "--resume", "-q")

    assert result.exit_code == 0, result.output
    partial = tmp_path / "corpus.solved.parquet.partial"
    assert result.stderr == f"note: no checkpoint at {partial}; starting a fresh run\n"
    solved = pl.read_parquet(tmp_path / "corpus.solved.parquet")
    assert solved["row"].to_list() == list(range(CORPUS.height))
    assert sorted(os.listdir(tmp_path)) == ["corpus.csv", "corpus.solved.parquet"]


# --- real processes: kill -9, Ctrl-C, SIGTERM ------------------------------------------------

HARD_OPTIONS = ("--strategy", "backtrack", "--batch-size", "25", "--quiet")
HARD_ROWS = 1000  # about 3 s of backtracking on 2 cores


@pytest.fixture(scope="module")
def hard(tmp_path_factory):
    """A corpus that takes seconds to solve, and its uninterrupted result."""
    folder = tmp_path_factory.mktemp("hard")
    corpus = folder / "hard.csv"
    generate(HARD_ROWS, seed=11).write_csv(corpus)
    baseline = folder / "baseline.parquet"
    done = command("solve", corpus, "-o", baseline, *HARD_OPTIONS)
    assert done.returncode == 0, done.stderr
    return corpus, frame_of(baseline)


def start_run(corpus: Path, out: Path, executor: str = "local") -> subprocess.Popen:
    """`sudoku-pipeline solve` in its own process group (worker processes join that group)."""
    argv = [*COMMAND, "solve", str(corpus), "-o", str(out), *HARD_OPTIONS, "--executor", executor]
    return subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )


def wait_for_a_part(out: Path, run: subprocess.Popen, timeout: float = 60) -> None:
    partial = out.with_name(out.name + ".partial")
    deadline = time.monotonic() + timeout
    while not any(partial.glob("part-*")):
        assert run.poll() is None, run.communicate()
        assert time.monotonic() < deadline, "no checkpoint part appeared"
        time.sleep(0.02)


def wait_until_gone(group: int, timeout: float) -> list[int]:
    deadline = time.monotonic() + timeout
    while (left := live_processes(group)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def kill_group(group: int) -> None:
    try:
        os.killpg(group, signal.SIGKILL)
    except ProcessLookupError:
        pass


def rows_in(partial: Path) -> int:
    """Rows the checkpoint's parts hold, read from the parts themselves."""
    return sum(pq.read_metadata(p).num_rows for p in partial.glob("part-*.parquet"))


def part_starts(partial: Path) -> list[int]:
    """Where each kept part starts, in order (`part-START-ROWS-SOURCE-FIRSTROW-CRC.parquet`)."""
    return sorted(int(p.name.split("-")[1]) for p in partial.glob("part-*.parquet"))


@linux_only
def test_kill_9_mid_run_then_resume_equals_an_uninterrupted_run(tmp_path, hard):
    corpus, baseline = hard
    out = tmp_path / "out.parquet"
    partial = tmp_path / "out.parquet.partial"
    run = start_run(corpus, out)
    try:
        wait_for_a_part(out, run)
        os.kill(run.pid, signal.SIGKILL)  # the main process only, as `kill -9 PID` does
        run.wait(timeout=10)
        # its workers notice that their parent is gone and end too
        assert wait_until_gone(run.pid, timeout=5) == []
    finally:
        kill_group(run.pid)
        run.communicate(timeout=10)

    assert run.returncode == -signal.SIGKILL
    assert not out.exists()
    kept = rows_in(partial)
    assert 0 < kept < HARD_ROWS  # stopped mid-way, with finished batches kept

    resumed = command("solve", corpus, "-o", out, *HARD_OPTIONS, "--resume", "--json")

    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["resumed_rows"] == kept
    assert_same_results(frame_of(out), baseline)
    assert sorted(os.listdir(tmp_path)) == ["out.parquet"]


@linux_only
@pytest.mark.parametrize("executor", ["local", "processes"])
@pytest.mark.parametrize("how", ["ctrl-c", "sigterm"])
def test_ctrl_c_stops_within_seconds_ends_the_workers_and_says_how_to_resume(
    tmp_path, hard, how, executor
):
    corpus, _ = hard
    out = tmp_path / "out.parquet"
    run = start_run(corpus, out, executor)
    try:
        wait_for_a_part(out, run)
        if executor == "processes":
            assert len(live_processes(run.pid)) > 1  # the workers are up
        sent = time.monotonic()
        if how == "ctrl-c":  # a terminal sends SIGINT to the whole foreground process group
            os.killpg(run.pid, signal.SIGINT)
        else:
            os.kill(run.pid, signal.SIGTERM)
        _, stderr = run.communicate(timeout=30)  # also waits for whoever holds stderr open
        took = time.monotonic() - sent
        left = wait_until_gone(run.pid, timeout=2)
    finally:
        kill_group(run.pid)

    assert run.returncode == 130, stderr
    assert took < 3
    assert left == []
    assert "Traceback" not in stderr
    assert_one_line_error(stderr, "interrupted", "--resume")
    assert rows_in(tmp_path / "out.parquet.partial") > 0 and not out.exists()


def is_worker(pid: int) -> bool:
    try:
        return b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


@linux_only
def test_a_worker_killed_mid_run_ends_the_run_with_one_line_keeping_the_checkpoint(tmp_path, hard):
    corpus, _ = hard
    out = tmp_path / "out.parquet"
    run = start_run(corpus, out, "processes")
    try:
        wait_for_a_part(out, run)
        worker = next(pid for pid in live_processes(run.pid) if is_worker(pid))
        os.kill(worker, signal.SIGKILL)  # what the OOM killer does
        _, stderr = run.communicate(timeout=30)
        left = wait_until_gone(run.pid, timeout=3)
    finally:
        kill_group(run.pid)

    assert run.returncode == 2, stderr
    assert_one_line_error(stderr, "a worker process died", "--resume")
    assert left == []
    assert rows_in(tmp_path / "out.parquet.partial") > 0 and not out.exists()


# --- columns on request: --canonical, --rate ---------------------------------------------------


def test_canonical_and_rate_add_their_columns(tmp_path):
    import numpy as np

    from pipeline.grid import format_grids, parse_puzzles
    from pipeline.symmetry import random_symmetries

    made = generate(6, seed=14)["puzzle"]
    disguised = random_symmetries(parse_puzzles(made).grids, np.random.default_rng(1))
    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join([*made, *pl.Series(format_grids(disguised)), "junk"]) + "\n")
    out = tmp_path / "out.parquet"

    result = cli("solve", corpus, "-o", out, "--canonical", "--rate", "--rate-samples", 4)

    assert result.exit_code == 0, result.output
    got = pl.read_parquet(out)
    assert got.columns[-6:] == ["canonical", "difficulty", "grade", "grade_level", "steps",
                                "steps_by_level"]  # fmt: skip
    assert got["canonical"][:6].to_list() == got["canonical"][6:12].to_list()  # disguises
    assert got["canonical"][12] is None and got["grade"][12] is None  # the junk row
    assert got["grade"][:6].to_list() == got["grade"][6:12].to_list()  # grades ignore disguise
    assert got["difficulty"][:12].is_not_null().all()
    plain = cli("solve", corpus, "-o", tmp_path / "plain.parquet")
    assert plain.exit_code == 0
    assert "canonical" not in pl.read_parquet(tmp_path / "plain.parquet").columns


def test_an_input_difficulty_column_passes_through_and_steps_aside_for_rate(tmp_path):
    corpus = tmp_path / "kaggle.csv"
    generate(5, seed=3).select("puzzle").with_columns(difficulty=pl.lit(2.5)).write_csv(corpus)

    plain, rated = tmp_path / "plain.parquet", tmp_path / "rated.parquet"
    assert cli("solve", corpus, "-o", plain).exit_code == 0
    assert cli("solve", corpus, "-o", rated, "--rate", "--rate-samples", 2).exit_code == 0

    assert pl.read_parquet(plain)["difficulty"].to_list() == ["2.5"] * 5  # the input's own
    got = pl.read_parquet(rated)
    assert got["input_difficulty"].to_list() == ["2.5"] * 5
    assert got["difficulty"].dtype == pl.Float64
    assert metadata_of(rated)["renamed_columns"] == {
        str(corpus): {"difficulty": "input_difficulty"}
    }


# --- input faults: header guesses, shards, odd file names (issue: inputs) --------------------


@pytest.mark.parametrize("name", ["new\nline.csv", "carriage\rreturn.csv", "bell\x07.csv"])
def test_a_control_character_in_a_file_name_keeps_the_error_one_line(tmp_path, name):
    result = cli("solve", tmp_path / name, "-o", tmp_path / "out.parquet")

    assert result.exit_code == 2
    escaped = name.encode("unicode_escape").decode()  # new\nline.csv, bell\x07.csv
    assert_one_line_error(result.stderr, f"{escaped}: no such file")


def test_an_input_name_that_is_not_utf8_is_solved_beside_itself(tmp_path):
    name = os.fsdecode(b"caf\xe9.csv")  # a Latin-1 name: a surrogate escape in Python's str
    corpus = tmp_path / name
    corpus.write_text(CORPUS.select("puzzle").write_csv())

    run = command("solve", corpus, "-q")

    assert run.returncode == 0, run.stderr
    out = tmp_path / os.fsdecode(b"caf\xe9.solved.parquet")
    got = pl.read_parquet(out.read_bytes())  # polars, too, cannot open such a name
    assert got["puzzle"].to_list() == CORPUS["puzzle"].to_list()
    validated = cli("validate", corpus)  # its findings go through a temporary file named alike
    assert validated.exit_code == 0, validated.stderr
    assert (tmp_path / os.fsdecode(b"caf\xe9.findings.parquet")).exists()
    missing = command("solve", tmp_path / os.fsdecode(b"gon\xe9.csv"), "-o", tmp_path / "o.csv")
    assert missing.returncode == 2
    assert_one_line_error(missing.stderr, "gon\\xe9.csv: no such file")


@pytest.mark.parametrize("empty_first", [False, True])
def test_a_header_only_shard_with_an_id_column_joins_the_others(tmp_path, empty_first):
    # Its id column has no value to type it by: it takes the others' type (int64 here), not
    # the fallback `string` that made the shards' schemas differ.
    full, empty = tmp_path / "part-1.csv", tmp_path / "part-0.csv"
    CORPUS.select("id", "puzzle").write_csv(full)
    empty.write_text("id,puzzle\n")
    inputs = [empty, full] if empty_first else [full, empty]
    out = tmp_path / "out.parquet"

    result = cli("solve", *inputs, "-o", out)

    assert result.exit_code == 0, result.stderr
    got = frame_of(out)
    assert got["id"].to_list() == CORPUS["id"].to_list()
    assert got.schema["id"] == pl.Int64
    assert set(got["source"]) == {str(full)}


def test_a_headerless_file_whose_first_label_is_a_column_name_loses_no_row(tmp_path):
    # 3,000 rows `label,puzzle`, the first label `sudoku`: read as a header, the first row was
    # lost and the `sudoku` column taken for the puzzles (2,999 malformed rows, exit 0).
    puzzles = generate(3, seed=8)["puzzle"].to_list()
    corpus = tmp_path / "labelled.csv"
    corpus.write_text("".join(f"{'sudoku' if i == 0 else f'x{i}'},{puzzles[i % 3]}\n"
                              for i in range(3000)))  # fmt: skip
    out = tmp_path / "out.parquet"

    result = cli("solve", corpus, "-o", out)

    assert result.exit_code == 0, result.output
    got = frame_of(out)
    assert got.height == 3000
    assert set(got["verdict"]) == {"solved"}
    assert got["column_0"][:2].to_list() == ["sudoku", "x1"]
    assert metadata_of(out)["input"]["header"] is False


def test_a_header_guessed_from_content_is_told_on_stderr_and_in_the_metadata(tmp_path):
    puzzles = generate(2, seed=9)["puzzle"].to_list()
    corpus = tmp_path / "cells.csv"
    corpus.write_text("label,cells\n" + "".join(f"p{i},{p}\n" for i, p in enumerate(puzzles)))
    out = tmp_path / "out.parquet"

    result = cli("solve", corpus, "-o", out)

    assert result.exit_code == 0, result.output
    assert f"note: {corpus}: its first line is read as column names (label, cells)" in (
        result.stderr
    )
    assert "--no-header" in result.stderr
    assert frame_of(out)["label"].to_list() == ["p0", "p1"]
    assert metadata_of(out)["input"]["header"] is True
    quiet = cli("solve", corpus, "-o", out, "-q")
    assert quiet.exit_code == 0 and quiet.stderr == ""
    kept = cli("solve", corpus, "-o", out, "--no-header", "--column", "column_1")
    assert kept.exit_code == 0 and frame_of(out).height == 3  # the label line is a row now
