"""Where an input's bytes come from: a file, standard input or a pipe, or a URL; what it is
(format, compression, size) and how to read it, before any column is looked at.

    source = open_source("data/kaggle.csv.gz", forced=None)
    source.format, source.compression, source.size_bytes    # "csv", "gzip", 1234
    head, at_eof, stream = source.text()                    # CSV, TSV, text: the first MiB
    reader = source.parquet()                               # Parquet

A file's format and compression come from its name and must match its first bytes; standard
input's and a pipe's are sniffed from their bytes (`stdin.py`); a URL's come from the last
segment of its path, as a file's do (`remote.py`), and a URL whose name tells no format is read
once and sniffed, as a pipe is. Opening reads no more than it must to say what the input is:
Parquet is opened (a `.parquet.gz` decompressed to a temporary file) and text's head read only
when `parquet()` or `text()` is called, after the options have been checked.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.errors import InputError
from pipeline.io.formats import ByteSource, FileBytes, check_file, detect_format, read_head
from pipeline.io.readers import ParquetReader
from pipeline.io.remote import (
    Hashing,
    RemoteBytes,
    RemoteFile,
    open_remote,
    remote_head,
    remote_parquet,
)
from pipeline.io.stdin import NAME as STDIN_NAME
from pipeline.io.stdin import STDIN, StdinInput, is_standard_input, is_stream, open_stdin
from pipeline.io.stdin import open_stream as open_pipe
from pipeline.io.urls import file_name, is_url

Text = tuple[bytes, bool, ByteSource]  # the head, whether it is all, the bytes to stream


@dataclass
class Source:
    """An input found: what it is, and how to read it (`parquet()` or `text()`)."""

    name: str  # for messages: the path, `standard input`, or the URL as shown
    path: Path  # Path("-") for standard input; a URL's file name for a URL
    format: str
    compression: str | None
    size_bytes: int  # as stored; 0 when unknown (a stream)
    stream: bool = False  # read once: standard input, a pipe, a URL sniffed
    url: str | None = None  # a URL, as shown (no password)
    remote: RemoteFile | None = None  # a URL read as a file is: its identity
    _parquet: Callable[[], ParquetReader] | None = field(default=None, repr=False)
    _text: Callable[[], Text] | None = field(default=None, repr=False)

    def parquet(self) -> ParquetReader:
        assert self._parquet is not None
        return self._parquet()

    def text(self) -> Text:
        assert self._text is not None
        return self._text()

    def dataset_fields(self) -> dict[str, Any]:
        """The fields of a `Dataset` that say where it comes from."""
        return dict(
            path=self.path,
            format=self.format,
            compression=self.compression,
            size_bytes=self.size_bytes,
            stream=self.stream,
            url=self.url,
            _remote=self.remote,
        )


def open_source(path: str | Path, forced: str | None) -> Source:
    """The input at `path` (`-`, a file, a pipe, a URL), found; `forced`: its format when the
    name should not say it. Raises `InputError` (one line)."""
    if is_url(path):
        return _open_url(str(path), forced)
    if str(path) == STDIN:
        return _sniffed(open_stdin(forced), STDIN_NAME, Path(STDIN))
    if is_stream(path):
        return _sniffed(open_pipe(Path(path), forced), str(path), Path(path))
    return _open_file(Path(path), forced)


def _open_file(path: Path, forced: str | None) -> Source:
    if path.is_dir():
        raise InputError(
            f"{path}: is a folder: pass files, or a glob like '{path.as_posix().rstrip('/')}/*.csv'"
        )
    try:
        fmt, compression = detect_format(path, forced)
    except InputError:
        if is_standard_input(path):  # `/dev/stdin < file`
            raise InputError(
                f"{path}: standard input, its format not in its name: give - "
                "(its format is sniffed) or --input-format"
            ) from None
        raise
    size = check_file(path, fmt, compression)

    def text() -> Text:
        return (*read_head(path, compression), FileBytes(path, compression))

    return Source(
        str(path),
        path,
        fmt,
        compression,
        size,
        _parquet=lambda: ParquetReader.of_file(path, compression),
        _text=text,
    )


def _open_url(url: str, forced: str | None) -> Source:
    try:
        fmt, compression = detect_format(Path(file_name(url)), forced)
    except InputError:  # no format in its name: read once, sniffed as a pipe is
        remote = open_remote(url)
        source = _sniffed(
            open_stdin(forced, Hashing(remote.open(), remote), remote.name),
            remote.name,
            Path(file_name(url)),
        )
        source.url, source.remote = remote.name, remote  # read once: its digest as it went
        return source
    remote = open_remote(url, seeking=(fmt, compression) == ("parquet", None))

    def text() -> Text:
        return (*remote_head(remote, fmt, compression), RemoteBytes(remote, compression))

    return Source(
        remote.name,
        Path(file_name(url)),
        fmt,
        compression,
        remote.size or 0,
        url=remote.name,
        remote=remote,
        _parquet=lambda: remote_parquet(remote, compression),
        _text=text,
    )


def _sniffed(stdin: StdinInput, name: str, path: Path) -> Source:
    """A stream, sniffed (`stdin.py`): read once."""

    def parquet() -> ParquetReader:
        assert stdin.parquet is not None
        return ParquetReader(name, stdin.parquet)

    def text() -> Text:
        assert stdin.source is not None
        return stdin.head, stdin.at_eof, stdin.source

    return Source(
        name, path, stdin.format, stdin.compression, 0, stream=True, _parquet=parquet, _text=text
    )
