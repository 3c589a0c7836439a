"""The Parquet footer join (`pipeline.io.parquet_concat`) on its own: files that pyarrow writes,
joined without decoding a value, read back by pyarrow and polars as the tables they hold, one
after the other. It parses the footers pyarrow writes, so `make floors` runs these tests at
the oldest pyarrow the package takes too (`scripts/floors.py`)."""

import io
import string

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.io.parquet_concat import (
    Joiner,
    ParquetFooterError,
    _Reader,
    join,
    parse_footer,
    read_footer,
)
from pipeline.io.writers import parquet_options


def _part(table: pa.Table, **options: object) -> bytes:
    """`table` as a whole Parquet file, written as the tool writes its parts."""
    sink = io.BytesIO()
    pq.write_table(table, sink, **{**parquet_options(table.schema), **options})
    return sink.getvalue()


def _joined(parts: list[bytes], metadata: dict[bytes, bytes] | None = None) -> bytes:
    sink = io.BytesIO()
    joiner = Joiner(sink)
    for part in parts:
        joiner.add(part)
    joiner.finish(metadata)
    return sink.getvalue()


def _read(data: bytes) -> pa.Table:
    return pq.read_table(io.BytesIO(data), page_checksum_verification=True)


def _results(rows: int, start: int = 0) -> pa.Table:
    """A table shaped like the tool's outputs: numbers, text with nulls, a dictionary column,
    a fixed-size list, booleans."""
    row = np.arange(start, start + rows)
    verdicts = pa.DictionaryArray.from_arrays(
        pa.array(row % 3, pa.int8()), pa.array(["solved", "multiple", "invalid"])
    )
    return pa.table({
        "row": row,
        "puzzle": pa.array([None if r % 7 == 0 else f"{r:081d}" for r in row.tolist()]),
        "verdict": verdicts,
        "relabel": pa.FixedSizeListArray.from_arrays(pa.array(np.tile(np.arange(9, dtype=np.int8),
                                                                      rows)), 9),
        "expected_ok": pa.array([None if r % 5 == 0 else r % 2 == 0 for r in row.tolist()]),
    })  # fmt: skip


def test_parts_join_into_the_tables_they_hold_one_after_the_other():
    tables = [_results(1000, 0), _results(10, 1000), _results(2500, 1010)]
    joined = _joined([_part(t) for t in tables])
    assert _read(joined).equals(pa.concat_tables(tables))
    assert pl.read_parquet(io.BytesIO(joined)).equals(pl.from_arrow(pa.concat_tables(tables)))


def test_each_part_keeps_its_row_groups_at_their_new_places():
    tables = [_results(900, 0), _results(400, 900)]
    parts = [_part(t, row_group_size=250) for t in tables]  # 4 and 2 row groups
    file = pq.ParquetFile(io.BytesIO(_joined(parts)), page_checksum_verification=True)
    assert file.metadata.num_row_groups == 6 and file.metadata.num_rows == 1300
    groups = [file.read_row_group(i) for i in range(6)]
    assert [g.num_rows for g in groups] == [250, 250, 250, 150, 250, 150]
    assert pa.concat_tables(groups).equals(pa.concat_tables(tables))
    starts = [file.metadata.row_group(i).column(0).data_page_offset for i in range(6)]
    assert starts == sorted(starts)  # every offset moved past the parts before it


def _first_page_places(data: bytes) -> list[tuple[int, int]]:
    """For each column chunk with an offset index: where the index puts its first page, and
    where the chunk's metadata does. Thrift, as parquet.thrift numbers the fields: a row
    group's 1: columns; a chunk's 3: meta (9: its first data page), 4 and 5: the
    offset index's place and length; an `OffsetIndex`'s 1: pages, each 1: offset."""
    places = []
    for group in parse_footer(data, len(data)).get(4)[1]:
        for chunk in dict((f, v) for f, _, v in group)[1][1]:
            fields = {f: v for f, _, v in chunk}
            if 4 not in fields:
                continue
            meta = {f: v for f, _, v in fields[3]}
            at, length = fields[4], fields[5]
            (_, _, (_, pages)), *_ = _Reader(data[at : at + length]).fields()
            places.append((pages[0][0][2], meta[9]))  # data pages only: no dictionary page
    return places


def test_statistics_stay_and_a_page_index_never_points_elsewhere():
    """A page index lists its pages by their place in the part, which the join does not
    rewrite: the first part keeps its own, a part moved along drops it (its pages would be
    looked for where the part's were)."""
    tables = [_results(3000, 0), _results(3000, 3000)]
    joined = _joined([_part(t, write_page_index=True, data_page_size=2048) for t in tables])
    meta = pq.ParquetFile(io.BytesIO(joined)).metadata
    first, second = (meta.row_group(i).column(0) for i in range(2))
    assert second.statistics.min == 3000 and second.statistics.max == 5999
    assert first.has_offset_index and not second.has_offset_index
    places = _first_page_places(joined)
    assert len(places) == meta.num_columns and all(index == at for index, at in places)
    chosen = pq.read_table(io.BytesIO(joined), filters=[("row", ">=", 4000), ("row", "<", 4010)])
    assert chosen.column("row").to_pylist() == list(range(4000, 4010))
    lazy = pl.scan_parquet(io.BytesIO(joined)).filter(pl.col("row").is_between(5990, 5999))
    assert lazy.collect()["row"].to_list() == list(range(5990, 6000))


def test_the_run_metadata_goes_into_the_footer_and_the_arrow_schema():
    table = _results(10).replace_schema_metadata({b"kept": b"yes", b"key": b"old"})
    joined = _joined([_part(table), _part(table)], {b"key": b"new", b"run": b'{"rows": 20}'})
    footer = parse_footer(joined, len(joined))
    assert footer.num_rows == 20
    assert footer.key_values()[b"run"] == b'{"rows": 20}'
    schema = pq.read_schema(io.BytesIO(joined))  # pyarrow reads it from the Arrow schema
    assert schema.metadata[b"run"] == b'{"rows": 20}'
    assert schema.metadata[b"key"] == b"new" and schema.metadata[b"kept"] == b"yes"


def test_parts_are_joined_from_files_too_and_into_a_stream(tmp_path):
    tables = [_results(100, 0), _results(100, 100)]
    paths = []
    for i, table in enumerate(tables):
        paths.append(tmp_path / f"part-{i}.parquet")
        paths[-1].write_bytes(_part(table))

    class Pipe:  # a sink that can only be written to, as stdout
        def __init__(self) -> None:
            self.data = bytearray()

        def write(self, data: bytes) -> int:
            self.data += data
            return len(data)

    pipe = Pipe()
    rows = join(pipe, paths, [read_footer(p) for p in paths])  # type: ignore[arg-type]
    assert rows == 200 and _read(bytes(pipe.data)).equals(pa.concat_tables(tables))


def test_a_part_of_another_schema_is_refused():
    joiner = Joiner(io.BytesIO())
    joiner.add(_part(_results(5)))
    with pytest.raises(ValueError, match="another schema"):
        joiner.add(_part(_results(5).drop_columns(["relabel"])))
    with pytest.raises(ValueError, match="nothing to join"):
        Joiner(io.BytesIO()).finish()


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[:-1],  # the end magic cut short
        lambda data: data[:-8] + (10**9).to_bytes(4, "little") + b"PAR1",  # a footer too long
        lambda data: data[:4] + b"\0" * (len(data) - 4),  # zeros where the footer was
        lambda data: b"",
    ],
    ids=["end cut", "length too long", "zeroed", "empty"],
)
def test_a_damaged_footer_is_said_as_one(damage):
    data = damage(_part(_results(50)))
    with pytest.raises(ParquetFooterError):
        parse_footer(data, len(data))


texts = st.text(alphabet=string.ascii_letters + "é.0", max_size=12)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.integers(-(2**40), 2**40), st.none() | texts, st.booleans()),
             max_size=120),
    st.lists(st.integers(1, 40), min_size=1, max_size=6),
)  # fmt: skip
def test_any_table_cut_anywhere_joins_back_whole(rows, cuts):
    numbers, words, flags = zip(*rows, strict=True) if rows else ((), (), ())
    table = pa.table({
        "n": pa.array(numbers, pa.int64()),
        "word": pa.array(words, pa.string()),
        "flag": pa.array(flags, pa.bool_()),
        "kind": pa.array([w or "-" for w in words], pa.string()).dictionary_encode(),
    })  # fmt: skip
    pieces, at = [], 0
    for cut in cuts * (len(rows) // sum(cuts) + 1):
        if at >= len(rows):
            break
        pieces.append(table.slice(at, cut))
        at += cut
    pieces = pieces or [table]
    joined = _read(_joined([_part(p) for p in pieces]))
    assert joined.cast(table.schema).equals(table)
