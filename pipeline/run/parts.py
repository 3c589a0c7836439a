"""Parts: one batch's results, encoded in the output's format by the worker that made them.

The work that grows with rows happens in the workers, encoding included: a worker turns its
batch's result table into the bytes of a Parquet file (or CSV or JSON Lines text), and the
parent only writes those bytes and, at the end, joins them into one output (`io.writers`:
Parquet parts by their footers, text parts by concatenation). Nothing is decoded again.
"""

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa


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
