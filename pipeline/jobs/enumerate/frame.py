"""Every solution of puzzles a notebook holds, as they come: `enumerate_puzzles`.

for frame in enumerate_puzzles(["1........" + "." * 72], limit=10_000_000):
    frame   # a polars DataFrame of at most `chunk_rows` rows: row, k, solution
"""

from collections.abc import Iterator

import polars as pl
import pyarrow as pa

from pipeline.io.frames import PuzzleInput, puzzle_batch
from pipeline.jobs.enumerate.solutions import Tally, solution_tables, solutions_schema


def enumerate_puzzles(
    puzzles: PuzzleInput,
    limit: int,
    *,
    column: str | None = None,
    id_column: str | None = None,
    chunk_rows: int = 50_000,
    max_nodes: int | None = None,
) -> Iterator[pl.DataFrame]:
    """The solutions of each puzzle, up to `limit` a puzzle, in DataFrames of at most
    `chunk_rows` rows (columns `row`, `id` for a DataFrame with an id column, `k`, `solution`),
    in input order and, within a puzzle, in the order the search finds them. Only one chunk is
    held at a time: a puzzle with millions of solutions streams. Puzzles are 81-character or
    729-character pencilmark strings, in any form `solve_batch` takes; a row that is not a
    puzzle, whose givens clash or that has no solution gives no rows. `max_nodes`: each
    puzzle's node budget (None: none): a search that spends it stops, its rows so far given.

    ValueError for a `limit` or `chunk_rows` below 1 (said at the call, not at the first
    frame), and as `solve_batch` for puzzles it cannot read."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"limit must be a whole number of at least 1, not {limit!r}")
    if chunk_rows < 1:
        raise ValueError(f"chunk_rows must be at least 1, not {chunk_rows!r}")
    batch = puzzle_batch(puzzles, column=column, id_column=id_column)
    has_ids = "id" in batch.schema.names
    schema = solutions_schema(batch.schema.field("id").type if has_ids else None)
    if max_nodes is not None and (isinstance(max_nodes, bool) or max_nodes < 1):
        raise ValueError(f"max_nodes must be at least 1, not {max_nodes!r}")
    return _frames(batch, limit, chunk_rows, schema, max_nodes)


def _frames(
    batch: pa.RecordBatch, limit: int, chunk_rows: int, schema: pa.Schema, max_nodes: int | None
) -> Iterator[pl.DataFrame]:
    tally = Tally()
    for table in solution_tables([(0, batch)], limit, chunk_rows, schema, tally, None, max_nodes):
        frame = pl.from_arrow(table)
        assert isinstance(frame, pl.DataFrame)
        yield frame
