"""The findings catalogue: every code validation can report, as data, and the findings table.

A finding names the row, a code, a level and a sentence for people; evidence columns carry what
a program needs to act on it. `CATALOGUE` lists the codes in the order a row's findings are
listed, each with its level, a title, what it says of the row, and the template of its message;
the README's table of codes is made from it (`make docs`), and a test holds `validate --help`'s
list of codes to it (the help is written out: the command line starts without pyarrow).

Errors are rows that are not what a puzzle corpus claims (validate exits 1 on them). A
duplicate is a warning: each copy is a correct puzzle, the corpus is only redundant; a
leak (a puzzle of the training inputs, `--against`) is an error: the split does not hold. A row
stopped by the budget is undecided, not wrong. `few_clues` only explains another finding.

Evidence columns (null where they do not apply): `cells` (0-based cells, row-major: the two
clashing givens; the givens a solution column changes, or else where it differs from the unique
solution; the removable givens), `first_row` (of a duplicate), `solution_a` and `solution_b`
(two different solutions of a `multiple` row), `unique_solution` and `column_solution` (the
solution found and the one the input's solution column holds, for `wrong_solution`).
"""

import tomllib
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from pipeline.results.schema import enum_array, enum_field, row_fields

LEVELS: tuple[str, ...] = ("error", "warning", "info")  # "error" first: index 0


@dataclass(frozen=True)
class FindingCode:
    """One kind of finding: its code, level, a title, what it says of the row (completing "the
    row ..."), and its message template (`str.format` fields filled by the check)."""

    code: str
    level: str
    title: str
    description: str
    message: str


# The codes as data, in the order a row's findings are listed (TOML: a table a code; a `\` at
# the end of a line inside a """ string joins the next line to it, leading spaces dropped).
_CATALOGUE_TOML = r'''
[malformed]
level = "error"
title = "Not a puzzle"
description = """is not an 81-cell puzzle (nor a 729-character pencilmark one): missing, \
wrong length, a stray character"""
message = "{reason}"

[clash]
level = "error"
title = "Clashing givens"
description = "has givens that repeat a digit in a row, column or box"
message = "{where}"

[unsolvable]
level = "error"
title = "No solution"
description = "has consistent givens that no grid completes"
message = "no solution: the givens do not clash, but no grid completes them"

[multiple]
level = "error"
title = "Several solutions"
description = "has two or more solutions (two of them as evidence)"
message = "not unique: two solutions (solution_a, solution_b) differ at {cells} cells"

[few_clues]
level = "info"
title = "Too few givens"
description = """has fewer than 17 givens: never a unique solution (why it is `multiple`; \
not checked for pencilmark puzzles)"""
message = "{clues} givens: no puzzle with fewer than 17 has a unique solution"

[limit]
level = "warning"
title = "Undecided"
description = "spent the node budget before uniqueness (or minimality) was decided"
message = "the node budget of {budget} ran out before {what} was decided"

[wrong_solution]
level = "error"
title = "Wrong solution column"
description = """has a solution column that is not a valid full grid, changes a given, or \
    differs from the unique solution"""
message = "the solution column {problems}"

[not_minimal]
level = "warning"
title = "Not minimal"
description = "(`--minimal`) has givens that can each go, the solution staying unique"
message = """not minimal: {count} of {givens} givens can each be removed with the solution \
    staying unique: {cells}"""

[duplicate]
level = "warning"
title = "Duplicate"
description = "is the same puzzle as an earlier row (compared after parsing)"
message = "same puzzle as row {first_row}"

[symmetry_duplicate]
level = "warning"
title = "Duplicate up to symmetry"
description = """is an earlier row's puzzle in disguise (relabelled digits, rows or columns \
    swapped, transposed: the same canonical form)"""
message = "same puzzle up to symmetry as row {first_row}"

[leak]
level = "error"
title = "Leak"
description = """(`--against TRAIN`) is a puzzle of TRAIN, exactly or in disguise (relabelled \
    digits, rows, bands, columns or stacks permuted, transposed: the same canonical form); \
    `train_input`, `train_row` and `exact` say which row of which TRAIN input it copies"""
message = "copies row {train_row} of {train_input}{train_id} {how}"
'''
CATALOGUE: tuple[FindingCode, ...] = tuple(
    FindingCode(code, **fields) for code, fields in tomllib.loads(_CATALOGUE_TOML).items()
)
BY_CODE: dict[str, FindingCode] = {c.code: c for c in CATALOGUE}
CODES: dict[str, str] = {c.code: c.level for c in CATALOGUE}  # code -> level, in order


def message(code: str, **fields: Any) -> str:
    """The message of a finding of `code`, its template filled with `fields`."""
    return BY_CODE[code].message.format(**fields)


# Enums (`results.schema.enum_field`): polars reads them back from Parquet in this order, so
# sorting by `level` puts errors first, and by `code` a row's findings as they are listed.
CODE_FIELD = enum_field("code", list(CODES), nullable=False)
LEVEL_FIELD = enum_field("level", LEVELS, nullable=False)
_CODE_INDEX = {code: i for i, code in enumerate(CODES)}
_LEVEL_INDEX = {level: i for i, level in enumerate(LEVELS)}
EVIDENCE: dict[str, pa.DataType] = {
    "cells": pa.list_(pa.int8()),
    "first_row": pa.int64(),
    "solution_a": pa.string(),
    "solution_b": pa.string(),
    "unique_solution": pa.string(),
    "column_solution": pa.string(),
    "train_input": pa.string(),
    "train_row": pa.int64(),
    "exact": pa.bool_(),
}


def findings_schema(id_type: pa.DataType | None = None) -> pa.Schema:
    """The findings schema; with an `id` column of `id_type` when the input has ids."""
    fields = row_fields(id_type) + [
        CODE_FIELD,
        LEVEL_FIELD,
        pa.field("message", pa.string(), nullable=False),
    ]
    fields += [pa.field(name, kind) for name, kind in EVIDENCE.items()]
    return pa.schema(fields)


def cell_name(cell: int) -> str:
    """A 0-based cell as people name it: 0 -> `r1c1`, 80 -> `r9c9`."""
    return f"r{cell // 9 + 1}c{cell % 9 + 1}"


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
        columns["code"] = enum_array(codes, CODE_FIELD)
        columns["level"] = enum_array(levels, LEVEL_FIELD)
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
