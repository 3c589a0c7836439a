"""The technique ladder: each technique on a small position where it, and nothing simpler, makes
progress; soundness against known solutions; the grades of public sets when present.

Positions are candidate grids ("pencil marks"): they start from an open board, every cell blank
with all nine digits possible, and take candidates away to leave exactly one pattern. Cells are
named as Sudoku players do, r1c1 (top left) to r9c9 (bottom right).
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline import generate
from pipeline.grid import parse_puzzles
from pipeline.kernels import solve_grids
from pipeline.kernels.candidates import grid_candidates
from pipeline.rating import GRADES, SINGLES, TECHNIQUES, grade_grids
from pipeline.rating.ladder import NO_GRADE
from pipeline.rating.rungs import apply_rung
from pipeline.symmetry import random_symmetries
from tests.conftest import shared_puzzles


def cell(row: int, column: int) -> int:
    """The index of cell r{row}c{column} (1-based, as players write them)."""
    return 9 * (row - 1) + column - 1


def digits(*ds: int) -> int:
    """A candidate mask holding these digits."""
    return sum(1 << (d - 1) for d in ds)


def open_board() -> tuple[np.ndarray, np.ndarray]:
    """Every cell blank, every digit possible everywhere: (values, candidates)."""
    return np.zeros(81, dtype=np.uint8), np.full(81, digits(*range(1, 10)), dtype=np.int32)


def keep_only(candidates: np.ndarray, cells: list[tuple[int, int]], *ds: int) -> None:
    for row, column in cells:
        candidates[cell(row, column)] = digits(*ds)


def take_away(candidates: np.ndarray, cells: list[tuple[int, int]], *ds: int) -> None:
    for row, column in cells:
        candidates[cell(row, column)] &= ~digits(*ds)


def row_cells(row: int, but: tuple[int, ...] = ()) -> list[tuple[int, int]]:
    return [(row, c) for c in range(1, 10) if c not in but]


def removed(before: np.ndarray, after: np.ndarray) -> set[tuple[int, int, int]]:
    """The candidates taken away, as (row, column, digit)."""
    return {
        (i // 9 + 1, i % 9 + 1, d)
        for i in range(81)
        for d in range(1, 10)
        if before[i] >> (d - 1) & 1 and not after[i] >> (d - 1) & 1
    }


def simplest_step(
    technique: str, values: np.ndarray, candidates: np.ndarray
) -> tuple[int, np.ndarray, np.ndarray]:
    """Check that every technique below `technique` on the ladder finds nothing here, then apply
    `technique` once; returns (steps it made, values, candidates) after it."""
    rung = TECHNIQUES.index(technique)
    for simpler in range(rung):
        v, c = values.copy(), candidates.copy()
        assert apply_rung(simpler, v, c) == 0, f"{TECHNIQUES[simpler]} already makes progress"
        assert (c == candidates).all() and (v == values).all()
    v, c = values.copy(), candidates.copy()
    return apply_rung(rung, v, c), v, c


def test_the_ladder_runs_from_singles_to_search():
    assert GRADES[0] == "hidden_single" and GRADES[-1] == "search"
    assert GRADES[:-1] == TECHNIQUES and SINGLES == ("hidden_single", "naked_single")
    assert len(set(GRADES)) == len(GRADES)


def test_hidden_single():
    # 5 can go only in r1c5 in row 1: it goes there and leaves the cell's peers.
    values, candidates = open_board()
    take_away(candidates, row_cells(1, but=(5,)), 5)
    steps, v, c = simplest_step("hidden_single", values, candidates)
    assert steps == 1 and v[cell(1, 5)] == 5 and c[cell(1, 5)] == 0
    assert not c[cell(9, 5)] & digits(5) and not c[cell(2, 4)] & digits(5)


def test_naked_single():
    # r5c5 has 7 as its only candidate (each digit still has several places in every unit).
    values, candidates = open_board()
    keep_only(candidates, [(5, 5)], 7)
    steps, v, c = simplest_step("naked_single", values, candidates)
    assert steps == 1 and v[cell(5, 5)] == 7
    assert not c[cell(5, 1)] & digits(7) and not c[cell(4, 6)] & digits(7)


def test_locked_candidates_pointing():
    # In box 1, 3 is possible only in row 1 (r1c1-r1c3): it leaves the rest of row 1.
    values, candidates = open_board()
    take_away(candidates, [(r, c) for r in (2, 3) for c in (1, 2, 3)], 3)
    steps, _, c = simplest_step("locked_candidates", values, candidates)
    assert removed(candidates, c) == {(1, col, 3) for col in range(4, 10)}
    assert steps == 6


def test_locked_candidates_claiming():
    # In row 1, 3 is possible only in box 1: it leaves the rest of box 1.
    values, candidates = open_board()
    take_away(candidates, row_cells(1, but=(1, 2, 3)), 3)
    steps, _, c = simplest_step("locked_candidates", values, candidates)
    assert removed(candidates, c) == {(r, col, 3) for r in (2, 3) for col in (1, 2, 3)}
    assert steps == 6


def test_naked_pair():
    # r1c1 and r1c2 both hold only {1, 2}: 1 and 2 leave the rest of row 1 and of box 1.
    values, candidates = open_board()
    keep_only(candidates, [(1, 1), (1, 2)], 1, 2)
    steps, _, c = simplest_step("naked_pair", values, candidates)
    row = {(1, col, d) for col in range(3, 10) for d in (1, 2)}
    box = {(r, col, d) for r in (2, 3) for col in (1, 2, 3) for d in (1, 2)}
    assert removed(candidates, c) == row | box and steps == 26


def test_x_wing():
    # In rows 1 and 5, 1 is possible only in columns 3 and 7: 1 leaves the rest of both columns.
    values, candidates = open_board()
    for row in (1, 5):
        take_away(candidates, row_cells(row, but=(3, 7)), 1)
    steps, _, c = simplest_step("x_wing", values, candidates)
    expected = {(r, col, 1) for r in range(1, 10) if r not in (1, 5) for col in (3, 7)}
    assert removed(candidates, c) == expected and steps == 14


def test_hidden_pair():
    # In row 1, 1 and 2 are possible only in r1c1 and r1c5: those cells lose every other digit.
    values, candidates = open_board()
    take_away(candidates, row_cells(1, but=(1, 5)), 1, 2)
    steps, _, c = simplest_step("hidden_pair", values, candidates)
    assert c[cell(1, 1)] == c[cell(1, 5)] == digits(1, 2)
    assert removed(candidates, c) == {(1, col, d) for col in (1, 5) for d in range(3, 10)}
    assert steps == 14


def test_naked_triple():
    # r1c1 {1,2,3}, r1c5 {1,2}, r1c9 {2,3}: three cells, three digits; they leave row 1's rest.
    values, candidates = open_board()
    keep_only(candidates, [(1, 1)], 1, 2, 3)
    keep_only(candidates, [(1, 5)], 1, 2)
    keep_only(candidates, [(1, 9)], 2, 3)
    steps, _, c = simplest_step("naked_triple", values, candidates)
    expected = {(1, col, d) for col in (2, 3, 4, 6, 7, 8) for d in (1, 2, 3)}
    assert removed(candidates, c) == expected and steps == 18


def test_swordfish():
    # 1 in rows 1, 4, 7 only at {c1, c4}, {c4, c7}, {c1, c7}: it leaves the rest of c1, c4, c7.
    values, candidates = open_board()
    for row, columns in ((1, (1, 4)), (4, (4, 7)), (7, (1, 7))):
        take_away(candidates, row_cells(row, but=columns), 1)
    steps, _, c = simplest_step("swordfish", values, candidates)
    expected = {(r, col, 1) for r in (2, 3, 5, 6, 8, 9) for col in (1, 4, 7)}
    assert removed(candidates, c) == expected and steps == 18


def test_hidden_triple():
    # In row 1, 1, 2 and 3 are possible only in r1c1, r1c5, r1c9: those cells keep only them.
    values, candidates = open_board()
    take_away(candidates, row_cells(1, but=(1, 5, 9)), 1, 2, 3)
    steps, _, c = simplest_step("hidden_triple", values, candidates)
    assert c[cell(1, 1)] == c[cell(1, 5)] == c[cell(1, 9)] == digits(1, 2, 3)
    assert steps == 18


def test_xy_wing():
    # Pivot r1c1 {1,2} sees r1c5 {1,3} and r5c1 {2,3}: one of them is 3, so r5c5 (which sees
    # both pincers) cannot be 3.
    values, candidates = open_board()
    keep_only(candidates, [(1, 1)], 1, 2)
    keep_only(candidates, [(1, 5)], 1, 3)
    keep_only(candidates, [(5, 1)], 2, 3)
    steps, _, c = simplest_step("xy_wing", values, candidates)
    assert removed(candidates, c) == {(5, 5, 3)} and steps == 1


def test_xyz_wing():
    # Pivot r1c1 {1,2,3} sees r1c5 {1,3} and r2c2 {2,3}: 3 is in one of the three, so r1c2 and
    # r1c3 (which see all three) cannot be 3.
    values, candidates = open_board()
    keep_only(candidates, [(1, 1)], 1, 2, 3)
    keep_only(candidates, [(1, 5)], 1, 3)
    keep_only(candidates, [(2, 2)], 2, 3)
    steps, _, c = simplest_step("xyz_wing", values, candidates)
    assert removed(candidates, c) == {(1, 2, 3), (1, 3, 3)} and steps == 2


def test_naked_quad():
    # r1c1 {1,2}, r1c3 {2,3}, r1c5 {3,4}, r1c7 {1,4}: four cells, four digits, no smaller set.
    values, candidates = open_board()
    for col, pair in ((1, (1, 2)), (3, (2, 3)), (5, (3, 4)), (7, (1, 4))):
        keep_only(candidates, [(1, col)], *pair)
    steps, _, c = simplest_step("naked_quad", values, candidates)
    expected = {(1, col, d) for col in (2, 4, 6, 8, 9) for d in (1, 2, 3, 4)}
    assert removed(candidates, c) == expected and steps == 20


def test_jellyfish():
    # 1 in rows 1, 4, 2, 7 only at {c1,c4}, {c4,c2}, {c2,c7}, {c7,c1}: a cycle, so no smaller
    # fish; rows 1 and 2 between them reach all three boxes of their band, so no pointing.
    values, candidates = open_board()
    for row, columns in ((1, (1, 4)), (4, (4, 2)), (2, (2, 7)), (7, (7, 1))):
        take_away(candidates, row_cells(row, but=columns), 1)
    steps, _, c = simplest_step("jellyfish", values, candidates)
    expected = {(r, col, 1) for r in (3, 5, 6, 8, 9) for col in (1, 2, 4, 7)}
    assert removed(candidates, c) == expected and steps == 20


def test_hidden_quad():
    # In row 1, 1-4 are possible only in r1c1, r1c3, r1c5, r1c7: those cells keep only them.
    values, candidates = open_board()
    take_away(candidates, row_cells(1, but=(1, 3, 5, 7)), 1, 2, 3, 4)
    steps, _, c = simplest_step("hidden_quad", values, candidates)
    assert all(c[cell(1, col)] == digits(1, 2, 3, 4) for col in (1, 3, 5, 7))
    assert steps == 20


def test_x_chain():
    # A skyscraper on 1: in rows 1 and 7, 1 is possible only in c1 and c5 / c1 and c6. One of
    # r1c1, r7c1 (same column) is not 1, so r1c5 or r7c6 is: the cells seeing both lose 1.
    values, candidates = open_board()
    take_away(candidates, row_cells(1, but=(1, 5)), 1)
    take_away(candidates, row_cells(7, but=(1, 6)), 1)
    steps, _, c = simplest_step("x_chain", values, candidates)
    assert removed(candidates, c) == {(8, 5, 1), (9, 5, 1), (2, 6, 1), (3, 6, 1)}
    assert steps == 4


def test_xy_chain():
    # r1c1 {1,2} - r1c5 {2,3} - r5c5 {3,4} - r5c9 {4,1}: if r1c1 is not 1 it is 2, so r1c5 is
    # 3, r5c5 is 4 and r5c9 is 1. Either end is 1: r1c9 and r5c1, which see both, lose 1.
    values, candidates = open_board()
    for (row, col), pair in (
        ((1, 1), (1, 2)),
        ((1, 5), (2, 3)),
        ((5, 5), (3, 4)),
        ((5, 9), (4, 1)),
    ):
        keep_only(candidates, [(row, col)], *pair)
    steps, _, c = simplest_step("xy_chain", values, candidates)
    assert removed(candidates, c) == {(1, 9, 1), (5, 1, 1)} and steps == 2


def test_every_technique_has_its_position():
    tested = {name.removeprefix("test_") for name in globals() if name.startswith("test_")}
    assert set(TECHNIQUES) <= tested | {"locked_candidates"}


# Project Euler problem 96, grid 01 (singles), and Arto Inkala's 2010 "world's hardest".
EASY = "003020600900305001001806400008102900700000008006708200002609500800203009005010300"
INKALA = "8..........36......7..9.2...5...7.......457.....1...3...1....68..85...1..9....4.."


def test_known_puzzles_grade_as_expected():
    grids = parse_puzzles([EASY, INKALA, "11" + "." * 79]).grids
    graded = grade_grids(grids)
    assert [GRADES[g] if g >= 0 else None for g in graded.grades] == [
        "hidden_single",
        "search",
        None,
    ]
    assert graded.steps[0, 0] == 81 - np.count_nonzero(grids[0])  # singles fill every blank
    assert graded.blanks_left[1] > 0 and graded.blanks_left[0] == 0


def test_the_check_catches_a_wrong_solution():
    # The soundness property below would hold vacuously if the check never fired.
    grids = parse_puzzles([EASY]).grids
    solution = solve_grids(grids, solutions=1).solutions
    wrong_solution = solution.copy()
    wrong_solution[0, [0, 1]] = wrong_solution[0, [1, 0]]
    assert grade_grids(grids, solutions=solution).wrong[0] == -1
    assert grade_grids(grids, solutions=wrong_solution).wrong[0] >= 0


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_no_step_removes_the_solution_digit(seed):
    # generated (minimal) puzzles reach every rung: about a third need chains or search
    sample = generate(100, seed=seed)
    puzzles = parse_puzzles(sample["puzzle"]).grids
    graded = grade_grids(puzzles, solutions=parse_puzzles(sample["solution"]).grids)
    assert (graded.wrong == -1).all()
    assert (graded.grades != NO_GRADE).all()


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_the_grade_does_not_depend_on_how_the_puzzle_is_written(seed):
    # The techniques only remove candidates and stay usable once usable, so the grade is the
    # lowest rung whose techniques solve the puzzle, whatever order instances are found in.
    puzzles = parse_puzzles(generate(100, seed=seed)["puzzle"]).grids
    moved = random_symmetries(puzzles, np.random.default_rng(seed))
    assert (grade_grids(puzzles).grades == grade_grids(moved).grades).all()


@pytest.mark.parametrize(
    "name",
    ["puzzles2_17_clue.txt", "puzzles3_magictour_top1465.txt", "puzzles6_forum_hardest_1106.txt"],
)
def test_no_step_removes_the_solution_digit_on_public_sets(name):
    puzzles = shared_puzzles(name, limit=10_000)
    solutions = solve_grids(puzzles, solutions=1).solutions
    graded = grade_grids(puzzles, solutions=solutions)
    assert (graded.wrong == -1).all()


def test_kaggle_rows_grade_at_singles():
    puzzles = shared_puzzles("kaggle1m_first9999.csv")
    grades = grade_grids(puzzles).grades
    assert np.isin(grades, [GRADES.index(g) for g in SINGLES]).mean() >= 0.95


def test_forum_hardest_needs_search():
    grades = grade_grids(shared_puzzles("puzzles6_forum_hardest_1106.txt")).grades
    assert (grades == GRADES.index("search")).mean() >= 0.95


def test_the_ladder_starts_from_pencilmarks():
    """Givens as single candidates and blanks with all nine are the grid itself: the same
    grades and steps; the grid's solution survives every rung from reduced marks too; placed
    cells that clash and values beyond nine digits get no grade."""
    grids = shared_puzzles("puzzles3_magictour_top1465.txt", 60)
    plain = np.where(grids > 0, 1 << (grids.astype(np.int64) - 1), 511).astype(np.uint16)
    by_grid = grade_grids(grids)
    by_marks = grade_grids(None, candidates=plain)
    assert (by_grid.grades == by_marks.grades).all() and (by_grid.steps == by_marks.steps).all()
    solutions = solve_grids(grids).solutions
    marks = grid_candidates(grids)  # blanks keep only what their peers leave
    checked = grade_grids(None, solutions=solutions, candidates=marks)
    assert (checked.wrong == -1).all() and (checked.grades != NO_GRADE).all()
    bad = plain[:2].copy()
    bad[0, 0] = 1 << 9
    bad[1, 0] = bad[1, 1] = 1  # two placed 1s in row 1
    assert (grade_grids(None, candidates=bad).grades == NO_GRADE).all()


def test_pencilmarks_are_rated_like_their_grid():
    """`rate_grids(candidates=...)`: a grid written as pencilmarks (givens alone, blanks all
    nine) gets the grid's own rating, difficulty included (the same symmetries, searched
    alike); clashing placed cells get nulls."""
    from pipeline.rating import rate_grids

    grids = shared_puzzles("puzzles3_magictour_top1465.txt", 30)
    plain = np.where(grids > 0, 1 << (grids.astype(np.int64) - 1), 511).astype(np.uint16)
    plain[1, [0, 1]] = 1  # two placed 1s in a row: no rating
    grids[1, [0, 1]] = 1
    by_grid = rate_grids(grids, samples=4, seed=3)
    by_marks = rate_grids(None, samples=4, seed=3, candidates=plain)
    assert by_grid.equals(by_marks)
    assert by_marks["grade"][1] is None and by_marks["grade"].null_count() == 1
    assert rate_grids(None, samples=0, candidates=plain)["grade"].equals(by_grid["grade"])
