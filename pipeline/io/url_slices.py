"""Inputs at URLs that Dask workers read slices of themselves (`io.slices` plans the slices).

    at = UrlFile.of(ds.remote_file)      # on the client: the URL and the file's identity
    remote = at.open()                   # on a worker: the same file, by ranges, or InputError
    at.problem()                         # a worker's check before any work: None, or what

A worker opens the URL with the reader the client used (`http(s)://`: `HttpFile`, by Range
requests; other protocols: fsspec) and reads only its slice's bytes, plus the line that
crosses the slice's end. The file must be the one the client planned: its identity (size, ETag
and Last-Modified, or what fsspec's info says of its version) is compared when a worker opens
it, and `HttpFile` compares it again at every range request, so a file changed on the server
fails the run in one line, never gives a mix of two files.

Which URLs are sliced (`url_sliceable`): those whose size is known and whose server takes
range requests (an fsspec filesystem always does). A compressed file (`.gz`, `.zst`) is one
slice read whole, so it needs no ranges. Any other URL is read by the client, and
`why_not_sliced` says why in a few words for the run's `note:`.

The URL travels to the workers as given, a password in it too (a worker needs it to read);
like every URL here it is shown without the password (`urls.shown`), never printed whole.
Credentials that fsspec takes from the environment (`AWS_*`, ...) must be set on the workers
as on the client.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import IO, Any

from pipeline.errors import InputError
from pipeline.io.dataset import Dataset
from pipeline.io.http_files import RangeFile
from pipeline.io.remote import RemoteFile, open_remote

URL_PROBLEM = "cannot reach the input "  # how a worker's check of a URL begins (`problem`)


@dataclass(frozen=True)
class UrlFile:
    """A file at a URL as the client found it: what a worker needs to open the same file."""

    url: str = field(repr=False)  # as given: a password in it is sent, never shown
    name: str  # as shown (no password)
    size: int
    identity: tuple[tuple[str, Any], ...]  # the remote file's `identity()`, as pairs

    @classmethod
    def of(cls, remote: RemoteFile) -> UrlFile:
        assert remote.size is not None  # `url_sliceable`
        return cls(remote.url, remote.name, remote.size, tuple(remote.identity().items()))

    def open(self, *, seeking: bool = True) -> RemoteFile:
        """The file, found again (one request) and checked to be the one planned; `seeking`:
        to be read by ranges (`open_ranges`), else from its start (`open`). `InputError`
        when it cannot be read or has changed."""
        remote = open_remote(self.url, seeking=seeking)
        now, then = remote.identity(), dict(self.identity)
        changed = [k.removeprefix("input ") for k in {**then, **now} if now.get(k) != then.get(k)]
        if changed:
            remote.close()
            raise InputError(
                f"{self.name}: changed since the run was planned (its {', '.join(changed)}); "
                "run again"
            )
        return remote

    def open_slice(self) -> IO[bytes]:
        """The file, checked, to read a slice of: seekable, each read one range request of
        the bytes asked for (`HttpFile.open_ranges` would ask for a MiB at each small read,
        where a worker looking for a line's end wants a few KiB; an fsspec file would read
        ahead in blocks)."""
        return RangeFile(self.open(), block=0)  # type: ignore[return-value]

    def problem(self) -> str | None:
        """On a worker, before any work: None when it reads the file the client planned,
        else what is wrong (`cannot reach the input URL (why)`)."""
        try:
            self.open().close()
        except InputError as e:
            why = str(e).removeprefix(f"{self.name}: ")
            return f"{URL_PROBLEM}{self.name} ({why})"
        return None


def url_sliceable(ds: Dataset) -> bool:
    """Whether workers can read their slices of an input at a URL: read as a file (not
    sniffed from a stream), its size known, and by ranges unless it is one slice (compressed)."""
    remote = ds.remote_file
    if remote is None or ds.stream or remote.size is None:
        return False
    return remote.ranges or ds.compression is not None


def why_not_sliced(ds: Dataset) -> str:
    """Why the workers cannot read slices of an input at a URL, for the run's `note:`."""
    remote = ds.remote_file
    if ds.stream or remote is None:
        return "its name tells no format: it is read once, as a stream"
    if remote.size is None:
        return "its server does not say its size: the workers cannot cut it into slices"
    return "its server takes no range requests: the workers cannot read slices of it"


__all__ = ["URL_PROBLEM", "UrlFile", "url_sliceable", "why_not_sliced"]
