"""`score`: a model's answers judged, in memory (`score_predictions`), through the job
(`score_file`) and through the command line, from puzzles whose solutions are known
(`pipeline.generate`)."""

import json

import polars as pl
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import pipeline
from pipeline.cli import app
from pipeline.errors import InputError
from pipeline.jobs.score import score_file, score_predictions
from pipeline.run.checkpoint import Checkpoint
from tests.conftest import assert_one_line_error, cli

CORPUS = pipeline.generate(8, seed=25)
PUZZLES: list[str] = CORPUS["puzzle"].to_list()
SOLUTIONS: list[str] = CORPUS["solution"].to_list()


def _blanks(puzzle: str) -> list[int]:
    return [i for i, c in enumerate(puzzle) if c == "."]


def _with(text: str, **cells: str) -> str:
    """`text` with cells `c<i>` replaced."""
    chars = list(text)
    for name, value in cells.items():
        chars[int(name[1:])] = value
    return "".join(chars)


def _swapped(i: int) -> str:
    """Solution i with two blank cells of one row swapped (different digits): complete, keeps
    the givens, breaks the columns."""
    puzzle, solution = PUZZLES[i], SOLUTIONS[i]
    for row in range(9):
        free = [c for c in _blanks(puzzle) if c // 9 == row]
        if len(free) >= 2:
            a, b = free[:2]
            return _with(solution, **{f"c{a}": solution[b], f"c{b}": solution[a]})
    raise AssertionError("no row with two blanks")


def _given_changed(i: int) -> str:
    puzzle, solution = PUZZLES[i], SOLUTIONS[i]
    at = next(c for c, v in enumerate(puzzle) if v != ".")
    return _with(solution, **{f"c{at}": str(int(solution[at]) % 9 + 1)})


def _examples() -> tuple[list[str], list[str | None]]:
    """One prediction of each verdict (and a few more ways to be malformed)."""
    predictions: list[str | None] = [
        SOLUTIONS[0],  # correct
        _swapped(1),  # wrong
        _given_changed(2),  # givens_changed
        _with(SOLUTIONS[3], **{f"c{_blanks(PUZZLES[3])[0]}": "."}),  # incomplete
        SOLUTIONS[4][:80],  # malformed: 80 cells
        None,  # malformed: missing
        _with(SOLUTIONS[6], c4="x"),  # malformed: a stray character
        SOLUTIONS[7],  # correct, but its puzzle is malformed
    ]
    puzzles = [*PUZZLES[:7], PUZZLES[7][:79]]
    return puzzles, predictions


EXPECTED = ["correct", "wrong", "givens_changed", "incomplete", "malformed", "malformed",
            "malformed", "malformed"]  # fmt: skip


def test_every_verdict_with_its_message_and_cells_correct():
    puzzles, predictions = _examples()
    scored = score_predictions(puzzles, predictions)

    assert scored["verdict"].cast(pl.String).to_list() == EXPECTED
    assert scored["row"].to_list() == list(range(8))
    assert scored["cells_correct"].to_list() == [81, 79, 80, 80, None, None, None, None]
    messages = scored["message"].to_list()
    assert messages[0] is None
    assert " repeats " in messages[1]
    assert messages[2].startswith("1 given changed, the first at r")
    assert messages[3].startswith("1 cell left blank, the first at r")
    assert messages[4:7] == ["prediction: expected 81 cells, got 80", "prediction: missing",
                             "prediction: stray character 'x' at cell 4"]  # fmt: skip
    assert messages[7] == "puzzle: expected 81 cells, got 79"
    assert scored["clues"].to_list()[:7] == [81 - len(_blanks(p)) for p in PUZZLES[:7]]
    assert scored["clues"][7] is None


def test_the_verdict_is_the_worst_that_applies_on_the_ladder():
    """A given changed and a cell left blank: incomplete (worse than givens_changed)."""
    blank = _blanks(PUZZLES[2])[0]
    prediction = _with(_given_changed(2), **{f"c{blank}": "0"})
    scored = score_predictions([PUZZLES[2]], [prediction])
    assert scored["verdict"].cast(pl.String).to_list() == ["incomplete"]
    assert scored["verdict"].dtype == pl.Enum(
        ["correct", "wrong", "givens_changed", "incomplete", "malformed"]
    )


def test_a_puzzle_with_several_solutions_takes_any_valid_completion():
    """The empty board: any full grid is correct, whatever solution column says another."""
    scored = score_predictions(["." * 81], [SOLUTIONS[0]], solutions=[SOLUTIONS[1]])
    assert scored["verdict"].cast(pl.String).to_list() == ["correct"]
    assert scored["cells_correct"].to_list() == [81]


def test_cells_correct_come_from_the_solution_column_or_the_solver_alike():
    """A solution column that does not solve its puzzle is not trusted: the solver's is used."""
    predictions = [_swapped(1), _given_changed(2)]
    plain = score_predictions(PUZZLES[1:3], predictions)
    given = score_predictions(PUZZLES[1:3], predictions, solutions=SOLUTIONS[1:3])
    bogus = score_predictions(PUZZLES[1:3], predictions, solutions=[SOLUTIONS[5], "1" * 81])
    assert plain["cells_correct"].to_list() == [79, 80]
    assert given.equals(plain) and bogus.equals(plain)


def test_an_unsolvable_puzzle_has_no_cells_correct():
    unsolvable = "12345678." + "." * 8 + "9" + "." * 63  # 9 cannot go at r1c9
    scored = score_predictions([unsolvable], ["123456789" * 9])
    assert scored["verdict"].cast(pl.String).to_list() == ["wrong"]
    assert scored["cells_correct"].to_list() == [None]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 7), st.integers(0, 80), st.integers(0, 9))
def test_a_solution_with_one_cell_changed_is_never_correct(i, cell, value):
    solution = SOLUTIONS[i]
    if str(value) == solution[cell]:
        value = (value + 1) % 10
    prediction = _with(solution, **{f"c{cell}": str(value)})
    scored = score_predictions([PUZZLES[i]], [prediction])
    verdict = scored["verdict"].cast(pl.String)[0]
    assert verdict != "correct"
    assert scored["cells_correct"][0] == 80
    if value == 0:
        assert verdict == "incomplete"
    elif PUZZLES[i][cell] != ".":
        assert verdict == "givens_changed"
    else:
        assert verdict == "wrong"


def test_a_frame_has_its_prediction_column_found_by_name():
    puzzles, predictions = _examples()
    frame = pl.DataFrame({"id": [f"p{i}" for i in range(8)], "quizzes": puzzles,
                          "answer": predictions, "grade": ["easy", "hard"] * 4})  # fmt: skip
    scored = score_predictions(frame)
    assert scored.columns == ["row", "id", "puzzle", "verdict", "message", "cells_correct",
                              "clues", "grade"]  # fmt: skip
    assert scored["verdict"].cast(pl.String).to_list() == EXPECTED
    assert scored["puzzle"].to_list() == puzzles  # as read: a malformed one too
    zeros = score_predictions([PUZZLES[0].replace(".", "0")], [SOLUTIONS[0]])
    assert zeros["puzzle"].to_list() == [PUZZLES[0]]  # normalized, as solve writes it
    with pytest.raises(InputError, match="no prediction column found"):
        score_predictions(frame.drop("answer"))


def test_a_lazyframe_gives_a_lazyframe_of_the_same_rows():
    puzzles, predictions = _examples()
    frame = pl.DataFrame({"id": [f"p{i}" for i in range(8)], "quizzes": puzzles,
                          "answer": predictions, "grade": ["easy", "hard"] * 4})  # fmt: skip
    lazy = score_predictions(frame.lazy())
    assert isinstance(lazy, pl.LazyFrame)
    eager = score_predictions(frame)
    assert lazy.collect_schema() == eager.schema  # known before any row is scored
    assert lazy.collect().equals(eager)
    none = score_predictions(frame.lazy().filter(pl.col("id") == "none"), workers=2)
    assert none.collect().schema == eager.schema and none.collect().is_empty()
    with pytest.raises(ValueError, match="LazyFrame's predictions"):
        score_predictions(frame.lazy(), predictions)
    with pytest.raises(InputError, match="no prediction column found"):
        score_predictions(frame.lazy().drop("answer"))


def _write_csv(path, with_solution: bool = True) -> None:
    puzzles, predictions = _examples()
    frame = pl.DataFrame({"id": list(range(8)), "puzzle": puzzles, "prediction": predictions,
                          "grade": ["easy", "hard", "hard", "easy"] * 2})  # fmt: skip
    if with_solution:
        frame = frame.with_columns(solution=pl.Series([*SOLUTIONS[:7], None]))
    frame.write_csv(path)


def test_a_csv_with_a_prediction_column_end_to_end(tmp_path):
    source = tmp_path / "answers.csv"
    _write_csv(source)
    done = cli("score", source, "-q")
    assert done.exit_code == 1, done.output
    assert_one_line_error(done.stderr, "7 predictions not correct", "--exit-zero")
    scored = pl.read_parquet(tmp_path / "answers.scored.parquet")
    assert scored["verdict"].cast(pl.String).to_list() == EXPECTED
    assert scored["id"].to_list() == list(range(8))
    assert scored.equals(
        score_predictions(
            pl.read_csv(source, infer_schema=False).with_columns(pl.col("id").cast(pl.Int64))
        )
    )

    again = cli("score", source, "--exit-zero", "-o", tmp_path / "answers.csv.jsonl")
    assert again.exit_code == 0, again.output
    assert "accuracy 12.50% (1 correct)" in again.stderr
    assert len((tmp_path / "answers.csv.jsonl").read_text().splitlines()) == 8


def test_the_json_summary_equals_polars_over_the_output(tmp_path):
    source, out = tmp_path / "answers.csv", tmp_path / "scored.parquet"
    _write_csv(source, with_solution=False)
    done = cli("score", source, "-o", out, "--json", "--exit-zero", "--batch-size", "3")
    assert done.exit_code == 0, done.output
    summary = json.loads(done.stdout)
    scored = pl.read_parquet(out).with_columns(ok=pl.col("verdict") == "correct")

    assert summary["rows"] == scored.height == 8
    assert summary["accuracy"] == pytest.approx(scored["ok"].mean())
    cells = scored["cells_correct"]
    assert summary["cell_accuracy"] == pytest.approx(cells.sum() / (81 * cells.count()))
    counts = scored.group_by(pl.col("verdict").cast(pl.String)).len()
    assert {k: v for k, v in summary["verdicts"].items() if v} == dict(counts.iter_rows())
    for key, by in (("by_clues", "clues"), ("by_grade", "grade")):
        ok = pl.col("ok")
        groups = (
            scored.drop_nulls(by)
            .group_by(by)
            .agg(rows=pl.len(), correct=ok.sum(), accuracy=ok.mean())
        )
        expected = {str(row[by]): {"rows": row["rows"], "correct": row["correct"],
                                   "accuracy": pytest.approx(row["accuracy"])}
                    for row in groups.iter_rows(named=True)}  # fmt: skip
        assert summary[key] == expected, key


def test_exit_codes(tmp_path):
    """0 all correct, 1 some not, 2 a bad file or option with one error line."""
    good = tmp_path / "good.csv"
    pl.DataFrame({"puzzle": PUZZLES, "output": SOLUTIONS}).write_csv(good)
    assert cli("score", good, "-q").exit_code == 0

    missing = cli("score", tmp_path / "nope.csv")
    assert missing.exit_code == 2
    assert_one_line_error(missing.stderr, "nope.csv")

    no_column = tmp_path / "plain.csv"
    pl.DataFrame({"puzzle": PUZZLES, "guess": SOLUTIONS}).write_csv(no_column)
    done = cli("score", no_column)
    assert done.exit_code == 2
    assert_one_line_error(done.stderr, "no prediction column found", "guess")
    assert cli("score", no_column, "--prediction-column", "guess", "-q").exit_code == 0
    header_only = tmp_path / "empty.csv"
    header_only.write_text("puzzle,prediction\n")
    nothing = cli("score", header_only)
    assert nothing.exit_code == 0, nothing.output
    assert (
        "0 rows" in nothing.stderr and pl.read_parquet(tmp_path / "empty.scored.parquet").is_empty()
    )
    named_wrong = cli("score", no_column, "--prediction-column", "nope")
    assert named_wrong.exit_code == 2
    assert_one_line_error(named_wrong.stderr, "column 'nope' not found")


def test_a_file_of_the_user_is_not_overwritten(tmp_path):
    source, mine = tmp_path / "good.csv", tmp_path / "mine.parquet"
    pl.DataFrame({"puzzle": PUZZLES, "prediction": SOLUTIONS}).write_csv(source)
    mine.write_bytes(b"precious")
    done = cli("score", source, "-o", mine)
    assert done.exit_code == 2
    assert_one_line_error(done.stderr)
    assert mine.read_bytes() == b"precious"
    assert cli("score", source, "-o", mine, "--force", "-q").exit_code == 0
    assert pl.read_parquet(mine).height == 8


def test_damaged_rows_each_get_their_row(tmp_path):
    """Short rows, an empty field, a quoted comma, a row too long: one output row each."""
    source = tmp_path / "damaged.csv"
    lines = ["puzzle,prediction", f"{PUZZLES[0]},{SOLUTIONS[0]}", f"{PUZZLES[1]}",
             f"{PUZZLES[2]},", f'"{PUZZLES[3][:40]},{PUZZLES[3][41:]}",{SOLUTIONS[3]}',
             f"{PUZZLES[4]},{SOLUTIONS[4]},extra,fields", "x" * 500 + ",y",
             f"{PUZZLES[5]},{SOLUTIONS[5]}"]  # fmt: skip
    source.write_text("\n".join(lines) + "\n")
    done = cli("score", source, "-o", tmp_path / "out.csv", "--exit-zero", "-q")
    assert done.exit_code == 0, done.output
    scored = pl.read_csv(tmp_path / "out.csv")
    assert scored["row"].to_list() == list(range(7))
    assert scored["verdict"].to_list() == ["correct", "malformed", "malformed", "malformed",
                                           "correct", "malformed", "correct"]  # fmt: skip


def test_the_solution_column_named_as_the_predictions_is_the_predictions(tmp_path):
    """The help's example: a solve output's `solution` scored as the predictions."""
    source = tmp_path / "solved.csv"
    pl.DataFrame({"puzzle": PUZZLES, "solution": SOLUTIONS}).write_csv(source)
    done = cli("score", source, "--prediction-column", "solution", "--json")
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["accuracy"] == 1.0
    both = cli("score", source, "--prediction-column", "solution", "--solution-column", "solution")
    assert both.exit_code == 2
    assert_one_line_error(both.stderr, "must differ")


def test_score_file_and_score_predictions_are_public(tmp_path):
    assert pipeline.score_file is score_file
    assert pipeline.score_predictions is score_predictions
    source = tmp_path / "p.parquet"
    pl.DataFrame({"puzzle": PUZZLES, "predicted": SOLUTIONS}).write_parquet(source)
    summary = score_file(source, progress=False)
    assert (summary.rows, summary.correct, summary.all_correct) == (8, 8, True)
    assert summary.metadata["command"] == "score"


# --- interrupting and resuming ---------------------------------------------------------------


def _interrupt_after(monkeypatch, parts: int) -> None:
    """Make the next run behave as if Ctrl-C came right after its `parts`-th finished batch."""
    add, count = Checkpoint.add, [0]

    def add_then_interrupt(self, part):
        add(self, part)
        count[0] += 1
        if count[0] == parts:
            raise KeyboardInterrupt

    monkeypatch.setattr(Checkpoint, "add", add_then_interrupt)


_RUN_ONLY = ("output", "wall_s", "rows_per_s", "workers", "resumed_rows")


@pytest.mark.parametrize(("suffix", "parts"), [(".parquet", 2), (".csv", 1), (".jsonl", 3)])
def test_an_interrupted_score_resumes_to_the_same_output(tmp_path, monkeypatch, suffix, parts):
    """Stopped after `parts` batches of 3 rows (all 3 batches: stopped before the join), it
    keeps them; `--resume` scores the rest into the output an uninterrupted run writes, and
    its summary (the rows done before included) is that run's."""
    source = tmp_path / "answers.csv"
    _write_csv(source)
    whole, out = tmp_path / f"whole{suffix}", tmp_path / f"out{suffix}"
    run = ("score", source, "--batch-size", 3, "--workers", 1, "--exit-zero", "--json")
    expected = json.loads(cli(*run, "-o", whole).stdout)

    _interrupt_after(monkeypatch, parts)
    stopped = cli(*run, "-o", out)
    assert stopped.exit_code == 130, stopped.output
    partial = tmp_path / f"out{suffix}.partial"
    kept = min(3 * parts, 8)
    assert_one_line_error(stopped.stderr, f"{kept} rows", str(partial), "--resume")
    assert not out.exists() and partial.is_dir()
    monkeypatch.undo()

    other = cli(*run, "-o", out, "--resume", "--prediction-column", "solution")
    assert other.exit_code == 2  # another run's checkpoint: refused, and kept
    assert_one_line_error(other.stderr, "other", "without --resume")
    resumed = cli(*run[:-3], "2", "--exit-zero", "--json", "-o", out, "--resume")
    assert resumed.exit_code == 0, resumed.output
    summary = json.loads(resumed.stdout)
    assert summary["resumed_rows"] == kept
    assert {k: v for k, v in summary.items() if k not in _RUN_ONLY} == {
        k: v for k, v in expected.items() if k not in _RUN_ONLY
    }
    if suffix == ".parquet":
        assert pl.read_parquet(out).equals(pl.read_parquet(whole))
        assert pq.read_schema(out).metadata is not None
    else:
        assert out.read_text() == whole.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["answers.csv", whole.name, out.name]
    )


def test_resume_needs_a_file_to_continue(tmp_path):
    source = tmp_path / "answers.csv"
    _write_csv(source)
    to_stdout = cli("score", source, "-o", "-", "--resume")
    assert to_stdout.exit_code == 2
    assert_one_line_error(to_stdout.stderr, "--resume needs an output file")
    from_stdin = CliRunner().invoke(app, ["score", "-", "-o", str(tmp_path / "o.parquet"),
                                          "--resume"], input=source.read_text())  # fmt: skip
    assert from_stdin.exit_code == 2
    assert_one_line_error(from_stdin.stderr, "cannot continue from stdin")


# --- grades and difficulty: the input's, or rated here -----------------------------------------


def test_rate_gives_each_puzzle_the_rating_of_pipeline_rate(tmp_path):
    source, out = tmp_path / "answers.csv", tmp_path / "rated.parquet"
    puzzles, predictions = _examples()
    pl.DataFrame({"puzzle": puzzles, "prediction": predictions}).write_csv(source)
    done = cli("score", source, "-o", out, "--rate", "--rate-samples", 4, "--json",
               "--exit-zero", "--batch-size", 3)  # fmt: skip
    assert done.exit_code == 0, done.output
    scored = pl.read_parquet(out)
    rated = pipeline.rate(puzzles, samples=4)
    assert scored["grade"].to_list() == rated["grade"].cast(pl.String).to_list()
    assert scored["difficulty"].to_list() == rated["difficulty"].to_list()
    assert scored["grade"].null_count() == 1  # the malformed puzzle
    summary = json.loads(done.stdout)
    assert sum(g["rows"] for g in summary["by_grade"].values()) == 7
    assert score_predictions(puzzles, predictions, rate=True, rate_samples=4).equals(
        scored.with_columns(pl.col("verdict"))
    )

    graded = tmp_path / "graded.csv"
    pl.DataFrame({"puzzle": puzzles, "prediction": predictions, "grade": ["x"] * 8}).write_csv(
        graded
    )
    refused = cli("score", graded, "--rate")
    assert refused.exit_code == 2
    assert_one_line_error(refused.stderr, "has a grade column already", "without --rate")
    assert not (tmp_path / "graded.scored.parquet").exists()


def test_the_inputs_difficulty_comes_along_as_a_number(tmp_path):
    source = tmp_path / "kaggle.csv"
    source.write_text("puzzle,solution,difficulty\n" + "".join(
        f"{p},{s},{d}\n" for p, s, d in zip(PUZZLES[:3], SOLUTIONS[:3], ["0.5", "3", "hard"],
                                            strict=True)))  # fmt: skip
    done = cli("score", source, "--prediction-column", "solution", "-q")
    assert done.exit_code == 0, done.output
    scored = pl.read_parquet(tmp_path / "kaggle.scored.parquet")
    assert scored["difficulty"].to_list() == [0.5, 3.0, None]
    frame = pl.DataFrame({"puzzle": PUZZLES[:2], "answer": SOLUTIONS[:2], "difficulty": [1, 7]})
    assert score_predictions(frame)["difficulty"].to_list() == [1.0, 7.0]
