"""Puzzles held in memory, DataFrames included, read the way a file is read: the puzzle
column found by name (puzzle, quizzes, board, ...) or by content, or named with `column=`; a
solution column checked (`expected_ok`, `wrong_solution`); an id column passed through."""

import numpy as np
import polars as pl
import pyarrow as pa
import pytest

from pipeline import solve_batch, validate_puzzles
from pipeline.io.frames import puzzle_batch

SEED = "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79"
SOLUTION = "534678912672195348198342567859761423426853791713924856961537284287419635345286179"
WRONG = SOLUTION[:-2] + SOLUTION[-1] + SOLUTION[-2]


def test_a_dataframe_like_kaggles_keeps_ids_and_checks_the_solution_column():
    df = pl.DataFrame({"id": [7, 8, 9], "quizzes": [SEED, SEED, "bad"],
                       "solutions": [SOLUTION, WRONG, None]})  # fmt: skip
    out = solve_batch(df)
    assert out.columns[:3] == ["row", "id", "puzzle"]
    assert out["id"].to_list() == [7, 8, 9] and out.schema["id"] == pl.Int64  # type kept
    assert out["expected_ok"].to_list() == [True, False, None]
    assert out["verdict"].cast(pl.String).to_list() == ["solved", "solved", "malformed"]


def test_the_puzzle_column_is_found_by_content_when_no_name_says_so():
    df = pl.DataFrame({"label": ["a", "b"], "text": [SEED, SEED.replace(".", "0")]})
    out = solve_batch(df)
    assert out["solution"].to_list() == [SOLUTION, SOLUTION]
    assert "id" not in out.columns


def test_columns_can_be_named_and_are_matched_case_insensitively():
    df = pl.DataFrame({"Key": ["x", "y"], "A": [SEED, SEED], "B": [SEED, SEED],
                       "Sol": [SOLUTION, WRONG]})  # fmt: skip
    out = solve_batch(df, column="b", solution_column="sol", id_column="key")
    assert out["id"].to_list() == ["x", "y"]
    assert out["expected_ok"].to_list() == [True, False]


@pytest.mark.parametrize(
    ("frame", "options", "error", "message"),
    [
        (pl.DataFrame({"a": [1, 2], "b": ["x", "y"]}), {}, ValueError,
         "no puzzle column found .* columns are: a, b"),
        (pl.DataFrame({"puzzle": [SEED]}), {"column": "grid"}, ValueError,
         "column 'grid' not found; columns are: puzzle"),
        (pl.DataFrame({"puzzle": [1]}), {}, TypeError, "column 'puzzle' holds Int64, not text"),
        (pl.DataFrame({"puzzle": [SEED], "solution": [3]}), {}, TypeError,
         "column 'solution' holds Int64, not text"),
        (pl.DataFrame({"puzzle": [SEED], "id": [1]}), {"id_column": "puzzle"}, ValueError,
         "must differ"),
        ([SEED], {"column": "puzzle"}, ValueError, "column= names a column of a DataFrame"),
    ],
    ids=["no puzzle column", "no such column", "ints for puzzles", "ints for solutions",
         "one column twice", "column of a list"],
)  # fmt: skip
def test_what_is_wrong_with_a_dataframe_is_said_in_one_line(frame, options, error, message):
    with pytest.raises(error, match=message):
        solve_batch(frame, **options)


def test_generate_feeds_solve_batch_and_validate_puzzles():
    from pipeline import generate

    puzzles = generate(20, seed=3)
    out = solve_batch(puzzles)
    assert out["id"].to_list() == puzzles["id"].to_list()
    assert out["expected_ok"].all() and (out["verdict"].cast(pl.String) == "solved").all()
    assert validate_puzzles(puzzles).is_empty()


def test_an_arrow_table_is_read_like_a_dataframe():
    table = pa.table({"id": ["a"], "board": [SEED]})
    assert solve_batch(table).select("id", "solution").rows() == [("a", SOLUTION)]


def test_validate_puzzles_reads_a_dataframe_and_names_ids_in_duplicates():
    df = pl.DataFrame({"id": ["p", "q", "r"], "puzzle": [SEED, "bad", SEED],
                       "solution": [SOLUTION, None, WRONG]})  # fmt: skip
    findings = validate_puzzles(df)
    assert findings.select("row", "id", "code").rows() == [
        (1, "q", "malformed"), (2, "r", "wrong_solution"), (2, "r", "duplicate"),
    ]  # fmt: skip
    assert findings.filter(pl.col("code") == "duplicate")["message"][0].endswith("(id p)")


def test_validate_puzzles_takes_solutions_beside_a_column_not_beside_a_dataframe():
    assert validate_puzzles([SEED], [WRONG])["code"].to_list() == ["wrong_solution"]
    with pytest.raises(ValueError, match="solution_column="):
        validate_puzzles(pl.DataFrame({"puzzle": [SEED]}), [SOLUTION])
    with pytest.raises(ValueError, match="1 puzzles but 2 solutions"):
        validate_puzzles([SEED], [SOLUTION, SOLUTION])


def test_puzzle_batch_is_what_a_files_reader_gives():
    df = pl.DataFrame({"id": ["a", "b"], "puzzle": [SEED, None], "solution": [SOLUTION, None]})
    batch = puzzle_batch(df)
    names = ["row", "id", "puzzle", "solution"]
    assert batch.schema == pa.schema(zip(names, [pa.int64()] + [pa.string()] * 3, strict=True))
    assert batch.column(0).to_pylist() == [0, 1]
    assert puzzle_batch([SEED]).schema.names == ["row", "puzzle"]


def test_an_empty_dataframe_gives_an_empty_result_with_its_ids():
    empty = pl.DataFrame(schema={"id": pl.Int64, "text": pl.String})
    out = solve_batch(empty)
    assert out.height == 0 and out.schema["id"] == pl.Int64
    assert validate_puzzles(empty).is_empty()


def test_a_dataframe_without_columns_gives_an_empty_result():
    assert solve_batch(pl.DataFrame()).height == 0
    assert validate_puzzles(pl.DataFrame()).is_empty()
    assert puzzle_batch(pa.table({})).schema.names == ["row", "puzzle"]
    rows_without_columns = pl.DataFrame({"a": [1, 2]}).drop("a")  # two rows, no puzzle
    with pytest.raises(ValueError, match=r"no puzzle column found.*columns are: \(none\)"):
        solve_batch(rows_without_columns)


def test_nan_for_a_missing_puzzle_is_a_malformed_row_as_null_is():
    # What a pandas Series with a missing puzzle holds (`list(series)`, `series.to_numpy()`):
    # NaN, not None. It is no wrong type, it is a missing value: the row is malformed.
    nan = float("nan")
    for puzzles in ([SEED, nan], np.array([SEED, nan], dtype=object), pl.Series([SEED, None])):
        out = solve_batch(puzzles)
        assert out["verdict"].cast(pl.String).to_list() == ["solved", "malformed"]
        assert out["puzzle"][1] is None
    assert validate_puzzles([nan])["code"].to_list() == ["malformed"]
    with pytest.raises(TypeError, match="item 1 is of type float"):
        solve_batch([SEED, 1.5])  # a number is still no puzzle


def test_a_pandas_series_with_a_missing_puzzle():
    pd = pytest.importorskip("pandas")
    out = solve_batch(pd.Series([SEED, None, float("nan")]))
    assert out["verdict"].cast(pl.String).to_list() == ["solved", "malformed", "malformed"]
    with pytest.raises(TypeError, match="item 2 is of type int"):
        solve_batch([float("nan"), None, 7])  # the first item that is neither text nor missing
