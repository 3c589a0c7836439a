"""Input formats: their names and suffixes, magic bytes, the checks that a file is what its
name says, the first bytes sniffed (the head), and the byte sources the readers stream
(`readers.py`). Everything here is about bytes, nothing about Sudoku: `opening.py` decides
which columns hold puzzles.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import IO, Protocol

import pyarrow as pa

from pipeline.errors import InputError, InputNotFoundError, first_line
from pipeline.io.lines import (
    BOM,
    ByteStream,
    head_lines,
    split_fields,
    split_lines,
    text_lines,
)
from pipeline.io.parquet_concat import MAGIC

INPUT_FORMATS = ("csv", "tsv", "txt", "parquet")
FORMAT_SUFFIXES = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".txt": "txt",
    ".parquet": "parquet",
    ".pq": "parquet",
}
COMPRESSION_SUFFIXES = {".gz": "gzip", ".gzip": "gzip", ".zst": "zstd", ".zstd": "zstd"}
# the first bytes of each kind of file (Parquet's: `parquet_concat.MAGIC`, which also ends one)
SIGNATURES = {"gzip": b"\x1f\x8b", "zstd": b"\x28\xb5\x2f\xfd", "parquet": MAGIC}
HEAD_BYTES = 1 << 20  # how much (decompressed) text is sniffed for the header and columns
BINARY_PROBE = 4096  # the first bytes that must look like text
BINARY_SHARE = 0.25  # at most this share of them control bytes (NUL too) or not UTF-8
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")


def check_format(fmt: str | None) -> str | None:
    """A forced format (`csv`, `tsv`, `txt`, `parquet`), checked; None: detect it."""
    if fmt is not None and fmt not in INPUT_FORMATS:
        raise InputError(f"unknown format {fmt!r}; expected one of {', '.join(INPUT_FORMATS)}")
    return fmt


def detect_format(path: Path, forced: str | None = None) -> tuple[str, str | None]:
    """`(format, compression)` from the file name, e.g. `x.csv.gz` -> `("csv", "gzip")`; a
    `forced` format wins over the name's (the compression still comes from the name)."""
    suffixes = [s.lower() for s in path.suffixes]
    compression = COMPRESSION_SUFFIXES.get(suffixes[-1]) if suffixes else None
    if compression:
        suffixes.pop()
    fmt = forced or (FORMAT_SUFFIXES.get(suffixes[-1]) if suffixes else None)
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
        raise InputNotFoundError(f"{path}: no such file", path) from None
    except PermissionError:
        raise InputError(f"{path}: permission denied") from None
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror or e})") from None
    check_signature(str(path), head, size, fmt, compression)
    return size


def check_signature(
    name: str, head: bytes, size: int | None, fmt: str, compression: str | None
) -> None:
    """Check that a file's first bytes (`head`: 4, and for Parquet its last 4 after them)
    match what its name says: its compression, or none, and Parquet's magic bytes."""
    if compression and size != 0 and head and not head.startswith(SIGNATURES[compression]):
        raise InputError(f"{name}: not a {compression} file")
    for kind, suffix in (("gzip", ".gz"), ("zstd", ".zst")):
        if compression is None and head.startswith(SIGNATURES[kind]):
            raise InputError(f"{name}: is {kind}-compressed but its name does not end in {suffix}")
    if (
        fmt == "parquet"
        and compression is None
        and ((size or 0) < 12 or head != SIGNATURES["parquet"] * 2)
    ):
        raise InputError(f"{name}: not a Parquet file")


def open_file(path: Path | str) -> pa.NativeFile:
    """The file opened for reading by the bytes of its name: pyarrow cannot open a `str` name
    that was not UTF-8 on disk (`os.fsdecode` gave it surrogates), as `caf\\xe9.csv`."""
    return pa.OSFile(os.fsencode(path), "rb")


def open_stream(path: Path, compression: str | None) -> pa.NativeFile:
    """A sequential stream of the file's decompressed bytes."""
    raw = open_file(path)
    return raw if compression is None else pa.CompressedInputStream(raw, compression)


class FileBytes:
    """A file's decompressed bytes, to be read from the start any number of times."""

    def __init__(self, path: Path, compression: str | None) -> None:
        self.path, self.compression = path, compression
        self._raw: pa.NativeFile | None = None

    def open(self) -> pa.NativeFile:
        self._raw = raw = open_file(self.path)
        return raw if self.compression is None else pa.CompressedInputStream(raw, self.compression)

    def bytes_read(self) -> int | None:
        """Stored (compressed) bytes read so far, read-ahead included: progress. None before
        reading starts."""
        raw = self._raw
        if raw is None:
            return None
        try:
            return raw.tell()
        except (OSError, ValueError):  # closed: everything was read
            return None


class ByteSource(Protocol):
    """Where a text reader gets its bytes: a file (`FileBytes`) or standard input."""

    def open(self) -> ByteStream: ...

    def bytes_read(self) -> int | None: ...


def read_head(path: Path, compression: str | None) -> tuple[bytes, bool]:
    """The first whole lines of decompressed text (about 1 MiB) and whether that is all of it."""
    try:
        with open_stream(path, compression) as stream:
            data = stream.read(HEAD_BYTES + 1)
    except (OSError, pa.ArrowException) as e:
        raise InputError(f"{path}: cannot read ({first_line(e)})") from None
    return text_head(str(path), data)


def text_head(name: str, data: bytes) -> tuple[bytes, bool]:
    """`data` (the first `HEAD_BYTES + 1` bytes of a text) cut after its last whole line, and
    whether it is the whole text; `InputError` when it is no text at all."""
    if data.startswith(SIGNATURES["parquet"]):
        raise InputError(f"{name}: is a Parquet file, not text")
    if looks_binary(data[:BINARY_PROBE]):
        raise InputError(f"{name}: not a text file (binary bytes)")
    if len(data) <= HEAD_BYTES:
        return data, True
    end = max(data.rfind(b"\n"), data.rfind(b"\r"))
    if end < 0:  # a first line over a MiB: the stream cuts it too, so sniff from its start
        return data[:HEAD_BYTES], False
    return data[: end + 1], False


def looks_binary(probe: bytes) -> bool:
    """Whether bytes are no text: more than `BINARY_SHARE` of them control bytes (NUL
    included) or bytes that are not UTF-8. A stray NUL or Latin-1 accent now and then is fine:
    its row is malformed, as it would be further down the file; a binary file (an image, a
    zip, UTF-16 text) has far more of them."""
    text = probe.decode("utf-8", errors="replace")
    bad = text.count("\ufffd") + len(_CONTROL.findall(text))
    return bad > BINARY_SHARE * max(len(text), 1)


def head_rows(head: bytes, delimiter: str, limit: int) -> list[list[str]]:
    """Up to `limit` rows (lists of fields) of a delimited head, by the stream's rules."""
    rows = []
    for line in head_lines(head)[:limit]:
        rows.append([f.decode("utf-8", errors="replace") for f in split_fields(line, delimiter)])
    return rows


def head_text_rows(head: bytes, limit: int) -> list[str]:
    """Up to `limit` rows of a `.txt` head: lines that are neither blank nor `#` comments."""
    lines = text_lines(split_lines(head.removeprefix(BOM)))[:limit]
    return [line.decode("utf-8", errors="replace") for line in lines.to_pylist()]


def spool(name: str, stream: ByteStream, head: bytes, how: str = "") -> IO[bytes]:
    """An anonymous temporary file holding `head` and then the rest of `stream`, checked to be
    Parquet (`how` says what was done to the bytes, for the error message)."""
    copy = tempfile.TemporaryFile(prefix="dataset-")
    try:
        copy.write(head)
        shutil.copyfileobj(stream, copy, 1 << 20)  # type: ignore[misc]
        size = copy.seek(0, 2)
        copy.seek(max(0, size - 4))
        tail = copy.read(4)
        copy.seek(0)
        if size < 12 or copy.read(4) != SIGNATURES["parquet"] or tail != SIGNATURES["parquet"]:
            raise InputError(f"{name}: not a Parquet file{how}")
    except BaseException:
        copy.close()
        raise
    copy.seek(0)
    return copy
