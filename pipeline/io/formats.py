"""Input formats for `pipeline.io.dataset`: names, magic bytes, sniffing and streaming readers.

Everything here is about bytes and records, nothing about Sudoku: `dataset.py` decides which
columns hold puzzles. Each reader streams its file in blocks (never the whole file at once) and
yields Arrow record batches of the requested columns in input order, dropping no row:

* CSV/TSV rows with too few or too many fields are not dropped: pyarrow reports them to an
  invalid-row handler, and they are put back at their position, padded with nulls (or cut).
* Empty lines are skipped in every text format (pyarrow's `ignore_empty_lines`); in `.txt` files
  whitespace-only lines and `#` comment lines (first non-blank character `#`) are skipped too.
"""

from __future__ import annotations

import csv
import re
import shutil
import tempfile
from collections import deque
from collections.abc import Callable, Iterator
from itertools import islice
from pathlib import Path
from typing import IO

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from pipeline.errors import InputError

FORMAT_SUFFIXES = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".txt": "txt",
    ".parquet": "parquet",
    ".pq": "parquet",
}
COMPRESSION_SUFFIXES = {".gz": "gzip", ".gzip": "gzip", ".zst": "zstd", ".zstd": "zstd"}
MAGIC = {"gzip": b"\x1f\x8b", "zstd": b"\x28\xb5\x2f\xfd", "parquet": b"PAR1"}
MIN_BLOCK, MAX_BLOCK = 1 << 18, 1 << 20  # pyarrow CSV block sizes (bytes)
HEAD_BYTES = 1 << 20  # how much (decompressed) text is sniffed for the header and columns
TEXT_DELIMITER = "\x1f"  # a byte no text line holds: each `.txt` line is one field
_WHITESPACE = pa.array([b" ", b"\t", b"\x0b", b"\x0c"], pa.binary())
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def detect_format(path: Path) -> tuple[str, str | None]:
    """`(format, compression)` from the file name, e.g. `x.csv.gz` -> `("csv", "gzip")`."""
    suffixes = [s.lower() for s in path.suffixes]
    compression = COMPRESSION_SUFFIXES.get(suffixes[-1]) if suffixes else None
    if compression:
        suffixes.pop()
    fmt = FORMAT_SUFFIXES.get(suffixes[-1]) if suffixes else None
    if fmt is None:
        raise InputError(
            f"{path}: unknown format; expected a name ending in "
            f"{', '.join(FORMAT_SUFFIXES)}, optionally followed by .gz or .zst"
        )
    return fmt, compression


def check_file(path: Path, fmt: str, compression: str | None) -> int:
    """Check that `path` is a readable file whose first bytes match its name; return its size."""
    try:
        size = path.stat().st_size
        if path.is_dir():
            raise InputError(f"{path}: is a directory")
        with open(path, "rb") as f:
            head = f.read(4)
            if fmt == "parquet" and compression is None and size >= 8:
                f.seek(-4, 2)
                head += f.read(4)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except PermissionError:
        raise InputError(f"{path}: permission denied") from None
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror or e})") from None
    if compression and size and not head.startswith(MAGIC[compression]):
        raise InputError(f"{path}: not a {compression} file")
    for name, suffix in (("gzip", ".gz"), ("zstd", ".zst")):
        if compression is None and head.startswith(MAGIC[name]):
            raise InputError(f"{path}: is {name}-compressed but its name does not end in {suffix}")
    if fmt == "parquet" and compression is None and (size < 12 or head != MAGIC["parquet"] * 2):
        raise InputError(f"{path}: not a Parquet file")
    return size


def open_stream(path: Path, compression: str | None) -> pa.NativeFile:
    """A sequential stream of the file's decompressed bytes."""
    return pa.input_stream(str(path), compression=compression)


class _StoredPosition:
    """How far a reader has read into its file, in stored (compressed) bytes: progress."""

    _raw: pa.NativeFile | None = None

    def _open(self, path: Path, compression: str | None) -> pa.NativeFile:
        self._raw = raw = pa.OSFile(str(path), "rb")
        return raw if compression is None else pa.CompressedInputStream(raw, compression)

    def bytes_read(self) -> int | None:
        """Stored bytes consumed so far (read-ahead included); None before reading starts."""
        raw = self._raw
        if raw is None:
            return None
        try:
            return raw.tell()
        except (OSError, ValueError):  # closed: everything was read
            return None


def read_head(path: Path, compression: str | None) -> tuple[bytes, bool]:
    """The first whole lines of decompressed text (about 1 MiB) and whether that is all of it."""
    try:
        with open_stream(path, compression) as stream:
            data = stream.read(HEAD_BYTES + 1)
    except (OSError, pa.ArrowException) as e:
        raise InputError(f"{path}: cannot read ({_first_line(e)})") from None
    if data.startswith(MAGIC["parquet"]):
        raise InputError(f"{path}: is a Parquet file, not text")
    if b"\x00" in data[:4096]:
        raise InputError(f"{path}: not a text file (holds NUL bytes)")
    if len(data) <= HEAD_BYTES:
        return data, True
    end = max(data.rfind(b"\n"), data.rfind(b"\r"))
    if end < 0:
        raise InputError(f"{path}: no line break in the first {HEAD_BYTES} bytes")
    return data[: end + 1], False


def head_rows(path: Path, head: bytes, delimiter: str, limit: int) -> tuple[list[list[str]], int]:
    """Up to `limit` non-empty rows of a delimited head, and how many empty lines precede them."""
    lines = _LINE_BREAK.split(head.decode("utf-8-sig", errors="replace"))
    leading = next((i for i, line in enumerate(lines) if line), len(lines))
    nonempty = (line for line in lines[leading:] if line)
    try:
        rows = list(islice(csv.reader(nonempty, delimiter=delimiter), limit))
    except csv.Error as e:
        raise InputError(f"{path}: not delimited text ({e})") from None
    return rows, leading


def head_lines(head: bytes, limit: int) -> list[str]:
    """Up to `limit` rows of a `.txt` head: lines that are neither blank nor `#` comments."""
    lines = _LINE_BREAK.split(head.decode("utf-8-sig", errors="replace"))
    rows = (line for line in lines if line.strip() and not line.lstrip().startswith("#"))
    return list(islice(rows, limit))


def as_text(values: pa.Array) -> pa.Array:
    """Binary cells as UTF-8 strings. A cell that is not UTF-8 is decoded with U+FFFD for the
    bad bytes, so its row stays (and parsing says which character is wrong), never the run."""
    try:
        return values.cast(pa.string())
    except pa.ArrowInvalid:  # rare: only the batches holding such a cell take this loop
        cells = values.to_pylist()
        return pa.array(
            [None if c is None else c.decode("utf-8", errors="replace") for c in cells],
            pa.string(),
        )


class DelimitedReader(_StoredPosition):
    """Streams a CSV/TSV file with every column read as a string (or null when empty)."""

    def __init__(
        self,
        path: Path,
        compression: str | None,
        *,
        delimiter: str,
        names: list[str],
        skip_rows: int,
        block_size: int,
    ) -> None:
        self.path, self.compression, self.delimiter = path, compression, delimiter
        self.names, self.skip_rows, self.block_size = names, skip_rows, block_size

    def batches(self, columns: list[str]) -> Iterator[pa.RecordBatch]:
        """Record batches of `columns` (strings), in input order, every row kept."""
        invalid: deque[tuple[int, str]] = deque()

        def on_invalid(row: pacsv.InvalidRow) -> str:
            if row.number is None:  # only known to a single-threaded reader
                raise InputError(f"{self.path}: cannot place a malformed row")
            invalid.append((row.number - 1 - self.skip_rows, row.text))
            return "skip"

        reader = pacsv.open_csv(
            self._open(self.path, self.compression),
            read_options=pacsv.ReadOptions(
                column_names=self.names,
                skip_rows=self.skip_rows,
                block_size=self.block_size,
                use_threads=False,
            ),
            parse_options=pacsv.ParseOptions(
                delimiter=self.delimiter, invalid_row_handler=on_invalid
            ),
            convert_options=pacsv.ConvertOptions(
                column_types={name: pa.binary() for name in columns},
                include_columns=columns,
                strings_can_be_null=True,
                null_values=[""],
            ),
        )
        indices = [self.names.index(name) for name in columns]

        def rebuild(texts: list[str]) -> pa.RecordBatch:
            rows = list(csv.reader(texts, delimiter=self.delimiter))
            cells = [[(r[i] or None) if i < len(r) else None for r in rows] for i in indices]
            arrays = [pa.array([v and v.encode() for v in c], pa.binary()) for c in cells]
            return pa.record_batch(arrays, names=columns)

        for batch in _merge_invalid(reader, invalid, rebuild):
            yield pa.record_batch([as_text(c) for c in batch.columns], names=columns)


class TextReader(_StoredPosition):
    """Streams a `.txt` file, one puzzle a line, as a single string column."""

    def __init__(self, path: Path, compression: str | None, *, block_size: int) -> None:
        self.path, self.compression, self.block_size = path, compression, block_size

    def batches(self, columns: list[str]) -> Iterator[pa.RecordBatch]:
        """Record batches of the single column `columns[0]`, comments and blank lines dropped."""
        (name,) = columns
        invalid: deque[tuple[int, str]] = deque()

        def on_invalid(row: pacsv.InvalidRow) -> str:  # a line holding TEXT_DELIMITER
            if row.number is None:
                raise InputError(f"{self.path}: cannot place a malformed line")
            invalid.append((row.number - 1, row.text))
            return "skip"

        reader = pacsv.open_csv(
            self._open(self.path, self.compression),
            read_options=pacsv.ReadOptions(
                column_names=[name], block_size=self.block_size, use_threads=False
            ),
            parse_options=pacsv.ParseOptions(
                delimiter=TEXT_DELIMITER,
                quote_char=False,
                escape_char=False,
                invalid_row_handler=on_invalid,
            ),
            convert_options=pacsv.ConvertOptions(column_types={name: pa.binary()}),
        )

        def rebuild(texts: list[str]) -> pa.RecordBatch:
            return pa.record_batch([pa.array([t.encode() for t in texts], pa.binary())], [name])

        for batch in _merge_invalid(reader, invalid, rebuild):
            lines = batch.column(0)
            first = pc.binary_slice(lines, 0, 1)
            if pc.any(pc.is_in(first, value_set=_WHITESPACE)).as_py():
                drop = pc.match_substring_regex(lines, r"^\s*(#|$)")
            else:
                drop = pc.equal(first, b"#")
            lines = lines.filter(pc.invert(drop))
            yield pa.record_batch([as_text(lines)], names=[name])


class ParquetReader:
    """Streams the row groups of a Parquet file (or of a decompressed temporary copy)."""

    def __init__(self, path: Path, compression: str | None) -> None:
        self.path = path
        self._copy: IO[bytes] | None = None
        source: str | IO[bytes] = str(path)
        if compression:
            self._copy = source = _decompressed_copy(path, compression)
        try:
            self.file = pq.ParquetFile(source, buffer_size=1 << 20, pre_buffer=False)
        except (OSError, pa.ArrowException) as e:
            raise InputError(f"{path}: not a Parquet file ({_first_line(e)})") from None

    def batches(
        self, columns: list[str], batch_size: int, start_row: int = 0
    ) -> Iterator[pa.RecordBatch]:
        """Record batches of `columns` from `start_row` on, skipping whole row groups first."""
        meta, first_group = self.file.metadata, 0
        while first_group < meta.num_row_groups:
            group_rows = meta.row_group(first_group).num_rows
            if start_row < group_rows:
                break
            start_row -= group_rows
            first_group += 1
        groups = list(range(first_group, meta.num_row_groups))
        if not groups:
            return
        batches = self.file.iter_batches(batch_size=batch_size, row_groups=groups, columns=columns)
        yield from skip_rows(batches, start_row)


def skip_rows(batches: Iterator[pa.RecordBatch], n: int) -> Iterator[pa.RecordBatch]:
    """`batches` without their first `n` rows (and without empty batches)."""
    for batch in batches:
        if n >= batch.num_rows:
            n -= batch.num_rows
            continue
        yield batch.slice(n) if n else batch
        n = 0


def block_size(head: bytes, batch_size: int) -> int:
    """A pyarrow block size: about one batch of lines, within MIN_BLOCK..MAX_BLOCK.

    Small blocks keep memory low (pyarrow reads several blocks ahead) at no cost in speed; the
    batches are regrouped to `batch_size` rows anyway. A block must hold the longest line.
    """
    lines = max(head.count(b"\n"), head.count(b"\r"), 1)
    wanted = min(max(len(head) / lines * batch_size, MIN_BLOCK), MAX_BLOCK)
    longest = max((len(line) for line in head.splitlines()), default=0)
    return int(max(wanted, 4 * longest))


def is_text(kind: pa.DataType) -> bool:
    """Whether a Parquet column holds text (possibly dictionary-encoded, or as bytes)."""
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    t = pa.types
    checks = (t.is_string, t.is_large_string, t.is_string_view, t.is_binary, t.is_large_binary)
    return any(check(kind) for check in (*checks, t.is_fixed_size_binary))


def unique_names(names: list[str]) -> list[str]:
    """Header names with repeats made distinct: a, a -> a, a_2."""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name}_{seen[name]}")
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


def _merge_invalid(
    reader: pa.RecordBatchReader,
    invalid: deque[tuple[int, str]],
    rebuild: Callable[[list[str]], pa.RecordBatch],
) -> Iterator[pa.RecordBatch]:
    """Interleave the rows pyarrow rejected (`invalid`: position, text) with the good ones.

    Positions count the rows after the header, empty lines excluded. pyarrow parses a block
    (calling the handler) before it returns the block's batch, so by the time a batch arrives
    every rejected row that precedes its last row is already in `invalid`.
    """
    pos = 0
    for batch in reader:
        i, n = 0, batch.num_rows
        while True:
            run: list[str] = []
            while invalid and invalid[0][0] == pos + len(run):
                run.append(invalid.popleft()[1])
            if run:
                yield rebuild(run)
                pos += len(run)
            if i == n:
                break
            if invalid and invalid[0][0] < pos:
                raise InputError("internal error: malformed rows out of order")
            k = n - i if not invalid else min(n - i, invalid[0][0] - pos)
            yield batch.slice(i, k)
            i, pos = i + k, pos + k
    if invalid:
        if [p for p, _ in invalid] != list(range(pos, pos + len(invalid))):
            raise InputError("internal error: malformed rows out of order")
        yield rebuild([text for _, text in invalid])


def _decompressed_copy(path: Path, compression: str) -> IO[bytes]:
    """An anonymous temporary file holding the decompressed bytes (Parquet needs seeking)."""
    copy = tempfile.TemporaryFile(prefix="dataset-")
    try:
        with open_stream(path, compression) as stream:
            shutil.copyfileobj(stream, copy, 1 << 20)
    except (OSError, pa.ArrowException) as e:
        copy.close()
        raise InputError(f"{path}: cannot decompress ({_first_line(e)})") from None
    copy.seek(0)
    size = copy.seek(0, 2)
    copy.seek(max(0, size - 4))
    tail = copy.read(4)
    copy.seek(0)
    if size < 12 or copy.read(4) != MAGIC["parquet"] or tail != MAGIC["parquet"]:
        copy.close()
        raise InputError(f"{path}: not a Parquet file (after {compression} decompression)")
    copy.seek(0)
    return copy


def _first_line(error: BaseException) -> str:
    """The first line of an exception's message, for one-line errors."""
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0]
