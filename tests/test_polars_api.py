"""The polars-native API: `solve_batch`, `validate_puzzles`, `rate` and `canonical` keep a
DataFrame's other columns and take a LazyFrame (a LazyFrame in, a LazyFrame out); `import
pipeline` registers the `sudoku` expression namespace, built on the same batch kernels."""

import subprocess
import sys
import warnings
from datetime import date

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import pipeline
from pipeline.kernels.codes import VERDICT_NAMES

SEED = "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79"
SOLUTION = "534678912672195348198342567859761423426853791713924856961537284287419635345286179"
EMPTY = "." * 81
CLASH = "11" + "." * 79
PUZZLES = [SEED, EMPTY, CLASH, "bad", None, SEED.replace(".", "0")]


def _kaggle_like():
    """A frame as people hold one: an id, the puzzles, their solutions and columns of their own,
    one of them named like a result column (`clues`)."""
    return pl.DataFrame(
        {
            "id": [10, 11, 12, 13, 14, 15],
            "source": ["forum", "x", "x", "x", "x", "kaggle"],
            "quizzes": PUZZLES,
            "solutions": [SOLUTION, None, None, None, None, SOLUTION],
            "clues": ["30", "0", "2", "?", None, "30"],
            "seen": [date(2026, 1, d) for d in range(1, 7)],
            "tier": pl.Series(["b", "a", "a", "a", "a", "b"], dtype=pl.Enum(["b", "a"])),
        }
    )


def _no_times(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.drop("solve_ns")


# ---- solve_batch: the frame's other columns come along --------------------------------------


def test_solve_batch_keeps_a_dataframes_other_columns_after_the_results():
    frame = _kaggle_like()
    out = pipeline.solve_batch(frame)
    results = pipeline.solve_batch(frame["quizzes"]).columns
    assert out.columns == [*results[:1], "id", *results[1:], "source", "input_clues", "seen",
                           "tier"]  # fmt: skip
    assert out["input_clues"].to_list() == frame["clues"].to_list()  # renamed, as from a file
    assert out["clues"].to_list() == [30, 0, 2, None, None, 30]  # the result's own
    assert out.select("source", "seen", "tier").equals(frame.select("source", "seen", "tier"))
    assert out.schema["tier"] == frame.schema["tier"]  # types kept exactly: an Enum stays one


def test_solve_batch_keeps_the_other_columns_with_workers_too():
    frame = _kaggle_like()
    alone = _no_times(pipeline.solve_batch(frame))
    assert_frame_equal(_no_times(pipeline.solve_batch(frame, workers=2)), alone)


def test_solve_batch_of_a_pyarrow_table_keeps_its_other_columns_too():
    out = pipeline.solve_batch(_kaggle_like().to_arrow())
    assert out.columns[-4:] == ["source", "input_clues", "seen", "tier"]


# ---- LazyFrames: a LazyFrame in, a LazyFrame out; no warning on the way ------------------------


@pytest.fixture
def no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # polars' PerformanceWarning leaked here before
        yield


def test_solve_batch_of_a_lazyframe_is_a_lazyframe_of_the_same_rows(no_warnings):
    frame = _kaggle_like()
    lazy = pipeline.solve_batch(frame.lazy())
    assert isinstance(lazy, pl.LazyFrame)
    eager = pipeline.solve_batch(frame)
    assert lazy.collect_schema() == eager.schema  # known before anything runs
    assert_frame_equal(_no_times(lazy.collect()), _no_times(eager))


def test_solve_batch_of_a_lazyframe_takes_the_same_options(no_warnings):
    lazy = pl.LazyFrame({"b": [SEED, SEED], "k": ["x", "y"]})
    out = pipeline.solve_batch(lazy, solutions=1, column="b", id_column="k", workers=2).collect()
    assert out["verdict"].to_list() == ["found", "found"] and out["id"].to_list() == ["x", "y"]


def test_a_lazyframes_puzzle_column_is_found_by_content_when_no_name_says_so(no_warnings):
    lazy = pl.LazyFrame({"label": ["a", "b"], "text": [SEED, None]})
    out = pipeline.solve_batch(lazy).collect()
    assert out["solution"].to_list() == [SOLUTION, None] and out.columns[-1] == "label"


def test_a_lazyframe_without_a_puzzle_column_says_so_before_it_runs(no_warnings):
    with pytest.raises(pipeline.InputError, match="no puzzle column found"):
        pipeline.solve_batch(pl.LazyFrame({"a": [1, 2], "b": ["x", "y"]}))


def test_validate_puzzles_of_a_lazyframe_is_a_lazyframe_of_the_same_findings(no_warnings):
    frame = pl.DataFrame({"id": ["a", "b", "c", "d"], "puzzle": [SEED, CLASH, SEED, EMPTY]})
    lazy = pipeline.validate_puzzles(frame.lazy())
    assert isinstance(lazy, pl.LazyFrame)
    eager = pipeline.validate_puzzles(frame)
    assert lazy.collect_schema() == eager.schema
    assert_frame_equal(lazy.collect(), eager)
    assert "duplicate" in eager["code"].to_list()  # found over the whole frame


# ---- rate and canonical over frames: the frame with their columns added ----------------------


def test_canonical_of_a_dataframe_adds_the_column_to_the_frame():
    frame = _kaggle_like()
    out = pipeline.canonical(frame)
    assert out.columns == [*frame.columns, "canonical"]
    assert out["canonical"].to_list() == pipeline.canonical(frame["quizzes"]).to_list()
    assert out.drop("canonical").equals(frame)


def test_canonical_of_a_lazyframe_is_lazy_and_names_its_column(no_warnings):
    lazy = pl.LazyFrame({"text": [SEED], "board": [EMPTY]})
    out = pipeline.canonical(lazy, column="text")
    assert isinstance(out, pl.LazyFrame)
    assert out.collect()["canonical"].to_list() == pipeline.canonical([SEED]).to_list()


def test_rate_of_a_dataframe_adds_the_rating_columns_renaming_a_clash():
    frame = _kaggle_like().rename({"source": "grade"})
    out = pipeline.rate(frame, samples=2)
    alone = pipeline.rate(frame["quizzes"], samples=2)
    assert out.columns == ["id", "input_grade", "quizzes", "solutions", "clues", "seen", "tier",
                           "difficulty", "grade", "steps", "steps_by_level"]  # fmt: skip
    assert out.select(alone.columns).equals(alone)
    assert out["input_grade"].to_list() == frame["grade"].to_list()


def test_rate_of_a_lazyframe_is_lazy(no_warnings):
    lazy = pipeline.rate(_kaggle_like().lazy(), samples=0)
    assert isinstance(lazy, pl.LazyFrame)
    assert lazy.collect()["grade"].dtype == pl.Enum(pipeline.GRADES)


def test_column_names_a_frames_column_only():
    with pytest.raises(ValueError, match="column= names a column of a DataFrame"):
        pipeline.rate([SEED], column="puzzle")


# ---- the `sudoku` expression namespace -------------------------------------------------------


def test_the_namespace_gives_what_the_batch_functions_give():
    frame = pl.DataFrame({"puzzle": PUZZLES})
    sudoku = pl.col("puzzle").sudoku
    out = frame.select(  # each keeps the column's name, as polars' own namespaces do
        sudoku.solve().alias("solved"), sudoku.solution().alias("solution"),
        sudoku.verdict().alias("verdict"), sudoku.clues().alias("clues"),
        sudoku.canonical().alias("canonical"), sudoku.rate(samples=2).alias("rating"),
        sudoku.grade().alias("grade"), sudoku.is_valid().alias("is_valid"), sudoku.clues(),
    )  # fmt: skip
    assert out.columns[-1] == "puzzle"
    solved = pipeline.solve_batch(PUZZLES)
    fields = ["verdict", "solution", "clues", "nodes", "guesses", "error"]
    assert_frame_equal(out["solved"].struct.unnest().select(fields), solved.select(fields))
    assert out.schema["verdict"] == pl.Enum(VERDICT_NAMES)
    assert out["solution"].to_list() == solved["solution"].to_list()
    assert out["verdict"].to_list() == solved["verdict"].to_list()
    assert out["clues"].to_list() == solved["clues"].to_list()
    assert out["canonical"].to_list() == pipeline.canonical(PUZZLES).to_list()
    assert_frame_equal(out["rating"].struct.unnest(), pipeline.rate(PUZZLES, samples=2))
    assert out["grade"].to_list() == pipeline.rate(PUZZLES, samples=0)["grade"].to_list()
    assert out["is_valid"].to_list() == [True, True, False, None, None, True]


def test_the_namespace_takes_the_solvers_options():
    out = pl.select(pl.lit(SEED).sudoku.verdict(solutions=1, strategy="mrv"))
    assert out.item() == "found"


def test_the_namespace_works_in_a_streaming_lazy_query_and_in_filters():
    lazy = pl.LazyFrame({"puzzle": PUZZLES * 50})
    solved = (
        lazy.filter(pl.col("puzzle").sudoku.is_valid())
        .with_columns(pl.col("puzzle").sudoku.solution().alias("solution"))
        .collect(engine="streaming")
    )
    assert solved.height == 150  # the clash, "bad" and None filtered out
    assert (solved["solution"] == SOLUTION).sum() == 100  # the empty grid has a solution too


def test_the_namespace_on_a_column_that_is_not_text_says_so():
    with pytest.raises(TypeError, match="expected a column of puzzle strings, got a column of"):
        pl.DataFrame({"puzzle": [1, 2]}).select(pl.col("puzzle").sudoku.canonical())


REGISTERED = """
import sys
{first}
print("polars" in sys.modules, flush=True)
{second}
import polars as pl
print(pl.select(pl.lit({seed!r}).sudoku.solution()).item())
"""


@pytest.mark.parametrize("order", ["pipeline first", "polars first"])
def test_import_pipeline_registers_the_namespace_without_importing_polars(order):
    first, second = "import pipeline", "import polars"
    if order == "polars first":
        first, second = second, first
    code = REGISTERED.format(first=first, second=second, seed=SEED)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    loaded, solution = done.stdout.split()
    assert loaded == ("False" if order == "pipeline first" else "True")
    assert solution == SOLUTION


def test_an_empty_frame_gets_the_columns_with_their_types():
    assert pipeline.rate(pl.DataFrame()).schema == pipeline.rate([]).schema
    assert pipeline.canonical(pl.DataFrame({"puzzle": []}, schema={"puzzle": pl.String})).schema[
        "canonical"] == pl.String  # fmt: skip


def test_the_namespaces_default_strategy_is_the_solvers():
    from pipeline import namespace
    from pipeline.kernels import DEFAULT_STRATEGY

    assert namespace.DEFAULT_STRATEGY == DEFAULT_STRATEGY


def test_a_bad_option_is_said_when_the_expression_is_made_not_when_it_runs():
    with pytest.raises(ValueError, match="solutions must be at least 1"):
        pl.col("puzzle").sudoku.solve(solutions=0)
    with pytest.raises(ValueError, match="samples and seed"):
        pl.col("puzzle").sudoku.rate(samples=-1)
