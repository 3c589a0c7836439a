"""One batch through the middle of a split: solved (and rated when stratifying) by the solve
job's own step, then narrowed to what a split keeps. The unit of work a worker runs; the
in-memory `split` runs it too.

A `rating` column (sudoku-extreme's layout: tdoku's backtracks) is read as a number here,
text from a CSV included (a value that is no number: null), so that a split can stratify and
filter by it; with `min_rating`, rows below it (or with none) are left out before solving.

A worker sends back only the rows with one solution and the columns a split writes, with each
row's group id (a hash of its canonical form: `hashing.group_ids`), and counts of the rows it
left out by reason: the canonical forms and the left-out rows never travel.
"""

from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.errors import InputError
from pipeline.jobs.solve.batch import SolveOptions, solve_record_batch
from pipeline.jobs.split.hashing import group_ids
from pipeline.jobs.split.options import BELOW_RATING, RATING, VERDICT_REASONS
from pipeline.results.schema import result_schema

GROUP = "group"  # the column of canonical group ids
SOURCE = "source"  # the input's index (several inputs), made its name when written
DROPPED = ("verdict", "nodes", "guesses", "solve_ns", "expected_ok", "error", "canonical")
# A split's own columns, first, in this order (`id` and the ratings when present)
LEADING = (
    "id",
    "puzzle",
    "solution",
    "difficulty",
    "grade",
    "grade_level",
    "steps",
    "steps_by_level",
    "clues",
    SOURCE,
    "row",
)


def solve_options(rate: bool, max_nodes: int | None = None) -> SolveOptions:
    """The solve step a split runs: uniqueness proved, canonical forms, ratings when asked."""
    return SolveOptions(solutions=2, max_nodes=max_nodes, canonical=True, rate=rate)


def added_columns(rate: bool) -> tuple[str, ...]:
    """The columns a split adds to an input's: what the solve step adds, and `group`; an input
    column of one of these names passes through as `input_<name>`."""
    return (*solve_options(rate).added_schema().names, GROUP)


@dataclass
class SplitPart:
    """A batch's kept rows (one solution each, in input order) and its left-out counts."""

    rows: int  # rows of the input batch, all of them (the progress bar counts these)
    table: pa.Table
    left_out: Counter = field(default_factory=Counter)
    wrong_solutions: int = 0  # kept rows whose input solution is not the unique one


def split_record_batch(
    batch: pa.RecordBatch,
    options: SolveOptions,
    source: int | None = None,
    min_rating: float | None = None,
) -> SplitPart:
    """Solve a batch (columns `row`, `puzzle`, optionally `solution`, `id`, `rating`, others
    passed through) and keep its rows with one solution; `source`: the input's index, when
    several; `min_rating`: rows rated below it, or not rated, left out first."""
    rows = batch.num_rows
    low = 0
    if RATING in batch.schema.names:
        batch = _rating_as_number(batch)
        if min_rating is not None:
            ratings = batch.column(RATING)
            enough = pc.fill_null(pc.greater_equal(ratings, pa.scalar(min_rating)), False)
            batch = batch.filter(enough)
            low = rows - batch.num_rows
    results = solve_record_batch(batch, options)
    verdicts = results.column("verdict").combine_chunks()
    names = pc.cast(verdicts, pa.string())  # the dictionary's words
    counted = Counter(
        dict(zip(*(a.to_pylist() for a in pc.value_counts(names).flatten()), strict=True))
    )
    left_out = Counter({VERDICT_REASONS[v]: n for v, n in counted.items() if v != "solved"})
    if low:
        left_out[BELOW_RATING] += low
    kept = results.filter(pc.equal(names, "solved"))
    wrong = pc.sum(pc.invert(kept.column("expected_ok"))).as_py() or 0
    canonical = kept.column("canonical")
    if canonical.null_count:  # only a pencilmark puzzle has no minlex form here
        at = pc.index(pc.is_null(canonical), True).as_py()
        raise InputError(
            f"row {kept.column('row')[at].as_py()} is a pencilmark puzzle: split "
            "groups puzzles by canonical form (and HRM's arrays hold 81 cells), "
            "which pencilmark puzzles have none of here"
        )
    groups = pa.array(group_ids(canonical), pa.int64())
    kept = kept.drop_columns([c for c in DROPPED if c in kept.column_names])
    kept = kept.append_column(GROUP, groups)
    if source is not None:
        sources = pa.array(np.full(kept.num_rows, source, np.int32))
        kept = kept.append_column(SOURCE, sources)
    return SplitPart(rows, _ordered(kept), left_out, wrong)


def _rating_as_number(batch: pa.RecordBatch) -> pa.RecordBatch:
    """`rating` as int64 (float64 when some value has a fraction); text that is no number
    becomes null (the row is kept: only `min_rating` leaves it out)."""
    import polars as pl

    at = batch.schema.get_field_index(RATING)
    column = batch.column(at)
    if pa.types.is_integer(column.type) or pa.types.is_floating(column.type):
        return batch
    text = pl.Series(column).cast(pl.String).str.strip_chars()
    number = text.cast(pl.Int64, strict=False)
    if number.null_count() > text.null_count():
        floats = text.cast(pl.Float64, strict=False)
        if floats.null_count() < number.null_count():
            number = floats
    array = number.to_arrow(compat_level=pl.CompatLevel.oldest())
    return batch.set_column(at, pa.field(RATING, array.type), array)


def _ordered(table: pa.Table) -> pa.Table:
    """The split's columns first (`LEADING`), then those passed through, `group` last."""
    first = [c for c in LEADING if c in table.column_names]
    rest = [c for c in table.column_names if c not in first and c != GROUP]
    return table.select([*first, *rest, GROUP])


def empty_part(
    id_type: pa.DataType | None, rate: bool, extra: pa.Schema, several: bool = False
) -> pa.Table:
    """The kept rows' table with no rows: its schema, for a corpus where nothing is kept
    (`several`: with the `source` column of several inputs)."""
    schema = result_schema(id_type, pa.schema([*solve_options(rate).added_schema(), *extra]))
    table = schema.empty_table().drop_columns([c for c in DROPPED if c in schema.names])
    table = table.append_column(GROUP, pa.array([], pa.int64()))
    if several:
        table = table.append_column(SOURCE, pa.array([], pa.int32()))
    return _ordered(table)


def split_task(
    task: tuple[int | None, pa.RecordBatch], options: SolveOptions, min_rating: float | None = None
) -> SplitPart:
    """The unit of work of the split job: `task` is (the input's index when there are
    several, else None; a batch)."""
    source, batch = task
    return split_record_batch(batch, options, source, min_rating)
