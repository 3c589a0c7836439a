"""Parts: one batch's results, encoded in the output's format by the worker that made them.

The work that grows with rows happens in the workers, encoding included: a worker turns its
batch's result table into the bytes of a Parquet file (or CSV or JSON Lines text), and the
parent only writes those bytes and, at the end, joins them into one output (`io.writers`:
Parquet parts by their footers, text parts by concatenation). Nothing is decoded again.
"""

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np
import pyarrow as pa

Key = TypeVar("Key")
RAMP_ROWS = 32  # rows of the first batch of a slow job (`ramp_up`)


@dataclass(frozen=True)
class Part:
    """A batch's results, encoded. `start` is the position of its first row in the job's
    output (over every input), `source` the input it came from and `first_row` its first row
    there; `counts` counts its rows per verdict."""

    start: int
    rows: int
    source: int
    first_row: int
    data: bytes = field(repr=False)
    counts: dict[str, int] = field(default_factory=dict)


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
