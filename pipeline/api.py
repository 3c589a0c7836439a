"""One board at a time: the Python API of the original problem statements.

* `solve_sudoku(grid)`: fill a 9x9 grid in place and return True, or False when the givens
  clash or no filling exists.
* `solve_unique(board)`: the completed board of a puzzle with exactly one solution.
* `is_valid(board)`: no digit repeats in a row, column or box (blanks ignored), checked in one
  pass over the cells.
* `solve(puzzle)`: everything the batch solver knows about one board, as a `SolveResult`.

Boards come in any usual shape: an 81-character string, 9 strings of 9, 9 lists of 9
characters (or ints 0-9); blanks are `.` or `0`.
"""

from typing import Any, NamedTuple

import numpy as np

from pipeline.grid import Board, as_grid, to_rows, to_string
from pipeline.solver import DEFAULT_STRATEGY, codes, solve_grids


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
    """Solve one board in any shape; raises ValueError when it is not a 9x9 board."""
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


def _fill_in_place(board: list[Any], solution: np.ndarray) -> None:
    """Write a solution into a board held as 9 lists of cells (or 9 strings), keeping the type
    of its cells: ints stay ints, characters stay characters."""
    for r in range(9):
        digits = solution[9 * r : 9 * r + 9].tolist()
        row = board[r]
        if isinstance(row, str):
            board[r] = "".join(map(str, digits))
            continue
        for c, digit in enumerate(digits):
            row[c] = digit if isinstance(row[c], int | np.integer) else str(digit)


def solve_sudoku(grid: list[Any]) -> bool:
    """Fill the blank cells of a 9x9 grid in place and return True; return False
    (leaving the grid as it was) when the givens already clash or no filling exists.

    When a puzzle has several solutions, one of them is written.
    """
    found = solve_grids(as_grid(grid)[None, :], solutions=1)
    if found.verdicts[0] != codes.FOUND:
        return False
    _fill_in_place(grid, found.solutions[0])
    return True


def solve_unique(board: list[Any]) -> list[list[str]]:
    """The completed board (9 lists of 9 one-character strings) of a puzzle with
    exactly one solution; the input board is filled in place too when it is 9 lists.

    Raises ValueError naming the verdict (multiple, unsolvable, invalid) otherwise.
    """
    result = solve(board)
    if result.verdict != "solved" or result.solution is None:
        raise ValueError(f"the puzzle does not have exactly one solution: {result.verdict}")
    solution = as_grid(result.solution)
    if isinstance(board, list) and len(board) == 9 and all(isinstance(r, list) for r in board):
        _fill_in_place(board, solution)
    return to_rows(solution)


def is_valid(board: Board) -> bool:
    """True when no digit repeats in any row, column or box (blanks are skipped)."""
    from pipeline.solver.checks import givens_valid  # numba: loaded on first use

    return bool(givens_valid(as_grid(board)[None, :])[0])
