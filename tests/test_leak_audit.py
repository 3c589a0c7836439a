"""The leak audit, `validate TEST --against TRAIN` and `validate_puzzles(..., against=...)`,
by example: generated puzzles with known copies planted, exactly and in disguise."""

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from pipeline import generate
from pipeline.cli import app
from pipeline.errors import InputError
from pipeline.grid import format_grids, parse_puzzles
from pipeline.jobs.validate import validate_file, validate_puzzles
from pipeline.pencilmarks import candidates_of, format_pencilmarks
from pipeline.symmetry import random_symmetries


@pytest.fixture(scope="module")
def corpus() -> tuple[list[str], list[str]]:
    """Train: 40 generated puzzles; test: 10 other ones."""
    puzzles = generate(50, seed=7, clues=30)["puzzle"].to_list()
    return puzzles[:40], puzzles[40:]


def disguised(puzzles: list[str], seed: int) -> list[str]:
    grids = parse_puzzles(puzzles).grids
    moved = random_symmetries(grids, np.random.default_rng(seed))
    return format_grids(moved).to_pylist()


def leaks(df: pl.DataFrame) -> list[tuple[int, int, bool]]:
    found = df.filter(pl.col("code") == "leak")
    return list(found.select("row", "train_row", "exact").iter_rows())


def test_planted_copies_name_the_train_row_they_copy(corpus):
    train, test = corpus
    planted = test[:3] + [train[5]] + disguised([train[9], train[30]], seed=1)
    df = validate_puzzles(planted, against=train)
    assert leaks(df) == [(3, 5, True), (4, 9, False), (5, 30, False)]
    assert df.filter(pl.col("code") == "leak")["message"].to_list() == [
        "copies row 5 of against exactly",
        "copies row 9 of against in disguise (the same canonical form)",
        "copies row 30 of against in disguise (the same canonical form)",
    ]


def test_puzzles_of_another_split_are_never_flagged(corpus):
    train, test = corpus
    df = validate_puzzles(test + disguised(test, seed=2), against=train, workers=2)
    assert leaks(df) == []


def test_an_exact_copy_is_named_before_an_earlier_disguised_one(corpus):
    train, _ = corpus
    df = validate_puzzles([train[0]], against=disguised([train[0]], 3) + [train[0]])
    assert leaks(df) == [(0, 1, True)]


def test_several_training_sets_are_named(corpus):
    train, test = corpus
    df = validate_puzzles([test[0], train[25]], against={"a": test[5:], "b": train[20:]})
    found = df.filter(pl.col("code") == "leak")
    assert found.select("row", "train_input", "train_row").rows() == [(1, "b", 5)]


def test_pencilmark_rows_are_skipped_and_noted(tmp_path, corpus):
    train, _ = corpus
    marks = format_pencilmarks(candidates_of(parse_puzzles([train[0]]).grids))[0]
    pl.DataFrame({"puzzle": [marks, train[1]]}).write_csv(tmp_path / "test.csv")
    pl.DataFrame({"puzzle": train}).write_csv(tmp_path / "train.csv")
    summary = validate_file(tmp_path / "test.csv", against=tmp_path / "train.csv",
                            workers=1, progress=False)  # fmt: skip
    assert summary.against is not None
    assert summary.against["pencilmarks_skipped"] == 1 and summary.findings["leak"] == 1
    assert "pencilmark rows of the input not checked for leaks" in summary.describe()


def write(path: Path, puzzles: list[str | None]) -> Path:
    pl.DataFrame({"id": [f"p{i}" for i in range(len(puzzles))], "puzzle": puzzles}).write_csv(path)
    return path


def cli(*args: object):
    return CliRunner().invoke(app, ["validate", *(str(a) for a in args), "--workers", "1"])


def test_the_command_exits_1_on_a_leak_and_names_train_file_row_and_id(tmp_path, corpus):
    train, test = corpus
    train_csv = write(tmp_path / "train.csv", [*train[:10], "not a puzzle"])
    test_csv = write(tmp_path / "test.csv", [test[0], *disguised([train[7]], 4), test[1][:80]])
    out = tmp_path / "f.parquet"
    result = cli(test_csv, "--against", train_csv, "-o", out)
    assert result.exit_code == 1, result.output
    df = pl.read_parquet(out)
    leak = df.filter(pl.col("code") == "leak").row(0, named=True)
    assert (leak["row"], leak["id"], leak["train_row"], leak["exact"]) == (1, "p1", 7, False)
    assert leak["message"].startswith(f"copies row 7 of {train_csv} (id p7) in disguise")
    assert leak["train_input"] == str(train_csv)
    assert df.filter(pl.col("code") == "malformed")["row"].to_list() == [2]  # TEST's
    summary = validate_file(test_csv, out, against=[train_csv], workers=1, progress=False)
    assert summary.against is not None and summary.against["train"][0]["malformed"] == 1
    assert summary.against["train"][0]["examples"][0]["row"] == 10
    assert cli(test_csv, "--against", train_csv, "-o", out, "--exit-zero").exit_code == 0


def test_no_leak_exits_0(tmp_path, corpus):
    train, test = corpus
    train_csv, test_csv = write(tmp_path / "train.csv", train), write(tmp_path / "t.csv", test)
    result = cli(test_csv, "--against", train_csv, "-o", tmp_path / "f.parquet")
    assert result.exit_code == 0, result.output


def test_a_test_file_audited_against_itself_is_refused_in_one_line(tmp_path, corpus):
    test_csv = write(tmp_path / "test.csv", corpus[1])
    result = cli(test_csv, "--against", tmp_path / "." / "test.csv", "-o", tmp_path / "f.csv")
    assert result.exit_code == 2
    assert "is both the input and an --against input" in result.output
    with pytest.raises(InputError):
        validate_file(test_csv, against=test_csv, progress=False)
