"""Columns as CSV and JSON Lines hold them (`io.text_columns`): what a Parquet input passes
through in a faithful text form, or refused before any work, naming the column."""

import json

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.errors import InputError
from pipeline.io.text_columns import check_text_columns
from tests.conftest import cli
from tests.test_outputs_faults import CORPUS, names

# a pass-through column, its values (the last one null), and how CSV and JSON Lines hold them
PASSING = {
    "struct": (pa.array([{"a": 1, "b": "x"}, None]), '{"a":1,"b":"x"}', {"a": 1, "b": "x"}),
    "list of text": (pa.array([["a", "b,c"], None]), '["a","b,c"]', ["a", "b,c"]),
    "map": (pa.array([[("k", 1)], None], pa.map_(pa.string(), pa.int64())), '{"k":1}', {"k": 1}),
    "duration": (pa.array([1000, None], pa.duration("us")), "PT0.001S", "PT0.001S"),
    "binary": (pa.array([b"\x00\xff", None]), "00ff", "00ff"),
    "fixed binary": (pa.array([b"\x0a\x0b", None], pa.binary(2)), "0a0b", "0a0b"),
    "list of binary": (pa.array([[b"\x01", None], None]), '["01",null]', ["01", None]),
    "uuid": (
        pa.array([bytes(range(16)), None], pa.uuid()),
        bytes(range(16)).hex(),
        bytes(range(16)).hex(),
    ),
    "256-bit decimal": (pa.array([150, None]).cast(pa.decimal256(40, 2)), "150.00", "150.00"),
}


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
@pytest.mark.parametrize("kind", PASSING)
def test_pass_through_columns_are_written_to_text_in_a_faithful_form(tmp_path, fmt, kind):
    values, as_csv, as_json = PASSING[kind]
    data = tmp_path / "in.parquet"
    puzzles = CORPUS["puzzle"].head(2).to_list()
    pq.write_table(pa.table({"puzzle": puzzles, "extra": values}), data)
    out = tmp_path / f"out.{fmt}"

    result = cli("solve", data, "-o", out, "--batch-size", 1)

    assert result.exit_code == 0, result.output
    if fmt == "csv":
        got = pl.read_csv(out, infer_schema=False)["extra"].to_list()
        assert got == [as_csv, None]
    else:
        got = [json.loads(line)["extra"] for line in out.read_text().splitlines()]
        assert got == [as_json, None]
    assert names(tmp_path) == ["in.parquet", f"out.{fmt}"]


def test_a_column_text_cannot_hold_is_refused_before_any_work_naming_it():
    schema = pa.schema([("puzzle", pa.string()), ("when", pa.month_day_nano_interval())])

    with pytest.raises(InputError) as refused:
        check_text_columns(schema, "csv")

    assert "column 'when'" in str(refused.value) and "write Parquet" in str(refused.value)
    check_text_columns(schema, "parquet")  # Parquet holds every column
