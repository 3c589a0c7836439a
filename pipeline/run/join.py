"""The end of a run to a file: its checkpoint's parts joined into the output one at a time, each
part deleted once it is copied, so that the join needs room for one part more, never for the
output a second time; an interrupted join (Ctrl-C, `kill -9`, a full disk) is continued by
`--resume` from where it stopped, and loses nothing.

In the checkpoint folder while it joins (`run.checkpoint`):

    joined.EXT       the output so far: the parts' data one after the other (Parquet: `PAR1`
                     first, the footer last, written from the parts' footers)
    join.jsonl       one line per part copied, flushed to disk after its data and before the
                     part is deleted: the part's name and place, its verdict counts, where its
                     data ends in joined.EXT, and (Parquet) its footer

A line cut short by a crash is ignored (its part was not deleted yet); bytes of joined.EXT past
the last line's end are a copy that was interrupted, and are cut off. Once every part is in,
the footer is written, joined.EXT is flushed and renamed to the output (atomically: readers see
the old output or the whole new one) and the folder is removed.
"""

import base64
import json
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from pipeline.io.parquet_concat import (
    MAGIC,
    footer_bytes,
    footer_of_bytes,
    joined_footer,
    read_footer,
)
from pipeline.io.sidecars import copy_bytes
from pipeline.io.writers import EXTENSIONS, fsync_dir, join_parts, metadata_entry

JOINED, JOURNAL = "joined", "join.jsonl"


@dataclass
class Copied:
    """A part copied into joined.EXT (a line of the journal)."""

    name: str
    start: int
    rows: int
    source: int
    first_row: int
    end: int  # where its data ends in joined.EXT
    counts: dict[str, int] = field(default_factory=dict)
    footer: str | None = None  # Parquet: the part's footer, base64
    data_end: int = 0  # Parquet: where its data ended in the part


@dataclass(frozen=True)
class Waiting:
    """A part still to copy."""

    path: Path
    start: int
    rows: int
    source: int
    first_row: int


def joined_path(folder: Path, fmt: str) -> Path:
    return folder / f"{JOINED}.{EXTENSIONS[fmt]}"


def read_journal(folder: Path) -> list[Copied]:
    """The parts copied so far, in order (a last line cut short by a crash left out)."""
    try:
        text = (folder / JOURNAL).read_text()
    except FileNotFoundError:
        return []
    copied = []
    for line in text.splitlines():
        try:
            copied.append(Copied(**json.loads(line)))
        except (ValueError, TypeError):  # the last line, cut short: its part is still there
            break
    return copied


def join_freeing(
    folder: Path,
    fmt: str,
    waiting: list[Waiting],
    counts_of: Callable[[Waiting], dict[str, int]],
    output: Path,
    empty: pa.Table,
    metadata: dict[str, Any],
    head: bytes = b"",
) -> None:
    """Copy the `waiting` parts (in order, after those the journal holds) into joined.EXT, each
    deleted once copied and noted; then finish the file and rename it to `output`.
    `counts_of(part)`: its verdict counts, for the journal (a resumed run's summary). `head`:
    text written before the first part (a CSV header, when no part carries one)."""
    copied = read_journal(folder)
    done = {c.name for c in copied}
    for part in waiting:
        if part.path.name in done:  # noted, then a crash before it was deleted
            part.path.unlink(missing_ok=True)
    waiting = [p for p in waiting if p.path.name not in done]
    target = joined_path(folder, fmt)
    if not copied and not waiting:  # no row at all: the output is the empty table
        with open(target, "wb") as f:
            join_parts(f, fmt, [], empty, metadata)
        _finish(target, output)
        return
    end = copied[-1].end if copied else 0
    with (
        open(target, "ab" if target.exists() else "wb") as f,
        open(folder / JOURNAL, "a", encoding="utf-8") as journal,
    ):
        f.truncate(end)  # an interrupted copy's bytes
        f.seek(end)
        if not copied:
            f.write(head)
        for part in waiting:
            entry = _copy(part, f, fmt, counts_of)
            durable(f)  # its data on disk before the journal says so
            journal.write(json.dumps(asdict(entry)) + "\n")
            durable(journal)  # noted on disk before the part goes
            part.path.unlink()
            copied.append(entry)
        if fmt == "parquet":
            footers = [
                footer_of_bytes(base64.b64decode(c.footer or ""), c.data_end) for c in copied
            ]
            starts = [c.end - (c.data_end - len(MAGIC)) for c in copied]
            f.write(joined_footer(footers, starts, metadata_entry(metadata)))
        durable(f)
    _finish(target, output)


def _copy(
    part: Waiting, sink: Any, fmt: str, counts_of: Callable[[Waiting], dict[str, int]]
) -> Copied:
    """Append one part's data to `sink` (at its end); its journal line."""
    counts = counts_of(part)
    footer = None
    data_end = 0
    with open(part.path, "rb") as source:
        if fmt == "parquet":
            parsed = read_footer(part.path)
            first = sink.tell() == 0
            if first:
                sink.write(MAGIC)
            source.seek(len(MAGIC))
            left = parsed.data_end - len(MAGIC)
            kept = footer_bytes(parsed, whole=first)  # the schema and metadata: once
            footer = base64.b64encode(kept).decode("ascii")
            data_end = parsed.data_end
        else:
            left = os.fstat(source.fileno()).st_size
        copy_bytes(source, sink, left, part.path)
    return Copied(
        part.path.name,
        part.start,
        part.rows,
        part.source,
        part.first_row,
        sink.tell(),
        counts,
        footer,
        data_end,
    )


def durable(f: Any) -> None:
    """What was written to `f` on disk (each moment the join may be stopped at, for tests)."""
    f.flush()
    os.fsync(f.fileno())


def _finish(target: Path, output: Path) -> None:
    os.replace(target, output)
    fsync_dir(output.parent)


__all__ = ["Copied", "JOINED", "JOURNAL", "Waiting", "join_freeing", "joined_path", "read_journal"]
