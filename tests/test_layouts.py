"""The layouts people hold, known by their column names (`pipeline.io.layouts`): sudoku-extreme,
Kaggle's 1M, 3M and 9M, RRN. Their puzzle and solution columns are read by name in every job,
no header is guessed, `score` never grades a solution column, and the run's metadata says
which layout was recognised."""

import json

import polars as pl
import pyarrow.parquet as pq
import pytest

import pipeline
from pipeline.io.layouts import known_layout
from pipeline.io.opening import open_dataset
from pipeline.io.runinfo import METADATA_KEY
from tests.conftest import assert_one_line_error, cli

CORPUS = pipeline.generate(6, seed=34)
PUZZLES: list[str] = CORPUS["puzzle"].to_list()
SOLUTIONS: list[str] = CORPUS["solution"].to_list()


def _wrong(solution: str) -> str:
    """A solution with its last two cells swapped: complete, but not the puzzle's."""
    return solution[:-2] + solution[-1] + solution[-2]


def _extreme(path, predictions: list[str] | None = None, wrong_row: int | None = None):
    """A file in sudoku-extreme's layout (`source,question,answer,rating`, `.` blanks)."""
    answers = [_wrong(s) if i == wrong_row else s for i, s in enumerate(SOLUTIONS)]
    frame = pl.DataFrame({"source": ["forum"] * 6, "question": PUZZLES, "answer": answers,
                          "rating": [str(i) for i in range(6)]})  # fmt: skip
    if predictions is not None:
        frame = frame.with_columns(prediction=pl.Series(predictions, dtype=pl.String))
    frame.write_csv(path)
    return path


LAYOUTS = {
    "sudoku-extreme": (["source", "question", "answer", "rating"], "question", "answer"),
    "kaggle-1m": (["quizzes", "solutions"], "quizzes", "solutions"),
    "kaggle-9m": (["puzzle", "solution"], "puzzle", "solution"),
    "kaggle-3m": (["id", "puzzle", "solution", "clues", "difficulty"], "puzzle", "solution"),
    "rrn": (["quiz", "solution"], "quiz", "solution"),
}


def _row(names: list[str], i: int) -> list[str]:
    values = {"question": PUZZLES[i], "quizzes": PUZZLES[i], "puzzle": PUZZLES[i],
              "quiz": PUZZLES[i], "answer": SOLUTIONS[i], "solutions": SOLUTIONS[i],
              "solution": SOLUTIONS[i], "source": "x", "rating": "2", "id": str(i),
              "clues": "25", "difficulty": "1.5"}  # fmt: skip
    return [values[n] for n in names]


@pytest.mark.parametrize("name", LAYOUTS)
def test_each_layout_is_known_by_its_header(tmp_path, name):
    names, puzzle, solution = LAYOUTS[name]
    path = tmp_path / "set.csv"
    path.write_text("\n".join(",".join(r) for r in [names, *(_row(names, i) for i in range(6))]))
    ds = open_dataset(path)
    assert (ds.puzzle_column, ds.solution_column, ds.layout) == (puzzle, solution, name)
    assert ds.header_note is None  # the header names the columns: nothing was guessed
    assert known_layout([n.upper() for n in names]).name == name  # any case


def test_a_header_the_layouts_do_not_know_records_none(tmp_path):
    path = tmp_path / "mine.csv"
    path.write_text(f"board,notes\n{PUZZLES[0]},x\n")
    assert open_dataset(path).layout is None
    # `puzzle,solution` is anyone's: Kaggle 9M's only as it is, or beside a model's answers
    assert known_layout(["id", "puzzle", "solution"]) is None
    assert known_layout(["puzzle", "solution", "prediction"]).name == "kaggle-9m"
    # sudoku-extreme's names are its own: known beside any other column
    assert known_layout(["question", "answer", "source", "rating", "model_b"]).name == (
        "sudoku-extreme"
    )


def test_validate_catches_a_wrong_answer_in_sudoku_extreme(tmp_path):
    source = _extreme(tmp_path / "train.csv", wrong_row=3)
    done = cli("validate", source, "-o", tmp_path / "v.findings.parquet")
    assert done.exit_code == 1, done.output
    assert "note:" not in done.stderr  # no header guessed
    findings = pl.read_parquet(tmp_path / "v.findings.parquet")
    assert 3 in findings["row"].to_list()


def test_solve_checks_sudoku_extremes_answers_and_records_the_layout(tmp_path):
    source, out = _extreme(tmp_path / "train.csv", wrong_row=1), tmp_path / "solved.parquet"
    done = cli("solve", source, "-o", out)
    assert done.exit_code == 0, done.output
    assert "note:" not in done.stderr
    solved = pl.read_parquet(out)
    assert solved["expected_ok"].to_list() == [True, False, True, True, True, True]
    assert solved["source"].to_list() == ["forum"] * 6  # the other columns come along
    meta = json.loads(pq.read_schema(out).metadata[METADATA_KEY])
    assert meta["input"]["layout"] == "sudoku-extreme"


def test_score_grades_the_prediction_column_never_the_answer(tmp_path):
    # issue 32: sudoku-extreme's `answer` is the solution; a model left its predictions blank
    source = _extreme(tmp_path / "model.csv", predictions=[None] * 6)
    out = tmp_path / "model.scored.parquet"
    done = cli("score", source, "-o", out, "--exit-zero", "--json")
    assert done.exit_code == 0, done.output
    summary = json.loads(done.stdout)
    assert summary["correct"] == 0 and summary["accuracy"] == 0
    assert pl.read_parquet(out)["verdict"].cast(pl.String).unique().to_list() == ["malformed"]
    meta = json.loads(pq.read_schema(out).metadata[METADATA_KEY])
    assert meta["options"]["prediction_column"] == "prediction"
    assert meta["input"]["layout"] == "sudoku-extreme"


def test_score_without_a_prediction_column_refuses_in_one_line(tmp_path):
    source = _extreme(tmp_path / "train.csv")  # `answer` is the solution: nothing to grade
    done = cli("score", source)
    assert done.exit_code == 2
    assert_one_line_error(done.stderr, "no prediction column found", "--prediction-column")
    named = cli("score", source, "--predictions-column", "answer", "-o", tmp_path / "a.parquet")
    assert named.exit_code == 0, named.output  # named: graded as asked (and all correct)


def test_a_frame_in_sudoku_extremes_layout_is_scored_from_its_prediction_column():
    frame = pl.DataFrame({"source": ["x"] * 6, "question": PUZZLES, "answer": SOLUTIONS,
                          "rating": [0] * 6,
                          "prediction": [SOLUTIONS[0], *[None] * 5]})  # fmt: skip
    scored = pipeline.score_predictions(frame)
    assert scored["verdict"].cast(pl.String).to_list() == ["correct"] + ["malformed"] * 5
    with pytest.raises(ValueError, match="no prediction column found"):
        pipeline.score_predictions(frame.drop("prediction"))


def test_augment_and_split_read_the_layouts_solutions(tmp_path):
    source = _extreme(tmp_path / "train.csv")
    out = tmp_path / "aug.parquet"
    done = cli("augment", source, "--copies", "2", "-o", out, "--seed", "1")
    assert done.exit_code == 0, done.output
    assert "note:" not in done.stderr
    augmented = pl.read_parquet(out)
    assert augmented.height == 12 and augmented["solution"].null_count() == 0
    split = cli("split", source, "-o", tmp_path / "parts", "--seed", "1")
    assert split.exit_code == 0, split.output
    assert "note:" not in split.stderr
