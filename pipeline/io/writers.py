"""Writing an output: tables out as Parquet, CSV or JSON Lines, to a file atomically or to
stdout. Every job writes through here.

    write_tables(target, schema, tables, metadata)    # a stream of tables: validate's findings,
                                                      # generate's puzzles, bench's results
    encode(table, fmt, header=True)                   # one table as bytes: a worker's part
    join_parts(sink, fmt, paths, empty, metadata)     # encoded parts as one output (Parquet by
                                                      # their footers, text by concatenation)
    PartStream(target)                                # encoded parts to stdout as they come

Parquet is written one way (`parquet_options`): zstd, page checksums, dictionaries only for the
dictionary columns, and the run's metadata under `runinfo.METADATA_KEY`. Text holds every
column in a form text can hold (`text_columns`).

A file is written to a temporary name beside its destination, flushed to disk, then renamed
over it (`write_atomically`): readers see the old file or the whole new one, never a part, even
after `kill -9`. Stdout (`-o -`) goes through `stdout_bytes()`, which takes every byte or says
why not.
"""

import io
import json
import os
import shutil
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, BinaryIO

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.io.output import Target
from pipeline.io.parquet_concat import Joiner
from pipeline.io.runinfo import METADATA_KEY
from pipeline.io.sidecars import temporary_name
from pipeline.io.text_columns import for_text

EXTENSIONS = {"parquet": "parquet", "csv": "csv", "jsonl": "jsonl"}  # format -> file suffix


def parquet_options(schema: pa.Schema) -> dict[str, Any]:
    """How this tool writes Parquet (`pq.write_table` / `pq.ParquetWriter` keywords, for a
    schema): zstd, page checksums, and dictionary encoding only for the dictionary
    columns. Puzzles, solutions and messages are nearly all distinct: trying a dictionary on
    them first cost 0.1 s per 1M findings (0.29 -> 0.19 s) and made the file 45% larger."""
    dictionaries = [f.name for f in schema if pa.types.is_dictionary(f.type)]
    return dict(compression="zstd", use_dictionary=dictionaries or False,
                write_page_checksum=True)  # fmt: skip


def metadata_entry(metadata: dict[str, Any]) -> dict[bytes, bytes]:
    """A run's metadata as a Parquet key-value entry (`runinfo.METADATA_KEY`: JSON)."""
    return {METADATA_KEY: json.dumps(metadata, sort_keys=True, default=str).encode()}


def encode(table: pa.Table, fmt: str, header: bool = True) -> bytes:
    """`table` as a whole Parquet file, or as CSV (with a header line when `header`) or JSON
    Lines text (each column in a form text can hold: `io.text_columns`)."""
    sink = io.BytesIO()
    if fmt == "parquet":
        pq.write_table(table, sink, **parquet_options(table.schema))
    elif fmt in ("csv", "jsonl"):
        import polars as pl  # text outputs only: solving to Parquet does not import polars

        frame = pl.from_arrow(for_text(table, fmt))
        assert isinstance(frame, pl.DataFrame)
        if fmt == "csv":
            frame.write_csv(sink, include_header=header)
        else:
            frame.write_ndjson(sink)
    else:
        raise ValueError(f"unknown format {fmt!r}")
    return sink.getvalue()


def write_tables(
    target: Target,
    schema: pa.Schema,
    tables: Iterable[pa.Table],
    metadata: dict[str, Any] | None = None,
    group_rows: int = 1,
) -> int:
    """Write `tables` (cast to `schema`) to `target` in its format: Parquet with `metadata`
    (the run's), CSV with one header line, JSON Lines; a file atomically, stdout as the tables
    come. Consecutive tables are gathered until they hold `group_rows` rows (a Parquet row
    group each; 1: every table on its own). The schema alone when there is no row. Returns the
    rows written."""
    if metadata is not None:
        schema = schema.with_metadata(metadata_entry(metadata))
    written = 0

    def write(sink: BinaryIO) -> None:
        nonlocal written
        writer = None
        if target.format == "parquet":
            writer = pq.ParquetWriter(sink, schema, **parquet_options(schema))
        try:
            for group in _groups(tables, group_rows):
                group = group.cast(schema)
                if writer is not None:
                    writer.write_table(group)
                else:
                    sink.write(encode(group, target.format, header=not written))
                written += group.num_rows
            if not written:
                if writer is not None:
                    writer.write_table(schema.empty_table())
                else:
                    sink.write(encode(schema.empty_table(), target.format, header=True))
        finally:
            if writer is not None:
                writer.close()

    write_to(target, write)
    return written


def _groups(tables: Iterable[pa.Table], rows: int) -> Iterable[pa.Table]:
    """`tables` with rows, gathered until each group holds at least `rows` rows."""
    pending: list[pa.Table] = []
    size = 0
    for table in tables:
        if not table.num_rows:
            continue
        pending.append(table)
        size += table.num_rows
        if size >= rows:
            yield pa.concat_tables(pending) if len(pending) > 1 else pending[0]
            pending, size = [], 0
    if pending:
        yield pa.concat_tables(pending) if len(pending) > 1 else pending[0]


def write_to(target: Target, write: Callable[[BinaryIO], object]) -> None:
    """`write(sink)` into `target`: a file, atomically, or stdout."""
    if target.path is None:
        write(stdout_bytes())
    else:
        write_atomically(target.path, write)


def join_parts(
    sink: BinaryIO, fmt: str, parts: list[Path], empty: pa.Table, metadata: dict[str, Any]
) -> None:
    """Parts encoded by `encode` (files, in order) as one output in `sink`: Parquet by their
    footers, nothing decoded, with the run's `metadata`; text by concatenation (the first
    part holds the header). `empty`: the table of no rows, written when there is no part."""
    if fmt == "parquet":
        meta = metadata_entry(metadata)
        if not parts:
            empty = empty.replace_schema_metadata(meta)
            pq.write_table(empty, sink, **parquet_options(empty.schema))
            return
        joiner = Joiner(sink)
        for path in parts:
            joiner.add(path)
        joiner.finish(meta)
        return
    if not parts:
        sink.write(encode(empty, fmt, header=True))
    for path in parts:
        with open(path, "rb") as source:
            shutil.copyfileobj(source, sink, 1 << 22)


class PartStream:
    """Encoded parts written to stdout as they come, in order; `finish` ends the output (the
    Parquet footer, with the run's metadata). Nothing is kept: a run to stdout cannot resume."""

    def __init__(self, fmt: str) -> None:
        self.format = fmt
        self.out = stdout_bytes()
        self._joiner = Joiner(self.out) if fmt == "parquet" else None
        self.rows = 0

    def add(self, data: bytes, rows: int) -> None:
        if self._joiner is not None:
            self._joiner.add(data)
        else:
            self.out.write(data)
        self.rows += rows

    def finish(self, empty: pa.Table, metadata: dict[str, Any]) -> None:
        if self._joiner is not None and self._joiner.footers:
            self._joiner.finish(metadata_entry(metadata))
        elif self.rows == 0:
            join_parts(self.out, self.format, [], empty, metadata)
        self.out.flush()


def fsync_dir(path: Path) -> None:
    """Make a rename inside `path` durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomically(path: Path, write: Callable[[Any], object]) -> None:
    """Call `write(file)` on a temporary file beside `path`, fsync it, and rename it to `path`:
    readers see the old file or the whole new one, never a part (a kill -9 included). An
    `OSError` of the writing (a full disk, a file-size limit) names `path`."""
    tmp = temporary_name(path)
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as e:
        if e.filename is not None or e.errno is None:
            raise
        raise OSError(e.errno, e.strerror, str(path)) from None
    finally:
        tmp.unlink(missing_ok=True)
    fsync_dir(path.parent)


class _Descriptor(io.RawIOBase):
    """A file descriptor that takes every byte of each write, or raises (`BrokenPipeError`)."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd
        self._at = 0

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        view = memoryview(data).cast("B")
        while view:
            taken = os.write(self._fd, view)
            view = view[taken:]
            self._at += taken
        return len(memoryview(data).cast("B"))

    def tell(self) -> int:
        return self._at


def stdout_bytes() -> Any:
    """Binary stdout for a job's results.

    `sys.stdout.buffer` is not enough: when the reader closes the pipe in the middle of one large
    write (`solve -o - | head -1`), Linux returns the bytes taken so far, and CPython 3.11's
    buffered writer reports the whole write done, so the job ended "successfully" with most of
    its output gone. Here each write loops until every byte is taken, and a closed pipe is an
    error (the CLI's quiet exit 141). Where stdout is no file (a test's captured output), its
    buffer is used as it is.
    """
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return sys.stdout.buffer
    sys.stdout.flush()
    return _Descriptor(fd)
