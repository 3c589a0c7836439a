"""Puzzles a notebook already holds, solved: `solve_batch`, the in-memory twin of the solve job.

results = solve_batch(["53..7....6..195....", ...])      # a polars DataFrame, result schema
results = solve_batch(frame, column="quizzes", workers=2)
"""

import polars as pl
import pyarrow as pa

from pipeline.io.frames import PuzzleInput, puzzle_batch
from pipeline.run.pool import map_chunks
from pipeline.solver import DEFAULT_STRATEGY
from pipeline.solving.batch import SolveOptions, solve_record_batch


def solve_batch(
    puzzles: PuzzleInput,
    strategy: str = DEFAULT_STRATEGY,
    solutions: int = 2,
    max_nodes: int | None = None,
    *,
    column: str | None = None,
    solution_column: str | None = None,
    id_column: str | None = None,
    workers: int | None = None,
) -> pl.DataFrame:
    """Solve puzzles held in memory; a DataFrame in the result schema, one row per puzzle, in
    order (a bad row gets the verdict `malformed` and an `error`, as in a file).

    `puzzles`: a list of 81-character strings, a polars Series, a pyarrow array, a numpy array
    of strings or an `(n, 81)` numpy array of ints 0-9 (0 for blanks); or a polars DataFrame
    (or pyarrow Table) whose puzzle column is found as the CLI finds a file's (by name: puzzle,
    quizzes, board, grid, sudoku, ...; else by content; or `column=`), its solution column
    checked into `expected_ok` and its id column passed through (`solution_column=`,
    `id_column=`). TypeError for what is not a column of puzzles, ValueError for one that
    cannot be read (ints outside 0-9, a column not found).

    `workers`: None or 1 solves in this thread; more splits the puzzles into chunks solved on
    that many worker threads of this process (`pipeline.run.pool`: nothing to start, nothing
    kept between calls); the rows are the same, in the same order.
    """
    options = SolveOptions(strategy, solutions, max_nodes)
    batch = puzzle_batch(
        puzzles, column=column, solution_column=solution_column, id_column=id_column
    )
    tables = map_chunks(solve_record_batch, batch, workers, options)
    return pl.from_arrow(pa.concat_tables(tables) if len(tables) > 1 else tables[0])
