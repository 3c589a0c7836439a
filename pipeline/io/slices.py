"""An input cut into slices that workers read on their own (the Dask executor's plan).

    plan = plan_slices(inputs, rows_per_slice=200_000)   # on the client: no row read
    # on a worker, with the opened input sent as a recipe (no file handle in it):
    n = count_rows(recipe, plan[k])                       # text slices: their rows, counted
    for batch in slice_batches(recipe, plan[k], first_row, batch_size): ...

How an input is cut:

* Parquet (not compressed): runs of whole row groups, about `rows_per_slice` rows each; the
  footer counts their rows, so each slice knows its first row before any is read.
* CSV, TSV and `.txt` (not compressed): byte ranges of about `rows_per_slice` rows (from the
  bytes per line of the file's head). A line belongs to the slice where it starts: a slice
  begins after the first line break at or past its start (at 0, at 0) and ends with the line
  that holds its last byte, whole. Every byte of the file is in one slice's lines, and no line
  in two. The rows of a slice are known once read: `count_rows` counts them (the rules of
  `lines.py`: non-empty lines; in `.txt` not blank, not `#` comments) and the client adds them
  up before any slice is solved, so each slice knows its first row.
* Compressed files (`.gz`, `.zst`) cannot be cut: one slice a file, counted as a text slice.

The header, the separator and the columns are the client's decision (`open_dataset`, once):
the recipe carries them, and only the first slice of a file with a header skips its first
line. An input at a URL is cut the same way, its slices read by the workers at the URL
(`url_slices.py`: the slice carries the URL and the file's identity, so that a worker that
finds the file changed fails the run); one whose server takes no range requests is not sliced,
nor are standard input and named pipes (`sliceable`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pyarrow as pa

from pipeline.errors import InputError
from pipeline.io.dataset import Dataset
from pipeline.io.formats import FileBytes
from pipeline.io.inputs import Inputs
from pipeline.io.lines import BOM, LineStream, split_lines, text_lines
from pipeline.io.readers import DelimitedReader, ParquetReader, TextReader
from pipeline.io.remote import RANGE_READ, RemoteBytes, remote_parquet
from pipeline.io.sidecars import write_atomically
from pipeline.io.url_slices import UrlFile, url_sliceable

_BREAKS = b"\n\r"
_SCAN = 1 << 16  # bytes read at a time looking for a line's end
_URL_SCAN = 1 << 13  # at a URL: each read is a request, and lines are short


@dataclass(frozen=True)
class Slice:
    """A piece of input `source` (its index in the inputs): row groups `groups` of a Parquet
    file, or the lines starting in bytes `begin` .. `end` - 1 of a text (`end` -1: the whole
    file, decompressed). `rows` and `first_row` are known for Parquet, else counted. `url`:
    the file at a URL to read it from (`path` is then the URL as shown)."""

    source: int
    path: str
    begin: int = 0
    end: int = -1
    groups: tuple[int, ...] = ()
    rows: int | None = None
    first_row: int | None = None
    url: UrlFile | None = None

    @property
    def parquet(self) -> bool:
        return bool(self.groups)


def sliceable(ds: Dataset) -> bool:
    """Whether workers can read the input themselves: a file, or a URL read by ranges (or
    compressed: one slice, read whole), not a stream (`url_slices.url_sliceable`)."""
    if ds.url is not None:
        return url_sliceable(ds)
    return not ds.stream


def recipe(ds: Dataset) -> Dataset:
    """The opened input without its reader and its remote file (file handles and connections
    stay here): what a worker needs to read a slice as the client would (columns, header,
    separator, id type). A URL's file travels in each slice (`Slice.url`)."""
    return replace(ds, _reader=None, _rows_read=[0], _ids_said=[False], _remote=None)


def plan_slices(
    inputs: Inputs, rows_per_slice: int, slice_bytes: int | None = None, workers: int = 0
) -> list[Slice]:
    """The slices of every input, in input order (see the module docstring); `slice_bytes`:
    the bytes of a text slice (default: `rows_per_slice` rows' worth, 4 KiB at least).

    `workers`: the worker threads that will take the slices in turn (0: every slice about
    `rows_per_slice` rows). Given, the slices shrink towards the end (`shrinking_rows`), so
    that no worker is left alone with a long last slice while the others wait."""
    left = _rows_after(inputs)
    slices: list[Slice] = []
    for source, ds in enumerate(inputs.datasets):
        if ds._reader is None:  # no rows at all
            continue
        url = None if ds.remote_file is None else UrlFile.of(ds.remote_file)
        path = str(ds.path.resolve()) if url is None else url.name
        whole = Slice(source, path, url=url)

        def rows_next(rows_left: float, after: float = left[source]) -> int:
            return shrinking_rows(rows_left + after, rows_per_slice, workers)

        if isinstance(ds._reader, ParquetReader) and ds.compression is None:
            slices += _row_group_slices(whole, ds._reader, rows_next)
        elif ds.format == "parquet":  # compressed: the client spooled it, and counted
            slices.append(replace(whole, rows=ds.num_rows, first_row=0))
        elif ds.compression is not None:
            slices.append(whole)
        else:
            row_bytes = ds._row_bytes or 100.0
            size = os.stat(path).st_size if url is None else url.size
            at = 0
            while at < size:
                rows = rows_next((size - at) / row_bytes)
                step = slice_bytes or max(1 << 12, int(rows * row_bytes))
                slices.append(replace(whole, begin=at, end=min(at + step, size)))
                at += step
    return slices


TAIL_ROWS_PER_WORKER = 400  # the smallest slice grows with the workers (`shrinking_rows`)


def shrinking_rows(rows_left: float, most: int, workers: int) -> int:
    """The rows of the next slice when `rows_left` rows are still to cut: `most`, or with
    `workers`, at most a share of what is left (1 / (4 x workers)), and at least `most` / 16
    or `TAIL_ROWS_PER_WORKER` x workers, whichever is more (never more than `most`).

    Workers take slices as they finish their last, so a run ends when its last slice does:
    with slices of `most` rows throughout, a worker could be left alone with a long one. On
    979,240 hard rows (17-clue and forum_hardest_1905_11+), 2 worker threads, the fifth and
    last slice of 200,000 rows ran 5.1 s alone: `solve --executor dask` took 20.6 s against
    17.9 s with local threads. Shrinking, the last slices hold 12,500 rows, and the workers
    ended 0.5 s apart. (A share of 1 / (2 x workers) left them 1.3 s apart: each worker holds
    two slices queued, `DaskExecutor.in_flight_per_worker`.)

    The floor keeps the scheduler's pace (docs/guide/dask.md: about a thousand tasks a
    second): a core takes some 400,000 easy rows a second, so slices of 400 rows a worker
    ask for at most a thousand tasks a second however many workers there are; from 500
    workers on (200,000 rows: `most` by default) the slices do not shrink at all."""
    if workers <= 0:
        return most
    least = min(most, max(most // 16, TAIL_ROWS_PER_WORKER * workers))
    return max(1, least, min(most, int(rows_left // (4 * workers))))


def _rows_after(inputs: Inputs) -> list[float]:
    """For each input, the rows of the inputs after it (estimated; 0 where unknown)."""
    rows = [float(ds.estimated_rows() or 0) for ds in inputs.datasets]
    return [sum(rows[i + 1 :]) for i in range(len(rows))]


def _row_group_slices(
    whole: Slice, reader: ParquetReader, rows_next: Callable[[float], int]
) -> list[Slice]:
    """Runs of whole row groups of the file of `whole`, by its footer (at a URL: read once,
    by the client, by range requests), each of `rows_next(rows left)` rows or more."""
    meta = reader.file.metadata
    slices, groups, rows, first = [], [], 0, 0
    target = rows_next(meta.num_rows)
    for g in range(meta.num_row_groups):
        groups.append(g)
        rows += meta.row_group(g).num_rows
        if rows >= target or g == meta.num_row_groups - 1:
            slices.append(replace(whole, groups=tuple(groups), rows=rows, first_row=first))
            first, groups, rows = first + rows, [], 0
            target = rows_next(meta.num_rows - first)
    return [s for s in slices if s.rows]


def _header_end(path: str) -> int:
    """Where the first line that is not empty (the header) ends, past its break."""
    with open(os.fsencode(path), "rb") as f:
        head = f.read(1 << 20)
    at = len(BOM) if head.startswith(BOM) else 0
    while at < len(head) and head[at] in _BREAKS:
        at += 1
    ends = [i for i in (head.find(b, at) for b in (b"\n", b"\r")) if i >= 0]
    return min(ends) + 1 if ends else len(head)


class RangeBytes:
    """The lines of a file that start in bytes `begin` .. `end` - 1, as a byte source: the
    file at `path`, or at `url` (read by range requests)."""

    def __init__(self, path: str, begin: int, end: int, url: UrlFile | None = None) -> None:
        self.path, self.begin, self.end, self.url = path, begin, end, url

    def bytes_read(self) -> int | None:
        return None

    def open(self) -> _Bounded:
        if self.url is None:
            f: Any = open(os.fsencode(self.path), "rb", buffering=0)  # noqa: SIM115 - _Bounded's
            size, scan = os.fstat(f.fileno()).st_size, _SCAN
        else:
            f, size, scan = self.url.open_slice(), self.url.size, _URL_SCAN
        try:
            if self.end > size:  # planned within the file: it is shorter now
                raise _cut_short(self.path, self.end - size)
            first = self.begin if self.begin == 0 else _line_start(f, self.begin, scan)
            # the end of the line holding byte `end` - 1 (past its break; the file's end)
            last = size if self.end < 0 or self.end >= size else _line_start(f, self.end, scan)
        except BaseException:
            f.close()
            raise
        f.seek(first)
        # past the file's start, an empty line first (no row): a line there that starts with
        # the bytes of a byte order mark keeps them, as it does read from the start
        return _Bounded(f, max(0, last - first), b"\n" if self.begin else b"", self.path)


def _cut_short(path: str, missing: int) -> InputError:
    return InputError(
        f"{path}: ended {missing:,} bytes early (it changed while the run read it); run again"
    )


def _line_start(f: object, at: int, scan: int = _SCAN) -> int:
    """The first place at or past `at` where a line starts (after a break; the file's end)."""
    f.seek(at - 1)  # type: ignore[attr-defined]
    while block := f.read(scan):  # type: ignore[attr-defined]
        found = [i for i in (block.find(b) for b in (b"\n", b"\r")) if i >= 0]
        if found:
            return at - 1 + min(found) + 1
        at += len(block)
    return at - 1


class _Bounded:
    """`prefix`, then a file read from where it stands for `left` bytes exactly: one that ends
    before them changed under the run (`InputError`, naming `path`), never a slice cut short."""

    def __init__(self, f: object, left: int, prefix: bytes = b"", path: str = "") -> None:
        self.f, self.left, self.prefix, self.path = f, left, prefix, path

    def read(self, size: int = -1, /) -> bytes:
        if self.prefix:
            data, self.prefix = self.prefix, b""
            return data
        size = self.left if size < 0 else min(size, self.left)
        data = self.f.read(size) if size else b""  # type: ignore[attr-defined]
        if size and not data:
            raise _cut_short(self.path, self.left)
        self.left -= len(data)
        return data

    def close(self) -> None:
        self.f.close()  # type: ignore[attr-defined]


class _Groups(ParquetReader):
    """A Parquet file's reader limited to the row groups of a slice (a file at a URL: read by
    range requests)."""

    def __init__(self, piece: Slice) -> None:
        if piece.url is None:
            super().__init__(piece.path, piece.path)
        else:
            super().__init__(piece.path, piece.url.open_slice(), buffer_size=RANGE_READ)
        self.groups = piece.groups

    def batches(
        self, columns: list[str], batch_size: int, start_row: int = 0
    ) -> Iterator[pa.RecordBatch]:
        """The batches of `columns` of the slice's row groups (`start_row` is always 0)."""
        for group in self.groups:
            yield from self.group_batches(group, columns, batch_size)


def _reader(ds: Dataset, piece: Slice, copy: Path | None = None) -> object:
    url = piece.url
    if piece.parquet:
        return _Groups(piece)
    if ds.format == "parquet":  # compressed: one slice, decompressed to a temporary file
        if url is not None:
            return remote_parquet(url.open(seeking=False), ds.compression)
        return ParquetReader.of_file(Path(piece.path), ds.compression)
    source: object
    if copy is not None:  # a URL's text slice, as its count kept it (`count_rows`)
        source = FileBytes(copy, COPY_COMPRESSION)
    elif piece.end < 0:  # compressed: one slice, read whole
        if url is not None:
            source = RemoteBytes(url.open(seeking=False), ds.compression)
        else:
            source = FileBytes(Path(piece.path), ds.compression)
    else:
        source = RangeBytes(piece.path, piece.begin, piece.end, url)
    if ds.format == "txt":
        return TextReader(source)  # type: ignore[arg-type]
    header = ds.has_header and piece.begin == 0
    return DelimitedReader(
        source,  # type: ignore[arg-type]
        delimiter=ds.separator or ",",
        names=ds.columns,
        header=header,
    )


def kept_at_url(piece: Slice) -> bool:
    """Whether a slice is a text slice of a URL: its count keeps a copy (`count_rows`)."""
    return piece.url is not None and piece.end >= 0 and not piece.parquet


def count_rows(ds: Dataset, piece: Slice, copy: Path | None = None) -> int:
    """The rows of a text slice (or a whole compressed file), by the readers' rules, without
    parsing them into cells. `copy`: where to keep the bytes of a URL's text slice
    (`kept_at_url`), compressed, so that reading it (`slice_batches`) downloads nothing
    again."""
    if piece.rows is not None:
        return piece.rows
    reader = _reader(ds, piece)
    source = reader.source  # type: ignore[attr-defined]
    rows = 0
    with closing(source.open()) as stream:
        kept = _Kept(stream) if copy is not None and kept_at_url(piece) else None
        for block in LineStream(kept or stream).blocks():
            lines = split_lines(block)
            rows += len(text_lines(lines)) if ds.format == "txt" else len(lines)
    if kept is not None:
        assert copy is not None
        data = kept.compressed()
        write_atomically(copy, lambda f: f.write(data))
    skip = int(ds.format != "txt" and ds.has_header and piece.begin == 0)
    return max(0, rows - skip)


def slice_batches(
    ds: Dataset, piece: Slice, first_row: int, batch_size: int, copy: Path | None = None
) -> Iterator[pa.RecordBatch]:
    """The slice's rows as the input's batches (`Dataset.batches`), of `batch_size` rows,
    their `row` numbered from `first_row`; from `copy` (what `count_rows` kept of a URL's
    text slice) when given."""
    opened = replace(ds, _reader=_reader(ds, piece, copy), batch_size=batch_size)
    yield from opened.batches(numbered_from=first_row)


COPY_COMPRESSION = "zstd"  # a URL's text slice kept: about 40% of its size (puzzle CSVs)


class _Kept:
    """A stream read through, its bytes kept as they pass (a URL's text slice, counted)."""

    def __init__(self, stream: Any) -> None:
        self.stream, self.blocks = stream, bytearray()

    def read(self, size: int = -1, /) -> bytes:
        data = self.stream.read(size)
        self.blocks += data
        return bytes(data)

    def compressed(self) -> bytes:
        return bytes(pa.compress(bytes(self.blocks), COPY_COMPRESSION, asbytes=True))


__all__ = [
    "RangeBytes",
    "Slice",
    "count_rows",
    "kept_at_url",
    "plan_slices",
    "recipe",
    "slice_batches",
    "sliceable",
]
