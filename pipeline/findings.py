"""Findings: what validation says about rows, one table row per finding.

A finding names the row, a code, a level and a sentence for people; evidence columns carry what
a program needs to act on it. Codes, in the order a row's findings are listed:

| code | level | the row ... |
|---|---|---|
| malformed | error | is not an 81-cell puzzle: missing, wrong length, a stray character |
| clash | error | has givens that repeat a digit in a row, column or box |
| unsolvable | error | has consistent givens that no grid completes |
| multiple | error | has two or more solutions (two of them as evidence) |
| few_clues | info | has fewer than 17 givens: never a unique solution (why it is `multiple`) |
| limit | warning | spent the node budget before uniqueness (or minimality) was decided |
| wrong_solution | error | has a solution column that is not a valid full grid, changes a |
| | | given, or differs from the unique solution |
| not_minimal | warning | (`--minimal`) has givens that can each go, the solution staying unique |
| duplicate | warning | is the same puzzle as an earlier row (compared after parsing) |

Errors are rows that are not what a puzzle corpus claims (`--strict` fails on them). A
duplicate is a warning: each copy is a correct puzzle, the corpus is only redundant. A row
stopped by the budget is undecided, not wrong. `few_clues` only explains another finding.

Evidence columns (null where they do not apply): `cells` (0-based cells, row-major: the two
clashing givens; the givens a solution column changes, or else where it differs from the unique
solution; the removable givens), `first_row` (of a duplicate), `solution_a` and `solution_b`
(two different solutions of a `multiple` row), `unique_solution` and `column_solution` (the
solution found and the one the input's solution column holds, for `wrong_solution`).
"""

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.generate import MIN_UNIQUE_CLUES
from pipeline.grid import ParsedGrids, clue_counts, format_grids, parse_puzzles
from pipeline.minimal import removable_givens
from pipeline.results import clash_messages
from pipeline.solver import codes

CODES: dict[str, str] = {
    "malformed": "error",
    "clash": "error",
    "unsolvable": "error",
    "multiple": "error",
    "few_clues": "info",
    "limit": "warning",
    "wrong_solution": "error",
    "not_minimal": "warning",
    "duplicate": "warning",
}
LEVELS: tuple[str, ...] = ("error", "warning", "info")  # "error" first: index 0
_CODE_NAMES = pa.array(list(CODES), pa.string())
_LEVEL_NAMES = pa.array(list(LEVELS), pa.string())
_CODE_INDEX = {code: i for i, code in enumerate(CODES)}
_LEVEL_INDEX = {level: i for i, level in enumerate(LEVELS)}
DICTIONARY = pa.dictionary(pa.int8(), pa.string())
EVIDENCE: dict[str, pa.DataType] = {
    "cells": pa.list_(pa.int8()),
    "first_row": pa.int64(),
    "solution_a": pa.string(),
    "solution_b": pa.string(),
    "unique_solution": pa.string(),
    "column_solution": pa.string(),
}


def findings_schema(id_type: pa.DataType | None = None) -> pa.Schema:
    """The findings schema; with an `id` column of `id_type` when the input has ids."""
    fields = [pa.field("row", pa.int64(), nullable=False)]
    if id_type is not None:
        fields.append(pa.field("id", id_type))
    fields += [
        pa.field("code", DICTIONARY, nullable=False),
        pa.field("level", DICTIONARY, nullable=False),
        pa.field("message", pa.string(), nullable=False),
    ]
    fields += [pa.field(name, kind) for name, kind in EVIDENCE.items()]
    return pa.schema(fields)


def cell_name(cell: int) -> str:
    """A 0-based cell as people name it: 0 -> `r1c1`, 80 -> `r9c9`."""
    return f"r{cell // 9 + 1}c{cell % 9 + 1}"


def _count(n: int, thing: str) -> str:
    """`1 cell`, `2 cells`."""
    return f"{n} {thing}" if n == 1 else f"{n} {thing}s"


def cell_lists(cells: np.ndarray) -> pa.ListArray:
    """A `(k, 81) bool` mask as k lists of the 0-based cells where it is True."""
    counts = np.count_nonzero(cells, axis=1)
    offsets = np.zeros(len(cells) + 1, np.int32)
    np.cumsum(counts, out=offsets[1:])
    values = np.nonzero(cells)[1].astype(np.int8)
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(values))


class FindingsBuilder:
    """Collects the findings of one batch, code by code, into one table sorted by row.

    `rows` are the batch's input positions and `ids` its id column (or None); `add` takes
    positions inside the batch.
    """

    def __init__(self, rows: np.ndarray, ids: pa.Array | None = None) -> None:
        self.rows = np.asarray(rows, dtype=np.int64)
        self.ids = ids
        self.schema = findings_schema(None if ids is None else ids.type)
        self._parts: list[pa.Table] = []

    def add(
        self,
        code: str,
        at: np.ndarray,
        message: str | list[str] | pa.Array,
        **evidence: Any,
    ) -> None:
        """Findings of `code` for the batch positions `at` (ascending); one `message` for all
        or one each; evidence columns by name, one value per position."""
        at = np.asarray(at, dtype=np.int64)
        k = len(at)
        if k == 0:
            return
        unknown = evidence.keys() - EVIDENCE.keys()
        if unknown:
            raise ValueError(f"unknown evidence columns: {sorted(unknown)}")
        columns: dict[str, Any] = {"row": pa.array(self.rows[at])}
        if self.ids is not None:
            columns["id"] = self.ids.take(pa.array(at))
        codes = pa.array(np.full(k, _CODE_INDEX[code], np.int8))
        levels = pa.array(np.full(k, _LEVEL_INDEX[CODES[code]], np.int8))
        columns["code"] = pa.DictionaryArray.from_arrays(codes, _CODE_NAMES)
        columns["level"] = pa.DictionaryArray.from_arrays(levels, _LEVEL_NAMES)
        if isinstance(message, str):
            message = pa.array([message] * k, pa.string())
        columns["message"] = message
        for name, kind in EVIDENCE.items():
            value = evidence.get(name)
            columns[name] = pa.nulls(k, kind) if value is None else value
        self._parts.append(pa.Table.from_pydict(columns, schema=self.schema))

    def table(self) -> pa.Table:
        """Every finding added, sorted by row (a row's findings in the order of `CODES`,
        whatever the order they were added in), as one chunk."""
        if not self._parts:
            return self.schema.empty_table()
        return sort_findings(pa.concat_tables(self._parts))


def sort_findings(table: pa.Table) -> pa.Table:
    """Findings sorted by row, a row's findings in the order of `CODES`, as one chunk."""
    code_order = table.column("code").combine_chunks().indices.to_numpy()
    order = np.lexsort((code_order, table.column("row").to_numpy()))
    return table.take(pa.array(order)).combine_chunks()


def level_counts(findings: pa.Table) -> dict[str, int]:
    """Findings per level, every level named (0 when none)."""
    indices = findings.column("level").combine_chunks().indices.to_numpy()
    counts = np.bincount(indices, minlength=len(LEVELS))
    return {level: int(counts[i]) for i, level in enumerate(LEVELS)}


def code_counts(findings: pa.Table) -> dict[str, int]:
    """Findings per code, every code named (0 when none)."""
    indices = findings.column("code").combine_chunks().indices.to_numpy()
    counts = np.bincount(indices, minlength=len(CODES))
    return {code: int(counts[i]) for i, code in enumerate(CODES)}


def check_rows(
    batch: pa.RecordBatch, max_nodes: int | None = None, minimal: bool = False
) -> tuple[pa.Table, ParsedGrids]:
    """The row checks of one batch (columns `row`, `puzzle`, optional `id` and `solution`):
    its findings table, and the parsed puzzles for the dataset-wide checks."""
    from pipeline.solver import find_two_solutions

    rows = batch.column(batch.schema.get_field_index("row")).to_numpy()
    ids = _column(batch, "id")
    parsed = parse_puzzles(batch.column(batch.schema.get_field_index("puzzle")))
    found, seconds = find_two_solutions(parsed.grids, max_nodes, skip=~parsed.ok)
    verdicts = found.verdicts
    out = FindingsBuilder(rows, ids)

    malformed = np.flatnonzero(~parsed.ok)
    out.add("malformed", malformed, parsed.errors.take(pa.array(malformed)))
    _clashes(out, parsed.grids, np.flatnonzero(verdicts == codes.INVALID))
    unsolvable = np.flatnonzero(verdicts == codes.UNSOLVABLE)
    out.add(
        "unsolvable", unsolvable, "no solution: the givens do not clash, but no grid completes them"
    )
    _multiple(out, found.solutions, seconds, np.flatnonzero(verdicts == codes.MULTIPLE))
    clues = clue_counts(parsed.grids)
    few = np.flatnonzero(parsed.ok & (clues < MIN_UNIQUE_CLUES))
    out.add("few_clues", few, [f"{c} givens: no puzzle with fewer than 17 has a unique solution"
                               for c in clues[few].tolist()])  # fmt: skip
    budget = f"{max_nodes:,}" if max_nodes is not None else "?"
    out.add("limit", np.flatnonzero(verdicts == codes.LIMIT),
            f"the node budget of {budget} ran out before uniqueness was decided")  # fmt: skip
    expected = _column(batch, "solution")
    if expected is not None:
        _wrong_solutions(out, parsed, found.solutions, verdicts == codes.SOLVED, expected)
    if minimal:
        _not_minimal(out, parsed.grids, np.flatnonzero(verdicts == codes.SOLVED), max_nodes)
    return out.table(), parsed


def _column(batch: pa.RecordBatch, name: str) -> pa.Array | None:
    index = batch.schema.get_field_index(name)
    return None if index < 0 else batch.column(index)


def _clashes(out: FindingsBuilder, grids: np.ndarray, at: np.ndarray) -> None:
    from pipeline.solver.checks import first_clash

    if not len(at):
        return
    clash = first_clash(grids[at])
    pairs = np.stack([clash.cell_a, clash.cell_b], axis=1).astype(np.int8)
    offsets = pa.array(np.arange(0, 2 * len(at) + 1, 2, dtype=np.int32))
    cells = pa.ListArray.from_arrays(offsets, pa.array(pairs.ravel()))
    out.add("clash", at, clash_messages(grids[at]), cells=cells)


def _multiple(out: FindingsBuilder, first: np.ndarray, second: np.ndarray, at: np.ndarray) -> None:
    differ = np.count_nonzero(first[at] != second[at], axis=1)
    messages = [f"not unique: two solutions (solution_a, solution_b) differ at {d} cells"
                for d in differ.tolist()]  # fmt: skip
    out.add("multiple", at, messages, solution_a=format_grids(first[at]),
            solution_b=format_grids(second[at]))  # fmt: skip


def _wrong_solutions(
    out: FindingsBuilder,
    parsed: ParsedGrids,
    found: np.ndarray,
    unique: np.ndarray,
    expected: pa.Array,
) -> None:
    """`wrong_solution` where the solution column is present and not a valid full grid, changes
    a given, or (for a unique puzzle) differs from the solution found."""
    from pipeline.solver.checks import givens_valid

    present = ~expected.is_null().to_numpy(zero_copy_only=False)
    column = parse_puzzles(expected)
    blanks = np.count_nonzero(column.grids == 0, axis=1)
    valid = column.ok & (blanks == 0) & givens_valid(column.grids)
    given = parsed.grids != 0
    changed = parsed.ok[:, None] & given & (column.grids != 0) & (parsed.grids != column.grids)
    differs = unique[:, None] & (found != column.grids)
    wrong = present & (~valid | changed.any(axis=1) | differs.any(axis=1))
    at = np.flatnonzero(wrong)
    if not len(at):
        return
    full = column.ok & (blanks == 0)
    clashes = dict(zip(at[full[at]].tolist(), clash_messages(column.grids[at[full[at]]]),
                       strict=True))  # fmt: skip
    messages = []
    for i in at.tolist():
        clauses = []
        if not column.ok[i]:
            clauses.append(f"is not a grid ({column.errors[i].as_py()})")
        elif blanks[i]:
            clauses.append(f"is not a full grid ({_count(blanks[i], 'blank cell')})")
        elif not valid[i]:
            clauses.append(f"is not a valid grid ({clashes[i]})")
        cells = np.flatnonzero(changed[i])
        if len(cells):
            c = int(cells[0])
            more = f" (and {_count(len(cells) - 1, 'more given')})" if len(cells) > 1 else ""
            clauses.append(f"changes the given {parsed.grids[i, c]} at {cell_name(c)} to "
                           f"{column.grids[i, c]}{more}")  # fmt: skip
        if unique[i]:
            clauses.append(
                f"differs from the unique solution at {_count(differs[i].sum(), 'cell')}"
            )
        if len(clauses) > 1:
            clauses[-1] = "and " + clauses[-1]
        listed = (", " if len(clauses) > 2 else " ").join(clauses)
        messages.append(f"the solution column {listed}")
    cells = np.where(changed[at].any(axis=1)[:, None], changed[at], differs[at])
    solved = unique[at]
    out.add("wrong_solution", at, messages, cells=cell_lists(cells),
            unique_solution=format_grids(found[at], mask=solved),
            column_solution=expected.take(pa.array(at)).cast(pa.string()))  # fmt: skip


def _not_minimal(
    out: FindingsBuilder, grids: np.ndarray, at: np.ndarray, max_nodes: int | None
) -> None:
    removable, undecided = removable_givens(grids[at], max_nodes)
    some = removable.any(axis=1)
    hits = at[some]
    messages = []
    for i, cells in zip(hits.tolist(), removable[some], strict=True):
        names = [f"{grids[i, c]} at {cell_name(c)}" for c in np.flatnonzero(cells).tolist()]
        givens = int(np.count_nonzero(grids[i]))
        messages.append(f"not minimal: {len(names)} of {givens} givens can each be removed with "
                        f"the solution staying unique: {', '.join(names)}")  # fmt: skip
    out.add("not_minimal", hits, messages, cells=cell_lists(removable[some]))
    budget = f"{max_nodes:,}" if max_nodes is not None else "?"
    out.add("limit", at[undecided & ~some],
            f"the node budget of {budget} ran out before minimality was decided")  # fmt: skip


def duplicate_findings(
    rows: np.ndarray,
    first_rows: np.ndarray,
    ids: pa.Array | None = None,
    first_ids: pa.Array | None = None,
) -> pa.Table:
    """`duplicate` findings: each of `rows` repeats the puzzle of the row in `first_rows`
    (with that row's id in the message when the input has ids)."""
    out = FindingsBuilder(rows, ids)
    message = pc.binary_join_element_wise(
        "same puzzle as row ", pa.array(first_rows).cast(pa.string()), ""
    )
    if first_ids is not None:
        first_ids = first_ids.cast(pa.string()).fill_null("null")
        message = pc.binary_join_element_wise(message, " (id ", first_ids, ")", "")
    out.add("duplicate", np.arange(len(rows)), message, first_row=pa.array(first_rows))
    return out.table()
