"""A model's answers a notebook already holds, scored: `score_predictions`, the in-memory twin
of the score job (the same rows as `score_file` writes, as a polars DataFrame; a LazyFrame of
them for a LazyFrame).

    scored = score_predictions(frame)                          # its prediction column by name
    lazy = score_predictions(pl.scan_parquet("answers.parquet"))   # scored when collected
    scored = score_predictions(puzzles, answers, workers=2)    # two columns side by side
"""

from dataclasses import replace
from typing import Unpack

import polars as pl
import pyarrow as pa

from pipeline.errors import InputError
from pipeline.grid import PuzzleColumn
from pipeline.io.columns import prediction_column
from pipeline.io.frames import (
    ColumnNames,
    PuzzleInput,
    frame_columns,
    frame_twin,
    puzzle_batch,
    puzzle_strings,
)
from pipeline.jobs.score.batch import ScoreOptions, output_schema, score_record_batch
from pipeline.jobs.score.job import DIFFICULTY_COLUMN, GRADE_COLUMN
from pipeline.run.pool import map_chunks


@frame_twin
def score_predictions(
    puzzles: PuzzleInput | pl.LazyFrame,
    predictions: PuzzleColumn | None = None,
    *,
    solutions: PuzzleColumn | None = None,
    prediction_column: str | None = None,
    rate: bool = False,
    rate_samples: int = 16,
    workers: int | None = None,
    **columns: Unpack[ColumnNames],
) -> pl.DataFrame | pl.LazyFrame:
    """Score predictions held in memory: one row per puzzle, in order, as `score_file` writes
    them (row, [id], verdict, message, cells_correct, clues, [grade]).

    `puzzles`: a polars DataFrame (or pyarrow Table) holding the puzzles and the predictions,
    its columns found as a file's (puzzle, solution and id columns by name or content, or
    `column=`, `solution_column=`, `id_column=`; the predictions by name, or
    `prediction_column=`; `grade` and `difficulty` columns come along); or a column of
    puzzles (what `solve_batch` takes) with `predictions` (and optionally `solutions`) beside
    it, one string or None per puzzle. `rate`: rate each puzzle (its `grade` and `difficulty`,
    mean guesses over `rate_samples` symmetries), as `score_file` does. `workers`: None or 1
    scores in this thread, more on worker threads.
    A LazyFrame gives a LazyFrame of the same rows, its schema known at once, scored when
    collected; its columns found as a DataFrame's (by name from its schema first).

    TypeError for what is not a column of puzzles; ValueError (`InputError`) for a column not
    found or columns of different lengths.
    """
    rating = ScoreOptions(rate=rate, rate_samples=rate_samples)  # ValueError for a bad count
    if isinstance(puzzles, pa.Table):
        puzzles = pl.DataFrame(puzzles)
    if isinstance(puzzles, pl.DataFrame | pl.LazyFrame):
        if predictions is not None or solutions is not None:
            kind = type(puzzles).__name__
            raise ValueError(
                f"a {kind}'s predictions and solutions are columns: name them "
                "with prediction_column= and solution_column="
            )
        if isinstance(puzzles, pl.LazyFrame):
            return _score_lazy(puzzles, prediction_column, rating, workers, columns)
        batch, options = _frame_batch(puzzles, prediction_column, rating, columns)
    else:
        if predictions is None:
            raise ValueError("predictions are missing: score_predictions(puzzles, predictions)")
        if prediction_column is not None:
            raise ValueError("prediction_column= names a column of a DataFrame")
        batch = puzzle_batch(puzzles, solutions=solutions, **columns)
        answers = puzzle_strings(predictions)
        if len(answers) != batch.num_rows:
            raise InputError(f"{batch.num_rows} puzzles but {len(answers)} predictions")
        batch = batch.append_column("prediction", answers)
        options = replace(
            rating, prediction="prediction", solution="solution" if solutions is not None else None
        )
    return _score(batch, options, workers)


def _score(batch: pa.RecordBatch, options: ScoreOptions, workers: int | None) -> pl.DataFrame:
    """The scored rows of `batch`, in order."""
    tables = [s.table for s in map_chunks(score_record_batch, batch, workers, options)]
    if not tables or not batch.num_rows:
        tables = [_empty(batch, options)]
    scored = pl.from_arrow(pa.concat_tables(tables))
    assert isinstance(scored, pl.DataFrame)
    return scored


def _empty(batch: pa.RecordBatch, options: ScoreOptions) -> pa.Table:
    ids = batch.schema.field("id").type if "id" in batch.schema.names else None
    return output_schema(ids, options.has_grade, options.has_difficulty).empty_table()


def _score_lazy(
    frame: pl.LazyFrame,
    wanted: str | None,
    rating: ScoreOptions,
    workers: int | None,
    columns: ColumnNames,
) -> pl.LazyFrame:
    """`_score` when the LazyFrame is collected; its columns and schema found from the frame's
    schema alone (by content only when no name says: `frame_columns`)."""
    found = frame_columns(frame, **columns)
    empty = pl.DataFrame(schema=frame.collect_schema())  # no rows: the columns, the ids' type
    batch, options = _frame_batch(empty, wanted, rating, columns, found)
    schema = pl.DataFrame(_empty(batch, options)).schema

    def scored(df: pl.DataFrame) -> pl.DataFrame:
        return _score(*_frame_batch(df, wanted, rating, columns, found), workers)

    return frame.map_batches(scored, schema=schema)


def _frame_batch(
    frame: pl.DataFrame,
    wanted: str | None,
    rating: ScoreOptions,
    columns: ColumnNames,
    found: ColumnNames | None = None,
) -> tuple[pa.RecordBatch, ScoreOptions]:
    """A DataFrame's puzzles, ids and solutions (`puzzle_batch`), its predictions, grades and
    difficulties (`rating`: whether to rate); its columns as `found` already (a LazyFrame's),
    else found here from the names given."""
    named = ColumnNames(**found) if found is not None else frame_columns(frame, **columns)
    taken = (named["column"], named["id_column"])
    prediction = prediction_column(
        "DataFrame", frame.columns, wanted, (*taken, named["solution_column"])
    )
    if prediction in taken:
        raise InputError(
            f"DataFrame: the prediction column '{prediction}' is the puzzle or "
            "id column; name them with column= and id_column="
        )
    solution: str | None = "solution"
    if prediction == named["solution_column"]:
        if columns.get("solution_column") is not None:
            raise InputError(
                f"DataFrame: the prediction and solution columns must differ ('{prediction}')"
            )
        named["solution_column"], solution = None, None
    elif named["solution_column"] is None:
        solution = None
    batch = puzzle_batch(frame, **named)
    batch = batch.append_column("prediction", puzzle_strings(frame[prediction]))
    if rating.rate:
        rated = [c for c in (GRADE_COLUMN, DIFFICULTY_COLUMN) if c in frame.columns]
        if rated:
            raise InputError(
                f"DataFrame: has a {' and a '.join(rated)} column already: "
                "score it without rate=True, or rename the column"
            )
        return batch, replace(rating, prediction="prediction", solution=solution)
    passed = {}
    for name in (GRADE_COLUMN, DIFFICULTY_COLUMN):
        if name in frame.columns:
            passed[name] = name
            values = frame[name].cast(pl.String) if name == GRADE_COLUMN else frame[name]
            batch = batch.append_column(name, values.to_arrow())
    return batch, replace(
        rating,
        prediction="prediction",
        solution=solution,
        grade=passed.get(GRADE_COLUMN),
        difficulty=passed.get(DIFFICULTY_COLUMN),
    )
