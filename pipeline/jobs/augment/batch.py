"""One batch augmented, the unit of work a worker runs: parse the puzzles (and solutions),
check or find each solution, draw the copies (`symmetry_kernels`), and lay them out as the
output's columns.

    augmented = augment_record_batch(batch, AugmentOptions(copies=8, seed=1))
    augmented.table()            # for Parquet: puzzle and solution as 81-character strings
    augmented.arrays()           # for a folder of arrays: (n, 81) uint8 grids, no strings made
    augmented.tally              # rows read, augmented, solved, left out (and why), short

Which rows are augmented: a puzzle with a solution that solves it (complete, breaking no rule,
keeping every given), as the input gives it or, where the input gives none, as the `fast`
solver finds it, counting to two: a puzzle with more than one solution is left out. Every
other row is left out, counted by reason (`LEFT_OUT`), with its input row number among the
first few of each reason: nothing is lost without a word. A given solution is checked
against its puzzle, not for uniqueness (that takes a search per row; `solve` or `split` check
it).
"""

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.grid import format_grids, parse_puzzles
from pipeline.io.extreme_layout import source_as_codes, streamed_schema
from pipeline.io.hrm_folders import HrmArrays, encode_cells, pencilmark_refusal
from pipeline.kernels import codes, solve_grids
from pipeline.kernels.checks import verify_solutions
from pipeline.pencilmarks import PENCILMARK_CHARS
from pipeline.symmetry_kernels import ATTEMPTS, Copies, augment_grids

SOLVER = "fast"
EXAMPLES = 5  # input rows named per reason a row is left out
LEFT_OUT: dict[str, str] = {
    "malformed": "not an 81-cell puzzle",
    "invalid": "givens clash",
    "unsolvable": "no solution",
    "multiple": "more than one solution",
    "limit": "the solver's node budget ran out",
    "wrong_solution": "the input's solution does not solve the puzzle",
}
_REASONS = ("", *LEFT_OUT)  # a row's reason as a small number: 0 for a row augmented
_CODE = {reason: np.int8(i) for i, reason in enumerate(_REASONS)}
_FROM_VERDICT = {
    codes.INVALID: "invalid",
    codes.UNSOLVABLE: "unsolvable",
    codes.MULTIPLE: "multiple",
    codes.LIMIT: "limit",
}
SYMMETRY_COLUMNS: dict[str, str] = {
    "relabel": "digit d of the original is digit number d (from the left) of this 9-digit "
    "number in the copy; 123456789 relabels nothing",
    "row_order": "row i of the copy (1-9, before any transposing) is row number i (from the "
    "left) of this 9-digit number in the original; 123456789 moves no row",
    "column_order": "column j of the copy (before any transposing) is column number j of this "
    "9-digit number in the original",
    "transposed": "the copy was then transposed (rows become columns)",
}
COLUMNS: dict[str, str] = {
    "group": "the input row the copy was made from (0-based): copies of one puzzle share it",
    "copy": "0 for the original (--keep-original), 1..K for the copies",
    "id": "the input's id column, when it has one",
    "puzzle": "the copy's puzzle, 81 characters, '.' for blanks",
    "solution": "its solution, 81 digits",
    **SYMMETRY_COLUMNS,
}


@dataclass(frozen=True)
class AugmentOptions:
    """`copies` random symmetries of every row, from the streams of `seed`; the original too
    when `keep_original`; `attempts` draws per copy to find a new image."""

    copies: int = 8
    seed: int = 0
    keep_original: bool = False
    attempts: int = ATTEMPTS

    def kernels(self) -> tuple[str, ...]:
        """The kernels a batch calls (`run.warmup.KERNELS`)."""
        return ("augment", "verify", SOLVER)


@dataclass
class AugmentTally:
    """A batch's (or a run's) rows, counted."""

    rows: int = 0
    augmented: int = 0
    copies: int = 0
    solved: int = 0  # solutions found by the solver (the input gave none)
    short: int = 0  # rows with fewer distinct copies than asked (symmetric puzzles)
    left_out: dict[str, int] = field(default_factory=dict)
    examples: dict[str, list[int]] = field(default_factory=dict)  # reason -> first input rows
    short_examples: list[int] = field(default_factory=list)

    def add(self, other: "AugmentTally") -> None:
        self.rows += other.rows
        self.augmented += other.augmented
        self.copies += other.copies
        self.solved += other.solved
        self.short += other.short
        for reason, count in other.left_out.items():
            self.left_out[reason] = self.left_out.get(reason, 0) + count
            seen = self.examples.setdefault(reason, [])
            seen += other.examples.get(reason, [])[: EXAMPLES - len(seen)]
        self.short_examples += other.short_examples[: EXAMPLES - len(self.short_examples)]


@dataclass
class AugmentedBatch:
    """A batch's copies, and the columns passed through (one row per copy)."""

    copies: Copies  # only the kept slots
    groups: np.ndarray  # (k,) int64
    copy_numbers: np.ndarray  # (k,) int32
    passed: pa.Table  # id and the input's other columns, taken per copy
    tally: AugmentTally

    @property
    def rows(self) -> int:
        return len(self.groups)

    def _front(self) -> dict[str, Any]:
        return {"group": pa.array(self.groups), "copy": pa.array(self.copy_numbers)}

    def _back(self) -> dict[str, Any]:
        c = self.copies
        return {
            "relabel": pa.array(c.relabel),
            "row_order": pa.array(c.rows),
            "column_order": pa.array(c.columns),
            "transposed": pa.array(c.transposed),
        }

    def table(self) -> pa.Table:
        """The copies as the output's rows: puzzle and solution as text."""
        columns = self._front()
        if "id" in self.passed.column_names:
            columns["id"] = self.passed.column("id")
        columns["puzzle"] = format_grids(self.copies.puzzles)
        columns["solution"] = format_grids(self.copies.solutions)
        columns |= self._back()
        for name in self.passed.column_names:
            if name != "id":
                columns[name] = self.passed.column(name)
        return pa.table(columns)

    def arrays(self, schema: pa.Schema) -> dict[str, Any]:
        """The copies as a folder of arrays takes them (`io.arrays.column_arrays`), the grids
        straight from the kernel: no text made and parsed again."""
        from pipeline.io.arrays import column_arrays

        front = pa.table({**self._front(), **self._back()})
        arrays = column_arrays(front) | column_arrays(self.passed)
        arrays["puzzle"] = self.copies.puzzles
        arrays["solution"] = self.copies.solutions
        return {name: arrays[name] for name in schema.names if name in arrays}

    def hrm_arrays(self, schema: pa.Schema) -> HrmArrays:
        """The copies as HRM's layout takes them (`io.hrm_folders`): each input row a group
        (its copies are together, in input order), the cells as HRM's tokens, the other
        columns of `schema` beside (`source` as codes, as split writes it)."""
        arrays = replace(self, passed=source_as_codes(self.passed)).arrays(schema)
        inputs = encode_cells(arrays.pop("puzzle"), out=self.copies.puzzles)  # ours: in place
        labels = encode_cells(arrays.pop("solution"), out=self.copies.solutions)
        starts = np.flatnonzero(np.diff(self.groups, prepend=-1))  # a row's copies together
        sizes = np.diff(starts, append=len(self.groups))
        return HrmArrays(inputs, labels, sizes, arrays)


def hrm_schema(schema: pa.Schema) -> pa.Schema:
    """The columns beside HRM's arrays, for an output of `schema` (`output_schema`'s): all but
    the grids, `source` as codes, `rating` as a number (`io.extreme_layout`)."""
    fields = [f for f in schema if f.name not in ("puzzle", "solution")]
    return streamed_schema(pa.schema(fields))


def refuse_pencilmarks(batch: pa.RecordBatch) -> None:
    """For HRM's layout: InputError (one line) naming the first pencilmark row of `batch`,
    which HRM's 81 cells a puzzle cannot hold (elsewhere such a row is left out, malformed)."""
    puzzles = batch.column("puzzle")
    if pa.types.is_string(puzzles.type) or pa.types.is_large_string(puzzles.type):
        lengths = pc.utf8_length(pc.utf8_trim_whitespace(puzzles))
        marks = np.flatnonzero(pc.fill_null(pc.equal(lengths, PENCILMARK_CHARS), False))
        if len(marks):
            raise pencilmark_refusal(batch.column("row")[int(marks[0])].as_py())


def output_schema(batch_schema: pa.Schema) -> pa.Schema:
    """The output's schema for batches of `batch_schema` (the input's: row, [id], puzzle,
    [solution], then the columns passed through)."""
    fields = [pa.field("group", pa.int64()), pa.field("copy", pa.int32())]
    if "id" in batch_schema.names:
        fields.append(batch_schema.field("id"))
    fields += [pa.field("puzzle", pa.string()), pa.field("solution", pa.string())]
    fields += [pa.field(name, pa.int32()) for name in ("relabel", "row_order", "column_order")]
    fields.append(pa.field("transposed", pa.bool_()))
    skip = {"row", "id", "puzzle", "solution"}
    return pa.schema(fields + [f for f in batch_schema if f.name not in skip])


def documented_schema() -> tuple[pa.Schema, dict[str, str]]:
    """The output's columns for an input of an id and puzzles, and what each means (the
    docs' table)."""
    batch = pa.schema([("row", pa.int64()), ("id", pa.string()), ("puzzle", pa.string())])
    return output_schema(batch), COLUMNS


def augment_record_batch(batch: pa.RecordBatch, options: AugmentOptions) -> AugmentedBatch:
    """Augment one batch (its `row` column numbers the groups): see the module."""
    rows = batch.column("row").to_numpy()
    parsed = parse_puzzles(batch.column("puzzle"))
    n = batch.num_rows
    reasons = np.zeros(n, np.int8)
    reasons[~parsed.ok] = _CODE["malformed"]
    solutions = np.zeros((n, 81), np.uint8)
    todo = parsed.ok.copy()  # rows that still need a solution
    if "solution" in batch.schema.names:
        column = batch.column("solution")
        given = parsed.ok & np.asarray(column.is_valid().to_numpy(zero_copy_only=False), bool)
        if given.any():
            solutions[given] = parse_puzzles(column.filter(pa.array(given))).grids
            right = verify_solutions(parsed.grids[given], solutions[given])
            wrong = np.flatnonzero(given)[~right]
            reasons[wrong] = _CODE["wrong_solution"]
            todo &= ~given
    solved = 0
    if todo.any():
        found = solve_grids(parsed.grids[todo], SOLVER, solutions=2)
        index = np.flatnonzero(todo)
        unique = found.verdicts == codes.SOLVED
        solutions[index[unique]] = found.solutions[unique]
        solved = int(unique.sum())
        for code, reason in _FROM_VERDICT.items():
            reasons[index[found.verdicts == code]] = _CODE[reason]
    good = np.flatnonzero(reasons == 0)
    copies = augment_grids(
        parsed.grids[good],
        solutions[good],
        rows[good],
        options.seed,
        options.copies,
        options.keep_original,
        options.attempts,
    )
    m = options.copies + bool(options.keep_original)
    slots = np.flatnonzero(copies.kept)
    kept = copies if len(slots) == len(copies.kept) else copies.select(slots)
    first_copy = 0 if options.keep_original else 1
    taken = good[slots // m] if m else np.zeros(0, np.int64)
    passed = pa.Table.from_batches([batch]).drop_columns(
        [name for name in ("row", "puzzle", "solution") if name in batch.schema.names]
    )
    passed = passed.take(pa.array(taken)) if passed.num_columns else passed
    tally = _tally(rows, reasons, copies.short, good, len(slots), solved)
    return AugmentedBatch(
        kept,
        rows[taken],
        (slots % m + first_copy).astype(np.int32) if m else np.zeros(0, np.int32),
        passed,
        tally,
    )


def _tally(
    rows: np.ndarray,
    reasons: np.ndarray,
    short: np.ndarray,
    good: np.ndarray,
    copies: int,
    solved: int,
) -> AugmentTally:
    tally = AugmentTally(
        rows=len(rows),
        augmented=len(good),
        copies=copies,
        solved=solved,
        short=int(short.sum()),
        short_examples=rows[good[short]][:EXAMPLES].tolist(),
    )
    for reason in LEFT_OUT:
        where = np.flatnonzero(reasons == _CODE[reason])
        if len(where):
            tally.left_out[reason] = len(where)
            tally.examples[reason] = rows[where[:EXAMPLES]].tolist()
    return tally
