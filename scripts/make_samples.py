"""Regenerate the samples shipped in data/ (reproducible: fixed seeds). Run by `make data`.

* data/sample.csv: 3,000 generated puzzles with unique solutions: id, puzzle, solution.
* data/bad_rows.csv: a small file of deliberately broken rows beside good ones, for the error
  paths: every verdict, a wrong solution column, a missing puzzle and a duplicate.
"""

from pathlib import Path

import polars as pl

from pipeline import generate

DATA = Path(__file__).resolve().parents[1] / "data"
UNSOLVABLE = "12345678." + "........9" + "." * 63  # cell 9 can only be 9, and column 9 has one


def main() -> None:
    DATA.mkdir(exist_ok=True)
    sample = generate(3000, seed=20261129).select("id", "puzzle", "solution")
    sample.write_csv(DATA / "sample.csv")

    good = generate(6, seed=7)
    puzzles = good["puzzle"].to_list()
    solutions = good["solution"].to_list()
    wrong = solutions[2][:-2] + solutions[2][-1] + solutions[2][-2]  # last two digits swapped
    rows = [
        (puzzles[0], solutions[0], "good"),
        (puzzles[1][:80], solutions[1], "80 cells"),
        (puzzles[1] + "5", solutions[1], "82 cells"),
        (puzzles[3][:40] + "x" + puzzles[3][41:], solutions[3], "stray character"),
        ("11" + "." * 79, None, "givens clash in row 1"),
        (UNSOLVABLE, None, "consistent givens, no solution"),
        ("." * 81, None, "empty board: many solutions"),
        (puzzles[2], wrong, "wrong solution column"),
        (None, None, "missing puzzle"),
        (puzzles[4], solutions[4], "good"),
        (puzzles[0], solutions[0], "duplicate of row 0"),
        (puzzles[5].replace(".", "0"), solutions[5], "0 for blanks"),
    ]
    bad = pl.DataFrame(
        {
            "id": [f"b{i:02d}" for i in range(len(rows))],
            "puzzle": [r[0] for r in rows],
            "solution": [r[1] for r in rows],
            "note": [r[2] for r in rows],
        }
    )
    bad.write_csv(DATA / "bad_rows.csv")


if __name__ == "__main__":
    main()
