"""Reading puzzle inputs as a stream of bounded Arrow record batches.

    ds = open_dataset("data/kaggle.csv.gz")        # format, compression, columns detected
    for batch in ds.batches():                     # <= batch_size rows each, in input order
        batch["row"], batch["puzzle"]              # int64 input position, puzzle strings

Formats come from the name: `.csv`, `.tsv`/`.tab`, `.txt` (one puzzle a line), `.parquet`/`.pq`,
each optionally `.gz` or `.zst`; the content must match the name (`format=` forces a format).
`-` is standard input, its format sniffed from its bytes (`stdin.py`); a named pipe,
`/dev/stdin` or `<(...)` is read the same way, once. A URL (`https://...`, `s3://...`) is
read as a file is (`sources.py`, `remote.py`). Puzzles and solutions
are always read as strings, so puzzles with leading zeros stay intact; an empty field is null
and stays in place.

Choices worth knowing:
* One row per line in CSV, TSV and text files, whatever the line holds (the rules, quotes and
  long lines included, are in `lines.py`): empty lines are skipped, and in text files so are
  whitespace-only lines and `#` comment lines; `row` counts rows (not lines).
* CSV rows with too few fields get nulls for the missing ones; extra fields are ignored.
* The separator, when not given, is sniffed among `,` `;` `|` and tab (`delimited.py`).
* A CSV/TSV's first line is a header only when it cannot be a row (`looks_like_header`): a
  line holding a puzzle is a row. A header guessed from content alone, no column name like
  `puzzle` confirming it, is said in `Dataset.header_note`, for the job to print.
* Ids keep their type: Parquet's as stored; from text, int64 when every sampled id is a plain
  integer (`7`, not `007`), else strings. A later id that does not fit the sampled type
  becomes null: its row stays, and a run never stops for an id. An input without an id to
  sample (header only) takes the type of the other inputs read with it (`agree_on_id_type`).
* The other columns (a Kaggle `difficulty`, a `source`) come along after the puzzle ones, as
  strings from text and typed from Parquet, under their own names, or `input_<name>` when
  that is a result column's (`Dataset.extra_columns`, `Dataset.renamed`); `passthrough=False`
  leaves them out. A name that repeats (in a CSV header or a Parquet schema) is told apart by
  place: `note, note` are read as `note, note_2`.
* An empty input (no rows; a Parquet file without columns too) yields no batches at all;
  `Dataset.schema` still tells their shape.
* Every batch holds exactly `batch_size` rows except the last one.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.errors import InputError, first_line
from pipeline.grid import ParsedGrids, parse_puzzles
from pipeline.io.columns import (
    ID_NAMES,
    PUZZLE_NAMES,
    SAMPLE_ROWS,
    SOLUTION_NAMES,
    id_type_of,
    passthrough_names,
)
from pipeline.io.columns import pick_columns as _pick_columns
from pipeline.io.delimited import delimited_layout
from pipeline.io.formats import (
    ByteSource,
    DelimitedReader,
    ParquetReader,
    TextReader,
    as_text,
    check_format,
    head_text_rows,
    is_text,
    rechunk,
    skip_rows,
    valid_text,
)
from pipeline.io.remote import RemoteFile
from pipeline.io.sources import open_source
from pipeline.io.stdin import NAME as STDIN_NAME
from pipeline.io.stdin import STDIN

__all__ = ["Dataset", "open_dataset", "agree_on_id_type", "pick_columns", "read_puzzles",
           "PUZZLE_NAMES", "SOLUTION_NAMES", "ID_NAMES"]  # fmt: skip

TEXT_COLUMN = "puzzle"  # the single column of a `.txt` file
_INTEGER_TEXT = r"^-?(0|[1-9][0-9]{0,17})$"  # ids that fit an int64 id column (columns.py)


class _Reader(Protocol):
    def batches(self, columns: list[str]) -> Iterator[pa.RecordBatch]: ...


@dataclass(frozen=True)
class Dataset:
    """An opened input: what it is, which columns matter, and `batches()` to stream it."""

    path: Path  # Path("-") for standard input
    format: str  # "csv" | "tsv" | "parquet" | "txt"
    compression: str | None  # None | "gzip" | "zstd"
    columns: list[str]  # every column as read, repeated names told apart (a, a -> a, a_2); []
    # for an empty CSV without a header or a Parquet file without columns
    puzzle_column: str
    solution_column: str | None
    id_column: str | None
    size_bytes: int  # of the file as stored (compressed size for .gz/.zst); 0 for stdin
    num_rows: int | None  # known without reading for Parquet only
    batch_size: int
    _reader: _Reader | ParquetReader | None = field(repr=False, compare=False)
    _id_type: pa.DataType = field(repr=False, compare=False, default=pa.string())
    _id_type_seen: bool = field(repr=False, compare=False, default=True)  # False: no id to see
    _row_bytes: float | None = field(repr=False, compare=False, default=None)  # in the head
    _rows_read: list[int] = field(repr=False, compare=False, default_factory=lambda: [0])
    has_header: bool = False  # CSV/TSV: the first line named the columns
    separator: str | None = None  # CSV/TSV: the field separator, given or sniffed
    header_note: str | None = None  # a header guessed from content alone, said in a sentence
    extra_columns: dict[str, str] = field(default_factory=dict)  # input name -> result name
    extra_schema: pa.Schema = field(default_factory=lambda: pa.schema([]))  # by result name
    stream: bool = False  # standard input or a named pipe: read once, no second pass
    url: str | None = None  # an input at a URL: the URL, as shown (no password)
    _remote: RemoteFile | None = field(repr=False, compare=False, default=None)

    @property
    def from_stdin(self) -> bool:
        return self.url is None and str(self.path) == STDIN

    @property
    def location(self) -> str:
        """Where the input is, as given: a path, `-`, or a URL (as shown: no password)."""
        return self.url if self.url is not None else str(self.path)

    @property
    def remote_file(self) -> RemoteFile | None:
        """The file at the URL this input is read from (None for a path or standard input)."""
        return self._remote

    def identity(self) -> dict[str, object]:
        """What makes a checkpoint belong to this input: the file as it is now (its size and
        time, or a remote file's size, ETag, ...); a stream has nothing to tell it by."""
        if self.stream:
            return {"input": self.location}
        if self._remote is not None:
            return self._remote.identity()
        stat = self.path.stat()
        return {"input": str(self.path.resolve()), "input size": stat.st_size,
                "input mtime": stat.st_mtime_ns}  # fmt: skip

    @property
    def renamed(self) -> dict[str, str]:
        """The passed-through columns whose name clashed with a result column's: input name ->
        name in the results (`clues` -> `input_clues`)."""
        return {old: new for old, new in self.extra_columns.items() if old != new}

    @property
    def schema(self) -> pa.Schema:
        """The schema of every batch: row, [id], puzzle, [solution], then the extra columns."""
        fields = [pa.field("row", pa.int64())]
        if self.id_column is not None:
            fields.append(pa.field("id", self._id_type))
        fields.append(pa.field("puzzle", pa.string()))
        if self.solution_column is not None:
            fields.append(pa.field("solution", pa.string()))
        return pa.schema(fields + list(self.extra_schema))

    def batches(self, start_row: int = 0) -> Iterator[pa.RecordBatch]:
        """Stream rows `start_row`, `start_row + 1`, ... as batches of `batch_size` rows.

        Columns: `row` (int64, 0-based input position), `id` (when there is one, see the
        module docstring for its type), `puzzle` and `solution` (when there is one) as strings,
        then the extra columns (`extra_schema`). Rows before `start_row` are read and dropped
        (Parquet skips whole row groups unread). Read errors part-way (a truncated .gz, say)
        raise `InputError`; so does a second call for standard input.
        """
        if start_row < 0:
            raise InputError(f"start_row must be >= 0, not {start_row}")
        if self._reader is None:
            return
        wanted = [(self.id_column, "id"), (self.puzzle_column, "puzzle")]
        wanted.append((self.solution_column, "solution"))
        wanted += list(self.extra_columns.items())
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
            raise InputError(f"{self._name}: read failed ({first_line(e)})") from None

    def estimated_rows(self) -> int | None:
        """The number of rows, when known (`num_rows`), else an estimate for a progress bar's
        ETA: the file's size over the bytes per line of its first lines, or for a compressed
        file the rows read so far scaled by the share of its stored bytes read; None when
        nothing can be said yet (or ever: standard input)."""
        rows_read = self._rows_read[0]
        if self.num_rows is not None:
            return self.num_rows
        if not self.size_bytes:
            return None
        if self.compression is None and self._row_bytes:  # rows are much alike in size
            return max(rows_read, round(self.size_bytes / self._row_bytes))
        bytes_read = getattr(self._reader, "bytes_read", lambda: None)()
        if not bytes_read or not rows_read:
            return None
        return max(rows_read, round(rows_read * self.size_bytes / bytes_read))

    @property
    def _name(self) -> str:
        return STDIN_NAME if self.from_stdin else self.location

    def _normalize(self, batch: pa.RecordBatch, names: list[str]) -> pa.RecordBatch:
        """Rename to id/puzzle/solution/extras; puzzle and solution plain strings, the id of
        its type, extras with dictionaries decoded; text from Parquet made valid UTF-8."""
        parquet = isinstance(self._reader, ParquetReader)
        arrays = []
        for name, array in zip(names, batch.columns, strict=True):
            if name in ("puzzle", "solution"):
                array = as_text(array)
            else:
                if pa.types.is_dictionary(array.type):
                    array = array.dictionary_decode()
                if parquet:  # Parquet does not check that its strings are UTF-8
                    array = valid_text(array)
                if name == "id":
                    array = _as_ids(array, self._id_type)
            arrays.append(array)
        return pa.RecordBatch.from_arrays(arrays, names=names)


def _as_ids(array: pa.Array, id_type: pa.DataType) -> pa.Array:
    """Ids of the column's type; from text to int64, an id that is no plain integer is null."""
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    if array.type == id_type:
        return array
    if pa.types.is_int64(id_type) and pa.types.is_string(array.type):
        fits = pc.match_substring_regex(array, _INTEGER_TEXT)
        if not pc.all(pc.or_kleene(fits, pc.is_null(array))).as_py():
            array = pc.if_else(fits, array, pa.scalar(None, pa.string()))
    return pc.cast(array, id_type)


def open_dataset(
    path: str | Path,
    *,
    column: str | None = None,
    solution_column: str | None = None,
    id_column: str | None = None,
    separator: str | None = None,
    has_header: bool | None = None,
    batch_size: int = 100_000,
    format: str | None = None,
    passthrough: bool = True,
    reserved: Iterable[str] = (),
) -> Dataset:
    """Open `path` (`-`: standard input) for streaming: detect format, compression, header and
    the columns to read.

    `column`, `solution_column` and `id_column` name columns (header-less files have columns
    `column_0`, `column_1`, ...; a `.txt` file has the single column `puzzle`). `separator` and
    `has_header` apply to CSV/TSV only. `format` (`csv`, `tsv`, `txt`, `parquet`) overrides
    the one the name (or for `-`, the content) says. `passthrough`: carry the other columns
    into the batches, renamed `input_<name>` when a result column or one of `reserved` (a job's
    own columns) has their name. Raises `InputError` with a one-line message.
    """
    if batch_size < 1:
        raise InputError(f"batch_size must be >= 1, not {batch_size}")
    forced = check_format(format)
    options = dict(overrides=(column, solution_column, id_column), passthrough=passthrough)
    options["reserved"] = tuple(reserved)
    found = open_source(path, forced)
    fmt, name = found.format, found.name
    _check_options(name, fmt, separator, has_header)
    common = found.dataset_fields() | {"batch_size": batch_size}
    if fmt == "parquet":
        return _open_parquet(found.parquet(), common, **options)
    head, at_eof, source = found.text()
    common["_row_bytes"] = len(head) / head.count(b"\n") if b"\n" in head else None
    if fmt == "txt":
        lines = head_text_rows(head, SAMPLE_ROWS)
        cols = _pick_columns(name, [TEXT_COLUMN], {TEXT_COLUMN: lines}, *options["overrides"])
        empty = at_eof and not lines
        return Dataset(
            **common,
            columns=[TEXT_COLUMN],
            num_rows=0 if empty else None,
            _reader=None if empty else TextReader(source),
            **cols,
        )
    return _open_delimited(name, source, common, head, at_eof, separator, has_header, **options)


def _check_options(name: str, fmt: str, separator: str | None, has_header: bool | None) -> None:
    if fmt in ("txt", "parquet"):
        if separator is not None:
            raise InputError(f"{name}: a separator applies to CSV/TSV files only")
        if has_header:
            raise InputError(f"{name}: a header applies to CSV/TSV files only")


def _open_parquet(
    reader: ParquetReader, common: dict, *, overrides: tuple, passthrough: bool, reserved: tuple
) -> Dataset:
    """`open_dataset` for Parquet: the schema names the columns, the footer counts the rows."""
    name, names = reader.name, reader.names
    num_rows = reader.file.metadata.num_rows
    if not names and not num_rows:  # no columns, no rows: empty, as an empty CSV is
        return _empty(common, overrides)
    texts = [n for n in names if is_text(reader.field(n).type)]
    first = None
    if texts:
        head = reader.batches(texts, SAMPLE_ROWS)
        try:
            first = next(head, None)
        except (OSError, pa.ArrowException) as e:  # a damaged file
            raise InputError(f"{name}: read failed ({first_line(e)})") from None
        finally:
            head.close()  # release pyarrow's reader (and its threads) now, not at exit
    sample = {n: as_text(first.column(n)).to_pylist() if first else [] for n in texts}
    cols = _pick_columns(name, names, sample, *overrides, has_rows=num_rows > 0)
    for column in (cols["puzzle_column"], cols["solution_column"]):
        if column is not None and column not in texts:
            raise InputError(
                f"{name}: column '{column}' holds {reader.field(column).type}, not text"
            )
    id_type = reader.field(cols["id_column"]).type if cols["id_column"] else pa.string()
    if pa.types.is_dictionary(id_type):
        id_type = id_type.value_type
    extra = passthrough_names(names, list(cols.values()), reserved) if passthrough else {}
    types = [_plain(reader.field(n).type) for n in extra]
    return Dataset(
        **common,
        columns=names,
        num_rows=num_rows,
        _reader=reader,
        _id_type=id_type,
        extra_columns=extra,
        extra_schema=pa.schema(list(zip(extra.values(), types, strict=True))),
        **cols,
    )


def _empty(common: dict, overrides: tuple) -> Dataset:
    """An input without columns or rows (an empty CSV, a Parquet file of no column): no
    batches; its columns are those named, or `puzzle`."""
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


def _plain(kind: pa.DataType) -> pa.DataType:
    return kind.value_type if pa.types.is_dictionary(kind) else kind


def _open_delimited(
    name: str,
    source: ByteSource,
    common: dict,
    head: bytes,
    at_eof: bool,
    separator: str | None,
    has_header: bool | None,
    *,
    overrides: tuple,
    passthrough: bool,
    reserved: tuple,
) -> Dataset:
    """`open_dataset` for CSV/TSV: the separator, the header and the columns, sniffed from the
    first rows (`delimited.py`)."""
    layout = delimited_layout(name, head, common["format"], separator, has_header, overrides)
    if layout is None:  # nothing at all: no header, no rows, nothing to detect
        return _empty(common, overrides)
    header, names, sample, cols = layout.header, layout.names, layout.sample, layout.columns
    note = None
    if header and has_header is None and not _named_as_puzzles(cols["puzzle_column"], overrides):
        shown = ", ".join(names[:6]) + (", ..." if len(names) > 6 else "")
        note = (f"{name}: its first line is read as column names ({shown}), not as a row; "
                "--no-header reads it as a row")  # fmt: skip
    ids = sample[cols["id_column"]] if cols["id_column"] else []
    id_type = id_type_of(ids)
    extra = passthrough_names(names, list(cols.values()), reserved) if passthrough else {}
    empty = at_eof and not any(sample.values())
    reader = DelimitedReader(source, delimiter=layout.separator, names=names, header=header)
    return Dataset(
        **common,
        columns=names,
        num_rows=0 if empty else None,
        _reader=None if empty else reader,
        _id_type=id_type,
        _id_type_seen=any(i is not None for i in ids),
        has_header=header,
        header_note=note,
        separator=layout.separator,
        extra_columns=extra,
        extra_schema=pa.schema([(new, pa.string()) for new in extra.values()]),
        **cols,
    )


def agree_on_id_type(datasets: list[Dataset]) -> list[Dataset]:
    """Inputs read into one output, their ids of one type: an input whose sampled rows held no
    id (a header-only shard, ids left empty) takes the type of the first input whose ids said
    theirs, rather than the string its empty sample gives it alone."""
    seen = next((ds for ds in datasets if ds.id_column and ds._id_type_seen), None)
    if seen is None:
        return datasets
    return [
        ds if ds.id_column is None or ds._id_type_seen else replace(ds, _id_type=seen._id_type)
        for ds in datasets
    ]


def _named_as_puzzles(puzzle_column: str | None, overrides: tuple) -> bool:
    """Whether the user named the puzzle column, or its name says puzzles: a header that
    leaves no doubt."""
    return overrides[0] is not None or (puzzle_column or "").strip().lower() in PUZZLE_NAMES


def optional_column(batch: pa.RecordBatch, name: str) -> pa.Array | None:
    """A batch's column `name` (`id`, `solution`), or None when the input has none."""
    index = batch.schema.get_field_index(name)
    return None if index < 0 else batch.column(index)


def read_puzzles(
    path: str | Path, limit: int | None = None, *, pencilmarks: bool = False, **options: object
) -> ParsedGrids:
    """The puzzles of a whole file (its first `limit` rows), parsed, in input order: for
    benchmarks, tests and notebooks that want a set in memory. `pencilmarks`: read
    729-character rows as pencilmark puzzles (`parse_puzzles`). `options` are those of
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
    return parse_puzzles(pa.chunked_array(columns, pa.string()), pencilmarks)


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
        source, names, sample, column, solution_column, id_column, has_rows=has_rows
    )
