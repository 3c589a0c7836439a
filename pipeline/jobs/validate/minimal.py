"""Minimality: which givens of a puzzle with a unique solution could be removed.

A puzzle is *minimal* when removing any single given leaves more than one solution. Removing a
given never loses the original solution, so a given is removable exactly when the puzzle
without it still has a unique solution: one uniqueness search (up to two solutions) per given,
all of a batch's searches in one solver call. A 17-clue puzzle costs 17 searches of 16-clue
puzzles: validation with `--minimal` is about 30 times slower than without.
"""

import numpy as np

from pipeline.kernels import codes, solve_grids

_CHUNK = 4096  # puzzles per solver call: about 25 trial grids each, so ~8 MB of grids


def removable_givens(
    grids: np.ndarray, max_nodes: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """For `(n, 81) uint8` puzzles with unique solutions: `(n, 81) bool`, the givens whose
    removal keeps the solution unique, and `(n,) bool`, the puzzles where the node budget ran
    out for some given (so the answer may be incomplete)."""
    grids = np.ascontiguousarray(grids, dtype=np.uint8).reshape(-1, 81)
    n = len(grids)
    removable = np.zeros((n, 81), dtype=np.bool_)
    undecided = np.zeros(n, dtype=np.bool_)
    for start in range(0, n, _CHUNK):
        chunk = grids[start : start + _CHUNK]
        puzzle, cell = np.nonzero(chunk)  # one trial per given, grouped by puzzle
        trials = chunk[puzzle]
        trials[np.arange(len(puzzle)), cell] = 0
        verdicts = solve_grids(trials, solutions=2, max_nodes=max_nodes).verdicts
        unique = verdicts == codes.SOLVED
        removable[start + puzzle[unique], cell[unique]] = True
        undecided[start + puzzle[verdicts == codes.LIMIT]] = True
    return removable, undecided
