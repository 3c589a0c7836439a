"""Puzzles a notebook already holds, validated: `validate_puzzles`, the in-memory twin of the
validate job (the same checks, duplicates included, as a DataFrame of findings; a LazyFrame of
them for a LazyFrame).
"""

from collections.abc import Iterator, Mapping
from typing import Any, Unpack

import polars as pl
import pyarrow as pa

from pipeline.grid import PuzzleColumn
from pipeline.io.dataset import optional_column
from pipeline.io.frames import ColumnNames, PuzzleInput, frame_columns, frame_twin, puzzle_batch
from pipeline.jobs.validate.batch import ValidateOptions, validate_record_batch
from pipeline.jobs.validate.catalogue import findings_schema, sort_findings
from pipeline.jobs.validate.checks import duplicate_findings
from pipeline.jobs.validate.duplicates import RepeatFinder
from pipeline.jobs.validate.leaks import LeakAudit, Mapper, Task
from pipeline.run.executors import ThreadExecutor
from pipeline.run.pool import chunk_rows, map_chunks

Against = PuzzleInput | Mapping[str, PuzzleInput]  # training puzzles; a mapping names them


@frame_twin
def validate_puzzles(
    puzzles: PuzzleInput | pl.LazyFrame,
    solutions: PuzzleColumn | None = None,
    *,
    max_nodes: int | None = None,
    minimal: bool = False,
    symmetry: bool = False,
    against: Against | None = None,
    workers: int | None = None,
    **columns: Unpack[ColumnNames],
) -> pl.DataFrame | pl.LazyFrame:
    """Validate puzzles held in memory; a DataFrame of findings in row order, as
    `validate_file` writes them, duplicates included.

    `puzzles`: what `solve_batch` takes, a polars DataFrame included (its puzzle column found
    as a file's, or named with `column=`; its solution column checked, its id column passed
    through: `solution_column=`, `id_column=`). `solutions`, beside a column of puzzles (not a
    DataFrame), is checked like a solution column: one string or None per puzzle.
    `symmetry`: also find duplicates up to symmetry. `against`: training puzzles (what
    `puzzles` may be; their columns found, or named, alike), or a mapping of names to them,
    to audit for leaks: each row that is one of their puzzles, exactly or in disguise, is an
    error `leak` naming the training set (`"against"`, or its name in the mapping) and row
    (`pipeline.jobs.validate.leaks`). `workers`: None or 1 checks in this thread, more on worker
    threads (`pipeline.run.pool`), with the same findings.

    A LazyFrame gives a LazyFrame of findings, its schema known at once, checked (all rows
    together: duplicates are found over the whole frame) when collected; its columns found as
    `solve_batch` finds a LazyFrame's. The frame's other columns are not among the findings (as
    in `validate_file`): `row` joins them back, `frame.with_row_index("row")`.
    """
    options = ValidateOptions(max_nodes, minimal, symmetry, leaks=against is not None)
    audit = None if against is None else _audit(against, columns)
    if isinstance(puzzles, pl.LazyFrame):
        if solutions is not None:
            raise ValueError("a LazyFrame's solutions are a column: name it with solution_column=")
        named = frame_columns(puzzles, **columns)
        empty = puzzle_batch(pl.DataFrame(schema=puzzles.collect_schema()), **named)
        has_ids = "id" in empty.schema.names
        schema = findings_schema(empty.schema.field("id").type if has_ids else None)
        return puzzles.map_batches(
            lambda frame: _validate(puzzle_batch(frame, **named), options, workers, audit),
            schema=pl.DataFrame(schema.empty_table()).schema,
        )
    return _validate(puzzle_batch(puzzles, solutions=solutions, **columns), options, workers, audit)


def _audit(against: Against, columns: ColumnNames) -> LeakAudit:
    """The leak audit of training puzzles held in memory (read as `puzzles` are)."""
    sets = dict(against) if isinstance(against, Mapping) else {"against": against}
    named: dict[str, Any] = {k: v for k, v in columns.items() if k != "solution_column"}
    batches = [puzzle_batch(train, **named) for train in sets.values()]

    def tasks() -> Iterator[Task]:
        for source, batch in enumerate(batches):
            size = chunk_rows(batch.num_rows, 2)
            for start in range(0, batch.num_rows, size):
                yield source, batch.slice(start, size)

    return LeakAudit(list(sets), tasks)


def _mapper(workers: int | None) -> tuple[Mapper, ThreadExecutor | None]:
    """`(fn, tasks, *args) -> results in order`: here, or on `workers` threads."""
    if workers is None or workers == 1:
        return (lambda fn, tasks, *args: (fn(t, *args) for t in tasks)), None
    executor = ThreadExecutor(workers)
    return executor.map_ordered, executor


def _validate(
    batch: pa.RecordBatch, options: ValidateOptions, workers: int | None, audit: LeakAudit | None
) -> pl.DataFrame:
    """The findings of every row of `batch`, duplicates and leaks included, sorted by row."""
    repeats = RepeatFinder(options.symmetry)
    ids = optional_column(batch, "id")
    tables = []
    if audit is not None:
        audit = LeakAudit([i.input for i in audit.index.inputs], audit.tasks)  # a fresh one
        mapper, executor = _mapper(workers)
        try:
            audit.build(mapper)
        finally:
            if executor is not None:
                executor.close()
    for report in map_chunks(validate_record_batch, batch, workers, options):
        found = repeats.add(report.start, report.keys, report.forms)
        for code, rows, first in found.kinds():
            own, of = (None, None) if ids is None else (ids.take(rows), ids.take(first))
            tables.append(duplicate_findings(rows, first, own, of, code))
        if audit is not None:
            audit.add_test(report.start, report.forms, report.packed, report.pencilmarks)
        tables.append(report.findings)
    if audit is not None:
        mapper, executor = _mapper(workers)
        try:
            leaks = audit.leaks(mapper)
        finally:
            if executor is not None:
                executor.close()
        tables.append(
            leaks.findings(0, len(leaks.rows), None if ids is None else ids.take(leaks.rows))
        )
    findings = pl.from_arrow(sort_findings(pa.concat_tables(tables)))
    assert isinstance(findings, pl.DataFrame)
    return findings
