"""Standard input (`-`) as an input: its format sniffed from its bytes, read once, streamed.
Other streams are read the same way: a named pipe, `/dev/stdin`, `<(...)` (`/dev/fd/N`).

    ds = open_dataset("-")                    # cat puzzles.csv.gz | sudoku-pipeline solve - ...
    ds = open_dataset("-", format="txt")      # or say what it is
    ds = open_dataset("fifo")                 # mkfifo fifo; producer > fifo & ...

What it is, in this order: Parquet by its magic bytes; else gzip or zstd by theirs (and then
the same questions of the decompressed bytes); else text: TSV when most lines hold a tab, CSV
when most hold a comma (or a `;` or a `|`: the separator is then sniffed as a file's is) or the
first line is a header (`puzzle`, ...), else one puzzle a line.
`format` forces one of `csv`, `tsv`, `txt`, `parquet` (compression is still sniffed).

A pipe can be read once only: the first MiB is kept for sniffing and then handed to the reader
before the rest of the pipe, so text streams through in bounded memory whatever its size.
Parquet needs seeking: it is copied to an anonymous temporary file first (the disk holds it,
not memory). `Dataset.batches()` can be called once for standard input; a second call is an
`InputError`, and so is a resume (`start_row` > 0 skips rows by reading them).

A named pipe is opened once, when the job opens its inputs (reading it twice would lose what
the first reader took): that waits for a writer as long as it takes, and Ctrl-C or SIGTERM
end the wait. Its format is the one its name says, if any, else sniffed.
"""

from __future__ import annotations

import io
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import pyarrow as pa

from pipeline.errors import InputError, first_line
from pipeline.io.columns import MATCH_SHARE, SAMPLE_ROWS, looks_like_header
from pipeline.io.formats import (
    HEAD_BYTES,
    SIGNATURES,
    ByteStream,
    detect_format,
    head_text_rows,
    spool,
    text_head,
)

STDIN = "-"
NAME = "standard input"


@dataclass
class StdinInput:
    """What standard input turned out to be."""

    format: str
    compression: str | None
    head: bytes  # text only: the first whole lines, for sniffing columns
    at_eof: bool  # text only: the head is all of it
    source: StdinBytes | None  # text only
    parquet: IO[bytes] | None  # Parquet only: the temporary copy


class StdinBytes:
    """The (decompressed) bytes of standard input, to be read once: the sniffed head first."""

    def __init__(self, head: bytes, rest: ByteStream, name: str = NAME) -> None:
        self._stream: ByteStream | None = _Chain(head, rest)
        self._name = name

    def open(self) -> ByteStream:
        stream, self._stream = self._stream, None
        if stream is None:
            raise InputError(f"{self._name} can be read once only")
        return stream

    def bytes_read(self) -> int | None:
        return None  # a pipe has no size to compare with


def open_stdin(fmt: str | None, stream: IO[bytes] | None = None, name: str = NAME) -> StdinInput:
    """Sniff standard input (or `stream`, called `name`): see the module docstring."""
    if stream is None and sys.stdin is None:  # started with `<&-`
        raise InputError(f"{NAME} is closed: there is nothing to read from -")
    raw: ByteStream = stream if stream is not None else sys.stdin.buffer
    try:
        head = read_up_to(raw, HEAD_BYTES + 1)
        compression = next((c for c in ("gzip", "zstd") if head.startswith(SIGNATURES[c])), None)
        if compression:
            buffered = io.BufferedReader(_Chain(head, raw), 1 << 16)  # type: ignore[arg-type]
            raw = pa.CompressedInputStream(buffered, compression)
            head = read_up_to(raw, HEAD_BYTES + 1)
        if fmt == "parquet" or (fmt is None and head.startswith(SIGNATURES["parquet"])):
            how = f" (after {compression} decompression)" if compression else ""
            copy = spool(name, raw, head, how)
            return StdinInput("parquet", compression, b"", True, None, copy)
    except (OSError, pa.ArrowException) as e:
        raise InputError(f"{name}: cannot read ({first_line(e)})") from None
    text, at_eof = text_head(name, head)
    fmt = fmt or sniff_text_format(text)
    return StdinInput(fmt, compression, text, at_eof, StdinBytes(head, raw, name), None)


def is_stream(path: str | Path) -> bool:
    """Whether `path` names a stream, to be read once as standard input is, not a file: a
    named pipe (`/dev/stdin` and `/dev/fd/N`, as `<(...)` gives, when they are pipes), a
    character device (a terminal), a socket."""
    try:
        mode = Path(path).stat().st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISSOCK(mode)


def is_standard_input(path: Path) -> bool:
    """Whether `path` is the file this process reads as standard input (`/dev/stdin < x`)."""
    try:
        return sys.stdin is not None and path.samefile(f"/dev/fd/{sys.stdin.fileno()}")
    except (OSError, ValueError):
        return False


def open_stream(path: Path, fmt: str | None) -> StdinInput:
    """A stream (`is_stream`) opened once and sniffed as standard input is: its format `fmt`,
    else the one its name says, else sniffed. Opening a named pipe waits for a writer: Ctrl-C
    and SIGTERM end the wait (Python's `open` runs the signal handlers; pyarrow's does not)."""
    if fmt is None:
        try:
            fmt = detect_format(path)[0]
        except InputError:  # a name with no format in it: sniffed
            pass
    try:
        stream = open(path, "rb")  # noqa: SIM115 - read until the job ends
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror or e})") from None
    return open_stdin(fmt, stream, str(path))


def sniff_text_format(head: bytes) -> str:
    """`tsv`, `csv` or `txt` for a text head (see the module docstring)."""
    rows = head_text_rows(head, SAMPLE_ROWS)
    if not rows:
        return "txt"
    for fmt, sep in (("tsv", "\t"), ("csv", ","), ("csv", ";"), ("csv", "|")):
        if sum(sep in row for row in rows) >= MATCH_SHARE * len(rows):
            return fmt
    return "csv" if looks_like_header([[row.strip()] for row in rows]) else "txt"


def read_up_to(stream: ByteStream, size: int) -> bytes:
    """`size` bytes, or fewer at the end (a pipe or an HTTP response may give fewer at a time)."""
    parts, got = [], 0
    while got < size:
        data = stream.read(size - got)
        if not data:
            break
        parts.append(data)
        got += len(data)
    return b"".join(parts)


class _Chain(io.RawIOBase):
    """`head`, then the rest of `rest`: bytes already read put back in front of a stream."""

    def __init__(self, head: bytes, rest: ByteStream) -> None:
        self._head, self._rest = memoryview(head), rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        if len(self._head):
            n = min(len(buffer), len(self._head))
            buffer[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        data = self._rest.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def read(self, size: int = -1, /) -> bytes:
        if size < 0 or not len(self._head):
            return self._rest.read(size) if size >= 0 else self._read_all()
        return super().read(size) or b""

    def _read_all(self) -> bytes:
        parts = [bytes(self._head)]
        self._head = memoryview(b"")
        while data := self._rest.read(1 << 20):
            parts.append(data)
        return b"".join(parts)
