"""Output files: where they go, checked before a job starts, and written atomically.

    out = output_path("data/x.csv.gz", None, ".solved.parquet")   # data/x.solved.parquet
    write_atomically(out, lambda f: f.write(data))

A file is written to a temporary name beside its destination, flushed to disk, then renamed
over it: readers see the old file or the whole new one, never a part, even after `kill -9`.
"""

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pipeline.errors import InputError

INPUT_SUFFIXES = {".csv", ".tsv", ".tab", ".txt", ".parquet", ".pq", ".gz", ".zst", ".zstd"}


def default_output(input_path: str | Path, suffix: str) -> Path:
    """The output beside an input: `data/x.csv.gz` with `.solved.parquet` ->
    `data/x.solved.parquet`."""
    path = Path(input_path)
    name = path.name
    while Path(name).suffix.lower() in INPUT_SUFFIXES:
        name = name[: -len(Path(name).suffix)]
    return path.with_name(name + suffix)


def check_output(path: str | Path, what: str = "output") -> Path:
    """`path` as a Path, once it can be an output file: not a directory, in a directory that
    exists. Raises `InputError` (one line) before any work is done."""
    out = Path(path)
    if out.is_dir():
        raise InputError(f"{out}: is a directory, not an {what} file")
    if not out.parent.is_dir():
        raise InputError(f"{out.parent}: no such directory for the {what}")
    return out


def output_path(input_path: str | Path, output: str | Path | None, suffix: str) -> Path:
    """The checked output of a job: `output`, else `default_output(input_path, suffix)`."""
    return check_output(default_output(input_path, suffix) if output is None else output)


def fsync_dir(path: Path) -> None:
    """Make a rename inside `path` durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomically(path: Path, write: Callable[[Any], object]) -> None:
    """Call `write(file)` on a temporary file beside `path`, fsync it, and rename it to `path`:
    readers see the old file or the whole new one, never a part (a kill -9 included)."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    fsync_dir(path.parent)
