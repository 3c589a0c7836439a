"""Seeded puzzle generator: random complete grids, then givens removed while the solution stays
unique. Every step works on the whole batch at once (one solver call per removal round).

The same seed gives the same puzzles on every machine (numpy's PCG64 and a deterministic solver).
"""

import numpy as np
import polars as pl

from pipeline.grid import clue_counts, format_grids
from pipeline.solver import codes, solve_grids
from pipeline.symmetry import random_symmetries

MIN_UNIQUE_CLUES = 17  # no puzzle with fewer givens has a unique solution
_SEED_CELLS = 11  # random givens that a complete grid is grown from


def random_full_grids(n: int, rng: np.random.Generator) -> np.ndarray:
    """`(n, 81)` random valid complete grids.

    A few random digits in random cells are completed by the solver (rows whose seeds clash or
    cannot be completed are drawn again), then a random symmetry spreads the results over all
    grid shapes.
    """
    grids = np.zeros((n, 81), dtype=np.uint8)
    todo = np.arange(n)
    while todo.size:
        seeds = np.zeros((todo.size, 81), dtype=np.uint8)
        cells = np.argsort(rng.random((todo.size, 81)), axis=1)[:, :_SEED_CELLS]
        digits = rng.integers(1, 10, size=(todo.size, _SEED_CELLS), dtype=np.uint8)
        np.put_along_axis(seeds, cells, digits, axis=1)
        found = solve_grids(seeds, solutions=1)
        done = found.verdicts == codes.SOLVED
        grids[todo[done]] = found.solutions[done]
        todo = todo[~done]
    return random_symmetries(grids, rng)


def remove_givens(
    solutions: np.ndarray, rng: np.random.Generator, clues: int | None = None
) -> np.ndarray:
    """Blank cells of complete grids in a random order, keeping each removal that leaves the
    solution unique, until `clues` givens remain (or no given can go: the puzzle is minimal)."""
    target = MIN_UNIQUE_CLUES if clues is None else max(clues, MIN_UNIQUE_CLUES)
    puzzles = np.array(solutions, dtype=np.uint8, copy=True)
    n = puzzles.shape[0]
    order = np.argsort(rng.random((n, 81)), axis=1)
    remaining = np.full(n, 81, dtype=np.int64)
    rows = np.arange(n)
    for step in range(81):
        active = rows[remaining > target]
        if active.size == 0:
            break
        cells = order[active, step]
        trial = puzzles[active]
        trial[np.arange(active.size), cells] = 0
        verdicts = solve_grids(trial, solutions=2).verdicts
        keep = verdicts == codes.SOLVED
        puzzles[active[keep], cells[keep]] = 0
        remaining[active[keep]] -= 1
    return puzzles


def generate(n: int, seed: int = 0, clues: int | None = None) -> pl.DataFrame:
    """`n` puzzles with unique solutions: columns `id`, `puzzle`, `solution`, `clues`.

    `clues` is a target: givens are removed down to it when uniqueness allows, else the puzzle
    stops where no given can go (a minimal puzzle). Without it, puzzles are minimal (typically
    22 to 27 givens). Puzzles use `.` for blanks.
    """
    if n < 0:
        raise ValueError(f"n must be a number of puzzles >= 0, not {n}")
    if clues is not None and not MIN_UNIQUE_CLUES <= clues <= 81:
        raise ValueError(f"clues must be between {MIN_UNIQUE_CLUES} and 81, not {clues}")
    rng = np.random.Generator(np.random.PCG64(seed))
    solutions = random_full_grids(n, rng)
    puzzles = remove_givens(solutions, rng, clues)
    return pl.DataFrame(
        {
            "id": np.arange(n, dtype=np.int64),
            "puzzle": pl.Series(format_grids(puzzles)),
            "solution": pl.Series(format_grids(solutions)),
            "clues": clue_counts(puzzles),
        }
    )
