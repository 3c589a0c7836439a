"""The streaming readers of the input formats: each streams its input in blocks (never the
whole of it at once) and yields Arrow record batches of the requested columns in input order,
dropping no row; and the text and batch helpers they share.

Text inputs (CSV, TSV, `.txt`) are read one row per line by `lines.py`, whose docstring has the
rules (line breaks, empty lines, long lines, quotes); in `.txt` files whitespace-only lines and
`#` comment lines (first non-blank character `#`) are no rows either.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import IO

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.errors import InputError, first_line
from pipeline.io.formats import ByteSource, open_file, open_stream, spool
from pipeline.io.lines import LineStream, cells, split_lines, text_lines


def as_text(values: pa.Array) -> pa.Array:
    """Any text-like cells as UTF-8 strings. A binary cell that is not UTF-8 is decoded with
    U+FFFD for the bad bytes, so its row stays (and parsing says which character is wrong),
    never the run."""
    t = pa.types
    if t.is_dictionary(values.type):
        values = values.dictionary_decode()
    if t.is_fixed_size_binary(values.type) or t.is_binary_view(values.type):
        values = values.cast(pa.binary())
    if t.is_string(values.type) or t.is_large_string(values.type) or t.is_string_view(values.type):
        return valid_text(values).cast(pa.string())
    try:
        return values.cast(pa.string())
    except pa.ArrowInvalid:  # rare: only the batches holding such a cell take this loop
        cells = values.cast(pa.large_binary()).to_pylist()
        return pa.array(
            [None if c is None else c.decode("utf-8", errors="replace") for c in cells],
            pa.string(),
        )


def valid_text(values: pa.Array) -> pa.Array:
    """A string column (Parquet does not check its strings) with each cell that is not UTF-8
    decoded with U+FFFD for its bad bytes; other columns as they are."""
    t = pa.types
    kind = values.type
    if not (t.is_string(kind) or t.is_large_string(kind) or t.is_string_view(kind)):
        return values
    try:
        values.validate(full=True)
        return values
    except pa.ArrowInvalid:  # rare: only the batches holding such a cell take this loop
        raw = values.cast(pa.string()) if t.is_string_view(kind) else values
        binary = pa.large_binary() if t.is_large_string(raw.type) else pa.binary()
        cells = raw.view(binary).to_pylist()
        fixed = [None if c is None else c.decode("utf-8", errors="replace") for c in cells]
        return pa.array(fixed, kind)


class DelimitedReader:
    """Streams a CSV/TSV text as string columns (null when empty), one row a line."""

    def __init__(
        self, source: ByteSource, *, delimiter: str, names: list[str], header: bool
    ) -> None:
        self.source, self.delimiter, self.names, self.header = source, delimiter, names, header

    def bytes_read(self) -> int | None:
        return self.source.bytes_read()

    def batches(self, columns: list[str]) -> Iterator[pa.RecordBatch]:
        """Record batches of `columns` (strings), in input order, every row kept."""
        indices = [self.names.index(name) for name in columns]
        with closing(self.source.open()) as stream:
            skip = int(self.header)
            for block in LineStream(stream).blocks():
                lines = split_lines(block)
                if skip and len(lines):
                    lines, skip = lines.slice(1), 0
                if len(lines):
                    arrays = cells(lines, self.delimiter, indices, quotes=b'"' in block)
                    yield pa.record_batch([as_text(a) for a in arrays], names=columns)


class TextReader:
    """Streams a `.txt` text, one puzzle a line, as a single string column."""

    def __init__(self, source: ByteSource) -> None:
        self.source = source

    def bytes_read(self) -> int | None:
        return self.source.bytes_read()

    def batches(self, columns: list[str]) -> Iterator[pa.RecordBatch]:
        """Record batches of the single column `columns[0]`, comments and blank lines dropped."""
        (name,) = columns
        with closing(self.source.open()) as stream:
            for lines in LineStream(stream):
                rows = text_lines(lines)
                if len(rows):
                    yield pa.record_batch([as_text(rows)], names=[name])


class ParquetReader:
    """Streams the row groups of a Parquet file (or of a temporary copy: decompressed, or
    spooled from standard input, since Parquet needs seeking)."""

    def __init__(self, name: str, source: str | IO[bytes], buffer_size: int = 1 << 20) -> None:
        """`buffer_size`: bytes read at a time from a column (more for a remote file, where
        each read is a request)."""
        self.name = name
        try:
            self._source = open_file(source) if isinstance(source, str) else source  # kept open
            self.file = pq.ParquetFile(self._source, buffer_size=buffer_size, pre_buffer=False)
        except (OSError, pa.ArrowException, UnicodeDecodeError) as e:  # a column name not UTF-8
            raise InputError(f"{name}: not a Parquet file ({first_line(e)})") from None
        stored = self.file.schema_arrow.names
        # the columns' names, repeats told apart as a CSV header's are (note, note -> note_2)
        self.names = unique_names(stored)
        self._by_position = len(set(stored)) < len(stored)  # pyarrow reads such columns by name

    @classmethod
    def of_file(cls, path: Path, compression: str | None) -> ParquetReader:
        if compression is None:
            return cls(str(path), str(path))
        try:
            with open_stream(path, compression) as stream:
                copy = spool(str(path), stream, b"", f" (after {compression} decompression)")
        except (OSError, pa.ArrowException) as e:
            raise InputError(f"{path}: cannot decompress ({first_line(e)})") from None
        return cls(str(path), copy)

    def batches(
        self, columns: list[str], batch_size: int, start_row: int = 0
    ) -> Iterator[pa.RecordBatch]:
        """Record batches of `columns` from `start_row` on, skipping whole row groups first.

        Each row group is read on its own and must give the rows the footer counts for it:
        pyarrow skips a page it cannot place (a damaged page header) and reads on, short, without
        a word. A row group that comes out short (or long) is an `InputError`, before any row of
        the next group is read, so no row is lost or numbered wrong."""
        meta, first_group = self.file.metadata, 0
        while first_group < meta.num_row_groups:
            group_rows = meta.row_group(first_group).num_rows
            if start_row < group_rows:
                break
            start_row -= group_rows
            first_group += 1
        for group in range(first_group, meta.num_row_groups):
            yield from skip_rows(self.group_batches(group, columns, batch_size), start_row)
            start_row = 0

    def group_batches(
        self, group: int, columns: list[str], batch_size: int
    ) -> Iterator[pa.RecordBatch]:
        """The batches of `columns` of row group `group`, checked against its footer's count."""
        if self._by_position:  # a name pyarrow sees twice: read every column, pick by place
            places = [self.names.index(name) for name in columns]
            every = self.file.iter_batches(batch_size=batch_size, row_groups=[group])
            batches: Iterator[pa.RecordBatch] = (
                pa.record_batch([b.column(i) for i in places], names=columns) for b in every
            )
        else:
            batches = self.file.iter_batches(
                batch_size=batch_size, row_groups=[group], columns=columns
            )
        return self._counted(batches, group)

    def _counted(self, batches: Iterator[pa.RecordBatch], group: int) -> Iterator[pa.RecordBatch]:
        """The batches of row group `group`, checked against the footer's count of its rows."""
        want, got = self.file.metadata.row_group(group).num_rows, 0
        for batch in batches:
            got += batch.num_rows
            if got > want:
                break
            yield batch
        if got != want:
            raise InputError(
                f"{self.name}: read failed (row group {group}: {got} rows read, "
                f"{want} in its footer; the file is damaged)"
            )

    def field(self, name: str) -> pa.Field:
        """The stored field of the column `name` (one of `names`)."""
        return self.file.schema_arrow.field(self.names.index(name))


def skip_rows(batches: Iterator[pa.RecordBatch], n: int) -> Iterator[pa.RecordBatch]:
    """`batches` without their first `n` rows (and without empty batches)."""
    for batch in batches:
        if n >= batch.num_rows:
            n -= batch.num_rows
            continue
        yield batch.slice(n) if n else batch
        n = 0


def is_text(kind: pa.DataType) -> bool:
    """Whether a Parquet column holds text (possibly dictionary-encoded, or as bytes)."""
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    t = pa.types
    checks = (t.is_string, t.is_large_string, t.is_string_view, t.is_binary, t.is_large_binary)
    return any(check(kind) for check in (*checks, t.is_fixed_size_binary))


def unique_names(names: list[str]) -> list[str]:
    """Header names with repeats made distinct: a, a -> a, a_2 (a_3 when a_2 is there too)."""
    given, used = set(names), set()
    out = []
    for name in names:
        new, k = name, 2
        while new in used or (new != name and new in given):
            new, k = f"{name}_{k}", k + 1
        used.add(new)
        out.append(new)
    return out


def rechunk(batches: Iterator[pa.RecordBatch], size: int) -> Iterator[pa.RecordBatch]:
    """Regroup `batches` into batches of exactly `size` rows (the last may be shorter)."""
    pending: list[pa.RecordBatch] = []
    count = 0
    for batch in batches:
        while batch.num_rows:
            take = min(size - count, batch.num_rows)
            pending.append(batch.slice(0, take))
            count += take
            batch = batch.slice(take)
            if count == size:
                yield pending[0] if len(pending) == 1 else pa.concat_batches(pending)
                pending, count = [], 0
    if count:
        yield pending[0] if len(pending) == 1 else pa.concat_batches(pending)
