"""One board at a time: the Python API of the original problem statements.

* `solve_sudoku(grid)`: fill a 9x9 grid in place and return True, or False when the givens
  clash or no filling exists. It fills what can change (a list of 9 lists, of 9 strings or of
  81 cells, a writable numpy array) and refuses a str or a tuple with a TypeError.
* `solve_unique(board)`: the completed board of a puzzle with exactly one solution.
* `is_valid(board)`: no digit repeats in a row, column or box (blanks ignored), checked in one
  pass over the cells.
* `solve(puzzle)`: everything the batch solver knows about one board, as a `SolveResult`.

Boards come in any usual shape (`pipeline.grid.as_grid`): an 81-character string, 9 strings
of 9, 9 lists of 9 characters (or ints 0-9), 81 cells in one list, a numpy array of shape
(9, 9) or (81,); blanks are `.` or `0`. What is not a board at all is a TypeError, a board of
the wrong size or with a bad cell a ValueError.
"""

from collections.abc import MutableSequence, Sequence
from typing import Any, NamedTuple

import numpy as np

from pipeline.grid import CELLS, Board, as_grid, to_rows, to_string
from pipeline.kernels import DEFAULT_STRATEGY, codes, solve_grids


class SolveResult(NamedTuple):
    """The outcome for one board: `verdict` is one of solved, multiple, unsolvable, invalid,
    limit; `solution` the 81-digit solution found (the first one for multiple), else None."""

    verdict: str
    solution: str | None
    nodes: int
    guesses: int
    ns: int


def solve(
    puzzle: Board,
    strategy: str = DEFAULT_STRATEGY,
    solutions: int = 2,
    max_nodes: int | None = None,
) -> SolveResult:
    """Solve one board in any shape; ValueError for a board of the wrong size or with a bad
    cell, TypeError for what is not a board."""
    grid = as_grid(puzzle)
    found = solve_grids(grid[None, :], strategy, solutions, max_nodes)
    code = int(found.verdicts[0])
    has_solution = bool(found.solutions[0, 0])
    return SolveResult(
        verdict=codes.VERDICT_NAMES[code],
        solution=to_string(found.solutions[0]) if has_solution else None,
        nodes=int(found.nodes[0]),
        guesses=int(found.guesses[0]),
        ns=int(found.solve_ns[0]),
    )


_FILLABLE = (
    "a list of 9 lists of 9 cells, a list of 9 strings of 9, a list of 81 cells, or a writable "
    "numpy array of shape (9, 9) or (81,)"
)


def _check_fillable(board: object) -> None:
    """Raise TypeError, before anything is written, when `board` cannot be filled in place:
    a str, bytes or tuple (they cannot change), a read-only array, or rows that are neither
    mutable nor a str or tuple (which are replaced whole, the list holding them being mutable)."""
    if isinstance(board, np.ndarray):
        if not board.flags.writeable:
            raise TypeError(
                f"solve_sudoku fills the board in place: the array is read-only; pass {_FILLABLE}"
            )
        return
    if not isinstance(board, Sequence):
        return  # not a board at all: as_grid says so
    if not isinstance(board, MutableSequence):
        kind = type(board).__name__
        raise TypeError(
            f"solve_sudoku fills the board in place, and a {kind} cannot change: pass "
            f"{_FILLABLE}; or call pipeline.solve(board) for the solution as a string"
        )
    if len(board) == 9:
        for number, row in enumerate(board, start=1):
            if not isinstance(row, MutableSequence | np.ndarray | str | tuple):
                kind = type(row).__name__
                raise TypeError(
                    f"solve_sudoku fills the board in place, and row {number} is a {kind}, "
                    f"which cannot change: pass {_FILLABLE}"
                )


def _cell(like: object, digit: int) -> Any:
    """`digit` as the kind of cell it replaces: ints stay ints, characters stay characters."""
    return digit if isinstance(like, int | np.integer) else str(digit)


def _fill_in_place(board: MutableSequence[Any] | np.ndarray, solution: np.ndarray) -> None:
    """Write a solution into a board accepted by `_check_fillable`, keeping its shape and the
    types of its cells."""
    digits = solution.tolist()
    if isinstance(board, np.ndarray):
        if board.shape == (9,):  # 9 row strings
            board[:] = ["".join(map(str, digits[r : r + 9])) for r in range(0, CELLS, 9)]
        elif board.dtype.kind == "U":
            board[...] = np.array([str(d) for d in digits]).reshape(board.shape)
        else:
            board[...] = solution.reshape(board.shape)
        return
    if len(board) == CELLS:
        for i, digit in enumerate(digits):
            board[i] = _cell(board[i], digit)
        return
    for r in range(9):
        row, cells = board[r], digits[9 * r : 9 * r + 9]
        if isinstance(row, str):
            board[r] = "".join(map(str, cells))
        elif isinstance(row, tuple):
            board[r] = tuple(_cell(old, d) for old, d in zip(row, cells, strict=True))
        elif isinstance(row, np.ndarray):
            row[:] = cells if row.dtype.kind in "iu" else [str(d) for d in cells]
        else:
            for c, digit in enumerate(cells):
                row[c] = _cell(row[c], digit)


def _fillable(board: object) -> bool:
    try:
        _check_fillable(board)
    except TypeError:
        return False
    return True


def solve_sudoku(grid: MutableSequence[Any] | np.ndarray) -> bool:
    """Fill the blank cells of a 9x9 grid in place and return True; return False
    (leaving the grid as it was) when the givens already clash or no filling exists.

    The grid may be 9 lists of 9 cells, 9 strings of 9 (each row is then replaced by its
    filled string), 81 cells in one list, or a writable numpy array of shape (9, 9) or (81,)
    (ints, or one-character strings); cells are one-character strings or ints, blanks `.` or
    `0`, and every cell keeps its type. A str or tuple cannot be filled in place: TypeError
    (`solve(board)` answers for those); a grid of the wrong size or with a bad cell: ValueError.
    When a puzzle has several solutions, one of them is written.
    """
    _check_fillable(grid)
    found = solve_grids(as_grid(grid)[None, :], solutions=1)
    if found.verdicts[0] != codes.FOUND:
        return False
    _fill_in_place(grid, found.solutions[0])
    return True


def solve_unique(board: Board) -> list[list[str]]:
    """The completed board (9 lists of 9 one-character strings) of a puzzle with
    exactly one solution, the board in any shape `solve` takes; a board that `solve_sudoku`
    can fill is filled in place too.

    Raises ValueError naming the verdict (multiple, unsolvable, invalid) otherwise.
    """
    result = solve(board)
    if result.verdict != "solved" or result.solution is None:
        raise ValueError(f"the puzzle does not have exactly one solution: {result.verdict}")
    solution = as_grid(result.solution)
    if _fillable(board):
        _fill_in_place(board, solution)  # type: ignore[arg-type]
    return to_rows(solution)


def is_valid(board: Board) -> bool:
    """True when no digit repeats in any row, column or box (blanks are skipped)."""
    from pipeline.kernels.checks import givens_valid  # numba: loaded on first use

    return bool(givens_valid(as_grid(board)[None, :])[0])
