"""Which input columns matter: the puzzle, solution and id columns, a header or not, the id's
type, and the other columns that pass through to the results under a name that does not clash.

Everything is decided from a sample of the first rows (`SAMPLE_ROWS`), by name first and by
content second; overrides (`--column`, ...) win. When in doubt: no header, so no row is lost.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import pyarrow as pa

from pipeline.errors import InputError

PUZZLE_NAMES = ("puzzle", "puzzles", "quizzes", "quiz", "board", "grid", "sudoku")
SOLUTION_NAMES = ("solution", "solutions")
ID_NAMES = ("id",)
# a model's answers (`score`): the first column so named that is not the puzzle or id column
PREDICTION_NAMES = ("prediction", "predictions", "predicted", "output", "answer", "answers")
SAMPLE_ROWS = 1000  # rows looked at to detect a header and the puzzle/solution columns
MATCH_SHARE = 0.9  # share of non-null sample values that must look right ("a few bad rows")
# The names of the result schema (`pipeline.results.schema.COLUMNS`; a test checks they agree):
# an input column passed through under one of them gets the prefix `input_`.
RESERVED_NAMES = frozenset(
    (
        "row",
        "id",
        "puzzle",
        "verdict",
        "solution",
        "clues",
        "nodes",
        "guesses",
        "solve_ns",
        "expected_ok",
        "error",
    )
)
RENAME_PREFIX = "input_"
# 81 cells, or a pencilmark puzzle's 729 characters (`pipeline.pencilmarks`)
_PUZZLE = re.compile(r"[.0-9]{81}|[.0-9]{729}")
_GRID = re.compile(r"[1-9]{81}")
# A puzzle stored as a number, its leading zeros (blanks) lost: 17 givens at least, 80 digits
# at most. Its rows are malformed ("expected 81 cells"), but it is the puzzle column.
_NUMERIC_PUZZLE = re.compile(r"[1-9][0-9]{16,79}")
_NUMBER = re.compile(r"[-+]?[0-9]+(\.[0-9]*)?")
_INTEGER = re.compile(r"-?(0|[1-9][0-9]{0,17})")  # canonical, and well within int64
_NAME = re.compile(r"[A-Za-z_][\w .-]{0,63}")
_LABEL = re.compile(r"[^\W\d][^\x00-\x1f]{0,63}")  # a column name: a letter first, short


class NoPuzzleColumn(InputError):
    """No column holds puzzles or is named as one (a CSV read with the wrong separator, say)."""


def pick_columns(
    name: str,
    names: list[str],
    sample: dict[str, list],
    column: str | None,
    solution_column: str | None,
    id_column: str | None,
    *,
    headerless: bool = False,
    has_rows: bool | None = None,
) -> dict[str, str | None]:
    """The puzzle, solution and id columns: overrides, else by name, else by content.

    The puzzle column by content is the first whose sample values look like puzzles with
    blanks, else the first of puzzles stored as numbers (leading zeros lost), else the first of
    full grids. The solution column by content (header-less files only) is the first other
    column of full grids, after the puzzle column or else before it.
    """
    if has_rows is None:
        has_rows = any(sample.get(n) for n in names)
    puzzle = _named(name, names, column) if column else _by_name(names, PUZZLE_NAMES)
    if puzzle is not None and not column and _no_puzzle_in(sample.get(puzzle, [])):
        # named so, but not one puzzle in it (labels under `sudoku`): a column holding puzzles
        # (not a named solution or id column) is the puzzle column, the named one passes
        other = [n for n in names if n != puzzle and n not in _by_names(names)]
        puzzle = _puzzle_by_content(other, sample, grids=False) or puzzle
    if puzzle is None:
        puzzle = _puzzle_by_content(names, sample)
    if puzzle is None and headerless:
        # a first line that names the puzzle column but was read as a row (a header merged
        # with a row by a lost line break holds a puzzle, so it is data): its column, whose
        # rows come out malformed where they are damaged, instead of the file refused
        puzzle = next(
            (
                n
                for n in names
                if sample.get(n) and _text(sample[n][0]).strip().lower() in PUZZLE_NAMES
            ),
            None,
        )
    if puzzle is None:
        if has_rows:
            raise NoPuzzleColumn(
                f"{name}: no puzzle column found (none named {', '.join(PUZZLE_NAMES)}, none "
                "holding 81-character puzzles or 729-character pencilmarks); columns are: "
                f"{', '.join(names) or '(none)'}"
            )
        puzzle = names[0]  # no rows to look at: any column will do
    if solution_column:
        solution = _named(name, names, solution_column)
    else:
        others = [n for n in names if n != puzzle]
        solution = _by_name(others, SOLUTION_NAMES)
        if solution is None and headerless:
            at = names.index(puzzle)
            around = names[at + 1 :] + names[:at]
            solution = next((n for n in around if _mostly(sample.get(n, []), _GRID)), None)
    if id_column:
        ident = _named(name, names, id_column)
    else:  # automatic choices step aside for the ones made above
        ident = _by_name([n for n in names if n not in (puzzle, solution)], ID_NAMES)
    chosen = [c for c in (puzzle, solution, ident) if c is not None]
    if len(set(chosen)) < len(chosen):
        raise InputError(f"{name}: puzzle, solution and id columns must differ: {chosen}")
    return {"puzzle_column": puzzle, "solution_column": solution, "id_column": ident}


def prediction_column(
    name: str, names: list[str], wanted: str | None, taken: Iterable[str | None] = ()
) -> str:
    """The column of predictions (a model's answers): `wanted` when given (exactly, else
    case-insensitively), else the first column named as one (`PREDICTION_NAMES`) among those
    not `taken` (the puzzle and id columns). Raises `InputError` naming the columns."""
    if wanted:
        return _named(name, names, wanted)
    found = _by_name([n for n in names if n not in set(taken)], PREDICTION_NAMES)
    if found is None:
        raise InputError(
            f"{name}: no prediction column found (none named {', '.join(PREDICTION_NAMES)}); "
            f"name it with --prediction-column; columns are: {', '.join(names) or '(none)'}"
        )
    return found


def _puzzle_by_content(
    names: list[str], sample: dict[str, list], *, grids: bool = True
) -> str | None:
    """The first column of puzzles with blanks, else of puzzles stored as numbers, else (with
    `grids`) of full grids."""
    looks = [n for n in names if _mostly(sample.get(n, []), _PUZZLE)]
    with_blanks = [n for n in looks if not _mostly(sample.get(n, []), _GRID)]
    numeric = [n for n in names if _mostly(sample.get(n, []), _NUMERIC_PUZZLE)]
    return next(iter(with_blanks + numeric + (looks if grids else [])), None)


def _no_puzzle_in(values: list) -> bool:
    """Whether sampled `values` hold something, and not one puzzle among them."""
    texts = [t for t in (_text(v).strip() for v in values if v is not None) if t]
    puzzles = (_PUZZLE.fullmatch(t) or _NUMERIC_PUZZLE.fullmatch(t) for t in texts)
    return bool(texts) and not any(puzzles)


def _by_names(names: list[str]) -> set[str]:
    """The columns named as a solution or id column is."""
    return {n for n in names if n.strip().lower() in SOLUTION_NAMES + ID_NAMES}


def id_type_of(values: list) -> pa.DataType:
    """The type of a text id column: int64 when every sampled value is an integer written the
    plain way (no sign but `-`, no leading zero, at most 18 digits), else string. So `007`
    stays the text `007`. A later id that is no such integer becomes null: `to_ids`."""
    texts = [v for v in values if v is not None]
    if texts and all(_INTEGER.fullmatch(t) for t in texts):
        return pa.int64()
    return pa.string()


def passthrough_names(
    names: list[str], used: list[str], reserved: Iterable[str] = ()
) -> dict[str, str]:
    """The columns not in `used`, in input order, each mapped to its name in the results: its
    own, or `input_<name>` (then `input_<name>_2`, ...) when that is a result column's or one
    of `reserved` (a job's own columns: `source` when it reads several inputs)."""
    clashes = set(RESERVED_NAMES) | set(reserved)
    rest = [n for n in names if n not in used]
    taken = clashes | {n for n in rest if n not in clashes}
    out = {}
    for n in rest:
        if n in clashes:
            new, k = RENAME_PREFIX + n, 2
            while new in taken:
                new, k = f"{RENAME_PREFIX}{n}_{k}", k + 1
            taken.add(new)
            out[n] = new
        else:
            out[n] = n
    return out


def looks_like_header(rows: list[list[str]]) -> bool:
    """Whether the first row names the columns rather than holding data: only when it cannot
    be data, since a header taken for data costs one malformed row, and data taken for a
    header loses a row (and may name the wrong column the puzzles).

    * A row holding a puzzle (81 cells, or a puzzle stored as a number) is data, whatever its
      other fields hold: `sudoku,<puzzle>` is a labelled row, not a header.
    * When a column below holds puzzles, the row is a header when its field there is a label
      (starts with a letter) and no other field is a number over a column of numbers (an id).
    * Else (no puzzles below to judge by): a header when a field is a known column name
      (puzzle, solution, id, ...), or when every field is name-like (starts with a letter,
      short) over a column of numbers.
    """
    first, rest = [f.strip() for f in rows[0]], rows[1:]
    if any(_PUZZLE.fullmatch(f) or _NUMERIC_PUZZLE.fullmatch(f) for f in first):
        return False
    below = [[r[i] if i < len(r) else None for r in rest] for i in range(len(first))]
    columns = [str(i) for i in range(len(first))]
    puzzles = _puzzle_by_content(columns, dict(zip(columns, below, strict=True)))
    if puzzles is not None:
        number = [bool(_NUMBER.fullmatch(f)) for f in first]
        ids = any(n and _mostly(b, _NUMBER) for n, b in zip(number, below, strict=True))
        return bool(_LABEL.fullmatch(first[int(puzzles)])) and not ids
    if any(f.lower() in PUZZLE_NAMES + SOLUTION_NAMES + ID_NAMES for f in first):
        return True
    if not any(first) or not all(_NAME.fullmatch(f) for f in first if f):
        return False
    return any(f and _mostly(b, _NUMBER) for f, b in zip(first, below, strict=True))


def separator_of(name: str, separator: str | None, fmt: str) -> str:
    """The field delimiter: the override (`\\t` spelled out is accepted), else by format."""
    if separator is None:
        return "\t" if fmt == "tsv" else ","
    separator = {"\\t": "\t", "tab": "\t"}.get(separator, separator)
    if len(separator) != 1 or separator in '\r\n"':
        raise InputError(f"{name}: separator must be one character, not {separator!r}")
    return separator


def _named(name: str, names: list[str], wanted: str) -> str:
    """The column called `wanted` (exactly, else case-insensitively), or a `InputError`."""
    if wanted in names:
        return wanted
    folded = [n for n in names if n.lower() == wanted.lower()]
    if len(folded) == 1:
        return folded[0]
    listing = ", ".join(names) if names else "(none)"
    raise InputError(f"{name}: column '{wanted}' not found; columns are: {listing}")


def _by_name(names: list[str], aliases: tuple[str, ...]) -> str | None:
    """The first column whose name (case-insensitive) is one of `aliases`."""
    return next((n for n in names if n.strip().lower() in aliases), None)


def _mostly(values: list, pattern: re.Pattern[str]) -> bool:
    """Whether most non-null, non-blank `values` (stripped) match `pattern`."""
    texts = [_text(v).strip() for v in values if v is not None]
    texts = [t for t in texts if t]
    hits = sum(1 for t in texts if pattern.fullmatch(t))
    return bool(texts) and hits >= MATCH_SHARE * len(texts)


def _text(value: object) -> str:
    """A sample value as text (Parquet binary columns give bytes)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)
