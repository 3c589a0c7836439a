"""`pipeline.rating.rate`: the columns, the rows without a rating, reproducibility, and the
symmetric copies behind `difficulty`."""

import numpy as np
import polars as pl
import pyarrow as pa
import pytest

from pipeline import generate
from pipeline.grid import format_grids, parse_puzzles
from pipeline.kernels import solve_grids
from pipeline.kernels.checks import verify_solutions
from pipeline.rating import GRADES, RATING_SCHEMA, TECHNIQUES, rate
from pipeline.rating.difficulty import (
    difficulty_grids,
    draw_symmetry,
    puzzle_key,
    symmetric_copies,
)
from tests.conftest import shared_puzzles

EASY = "003020600900305001001806400008102900700000008006708200002609500800203009005010300"
INKALA = "8..........36......7..9.2...5...7.......457.....1...3...1....68..85...1..9....4.."
NO_SOLUTION = "12345678." + "........9" + "." * 63  # r1c9 can be nothing; givens do not clash
TWO_SOLUTIONS = "." * 81
CLASH = "11" + "." * 79


def test_columns_and_types():
    rated = rate([EASY, INKALA])
    assert rated.schema == RATING_SCHEMA
    assert rated["grade"].to_list() == ["hidden_single", "search"]
    assert rated["difficulty"][0] == 0.0 and rated["difficulty"][1] > 1
    easy_steps = rated["steps_by_level"][0].to_list()
    assert len(easy_steps) == len(TECHNIQUES)
    assert rated["steps"][0] == easy_steps[0] == EASY.count("0")


def test_grades_sort_in_ladder_order():
    rated = rate([INKALA, EASY], samples=0).sort("grade")
    assert rated["grade"].to_list() == ["hidden_single", "search"]
    assert rated["grade"].dtype == pl.Enum(list(GRADES))


def test_rows_without_a_rating_are_null():
    rated = rate([EASY, "not a puzzle", None, CLASH, NO_SOLUTION, TWO_SOLUTIONS])
    assert rated["grade"].to_list() == ["hidden_single", None, None, None, None, "search"]
    assert rated["difficulty"].is_null().to_list() == [False, True, True, True, True, False]
    assert rated["steps"].is_null().to_list() == rated["steps_by_level"].is_null().to_list()
    assert rated["steps"][5] == 81  # the ladder cannot start on an empty grid: all left blank


def test_every_puzzle_shape_gives_the_same_ratings():
    puzzles = [EASY, INKALA]
    expected = rate(puzzles)
    grids = parse_puzzles(puzzles).grids
    for shape in (pl.Series(puzzles), pa.array(puzzles), pa.chunked_array([puzzles]), grids):
        assert rate(shape).equals(expected)


def test_same_seed_same_ratings_in_any_batch_and_order():
    sample = generate(60, seed=11)["puzzle"]
    whole = rate(sample, samples=8, seed=5)
    assert whole.equals(rate(sample, samples=8, seed=5))
    pieces = pl.concat([rate(sample[:17], samples=8, seed=5), rate(sample[17:], samples=8, seed=5)])
    assert pieces.equals(whole)
    backwards = rate(sample.reverse(), samples=8, seed=5).reverse()
    assert backwards.equals(whole)


def test_another_seed_draws_other_symmetries():
    hard = shared_puzzles("puzzles3_magictour_top1465.txt", limit=50)
    one, other = (difficulty_grids(hard, samples=4, seed=s)[0] for s in (1, 2))
    assert not np.array_equal(one, other)
    assert abs(one.mean() - other.mean()) < 0.5 * one.mean()  # the same puzzles, on the whole


def test_difficulty_is_the_mean_of_the_copies_guesses():
    grids = parse_puzzles([INKALA]).grids
    copies = np.empty((5, 81), dtype=np.uint8)
    symmetric_copies(grids, False, 7, 5, copies)
    guesses = solve_grids(copies, solutions=1).guesses
    assert difficulty_grids(grids, samples=5, seed=7)[0][0] == guesses.mean()


def apply_symmetry(grid, digits, rows, columns, transpose):
    """The symmetry drawn by `draw_symmetry`, in plain numpy: cell (r, c) moves to
    (rows[r], columns[c]), or (columns[c], rows[r]) when transposed; digits are relabelled."""
    moved = np.zeros((9, 9), dtype=np.uint8)
    moved[np.ix_(rows, columns)] = digits[grid.reshape(9, 9)]
    return (moved.T if transpose else moved).reshape(81)


def test_symmetric_copies_are_the_same_puzzle_in_other_clothes():
    sample = generate(10, seed=2)
    puzzles = parse_puzzles(sample["puzzle"]).grids
    solutions = parse_puzzles(sample["solution"]).grids
    samples = 6
    moved = np.empty((10 * samples, 81), dtype=np.uint8)
    symmetric_copies(puzzles, False, 3, samples, moved)
    digits, rows, columns = np.empty(10, np.uint8), np.empty(9, np.int64), np.empty(9, np.int64)
    for i in range(10):
        key = np.uint64(puzzle_key(puzzles[i], 3))
        for s in range(samples):
            transpose = draw_symmetry(key, s, digits, rows, columns)
            assert sorted(digits[1:]) == list(range(1, 10))
            bands, stacks = set(rows // 3), set(columns // 3)
            assert bands == stacks == {0, 1, 2}  # rows stay in bands, columns in stacks
            assert all(len(set(rows[3 * b : 3 * b + 3] // 3)) == 1 for b in range(3))
            assert all(len(set(columns[3 * b : 3 * b + 3] // 3)) == 1 for b in range(3))
            copy = moved[i * samples + s]
            assert (copy == apply_symmetry(puzzles[i], digits, rows, columns, transpose)).all()
            solution = apply_symmetry(solutions[i], digits, rows, columns, transpose)
            assert verify_solutions(copy[None], solution[None]).all()
    assert len({row.tobytes() for row in moved}) == 10 * samples  # all different
    one = np.empty((samples, 81), dtype=np.uint8)
    symmetric_copies(puzzles[7:8], False, 3, samples, one)  # its copies do not depend on its row
    assert (one == moved[7 * samples : 8 * samples]).all()


def test_a_spent_node_budget_leaves_difficulty_null_but_grades():
    rated = rate([EASY, INKALA], max_nodes=2)
    assert rated["difficulty"].to_list() == [0.0, None]
    assert rated["grade"].to_list() == ["hidden_single", "search"]


def test_no_puzzles_no_rows():
    assert rate([]).schema == RATING_SCHEMA and rate([]).height == 0


def test_grade_only_with_no_samples():
    rated = rate([EASY, NO_SOLUTION, INKALA], samples=0)
    assert rated["difficulty"].is_null().all()
    assert rated["grade"].to_list() == ["hidden_single", None, "search"]


def test_bad_arguments():
    with pytest.raises(ValueError):
        rate([EASY], samples=-1)
    with pytest.raises(ValueError):
        rate([EASY], seed=-1)
    with pytest.raises(ValueError):
        rate(np.full((1, 81), 10))


def test_format_round_trip_keeps_ratings():
    grids = parse_puzzles([EASY, INKALA]).grids
    assert rate(format_grids(grids)).equals(rate(grids))
