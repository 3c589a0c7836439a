"""solve_batch: puzzles in memory to a DataFrame in the result schema, bad rows included."""

from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pytest

from pipeline import solve_batch
from pipeline.grid import parse_puzzles
from pipeline.io.columns import RESERVED_NAMES
from pipeline.jobs.solve.batch import SolveOptions, solve_record_batch
from pipeline.kernels import solve_grids
from pipeline.results.schema import COLUMNS, build_results, empty_results, result_schema
from tests.conftest import COMPILED_BY

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
        "missing puzzle", "stray character 'x' at cell 80", None, None,
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


# ---- what solve_batch refuses, and why ------------------------------------------------------

GRID = [0 if c == "." else int(c) for c in SEED]


@pytest.mark.parametrize(
    ("puzzles", "message"),
    [
        (np.array([[4.7] + GRID[1:], [np.nan] + GRID[1:]]), "got dtype float64"),
        (np.array([GRID], dtype=np.bool_), "got dtype bool"),
        (SEED, "got one str: pass a list"),
        (SEED.encode(), "got bytes"),
        ([SEED, 42], "item 1 is of type int"),
        ([list(SEED)], "item 0 is of type list"),
        (pl.Series([1, 2]), "got a column of Int64"),
        (pa.array([1.5]), "got a column of double"),
        (42, "got an object of type int"),
    ],
    ids=["floats", "bools", "one str", "bytes", "an int item", "a board item", "int Series",
         "float Arrow array", "int"],
)  # fmt: skip
def test_what_is_not_a_column_of_puzzles_is_a_type_error(puzzles, message):
    with pytest.raises(TypeError, match=message):
        solve_batch(puzzles)


@pytest.mark.parametrize(
    ("puzzles", "message"),
    [
        (np.array([GRID, [260] + GRID[1:]]), "row 1, cell 0 is 260, expected 0 \\(blank\\) to 9"),
        (np.array([GRID, GRID[:80] + [-1]]), "row 1, cell 80 is -1, expected 0 \\(blank\\) to 9"),
        (np.array([GRID[:80]]), "expected grids of shape \\(n, 81\\), got \\(1, 80\\)"),
        (np.array(GRID), "an array of shape \\(81,\\) is one board"),
    ],
    ids=["260", "-1", "80 cells", "one board"],
)
def test_an_int_array_with_cells_outside_0_to_9_is_a_value_error(puzzles, message):
    with pytest.raises(ValueError, match=message):
        solve_batch(puzzles)


@pytest.mark.parametrize(
    "puzzles",
    [
        np.array([GRID], dtype=np.int64),
        np.array([GRID], dtype=np.int8),
        np.array([GRID], dtype=np.uint16),
        pl.Series([SEED]).cast(pl.Categorical),
        pa.array([SEED], pa.large_string()),
        pa.chunked_array([[SEED]]),
        pa.array([SEED]).dictionary_encode(),
        np.array([SEED]),
        np.array([SEED], dtype=object),
        (p for p in [SEED]),
        (SEED,),
    ],
    ids=["int64", "int8", "uint16", "Categorical", "large_string", "chunked", "dictionary",
         "numpy str", "numpy object", "generator", "tuple"],
)  # fmt: skip
def test_every_kind_of_column_gives_the_same_result(puzzles):
    df = solve_batch(puzzles)
    assert df.select("row", "puzzle", "verdict", "solution").rows() == [
        (0, SEED, "solved", SOLUTION)
    ]


def test_the_inputs_other_columns_pass_through_after_the_schemas_own():
    batch = pa.RecordBatch.from_pydict(
        {
            "row": pa.array([0, 1], pa.int64()),
            "id": pa.array([7, 8], pa.int64()),
            "puzzle": [SEED, "bad"],
            "source": ["forum", None],
            "difficulty": pa.array([0.5, 2.0], pa.float64()),
        }
    )
    table = solve_record_batch(batch, SolveOptions())
    extra = pa.schema([("source", pa.string()), ("difficulty", pa.float64())])
    assert table.schema == result_schema(pa.int64(), extra)
    assert table.column_names[-2:] == ["source", "difficulty"]
    assert table.column("source").to_pylist() == ["forum", None]
    assert table.column("difficulty").to_pylist() == [0.5, 2.0]
    assert table.column("verdict").to_pylist() == ["solved", "malformed"]
    assert empty_results(pa.int64(), extra).schema == table.schema


def test_reading_renames_exactly_the_result_columns():
    # pipeline.io cannot import the result schema (layers point down): it keeps a copy of the
    # names, so that a passed-through `clues` becomes `input_clues`; the two must agree.
    # the columns on request (--solutions N, --canonical, --rate, --solver) are reserved by the
    # job that adds them
    added = pa.unify_schemas(
        [
            SolveOptions(solver="c:lib.so:fn").added_schema(),
            SolveOptions(solutions=3, canonical=True, rate=True).added_schema(),
        ]
    )
    assert set(COLUMNS) == set(result_schema(pa.string(), added).names)
    assert RESERVED_NAMES == set(result_schema(pa.string()).names)
    with pytest.raises(ValueError, match="clash"):
        build_results(
            pa.array([0], pa.int64()), pa.array([SEED]), parse_puzzles([SEED]),
            solve_grids(parse_puzzles([SEED]).grids), extra={"clues": pa.array(["x"])},
        )  # fmt: skip


WARM_THEN_SOLVE = (
    COMPILED_BY
    + """
from pipeline.run.warmup import warm
from pipeline.jobs.solve.batch import SolveOptions, solve_record_batch

options = SolveOptions(sys.argv[1], canonical=sys.argv[2] == "1", rate=sys.argv[2] == "1")
warm(options.kernels())
compiled_by(lambda batch: solve_record_batch(batch, options))
"""
)


@pytest.mark.parametrize(("strategy", "added"), [("fast", False), ("mrv", True)])
def test_the_warm_up_loads_every_kernel_a_batch_calls(strategy, added):
    """Workers solve a batch only after `warm(options.kernels())`: a kernel it missed would
    compile in every worker at once on a first run, with no word of it (--rate, --canonical)."""
    import subprocess
    import sys

    argv = [sys.executable, "-c", WARM_THEN_SOLVE, strategy, str(int(added)), SEED]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
