"""`python:MODULE:FUNCTION` (pipeline/plugins/python_function.py): both contracts answer
generated puzzles with their known solutions; a function's exceptions and wrong answers are
row errors, never a crash; a module or function that is not there is one ValueError."""

import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from pipeline import generate
from pipeline.grid import parse_puzzles
from pipeline.plugins import parse_spec
from pipeline.plugins.python_function import PythonSolver, contract_of, read_board

# The seeds' solver (/work/shared/seeds), as a user would paste it.
SEEDS_SOLVER = """
__version__ = "1.2.3"

def solve_sudoku(grid):
    rows, cols, boxes = ([set() for _ in range(9)] for _ in range(3))
    empty = []
    for r in range(9):
        for c in range(9):
            d, b = grid[r][c], r // 3 * 3 + c // 3
            if d == ".": empty.append((r, c)); continue
            if d in rows[r] or d in cols[c] or d in boxes[b]: return False
            rows[r].add(d); cols[c].add(d); boxes[b].add(d)
    def fill(i):
        if i == len(empty): return True
        r, c = empty[i]; b = r // 3 * 3 + c // 3
        for d in "123456789":
            if d in rows[r] or d in cols[c] or d in boxes[b]: continue
            grid[r][c] = d; rows[r].add(d); cols[c].add(d); boxes[b].add(d)
            if fill(i + 1): return True
            grid[r][c] = "."; rows[r].remove(d); cols[c].remove(d); boxes[b].remove(d)
        return False
    return fill(0)

def solve_ints(grid: list[list[int]]) -> bool:
    board = [["." if v == 0 else str(v) for v in row] for row in grid]
    if not solve_sudoku(board):
        return False
    grid[:] = [[int(v) for v in row] for row in board]
    return True

def solve_all(puzzles: list[str]) -> list[str | None]:
    out = []
    for p in puzzles:
        board = [list(p[r:r + 9]) for r in range(0, 81, 9)]
        out.append("".join("".join(row) for row in board) if solve_sudoku(board) else None)
    return out

def solve_marked(puzzles):
    return solve_all(puzzles)
solve_marked.sudoku_contract = "batch"

def raises(grid):
    if grid[0][0] == ".":
        raise RuntimeError("no idea\\nsecond line")
    return solve_sudoku(grid)

def says_none(grid):
    return None

def wrong_digit(grid):
    solve_sudoku(grid)
    grid[8][8] = "x"
    return True

def shrinks(grid):
    grid.pop()
    return True

def short_batch(puzzles: list[str]) -> list[str | None]:
    return solve_all(puzzles)[:-1]

def odd_answers(puzzles: list[str]) -> list[str | None]:
    return [7, "123"] + solve_all(puzzles[2:])

def batch_raises(puzzles: list[str]) -> list[str | None]:
    raise ValueError("model not loaded")

def exits(grid):
    raise SystemExit(3)

def no_argument():
    return True

not_a_function = 3
"""


@pytest.fixture(scope="module")
def solver_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("solvers") / "user_solver.py"
    path.write_text(textwrap.dedent(SEEDS_SOLVER))
    return path


@pytest.fixture(scope="module")
def puzzles() -> tuple[np.ndarray, np.ndarray]:
    """Six generated puzzles (one solution each) and their solutions, `(n, 81) uint8`."""
    frame = generate(6, seed=25)
    return (parse_puzzles(frame["puzzle"].to_list()).grids,
            parse_puzzles(frame["solution"].to_list()).grids)  # fmt: skip


def adapter(path: Path, function: str) -> PythonSolver:
    return PythonSolver(parse_spec(f"python:{path}:{function}"))


@pytest.mark.parametrize("function,contract", [("solve_sudoku", "board"),
                                               ("solve_ints", "board_ints"),
                                               ("solve_all", "batch"),
                                               ("solve_marked", "batch")])  # fmt: skip
def test_each_contract_solves_generated_puzzles(solver_file, puzzles, function, contract):
    grids, solutions = puzzles
    solver = adapter(solver_file, function)
    assert solver.contract == contract and solver.holds_gil
    skip = np.zeros(len(grids), dtype=np.bool_)
    skip[1] = True
    answers = solver.answer(grids, skip, 2)
    asked = ~skip
    assert np.array_equal(answers.solutions[asked], solutions[asked])
    assert not answers.solutions[1].any() and answers.solve_ns[1] == 0
    assert (answers.counts == -1).all() and answers.guesses is None
    assert answers.errors == [None] * len(grids)
    assert (answers.solve_ns[asked] > 0).all()
    again = solver.answer(grids, skip, 2)  # the same answers every time
    assert np.array_equal(again.solutions, answers.solutions)


def test_batch_time_is_spread_evenly(solver_file, puzzles):
    grids, _ = puzzles
    answers = adapter(solver_file, "solve_all").answer(grids, np.zeros(6, np.bool_), 1)
    assert len(set(answers.solve_ns.tolist())) == 1


def test_no_solution_is_a_count_of_zero(solver_file, puzzles):
    grids, _ = puzzles
    clash = grids[:1].copy()
    clash[0, :2] = (5, 5)  # the seeds' function returns False for clashing givens
    for function in ("solve_sudoku", "solve_all"):
        answers = adapter(solver_file, function).answer(clash, np.zeros(1, np.bool_), 2)
        assert answers.counts.tolist() == [0] and not answers.solutions.any()
        assert answers.errors == [None]


def test_an_exception_is_that_rows_error(solver_file, puzzles):
    grids, solutions = puzzles
    grids = grids.copy()
    grids[0, 0] = 0  # `raises` fails on a blank first cell only
    grids[1, 0] = solutions[1, 0]
    answers = adapter(solver_file, "raises").answer(grids[:2], np.zeros(2, np.bool_), 2)
    assert answers.errors[0] == "the solver raised RuntimeError: no idea"
    assert answers.errors[1] is None
    assert np.array_equal(answers.solutions[1], solutions[1])
    exits = adapter(solver_file, "exits").answer(grids[:1], np.zeros(1, np.bool_), 2)
    assert exits.errors == ["the solver raised SystemExit: 3"]


def test_a_return_that_is_not_a_bool_or_a_board_is_an_error(solver_file, puzzles):
    grids, _ = puzzles
    one = np.zeros(1, np.bool_)
    none = adapter(solver_file, "says_none").answer(grids[:1], one, 2)
    assert none.errors[0].startswith("the solver returned None, not True or False")
    shrunk = adapter(solver_file, "shrinks").answer(grids[:1], one, 2)
    assert shrunk.errors == ["the solver left the board without 9 rows of 9 cells"]
    # A non-digit is read as such (the checks then call the grid incomplete), not an error.
    wrong = adapter(solver_file, "wrong_digit").answer(grids[:1], one, 2)
    assert wrong.errors == [None] and wrong.solutions[0, 80] == 10


def test_a_batch_of_the_wrong_length_or_kind_errs_on_every_row(solver_file, puzzles):
    grids, solutions = puzzles
    rows = np.zeros(6, np.bool_)
    short = adapter(solver_file, "short_batch").answer(grids, rows, 2)
    assert short.errors == ["the solver returned 5 answers for 6 puzzles"] * 6
    failed = adapter(solver_file, "batch_raises").answer(grids, rows, 2)
    assert failed.errors == ["the solver raised ValueError: model not loaded on a batch of 6"] * 6
    odd = adapter(solver_file, "odd_answers").answer(grids, rows, 2)
    assert odd.errors[:2] == ["the solver answered a int, not an 81-digit string or None",
                              "the solver's answer has 3 characters, not 81"]  # fmt: skip
    assert odd.errors[2:] == [None] * 4
    assert np.array_equal(odd.solutions[2:], solutions[2:])


def test_version_and_contract_in_the_metadata(solver_file):
    solver = adapter(solver_file, "solve_sudoku")
    assert solver.version() == "1.2.3"
    assert solver.describe() == {"contract": "board"}


def test_a_dotted_module_from_the_current_folder(solver_file, monkeypatch):
    monkeypatch.chdir(solver_file.parent)
    monkeypatch.setattr(
        sys, "path", [p for p in sys.path if p not in ("", str(solver_file.parent))]
    )
    solver = PythonSolver(parse_spec("python:user_solver:solve_sudoku"))
    assert solver.contract == "board"
    monkeypatch.delitem(sys.modules, "user_solver")


@pytest.mark.parametrize("target,message", [
    ("no_such_module_25:solve", "no module 'no_such_module_25'"),
    ("{dir}/missing.py:solve", "no Python file"),
    ("{file}:nothing_here", "has no function 'nothing_here'"),
    ("{file}:not_a_function", "is a int, not a function"),
    ("{file}:no_argument", "does not take one argument"),
    ("{dir}/broken.py:solve", "importing '{dir}/broken.py' failed: ZeroDivisionError"),
    ("{dir}/needs.py:solve", "failed: ModuleNotFoundError: No module named 'not_installed_25'"),
])  # fmt: skip
def test_a_module_or_function_that_is_not_there_is_one_value_error(solver_file, target, message):
    folder = solver_file.parent
    (folder / "broken.py").write_text("1 / 0\n")
    (folder / "needs.py").write_text("import not_installed_25\n")
    fill = {"dir": str(folder), "file": str(solver_file)}
    with pytest.raises(ValueError, match=None) as caught:
        PythonSolver(parse_spec(f"python:{target.format(**fill)}"))
    assert message.format(**fill) in str(caught.value)
    assert "\n" not in str(caught.value)


def test_how_the_contract_is_recognised():
    def annotated(puzzles: "list[str]"):  # a string annotation, as `from __future__` leaves
        return []

    def returns_list(puzzles) -> list[str | None]:
        return []

    def plain(board):
        return True

    def declared(board):
        return True

    declared.sudoku_contract = "board_ints"  # type: ignore[attr-defined]
    assert [contract_of(f) for f in (annotated, returns_list, plain, declared)] == [
        "batch", "batch", "board", "board_ints"]  # fmt: skip
    plain.sudoku_contract = "grid"  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="sudoku_contract is 'grid'"):
        contract_of(plain)


def test_read_board_takes_strings_ints_and_row_strings():
    rows = ["534678912", "672195348", "198342567", "859761423", "426853791", "713924856",
            "961537284", "287419635", "345286179"]  # fmt: skip
    as_chars = read_board([list(r) for r in rows])
    as_ints = read_board([[int(c) for c in r] for r in rows])
    as_strings = read_board(rows)
    assert isinstance(as_chars, np.ndarray)
    assert np.array_equal(as_chars, as_ints) and np.array_equal(as_chars, as_strings)
    assert read_board(5).startswith("the solver left the board as a int")


def test_read_board_reads_odd_cells_as_not_digits():
    rows = [list("534678912") for _ in range(9)]
    rows[0][:2] = ["53", ""]  # still 81 characters in all, but not one a cell
    assert read_board(rows)[:3].tolist() == [10, 10, 4]
    ints = [[5, 3, 4, 6, 7, 8, 9, 1, 2] for _ in range(9)]
    ints[0][:4] = [10**30, True, -1, 0]
    assert read_board(ints)[:5].tolist() == [10, 10, 10, 0, 7]
    rows[1][0] = "é"
    assert read_board(rows)[9] == 10


def test_warm_calls_the_function_once_on_a_complete_grid(tmp_path):
    path = tmp_path / "counting.py"
    path.write_text("calls = []\ndef solve(board):\n    calls.append(board)\n    return True\n")
    solver = adapter(path, "solve")
    solver.warm()
    assert len(solver.module.calls) == 1 and "." not in "".join(
        map("".join, solver.module.calls[0])
    )
