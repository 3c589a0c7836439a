"""A CSV/TSV input's layout, read from its first lines: the field separator, whether the first
line is a header, the column names, and the puzzle, solution and id columns (`columns.py`).

    layout = delimited_layout("x.csv", head, "csv", separator=None, has_header=None,
                              overrides=(None, None, None))
    layout.separator, layout.header, layout.names, layout.columns["puzzle_column"]

A separator given is used as given. Otherwise it is sniffed among `SEPARATORS` (the format's
own first: `,` for CSV, tab for TSV), as DuckDB's and Python's sniffers do, on the first rows:
the first that yields a puzzle column (a puzzle never holds any of them, so only the right
separator cuts one out of its line) and splits the lines into a steady number of fields (at
least `MATCH_SHARE` of them alike). A separator that yields a puzzle column with fields that
vary is kept only when no other does better. Without rows (a header alone), the separator that
names a puzzle column (`puzzle`, or the `--column` given) wins. When none yields a puzzle
column, the error (the format's own separator's) says what was tried and hints at
`--separator` and `--column`; a column named and not found is said as it is.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.errors import InputError
from pipeline.io.columns import (
    MATCH_SHARE,
    PUZZLE_NAMES,
    SAMPLE_ROWS,
    NoPuzzleColumn,
    looks_like_header,
    pick_columns,
    separator_of,
)
from pipeline.io.formats import head_rows
from pipeline.io.readers import unique_names

SEPARATORS = (",", ";", "|", "\t")  # tried in this order, the format's own first
SHOWN = {"\t": "tab"}


@dataclass(frozen=True)
class Layout:
    """How a delimited text is laid out, from its first rows."""

    separator: str
    header: bool  # the first line names the columns
    names: list[str]  # the columns (`column_0`, ... without a header)
    sample: dict[str, list]  # the first values of each column, below the header
    columns: dict[str, str | None]  # puzzle_column, solution_column, id_column
    steady: bool  # the lines split into the same number of fields (most of them)


def delimited_layout(
    name: str,
    head: bytes,
    fmt: str,
    separator: str | None,
    has_header: bool | None,
    overrides: tuple[str | None, str | None, str | None],
) -> Layout | None:
    """The layout of the delimited text whose first lines are `head` (see the module
    docstring); None when the head holds no line at all. Raises `InputError`."""
    if not head_rows(head, ",", 1):
        return None
    if separator is not None:
        chosen = separator_of(name, separator, fmt)
        try:
            return _layout(name, head, chosen, has_header, overrides)
        except NoPuzzleColumn as e:
            raise InputError(
                f"{e} (separator {chosen!r}); --column names the puzzle "
                "column, --separator another separator"
            ) from None
    own = separator_of(name, None, fmt)
    candidates = (own, *(s for s in SEPARATORS if s != own))
    first_error: InputError | None = None
    unsteady: Layout | None = None
    for candidate in candidates:
        try:
            layout = _layout(name, head, candidate, has_header, overrides)
        except InputError as e:
            first_error = first_error or e
            continue
        if not _found(layout, overrides):
            continue
        if layout.steady:
            return layout
        unsteady = unsteady or layout
    if unsteady is not None:
        return unsteady
    if first_error is None:  # no rows under any: the format's own separator, as ever
        return _layout(name, head, own, has_header, overrides)
    if not isinstance(first_error, NoPuzzleColumn):  # a column named is missing: it says so
        raise first_error
    tried = " ".join(_shown(s) for s in SEPARATORS)
    raise InputError(
        f"{first_error}; tried the separators {tried}: give --separator, or "
        "--column to name the puzzle column"
    ) from None


def _layout(
    name: str,
    head: bytes,
    separator: str,
    has_header: bool | None,
    overrides: tuple[str | None, str | None, str | None],
) -> Layout:
    """The layout with `separator`; `InputError` when no puzzle column (or a column named in
    `overrides`) is there."""
    rows = head_rows(head, separator, SAMPLE_ROWS + 1)
    widths = [len(r) for r in rows]
    width = max(set(widths), key=lambda w: (widths.count(w), w))
    steady = widths.count(width) >= MATCH_SHARE * len(widths)
    header = looks_like_header(rows) if has_header is None else has_header
    if header:
        names = unique_names([n.strip() or f"column_{i}" for i, n in enumerate(rows[0])])
        rows = rows[1:]
    else:
        names = [f"column_{i}" for i in range(width)]
    sample = {
        n: [(r[i] or None) if i < len(r) else None for r in rows] for i, n in enumerate(names)
    }
    columns = pick_columns(name, names, sample, *overrides, headerless=not header)
    return Layout(separator, header, names, sample, columns, steady)


def _found(layout: Layout, overrides: tuple[str | None, ...]) -> bool:
    """Whether the puzzle column was found, not taken for want of rows to look at: with rows
    it was (else `pick_columns` raised); without, only a name says so."""
    if any(values for values in layout.sample.values()):
        return True
    puzzle = (layout.columns["puzzle_column"] or "").strip().lower()
    return overrides[0] is not None or puzzle in PUZZLE_NAMES


def _shown(separator: str) -> str:
    return SHOWN.get(separator, separator)
