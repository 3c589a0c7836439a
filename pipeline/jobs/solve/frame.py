"""Puzzles a notebook already holds, solved: `solve_batch`, the in-memory twin of the solve job.

results = solve_batch(["53..7....6..195....", ...])      # a polars DataFrame, result schema
results = solve_batch(frame, column="quizzes", workers=2)  # ... then the frame's other columns
lazy = solve_batch(pl.scan_csv("kaggle.csv"))            # a LazyFrame: solved when collected
"""

import polars as pl
import pyarrow as pa

from pipeline.io.frames import (
    ColumnNames,
    PuzzleInput,
    frame_columns,
    frame_twin,
    passed_columns,
    puzzle_batch,
)
from pipeline.jobs.solve.batch import SolveOptions, solve_record_batch
from pipeline.kernels import DEFAULT_STRATEGY
from pipeline.plugins.open import open_solver
from pipeline.results.schema import result_schema
from pipeline.run.pool import map_chunks


@frame_twin
def solve_batch(
    puzzles: PuzzleInput | pl.LazyFrame,
    strategy: str = DEFAULT_STRATEGY,
    solutions: int = 2,
    max_nodes: int | None = None,
    *,
    column: str | None = None,
    solution_column: str | None = None,
    id_column: str | None = None,
    workers: int | None = None,
    solver: str | None = None,
) -> pl.DataFrame | pl.LazyFrame:
    """Solve puzzles held in memory; a DataFrame in the result schema, one row per puzzle, in
    order (a bad row gets the verdict `malformed` and an `error`, as in a file).

    `puzzles`: a list of 81-character strings, a polars Series, a pyarrow array, a numpy array
    of strings or an `(n, 81)` numpy array of ints 0-9 (0 for blanks); or a polars DataFrame
    (or pyarrow Table) whose puzzle column is found as a file's is (by name: puzzle,
    quizzes, board, grid, sudoku, ...; else by content; or `column=`), its solution column
    checked into `expected_ok` and its id column passed through (`solution_column=`,
    `id_column=`), and its other columns after the result's, as they are (named `input_<name>`
    where a result column has the name). TypeError for what is not a column of puzzles,
    ValueError (`InputError`) for one that cannot be read (ints outside 0-9, a column not found).

    A LazyFrame gives a LazyFrame, its schema known at once; its rows are solved, all of them
    together, when it is collected. Its columns are found by name (by content only when no name
    says: from its first rows, which runs its query that far).

    `workers`: None or 1 solves in this thread; more splits the puzzles into chunks solved on
    that many worker threads of this process (`pipeline.run.pool`: nothing to start, nothing
    kept between calls); the rows are the same, in the same order.

    `solver`: a `--solver` spec in place of `strategy` (`pipeline.plugins`: `c:LIBRARY:SYMBOL`,
    `python:MODULE:FUNCTION`, `cmd:COMMAND`, or a strategy's name): its answers are checked,
    with a `kernel_agrees` column (its workers are threads here, whatever it holds).
    `solutions`: 1 stops at the first solution (verdict `found`), 2 proves uniqueness, more
    counts them up to that many into a `solution_count` column (N means N or more). Puzzles
    may be 729-character pencilmark strings (`pipeline.pencilmarks`), solved from their
    candidates.
    """
    options = SolveOptions(strategy, solutions, max_nodes, solver=solver)
    if options.solver is not None:
        open_solver(options.solver)  # InputError (one line) when it cannot be opened
    named = ColumnNames(column=column, solution_column=solution_column, id_column=id_column)
    if isinstance(puzzles, pa.Table):
        puzzles = pl.DataFrame(puzzles)  # its columns found as a DataFrame's, the others kept
    if isinstance(puzzles, pl.LazyFrame):
        return _solve_lazy(puzzles, options, frame_columns(puzzles, **named), workers)
    if isinstance(puzzles, pl.DataFrame):
        return _solve_frame(puzzles, options, frame_columns(puzzles, **named), workers)
    return _solve(puzzle_batch(puzzles, **named), options, workers)


def _solve(batch: pa.RecordBatch, options: SolveOptions, workers: int | None) -> pl.DataFrame:
    tables = map_chunks(solve_record_batch, batch, workers, options)
    results = pl.from_arrow(pa.concat_tables(tables) if len(tables) > 1 else tables[0])
    assert isinstance(results, pl.DataFrame)
    return results


def _solve_frame(
    frame: pl.DataFrame, options: SolveOptions, named: ColumnNames, workers: int | None
) -> pl.DataFrame:
    """The results, then the frame's other columns (`passed_columns`), as polars holds them."""
    results = _solve(puzzle_batch(frame, **named), options, workers)
    others = passed_columns(frame.columns, named)
    return results.hstack(frame.select(pl.col(old).alias(new) for old, new in others.items()))


def _solve_lazy(
    frame: pl.LazyFrame, options: SolveOptions, named: ColumnNames, workers: int | None
) -> pl.LazyFrame:
    """`_solve_frame` when the LazyFrame is collected; its schema from the frame's alone."""
    schema = frame.collect_schema()
    empty = puzzle_batch(pl.DataFrame(schema=schema), **named)  # no rows: the ids' type
    has_ids = "id" in empty.schema.names
    id_type = empty.schema.field("id").type if has_ids else None
    results = pl.DataFrame(result_schema(id_type, options.added_schema()).empty_table())
    others = passed_columns(schema.names(), named)
    out = pl.Schema({**results.schema, **{new: schema[old] for old, new in others.items()}})
    return frame.map_batches(lambda df: _solve_frame(df, options, named, workers), schema=out)
