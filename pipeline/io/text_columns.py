"""Columns as CSV and JSON Lines can hold them: a faithful text form for every column a
Parquet input passes through, or a refusal before any work.

    table = for_text(table, "csv")           # in each part, before it is encoded
    data = text_bytes(table, "csv")          # the text itself (`io.writers.encode` calls it)
    check_text_columns(schema, "csv")        # before the run: InputError naming the column

CSV: dictionaries decoded; flat lists of numbers as space-separated numbers (`steps_by_level`);
structs, maps and other lists as JSON text (the value JSON Lines writes); bytes as hex;
durations in ISO 8601 (`PT0.001S`, as JSON Lines writes them). JSON Lines: structs, maps and
lists as they are, bytes (at any depth) as hex. In both, extension types as what they are
stored as (a UUID's 16 bytes as hex), 256-bit decimals as their digits. A type with no text
form here (a union, an interval) is refused by `check_text_columns`, in one line that names
the column.
"""

import io
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.errors import InputError

FORMAT_NAMES = {"csv": "CSV", "jsonl": "JSON Lines"}


def for_text(table: pa.Table, fmt: str) -> pa.Table:
    """`table` with each column in a form `fmt` (csv or jsonl) can hold (see the module)."""
    columns = [_column(column, fmt) for column in table.columns]
    if all(new is old for new, old in zip(columns, table.columns, strict=True)):
        return table
    return pa.table(dict(zip(table.column_names, columns, strict=True)))


def text_bytes(table: pa.Table, fmt: str, header: bool = True) -> bytes:
    """`table` as CSV (with a header line when `header`) or JSON Lines text, each column in a
    form `fmt` can hold (`for_text`): the one place text is encoded."""
    import polars as pl  # text outputs only: solving to Parquet does not import polars

    frame = pl.from_arrow(for_text(table, fmt))
    assert isinstance(frame, pl.DataFrame)
    sink = io.BytesIO()
    if fmt == "csv":
        frame.write_csv(sink, include_header=header)
    elif fmt == "jsonl":
        frame.write_ndjson(sink)
    else:
        raise ValueError(f"not a text format: {fmt!r}")
    return sink.getvalue()


def check_text_columns(schema: pa.Schema, fmt: str) -> None:
    """Refuse (`InputError`, one line naming the column) a column `fmt` cannot hold even in a
    text form, before any work; Parquet holds every column."""
    if fmt not in FORMAT_NAMES:
        return
    for field in schema:
        if not (_unsupported(field.type, top=True) or _fails(field, fmt)):
            continue
        raise InputError(
            f"column {field.name!r} ({field.type}) cannot be written as {FORMAT_NAMES[fmt]}; "
            "write Parquet (-o NAME.parquet), or leave the column out of the input"
        )


def _unsupported(kind: pa.DataType, top: bool = False) -> bool:
    """Types with no text form here (and some on which polars panics, printing to stderr)."""
    if isinstance(kind, pa.BaseExtensionType):
        return not top or _unsupported(kind.storage_type, top)
    if (pa.types.is_union(kind) or pa.types.is_interval(kind) or pa.types.is_list_view(kind)
            or pa.types.is_large_list_view(kind) or pa.types.is_run_end_encoded(kind)
            or (pa.types.is_decimal256(kind) and not top)):  # fmt: skip
        return True
    if pa.types.is_dictionary(kind):
        return _unsupported(kind.value_type, top)
    return any(_unsupported(child) for child in _children(kind))


def _fails(field: pa.Field, fmt: str) -> bool:
    """Whether a row of nulls of this column fails to encode (what the rules above miss)."""
    try:
        text_bytes(pa.table({field.name: pa.nulls(1, field.type)}), fmt)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:  # polars' Rust panics are BaseExceptions
        return True
    return False


def _column(column: pa.ChunkedArray, fmt: str) -> pa.ChunkedArray:
    kind = column.type
    if isinstance(kind, pa.BaseExtensionType):  # a UUID, JSON text: what they are stored as
        storage = [chunk.storage for chunk in column.chunks]
        return _column(pa.chunked_array(storage, kind.storage_type), fmt)
    if pa.types.is_dictionary(kind) and (fmt == "csv" or not _is_text(kind.value_type)):
        return _column(column.cast(kind.value_type), fmt)
    if pa.types.is_decimal256(kind):  # beyond polars: its exact digits
        return column.cast(pa.string())
    if _is_bytes(kind):
        return _hex(column)
    if _has_bytes(kind):
        column = _hex_nested(column)
        kind = column.type
    if fmt == "jsonl":
        return column
    if pa.types.is_duration(kind):
        import polars as pl

        return pa.chunked_array([pl.Series(column).dt.to_string("iso").to_arrow()])
    if _is_list(kind) and _is_number(kind.value_type):
        values = [None if v is None else " ".join(map(str, v)) for v in column.to_pylist()]
        return pa.chunked_array([pa.array(values, pa.string())])
    if pa.types.is_nested(kind):
        return _json_text(column)
    return column


def _is_text(kind: pa.DataType) -> bool:
    return pa.types.is_string(kind) or pa.types.is_large_string(kind)


def _is_bytes(kind: pa.DataType) -> bool:
    return (pa.types.is_binary(kind) or pa.types.is_large_binary(kind)
            or pa.types.is_fixed_size_binary(kind) or pa.types.is_binary_view(kind))  # fmt: skip


def _is_list(kind: pa.DataType) -> bool:
    return (pa.types.is_list(kind) or pa.types.is_large_list(kind)
            or pa.types.is_fixed_size_list(kind))  # fmt: skip


def _is_number(kind: pa.DataType) -> bool:
    return pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_boolean(kind)


def _children(kind: pa.DataType) -> list[pa.DataType]:
    if _is_list(kind):
        return [kind.value_type]
    if pa.types.is_map(kind):
        return [kind.key_type, kind.item_type]
    if pa.types.is_struct(kind):
        return [kind.field(i).type for i in range(kind.num_fields)]
    return []


def _has_bytes(kind: pa.DataType) -> bool:
    return any(_is_bytes(child) or _has_bytes(child) for child in _children(kind))


def _hex_type(kind: pa.DataType) -> pa.DataType:
    """`kind` with bytes, at any depth, as text."""
    if _is_bytes(kind):
        return pa.string()
    if pa.types.is_fixed_size_list(kind):
        return pa.list_(_hex_type(kind.value_type), kind.list_size)
    if pa.types.is_large_list(kind):
        return pa.large_list(_hex_type(kind.value_type))
    if pa.types.is_list(kind):
        return pa.list_(_hex_type(kind.value_type))
    if pa.types.is_map(kind):
        return pa.map_(_hex_type(kind.key_type), _hex_type(kind.item_type))
    if pa.types.is_struct(kind):
        fields = [kind.field(i) for i in range(kind.num_fields)]
        return pa.struct([f.with_type(_hex_type(f.type)) for f in fields])
    return kind


def _hex(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """Bytes as hex text, vectorized."""
    import polars as pl

    return pa.chunked_array([pl.Series(column).bin.encode("hex").to_arrow().cast(pa.string())])


def _hex_nested(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """Bytes inside lists, maps or structs as hex text (value by value: a rare column)."""

    def hexed(value: Any) -> Any:
        if isinstance(value, bytes):
            return value.hex()
        if isinstance(value, list):
            return [hexed(v) for v in value]
        if isinstance(value, tuple):  # a map's (key, item)
            return tuple(hexed(v) for v in value)
        if isinstance(value, dict):
            return {k: hexed(v) for k, v in value.items()}
        return value

    values = [hexed(v) for v in column.to_pylist()]
    return pa.chunked_array([pa.array(values, _hex_type(column.type))])


def _json_text(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """Each value as the JSON text JSON Lines writes for it; nulls stay null."""
    lines = text_bytes(pa.table({"v": column}), "jsonl").split(b"\n")[: len(column)]  # {"v":V}
    texts = pc.utf8_slice_codeunits(pa.array(lines, pa.binary()).cast(pa.string()), 5, -1)
    return pa.chunked_array([pc.if_else(pc.is_null(column.combine_chunks()), None, texts)])
