"""The seeds' API, exactly as the original problem statements show it."""

import numpy as np
import pytest

import pipeline
from pipeline import is_valid, solve, solve_sudoku, solve_unique

SEED_000 = ["53..7....", "6..195...", ".98....6.", "8...6...3", "4..8.3..1",
            "7...2...6", ".6....28.", "...419..5", "....8..79"]  # fmt: skip
SEED_000_SOLUTION = (
    "534678912672195348198342567859761423426853791713924856961537284287419635345286179"
)

SEED_002_SOLVED = [
    "264538197", "538197264", "197264538", "972645381", "381972645",
    "645381972", "453819726", "819726453", "726453819",
]  # fmt: skip
SEED_002_PUZZLE = [
    "2645.8197", ".38197264", "1972645.8", "9.2...381", "381....45",
    "645...97.", "45.819726", "81972.453", "726.53819",
]  # fmt: skip


def test_seed_000_fills_the_grid_in_place():
    grid = [list(row) for row in SEED_000]
    assert solve_sudoku(grid) is True
    assert "".join(grid[0]) == "534678912"
    assert "".join(grid[8]) == "345286179"
    assert "".join("".join(row) for row in grid) == SEED_000_SOLUTION


def test_seed_000_clashing_givens_return_false_and_leave_the_grid():
    bad = [list("11......."), *[list(".........") for _ in range(8)]]
    before = [row[:] for row in bad]
    assert solve_sudoku(bad) is False
    assert bad == before


def test_solve_sudoku_returns_false_when_no_filling_exists():
    grid = [list("12345678."), list("........9"), *[list(".........") for _ in range(7)]]
    assert solve_sudoku(grid) is False


def test_solve_sudoku_keeps_int_cells_as_ints():
    grid = [[0 if ch == "." else int(ch) for ch in row] for row in SEED_000]
    assert solve_sudoku(grid) is True
    assert grid[0] == [5, 3, 4, 6, 7, 8, 9, 1, 2]


def test_seed_002_example_1():
    board = [list(row) for row in SEED_002_PUZZLE]
    assert solve_unique(board) == [list(row) for row in SEED_002_SOLVED]
    assert board == [list(row) for row in SEED_002_SOLVED]  # filled in place too


def test_seed_002_example_2_one_blank_in_the_corner():
    board = [list(row) for row in SEED_002_SOLVED]
    board[8][8] = "."
    assert solve_unique(board)[8] == list("726453819")


@pytest.mark.parametrize(
    "board, verdict",
    [
        (["........."] * 9, "multiple"),
        (["11......."] + ["........."] * 8, "invalid"),
        (["12345678.", "........9"] + ["........."] * 7, "unsolvable"),
    ],
)
def test_solve_unique_names_the_verdict(board, verdict):
    with pytest.raises(ValueError, match=verdict):
        solve_unique([list(row) for row in board])


BOARD_ONE = SEED_000
BOARD_TWO = ["535.7...."] + SEED_000[1:]
BOARD_THREE = ["5........", ".5......."] + ["........."] * 7
EMPTY = ["........."] * 9
ONE_DIGIT = ["5........"] + ["........."] * 8
COLUMN_REPEAT = ["5........", ".........", ".........", "5........"] + ["........."] * 5
BOX_REPEAT = ["5........", ".5......."] + ["........."] * 7
FAR_APART = ["5........"] + ["........."] * 7 + ["........5"]


@pytest.mark.parametrize(
    "board, expected",
    [
        (BOARD_ONE, True),
        (BOARD_TWO, False),
        (BOARD_THREE, False),
        (EMPTY, True),
        (ONE_DIGIT, True),
        (COLUMN_REPEAT, False),
        (BOX_REPEAT, False),
        (FAR_APART, True),
    ],
    ids=["board one", "board two", "board three", "empty", "one digit", "column repeat",
         "box repeat", "same digit far apart"],
)  # fmt: skip
def test_seed_003_is_valid(board, expected):
    assert is_valid(board) is expected
    assert is_valid([list(row) for row in board]) is expected
    assert is_valid("".join(board)) is expected


@pytest.mark.parametrize(
    "shape",
    [
        "".join(SEED_000),
        "".join(SEED_000).replace(".", "0"),
        SEED_000,
        [list(row) for row in SEED_000],
        np.array([[0 if c == "." else int(c) for c in row] for row in SEED_000]),
    ],
    ids=["81 chars", "0 blanks", "9 strings", "9 lists", "numpy 9x9"],
)
def test_solve_takes_a_board_in_any_shape(shape):
    result = solve(shape)
    assert result.verdict == "solved"
    assert result.solution == SEED_000_SOLUTION
    assert result.nodes >= 1 and result.guesses == 0 and result.ns > 0


@pytest.mark.parametrize("strategy", pipeline.STRATEGIES)
def test_solve_with_each_strategy(strategy):
    result = solve(SEED_000, strategy=strategy)
    assert (result.verdict, result.solution) == ("solved", SEED_000_SOLUTION)


def test_solve_rejects_a_board_that_is_not_9x9():
    with pytest.raises(ValueError):
        solve(["123"])


def test_the_file_jobs_are_one_import_away():
    from pipeline.jobs.generate import generate_file
    from pipeline.jobs.solve import solve_file
    from pipeline.validate import validate_file

    assert pipeline.solve_file is solve_file
    assert pipeline.validate_file is validate_file
    assert pipeline.generate_file is generate_file
    with pytest.raises(AttributeError):
        pipeline.no_such_thing  # noqa: B018
