"""The one writer: every output file goes through here, in one of two sinks (the run's
checkpoint, `run.checkpoint`, is the third: parts kept for `--resume`, joined by `run.join`).

    data = encode(table, fmt)                       # a worker's part: Parquet, CSV or JSON
                                                    # Lines bytes, or a folder's arrays (npy)
    out = PartWriter(target, schema)                # parts joined into the output as they come
    out.add(data, rows); out.commit(rows, empty, metadata)
    out = TableWriter(target, schema, group_rows)   # tables made here (findings, generated
    out.add(table); out.commit(metadata)            # puzzles, bench results, a split's rows)
    write_tables(target, schema, tables, metadata)  # a TableWriter in one call

A target is a file, stdout (`Target.path` None) or a folder of arrays (`npy`, `io.arrays`;
`hrm`, a split in HRM's layout, `io.hrm_folders`).
Parquet is written one way (`parquet_options`): zstd, page checksums, dictionaries only for
the dictionary columns; a Parquet output is its parts joined by their footers
(`io.parquet_concat`: nothing decoded), with the run's metadata under `runinfo.METADATA_KEY`
in its footer and in its Arrow schema, added at the end (so a run's figures go in). Text
holds every column in a form text can hold (`text_columns`), one header line for CSV.

A file is written to a temporary name beside it (`.NAME.tmp-PID`, cleared by the next run
when a killed one left it), flushed to disk and renamed into place at `commit`: readers see
the old file or the whole new one, never a part; `close` without a commit leaves nothing.
Stdout (`-o -`) is written as the parts come, through `stdout_bytes()`, which takes every
byte or says why not. Scratch files a job reads back itself are Arrow files, lz4-compressed:
a `Spool` of tables read back by number (validate's ids and findings), a file apiece
(`spool`, `read_spool`: split's kept rows and buckets).
"""

import contextlib
import io
import json
import os
import shutil
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.errors import InputError
from pipeline.io.array_folders import NpyFolder
from pipeline.io.arrays import column_arrays
from pipeline.io.hrm_folders import HrmSet, write_identifiers
from pipeline.io.output import Target as Target  # re-exported: where an output goes
from pipeline.io.parquet_concat import Joiner
from pipeline.io.runinfo import METADATA_KEY
from pipeline.io.sidecars import clear_stale_temporaries, temporary_name
from pipeline.io.sidecars import fsync_dir as fsync_dir  # re-exported: folders written whole
from pipeline.io.sidecars import write_atomically as write_atomically  # and the checkpoint
from pipeline.io.text_columns import for_text, text_bytes

# format -> a part's file suffix (a folder of arrays' parts: `io.array_parts`)
EXTENSIONS = {
    "parquet": "parquet",
    "csv": "csv",
    "jsonl": "jsonl",
    "npy": "arrays",
    "hrm": "arrays",
}
_SPOOL = pa.ipc.IpcWriteOptions(compression="lz4")


def parquet_options(schema: pa.Schema) -> dict[str, Any]:
    """How this tool writes Parquet (`pq.write_table` / `pq.ParquetWriter` keywords, for a
    schema): zstd, page checksums, and dictionary encoding only for the dictionary
    columns. Puzzles, solutions and messages are nearly all distinct: trying a dictionary on
    them first cost 0.1 s per 1M findings (0.29 -> 0.19 s) and made the file 45% larger."""
    dictionaries = [f.name for f in schema if pa.types.is_dictionary(f.type)]
    return dict(compression="zstd", use_dictionary=dictionaries or False, write_page_checksum=True)


def metadata_entry(metadata: dict[str, Any]) -> dict[bytes, bytes]:
    """A run's metadata as a Parquet key-value entry (`runinfo.METADATA_KEY`: JSON)."""
    return {METADATA_KEY: json.dumps(metadata, sort_keys=True, default=str).encode()}


def encode(table: pa.Table, fmt: str, header: bool = True) -> Any:
    """`table` as a part of an output in `fmt`: a whole Parquet file, CSV (with a header line
    when `header`) or JSON Lines text (each column in a form text can hold), as bytes; for a
    folder of arrays (`npy`), its columns as the arrays they become (`io.arrays`)."""
    if fmt == "parquet":
        sink = io.BytesIO()
        pq.write_table(table, sink, **parquet_options(table.schema))
        return sink.getvalue()
    if fmt == "npy":
        return column_arrays(table)
    if fmt in ("csv", "jsonl"):
        return text_bytes(table, fmt, header)
    raise ValueError(f"unknown format {fmt!r}")


def as_text(column: pa.ChunkedArray | pa.Array) -> pa.Array:
    """A column's values as text, as a CSV output writes them (ids of any type, say)."""
    table = for_text(pa.table({"v": column}), "csv")
    return table.column(0).combine_chunks().cast(pa.string())


class PartWriter:
    """Parts (`encode`d, in order) joined into `target` as they come: Parquet by their footers,
    text one after the other, arrays appended to a folder's files (`schema`: the table's, for
    a folder), or groups to a split's folder in HRM's layout (`hrm`: parts of `HrmArrays`,
    `schema` the columns beside; `writers`: threads that write its files, `HrmSet`). `commit`
    ends the output with the run's metadata and puts a file or folder in place (and, for HRM,
    `identifiers.json` beside the folder unless one is there); `close` (always) removes what
    a run that did not commit left."""

    def __init__(self, target: Target, schema: pa.Schema | None = None, writers: int = 0) -> None:
        self.target = target
        self.rows = 0
        self._parts = 0
        self._file: BinaryIO | None = None
        self._folder: NpyFolder | None = None
        self._hrm: HrmSet | None = None
        self._joiner: Joiner | None = None
        self.skipped: list[str] = []  # columns a folder of arrays leaves out (text)
        if target.format == "npy":
            assert target.path is not None and schema is not None
            self._folder = NpyFolder(target.path, schema).__enter__()
            self.skipped = self._folder.skipped
            return
        if target.format == "hrm":
            assert target.path is not None and schema is not None
            self._hrm = HrmSet(target.path, schema, writers).__enter__()
            self.skipped = self._hrm.folder.skipped
            return
        if target.path is None:
            self.out = stdout_bytes()
        else:
            clear_stale_temporaries(target.path)
            self._tmp = temporary_name(target.path)
            with self._named_errors():
                self.out = self._file = open(self._tmp, "wb")  # noqa: SIM115 - closed by close()
        if target.format == "parquet":
            self._joiner = Joiner(self.out)

    def add(self, data: Any, rows: int) -> None:
        """Append one part of `rows` rows."""
        with self._named_errors():
            if self._folder is not None:
                self._folder.append(data)
            elif self._hrm is not None:
                self._hrm.append(data.inputs, data.labels, data.sizes, data.extras, encoded=True)
            elif self._joiner is not None:
                self._joiner.add(data)
            else:
                self.out.write(data)
        self.rows += rows
        self._parts += 1

    def commit(self, rows: int, empty: pa.Table, metadata: dict[str, Any]) -> None:
        """End the output (`empty`: its table of no rows, written when no part came), with the
        run's `metadata`, and put it in place; refuses when the parts do not hold `rows`."""
        if self.rows != rows:
            raise InputError(f"wrote {self.rows:,} rows where the run made {rows:,}")
        with self._named_errors():
            if self._folder is not None:
                self._folder.commit(metadata)
                return
            if self._hrm is not None:
                assert self.target.path is not None
                self._hrm.commit(metadata)
                write_identifiers(self.target.path.parent, only_if_absent=True)
                return
            if self._joiner is not None and self._joiner.footers:
                self._joiner.finish(metadata_entry(metadata))
            elif not self._parts:
                _empty_output(self.out, self.target.format, empty, metadata)
            self.out.flush()
            if self._file is not None:
                os.fsync(self._file.fileno())
                self._file.close()
                self._file = None
                assert self.target.path is not None
                os.replace(self._tmp, self.target.path)
                fsync_dir(self.target.path.parent)

    def close(self) -> None:
        """Leave nothing of an output that was not committed (a no-op after `commit`)."""
        if self._folder is not None:
            self._folder.__exit__(None, None, None)
        if self._hrm is not None:
            self._hrm.__exit__(None, None, None)
        if self._file is not None:
            self._file.close()
            self._file = None
            with contextlib.suppress(OSError):
                self._tmp.unlink()

    @contextlib.contextmanager
    def _named_errors(self) -> Iterator[None]:
        """A full disk or a file-size limit, in one line naming the output (stdout's errors,
        a closed pipe say, go on as they are)."""
        try:
            yield
        except OSError as e:
            if self.target.path is None:
                raise
            raise InputError(f"{self.target.path}: {e.strerror or e} while writing it") from None


class TableWriter:
    """Tables (of `schema`, or cast to it) written into `target` as they come, encoded here:
    consecutive tables gathered until they hold `group_rows` rows (a Parquet row group each;
    1: every table on its own); the schema alone when no row comes. The same `commit` and
    `close` as `PartWriter`, which it writes through."""

    def __init__(self, target: Target, schema: pa.Schema, group_rows: int = 1) -> None:
        self.schema = schema
        self.group_rows = group_rows
        self.rows = 0
        self._pending: list[pa.Table] = []
        self._size = 0
        self._out = PartWriter(target, schema)
        self.skipped = self._out.skipped

    def add(self, table: pa.Table) -> None:
        if not table.num_rows:
            return
        self._pending.append(table)
        self._size += table.num_rows
        if self._size >= self.group_rows:
            self._flush()

    def _flush(self) -> None:
        if not self._pending:
            return
        group = self._pending[0] if len(self._pending) == 1 else pa.concat_tables(self._pending)
        self._pending, self._size = [], 0
        group = group.cast(self.schema)
        self._out.add(encode(group, self._out.target.format, header=not self.rows), group.num_rows)
        self.rows += group.num_rows

    def commit(self, metadata: dict[str, Any] | None = None) -> int:
        """Write what is gathered, end the output with `metadata` and put it in place; returns
        the rows written."""
        self._flush()
        empty = self.schema.empty_table()
        if not self.rows and self._out.target.format == "npy":  # the columns alone
            self._out.add(encode(empty, "npy"), 0)
        self._out.commit(self.rows, empty, metadata or {})
        return self.rows

    def close(self) -> None:
        self._out.close()


def write_tables(
    target: Target,
    schema: pa.Schema,
    tables: Iterable[pa.Table],
    metadata: dict[str, Any] | None = None,
    group_rows: int = 1,
) -> int:
    """Write `tables` to `target` in its format (`TableWriter`), with `metadata` (the run's,
    for Parquet and folders); returns the rows written."""
    out = TableWriter(target, schema, group_rows)
    try:
        for table in tables:
            out.add(table)
        return out.commit(metadata)
    finally:
        out.close()


def join_parts(
    sink: BinaryIO, fmt: str, parts: list[Path], empty: pa.Table, metadata: dict[str, Any]
) -> None:
    """Parts encoded by `encode` (files, in order) as one output in `sink`: Parquet by their
    footers, nothing decoded, with the run's `metadata`; text by concatenation (the first
    part holds the header). `empty`: the table of no rows, written when there is no part."""
    if not parts:
        _empty_output(sink, fmt, empty, metadata)
        return
    if fmt == "parquet":
        joiner = Joiner(sink)
        for path in parts:
            joiner.add(path)
        joiner.finish(metadata_entry(metadata))
        return
    for path in parts:
        with open(path, "rb") as source:
            shutil.copyfileobj(source, sink, 1 << 22)


def _empty_output(sink: BinaryIO, fmt: str, empty: pa.Table, metadata: dict[str, Any]) -> None:
    """An output of no rows: the schema and the run's metadata (Parquet), a header (CSV)."""
    if fmt == "parquet":
        empty = empty.replace_schema_metadata(metadata_entry(metadata))
        pq.write_table(empty, sink, **parquet_options(empty.schema))
    else:
        sink.write(encode(empty, fmt, header=True))


@contextlib.contextmanager
def spool(path: Path, schema: pa.Schema) -> Iterator[pa.ipc.RecordBatchFileWriter]:
    """A scratch Arrow file of `schema` that its job reads back (`read_spool`): lz4, no fsync
    (a killed run's scratch is cleared by the next)."""
    with pa.ipc.new_file(str(path), schema, options=_SPOOL) as writer:
        yield writer


def read_spool(path: Path) -> pa.Table:
    """A scratch Arrow file (`spool`), whole."""
    with pa.OSFile(os.fsencode(path), "rb") as source:
        return pa.ipc.open_file(source).read_all()


class Spool:
    """Tables kept on disk in one scratch file while a job runs, each read back by the number
    `append` gave it, whenever (more may be appended meanwhile): an Arrow stream apiece, lz4,
    one after the other. `close` removes the file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: BinaryIO = open(path, "w+b")  # noqa: SIM115 - closed by close()
        self._at: list[int] = []

    def append(self, table: pa.Table) -> int:
        self._at.append(self._file.tell())
        with pa.ipc.new_stream(self._file, table.schema, options=_SPOOL) as writer:
            writer.write_table(table)
        return len(self._at) - 1

    def read(self, number: int) -> pa.Table:
        self._file.flush()
        with open(self.path, "rb") as source:
            source.seek(self._at[number])
            return pa.ipc.open_stream(source).read_all()

    def close(self) -> None:
        self._file.close()
        self.path.unlink(missing_ok=True)


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
