"""Fault injection, mixed puzzle forms in every job: one file holding 81-character puzzles
(with `.` and with `0` for blanks), a 729-character pencilmark puzzle, a row too short, one
with letters, one whose givens clash, an empty one and a null. Every job either gives every
row its verdict (and keeps the rest), or refuses the file in one line with exit code 2;
never a traceback."""

import json
from pathlib import Path

import polars as pl
import pytest

from pipeline import generate
from pipeline.grid import parse_puzzles
from pipeline.pencilmarks import candidates_of, format_pencilmarks
from tests.conftest import assert_one_line_error, command


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    frame = generate(5, seed=17)
    puzzles, solutions = frame["puzzle"].to_list(), frame["solution"].to_list()
    marks = format_pencilmarks(candidates_of(parse_puzzles([puzzles[1]]).grids))[0]
    clash = puzzles[4][:2].replace(".", "1") + "1" + puzzles[4][3:]
    rows = [
        (puzzles[0], solutions[0]),
        (puzzles[2].replace(".", "0"), solutions[2]),
        (marks, solutions[1]),
        (puzzles[3][:-1], solutions[3]),
        ("x" * 81, None),
        ("11" + "." * 79, None),
        (clash, None),
        ("", None),
        (None, None),
        (puzzles[4], solutions[4]),
    ]
    path = tmp_path_factory.mktemp("forms") / "mixed.csv"
    pl.DataFrame(
        {"puzzle": [r[0] for r in rows], "solution": [r[1] for r in rows],
         "prediction": [r[1] for r in rows]},
        schema={"puzzle": pl.String, "solution": pl.String, "prediction": pl.String},
    ).write_csv(path)  # fmt: skip
    return path


ROWS = 10

JOBS = {
    "solve": ["solve", "{in}", "-o", "{out}/s.parquet"],
    "solve-rated": ["solve", "{in}", "-o", "{out}/r.parquet", "--rate", "--canonical"],
    "solve-counting": ["solve", "{in}", "-o", "{out}/c.csv", "--solutions", "5"],
    "validate": ["validate", "{in}", "-o", "{out}/v.parquet", "--exit-zero"],
    "score": ["score", "{in}", "-o", "{out}/sc.parquet", "--prediction-column", "prediction",
              "--exit-zero"],
    "split": ["split", "{in}", "-o", "{out}/sp", "--fractions", "0.5,0.5"],
    "split-hrm": ["split", "{in}", "-o", "{out}/hrm", "--format", "hrm", "--fractions",
                  "0.5,0.5"],
    "augment": ["augment", "{in}", "-o", "{out}/a.parquet", "--copies", "2"],
    "augment-npy": ["augment", "{in}", "-o", "{out}/npy", "--copies", "2", "--format", "npy"],
    "enumerate": ["enumerate", "{in}", "-o", "{out}/e.parquet", "--limit", "3"],
    "bench": ["bench", "{in}", "--repeats", "1", "-o", "{out}/b.parquet"],
}  # fmt: skip
ONE_ROW_EACH = {"solve": "s.parquet", "solve-rated": "r.parquet", "score": "sc.parquet"}


@pytest.mark.parametrize("job", list(JOBS))
def test_every_job_takes_mixed_forms_or_refuses_them_in_one_line(
    mixed: Path, tmp_path: Path, job: str
) -> None:
    argv = [a.format(**{"in": mixed, "out": tmp_path}) for a in JOBS[job]]
    done = command(*argv, "-q", timeout=300)
    assert "Traceback" not in done.stderr, done.stderr
    if done.returncode == 2:
        assert_one_line_error(done.stderr)
        assert [p.name for p in tmp_path.iterdir()] == []  # refused before writing
        return
    assert done.returncode == 0, done.stderr
    if job in ONE_ROW_EACH:
        out = pl.read_parquet(tmp_path / ONE_ROW_EACH[job])
        assert out["row"].to_list() == list(range(ROWS))  # every row, once, in order
    if job == "solve":
        verdicts = pl.read_parquet(tmp_path / "s.parquet")["verdict"].cast(pl.String).to_list()
        assert verdicts == ["solved", "solved", "solved", "malformed", "malformed", "invalid",
                            "invalid", "malformed", "malformed", "solved"]  # fmt: skip


def test_the_summaries_count_every_row(mixed: Path, tmp_path: Path) -> None:
    done = command("augment", mixed, "-o", tmp_path / "a.parquet", "--json", "-q")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["rows"] == ROWS
    assert summary["augmented"] + sum(summary["left_out"].values()) == ROWS
