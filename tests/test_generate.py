"""The seeded generator and the symmetries it uses."""

import numpy as np
import pytest

from pipeline import generate
from pipeline.grid import parse_puzzles
from pipeline.jobs.generate.puzzles import random_full_grids
from pipeline.kernels import codes, solve_grids
from pipeline.kernels.checks import givens_valid, verify_solutions
from pipeline.symmetry import random_symmetries


def test_generated_puzzles_have_their_solution_and_only_it():
    sample = generate(200, seed=3)
    assert sample.columns == ["id", "puzzle", "solution", "clues"]
    puzzles = parse_puzzles(sample["puzzle"]).grids
    solutions = parse_puzzles(sample["solution"]).grids
    assert verify_solutions(puzzles, solutions).all()
    found = solve_grids(puzzles, solutions=2)
    assert (found.verdicts == codes.SOLVED).all()
    assert (found.solutions == solutions).all()
    assert (sample["clues"].to_numpy() == np.count_nonzero(puzzles, axis=1)).all()


def test_same_seed_same_puzzles_other_seed_other_puzzles():
    assert generate(50, seed=9).equals(generate(50, seed=9))
    assert not generate(50, seed=9)["puzzle"].equals(generate(50, seed=10)["puzzle"])


def test_clue_target_is_met_when_uniqueness_allows():
    sample = generate(100, seed=5, clues=32)
    assert (sample["clues"] == 32).all()


def test_without_target_puzzles_are_minimal():
    sample = generate(20, seed=4)
    puzzles = parse_puzzles(sample["puzzle"]).grids
    for puzzle in puzzles:
        givens = np.flatnonzero(puzzle)
        trials = np.repeat(puzzle[None], len(givens), axis=0)
        trials[np.arange(len(givens)), givens] = 0
        assert (solve_grids(trials).verdicts == codes.MULTIPLE).all()


@pytest.mark.parametrize("bad", [{"n": -1}, {"n": 5, "clues": 16}, {"n": 5, "clues": 82}])
def test_bad_arguments(bad):
    with pytest.raises(ValueError):
        generate(**bad)


def test_symmetries_keep_grids_valid_and_puzzles_unique():
    rng = np.random.default_rng(0)
    full = random_full_grids(100, rng)
    moved = random_symmetries(full, rng)
    assert verify_solutions(moved, moved).all()
    assert not (moved == full).all(axis=1).any()
    sample = generate(30, seed=1)
    puzzles = parse_puzzles(sample["puzzle"]).grids
    moved = random_symmetries(puzzles, rng)
    assert givens_valid(moved).all()
    assert (np.count_nonzero(moved, axis=1) == np.count_nonzero(puzzles, axis=1)).all()
    assert (solve_grids(moved).verdicts == codes.SOLVED).all()


def test_a_corpus_is_made_a_chunk_at_a_time_the_same_however_shared_out(monkeypatch, tmp_path):
    """Chunks bound memory and are the unit of work of workers; the corpus does not depend on
    how many workers make it, and files are written a chunk at a time."""
    import importlib

    import polars as pl

    from pipeline.jobs.generate.job import generate_file

    gen = importlib.import_module("pipeline.jobs.generate.puzzles")  # the module, not the function

    monkeypatch.setattr(gen, "CHUNK", 40)
    whole = generate(100, seed=12)
    chunks = list(gen.generate_chunks(100, seed=12, workers=1))
    assert [c.height for c in chunks] == [40, 40, 20]
    assert pl.concat(chunks).equals(whole)
    assert whole["id"].to_list() == list(range(100))
    assert generate_file(100, tmp_path / "c.csv", seed=12).rows == 100
    assert pl.read_csv(tmp_path / "c.csv", infer_schema=False)["puzzle"].equals(whole["puzzle"])
    assert generate_file(100, tmp_path / "c.parquet", seed=12, workers=2).rows == 100
    assert pl.read_parquet(tmp_path / "c.parquet").equals(whole)
    assert generate_file(0, tmp_path / "e.parquet").rows == 0
    assert pl.read_parquet(tmp_path / "e.parquet").columns == whole.columns


def test_a_grade_asked_for_is_the_grade_every_puzzle_has():
    """`grade=` keeps only puzzles whose hardest step is that technique; the rating agrees."""
    from pipeline import rate

    sample = generate(12, seed=2, grade="x_wing")
    assert sample.columns == ["id", "puzzle", "solution", "clues", "grade"]
    assert sample["id"].to_list() == list(range(12))
    assert (sample["grade"].cast(str) == "x_wing").all()
    assert (rate(sample["puzzle"], samples=0)["grade"].cast(str) == "x_wing").all()
    puzzles = parse_puzzles(sample["puzzle"]).grids
    found = solve_grids(puzzles, solutions=2)
    assert (found.verdicts == codes.SOLVED).all()
    assert (found.solutions == parse_puzzles(sample["solution"]).grids).all()
    assert sample.equals(generate(12, seed=2, grade="x_wing"))


def test_a_minimum_grade_keeps_it_and_every_harder_one():
    from pipeline import GRADES

    sample = generate(30, seed=3, min_grade="x_chain")
    harder = set(GRADES[GRADES.index("x_chain") :])
    assert set(sample["grade"].cast(str)) <= harder
    assert sample.height == 30


def test_graded_chunks_are_the_same_however_shared_out(monkeypatch):
    import importlib

    import polars as pl

    gen = importlib.import_module("pipeline.jobs.generate.puzzles")
    whole = generate(10, seed=5, min_grade="naked_pair")
    monkeypatch.setattr(gen, "GRADED_FIRST", 3)
    monkeypatch.setattr(gen, "GRADED_CHUNK", 4)
    alone = list(gen.generate_chunks(10, seed=5, min_grade="naked_pair", workers=1))
    shared = list(gen.generate_chunks(10, seed=5, min_grade="naked_pair", workers=2))
    assert len(alone) > 2
    assert pl.concat(alone).equals(whole) and pl.concat(shared).equals(whole)
    assert whole["id"].to_list() == list(range(10))


@pytest.mark.parametrize("options", [{}, {"clues": 30}, {"min_grade": "naked_pair"}])
def test_a_smaller_corpus_is_the_head_of_a_larger_one(options, monkeypatch):
    """Puzzle i comes from (seed, i) alone: `generate 3` is the first three rows of
    `generate 5`, and of a corpus made in chunks of another size."""
    import importlib

    gen = importlib.import_module("pipeline.jobs.generate.puzzles")
    three, five = generate(3, seed=1, **options), generate(5, seed=1, **options)
    assert three.equals(five.head(3))
    monkeypatch.setattr(gen, "CHUNK", 2)
    assert generate(7, seed=1, **options).head(5).equals(five)
    assert not three["puzzle"].equals(generate(3, seed=2, **options)["puzzle"])


def test_a_seed_is_the_same_corpus_on_every_machine():
    """Integer arithmetic only: these puzzles are what the seed gives anywhere (the shipped
    samples in data/ depend on it; `make data` makes them again)."""
    assert generate(2, seed=1)["puzzle"].to_list() == [
        "...5....9612..9.7.....68.2.....8...6..4.9..1..9....3.......2..37........46...329.",
        ".5...8........5....3762...........7..4..5..8...13..5.259....62........4.3..276...",
    ]


@pytest.mark.parametrize(
    "bad", [{"grade": "x-wing"}, {"min_grade": "easy"}, {"grade": "x_wing", "min_grade": "search"}]
)
def test_bad_grades_are_refused(bad):
    with pytest.raises(ValueError):
        generate(3, **bad)


def test_a_grade_too_rare_to_find_is_refused_not_run_for_ever(monkeypatch):
    import importlib

    from pipeline.errors import InputError

    gen = importlib.import_module("pipeline.jobs.generate.puzzles")
    monkeypatch.setattr(gen, "GRADE_TRIES", 1_000)  # jellyfish: about 1 in 20,000
    with pytest.raises(InputError, match="none of 1,000 generated puzzles grades as jellyfish"):
        generate(1, seed=1, grade="jellyfish")
