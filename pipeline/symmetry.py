"""Sudoku symmetries over whole batches: each maps a puzzle to an equivalent one.

Relabelling the digits, permuting the rows inside a band, the bands, the columns inside a stack,
the stacks, and transposing keep every row, column and box a row, column or box, so a puzzle's
number of solutions, and how hard it is, are unchanged. Used to make varied corpora from a few
puzzles (the generator, the benchmarks).
"""

import numpy as np


def _random_line_order(rng: np.random.Generator, n: int) -> np.ndarray:
    """(n, 9) orders of the nine rows (or columns): bands permuted, rows permuted inside each."""
    bands = rng.permuted(np.tile(np.arange(3), (n, 1)), axis=1)
    inside = rng.permuted(np.tile(np.arange(3), (n, 3, 1)), axis=2)
    return (bands[:, :, None] * 3 + inside).reshape(n, 9)


def random_symmetries(grids: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Apply one random symmetry per row of `(n, 81)` grids (0 = blank stays blank)."""
    grids = np.asarray(grids, dtype=np.uint8).reshape(-1, 81)
    n = grids.shape[0]
    relabel = np.zeros((n, 10), dtype=np.uint8)
    relabel[:, 1:] = rng.permuted(np.tile(np.arange(1, 10, dtype=np.uint8), (n, 1)), axis=1)
    relabelled = np.take_along_axis(relabel, grids.astype(np.intp), axis=1)
    rows = _random_line_order(rng, n)
    columns = _random_line_order(rng, n)
    cells = (rows[:, :, None] * 9 + columns[:, None, :]).reshape(n, 81)
    transpose = rng.random(n) < 0.5
    transposed = (columns[:, :, None] + rows[:, None, :] * 9).reshape(n, 81)  # (i, j) <- (j, i)
    cells[transpose] = transposed[transpose]
    return np.take_along_axis(relabelled, cells, axis=1)
