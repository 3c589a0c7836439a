"""The result schema: one Arrow table per batch, one row per input row, in input order.

| column | type | meaning |
|---|---|---|
| row | int64 | 0-based position in the input |
| id | passthrough | the input's id column, when it has one |
| puzzle | string | the puzzle as read: 81 chars with `.` blanks when parseable, else the raw text |
| verdict | dictionary<int8, string> | solved, multiple, unsolvable, invalid, limit, malformed |
| solution | string | the solution found (the first one for `multiple`), else null |
| clues | int8 | number of givens; null for malformed rows |
| nodes | int64 | search nodes (see `pipeline.solver`); 0 when no search ran |
| guesses | int64 | guesses; 0 when no search ran |
| solve_ns | int64 | kernel time for this puzzle; 0 when no search ran |
| expected_ok | bool | the input's solution agrees with the solution found; null without one |
| error | string | why a row is malformed or invalid; null otherwise |
"""

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.grid import ParsedGrids, clue_counts, format_grids, parse_puzzles
from pipeline.solver import KernelResults, codes

VERDICT_TYPE = pa.dictionary(pa.int8(), pa.string())
_VERDICTS = pa.array(codes.VERDICT_NAMES, type=pa.string())
_UNIT_NAMES = ("row", "column", "box")


def result_schema(id_type: pa.DataType | None = None) -> pa.Schema:
    """The result schema; with an `id` column of `id_type` when the input has ids."""
    fields = [pa.field("row", pa.int64(), nullable=False)]
    if id_type is not None:
        fields.append(pa.field("id", id_type))
    fields += [
        pa.field("puzzle", pa.string()),
        pa.field("verdict", VERDICT_TYPE, nullable=False),
        pa.field("solution", pa.string()),
        pa.field("clues", pa.int8()),
        pa.field("nodes", pa.int64(), nullable=False),
        pa.field("guesses", pa.int64(), nullable=False),
        pa.field("solve_ns", pa.int64(), nullable=False),
        pa.field("expected_ok", pa.bool_()),
        pa.field("error", pa.string()),
    ]
    return pa.schema(fields)


def clash_messages(grids: np.ndarray) -> list[str | None]:
    """One sentence per grid naming its first clash ("row 1 repeats 5 at columns 1 and 3"),
    None where the givens do not clash. Numbers are 1-based, as people count rows."""
    from pipeline.solver.checks import first_clash  # numba: loaded where kernels run

    clashes = first_clash(grids)
    messages: list[str | None] = []
    for kind, unit, digit, a, b in zip(*(c.tolist() for c in clashes), strict=True):
        if kind < 0:
            messages.append(None)
        elif kind == 0:
            messages.append(
                f"row {unit + 1} repeats {digit} at columns {a % 9 + 1} and {b % 9 + 1}"
            )
        elif kind == 1:
            messages.append(
                f"column {unit + 1} repeats {digit} at rows {a // 9 + 1} and {b // 9 + 1}"
            )
        elif kind == 2:
            messages.append(
                f"box {unit + 1} repeats {digit} at cells r{a // 9 + 1}c{a % 9 + 1} "
                f"and r{b // 9 + 1}c{b % 9 + 1}"
            )
        else:
            messages.append(f"cell {a + 1} holds {digit}, not a digit")
    return messages


def build_results(
    rows: pa.Array,
    raw_puzzles: pa.Array,
    parsed: ParsedGrids,
    found: KernelResults,
    ids: pa.Array | None = None,
    expected: pa.Array | None = None,
) -> pa.Table:
    """Assemble one batch's result table from the parsed input and the kernel's outputs."""
    ok = parsed.ok
    verdicts = found.verdicts
    has_solution = (verdicts == codes.SOLVED) | (verdicts == codes.MULTIPLE)
    has_solution |= (verdicts == codes.LIMIT) & (found.solutions[:, 0] != 0)
    puzzles = pc.if_else(pa.array(ok), format_grids(parsed.grids), raw_puzzles.cast(pa.string()))
    solutions = format_grids(found.solutions, mask=has_solution)

    errors = parsed.errors
    invalid = np.flatnonzero(verdicts == codes.INVALID)
    if invalid.size:
        messages = errors.to_pylist()
        for i, message in zip(invalid.tolist(), clash_messages(parsed.grids[invalid]), strict=True):
            messages[i] = message
        errors = pa.array(messages, type=pa.string())

    if expected is None:
        expected_ok = pa.nulls(len(ok), pa.bool_())
    else:
        wanted = parse_puzzles(expected)
        agrees = has_solution & wanted.ok & (wanted.grids == found.solutions).all(axis=1)
        missing = expected.is_null().to_numpy(zero_copy_only=False)
        expected_ok = pa.array(agrees, mask=missing)

    columns = {"row": rows.cast(pa.int64())}
    if ids is not None:
        columns["id"] = ids
    columns |= {
        "puzzle": puzzles,
        "verdict": pa.DictionaryArray.from_arrays(pa.array(verdicts, pa.int8()), _VERDICTS),
        "solution": solutions,
        "clues": pa.array(clue_counts(parsed.grids), mask=~ok),
        "nodes": pa.array(found.nodes),
        "guesses": pa.array(found.guesses),
        "solve_ns": pa.array(found.solve_ns),
        "expected_ok": expected_ok,
        "error": errors,
    }
    schema = result_schema(None if ids is None else ids.type)
    return pa.Table.from_pydict(columns, schema=schema)


def empty_results(id_type: pa.DataType | None = None) -> pa.Table:
    """A table with the full result schema and no rows (for an empty input)."""
    return result_schema(id_type).empty_table()
