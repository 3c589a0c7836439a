"""Inputs at URLs, read as files are: `https://` and `http://` with the standard library
(`http_files.py`); `s3://`, `gs://`, `hf://` and every other fsspec protocol through fsspec,
when it and the protocol's package (s3fs, gcsfs, huggingface_hub, ...) are installed
(`pip install 'sudoku-pipeline[s3]'`, `[gcs]`, `[hf]`, or `[remote]` for the three; an error
naming what to install otherwise).

    remote = open_remote("s3://bucket/corpus.parquet")   # InputError when it cannot be read
    remote.name, remote.size, remote.identity()
    remote_digest(remote)                                # (bytes, sha256) of what was read
    head, at_eof = remote_head(remote, "csv", "gzip")    # the first MiB of text, for sniffing
    source = RemoteBytes(remote, "gzip")                 # a `formats.ByteSource`: streamed
    reader = remote_parquet(remote, None)                # by ranges, else a temporary copy

Text streams through in bounded memory, each pass a new read from the start. Parquet is read by
ranges where the server offers them (fsspec files always do), else it is copied to an anonymous
temporary file first, as standard input's Parquet is. A glob in an fsspec URL
(`s3://bucket/parts/*.parquet`) is expanded by the filesystem, in sorted order.

Every read of a whole file from its start (a pass over text, a Parquet file copied) is hashed
as it goes (`Hashing`): the first that reaches the end leaves the file's size and sha256 on
it (`digest`), for a split's manifest. A file read by ranges only is read once more, whole,
when its digest is asked for (`remote_digest`); a file changed meanwhile is an error.
"""

from __future__ import annotations

import hashlib
import io
from contextlib import closing
from typing import IO, Any, Protocol

import pyarrow as pa

from pipeline.errors import InputError, first_line
from pipeline.io.formats import HEAD_BYTES, check_signature, spool, text_head
from pipeline.io.readers import ParquetReader
from pipeline.io.stdin import read_up_to
from pipeline.io.urls import HTTP, scheme, shown

# the package each protocol needs, and this package's extra that installs it with fsspec
PACKAGES = {
    "s3": "s3fs",
    "s3a": "s3fs",
    "gs": "gcsfs",
    "gcs": "gcsfs",
    "hf": "huggingface_hub",
    "az": "adlfs",
    "abfs": "adlfs",
    "abfss": "adlfs",
}
EXTRAS = {"s3fs": "s3", "gcsfs": "gcs", "huggingface_hub": "hf"}
RANGE_READ = 4 << 20  # bytes of a Parquet column read at a time, by one range request
# what an fsspec file's info may hold that changes with its content (S3, GCS, the Hub, ...)
_VERSION_KEYS = (
    "ETag",
    "etag",
    "LastModified",
    "last_modified",
    "mtime",
    "updated",
    "generation",
    "md5Hash",
    "blob_id",
    "created",
    "VersionId",
)


class RemoteFile(Protocol):
    """A file at a URL: `HttpFile` or `FsspecFile`."""

    url: str
    name: str  # as shown: no password
    size: int | None
    ranges: bool  # readable by ranges (Parquet needs no copy)
    digest: tuple[int, str] | None  # (bytes, sha256) of a whole read from the start

    def identity(self) -> dict[str, Any]: ...

    def open(self) -> io.RawIOBase: ...

    def open_ranges(self) -> IO[bytes]: ...

    def read_range(self, start: int, end: int) -> bytes: ...

    def close(self) -> None: ...


def open_remote(url: str, *, seeking: bool = False) -> RemoteFile:
    """The file at `url`, found (one request); `InputError` when it cannot be read.
    `seeking`: it is to be read by ranges (Parquet), not from its start."""
    if scheme(url) in HTTP:
        from pipeline.io.http_files import HttpFile  # urllib, ssl: 20 ms a run without URLs saves

        return HttpFile(url, seeking=seeking)
    return FsspecFile(url)


class FsspecFile:
    """A file at an fsspec URL (`s3://`, `gs://`, `hf://`, `memory://`, ...)."""

    ranges = True

    def __init__(self, url: str) -> None:
        self.url, self.name = url, shown(url)
        self.digest: tuple[int, str] | None = None
        self.fs, self.path = _filesystem(url)
        info = self._info()
        if info.get("type") == "directory":
            raise InputError(f"{self.name}: is a directory")
        self.size: int | None = info.get("size")
        self._version = _version(info)

    def identity(self) -> dict[str, Any]:
        return {"input": self.name, "input size": self.size, **self._version}

    def open(self) -> io.RawIOBase:
        """The file from its start, read ahead in blocks (a new read each time)."""
        return Guarded(self._open(), self.name)

    def open_ranges(self) -> IO[bytes]:
        return Guarded(self._open(), self.name)  # type: ignore[return-value]

    def read_range(self, start: int, end: int) -> bytes:
        """Bytes `start` to `end` (exclusive), by one request, holding no file open (a Dask
        worker's slice; `memory://` shares one file object between its readers)."""
        try:
            data = self.fs.cat_file(self.path, start=start, end=end)
        except Exception as e:  # noqa: BLE001 - whatever a filesystem's package raises
            raise OSError(f"{self.name}: {first_line(e)}") from None
        if len(data) != end - start:
            raise OSError(f"{self.name}: a range read gave {len(data)} bytes, not {end - start}")
        return bytes(data)

    def close(self) -> None:
        """Nothing held between reads."""

    def _open(self) -> Any:
        now = self._info()
        if now.get("size") != self.size or _version(now) != self._version:
            raise InputError(f"{self.name}: changed since it was first read; run again")
        try:
            return self.fs.open(self.path, "rb")
        except Exception as e:  # noqa: BLE001 - whatever a filesystem's package raises
            raise InputError(f"{self.name}: cannot read ({first_line(e)})") from None

    def _info(self) -> dict[str, Any]:
        try:
            return self.fs.info(self.path)
        except FileNotFoundError:
            raise InputError(f"{self.name}: no such file") from None
        except Exception as e:  # noqa: BLE001 - whatever a filesystem's package raises
            raise InputError(f"{self.name}: cannot read ({first_line(e)})") from None


def remote_glob(url: str) -> list[str]:
    """The URLs an fsspec glob matches, sorted, spelled as the pattern is (`memory://a/*.csv`
    gives `memory://a/x.csv`, though the filesystem says `/a/x.csv`)."""
    fs, pattern = _filesystem(url)
    try:
        found = sorted(fs.glob(pattern))
    except Exception as e:  # noqa: BLE001 - whatever a filesystem's package raises
        raise InputError(f"{shown(url)}: cannot list ({first_line(e)})") from None
    given, stripped = _folder(url), _folder(pattern)
    return [given + path[len(stripped) :] for path in found if path.startswith(stripped)]


def _folder(pattern: str) -> str:
    """A glob's text up to the last `/` before its first glob character."""
    first = min((i for i in (pattern.find(c) for c in "*?[") if i >= 0), default=len(pattern))
    return pattern[: pattern.rfind("/", 0, first) + 1]


class Guarded(io.RawIOBase):
    """A file of a filesystem's package: its errors `OSError`s, the bytes read counted."""

    def __init__(self, file: Any, name: str) -> None:
        self._file, self.name, self.count = file, name, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return self._call(self._file.seek, offset, whence)

    def tell(self) -> int:
        return self._call(self._file.tell)

    def readinto(self, buffer: Any) -> int:
        data = self._call(self._file.read, len(buffer))
        buffer[: len(data)] = data
        self.count += len(data)
        return len(data)

    def close(self) -> None:
        self._call(self._file.close)
        super().close()

    def _call(self, method: Any, *args: Any) -> Any:
        try:
            return method(*args)
        except OSError:
            raise
        except Exception as e:  # noqa: BLE001 - whatever a filesystem's package raises
            raise OSError(f"{self.name}: {first_line(e)}") from None


class Hashing(io.RawIOBase):
    """A remote file's raw stream read from its start, hashed as it goes: at its end the
    file's size and sha256 are left on the file (`digest`), once."""

    def __init__(self, raw: Any, remote: RemoteFile) -> None:
        self._raw, self._remote, self._sha = raw, remote, hashlib.sha256()
        self.name = getattr(raw, "name", remote.name)

    @property
    def count(self) -> int:
        return int(self._raw.count)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = self._raw.readinto(buffer)
        if self._remote.digest is not None:  # a pass before this one found it
            return n
        if n:
            self._sha.update(memoryview(buffer)[:n])
        else:
            self._remote.digest = (self.count, self._sha.hexdigest())
        return n

    def close(self) -> None:
        self._raw.close()
        super().close()


def remote_digest(remote: RemoteFile) -> tuple[int, str]:
    """The remote file's size and sha256, as a whole read from its start found them (read
    once more now when none did)."""
    if remote.digest is None:
        try:
            with closing(Hashing(remote.open(), remote)) as raw:
                while raw.read(1 << 20):
                    pass
        except OSError as e:
            raise InputError(f"{remote.name}: cannot read ({first_line(e)})") from None
    assert remote.digest is not None
    return remote.digest


class RemoteBytes:
    """A remote file's decompressed bytes, to be read from the start any number of times (a
    `formats.ByteSource`)."""

    def __init__(self, remote: RemoteFile, compression: str | None) -> None:
        self.remote, self.compression = remote, compression
        self._raw: Any = None

    def open(self) -> Any:
        self._raw = raw = Hashing(self.remote.open(), self.remote)
        return raw if self.compression is None else pa.CompressedInputStream(raw, self.compression)

    def bytes_read(self) -> int | None:
        """Stored (compressed) bytes read so far: progress. None before reading starts."""
        return None if self._raw is None else self._raw.count


def remote_head(remote: RemoteFile, fmt: str, compression: str | None) -> tuple[bytes, bool]:
    """The first whole lines of the decompressed text (about 1 MiB) and whether that is all of
    it; its first bytes checked against its name (`formats.check_signature`)."""
    try:
        with closing(io.BufferedReader(remote.open(), 1 << 16)) as raw:
            check_signature(remote.name, raw.peek(4)[:4], remote.size, fmt, compression)
            stream = raw if compression is None else pa.CompressedInputStream(raw, compression)
            data = read_up_to(stream, HEAD_BYTES + 1)
    except (OSError, pa.ArrowException) as e:
        raise InputError(f"{remote.name}: cannot read ({first_line(e)})") from None
    return text_head(remote.name, data)


def remote_parquet(remote: RemoteFile, compression: str | None) -> ParquetReader:
    """A Parquet reader of the remote file: by ranges when it can be, else (no ranges, or the
    whole file compressed) through a temporary copy."""
    if compression is None and remote.ranges:
        return ParquetReader(remote.name, remote.open_ranges(), buffer_size=RANGE_READ)
    how = f" (after {compression} decompression)" if compression else ""
    try:
        with closing(Hashing(remote.open(), remote)) as raw:
            stream = raw if compression is None else pa.CompressedInputStream(raw, compression)
            copy = spool(remote.name, stream, b"", how)
    except (OSError, pa.ArrowException) as e:
        raise InputError(f"{remote.name}: cannot read ({first_line(e)})") from None
    return ParquetReader(remote.name, copy)


def _filesystem(url: str) -> tuple[Any, str]:
    """fsspec's filesystem for `url` and the path in it; `InputError` naming what to install
    when fsspec or the protocol's package is missing."""
    protocol = scheme(url)
    package = PACKAGES.get(protocol)
    try:
        import fsspec
    except ImportError:
        raise InputError(
            f"{shown(url)}: reading {protocol}:// URLs needs {_install(package)}"
        ) from None
    try:
        return fsspec.core.url_to_fs(url)
    except ImportError as e:
        raise InputError(
            f"{shown(url)}: reading {protocol}:// URLs needs {_install(package or first_line(e))}"
        ) from None
    except ValueError:
        raise InputError(
            f"{shown(url)}: unknown URL scheme {protocol}://; expected a file, "
            "an http(s):// URL or one that fsspec reads (s3://, gs://, hf://)"
        ) from None
    except Exception as e:  # noqa: BLE001 - whatever a filesystem's package raises
        raise InputError(f"{shown(url)}: cannot read ({first_line(e)})") from None


def _install(package: str | None) -> str:
    """What to install, said as `pip` would take it: `fsspec and s3fs: pip install
    'sudoku-pipeline[s3]'`."""
    if package in EXTRAS:
        return f"fsspec and {package}: pip install 'sudoku-pipeline[{EXTRAS[package]}]'"
    if package:
        return f"fsspec and {package}: pip install fsspec {package}"
    return "fsspec and the filesystem's package: pip install fsspec"


def _version(info: dict[str, Any]) -> dict[str, str]:
    """What in a file's info changes with its content, as text (for a checkpoint)."""
    return {f"input {key.lower()}": str(info[key]) for key in _VERSION_KEYS if key in info}
