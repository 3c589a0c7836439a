"""Tasks and parts: a batch of rows on its way to a worker, and its results on their way back,
encoded in the output's format by the worker that made them.

The work that grows with rows happens in the workers, encoding included: a worker turns its
batch's result table into the bytes of a Parquet file (or CSV or JSON Lines text, or a folder's
arrays), and the parent only writes those bytes and, at the end, joins them into one output
(`io.writers`: Parquet parts by their footers, text parts by concatenation). Nothing is decoded
again.

    def count_part(task: Task, fmt: str) -> Part:        # a job's unit of work
        return part_of(task, count_table(task.batch), fmt)
"""

import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from pipeline.io.sidecars import write_atomically
from pipeline.io.writers import EXTENSIONS, encode
from pipeline.run.join_arrays import array_part_of

Key = TypeVar("Key")
RAMP_ROWS = 32  # rows of the first batch of a slow job (`ramp_up`)


class Task(NamedTuple):
    """A batch of input rows as `run.Run.tasks()` hands it out: `start`, the place of its
    first row over every input (the row of a row-per-row output); `source`, its input's
    index, and `name`, that input's name when there are several (else None); `first_row`,
    its first row in that input."""

    start: int
    source: int
    name: str | None
    first_row: int
    batch: pa.RecordBatch | pa.Table


@dataclass(frozen=True)
class Part:
    """A batch's results, encoded. `start` is the position of its first row in the job's
    output (over every input), `source` the input it came from and `first_row` its first row
    there; `counts` counts its rows per value of the job's counted column (its verdicts)."""

    start: int
    rows: int
    source: int
    first_row: int
    data: Any = field(repr=False)  # bytes; a folder's arrays for npy
    counts: dict[str, int] = field(default_factory=dict)


def part_of(task: Task, table: pa.Table, fmt: str, counts: dict[str, int] | None = None) -> Part:
    """`table`, the results of `task`, encoded in `fmt` as a part of the output (a text
    output's header in the first part only)."""
    data = encode(table, fmt, header=task.start == 0)
    return Part(task.start, table.num_rows, task.source, task.first_row, data, counts or {})


def verdict_counts(table: pa.Table, names: tuple[str, ...]) -> dict[str, int]:
    """Rows per verdict (`names`: the dictionary's words, in code order)."""
    indices = table.column("verdict").combine_chunks().indices.to_numpy()
    counts = np.bincount(indices, minlength=len(names))
    return {name: int(counts[i]) for i, name in enumerate(names)}


def ramp_up(
    batches: Iterable[tuple[Key, pa.RecordBatch]], first: int = RAMP_ROWS
) -> Iterator[tuple[Key, pa.RecordBatch]]:
    """`(key, batch)` pairs with the first batches cut small, each twice the one before, from
    `first` rows up to the batches' own size: a job whose rows are slow (`--rate`: ~40 a second
    on the hardest puzzles) moves its progress bar within seconds of the first row instead of
    after a whole batch of 50,000; its output and order are the same."""
    size = first
    for key, batch in batches:
        at = 0
        while size < batch.num_rows - at:
            yield key, batch.slice(at, size)
            at, size = at + size, size * 2
        yield key, batch.slice(at) if at else batch


def part_name(part: Part, fmt: str) -> str:
    """The name a part is kept under: its place, its rows and the checksum of its bytes."""
    crc = zlib.crc32(part.data)
    return (
        f"part-{part.start:012d}-{part.rows}-{part.source}-{part.first_row}-"
        f"{crc:08x}.{EXTENSIONS[fmt]}"
    )


def keep_part(folder: Path, part: Part, fmt: str) -> str:
    """Write one part into the checkpoint `folder` (a temporary name, fsynced, renamed: whole
    or absent); its name. Workers that read their own slices keep theirs so (`run.sliced`)."""
    if not isinstance(part.data, bytes):  # a folder's arrays: as one file (`join_arrays`)
        part = replace(part, data=array_part_of(part.data))
    name = part_name(part, fmt)
    keep_bytes(folder / name, part.data)
    return name


def keep_bytes(path: Path, data: bytes) -> None:
    """Write `data` to `path` whole or not at all, as a part is kept: what one task on a
    worker leaves for another to read (validate's shards, `jobs.validate.sharded`)."""
    write_atomically(path, lambda f: f.write(data))


def part_counts(
    path: Path, start: int, fmt: str, columns: list[str], column: str
) -> dict[str, int]:
    """Rows per value of `column` in the kept part at `path`, whose first row is `start`, in
    `fmt` (`columns`: the output's, which text parts after the first do not name); read back
    only on resume."""
    import polars as pl  # off the path of a run that is not resumed

    if fmt == "parquet":
        values = pq.read_table(path, columns=[column]).column(0)
    elif fmt == "csv":
        values = pacsv.read_csv(
            path,
            read_options=pacsv.ReadOptions(column_names=columns, skip_rows=int(start == 0)),
            convert_options=pacsv.ConvertOptions(
                include_columns=[column], column_types={column: pa.string()}
            ),
        ).column(0)
    else:
        values = pl.read_ndjson(path).get_column(column).to_arrow()
    counted = pl.Series(values).cast(pl.String).value_counts()
    return dict(zip(counted[:, 0].to_list(), counted[:, 1].to_list(), strict=True))
