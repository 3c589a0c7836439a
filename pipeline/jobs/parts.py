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
    Lines text."""
    sink = io.BytesIO()
    if fmt == "parquet":
        pq.write_table(table, sink, **parquet_options(table.schema))
    elif fmt in ("csv", "jsonl"):
        import polars as pl  # text outputs only: solving to Parquet does not import polars

        if fmt == "csv":
            plain = pa.table({name: _as_text_column(col) for name, col in zip(
                table.column_names, table.columns, strict=True)})  # fmt: skip
            frame = pl.from_arrow(plain)
            assert isinstance(frame, pl.DataFrame)
            frame.write_csv(sink, include_header=header)
        else:
            frame = pl.from_arrow(table)
            assert isinstance(frame, pl.DataFrame)
            frame.write_ndjson(sink)
    else:
        raise ValueError(f"unknown format {fmt!r}")
    return sink.getvalue()


def _as_text_column(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """A column CSV can hold: dictionaries decoded, lists of numbers as space-separated text."""
    if pa.types.is_dictionary(column.type):
        return column.cast(column.type.value_type)
    if pa.types.is_list(column.type) or pa.types.is_fixed_size_list(column.type):
        values = [None if v is None else " ".join(map(str, v)) for v in column.to_pylist()]
        return pa.chunked_array([pa.array(values, pa.string())])
    return column


def verdict_counts(table: pa.Table, names: tuple[str, ...]) -> dict[str, int]:
    """Rows per verdict (`names`: the dictionary's words, in code order)."""
    indices = table.column("verdict").combine_chunks().indices.to_numpy()
    counts = np.bincount(indices, minlength=len(names))
    return {name: int(counts[i]) for i, name in enumerate(names)}
