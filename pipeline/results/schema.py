"""The result schema: one Arrow table per batch, one row per input row, in input order.

`COLUMNS` says what each column means (the README's table is made from it and from
`result_schema`); `build_results` assembles a batch's table from the parsed input and the
kernel's outputs. The input's other columns (`Dataset.extra_schema`: a `difficulty`, a `source`)
follow the schema's own, in input order.

Columns of words from a fixed list (`verdict`; `grade`, validate's `code` and `level`) are
`enum_field`s: Arrow dictionaries carrying, in their field metadata, the list in its order as
polars writes an Enum itself, so that polars reads them back from Parquet as `pl.Enum(list)`
(sorting in that order) where a plain dictionary would come back Categorical. Engines that read
them as text (DuckDB, SQL) get a number beside the one whose order matters: `grade_level`.
"""

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.grid import ParsedGrids, clue_counts, format_grids, parse_puzzles
from pipeline.kernels import KernelResults, codes

# The field metadata polars writes for an Enum (polars 1.x and 2.x) and reads back: the values
# in order, each as `<length in bytes>;<value>`.
POLARS_ENUM_KEY = b"_PL_ENUM_VALUES2"


def enum_field(name: str, values: Sequence[str], nullable: bool = True) -> pa.Field:
    """A column of `values` only, ordered as listed: an ordered Arrow dictionary (int8 codes,
    the index in `values`) that polars reads as `pl.Enum(values)`."""
    encoded = "".join(f"{len(v.encode())};{v}" for v in values)
    kind = pa.dictionary(pa.int8(), pa.string(), ordered=True)
    return pa.field(name, kind, nullable, metadata={POLARS_ENUM_KEY: encoded.encode()})


def enum_values(field: pa.Field) -> list[str] | None:
    """The values of an `enum_field` in order; None for any other field."""
    encoded = (field.metadata or {}).get(POLARS_ENUM_KEY)
    if encoded is None:
        return None
    values, at = [], 0
    while at < len(encoded):
        sep = encoded.index(b";", at)
        end = sep + 1 + int(encoded[at:sep])
        values.append(encoded[sep + 1 : end].decode())
        at = end
    return values


def enum_array(codes: np.ndarray | pa.Array, field: pa.Field) -> pa.DictionaryArray:
    """Codes (indices into the field's values; null where missing) as the field's column."""
    values = pa.array(enum_values(field), pa.string())
    return pa.DictionaryArray.from_arrays(pa.array(codes, pa.int8()), values, ordered=True)


VERDICT_FIELD = enum_field("verdict", codes.VERDICT_NAMES, nullable=False)
COLUMNS: dict[str, str] = {
    "row": "0-based position in the input",
    "id": "the input's id column, when it has one: its type kept (from CSV/TSV, int64 when "
    "every id is a plain integer, else string)",
    "puzzle": "the puzzle as read: 81 chars with `.` blanks when parseable, a pencilmark "
    "puzzle's 729 chars as they came (trimmed), else the raw text",
    "verdict": "`solved` (exactly one solution), `multiple`, `unsolvable`, `invalid` (givens "
    "clash), `malformed`, `limit` (node budget spent), `found` (a solution; uniqueness not "
    "checked: `--solutions 1`); for a solver from outside (`--solver`) also `wrong_answer` "
    "(its grid breaks a rule, changes a given or is incomplete) and `solver_error` (no answer)",
    "solution": "the solution found (the first one for `multiple` and `limit`), else null",
    "clues": "number of givens (of a pencilmark puzzle: cells with one candidate); null for "
    "malformed rows",
    "nodes": "search nodes, counted the same way by every strategy (see `pipeline.kernels`); "
    "0 when no search ran; null for a solver from outside (`--solver`)",
    "guesses": "digits placed by choice at cells with two or more candidates; 0 when no search "
    "ran; for a solver from outside its own count, null when it reports none",
    "solve_ns": "the kernel's time for this puzzle (monotonic clock, ns): a time far above what "
    "its nodes predict (a preemption on a busy machine) is measured again and the least kept; "
    "0 when no search ran",
    "expected_ok": "the input's solution agrees with the solution found; null without one",
    "error": "why a row is malformed, invalid, a `wrong_answer` or a `solver_error`; null "
    "otherwise",
    "kernel_agrees": "(`--solver` from outside) whether our `fast` kernel, counting to 2, "
    "agrees with the solver's claim (none, one, several); null where it made none",
    "solution_count": "(`--solutions N`, N > 2) solutions counted, up to N: N means N or "
    "more; for `limit`, those found before the budget ran out; null for malformed rows",
    "canonical": "(`--canonical`) the minlex form: the same string for the same puzzle in any "
    "disguise (relabelled, rows or columns swapped, transposed); null for malformed rows",
    "difficulty": "(`--rate`) mean guesses for a first solution over random symmetries of the "
    "puzzle (`--rate-samples`); null without a solution",
    "grade": "(`--rate`) the hardest technique a person needs, from `hidden_single` up the "
    "ladder to `search` (`pipeline.GRADES`)",
    "grade_level": "(`--rate`) the grade's 0-based place on that ladder, for tools that read "
    "`grade` as text (DuckDB: `ORDER BY grade_level`); null where the grade is",
    "steps": "(`--rate`) how many placements or eliminations the grade's technique made",
    "steps_by_level": "(`--rate`) placements or eliminations by each technique of the ladder",
}


def row_fields(id_type: pa.DataType | None) -> list[pa.Field]:
    """The fields every output of one row per input row starts with: `row` (0-based position
    in the input), then `id` of `id_type` when the input has ids."""
    fields = [pa.field("row", pa.int64(), nullable=False)]
    if id_type is not None:
        fields.append(pa.field("id", id_type))
    return fields


def result_schema(id_type: pa.DataType | None = None, extra: pa.Schema | None = None) -> pa.Schema:
    """The result schema; with an `id` column of `id_type` when the input has ids, and the
    input's `extra` columns (passed through) at the end."""
    fields = row_fields(id_type) + [
        pa.field("puzzle", pa.string()),
        VERDICT_FIELD,
        pa.field("solution", pa.string()),
        pa.field("clues", pa.int8()),
        pa.field("nodes", pa.int64()),  # null: a solver from outside that does not count them
        pa.field("guesses", pa.int64()),
        pa.field("solve_ns", pa.int64(), nullable=False),
        pa.field("expected_ok", pa.bool_()),
        pa.field("error", pa.string()),
    ]
    return pa.schema(fields + list(extra or []))


def build_results(
    rows: pa.Array,
    raw_puzzles: pa.Array,
    parsed: ParsedGrids,
    found: KernelResults,
    ids: pa.Array | None = None,
    expected: pa.Array | None = None,
    extra: dict[str, pa.Array] | None = None,
    extra_fields: Sequence[pa.Field] = (),
    messages: dict[int, str] | None = None,
) -> pa.Table:
    """Assemble one batch's result table from the parsed input and the kernel's outputs
    (nodes or guesses of -1: not reported, null; `messages`: the error sentences of a solver
    from outside's rows, by position);
    `extra`: columns after the schema's own (those the options add, then the input's other
    columns, passed through); `extra_fields`: the fields of those of them whose field says more
    than their type (an `enum_field`'s values)."""
    ok = parsed.ok
    verdicts = found.verdicts
    has_solution = np.isin(verdicts, (codes.SOLVED, codes.MULTIPLE, codes.FOUND))
    has_solution |= np.isin(verdicts, (codes.LIMIT, codes.WRONG_ANSWER)) & found.solutions.any(1)
    puzzles = format_grids(parsed.grids)
    as_read = ok if parsed.pencilmark is None else ok & ~parsed.pencilmark
    if not as_read.all():  # bad rows as they came, pencilmark puzzles in their own form
        raw = pc.utf8_trim_whitespace(raw_puzzles.cast(pa.string()))
        puzzles = pc.if_else(pa.array(as_read), puzzles, raw)
    solutions = format_grids(found.solutions, mask=has_solution)

    errors = parsed.errors
    invalid = np.flatnonzero(verdicts == codes.INVALID)
    if invalid.size or messages:
        sentences = errors.to_pylist()
        from pipeline.kernels.checks import clash_messages, first_clash  # numba: in workers

        clashes = clash_messages(first_clash(parsed.grids[invalid])) if invalid.size else []
        for i, message in zip(invalid.tolist(), clashes, strict=True):
            sentences[i] = message
        for i, message in (messages or {}).items():
            sentences[i] = message
        errors = pa.array(sentences, type=pa.string())

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
        "verdict": enum_array(verdicts, VERDICT_FIELD),
        "solution": solutions,
        "clues": pa.array(clue_counts(parsed.grids), mask=~ok),
        "nodes": pa.array(found.nodes, mask=found.nodes < 0),
        "guesses": pa.array(found.guesses, mask=found.guesses < 0),
        "solve_ns": pa.array(found.solve_ns),
        "expected_ok": expected_ok,
        "error": errors,
    }
    extra = extra or {}
    if clash := sorted(columns.keys() & extra.keys()):
        raise ValueError(f"extra columns clash with the result schema: {clash}")
    columns |= extra
    fields = {field.name: field for field in extra_fields}
    extra_schema = pa.schema(
        [fields.get(name) or pa.field(name, array.type) for name, array in extra.items()]
    )
    schema = result_schema(None if ids is None else ids.type, extra_schema)
    return pa.Table.from_pydict(columns, schema=schema)


def empty_results(id_type: pa.DataType | None = None, extra: pa.Schema | None = None) -> pa.Table:
    """A table with the full result schema and no rows (for an empty input)."""
    return result_schema(id_type, extra).empty_table()
