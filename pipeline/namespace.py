"""The polars `sudoku` namespace, and `rate` and `canonical` over whole frames through it.

    df.with_columns(pl.col("puzzle").sudoku.canonical().alias("canonical"))
    df.filter(pl.col("puzzle").sudoku.verdict() == "solved")
    lf.select(pl.col("puzzle").sudoku.solve()).unnest("puzzle")   # the result columns
    pipeline.rate(df)                          # df, then difficulty, grade, steps, steps_by_level

`import pipeline` registers the namespace (when polars is imported, if it is not yet: `import
pipeline` itself stays free of polars). Each method is one call of the batch functions per
column (or per chunk: the results of a row depend on that row alone, so polars may split the
column and stream), never Python per puzzle. As polars' own namespaces do, each keeps the
column's name: `.alias()` adds a column beside the puzzles instead of replacing them.

A column of puzzles is text (String, Categorical, Enum; nulls are `malformed`), as for
`solve_batch`; another type is a TypeError when the query runs.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, overload

import polars as pl

if TYPE_CHECKING:  # registering the namespace, at `import polars`, costs no more than polars
    import numpy as np
    import pyarrow as pa

    from pipeline.grid import PuzzleColumn

SOLVE_FIELDS = ("verdict", "solution", "clues", "nodes", "guesses", "solve_ns", "error")
DEFAULT_STRATEGY = "fast"  # pipeline.kernels.DEFAULT_STRATEGY (a test holds them together)
Frame = pl.DataFrame | pl.LazyFrame


def _strings(puzzles: pl.Series) -> pa.Array:
    from pipeline.io.frames import puzzle_strings

    return puzzle_strings(puzzles)


def _field_or_struct(columns: pl.DataFrame, field: str | None, name: str) -> pl.Series:
    """One of `columns` (`field`), or all of them as a struct, named `name`."""
    return columns[field].alias(name) if field is not None else columns.to_struct(name)


def _solved(
    puzzles: pl.Series, strategy: str, solutions: int, max_nodes: int | None, field: str | None
) -> pl.Series:
    """The `solve_batch` columns of `SOLVE_FIELDS` as a struct, or one of them (`field`)."""
    from pipeline.jobs.solve.frame import solve_batch

    results = solve_batch(_strings(puzzles), strategy, solutions, max_nodes)
    return _field_or_struct(results.select(SOLVE_FIELDS), field, puzzles.name)


def _solve_type() -> pl.Struct:
    from pipeline.results.schema import result_schema

    schema = pl.DataFrame(result_schema().empty_table()).schema
    return pl.Struct({name: schema[name] for name in SOLVE_FIELDS})


def _rated(
    puzzles: pl.Series, samples: int, seed: int, max_nodes: int | None, field: str | None
) -> pl.Series:
    """`pipeline.rate`'s columns as a struct, or one of them (`field`)."""
    from pipeline.rating import rate

    return _field_or_struct(rate(_strings(puzzles), samples, seed, max_nodes), field, puzzles.name)


def _canonical(puzzles: pl.Series, blank: str) -> pl.Series:
    from pipeline.canonical_forms import canonical

    return canonical(_strings(puzzles), blank).alias(puzzles.name)


def _clues(puzzles: pl.Series) -> pl.Series:
    from pipeline.grid import clue_counts, parse_puzzles

    parsed = parse_puzzles(_strings(puzzles))
    return _where_puzzles(pl.Series(puzzles.name, clue_counts(parsed.grids)), parsed.ok)


def _valid(puzzles: pl.Series) -> pl.Series:
    from pipeline.grid import parse_puzzles
    from pipeline.kernels.checks import givens_valid

    parsed = parse_puzzles(_strings(puzzles))
    return _where_puzzles(pl.Series(puzzles.name, givens_valid(parsed.grids)), parsed.ok)


def _where_puzzles(values: pl.Series, ok: np.ndarray) -> pl.Series:
    """`values`, null where the row is not a puzzle."""
    import numpy as np

    return values.scatter(np.flatnonzero(~ok), None)


class SudokuExpressions:
    """`pl.col("puzzle").sudoku`: what the batch functions tell of each puzzle, as expressions
    (the same kernels, a column at a time)."""

    def __init__(self, expr: pl.Expr) -> None:
        self._expr = expr

    def _each(self, function: partial, dtype: pl.DataType) -> pl.Expr:
        return self._expr.map_batches(function, return_dtype=dtype, is_elementwise=True)

    def solve(
        self, strategy: str = DEFAULT_STRATEGY, solutions: int = 2, max_nodes: int | None = None
    ) -> pl.Expr:
        """A struct of the result columns that come from the puzzle alone (`solve_batch`'s):
        `verdict` (an Enum), `solution`, `clues`, `nodes`, `guesses`, `solve_ns`, `error`;
        `.struct.unnest()` makes them columns."""
        return self._solve(strategy, solutions, max_nodes, None)

    def solution(
        self, strategy: str = DEFAULT_STRATEGY, solutions: int = 2, max_nodes: int | None = None
    ) -> pl.Expr:
        """The solution found (81 digits; the first one for `multiple` and `limit`), else null."""
        return self._solve(strategy, solutions, max_nodes, "solution")

    def verdict(
        self, strategy: str = DEFAULT_STRATEGY, solutions: int = 2, max_nodes: int | None = None
    ) -> pl.Expr:
        """`solved`, `multiple`, `unsolvable`, `invalid`, `malformed`, `limit` or `found`
        (`solutions=1`), an Enum in that order, as in the result schema."""
        return self._solve(strategy, solutions, max_nodes, "verdict")

    def _solve(
        self, strategy: str, solutions: int, max_nodes: int | None, field: str | None
    ) -> pl.Expr:
        from pipeline.jobs.solve.batch import SolveOptions

        SolveOptions(strategy, solutions, max_nodes)  # a bad option now, not when it runs
        kind = _solve_type()
        dtype = kind if field is None else kind.to_schema()[field]
        return self._each(
            partial(
                _solved, strategy=strategy, solutions=solutions, max_nodes=max_nodes, field=field
            ),
            dtype,
        )

    def clues(self) -> pl.Expr:
        """The number of givens (Int8); null for what is not a puzzle."""
        return self._each(partial(_clues), pl.Int8())

    def is_valid(self) -> pl.Expr:
        """Whether no digit repeats among the givens in a row, column or box (as
        `pipeline.is_valid`; a valid puzzle may still have no solution or several); null for
        what is not a puzzle."""
        return self._each(partial(_valid), pl.Boolean())

    def canonical(self, blank: str = ".") -> pl.Expr:
        """The minlex form (`pipeline.canonical`): the same string for the same puzzle in any
        disguise; null for what is not a puzzle."""
        return self._each(partial(_canonical, blank=blank), pl.String())

    def rate(self, samples: int = 16, seed: int = 0, max_nodes: int | None = None) -> pl.Expr:
        """A struct of `pipeline.rate`'s columns: `difficulty`, `grade` (an Enum in ladder
        order), `steps`, `steps_by_level`."""
        return self._rate(samples, seed, max_nodes, None)

    def grade(self, max_nodes: int | None = None) -> pl.Expr:
        """The hardest technique of the ladder the puzzle needs (`pipeline.GRADES`, an Enum in
        that order), without the difficulty's searches."""
        return self._rate(0, 0, max_nodes, "grade")

    def _rate(self, samples: int, seed: int, max_nodes: int | None, field: str | None) -> pl.Expr:
        from pipeline.rating import RATING_SCHEMA

        if samples < 0 or seed < 0:
            raise ValueError("samples and seed must be at least 0")
        dtype = pl.Struct(RATING_SCHEMA) if field is None else RATING_SCHEMA[field]
        return self._each(
            partial(_rated, samples=samples, seed=seed, max_nodes=max_nodes, field=field), dtype
        )


pl.api.register_expr_namespace("sudoku")(SudokuExpressions)


# ---- rate and canonical over frames -----------------------------------------------------------


def _with_columns(
    frame: Frame | pa.Table, column: str | None, added: pl.Schema, make: partial
) -> Frame:
    """`frame` with the columns `make(pl.col(puzzle))` gives (`added`) after its own; a column
    of its own with one of their names is kept as `input_<name>`."""
    from pipeline.io.frames import frame_columns

    if not isinstance(frame, Frame):  # a pyarrow Table
        frame = pl.DataFrame(frame)
    puzzle = frame_columns(frame, column)["column"]
    names = frame.collect_schema().names()
    taken, renamed = {*names, *added}, {}
    for name in names:
        if name in added:
            new, k = f"input_{name}", 2
            while new in taken:
                new, k = f"input_{name}_{k}", k + 1
            taken.add(new)
            renamed[name] = new
    frame = frame.rename(renamed) if renamed else frame
    if puzzle is None:  # `pl.DataFrame()`: no rows to add to
        return frame.with_columns(pl.lit(None, dtype).alias(name) for name, dtype in added.items())
    return frame.with_columns(make(pl.col(renamed.get(puzzle, puzzle))))


@overload
def rate(
    puzzles: pl.LazyFrame,
    samples: int = ...,
    seed: int = ...,
    max_nodes: int | None = ...,
    *,
    column: str | None = ...,
) -> pl.LazyFrame: ...
@overload
def rate(
    puzzles: PuzzleColumn | pl.DataFrame | pa.Table,
    samples: int = ...,
    seed: int = ...,
    max_nodes: int | None = ...,
    *,
    column: str | None = ...,
) -> pl.DataFrame: ...


def rate(
    puzzles: PuzzleColumn | Frame | pa.Table,
    samples: int = 16,
    seed: int = 0,
    max_nodes: int | None = None,
    *,
    column: str | None = None,
) -> Frame:
    """Rate puzzles held in memory (`pipeline.rating.rate`): a DataFrame with `difficulty`,
    `grade`, `steps` and `steps_by_level`, one row per puzzle, in input order.

    `puzzles`: 81-character strings (a list, a polars Series, a pyarrow array) or an `(n, 81)`
    integer array with 0 for blanks; or a DataFrame (a LazyFrame, a pyarrow Table) whose puzzle
    column is found as `solve_batch` finds it (or named with `column=`): then the frame with
    the four columns after its own (its own of those names kept as `input_<name>`), a
    LazyFrame for a LazyFrame. `samples`: random symmetries per puzzle for `difficulty` (0:
    skip it, grade only). `seed`: the same seed gives the same ratings, in any batch.
    """
    import pyarrow as pa

    from pipeline.io.frames import ColumnNames, no_column_names
    from pipeline.rating import RATING_SCHEMA
    from pipeline.rating import rate as rate_column

    if isinstance(puzzles, Frame | pa.Table):
        make = partial(_rating_columns, samples=samples, seed=seed, max_nodes=max_nodes)
        return _with_columns(puzzles, column, RATING_SCHEMA, make)
    no_column_names(puzzles, ColumnNames(column=column))
    return rate_column(puzzles, samples, seed, max_nodes)


def _rating_columns(puzzles: pl.Expr, samples: int, seed: int, max_nodes: int | None) -> pl.Expr:
    return puzzles.sudoku.rate(samples, seed, max_nodes).struct.unnest()


@overload
def canonical(
    puzzles: pl.LazyFrame, blank: str = ..., *, column: str | None = ...
) -> pl.LazyFrame: ...
@overload
def canonical(
    puzzles: pl.DataFrame, blank: str = ..., *, column: str | None = ...
) -> pl.DataFrame: ...
# A pyarrow Table gives a DataFrame too, but pyarrow has no type hints: to a checker a
# `pa.Table` overload would take any argument (a column's call would type as a DataFrame).
@overload
def canonical(
    puzzles: PuzzleColumn, blank: str = ..., *, column: str | None = ...
) -> pl.Series: ...


def canonical(
    puzzles: PuzzleColumn | Frame | pa.Table, blank: str = ".", *, column: str | None = None
) -> pl.Series | Frame:
    """The minlex form of each puzzle (`pipeline.canonical_forms.canonical`): a String Series
    named "canonical", null for a row that is not a puzzle.

    `puzzles`: what `pipeline.canonical_forms.canonical` takes (strings, an `(n, 81)` integer
    array); or a DataFrame (a LazyFrame, a pyarrow Table) whose puzzle column is found as
    `solve_batch` finds it (or named with `column=`): then the frame with a `canonical` column
    after its own (its own `canonical` kept as `input_canonical`), a LazyFrame for a LazyFrame.
    """
    import pyarrow as pa

    from pipeline.canonical_forms import canonical as canonical_column
    from pipeline.io.frames import ColumnNames, no_column_names

    if isinstance(puzzles, Frame | pa.Table):
        make = partial(_canonical_column, blank=blank)
        return _with_columns(puzzles, column, pl.Schema({"canonical": pl.String()}), make)
    no_column_names(puzzles, ColumnNames(column=column))
    return canonical_column(puzzles, blank)


def _canonical_column(puzzles: pl.Expr, blank: str) -> pl.Expr:
    return puzzles.sudoku.canonical(blank).alias("canonical")


__all__ = ["SudokuExpressions", "canonical", "rate"]
