"""`python:` and `cmd:` solvers through the jobs, end to end: `solve --solver`, `solve_batch`,
`bench --solver`. (Each adapter alone: test_solvers_python.py, test_solvers_program.py; the
`c:` solvers and the checks: test_solvers_library.py.)"""

import json
import sys
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest
from conftest import assert_one_line_error, cli

from pipeline import generate

# A seeds'-contract solver (9 lists of 9 characters, '.' blank, filled in place), plain
# backtracking, that lies on one puzzle: it changes the first given of any puzzle whose first
# cell is given as 1.
SEEDS_SOLVER = """
def solve(board):
    def ok(r, c, d):
        if any(board[r][k] == d or board[k][c] == d for k in range(9)):
            return False
        br, bc = r // 3 * 3, c // 3 * 3
        return all(board[br + i][bc + j] != d for i in range(3) for j in range(3))

    def search():
        for r in range(9):
            for c in range(9):
                if board[r][c] == ".":
                    for d in "123456789":
                        if ok(r, c, d):
                            board[r][c] = d
                            if search():
                                return True
                            board[r][c] = "."
                    return False
        return True

    lie = board[0][0] == "1"
    found = search()
    if found and lie:
        board[0][0] = "2"
    return found
"""

# A program: puzzles on stdin, one line each; it answers with the line of the puzzle's known
# solution (read from a file beside it), or an empty line for a puzzle it does not know.
PROGRAM = """
import sys
known = dict(line.split() for line in open(sys.argv[1]))
for line in sys.stdin:
    print(known.get(line.strip().replace("0", "."), ""), flush=True)
"""


@pytest.fixture(scope="module")
def corpus() -> pl.DataFrame:
    return generate(12, seed=5)


@pytest.fixture
def puzzles_file(tmp_path: Path, corpus: pl.DataFrame) -> Path:
    path = tmp_path / "puzzles.csv"
    corpus.select("puzzle").write_csv(path)
    return path


def _program(tmp_path: Path, corpus: pl.DataFrame, known: int) -> str:
    pairs = corpus.head(known).select("puzzle", "solution").rows()
    (tmp_path / "known.txt").write_text("".join(f"{p.replace('0', '.')} {s}\n" for p, s in pairs))
    (tmp_path / "answer.py").write_text(PROGRAM)
    return f"cmd:{sys.executable} {tmp_path / 'answer.py'} {tmp_path / 'known.txt'}"


def test_solve_with_a_python_function(tmp_path: Path, puzzles_file: Path, corpus) -> None:
    (tmp_path / "seeds_solver.py").write_text(SEEDS_SOLVER)
    spec = f"python:{tmp_path / 'seeds_solver.py'}:solve"
    out = tmp_path / "out.parquet"
    result = cli("solve", puzzles_file, "-o", out, "--solver", spec, "-q")
    assert result.exit_code == 0, result.stderr
    table = pl.read_parquet(out)
    lied = corpus["puzzle"].str.starts_with("1").to_list()
    expected = ["wrong_answer" if lie else "found" for lie in lied]
    assert table["verdict"].cast(pl.String).to_list() == expected
    assert table.filter(pl.col("verdict") == "found")["solution"].to_list() == [
        s for s, lie in zip(corpus["solution"], lied, strict=True) if not lie]  # fmt: skip
    assert table["nodes"].null_count() == len(table)  # a Python function counts no nodes
    # it returns a grid but claims no count: nothing for our kernel to agree with
    assert table["kernel_agrees"].null_count() == len(table)
    meta = json.loads(pq.read_metadata(out).metadata[b"sudoku_pipeline"])
    assert meta["solver"]["spec"] == spec
    assert meta["executor"] == "processes"  # it holds Python's lock


def test_solve_with_a_program(tmp_path: Path, puzzles_file: Path, corpus) -> None:
    spec = _program(tmp_path, corpus, known=8)  # the last 4 puzzles: an empty line, "none"
    out = tmp_path / "out.parquet"
    result = cli("solve", puzzles_file, "-o", out, "--solver", spec, "-q", "--executor", "local")
    assert result.exit_code == 0, result.stderr
    table = pl.read_parquet(out)
    # an empty line claims "no solution": the claim stands, and our kernel says it disagrees
    assert table["verdict"].cast(pl.String).to_list() == ["found"] * 8 + ["unsolvable"] * 4
    assert table["solution"].head(8).to_list() == corpus["solution"].head(8).to_list()
    assert table["kernel_agrees"].to_list() == [None] * 8 + [False] * 4


def test_bench_with_a_program_beside_a_strategy(tmp_path: Path, puzzles_file: Path, corpus):
    spec = _program(tmp_path, corpus, known=12)
    out = tmp_path / "bench.parquet"
    result = cli("bench", puzzles_file, "--solver", spec, "--solver", "fast", "--repeats", "1",
                 "-o", out, "-q")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    table = pl.read_parquet(out)
    theirs = table.filter(pl.col("strategy") == spec)
    assert theirs["verdict"].cast(pl.String).to_list() == ["found"] * 12
    assert sorted(table["strategy"].unique().to_list()) == sorted(["fast", spec])


def test_a_program_that_is_not_there_is_one_error_line(puzzles_file: Path, tmp_path: Path):
    result = cli("solve", puzzles_file, "-o", tmp_path / "o.parquet", "--solver", "cmd:/no/prog")
    assert result.exit_code == 2
    assert_one_line_error(result.stderr, "cmd:/no/prog", "no program")


def test_solve_refuses_a_strategy_and_a_solver_together(puzzles_file: Path, tmp_path: Path):
    result = cli("solve", puzzles_file, "-o", tmp_path / "o.parquet", "--strategy", "mrv",
                 "--solver", "fast")  # fmt: skip
    assert result.exit_code == 2
    assert_one_line_error(result.stderr, "--strategy", "--solver")
    assert not (tmp_path / "o.parquet").exists()
