"""Reading puzzle inputs as a stream of bounded Arrow record batches.

    ds = open_dataset("data/kaggle.csv.gz")        # format, compression, columns detected
    for batch in ds.batches():                     # <= batch_size rows each, in input order
        batch["row"], batch["puzzle"]              # int64 input position, puzzle strings

Formats come from the name: `.csv`, `.tsv`/`.tab`, `.txt` (one puzzle a line), `.parquet`/`.pq`,
each optionally `.gz` or `.zst`; the content must match the name. Text columns are always read as
strings, so puzzles with leading zeros stay intact; an empty field is null and stays in place.

Choices worth knowing:
* Empty lines are skipped in CSV, TSV and text files; in text files so are whitespace-only lines
  and `#` comment lines. Every other line is a row, however malformed, and `row` counts rows
  (not lines): row 0 is the first puzzle line after any comments.
* CSV rows with too few fields get nulls for the missing ones; extra fields are ignored.
* An empty input (no rows) yields no batches at all; `Dataset.schema` still tells their shape.
* Every batch holds exactly `batch_size` rows except the last one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.errors import InputError
from pipeline.grid import ParsedGrids, parse_puzzles
from pipeline.io.formats import (
    DelimitedReader,
    ParquetReader,
    TextReader,
    block_size,
    check_file,
    detect_format,
    head_lines,
    head_rows,
    is_text,
    read_head,
    rechunk,
    skip_rows,
    unique_names,
)

__all__ = ["Dataset", "open_dataset", "read_puzzles"]

PUZZLE_NAMES = ("puzzle", "puzzles", "quizzes", "quiz", "board", "grid", "sudoku")
SOLUTION_NAMES = ("solution", "solutions")
ID_NAMES = ("id",)
SAMPLE_ROWS = 1000  # rows looked at to detect a header and the puzzle/solution columns
MATCH_SHARE = 0.9  # share of non-null sample values that must look right ("a few bad rows")
TEXT_COLUMN = "puzzle"  # the single column of a `.txt` file
_PUZZLE = re.compile(r"[.0-9]{81}")
_GRID = re.compile(r"[1-9]{81}")
_NUMBER = re.compile(r"[-+]?[0-9]+(\.[0-9]*)?")
_NAME = re.compile(r"[A-Za-z_][\w .-]{0,63}")


class _Reader(Protocol):
    def batches(self, columns: list[str]) -> Iterator[pa.RecordBatch]: ...


@dataclass(frozen=True)
class Dataset:
    """An opened input: what it is, which columns matter, and `batches()` to stream it."""

    path: Path
    format: str  # "csv" | "tsv" | "parquet" | "txt"
    compression: str | None  # None | "gzip" | "zstd"
    columns: list[str]  # every column as read ([] for an empty CSV without a header)
    puzzle_column: str
    solution_column: str | None
    id_column: str | None
    size_bytes: int  # of the file as stored (compressed size for .gz/.zst)
    num_rows: int | None  # known without reading for Parquet only
    batch_size: int
    _reader: _Reader | ParquetReader | None = field(repr=False, compare=False)
    _id_type: pa.DataType = field(repr=False, compare=False, default=pa.string())
    _row_bytes: float | None = field(repr=False, compare=False, default=None)  # in the head
    _rows_read: list[int] = field(repr=False, compare=False, default_factory=lambda: [0])

    @property
    def schema(self) -> pa.Schema:
        """The schema of every batch: row, [id], puzzle, [solution]."""
        fields = [pa.field("row", pa.int64())]
        if self.id_column is not None:
            fields.append(pa.field("id", self._id_type))
        fields.append(pa.field("puzzle", pa.string()))
        if self.solution_column is not None:
            fields.append(pa.field("solution", pa.string()))
        return pa.schema(fields)

    def batches(self, start_row: int = 0) -> Iterator[pa.RecordBatch]:
        """Stream rows `start_row`, `start_row + 1`, ... as batches of `batch_size` rows.

        Columns: `row` (int64, 0-based input position), `id` (when there is one, its type as
        stored; strings for text formats), `puzzle` and `solution` (when there is one) as strings.
        Rows before `start_row` are read and dropped (Parquet skips whole row groups unread).
        Read errors part-way (a truncated .gz, say) raise `InputError`.
        """
        if start_row < 0:
            raise InputError(f"start_row must be >= 0, not {start_row}")
        if self._reader is None:
            return
        wanted = [(self.id_column, "id"), (self.puzzle_column, "puzzle")]
        wanted.append((self.solution_column, "solution"))
        source = [name for name, _ in wanted if name is not None]
        names = [new for name, new in wanted if name is not None]
        try:
            if isinstance(self._reader, ParquetReader):
                raw = self._reader.batches(source, self.batch_size, start_row)
            else:
                raw = skip_rows(self._reader.batches(source), start_row)
            row = start_row
            for batch in rechunk((self._normalize(b, names) for b in raw), self.batch_size):
                rows = pa.array(np.arange(row, row + batch.num_rows, dtype=np.int64))
                row += batch.num_rows
                self._rows_read[0] = row
                yield pa.RecordBatch.from_arrays([rows, *batch.columns], schema=self.schema)
        except (OSError, pa.ArrowException) as e:
            message = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise InputError(f"{self.path}: read failed ({message})") from None

    def estimated_rows(self) -> int | None:
        """The number of rows, when known (`num_rows`), else an estimate for a progress bar's
        ETA: the file's size over the bytes per line of its first lines, or for a compressed
        file the rows read so far scaled by the share of its stored bytes read; None when
        nothing can be said yet."""
        rows_read = self._rows_read[0]
        if self.num_rows is not None:
            return self.num_rows
        if self.compression is None and self._row_bytes:  # rows are much alike in size
            return max(rows_read, round(self.size_bytes / self._row_bytes))
        bytes_read = getattr(self._reader, "bytes_read", lambda: None)()
        if not bytes_read or not rows_read or not self.size_bytes:
            return None
        return max(rows_read, round(rows_read * self.size_bytes / bytes_read))

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        return self.batches()

    def _normalize(self, batch: pa.RecordBatch, names: list[str]) -> pa.RecordBatch:
        """Rename to id/puzzle/solution and make puzzle and solution plain strings."""
        arrays = []
        for name, array in zip(names, batch.columns, strict=True):
            target = self._id_type if name == "id" else pa.string()
            arrays.append(array if array.type == target else pc.cast(array, target))
        return pa.RecordBatch.from_arrays(arrays, names=names)


def open_dataset(
    path: str | Path,
    *,
    column: str | None = None,
    solution_column: str | None = None,
    id_column: str | None = None,
    separator: str | None = None,
    has_header: bool | None = None,
    batch_size: int = 100_000,
) -> Dataset:
    """Open `path` for streaming: detect format, compression, header and the columns to read.

    `column`, `solution_column` and `id_column` name columns (header-less files have columns
    `column_0`, `column_1`, ...; a `.txt` file has the single column `puzzle`). `separator` and
    `has_header` apply to CSV/TSV only. Raises `InputError` with a one-line message.
    """
    path = Path(path)
    if batch_size < 1:
        raise InputError(f"batch_size must be >= 1, not {batch_size}")
    fmt, compression = detect_format(path)
    size = check_file(path, fmt, compression)
    if fmt in ("txt", "parquet"):
        if separator is not None:
            raise InputError(f"{path}: a separator applies to CSV/TSV files only")
        if has_header:
            raise InputError(f"{path}: a header applies to CSV/TSV files only")
    common = dict(path=path, format=fmt, compression=compression, size_bytes=size)
    common["batch_size"] = batch_size
    overrides = (column, solution_column, id_column)
    if fmt == "parquet":
        return _open_parquet(path, common, overrides)
    head, at_eof = read_head(path, compression)
    common["_row_bytes"] = len(head) / head.count(b"\n") if b"\n" in head else None
    if fmt == "txt":
        lines = head_lines(head, SAMPLE_ROWS)
        cols = _pick_columns(path, [TEXT_COLUMN], {TEXT_COLUMN: lines}, *overrides)
        block = block_size(head, batch_size)
        empty = at_eof and not lines
        reader = None if empty else TextReader(path, compression, block_size=block)
        return Dataset(
            **common, columns=[TEXT_COLUMN], num_rows=0 if empty else None, _reader=reader, **cols
        )
    return _open_delimited(path, common, overrides, head, at_eof, separator, has_header)


def _open_parquet(path: Path, common: dict, overrides: tuple) -> Dataset:
    """`open_dataset` for Parquet: the schema names the columns, the footer counts the rows."""
    reader = ParquetReader(path, common["compression"])
    schema, num_rows = reader.file.schema_arrow, reader.file.metadata.num_rows
    texts = [f.name for f in schema if is_text(f.type)]
    first = None
    if texts:
        head = reader.batches(texts, SAMPLE_ROWS)
        first = next(head, None)
        head.close()  # release pyarrow's reader (and its threads) now, not at exit
    sample = {name: first.column(name).to_pylist() if first else [] for name in texts}
    cols = _pick_columns(path, schema.names, sample, *overrides, has_rows=num_rows > 0)
    for name in (cols["puzzle_column"], cols["solution_column"]):
        if name is not None and name not in texts:
            raise InputError(f"{path}: column '{name}' holds {schema.field(name).type}, not text")
    id_type = schema.field(cols["id_column"]).type if cols["id_column"] else pa.string()
    if pa.types.is_dictionary(id_type):
        id_type = id_type.value_type
    return Dataset(
        **common, columns=schema.names, num_rows=num_rows, _reader=reader, _id_type=id_type, **cols
    )


def _open_delimited(
    path: Path,
    common: dict,
    overrides: tuple,
    head: bytes,
    at_eof: bool,
    separator: str | None,
    has_header: bool | None,
) -> Dataset:
    """`open_dataset` for CSV/TSV: sniff the header and the columns from the first rows."""
    delimiter = _separator(path, separator, common["format"])
    rows, leading_blank = head_rows(path, head, delimiter, SAMPLE_ROWS + 1)
    if not rows:  # nothing at all: no header, no rows, nothing to detect
        column, solution_column, id_column = overrides
        return Dataset(
            **common,
            columns=[],
            puzzle_column=column or "puzzle",
            solution_column=solution_column,
            id_column=id_column,
            num_rows=0,
            _reader=None,
        )
    header = _looks_like_header(rows) if has_header is None else has_header
    if header:
        names = unique_names([name.strip() or f"column_{i}" for i, name in enumerate(rows[0])])
        rows = rows[1:]
    else:
        widths = [len(r) for r in rows]
        width = max(set(widths), key=lambda w: (widths.count(w), w))
        names = [f"column_{i}" for i in range(width)]
    sample = {
        n: [(r[i] or None) if i < len(r) else None for r in rows] for i, n in enumerate(names)
    }
    cols = _pick_columns(path, names, sample, *overrides, headerless=not header)
    empty = at_eof and not rows
    block = block_size(head, common["batch_size"])
    reader = DelimitedReader(
        path,
        common["compression"],
        delimiter=delimiter,
        names=names,
        skip_rows=leading_blank + 1 if header else 0,
        block_size=block,
    )
    return Dataset(
        **common,
        columns=names,
        num_rows=0 if empty else None,
        _reader=None if empty else reader,
        **cols,
    )


def _pick_columns(
    path: Path,
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

    The puzzle column by content is the first whose sample values look like puzzles; the
    solution column by content (header-less files only) the first after it holding full grids.
    """
    if has_rows is None:
        has_rows = any(sample.get(n) for n in names)
    puzzle = _named(path, names, column) if column else _by_name(names, PUZZLE_NAMES)
    if puzzle is None:
        looks = [n for n in names if _mostly(sample.get(n, []), _PUZZLE)]
        if looks:
            puzzle = looks[0]
        elif not has_rows:  # no rows to look at: any column will do
            puzzle = names[0]
        else:
            raise InputError(
                f"{path}: no puzzle column found (none named {', '.join(PUZZLE_NAMES)}, none "
                f"holding 81-character puzzles); columns are: {', '.join(names)}"
            )
    if solution_column:
        solution = _named(path, names, solution_column)
    else:
        others = [n for n in names if n != puzzle]
        solution = _by_name(others, SOLUTION_NAMES)
        if solution is None and headerless:
            later = names[names.index(puzzle) + 1 :]
            solution = next((n for n in later if _mostly(sample.get(n, []), _GRID)), None)
    if id_column:
        ident = _named(path, names, id_column)
    else:  # automatic choices step aside for the ones made above
        ident = _by_name([n for n in names if n not in (puzzle, solution)], ID_NAMES)
    chosen = [c for c in (puzzle, solution, ident) if c is not None]
    if len(set(chosen)) < len(chosen):
        raise InputError(f"{path}: puzzle, solution and id columns must differ: {chosen}")
    return {"puzzle_column": puzzle, "solution_column": solution, "id_column": ident}


def _named(path: Path, names: list[str], wanted: str) -> str:
    """The column called `wanted` (exactly, else case-insensitively), or a `InputError`."""
    if wanted in names:
        return wanted
    folded = [n for n in names if n.lower() == wanted.lower()]
    if len(folded) == 1:
        return folded[0]
    listing = ", ".join(names) if names else "(none)"
    raise InputError(f"{path}: column '{wanted}' not found; columns are: {listing}")


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


def _looks_like_header(rows: list[list[str]]) -> bool:
    """Whether the first row names the columns rather than holding data.

    A header when a field is a known column name (puzzle, solution, id, ...); or when every
    field is name-like (starts with a letter, short) and some column below holds puzzles or
    numbers that its first field is not. When in doubt: no header, so no row is ever lost.
    """
    first, rest = [f.strip() for f in rows[0]], rows[1:]
    if any(f.lower() in PUZZLE_NAMES + SOLUTION_NAMES + ID_NAMES for f in first):
        return True
    if not any(first) or not all(_NAME.fullmatch(f) for f in first if f):
        return False
    for i, name in enumerate(first):
        below = [r[i] for r in rest if i < len(r)]
        if name and (_mostly(below, _PUZZLE) or _mostly(below, _NUMBER)):
            return True
    return False


def _separator(path: Path, separator: str | None, fmt: str) -> str:
    """The field delimiter: the override (`\\t` spelled out is accepted), else by format."""
    if separator is None:
        return "\t" if fmt == "tsv" else ","
    separator = {"\\t": "\t", "tab": "\t"}.get(separator, separator)
    if len(separator) != 1 or separator in '\r\n"':
        raise InputError(f"{path}: separator must be one character, not {separator!r}")
    return separator


def optional_column(batch: pa.RecordBatch, name: str) -> pa.Array | None:
    """A batch's column `name` (`id`, `solution`), or None when the input has none."""
    index = batch.schema.get_field_index(name)
    return None if index < 0 else batch.column(index)


def read_puzzles(path: str | Path, limit: int | None = None, **options: object) -> ParsedGrids:
    """The puzzles of a whole file (its first `limit` rows), parsed, in input order: for
    benchmarks, tests and notebooks that want a set in memory. `options` are those of
    `open_dataset`."""
    ds = open_dataset(path, **options)  # type: ignore[arg-type]
    columns: list[pa.Array] = []
    rows = 0
    for batch in ds.batches():
        if limit is not None and rows + batch.num_rows >= limit:
            columns.append(batch.column(ds.schema.get_field_index("puzzle")).slice(0, limit - rows))
            break
        columns.append(batch.column(ds.schema.get_field_index("puzzle")))
        rows += batch.num_rows
    return parse_puzzles(pa.chunked_array(columns, pa.string()))


def pick_columns(
    names: list[str],
    sample: dict[str, list],
    column: str | None = None,
    solution_column: str | None = None,
    id_column: str | None = None,
    *,
    source: str = "input",
    has_rows: bool | None = None,
) -> dict[str, str | None]:
    """The puzzle, solution and id columns of a table with a header (a DataFrame, say), chosen
    as for a file: `puzzle_column`, `solution_column`, `id_column` (None when there is none).

    `sample` holds the first values of the text columns (up to `SAMPLE_ROWS`), for finding the
    puzzle column by content. Raises `InputError`, its message starting with `source`.
    """
    return _pick_columns(
        Path(source), names, sample, column, solution_column, id_column, has_rows=has_rows
    )
