"""One batch through the middle of a split: solved (and rated when stratifying) by the solve
job's own step, then narrowed to what a split keeps. The unit of work a worker runs; the
in-memory `split` runs it too.

A worker sends back only the rows with one solution and the columns a split writes, with each
row's group id (a hash of its canonical form: `hashing.group_ids`), and counts of the rows it
left out by reason: the canonical forms and the left-out rows never travel.
"""

from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.results.schema import result_schema
from pipeline.solving.batch import SolveOptions, solve_record_batch
from pipeline.splitting.hashing import group_ids
from pipeline.splitting.options import VERDICT_REASONS

GROUP = "group"  # the column of canonical group ids
SOURCE = "source"  # the input's index (several inputs), made its name when written
DROPPED = ("verdict", "nodes", "guesses", "solve_ns", "expected_ok", "error", "canonical")
# A split's own columns, first, in this order (`id` and the ratings when present)
LEADING = ("id", "puzzle", "solution", "difficulty", "grade", "grade_level", "steps",
           "steps_by_level", "clues", SOURCE, "row")  # fmt: skip


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
    batch: pa.RecordBatch, options: SolveOptions, source: int | None = None
) -> SplitPart:
    """Solve a batch (columns `row`, `puzzle`, optionally `solution`, `id`, others passed
    through) and keep its rows with one solution; `source`: the input's index, when several."""
    results = solve_record_batch(batch, options)
    verdicts = results.column("verdict").combine_chunks()
    names = pc.cast(verdicts, pa.string())  # the dictionary's words
    counted = Counter(dict(zip(*(a.to_pylist() for a in pc.value_counts(names).flatten()),
                               strict=True)))  # fmt: skip
    left_out = Counter({VERDICT_REASONS[v]: n for v, n in counted.items() if v != "solved"})
    kept = results.filter(pc.equal(names, "solved"))
    wrong = pc.sum(pc.invert(kept.column("expected_ok"))).as_py() or 0
    groups = pa.array(group_ids(kept.column("canonical")), pa.int64())
    kept = kept.drop_columns([c for c in DROPPED if c in kept.column_names])
    kept = kept.append_column(GROUP, groups)
    if source is not None:
        sources = pa.array(np.full(kept.num_rows, source, np.int32))
        kept = kept.append_column(SOURCE, sources)
    return SplitPart(batch.num_rows, _ordered(kept), left_out, wrong)


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


def split_task(task: tuple[int | None, pa.RecordBatch], options: SolveOptions) -> SplitPart:
    """The unit of work of the split job: `task` is (the input's index when there are
    several, else None; a batch)."""
    source, batch = task
    return split_record_batch(batch, options, source)
