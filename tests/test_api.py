"""One board at a time, as the original problem statements show it: "Fill a Sudoku Grid"
(`solve_sudoku`), "Complete the Unique Sudoku Solution" (`solve_unique`) and "Valid Sudoku"
(`is_valid`), each statement's examples with their answers; then the shapes a board may come in,
what `solve_sudoku` fills in place and what it refuses, with a message saying why."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pipeline
from pipeline import is_valid, solve, solve_sudoku, solve_unique
from pipeline.grid import as_grid, to_string

FILL_EXAMPLE = ["53..7....", "6..195...", ".98....6.", "8...6...3", "4..8.3..1",
            "7...2...6", ".6....28.", "...419..5", "....8..79"]  # fmt: skip
FILL_SOLUTION = "534678912672195348198342567859761423426853791713924856961537284287419635345286179"

UNIQUE_SOLVED = [
    "264538197", "538197264", "197264538", "972645381", "381972645",
    "645381972", "453819726", "819726453", "726453819",
]  # fmt: skip
UNIQUE_EXAMPLE = [
    "2645.8197", ".38197264", "1972645.8", "9.2...381", "381....45",
    "645...97.", "45.819726", "81972.453", "726.53819",
]  # fmt: skip


def test_fill_a_grid_in_place_example():
    grid = [list(row) for row in FILL_EXAMPLE]
    assert solve_sudoku(grid) is True
    assert "".join(grid[0]) == "534678912"
    assert "".join(grid[8]) == "345286179"
    assert "".join("".join(row) for row in grid) == FILL_SOLUTION


def test_fill_a_grid_example_as_printed_9_strings():
    """The statement's input is 9 strings: the list is filled in place, row by row."""
    grid = list(FILL_EXAMPLE)
    assert solve_sudoku(grid) is True
    assert grid[:3] == ["534678912", "672195348", "198342567"]


def test_fill_a_grid_clashing_givens_return_false_and_leave_the_grid():
    bad = [list("11......."), *[list(".........") for _ in range(8)]]
    before = [row[:] for row in bad]
    assert solve_sudoku(bad) is False
    assert bad == before


def test_solve_sudoku_returns_false_when_no_filling_exists():
    grid = [list("12345678."), list("........9"), *[list(".........") for _ in range(7)]]
    assert solve_sudoku(grid) is False


def test_solve_sudoku_keeps_int_cells_as_ints():
    grid = [[0 if ch == "." else int(ch) for ch in row] for row in FILL_EXAMPLE]
    assert solve_sudoku(grid) is True
    assert grid[0] == [5, 3, 4, 6, 7, 8, 9, 1, 2]


def test_complete_the_unique_solution_example_1():
    board = [list(row) for row in UNIQUE_EXAMPLE]
    assert solve_unique(board) == [list(row) for row in UNIQUE_SOLVED]
    assert board == [list(row) for row in UNIQUE_SOLVED]  # filled in place too


def test_complete_the_unique_solution_example_2_one_blank_in_the_corner():
    board = [list(row) for row in UNIQUE_SOLVED]
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


BOARD_ONE = FILL_EXAMPLE
BOARD_TWO = ["535.7...."] + FILL_EXAMPLE[1:]
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
def test_valid_sudoku_examples(board, expected):
    assert is_valid(board) is expected
    assert is_valid([list(row) for row in board]) is expected
    assert is_valid("".join(board)) is expected


@pytest.mark.parametrize(
    "shape",
    [
        "".join(FILL_EXAMPLE),
        "".join(FILL_EXAMPLE).replace(".", "0"),
        FILL_EXAMPLE,
        [list(row) for row in FILL_EXAMPLE],
        np.array([[0 if c == "." else int(c) for c in row] for row in FILL_EXAMPLE]),
    ],
    ids=["81 chars", "0 blanks", "9 strings", "9 lists", "numpy 9x9"],
)
def test_solve_takes_a_board_in_any_shape(shape):
    result = solve(shape)
    assert result.verdict == "solved"
    assert result.solution == FILL_SOLUTION
    assert result.nodes >= 1 and result.guesses == 0 and result.ns > 0


@pytest.mark.parametrize("strategy", pipeline.STRATEGIES)
def test_solve_with_each_strategy(strategy):
    result = solve(FILL_EXAMPLE, strategy=strategy)
    assert (result.verdict, result.solution) == ("solved", FILL_SOLUTION)


def test_solve_rejects_a_board_that_is_not_9x9():
    with pytest.raises(ValueError):
        solve(["123"])


def test_the_file_jobs_are_one_import_away():
    from pipeline.jobs.generate.job import generate_file
    from pipeline.jobs.solve.job import solve_file
    from pipeline.jobs.validate import validate_file

    assert pipeline.solve_file is solve_file
    assert pipeline.validate_file is validate_file
    assert pipeline.generate_file is generate_file
    with pytest.raises(AttributeError):
        pipeline.no_such_thing  # noqa: B018


def test_no_module_of_the_package_hides_a_public_name():
    """Importing a subpackage sets it as an attribute of `pipeline`: a subpackage named like a
    public function (a `pipeline/solve/` beside `pipeline.solve`) would replace the function
    once anything imported it. Every module is imported here, then every public name asked."""
    import importlib
    import pkgutil
    import types

    for module in pkgutil.walk_packages(pipeline.__path__, "pipeline."):
        if module.name.endswith("__main__"):
            continue
        importlib.import_module(module.name)
    for name in pipeline.__all__:
        assert not isinstance(getattr(pipeline, name), types.ModuleType), name


# ---- solve_sudoku: every mutable shape is filled in place, keeping its cells' types ---------

FILL_ROWS = [FILL_SOLUTION[i : i + 9] for i in range(0, 81, 9)]


def _ints(rows):
    return [[0 if c == "." else int(c) for c in row] for row in rows]


SHAPES = {  # name -> how to make a board of that shape from 9 row strings
    "9 lists of chars": lambda rows: [list(row) for row in rows],
    "9 lists of ints": _ints,
    "9 strings": list,
    "81 chars": lambda rows: list("".join(rows)),
    "81 ints": lambda rows: sum(_ints(rows), []),
    "numpy (9, 9) ints": lambda rows: np.array(_ints(rows)),
    "numpy (81,) ints": lambda rows: np.array(_ints(rows)).ravel(),
    "numpy (81,) uint8": lambda rows: np.array(_ints(rows), np.uint8).ravel(),
    "numpy (9, 9) chars": lambda rows: np.array([list(row) for row in rows]),
    "numpy (9,) strings": lambda rows: np.array(rows),
}


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)
    return a == b and [type(x) for x in a] == [type(x) for x in b]


@pytest.mark.parametrize("shape", SHAPES)
def test_solve_sudoku_fills_every_mutable_shape_in_place(shape):
    make = SHAPES[shape]
    board = make(FILL_EXAMPLE)
    assert solve_sudoku(board) is True
    assert _same(board, make(FILL_ROWS))  # the solution, in the board's own shape and types


@pytest.mark.parametrize("shape", SHAPES)
def test_solve_sudoku_leaves_every_shape_as_it_was_when_there_is_no_filling(shape):
    make = SHAPES[shape]
    no_filling = ["12345678.", "........9"] + ["........."] * 7
    board = make(no_filling)
    assert solve_sudoku(board) is False
    assert _same(board, make(no_filling))


@pytest.mark.parametrize(
    ("board", "kind"),
    [
        ("".join(FILL_EXAMPLE), "a str"),
        (tuple(FILL_EXAMPLE), "a tuple"),
        (tuple("".join(FILL_EXAMPLE)), "a tuple"),
        ("".join(FILL_EXAMPLE).encode(), "a bytes"),
    ],
    ids=["81-char str", "tuple of rows", "tuple of cells", "bytes"],
)
def test_solve_sudoku_refuses_a_board_it_cannot_fill_and_says_what_it_can(board, kind):
    with pytest.raises(TypeError, match=f"fills the board in place, and {kind} cannot change"):
        solve_sudoku(board)
    with pytest.raises(TypeError, match="a list of 9 lists"):  # names the shapes it can fill
        solve_sudoku(board)


def test_solve_sudoku_refuses_a_read_only_array():
    board = np.array(_ints(FILL_EXAMPLE))
    board.flags.writeable = False
    with pytest.raises(TypeError, match="read-only"):
        solve_sudoku(board)


def test_solve_sudoku_refuses_rows_it_cannot_fill_before_writing_anything():
    board = [list(row) for row in FILL_EXAMPLE]
    board[4] = range(9)  # a sequence of 9 that can neither change nor be rebuilt
    with pytest.raises(TypeError, match="row 5 is a range"):
        solve_sudoku(board)
    assert board[0] == list(FILL_EXAMPLE[0])


@pytest.mark.parametrize(
    ("board", "error", "message"),
    [
        (list("".join(FILL_EXAMPLE))[:80], ValueError, "expected 9 rows or 81 cells, got 80"),
        ([list(row) for row in FILL_EXAMPLE[:8]], ValueError, "expected 9 rows or 81 cells"),
        ([*FILL_EXAMPLE[:8], "....8..7x"], ValueError, "stray character 'x' at cell 80"),
        (np.zeros((3, 27), np.uint8), ValueError, r"shape \(9, 9\) or \(81,\)"),
        (np.zeros(81, np.float64), TypeError, "dtype float64"),
        (None, TypeError, "expected a Sudoku board, got NoneType"),
    ],
    ids=["80 cells", "8 rows", "stray character", "numpy (3, 27)", "floats", "None"],
)
def test_solve_sudoku_says_what_is_wrong_with_a_board(board, error, message):
    with pytest.raises(error, match=message):
        solve_sudoku(board)


def test_solve_unique_fills_a_flat_list_in_place_too():
    board = list("".join(UNIQUE_EXAMPLE))
    solved = solve_unique(board)
    assert board == list("".join(UNIQUE_SOLVED))
    assert solved == [list(row) for row in UNIQUE_SOLVED]


def test_solve_unique_answers_for_a_board_it_cannot_fill():
    assert solve_unique("".join(UNIQUE_EXAMPLE)) == [list(row) for row in UNIQUE_SOLVED]


@given(blanks=st.sets(st.integers(0, 80), max_size=81), shape=st.sampled_from(sorted(SHAPES)))
def test_solve_sudoku_restores_any_blanked_solution(blanks, shape):
    """Blank any cells of a solution: solve_sudoku fills a solution back in, keeping the
    givens (with many blanks another solution may be the one written)."""
    cells = ["." if i in blanks else c for i, c in enumerate(FILL_SOLUTION)]
    rows = ["".join(cells[i : i + 9]) for i in range(0, 81, 9)]
    board = SHAPES[shape](rows)
    assert solve_sudoku(board) is True
    filled = to_string(as_grid(board))
    assert is_valid(filled) and "." not in filled
    assert all(filled[i] == c for i, c in enumerate(cells) if c != ".")
