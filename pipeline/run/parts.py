"""Parts: one batch's results, encoded in the output's format by the worker that made them.

The work that grows with rows happens in the workers, encoding included: a worker turns its
batch's result table into the bytes of a Parquet file (or CSV or JSON Lines text), and the
parent only writes those bytes and, at the end, joins them into one output (Parquet parts by
their footers, `io.parquet_concat`; text parts by concatenation). Nothing is decoded again.
"""

import io
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.io.output import parquet_options
from pipeline.io.text_columns import for_text

EXTENSIONS = {"parquet": "parquet", "csv": "csv", "jsonl": "jsonl"}


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


def encode(table: pa.Table, fmt: str, header: bool = True) -> bytes:
    """`table` as a whole Parquet file, or as CSV (with a header line when `header`) or JSON
    Lines text (each column in a form text can hold: `io.text_columns`)."""
    sink = io.BytesIO()
    if fmt == "parquet":
        pq.write_table(table, sink, **parquet_options(table.schema))
    elif fmt in ("csv", "jsonl"):
        import polars as pl  # text outputs only: solving to Parquet does not import polars

        frame = pl.from_arrow(for_text(table, fmt))
        assert isinstance(frame, pl.DataFrame)
        if fmt == "csv":
            frame.write_csv(sink, include_header=header)
        else:
            frame.write_ndjson(sink)
    else:
        raise ValueError(f"unknown format {fmt!r}")
    return sink.getvalue()


def verdict_counts(table: pa.Table, names: tuple[str, ...]) -> dict[str, int]:
    """Rows per verdict (`names`: the dictionary's words, in code order)."""
    indices = table.column("verdict").combine_chunks().indices.to_numpy()
    counts = np.bincount(indices, minlength=len(names))
    return {name: int(counts[i]) for i, name in enumerate(names)}
