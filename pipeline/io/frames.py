"""Puzzles held in memory, read the way a file is read: one record batch with the columns a
file's batches have (`row`, [`id`], `puzzle`, [`solution`]), for `solve_batch` and
`validate_puzzles`; and which columns of a DataFrame or LazyFrame are which.

    batch = puzzle_batch(["53..7....6..195...", ...])              # row, puzzle
    batch = puzzle_batch(pl.read_csv("kaggle.csv"))                # row, [id], puzzle, [solution]
    named = frame_columns(pl.scan_csv("kaggle.csv"))               # {"column": "quizzes", ...}
    kept = passed_columns(frame.columns, named)                    # the others, as solve names them

A column of puzzles is a list (or any iterable) of strings and None, a polars Series, a pyarrow
array of strings, a numpy array of strings, or an `(n, 81)` numpy array of ints 0-9 (0 for
blanks). A polars DataFrame or a pyarrow Table has its puzzle, solution and id columns found as
`open_dataset` finds a file's (`pick_columns`): by name, else the puzzle column by content, or
named with `column=`, `solution_column=`, `id_column=`. A LazyFrame's are found by name from its
schema; by content only when no name says, from its first rows (which runs its query that far).

What is not a column of puzzles at all (one str, numbers in a list) is a TypeError; a column
that cannot be read as puzzles (cells outside 0-9, a missing column) a ValueError. A row that
is not a puzzle is no error here: it is the row's verdict (`malformed`) later; so is a missing
puzzle, None or NaN (what pandas holds for one). A DataFrame without columns or rows gives no
rows.
"""

from collections.abc import Callable, Iterable
from typing import Any, Concatenate, ParamSpec, Protocol, TypeAlias, TypedDict, cast, overload

import numpy as np
import polars as pl
import pyarrow as pa

from pipeline.errors import InputError
from pipeline.grid import CELLS, PuzzleColumn, format_grids
from pipeline.io.columns import SAMPLE_ROWS, passthrough_names
from pipeline.io.opening import pick_columns

PuzzleInput: TypeAlias = PuzzleColumn | pl.DataFrame | pa.Table
_COLUMN_KINDS = (
    "a list of puzzle strings, a polars Series or DataFrame, a pyarrow array or Table, or an "
    "(n, 81) numpy array of ints 0-9"
)
_TEXT_TYPES = (pl.String, pl.Categorical, pl.Enum, pl.Null)


_Options = ParamSpec("_Options")


class FrameTwin(Protocol[_Options]):
    """What a job's DataFrame twin is to a type checker: a LazyFrame in gives a LazyFrame (its
    rows worked when collected), any other puzzles a DataFrame; the other arguments are the
    twin's own."""

    @overload
    def __call__(
        self, puzzles: pl.LazyFrame, /, *args: _Options.args, **kwargs: _Options.kwargs
    ) -> pl.LazyFrame: ...

    @overload
    def __call__(
        self, puzzles: PuzzleInput, /, *args: _Options.args, **kwargs: _Options.kwargs
    ) -> pl.DataFrame: ...


def frame_twin(
    twin: Callable[Concatenate[Any, _Options], pl.DataFrame | pl.LazyFrame],
) -> FrameTwin[_Options]:
    """Declare `twin` (puzzles first, a DataFrame or LazyFrame out) a `FrameTwin`: the typing
    of both ways written once, instead of two `@overload`s beside each twin. At run time
    `twin` itself, unchanged."""
    return cast(FrameTwin[_Options], twin)


class ColumnNames(TypedDict, total=False):
    """The columns of a DataFrame (or Table) of puzzles, named (`puzzle_batch`'s keywords)."""

    column: str | None
    solution_column: str | None
    id_column: str | None


def puzzle_batch(
    puzzles: PuzzleInput,
    *,
    column: str | None = None,
    solution_column: str | None = None,
    id_column: str | None = None,
    solutions: PuzzleColumn | None = None,
) -> pa.RecordBatch:
    """`puzzles` as one record batch: `row` (0-based position), `id` (a DataFrame's id column,
    its type kept), `puzzle` (strings), `solution` (a DataFrame's solution column, or
    `solutions`: one string or None per puzzle).

    `column`, `solution_column` and `id_column` name a DataFrame's (or Table's) columns.
    """
    if isinstance(puzzles, pa.Table):
        puzzles = pl.from_arrow(puzzles)  # type: ignore[assignment]
    named = ColumnNames(column=column, solution_column=solution_column, id_column=id_column)
    arrays: dict[str, pa.Array] = {}
    if isinstance(puzzles, pl.DataFrame):
        if solutions is not None:
            raise ValueError("a DataFrame's solutions are a column: name it with solution_column=")
        arrays = _frame_arrays(puzzles, frame_columns(puzzles, **named))
    else:
        no_column_names(puzzles, named)
        arrays["puzzle"] = puzzle_strings(puzzles)
        if solutions is not None:
            arrays["solution"] = puzzle_strings(solutions)
            if len(arrays["solution"]) != len(arrays["puzzle"]):
                raise ValueError(
                    f"{len(arrays['puzzle'])} puzzles but {len(arrays['solution'])} solutions"
                )
    rows = pa.array(np.arange(len(arrays["puzzle"]), dtype=np.int64))
    order = [name for name in ("id", "puzzle", "solution") if name in arrays]
    return pa.RecordBatch.from_arrays(
        [rows, *(arrays[name] for name in order)], names=["row", *order]
    )


def no_column_names(puzzles: object, named: ColumnNames) -> None:
    """ValueError when columns are named (`column=`, ...) for what is not a DataFrame."""
    for option, value in named.items():
        if value is not None:
            raise ValueError(
                f"{option}= names a column of a DataFrame; got {type(puzzles).__name__}"
            )


def puzzle_strings(puzzles: PuzzleColumn) -> pa.Array:
    """A column of puzzles as one pyarrow string array (ints formatted, `.` for blanks)."""
    if isinstance(puzzles, pl.LazyFrame | pl.DataFrame):  # `.columns` of a LazyFrame warns
        raise TypeError(
            f"expected a column of puzzles ({_COLUMN_KINDS}), got a {type(puzzles).__name__}: "
            "pick its column, frame['puzzle']"
        )
    if isinstance(puzzles, str):
        raise TypeError(
            f"expected a column of puzzles ({_COLUMN_KINDS}), got one str: pass a list, "
            "[puzzle]; or call pipeline.solve(puzzle) for one board"
        )
    if isinstance(puzzles, bytes | bytearray):
        raise TypeError(f"expected a column of puzzles ({_COLUMN_KINDS}), got bytes")
    if isinstance(puzzles, np.ndarray):
        return _array_strings(puzzles)
    if isinstance(puzzles, pl.Series):
        if not isinstance(puzzles.dtype, _TEXT_TYPES):
            raise TypeError(f"expected a column of puzzle strings, got a column of {puzzles.dtype}")
        puzzles = puzzles.cast(pl.String).to_arrow()
    if isinstance(puzzles, pa.ChunkedArray):
        puzzles = puzzles.combine_chunks()
    if isinstance(puzzles, pa.Array):
        kind = puzzles.type.value_type if pa.types.is_dictionary(puzzles.type) else puzzles.type
        if not (
            pa.types.is_string(kind)
            or pa.types.is_large_string(kind)
            or pa.types.is_string_view(kind)
            or pa.types.is_null(kind)
        ):
            raise TypeError(f"expected a column of puzzle strings, got a column of {puzzles.type}")
        return puzzles.cast(pa.string())
    if hasattr(puzzles, "columns") or not isinstance(puzzles, Iterable):
        hint = "; convert it with polars.from_pandas(df)" if hasattr(puzzles, "iloc") else ""
        raise TypeError(
            f"expected a column of puzzles ({_COLUMN_KINDS}), got an object of type "
            f"{type(puzzles).__name__}{hint}"
        )
    return _list_strings(list(puzzles))


def _list_strings(items: list[Any]) -> pa.Array:
    """Strings and None (or NaN, pandas' missing value) as a pyarrow string array, None and
    NaN as null; anything else is named, with its place."""
    try:
        return pa.array(items, type=pa.string(), from_pandas=True)  # NaN is null
    except (pa.ArrowTypeError, pa.ArrowInvalid):
        at = next(i for i, item in enumerate(items) if not _text_or_missing(item))
        raise TypeError(
            f"expected a column of puzzles ({_COLUMN_KINDS}): item {at} is of type "
            f"{type(items[at]).__name__}, expected a puzzle string or None"
        ) from None


def _text_or_missing(item: object) -> bool:
    """Whether `item` is a puzzle string, None or NaN (a float NaN is not equal to itself)."""
    return isinstance(item, str | None) or (isinstance(item, float) and item != item)


def _array_strings(values: np.ndarray) -> pa.Array:
    """A numpy column: strings as they are, or `(n, 81)` ints formatted as puzzle strings."""
    if values.ndim == 1 and values.dtype.kind in "UO":
        return _list_strings(values.tolist())
    if values.ndim == 1 and values.shape == (CELLS,) and values.dtype.kind in "iu":
        raise ValueError(
            "an array of shape (81,) is one board: pass board.reshape(1, 81), or call "
            "pipeline.solve(board)"
        )
    if values.dtype.kind not in "iu":
        raise TypeError(
            f"expected an (n, 81) array of ints 0-9 (0 for blanks) or a 1-d array of strings, "
            f"got dtype {values.dtype}"
        )
    return format_grids(values)  # ValueError for a shape other than (n, 81), cells outside 0-9


def frame_columns(
    frame: pl.DataFrame | pl.LazyFrame,
    column: str | None = None,
    solution_column: str | None = None,
    id_column: str | None = None,
) -> ColumnNames:
    """The names of a frame's puzzle, solution and id columns (`column`, `solution_column`,
    `id_column`; None for a solution or id column it has not), found as a file's are.

    A LazyFrame's by name from its schema; by content (puzzles in its first rows, which runs the
    query that far) only when no name says. Raises InputError (a ValueError) naming what is
    wrong, TypeError for a puzzle or solution column that is not text.
    """
    schema = frame.collect_schema()
    names = schema.names()
    texts = [name for name, dtype in schema.items() if isinstance(dtype, _TEXT_TYPES)]
    if isinstance(frame, pl.LazyFrame):
        try:  # no sample: the names alone
            chosen = pick_columns(
                names, {}, column, solution_column, id_column, source="LazyFrame", has_rows=True
            )
        except InputError:
            if column is not None or not names:
                raise
            head = frame.head(SAMPLE_ROWS).collect()
            return frame_columns(head, None, solution_column, id_column)
    elif not names and not frame.height:  # `pl.DataFrame()`: nothing to look for
        return ColumnNames(column=None, solution_column=None, id_column=None)
    else:
        head = frame.head(SAMPLE_ROWS)
        sample = {name: head[name].cast(pl.String).to_list() for name in texts}
        if not frame.height:  # no content to look at: the first text column will do (text first)
            names = texts + [name for name in names if name not in texts]
        chosen = pick_columns(
            names,
            sample,
            column,
            solution_column,
            id_column,
            source="DataFrame",
            has_rows=frame.height > 0,
        )
    for role in ("puzzle_column", "solution_column"):
        name = chosen[role]
        if name is not None and not isinstance(schema[name], _TEXT_TYPES):
            kind = type(frame).__name__
            raise TypeError(f"{kind}: column '{name}' holds {schema[name]}, not text")
    return ColumnNames(
        column=chosen["puzzle_column"],
        solution_column=chosen["solution_column"],
        id_column=chosen["id_column"],
    )


def passed_columns(names: list[str], named: ColumnNames) -> dict[str, str]:
    """The frame's columns other than its puzzle, solution and id columns, in order, each mapped
    to its name among the results: its own, or `input_<name>` where a result column has that
    name (as a file's columns are passed through)."""
    used = [name for name in named.values() if name is not None]
    return passthrough_names(names, used)


def _frame_arrays(frame: pl.DataFrame, named: ColumnNames) -> dict[str, pa.Array]:
    """A DataFrame's puzzle, solution and id columns (`frame_columns`) as Arrow."""
    if named["column"] is None:  # a frame with no columns
        return {"puzzle": pa.array([], pa.string())}
    arrays = {}
    for role, key in (("column", "puzzle"), ("solution_column", "solution")):
        if (name := named[role]) is not None:
            arrays[key] = frame[name].cast(pl.String).to_arrow().cast(pa.string())
    if (name := named["id_column"]) is not None:
        arrays["id"] = _ids(frame[name])
    return arrays


def _ids(series: pl.Series) -> pa.Array:
    """An id column as Arrow, its type kept; text of any kind as plain strings (as a file's)."""
    if isinstance(series.dtype, _TEXT_TYPES):
        return series.cast(pl.String).to_arrow().cast(pa.string())
    ids = series.to_arrow(compat_level=pl.CompatLevel.oldest())
    return ids.combine_chunks() if isinstance(ids, pa.ChunkedArray) else ids
