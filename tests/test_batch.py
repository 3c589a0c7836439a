"""solve_batch: puzzles in memory to a DataFrame in the result schema, bad rows included."""

from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa

from pipeline import solve_batch
from pipeline.jobs.batch import SolveOptions, solve_record_batch
from pipeline.jobs.results import empty_results, result_schema

SEED = "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79"
SOLUTION = "534678912672195348198342567859761423426853791713924856961537284287419635345286179"
DATA = Path(__file__).resolve().parents[1] / "data"


def test_one_row_per_input_row_in_order_with_a_verdict_each():
    unsolvable = "12345678." + "........9" + "." * 63
    padded = "  " + SEED.replace(".", "0") + "\n"
    puzzles = [SEED, "11" + "." * 79, "." * 81, "abc", None, "." * 80 + "x", unsolvable, padded]
    df = solve_batch(puzzles)
    assert df["row"].to_list() == list(range(len(puzzles)))
    assert df["verdict"].cast(pl.String).to_list() == [
        "solved", "invalid", "multiple", "malformed", "malformed", "malformed", "unsolvable",
        "solved",
    ]  # fmt: skip
    assert df["error"].to_list() == [
        None, "row 1 repeats 1 at columns 1 and 2", None, "expected 81 cells, got 3",
        "missing puzzle", "stray character 'x' at cell 81", None, None,
    ]  # fmt: skip
    assert df["puzzle"].to_list()[3:5] == ["abc", None]  # bad rows keep their text
    assert df["puzzle"][7] == SEED  # normalized: stripped, '.' blanks
    assert df["solution"].to_list()[:2] == [SOLUTION, None]
    assert df["clues"].to_list() == [30, 2, 0, None, None, None, 9, 30]


def test_schema_matches_the_design():
    df = solve_batch([SEED])
    table = df.to_arrow()
    assert table.column_names == result_schema().names
    assert df.schema["verdict"] == pl.Categorical or isinstance(df.schema["verdict"], pl.Enum)
    assert empty_results().num_rows == 0 and empty_results().schema == result_schema()


def test_expected_solution_column_is_checked():
    wrong = SOLUTION[:-2] + SOLUTION[-1] + SOLUTION[-2]
    batch = pa.RecordBatch.from_pydict(
        {
            "row": pa.array([0, 1, 2, 3], pa.int64()),
            "id": ["a", "b", "c", "d"],
            "puzzle": [SEED, SEED, SEED, "bad"],
            "solution": [SOLUTION, wrong, None, SOLUTION],
        }
    )
    table = solve_record_batch(batch, SolveOptions())
    assert table.column("expected_ok").to_pylist() == [True, False, None, False]
    assert table.column("id").to_pylist() == ["a", "b", "c", "d"]
    assert table.schema == result_schema(pa.string())


def test_grids_and_strategies():
    grid = np.array([[0 if c == "." else int(c) for c in SEED]], dtype=np.uint8)
    for strategy in ("fast", "mrv", "backtrack"):
        df = solve_batch(grid, strategy=strategy)
        assert df["solution"][0] == SOLUTION


def test_shipped_bad_rows_sample_gets_every_verdict():
    bad = pl.read_csv(DATA / "bad_rows.csv", infer_schema=False)
    df = solve_batch(bad["puzzle"])
    assert df.height == bad.height
    assert set(df["verdict"].cast(pl.String)) == {
        "solved", "malformed", "invalid", "unsolvable", "multiple",
    }  # fmt: skip
