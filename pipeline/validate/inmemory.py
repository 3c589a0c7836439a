"""Puzzles a notebook already holds, validated: `validate_puzzles`, the in-memory twin of the
validate job (the same checks, duplicates included, as a DataFrame of findings).
"""

from typing import Unpack

import polars as pl
import pyarrow as pa

from pipeline.grid import PuzzleColumn
from pipeline.io.dataset import optional_column
from pipeline.io.frames import ColumnNames, PuzzleInput, puzzle_batch
from pipeline.run.pool import map_chunks
from pipeline.validate.batch import ValidateOptions, validate_record_batch
from pipeline.validate.catalogue import sort_findings
from pipeline.validate.checks import duplicate_findings
from pipeline.validate.duplicates import DuplicateIndex, find_repeats


def validate_puzzles(
    puzzles: PuzzleInput,
    solutions: PuzzleColumn | None = None,
    *,
    max_nodes: int | None = None,
    minimal: bool = False,
    symmetry: bool = False,
    workers: int | None = None,
    **columns: Unpack[ColumnNames],
) -> pl.DataFrame:
    """Validate puzzles held in memory; a DataFrame of findings in row order, as
    `validate_file` writes them, duplicates included.

    `puzzles`: what `solve_batch` takes, a polars DataFrame included (its puzzle column found
    as a file's, or named with `column=`; its solution column checked, its id column passed
    through: `solution_column=`, `id_column=`). `solutions`, beside a column of puzzles (not a
    DataFrame), is checked like a solution column: one string or None per puzzle.
    `symmetry`: also find duplicates up to symmetry. `workers`: None or 1 checks in this
    thread, more on worker threads (`pipeline.run.pool`), with the same findings.
    """
    options = ValidateOptions(max_nodes, minimal, symmetry)
    batch = puzzle_batch(puzzles, solutions=solutions, **columns)
    index, forms = DuplicateIndex(), DuplicateIndex() if symmetry else None
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
    return pl.from_arrow(sort_findings(pa.concat_tables(tables)))
