"""sudoku-extreme's layout (`source,question,answer,rating`: the corpus HRM and TRM train on)
as the jobs that write training sets read it: `rating` (tdoku's backtrack count) as a number,
`source` (where a row comes from) as a column of codes in folders of arrays.

    batch = rating_as_number(batch)      # text from a CSV: int64 (float64 with a fraction)
    table = source_as_codes(table)       # a dictionary column: codes, labels named
    streamed_schema(schema)              # what a streamed job writes (rating always float64)

Both leave a batch without those columns as it is.
"""

import pyarrow as pa
import pyarrow.compute as pc

RATING = "rating"  # tdoku's backtracks: how hard the puzzle is for a search
SOURCE = "source"  # where the row comes from (sudoku-extreme: the collection's name)


def rating_as_number(batch: pa.RecordBatch, streamed: bool = False) -> pa.RecordBatch:
    """`rating` as int64 (float64 when some value has a fraction: a job that sees every batch
    before it writes makes them all float64 then); text that is no number becomes null (a
    rating unknown: the row itself is kept). `streamed`: text always as float64, the type of
    every batch known before the first is read (whole numbers are exact in it up to 2**53)."""
    if RATING not in batch.schema.names:
        return batch
    at = batch.schema.get_field_index(RATING)
    column = batch.column(at)
    if pa.types.is_integer(column.type) or pa.types.is_floating(column.type):
        return batch
    import polars as pl  # here: a command that reads no rating starts without it

    text = pl.Series(column).cast(pl.String).str.strip_chars()
    number = text.cast(pl.Float64 if streamed else pl.Int64, strict=False)
    if number.null_count() > text.null_count() and not streamed:
        floats = text.cast(pl.Float64, strict=False)
        if floats.null_count() < number.null_count():
            number = floats
    array = number.to_arrow(compat_level=pl.CompatLevel.oldest())
    return batch.set_column(at, pa.field(RATING, array.type), array)


def source_as_codes(table: pa.Table) -> pa.Table:
    """`source` (text) as a dictionary column, so that a folder of arrays keeps it as codes
    with their labels (`io.arrays`) where it would leave text out."""
    if SOURCE not in table.column_names or not _is_text(table.schema.field(SOURCE).type):
        return table
    at = table.column_names.index(SOURCE)
    codes = pc.dictionary_encode(table.column(SOURCE))
    return table.set_column(at, pa.field(SOURCE, codes.type), codes)


def streamed_schema(schema: pa.Schema) -> pa.Schema:
    """The schema of tables of `schema` once `rating_as_number(streamed=True)` and
    `source_as_codes` have made them over."""

    def made_over(f: pa.Field) -> pa.Field:
        if f.name == SOURCE and _is_text(f.type):
            return pa.field(SOURCE, pa.dictionary(pa.int32(), f.type))
        if f.name == RATING and not (pa.types.is_integer(f.type) or pa.types.is_floating(f.type)):
            return pa.field(RATING, pa.float64())
        return f

    return pa.schema([made_over(f) for f in schema])


def _is_text(kind: pa.DataType) -> bool:
    return pa.types.is_string(kind) or pa.types.is_large_string(kind)
