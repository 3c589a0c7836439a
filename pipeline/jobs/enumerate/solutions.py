"""Every solution of each puzzle, as rows in tables of bounded size: the step the enumerate job
and its in-memory twin share.

A batch is first searched whole for up to two solutions (`solve_grids`): a puzzle with one
(or, for a limit of 1, its first) gives that row at once. The puzzles with several come from
the kernel's streaming search (`pipeline.kernels.enumeration.enumerate_batch`: chunks of at most
`chunk` rows, each puzzle's solutions in the search's fixed order, its first the one
`solve_grids` finds) and go into the table being filled; a table is handed on as soon as it
holds `part_rows` rows, so however many solutions a puzzle has, one table and one chunk are
held here at a time. A puzzle's solutions may span several tables; a table may hold the
solutions of many puzzles.

Each input row ends in one of `OUTCOMES`: `complete` (all its solutions, fewer than the limit),
`at_limit` (the limit reached: there may be more), `limit` (its search spent the node budget:
the solutions found until then), `unsolvable` (none), `invalid` (its givens clash: no
search), `malformed` (not a puzzle). Only the first three give rows.
"""

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from pipeline.grid import ParsedGrids, format_grids, parse_puzzles
from pipeline.io.dataset import optional_column
from pipeline.kernels import codes, solve_grids
from pipeline.results.schema import row_fields

OUTCOMES = ("complete", "at_limit", "limit", "unsolvable", "invalid", "malformed")
SOURCE_TYPE = pa.dictionary(pa.int32(), pa.string())  # as the solve job's `source`
COLUMNS: dict[str, str] = {
    "row": "the input row of the puzzle (0-based)",
    "id": "the puzzle's id, when the input has an id column",
    "k": "the solution's 0-based index among the puzzle's (in the order the search finds them)",
    "solution": "the solution, 81 digits",
}


def solutions_schema(id_type: pa.DataType | None, sources: bool = False) -> pa.Schema:
    """The enumerate output's columns: `source` first with several inputs, `id` when the input
    has ids."""
    fields = [pa.field("source", SOURCE_TYPE, nullable=False)] if sources else []
    fields += row_fields(id_type) + [
        pa.field("k", pa.int64(), nullable=False),
        pa.field("solution", pa.string(), nullable=False),
    ]
    return pa.schema(fields)


def documented_schema() -> tuple[pa.Schema, dict[str, str]]:
    """The output's columns, and what each means (the docs' table)."""
    return solutions_schema(pa.string()), COLUMNS


@dataclass
class Tally:
    """What has been enumerated so far: input rows, solution rows, rows per outcome."""

    rows: int = 0
    solutions: int = 0
    outcomes: Counter = field(default_factory=Counter)

    def by_outcome(self) -> dict[str, int]:
        return {name: self.outcomes.get(name, 0) for name in OUTCOMES}

    def add(self, other: "Tally") -> None:
        """Count `other`'s rows too (a unit searched elsewhere)."""
        self.rows += other.rows
        self.solutions += other.solutions
        self.outcomes.update(other.outcomes)


@dataclass
class Segment:
    """Consecutive solutions of one puzzle: solution `k` on."""

    source: int
    row: int
    id: Any
    k: int
    solutions: np.ndarray  # (m, 81) uint8


class _Filling:
    """The table being filled: segments of one puzzle's consecutive solutions."""

    def __init__(self, schema: pa.Schema, names: list[str] | None) -> None:
        self.schema = schema
        self.names = names
        self.segments: list[Segment] = []
        self.size = 0

    def add(self, segment: Segment) -> None:
        self.segments.append(segment)
        self.size += len(segment.solutions)

    def table(self) -> pa.Table:
        """The segments as one table; the filling starts empty again."""
        lengths = [len(s.solutions) for s in self.segments]
        columns: dict[str, pa.Array] = {}
        if self.names is not None:
            codes = np.repeat([s.source for s in self.segments], lengths).astype(np.int32)
            names = pa.array(self.names, pa.string())
            columns["source"] = pa.DictionaryArray.from_arrays(pa.array(codes), names)
        columns["row"] = pa.array(np.repeat([s.row for s in self.segments], lengths), pa.int64())
        if "id" in self.schema.names:
            ids = pa.array([s.id for s in self.segments], self.schema.field("id").type)
            columns["id"] = ids.take(pa.array(np.repeat(np.arange(len(lengths)), lengths)))
        ks = [np.arange(s.k, s.k + len(s.solutions)) for s in self.segments]
        columns["k"] = pa.array(np.concatenate(ks) if ks else np.zeros(0, np.int64), pa.int64())
        grids = [s.solutions for s in self.segments]
        columns["solution"] = format_grids(
            np.concatenate(grids) if grids else np.zeros((0, 81), np.uint8)
        )
        self.segments, self.size = [], 0
        return pa.Table.from_pydict(columns, schema=self.schema)


_NO_ROWS = {codes.MALFORMED: "malformed", codes.INVALID: "invalid", codes.UNSOLVABLE: "unsolvable"}


def _screened(
    parsed: ParsedGrids, limit: int, max_nodes: int | None
) -> tuple[np.ndarray, np.ndarray]:
    """A whole batch searched at once for `min(limit, 2)` solutions: the verdicts, and the
    first solutions. Most puzzles of a corpus have one solution, or none: they need no
    enumeration, one puzzle at a time, at all."""
    marks = {} if parsed.candidates is None else {"candidates": parsed.candidates}
    found = solve_grids(
        parsed.grids, solutions=min(limit, 2), skip=~parsed.ok, max_nodes=max_nodes, **marks
    )
    return found.verdicts, found.solutions


class _Stream:
    """The kernel's streaming search over the puzzles of a batch that have several solutions
    (`enumeration.enumerate_batch`: chunks of rows in puzzle order), handed out a puzzle at a
    time: one search for the whole batch, not one set-up per puzzle."""

    def __init__(
        self,
        parsed: ParsedGrids,
        several: np.ndarray,
        limit: int,
        chunk: int,
        max_nodes: int | None,
    ) -> None:
        from pipeline.kernels.enumeration import enumerate_batch  # the kernel's streaming search

        marks = parsed.candidates is not None  # then every row's candidates
        puzzles = parsed.candidates if parsed.candidates is not None else parsed.grids
        self.spent = np.zeros(len(several), dtype=np.bool_)  # puzzles stopped by the budget
        self._chunks = enumerate_batch(
            puzzles,
            limit,
            chunk,
            skip=~several,
            candidates=marks,
            max_nodes=max_nodes,
            spent=self.spent,
        )
        self._chunk: Any = None
        self._at = 0

    def solutions_of(self, row: int) -> Iterator[np.ndarray]:
        """Puzzle `row`'s solutions, in `(k, 81)` blocks (asked for in ascending `row`s)."""
        while True:
            if self._chunk is None or self._at >= len(self._chunk.rows):
                self._chunk, self._at = next(self._chunks, None), 0
                if self._chunk is None:
                    return
            rows = self._chunk.rows
            if rows[self._at] != row:  # the search is past `row`: `spent[row]` is known
                return
            end = self._at + int(np.searchsorted(rows[self._at :], row, side="right"))
            yield self._chunk.solutions[self._at : end]
            self._at = end


def puzzle_segments(
    source: int,
    batch: pa.RecordBatch,
    limit: int,
    chunk: int,
    tally: Tally,
    max_nodes: int | None = None,
) -> Iterator[Segment]:
    """The solution rows of every puzzle of `batch` (a batch with `row`, `puzzle` and
    optionally `id`; `source`: the input's index), up to `limit` a puzzle, as segments of at
    most `chunk` rows, in order; `max_nodes`: each puzzle's node budget (None: none), for the
    screening search and for the enumeration. `tally` counts as it goes. The unit of work a
    worker runs (`spread`)."""
    parsed = parse_puzzles(batch.column(batch.schema.get_field_index("puzzle")), True)
    rows = batch.column(batch.schema.get_field_index("row")).to_numpy().tolist()
    ids = optional_column(batch, "id")
    verdicts, firsts = _screened(parsed, limit, max_nodes)
    # the only ones a search must enumerate (a screen stopped by the budget: its rows so far)
    several = (verdicts == codes.MULTIPLE) | (verdicts == codes.LIMIT)
    stream = _Stream(parsed, several, limit, chunk, max_nodes) if several.any() else None
    for i, verdict in enumerate(verdicts.tolist()):
        tally.rows += 1
        if verdict in _NO_ROWS:
            tally.outcomes[_NO_ROWS[verdict]] += 1
            continue
        if stream is not None and several[i]:
            found = stream.solutions_of(i)
        else:  # SOLVED, FOUND: the one solution (or the first, for a limit of 1) is known
            found = iter([firsts[i : i + 1]])
        ident = None if ids is None else ids[i].as_py()
        k = 0
        for solutions in found:
            yield Segment(source, rows[i], ident, k, solutions)
            k += len(solutions)
        tally.solutions += k
        spent = stream is not None and stream.spent[i]
        tally.outcomes["limit" if spent else "at_limit" if k >= limit else "complete"] += 1


def segment_tables(
    segments: Iterable[Segment], rows: int, schema: pa.Schema, names: list[str] | None
) -> Iterator[pa.Table]:
    """`segments` gathered into tables of about `rows` rows (cut between segments: at most
    `rows` and one segment), in order; one table is held at a time. Where the rows' bytes are
    made: on the workers that search, with several."""
    filling = _Filling(schema, names)
    for segment in segments:
        filling.add(segment)
        if filling.size >= rows:
            yield filling.table()
    if filling.size:
        yield filling.table()


def part_tables(tables: Iterable[pa.Table], part_rows: int) -> Iterator[pa.Table]:
    """`tables` cut and joined into tables of `part_rows` rows (the last may hold fewer; none
    without rows), without copying: the same parts however the rows came (the encoder joins
    a part's chunks before it encodes)."""
    held: list[pa.Table] = []
    size = 0
    for table in tables:
        while table.num_rows:
            take = table.slice(0, part_rows - size)
            held.append(take)
            size += take.num_rows
            table = table.slice(take.num_rows)
            if size >= part_rows:
                yield pa.concat_tables(held)
                held, size = [], 0
    if size:
        yield pa.concat_tables(held)


def kernel_chunk(part_rows: int) -> int:
    """Solutions a call of the streaming search hands back at most."""
    return max(1, min(part_rows, 65_536))


def solution_tables(
    batches: Iterable[tuple[int, pa.RecordBatch]],
    limit: int,
    part_rows: int,
    schema: pa.Schema,
    tally: Tally,
    names: list[str] | None = None,
    max_nodes: int | None = None,
) -> Iterator[pa.Table]:
    """The solution rows of every puzzle of `batches` (the input's index, a batch with `row`,
    `puzzle` and optionally `id`), up to `limit` a puzzle, in tables of `part_rows` rows (the
    last may hold fewer; none for an input without solutions), searched in this thread.
    `tally` counts as it goes; `names`: the inputs' names, for a `source` column (several
    inputs); `max_nodes`: each puzzle's node budget."""
    chunk = kernel_chunk(part_rows)
    segments = (
        segment
        for source, batch in batches
        for segment in puzzle_segments(source, batch, limit, chunk, tally, max_nodes)
    )
    yield from part_tables(segment_tables(segments, chunk, schema, names), part_rows)
