"""Difficulty ratings of puzzles: search effort, and the techniques a person needs.

`rate(puzzles)` gives one row per puzzle, in input order:

* `difficulty` (Float64): mean guesses of the `fast` solver for the first solution over
  `samples` seeded random symmetries of the puzzle (difficulty.py); null with `samples=0`.
* `grade` (Enum(GRADES), dictionary-encoded in Arrow): the hardest technique of the ladder the
  puzzle needs, `search` when the ladder stalls (ladder.py); sorts in ladder order.
* `steps` (Int32): placements / eliminations made by the grade's technique; for `search`, the
  blank cells the ladder left to the search.
* `steps_by_level` (Array(Int32, len(TECHNIQUES))): placements / eliminations made by each
  technique, in TECHNIQUES order.

All four are null for rows that are not puzzles (malformed), whose givens clash (invalid) or
that have no solution; a puzzle with several solutions is rated (its ladder ends in `search`).
With `max_nodes`, a row whose search ran out of budget on some symmetric copy gets a null
`difficulty` (its grade stays).
"""

import numpy as np
import polars as pl

from pipeline.grid import PuzzleColumn, parse_puzzles
from pipeline.kernels import codes, solve_grids
from pipeline.rating.difficulty import difficulty_grids
from pipeline.rating.ladder import GRADES, NO_GRADE, SEARCH, SINGLES, TECHNIQUES, grade_grids
from pipeline.rating.puzzles import rated_puzzles

GRADE_TYPE = pl.Enum(list(GRADES))
RATING_SCHEMA = pl.Schema(
    {
        "difficulty": pl.Float64,
        "grade": GRADE_TYPE,
        "steps": pl.Int32,
        "steps_by_level": pl.Array(pl.Int32, len(TECHNIQUES)),
    }
)


def rate_grids(
    grids: np.ndarray | None,
    skip: np.ndarray | None = None,
    samples: int = 16,
    seed: int = 0,
    max_nodes: int | None = None,
    candidates: np.ndarray | None = None,
) -> pl.DataFrame:
    """`rate` for `(n, 81) uint8` grids already parsed; rows in `skip` get nulls.
    `candidates`: pencilmark puzzles instead (`(n, 81) uint16`, see
    `pipeline.kernels.candidates`; `grids` is ignored): the same columns, the ladder starting
    from the marks and the difficulty over symmetric copies of them."""
    if samples < 0:
        raise ValueError(f"samples must be 0 (no difficulty) or more, not {samples!r}")
    if seed < 0:
        raise ValueError(f"seed must be a non-negative integer, not {seed!r}")
    puzzles, skip = rated_puzzles(grids, candidates, skip, "rate_grids")
    grids, candidates = (None, puzzles) if candidates is not None else (puzzles, None)
    n = puzzles.shape[0]
    if samples:
        difficulty, verdicts = difficulty_grids(grids, samples, seed, skip, max_nodes, candidates)
        no_solution = (verdicts != codes.FOUND) & (verdicts != codes.LIMIT)
    else:  # the grade alone: one search says which puzzles have a solution
        difficulty = np.full(n, np.nan)
        verdicts = solve_grids(
            grids, solutions=1, max_nodes=max_nodes, skip=skip, candidates=candidates
        ).verdicts
        no_solution = (verdicts != codes.FOUND) & (verdicts != codes.LIMIT)
    graded = grade_grids(grids, skip=skip | no_solution, candidates=candidates)
    unrated = np.flatnonzero(graded.grades == NO_GRADE)
    index = np.clip(graded.grades.astype(np.int64), 0, len(TECHNIQUES) - 1)
    steps = np.take_along_axis(graded.steps, index[:, None], axis=1)[:, 0]
    steps = np.where(graded.grades == SEARCH, graded.blanks_left, steps)
    grade_index = pl.Series(graded.grades.astype(np.uint32)).scatter(unrated, None)
    return pl.DataFrame(
        {
            "difficulty": pl.Series(difficulty, nan_to_null=True),
            "grade": pl.Series(GRADES, dtype=GRADE_TYPE).gather(grade_index),
            "steps": pl.Series(steps.astype(np.int32)).scatter(unrated, None),
            "steps_by_level": pl.Series(graded.steps),
        }
    ).with_columns(pl.when(pl.Series(graded.grades != NO_GRADE)).then(pl.col("steps_by_level")))


def rate(
    puzzles: PuzzleColumn,
    samples: int = 16,
    seed: int = 0,
    max_nodes: int | None = None,
) -> pl.DataFrame:
    """Rate puzzles held in memory: a DataFrame with `difficulty`, `grade`, `steps` and
    `steps_by_level` (see the module docstring), one row per puzzle, in input order.

    `puzzles`: 81-character strings (a list, a polars Series, a pyarrow array) or an `(n, 81)`
    integer array with 0 for blanks. `samples`: random symmetries per puzzle for `difficulty`
    (0: skip it, grade only). `seed`: the same seed gives the same ratings, in any batch.
    """
    if isinstance(puzzles, np.ndarray) and puzzles.ndim == 2:
        grids = np.asarray(puzzles)
        if grids.shape[1] != 81 or grids.dtype.kind not in "iu":
            raise ValueError(f"expected an (n, 81) integer array, got {grids.dtype} {grids.shape}")
        if grids.size and (grids.min() < 0 or grids.max() > 9):
            raise ValueError("grid cells must be 0 (blank) to 9")
        return rate_grids(grids, None, samples, seed, max_nodes)
    parsed = parse_puzzles(puzzles)
    return rate_grids(parsed.grids, ~parsed.ok, samples, seed, max_nodes)


__all__ = [
    "GRADES",
    "GRADE_TYPE",
    "RATING_SCHEMA",
    "SINGLES",
    "TECHNIQUES",
    "difficulty_grids",
    "grade_grids",
    "rate",
    "rate_grids",
]
