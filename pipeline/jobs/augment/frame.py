"""Augmenting puzzles a notebook already holds: `augment`, the in-memory twin of the augment
job (the same rows as `augment_file` writes, as a polars DataFrame); and `restore_originals`, which
undoes the recorded symmetries.

    copies = augment(frame, copies=8, seed=1)        # puzzle/solution/id columns found by name
    back = restore_originals(copies)                 # the originals, from the symmetries
"""

from typing import Any, Unpack

import numpy as np
import polars as pl
import pyarrow as pa

from pipeline.errors import InputError
from pipeline.grid import format_grids, parse_puzzles
from pipeline.io.columns import passthrough_names
from pipeline.io.frames import ColumnNames, PuzzleInput, frame_columns, puzzle_batch
from pipeline.jobs.augment.batch import (
    AugmentOptions,
    AugmentTally,
    augment_record_batch,
    output_schema,
)
from pipeline.jobs.augment.job import OWN_COLUMNS
from pipeline.run.pool import map_chunks
from pipeline.symmetry_kernels import undo_symmetries


def augment(
    puzzles: PuzzleInput | pl.LazyFrame,
    *,
    copies: int = 8,
    seed: int = 0,
    keep_original: bool = False,
    workers: int | None = None,
    **columns: Unpack[ColumnNames],
) -> pl.DataFrame:
    """`copies` random symmetries of every puzzle (and its solution), as `augment_file` writes
    them: group (the input row), copy (0: the original, with `keep_original`), [id], puzzle,
    solution, relabel, row_order, column_order, transposed, then a DataFrame's other columns.

    `puzzles`: a polars DataFrame (a LazyFrame is collected first; or a pyarrow Table), its
    puzzle, solution and id columns found
    as a file's (or named: `column=`, `solution_column=`, `id_column=`), or a column of
    puzzles (what `solve_batch` takes). A puzzle without a solution is solved; rows that are
    not puzzles with one solution are left out (`augment_file` counts them). The same seed
    gives the same rows whatever `workers` (None or 1: this thread; more: worker threads).
    """
    if isinstance(copies, bool) or not isinstance(copies, int) or copies < 1:
        raise InputError(f"copies must be a whole number of at least 1, not {copies!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InputError(f"seed must be a whole number of at least 0, not {seed!r}")
    if isinstance(puzzles, pa.Table):
        puzzles = pl.DataFrame(puzzles)
    if isinstance(puzzles, pl.LazyFrame):  # K rows per row: no lazy plan to add to
        puzzles = puzzles.collect()
    batch = puzzle_batch(puzzles, **columns)
    if isinstance(puzzles, pl.DataFrame) and puzzles.width:
        named = frame_columns(puzzles, **columns)
        used = [name for name in named.values() if name is not None]
        for name, new in passthrough_names(puzzles.columns, used, OWN_COLUMNS).items():
            batch = batch.append_column(new, puzzles[name].to_arrow())
    options = AugmentOptions(copies, seed, keep_original)
    schema = output_schema(batch.schema)
    parts = map_chunks(augment_record_batch, batch, workers, options)
    tables = [part.table().cast(schema) for part in parts if part.rows]
    tally = AugmentTally()
    for part in parts:
        tally.add(part.tally)
    result = pl.from_arrow(pa.concat_tables(tables) if tables else schema.empty_table())
    assert isinstance(result, pl.DataFrame)
    return result


def restore_originals(copies: pl.DataFrame) -> pl.DataFrame:
    """The original puzzle and solution of every row of `augment`'s output (or a file it
    wrote, read back), from the symmetry each row records: `group`, `copy`, `puzzle`,
    `solution` (the symmetries undone)."""
    symmetry: dict[str, Any] = {
        "relabel": copies["relabel"].to_numpy(),
        "rows": copies["row_order"].to_numpy(),
        "columns": copies["column_order"].to_numpy(),
        "transposed": copies["transposed"].to_numpy(),
    }
    out = {"group": copies["group"], "copy": copies["copy"]}
    for name in ("puzzle", "solution"):
        grids = parse_puzzles(copies[name]).grids
        back = undo_symmetries(grids, **symmetry) if len(grids) else np.zeros((0, 81), np.uint8)
        out[name] = pl.Series(name, format_grids(back))
    return pl.DataFrame(out)
