"""The field separator of a CSV/TSV input, sniffed among `,` `;` `|` and tab when not given:
the one that splits the first lines into a steady number of fields and yields a puzzle column.
When none does, the error says what was tried and how to say it (`--separator`, `--column`)."""

import io
import json
import sys

import pyarrow.parquet as pq
import pytest

from pipeline.errors import InputError
from pipeline.io.opening import open_dataset
from tests.conftest import assert_one_line_error, cli
from tests.test_dataset import P1, P2, S1, S2, read_all, write


@pytest.mark.parametrize("separator", [";", "|", "\t", ","])
def test_the_separator_is_sniffed_with_a_header(tmp_path, separator):
    lines = ["id,puzzle,solution", f"1,{P1},{S1}", f"2,{P2},{S2}"]
    path = write(tmp_path / "x.csv", "\n".join(s.replace(",", separator) for s in lines) + "\n")

    ds = open_dataset(path)

    assert (ds.separator, ds.columns) == (separator, ["id", "puzzle", "solution"])
    assert read_all(ds) == {"row": [0, 1], "id": [1, 2], "puzzle": [P1, P2], "solution": [S1, S2]}


@pytest.mark.parametrize("separator", [";", "|"])
def test_the_separator_is_sniffed_without_a_header(tmp_path, separator):
    path = write(tmp_path / "x.csv", f"{P1}{separator}{S1}\n{P2}{separator}{S2}\n")

    ds = open_dataset(path)

    assert (ds.separator, ds.puzzle_column, ds.solution_column) == (
        separator,
        "column_0",
        "column_1",
    )
    assert read_all(ds)["solution"] == [S1, S2]


def test_a_tsv_file_holding_commas_is_read_by_its_commas(tmp_path):
    ds = open_dataset(write(tmp_path / "x.tsv", f"puzzle,level\n{P1},easy\n"))

    assert (ds.separator, ds.columns) == (",", ["puzzle", "level"])


def test_the_separator_that_keeps_the_fields_steady_wins(tmp_path):
    # commas inside a `;` file's notes, `;` inside a `,` file's: each read by its own separator
    semi = write(tmp_path / "semi.csv", f"id;puzzle;note\n1;{P1};hard, very\n2;{P2};easy\n")
    comma = write(tmp_path / "comma.csv", f"id,puzzle,note\n1,{P1},a;b;c\n2,{P2},d\n")

    assert read_all(open_dataset(semi))["note"] == ["hard, very", "easy"]
    assert read_all(open_dataset(comma))["note"] == ["a;b;c", "d"]


def test_a_header_alone_is_split_by_the_separator_that_names_a_puzzle_column(tmp_path):
    ds = open_dataset(write(tmp_path / "x.csv", "id;puzzle;solution\n"))

    assert (ds.separator, ds.columns, ds.num_rows) == (";", ["id", "puzzle", "solution"], 0)


def test_a_named_column_helps_choose_the_separator(tmp_path):
    ds = open_dataset(write(tmp_path / "x.csv", "key|grid_text\n"), column="grid_text",
                      has_header=True)  # fmt: skip

    assert (ds.separator, ds.puzzle_column) == ("|", "grid_text")


def test_no_separator_yields_a_puzzle_column_says_what_was_tried(tmp_path):
    path = write(tmp_path / "x.csv", "a;b\nx;y\nz;w\n")

    with pytest.raises(InputError) as caught:
        open_dataset(path)

    message = str(caught.value)
    assert "no puzzle column found" in message
    assert "tried the separators , ; | tab" in message
    assert "--separator" in message and "--column" in message


def test_a_separator_given_is_used_as_given(tmp_path):
    path = write(tmp_path / "x.csv", f"id;puzzle\n1;{P1}\n")

    with pytest.raises(InputError) as caught:
        open_dataset(path, separator=",")

    message = str(caught.value)
    assert "columns are: column_0 (separator ',')" in message and "--column" in message
    assert "tried" not in message


def test_the_cli_reads_a_semicolon_csv_and_records_the_separator(tmp_path):
    path = write(tmp_path / "semi.csv", f"id;puzzle;solution\n1;{P1};{S1}\n2;{P2};{S2}\n")

    result = cli("solve", path, "-q")

    assert result.exit_code == 0, result.output
    out = tmp_path / "semi.solved.parquet"
    table = pq.read_table(out)
    assert table.column("expected_ok").to_pylist() == [True, True]
    meta = json.loads(pq.read_schema(out).metadata[b"sudoku_pipeline"])
    assert meta["input"]["separator"] == ";"


def test_the_cli_error_hints_at_the_options(tmp_path):
    path = write(tmp_path / "x.csv", "a;b\nx;y\n")

    result = cli("solve", path, "-q")

    assert result.exit_code == 2
    assert_one_line_error(result.stderr, "no puzzle column found", "--separator", "--column")


@pytest.mark.parametrize("separator", [";", "|"])
def test_standard_input_with_another_separator_is_csv(monkeypatch, separator):
    text = f"id{separator}puzzle\n1{separator}{P1}\n2{separator}{P2}\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))

    ds = open_dataset("-")

    assert (ds.format, ds.separator) == ("csv", separator)
    assert read_all(ds)["puzzle"] == [P1, P2]
