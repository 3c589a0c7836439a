"""Where augment's Parquet parts go when the output is a file: straight into a temporary file
beside it, joined by their footers as they come, then renamed into place.

Solve keeps its parts in a checkpoint folder and joins them at the end, so that a stopped run
can resume; augmenting again is cheap, so augment writes every byte once instead of twice
(measured: the checkpoint's write, fsync and join were the parent's largest cost, about
0.4 s a million rows). What a killed run leaves (`.NAME.tmp-PID`) the next run clears.
"""

import contextlib
import os
from pathlib import Path
from typing import Any, BinaryIO

import pyarrow as pa

from pipeline.errors import InputError
from pipeline.io.parquet_concat import Joiner
from pipeline.io.sidecars import clear_stale_temporaries, temporary_name
from pipeline.io.writers import fsync_dir, join_parts, metadata_entry
from pipeline.run.parts import Part


class FileSink:
    """Parquet parts joined into `path`, atomically: `add` each part in order, `commit` at the
    end, `close` always (removes the temporary file of a run that did not commit)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.rows = 0
        clear_stale_temporaries(path)
        self._tmp = temporary_name(path)
        self._file: BinaryIO | None = open(self._tmp, "wb")  # noqa: SIM115 - closed by close()
        self._joiner = Joiner(self._file)
        self._parts = 0

    def add(self, part: Part) -> None:
        assert self._file is not None
        with self._named_errors():
            self._joiner.add(part.data)
        self.rows += part.rows
        self._parts += 1

    def commit(self, rows: int, empty: pa.Table, metadata: dict[str, Any]) -> None:
        assert self._file is not None
        if self.rows != rows:
            raise InputError(f"wrote {self.rows:,} rows where the run made {rows:,}")
        with self._named_errors():
            if self._parts:
                self._joiner.finish(metadata_entry(metadata))
            else:
                join_parts(self._file, "parquet", [], empty, metadata)
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            self._file = None
            os.replace(self._tmp, self.path)
            fsync_dir(self.path.parent)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        with contextlib.suppress(OSError):
            self._tmp.unlink()

    @contextlib.contextmanager
    def _named_errors(self) -> Any:
        """A full disk or a file-size limit, in one line naming the output."""
        try:
            yield
        except OSError as e:
            raise InputError(f"{self.path}: {e.strerror or e} while writing it") from None
