"""Output files: their format, checked before a job starts, locked while it runs. Nothing the
user owns is written over by surprise.

    target = check_output(out, inputs=[in_path], force=False)   # or InputError, one line
    with OutputLock(target.path):                               # or InputError: in use
        write_tables(target, schema, tables)                    # io.writers

What `check_output` refuses, before any work: a directory; a missing parent directory; anything
that exists and is not a regular file (a device, a FIFO, a socket: `-` is stdout); the same file
as an input (any spelling, a hard or symbolic link, standard input redirected from it); an
existing file that is not a result of this tool (a Parquet file without our metadata, a CSV or
JSON Lines file whose first lines are not ours), unless `force`; a name too long for the files
a job keeps beside it (`io.sidecars`, where `OutputLock` lives). A rerun may replace its own
earlier result. An output that is a symbolic link is written through: its target is replaced
(or created), the link stays.

Writing, atomically or to stdout, is `io.writers`.
"""

import contextlib
import os
import re
import stat
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pipeline.errors import InputError
from pipeline.io.parquet_concat import ParquetFooterError, read_footer
from pipeline.io.runinfo import METADATA_KEY
from pipeline.io.sidecars import OutputLock as OutputLock  # re-exported: where jobs find it
from pipeline.io.sidecars import check_name_room, output_stat
from pipeline.io.urls import file_name, is_url, shown

INPUT_SUFFIXES = {".csv", ".tsv", ".tab", ".txt", ".parquet", ".pq", ".gz", ".zst", ".zstd"}
OUTPUT_SUFFIXES = {
    ".parquet": "parquet",
    ".pq": "parquet",
    ".csv": "csv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
}
STDOUT = "-"


def default_output(input_path: str | Path, suffix: str) -> Path:
    """The output beside an input: `data/x.csv.gz` with `.solved.parquet` ->
    `data/x.solved.parquet`; for a URL, in the current folder, named after the last segment
    of its path (`https://example.org/d/x.csv.gz?raw=1` -> `x.solved.parquet`), as
    `curl -O` and `wget` name what they fetch."""
    if is_url(input_path):
        name = Path(file_name(str(input_path))).name  # `%2F` decoded is no folder
        if not name:
            raise InputError(
                f"{shown(str(input_path))}: no file name in the URL to name the "
                "output after: give -o"
            )
        path = Path(name)  # in the current folder
    else:
        path = Path(input_path)
    name = path.name
    while Path(name).suffix.lower() in INPUT_SUFFIXES:
        name = name[: -len(Path(name).suffix)]
    return path.with_name(name + suffix)


@dataclass(frozen=True)
class Target:
    """Where a job's output goes: a file path, or stdout (`path` None); and its format."""

    path: Path | None
    format: str  # parquet | csv | jsonl
    dataset: bool = False  # a Parquet dataset folder (`-o DIR/`: `run.dataset_output`)

    @property
    def is_stdout(self) -> bool:
        return self.path is None

    def __str__(self) -> str:
        return "<stdout>" if self.path is None else str(self.path)


def output_format(path: str | Path, format: str | None = None) -> str:
    """The format of an output: `format` when given, else from the name's suffix; stdout
    (`-`) without a format is CSV. Raises `InputError` for a suffix we cannot write."""
    if format is not None:
        if format not in set(OUTPUT_SUFFIXES.values()):
            choices = ", ".join(sorted(set(OUTPUT_SUFFIXES.values())))
            raise InputError(f"unknown output format {format!r}; choose one of {choices}")
        return format
    if str(path) == STDOUT:
        return "csv"
    suffix = Path(path).suffix.lower()
    if suffix not in OUTPUT_SUFFIXES:
        raise InputError(
            f"{path}: cannot tell the output format from its name; end it in .parquet, .csv or "
            ".jsonl (or give --format)"
        )
    return OUTPUT_SUFFIXES[suffix]


def check_output(
    path: str | Path | Target,
    what: str = "output",
    *,
    inputs: Iterable[str | Path] = (),
    force: bool = False,
    format: str | None = None,
    formats: Iterable[str] | None = None,
) -> Target:
    """The output `path` (`-`: stdout) and its format, checked before any work is done (see
    the module's docstring); `formats` limits the formats allowed. Raises `InputError`. A
    `Target` is an output its job has checked itself (split's folder), and is returned."""
    if isinstance(path, Target):
        return path
    if str(path) != STDOUT and Path(path).is_dir():
        raise InputError(f"{path}: is a directory, not an {what} file")
    kind = output_format(path, format)
    if formats is not None and kind not in formats:
        raise InputError(f"{path}: the {what} must be {' or '.join(formats)}, not {kind}")
    if str(path) == STDOUT:
        if kind == "parquet" and sys.stdout.isatty():
            raise InputError("will not write Parquet to a terminal; redirect stdout or use -o FILE")
        return Target(None, kind)
    return Target(check_path(path, what, inputs=inputs, force=force, kind=kind), kind)


def check_path(
    path: str | Path,
    what: str = "output",
    *,
    inputs: Iterable[str | Path] = (),
    force: bool = False,
    kind: str = "parquet",
) -> Path:
    """An output file's path, checked before any work is done: not a directory, a device or
    an input, in a directory that exists, not somebody else's file unless `force` (`kind`:
    parquet, csv, jsonl or html, to recognise an earlier result). A symbolic link stands for
    its target (created when missing), as `cp` and shells write through one: the path
    returned is the target's. Raises `InputError`."""
    out, info = output_stat(path, what)
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise InputError(f"{out}: is a directory, not an {what} file")
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise InputError(
            f"{out}: is not a regular file (a device, pipe or socket); "
            f"will not write the {what} there (use -o - for stdout)"
        )
    if not out.parent.is_dir():
        raise InputError(f"{out.parent}: no such directory for the {what}")
    check_name_room(out, what, "--html" if kind == "html" else "-o")
    if info is not None:
        for source in inputs:
            same = _is_stdin(info) if str(source) == STDOUT else _same_file(out, Path(source))
            if same:
                raise InputError(f"{out}: is the input {source}; will not write over an input")
        if not force and not is_own_result(out, kind):
            raise InputError(
                f"{out}: exists and is not a result of sudoku-pipeline; use --force to replace it"
            )
    return out


def _is_stdin(info: os.stat_result) -> bool:
    """Whether standard input is the file `info` describes (`- < out.csv`)."""
    try:
        return os.path.samestat(os.fstat(sys.stdin.fileno()), info)
    except (AttributeError, OSError, ValueError):  # no stdin, or not a file descriptor
        return False


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def is_own_result(path: Path, kind: str) -> bool:
    """Whether `path` holds an earlier result of this tool (which a rerun may replace). An
    empty file holds nothing to lose (and is what an output of no rows in JSON Lines is)."""
    with contextlib.suppress(OSError):
        if path.stat().st_size == 0:
            return True
    if kind == "parquet":
        try:
            return METADATA_KEY in read_footer(path).key_values()
        except (ParquetFooterError, OSError):
            return False
    try:
        with open(path, "rb") as f:
            first, second = f.readline(4096), f.readline(4096)
    except OSError:
        return False
    if kind == "csv":
        return first.startswith((b"row,", b"source,row,")) or (
            first in _GENERATED_HEADERS and (not second or _GENERATED_CSV.fullmatch(second))
        )
    if kind == "html":
        return first.startswith(b"<!DOCTYPE html>") and _mentions_us(path)
    return first.startswith((b'{"row":', b'{"source":')) or bool(_GENERATED_JSON.fullmatch(first))


# What `generate` writes first: its header and first puzzle (id 0), to the letter
_GENERATED_HEADERS = (b"id,puzzle,solution,clues\n", b"id,puzzle,solution,clues,grade\n")
_GENERATED_CSV = re.compile(rb"0,[.1-9]{81},[1-9]{81},\d+(,[a-z_]+)?\n?")
_GENERATED_JSON = re.compile(
    rb'\{"id":0,"puzzle":"[.1-9]{81}","solution":"[1-9]{81}","clues":\d+(,"grade":"[a-z_]+")?\}\n?'
)


def _mentions_us(path: Path) -> bool:
    with open(path, "rb") as f:
        return b"sudoku-pipeline" in f.read(8192)


def size_text(size: float) -> str:
    """A size in bytes, for people: `512 bytes`, `3.4 MB`, `1.2 GB` (never "0.0 GB")."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if size >= scale:
            return f"{size / scale:,.1f} {unit}"
    return f"{size:,.0f} bytes"


def free_space(folder: Path) -> int:
    """Bytes this process may still write in `folder`'s file system (root: the reserve too)."""
    info = os.statvfs(folder)
    blocks = info.f_bfree if os.geteuid() == 0 else info.f_bavail
    return blocks * info.f_frsize
