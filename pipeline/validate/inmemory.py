"""Puzzles a notebook already holds, validated: `validate_puzzles`, the in-memory twin of the
validate job (the same checks, duplicates included, as a DataFrame of findings; a LazyFrame of
them for a LazyFrame).
"""

from typing import Unpack, overload

import polars as pl
import pyarrow as pa

from pipeline.grid import PuzzleColumn
from pipeline.io.dataset import optional_column
from pipeline.io.frames import ColumnNames, PuzzleInput, frame_columns, puzzle_batch
from pipeline.run.pool import map_chunks
from pipeline.validate.batch import ValidateOptions, validate_record_batch
from pipeline.validate.catalogue import findings_schema, sort_findings
from pipeline.validate.checks import duplicate_findings
from pipeline.validate.duplicates import DuplicateIndex, find_repeats


@overload
def validate_puzzles(
    puzzles: pl.LazyFrame,
    solutions: None = None,
    *,
    max_nodes: int | None = ...,
    minimal: bool = ...,
    symmetry: bool = ...,
    workers: int | None = ...,
    **columns: Unpack[ColumnNames],
) -> pl.LazyFrame: ...


@overload
def validate_puzzles(
    puzzles: PuzzleInput,
    solutions: PuzzleColumn | None = None,
    *,
    max_nodes: int | None = ...,
    minimal: bool = ...,
    symmetry: bool = ...,
    workers: int | None = ...,
    **columns: Unpack[ColumnNames],
) -> pl.DataFrame: ...


def validate_puzzles(
    puzzles: PuzzleInput | pl.LazyFrame,
    solutions: PuzzleColumn | None = None,
    *,
    max_nodes: int | None = None,
    minimal: bool = False,
    symmetry: bool = False,
    workers: int | None = None,
    **columns: Unpack[ColumnNames],
) -> pl.DataFrame | pl.LazyFrame:
    """Validate puzzles held in memory; a DataFrame of findings in row order, as
    `validate_file` writes them, duplicates included.

    `puzzles`: what `solve_batch` takes, a polars DataFrame included (its puzzle column found
    as a file's, or named with `column=`; its solution column checked, its id column passed
    through: `solution_column=`, `id_column=`). `solutions`, beside a column of puzzles (not a
    DataFrame), is checked like a solution column: one string or None per puzzle.
    `symmetry`: also find duplicates up to symmetry. `workers`: None or 1 checks in this
    thread, more on worker threads (`pipeline.run.pool`), with the same findings.

    A LazyFrame gives a LazyFrame of findings, its schema known at once, checked (all rows
    together: duplicates are found over the whole frame) when collected; its columns found as
    `solve_batch` finds a LazyFrame's. The frame's other columns are not among the findings (as
    in `validate_file`): `row` joins them back, `frame.with_row_index("row")`.
    """
    options = ValidateOptions(max_nodes, minimal, symmetry)
    if isinstance(puzzles, pl.LazyFrame):
        if solutions is not None:
            raise ValueError("a LazyFrame's solutions are a column: name it with solution_column=")
        named = frame_columns(puzzles, **columns)
        empty = puzzle_batch(pl.DataFrame(schema=puzzles.collect_schema()), **named)
        has_ids = "id" in empty.schema.names
        schema = findings_schema(empty.schema.field("id").type if has_ids else None)
        return puzzles.map_batches(
            lambda frame: _validate(puzzle_batch(frame, **named), options, workers),
            schema=pl.DataFrame(schema.empty_table()).schema,
        )
    return _validate(puzzle_batch(puzzles, solutions=solutions, **columns), options, workers)


def _validate(batch: pa.RecordBatch, options: ValidateOptions, workers: int | None) -> pl.DataFrame:
    """The findings of every row of `batch`, duplicates included, sorted by row."""
    index, forms = DuplicateIndex(), DuplicateIndex() if options.symmetry else None
    tables = []
    for report in map_chunks(validate_record_batch, batch, workers, options):
        index.add(report.start, report.keys)
        if forms is not None and report.forms is not None:
            forms.add(report.start, report.forms)
        tables.append(report.findings)
    ids = optional_column(batch, "id")
    for code, rows, first in find_repeats(index, forms).kinds():
        own, of = (None, None) if ids is None else (ids.take(rows), ids.take(first))
        tables.append(duplicate_findings(rows, first, own, of, code))
    findings = pl.from_arrow(sort_findings(pa.concat_tables(tables)))
    assert isinstance(findings, pl.DataFrame)
    return findings
