"""Sudoku grids as numbers: parsing puzzle strings and formatting them back, a column at a time.

A grid is 81 cells in row-major order (cell 1 is the top left, cell 81 the bottom right), held
as `uint8`: 0 for a blank cell, 1..9 for a given digit (a clue). A batch of grids is an
`(n, 81) uint8` array. In text, a puzzle is 81 characters: `1`-`9` for givens and `.` or `0`
for blanks; whitespace around it is ignored.

`parse_puzzles` and `format_grids` work on whole columns without a Python loop per row: numpy
reads the bytes straight from the Arrow buffers (and Arrow strips and measures the strings first
when some are not 81 bytes long or not all cells).
`as_grid`, `to_rows` and `to_string` handle one board at a time, in the shapes people hold one.
"""

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, TypeAlias, Union

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.cell_lists import cells_as_strings, is_cell_lists
from pipeline.pencilmarks import (
    PENCILMARK_CHARS,
    candidates_of,
    parse_pencilmark_bytes,
    singles_of,
    stray_message,
)

if TYPE_CHECKING:
    import polars as pl

CELLS = 81
MIN_UNIQUE_CLUES = 17  # no puzzle with fewer givens has a unique solution
_CHUNK_ROWS = 8192  # rows per numpy step: keeps the temporaries in cache
_CELL_VALUES = {".": 0, "0": 0, **{str(d): d for d in range(1, 10)}}
_NOT_A_PUZZLE = "!" * CELLS  # stands in for rows that are not 81 bytes long
_MAX_STRING_ROWS = (2**31 - 1) // CELLS  # int32 offsets of a pa.StringArray

# a polars Series too (named as text: polars is not imported to parse a column)
PuzzleColumn: TypeAlias = Union[  # noqa: UP007 - a forward reference: polars is not imported
    "pl.Series", pa.Array, pa.ChunkedArray, np.ndarray, Iterable[str | None]
]
Board: TypeAlias = str | Sequence[Any] | np.ndarray


class ParsedGrids(NamedTuple):
    """Puzzles parsed from a column, one entry per input row, in input order.

    `grids` is `(n, 81) uint8` (all zeros where the row is not a puzzle), `ok` is `(n,) bool`,
    and `errors` is a `pa.StringArray` of length n: null for good rows, else why the row is bad
    ("missing puzzle", "expected 81 cells, got 80", "stray character 'x' at cell 4": cells
    count from 0, row-major, as every column of cells does).
    """

    grids: np.ndarray
    ok: np.ndarray
    errors: pa.StringArray
    # When some row is a 729-character pencilmark puzzle (`pipeline.pencilmarks`): every row's
    # candidate masks, `(n, 81) uint16` (a plain row's from its givens; zeros where not ok), and
    # which rows are pencilmarks, `(n,) bool`. Their `grids` hold the cells with one candidate.
    candidates: np.ndarray | None = None
    pencilmark: np.ndarray | None = None


def parse_puzzles(values: PuzzleColumn, pencilmarks: bool = False) -> ParsedGrids:
    """Parse a column of puzzle strings into grids; a bad row gets an error message, never raises.

    `values`: a polars Series, a pyarrow (Chunked)Array of string or large_string (or of lists
    of ints 0-9, a model's outputs: `cell_lists`), a numpy array of str or object, or a list of
    str; None (null) is a missing puzzle. A row's error is the
    first that applies: missing, wrong number of cells (characters), first stray character.
    With `pencilmarks`, a row of 729 characters is a pencilmark puzzle (`pipeline.pencilmarks`):
    then `candidates` and `pencilmark` say what each row allows. Without (for the steps that
    read givens only), such a row is malformed, and its error says why.
    """
    strings = _as_strings(values)
    if strings.null_count == 0 and _all_cells_long(strings):
        # The common case (a clean column): the bytes as they are. No byte is whitespace
        # when every one is a cell, so trimming would change nothing.
        grids, ok = _cells_from_bytes(_row_bytes(strings))
        if ok.all():
            return ParsedGrids(grids, ok, pa.nulls(len(ok), pa.string()))
    return _parse_untidy(strings, pencilmarks)


def _parse_untidy(strings: pa.StringArray, pencilmarks: bool = False) -> ParsedGrids:
    """`parse_puzzles` of a column with nulls, whitespace, other lengths or stray bytes."""
    stripped = pc.utf8_trim_whitespace(strings)
    # Only rows of exactly 81 bytes can be puzzles; the others are swapped for 81 stray bytes, so
    # that every row's bytes lie back to back in one Arrow buffer: a (n, 81) reshape, no gather.
    lengths = pc.binary_length(stripped)
    fits = pc.fill_null(pc.equal(lengths, CELLS), False)
    if not pc.all(fits).as_py() and len(stripped):
        grids, ok = _cells_from_bytes(_row_bytes(pc.if_else(fits, stripped, _NOT_A_PUZZLE)))
    else:
        grids, ok = _cells_from_bytes(_row_bytes(stripped))
    marks = np.flatnonzero(pc.fill_null(pc.equal(lengths, PENCILMARK_CHARS), False))
    if len(marks):
        parsed = _with_pencilmarks(stripped, grids, ok, marks)
        if not pencilmarks:  # a pencilmark row where only givens are read: malformed
            return _without_pencilmarks(parsed, marks)
        return parsed
    bad = np.flatnonzero(~ok)
    messages = _error_messages(stripped.take(pa.array(bad))) if len(bad) else None
    return ParsedGrids(grids, ok, _scatter_strings(len(ok), bad, messages))


def _with_pencilmarks(
    stripped: pa.StringArray, grids: np.ndarray, ok: np.ndarray, marks: np.ndarray
) -> ParsedGrids:
    """`_parse_untidy`'s result when the rows at `marks` are 729 bytes long: those parsed as
    pencilmark puzzles, every row's candidates."""
    raw = _row_bytes(stripped.take(pa.array(marks)), PENCILMARK_CHARS)
    masks, marks_ok, first_bad = parse_pencilmark_bytes(raw)
    candidates = candidates_of(grids)
    candidates[~ok] = 0
    candidates[marks] = masks
    grids[marks] = singles_of(masks)
    ok[marks] = marks_ok
    pencilmark = np.zeros(len(ok), np.bool_)
    pencilmark[marks] = True
    bad = np.flatnonzero(~ok & ~pencilmark)
    messages = _error_messages(stripped.take(pa.array(bad))).to_pylist() if len(bad) else []
    found = dict(zip(bad.tolist(), messages, strict=True))
    strays = first_bad >= 0  # a message for each bad row only (a loop over those alone)
    for i, at in zip(marks[strays].tolist(), first_bad[strays].tolist(), strict=True):
        found[i] = stray_message(stripped[i].as_py(), at)
    rows = np.array(sorted(found), np.int64)
    errors = _scatter_strings(
        len(ok), rows, pa.array([found[r] for r in rows.tolist()], pa.string())
    )
    return ParsedGrids(grids, ok, errors, candidates, pencilmark)


def _without_pencilmarks(parsed: ParsedGrids, marks: np.ndarray) -> ParsedGrids:
    """`parsed` with its pencilmark rows made malformed: a step that reads givens only."""
    grids, ok = parsed.grids, parsed.ok
    messages = parsed.errors.to_pylist()
    for i in marks.tolist():
        if ok[i]:
            messages[i] = (
                "a pencilmark puzzle (729 characters), which this step does not "
                "read: it takes 81-cell puzzles"
            )
    ok[marks] = False
    grids[marks] = 0
    return ParsedGrids(grids, ok, pa.array(messages, pa.string()))


def _all_cells_long(strings: pa.StringArray) -> bool:
    """Whether every string of the array is exactly 81 bytes long (from its offsets)."""
    offsets_buf = strings.buffers()[1]
    if offsets_buf is None or not len(strings):
        return offsets_buf is not None
    offsets = np.frombuffer(
        offsets_buf, np.int32, count=len(strings) + 1, offset=4 * strings.offset
    )
    return bool((np.diff(offsets) == CELLS).all())


def format_grids(
    grids: np.ndarray, blank: str = ".", mask: np.ndarray | None = None
) -> pa.StringArray:
    """Write `(n, 81)` grids as 81-character strings, `blank` for blank cells.

    Rows where `mask` is False become null (for rows that did not parse or have no solution).
    """
    grids = check_grids(grids)
    n = len(grids)
    if n > _MAX_STRING_ROWS:
        raise ValueError(f"at most {_MAX_STRING_ROWS} grids fit one string array, got {n}")
    shift = np.uint8((_blank_code(blank) - ord("0")) % 256)
    data = np.empty((n, CELLS), np.uint8)
    is_blank = np.empty((min(n, _CHUNK_ROWS), CELLS), np.bool_)
    for start in range(0, n, _CHUNK_ROWS):
        cells, out = grids[start : start + _CHUNK_ROWS], data[start : start + _CHUNK_ROWS]
        blanks = is_blank[: len(cells)]
        np.add(cells, ord("0"), out=out)  # 0..9 -> '0'..'9'
        np.equal(cells, 0, out=blanks)
        out += blanks.view(np.uint8) * shift  # '0' -> blank, by uint8 wrap-around
    offsets = np.arange(0, (n + 1) * CELLS, CELLS, dtype=np.int32)
    validity, null_count = None, 0
    if mask is not None:
        mask = np.asarray(mask, dtype=np.bool_)
        if mask.shape != (n,):
            raise ValueError(f"mask must have shape ({n},), got {mask.shape}")
        validity = pa.py_buffer(np.packbits(mask, bitorder="little"))
        null_count = n - int(np.count_nonzero(mask))
    return pa.StringArray.from_buffers(
        n, pa.py_buffer(offsets), pa.py_buffer(data), validity, null_count
    )


def clue_counts(grids: np.ndarray) -> np.ndarray:
    """Number of givens (clues) in each grid, as `(n,) int8`."""
    grids = np.asarray(grids)
    if grids.ndim != 2 or grids.shape[1] != CELLS:
        raise ValueError(f"expected grids of shape (n, 81), got {grids.shape}")
    # a sum of the booleans into int8 (at most 81): 0.29 ms a 10,000-row batch, against 0.51
    # for np.count_nonzero(axis=1), which sums into int64 (one core, best of 200)
    return (grids != 0).sum(axis=1, dtype=np.int8)


def as_grid(board: Board) -> np.ndarray:
    """One board, in any usual shape, as an `(81,) uint8` grid.

    Accepted: an 81-character string; 9 strings of 9 characters; 9 lists of 9 one-character
    strings or ints 0-9 (the LeetCode board shape); 81 such cells in one list; a numpy array of
    ints or one-character strings of shape (9, 9) or (81,), or of 9 row strings. Blanks are `.`
    or `0` (or the int 0). Raises TypeError for what is not a board at all (None, a number,
    bytes, an array of floats) and ValueError for a board of the wrong size or with a bad cell.
    """
    if isinstance(board, str):  # the same rules and messages as a column of puzzles
        parsed = parse_puzzles([board])
        if not parsed.ok[0]:
            raise ValueError(parsed.errors[0].as_py())
        return parsed.grids[0]
    if isinstance(board, bytes | bytearray):
        raise TypeError("expected a Sudoku board, got bytes: decode it to a str first")
    if isinstance(board, np.ndarray):
        board = _array_cells(board)
    if not isinstance(board, Sequence):
        raise TypeError(f"expected a Sudoku board, got {type(board).__name__}")
    if len(board) == CELLS:
        return _grid_from_cells(list(board))
    if len(board) != 9:
        raise ValueError(f"expected 9 rows or 81 cells, got {len(board)}")
    cells: list[Any] = []
    for number, row in enumerate(board, start=1):
        if isinstance(row, str):
            row = row.strip()
        if not isinstance(row, Sequence | np.ndarray):
            raise TypeError(f"row {number}: expected 9 cells, got {type(row).__name__}")
        if len(row) != 9:
            raise ValueError(f"row {number}: expected 9 cells, got {len(row)}")
        cells.extend(row)
    return _grid_from_cells(cells)


def _array_cells(board: np.ndarray) -> list[Any]:
    """A numpy board's cells (or row strings) as a list, its shape and dtype checked."""
    if board.dtype.kind not in "iuU":
        raise TypeError(f"expected an array of ints or strings, got dtype {board.dtype}")
    if board.shape == (9,) and board.dtype.kind != "U":
        raise ValueError(f"an array of shape (9,) holds 9 row strings, got dtype {board.dtype}")
    if board.shape not in ((CELLS,), (9, 9), (9,)):
        raise ValueError(f"expected an array of shape (9, 9) or (81,), got {board.shape}")
    return board.tolist()


def to_rows(grid: np.ndarray) -> list[list[str]]:
    """One grid as 9 rows of 9 one-character strings, "." for blanks (the LeetCode board)."""
    text = to_string(grid)
    return [list(text[start : start + 9]) for start in range(0, CELLS, 9)]


def to_string(grid: np.ndarray, blank: str = ".") -> str:
    """One grid as an 81-character string, `blank` for blank cells."""
    grid = np.asarray(grid)
    if grid.shape not in ((CELLS,), (9, 9)):
        raise ValueError(f"expected a grid of shape (81,) or (9, 9), got {grid.shape}")
    return format_grids(grid.reshape(1, CELLS), blank=blank)[0].as_py()


def _as_strings(values: PuzzleColumn) -> pa.Array:
    """Any supported column of puzzles as one pyarrow string array (polars is not imported for
    it: a polars Series comes in through its Arrow data)."""
    if type(values).__module__.startswith("polars"):
        values = values.to_arrow()  # type: ignore[union-attr]
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)
    elif isinstance(values, np.ndarray):
        if values.ndim != 1 or values.dtype.kind not in "UO":
            raise TypeError(f"expected a 1-d array of str, got {values.dtype} {values.shape}")
        values = pa.array(values.tolist(), pa.string())
    elif not isinstance(values, pa.Array):
        values = pa.array(list(values), pa.string())
    if pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    if is_cell_lists(values.type):  # a model's outputs: lists of 81 ints (`cell_lists`)
        values = cells_as_strings(values)
    if pa.types.is_null(values.type) or pa.types.is_large_string(values.type):
        values = values.cast(pa.string())
    elif pa.types.is_string_view(values.type):
        values = values.cast(pa.string())
    if not pa.types.is_string(values.type):
        raise TypeError(f"expected a column of puzzle strings, got {values.type}")
    return values


def _row_bytes(strings: pa.Array, width: int = CELLS) -> np.ndarray:
    """The bytes of strings that are all exactly `width` bytes long (81; a pencilmark
    puzzle's 729), as a `(k, width) uint8` view."""
    _, offsets_buf, data_buf = strings.buffers()
    if data_buf is None:  # no strings at all
        return np.zeros((0, width), np.uint8)
    start = int(np.frombuffer(offsets_buf, np.int32, count=1, offset=4 * strings.offset)[0])
    data = np.frombuffer(data_buf, np.uint8, count=len(strings) * width, offset=start)
    return data.reshape(len(strings), width)


def _cells_from_bytes(raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Map `(k, 81)` bytes to cell values; a row with any other byte than `.0-9` is not ok.

    This is the lookup table {'.': 0, '0': 0, '1'..'9': 1..9, else: bad} done with uint8
    wrap-around arithmetic, in cache-sized chunks (a numpy table lookup is 5 times slower):
    `b - 46` puts '.' at 0, '/' at 1, '0'..'9' at 2..11; `^ 1` swaps 0 and 1 (and the pairs
    2-3, ..., 10-11), so `((b - 46) ^ 1) - 1` is at most 10 exactly for the allowed bytes.
    """
    k = len(raw)
    cells = np.empty((k, CELLS), np.uint8)
    ok = np.ones(k, np.bool_)
    scratch = np.empty((min(k, _CHUNK_ROWS), CELLS), np.uint8)
    for start in range(0, k, _CHUNK_ROWS):
        src, out = raw[start : start + _CHUNK_ROWS], cells[start : start + _CHUNK_ROWS]
        t = scratch[: len(src)]
        np.subtract(src, ord("0"), out=out)  # '0'..'9' -> 0..9, '.' -> 254
        np.add(out, 2, out=t)  # b - 46
        np.minimum(out, t, out=out)  # '.' -> 0
        t ^= 1
        t -= 1
        if t.max() > 10:  # a stray byte in this chunk: mark its rows
            ok[start + np.flatnonzero(t > 10) // CELLS] = False
    cells[np.flatnonzero(~ok)] = 0
    return cells, ok


def _scatter_strings(n: int, rows: np.ndarray, texts: pa.Array | None) -> pa.StringArray:
    """A string array of length n holding `texts` at the (ascending) `rows` and null elsewhere."""
    if len(rows) == 0 or texts is None:
        return pa.nulls(n, pa.string())
    arr = texts.cast(pa.large_string())
    _, offsets_buf, data_buf = arr.buffers()
    offsets = np.frombuffer(offsets_buf, np.int64)[arr.offset : arr.offset + len(arr) + 1]
    lengths = np.zeros(n, np.int32)
    lengths[rows] = np.diff(offsets)
    starts = np.zeros(n + 1, np.int32)
    np.cumsum(lengths, out=starts[1:])
    valid = np.zeros(n, np.bool_)
    valid[rows] = True
    buffers = [starts, data_buf[offsets[0] : offsets[-1]], np.packbits(valid, bitorder="little")]
    return pa.StringArray.from_buffers(n, *map(pa.py_buffer, buffers), null_count=n - len(rows))


def _error_messages(bad: pa.Array) -> pa.Array:
    """Why each of these stripped strings is not a puzzle (the first problem found). (polars'
    regular expressions: imported here, for bad rows only, off the start-up path.)"""
    import polars as pl

    cell = r"[.0-9]"
    frame = pl.DataFrame({"text": bad}).with_columns(
        length=pl.col("text").str.len_chars(),
        stray=pl.col("text").str.extract(rf"^{cell}*([^.0-9])", 1),
        at=pl.col("text").str.extract(rf"^({cell}*)", 1).str.len_chars(),
    )
    # The quoted character as Python shows it ('\t', '\x00'), one lookup per distinct character.
    quoted = {c: repr(c) for c in frame["stray"].drop_nulls().unique().to_list()}
    message = (
        pl.when(pl.col("text").is_null())
        .then(pl.lit("missing puzzle"))
        .when(pl.col("length") != CELLS)
        .then(pl.format("expected 81 cells, got {}", pl.col("length")))
        .otherwise(
            pl.format(
                "stray character {} at cell {}",
                pl.col("stray").replace_strict(quoted, default=None, return_dtype=pl.String),
                pl.col("at"),
            )
        )
    )
    return frame.select(message.alias("error")).to_series().to_arrow()


def check_grids(grids: np.ndarray) -> np.ndarray:
    """`grids` as a C-contiguous `(n, 81) uint8` array, checked to hold only 0..9."""
    grids = np.asarray(grids)
    if grids.ndim != 2 or grids.shape[1] != CELLS:
        raise ValueError(f"expected grids of shape (n, 81), got {grids.shape}")
    if grids.dtype.kind not in "iu":
        raise ValueError(f"expected integer grids, got dtype {grids.dtype}")
    if grids.size and (grids.max() > 9 or (grids.dtype.kind == "i" and grids.min() < 0)):
        row, cell = np.argwhere((grids > 9) | (grids < 0))[0].tolist()
        value = grids[row, cell]
        raise ValueError(f"row {row}, cell {cell} is {value}, expected 0 (blank) to 9")
    return np.ascontiguousarray(grids, dtype=np.uint8)


def _blank_code(blank: str) -> int:
    if len(blank) != 1 or not blank.isascii() or blank in "123456789":
        raise ValueError(f"blank must be one ASCII character other than 1-9, got {blank!r}")
    return ord(blank)


def _grid_from_cells(cells: list[Any]) -> np.ndarray:
    """81 cells, each a one-character string or an int 0..9, as an `(81,) uint8` grid."""
    if len(cells) != CELLS:
        raise ValueError(f"expected 81 cells, got {len(cells)}")
    grid = np.zeros(CELLS, np.uint8)
    for index, cell in enumerate(cells):
        if isinstance(cell, str) and cell in _CELL_VALUES:
            grid[index] = _CELL_VALUES[cell]
        elif isinstance(cell, int | np.integer) and not isinstance(cell, bool) and 0 <= cell <= 9:
            grid[index] = cell
        elif isinstance(cell, int | np.integer) and not isinstance(cell, bool):
            raise ValueError(f"cell {index} is {cell}, expected 0 (blank) to 9")
        elif isinstance(cell, str) and len(cell) == 1:
            raise ValueError(f"stray character {cell!r} at cell {index}")
        else:
            raise ValueError(f"cell {index} is {cell!r}, expected one of 1-9, '.' or '0'")
    return grid
