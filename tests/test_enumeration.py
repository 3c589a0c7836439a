"""Streaming enumeration of solutions (`pipeline.kernels.enumeration`): chunks concatenated are
all the solutions, distinct, each valid and keeping the givens, in one order whatever the
chunk size; counts agree with `solve_grids`."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.jobs.generate.puzzles import random_full_grids
from pipeline.kernels import codes, solve_grids
from pipeline.kernels.candidates import grid_candidates
from pipeline.kernels.checks import verify_solutions
from pipeline.kernels.enumeration import enumerate_batch, enumerate_solutions


def blanked(seed: int, n: int, blanks: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    grids = random_full_grids(n, rng)
    for row in grids:
        row[rng.choice(81, size=blanks, replace=False)] = 0
    return grids


def all_of(puzzle: np.ndarray, limit: int | None, chunk: int, **kw: object) -> np.ndarray:
    chunks = list(enumerate_solutions(puzzle, limit, chunk, **kw))
    assert all(0 < len(c) <= chunk for c in chunks)
    return np.concatenate(chunks) if chunks else np.zeros((0, 81), np.uint8)


def assert_solutions_of(grid: np.ndarray, found: np.ndarray) -> None:
    assert verify_solutions(np.repeat(grid[None], len(found), axis=0), found).all()
    assert len({row.tobytes() for row in found}) == len(found)  # distinct


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), blanks=st.integers(0, 62), chunk=st.integers(1, 50))
def test_chunks_are_every_solution_once_in_one_order(seed, blanks, chunk):
    grid = blanked(seed, 1, blanks)[0]
    most = 2_000
    whole = all_of(grid, most, most)
    count = solve_grids(grid[None], solutions=most).counts[0]
    assert len(whole) == count
    if count < most:  # no limit: the same
        assert (all_of(grid, None, most) == whole).all()
    assert_solutions_of(grid, whole)
    assert (all_of(grid, most, chunk) == whole).all()  # the same order in any chunk size
    limit = max(1, count // 2)
    assert (all_of(grid, limit, chunk) == whole[:limit]).all()
    first = solve_grids(grid[None], solutions=1).solutions[0]
    assert (whole[0] == first).all()  # the first is the one solve_grids finds


def test_many_solutions_stream_in_bounded_chunks():
    grid = np.zeros(81, np.uint8)
    grid[:27] = random_full_grids(1, np.random.default_rng(4))[0, :27]  # three full rows
    seen = 0
    for chunk in enumerate_solutions(grid, 20_000, chunk=3_000):
        assert len(chunk) <= 3_000
        assert_solutions_of(grid, chunk)
        seen += len(chunk)
    assert seen == 20_000


def test_pencilmarks_enumerate_like_their_grid():
    grid = blanked(8, 1, 58)[0]
    by_grid = all_of(grid, 500, 64)
    by_candidates = all_of(grid_candidates(grid)[0], 500, 64)  # uint16: pencilmarks
    assert len(by_grid) > 1 and (by_grid == by_candidates).all()
    as_grid = all_of(grid.astype(np.uint16), 500, 64, candidates=False)
    assert (as_grid == by_grid).all()


def test_batch_rows_and_ordinals():
    grids = blanked(2, 6, 55)
    grids[2, :2] = 7  # clash: no rows
    grids[4] = 0
    grids[4, :9] = [1, 2, 3, 4, 5, 6, 7, 8, 0]
    grids[4, 17] = 9  # no solution: no rows
    skip = np.zeros(6, bool)
    skip[5] = True
    limit = 30
    chunks = list(enumerate_batch(grids, limit, chunk=7, skip=skip))
    rows = np.concatenate([c.rows for c in chunks])
    ordinals = np.concatenate([c.ordinals for c in chunks])
    solutions = np.concatenate([c.solutions for c in chunks])
    found = solve_grids(grids, solutions=limit, skip=skip)
    assert np.bincount(rows, minlength=6).tolist() == found.counts.tolist()
    assert found.verdicts[2] == codes.INVALID and found.counts[2] == 0
    for row in range(5):  # row 5 is skipped: no rows, counted 0 above
        mine = rows == row
        assert ordinals[mine].tolist() == list(range(mine.sum()))
        assert (solutions[mine] == all_of(grids[row], limit, 1000)).all()
    assert (np.diff(rows) >= 0).all()


@pytest.mark.parametrize(
    ("limit", "chunk"), [(0, 10), (-1, 10), (2.5, 10), (True, 10), (5, 0), (5, None)]
)
def test_bad_limits_and_chunks_are_refused(limit, chunk):
    with pytest.raises(ValueError, match="limit|chunk"):
        list(enumerate_solutions(np.zeros(81, np.uint8), limit, chunk))


def test_a_puzzle_is_81_cells():
    with pytest.raises(ValueError, match="81 cells"):
        list(enumerate_solutions(np.zeros(80, np.uint8), 5))


def test_a_node_budget_stops_a_puzzle_with_its_solutions_so_far():
    grids = blanked(3, 3, 58)
    everything = [all_of(g, None, 4096) for g in grids]
    assert min(len(found) for found in everything) > 20  # each search branches a lot
    budgets = [5, 40, 10**9]
    for budget in budgets:
        spent = np.zeros(3, np.bool_)
        chunks = list(enumerate_batch(grids, None, chunk=7, max_nodes=budget, spent=spent))
        rows = np.concatenate([c.rows for c in chunks]) if chunks else np.zeros(0, np.int64)
        for row in range(3):
            mine = np.concatenate(
                [np.zeros((0, 81), np.uint8)] + [c.solutions[c.rows == row] for c in chunks]
            )
            # the solutions found before the budget ran out: the first ones, in order
            assert (mine == everything[row][: len(mine)]).all()
            assert spent[row] == (len(mine) < len(everything[row]))
        if budget == 10**9:
            assert not spent.any() and len(rows) == sum(len(f) for f in everything)
        else:
            assert spent.all()
    # counted as `fast` counts: a budget that lets `fast` prove two solutions lets the
    # enumeration find at least two
    found = solve_grids(grids, solutions=2, max_nodes=40)
    assert (found.verdicts == codes.MULTIPLE).all()
    for row in range(3):
        first = next(enumerate_batch(grids[row : row + 1], 2, max_nodes=int(found.nodes[row])))
        assert len(first.rows) == 2


@pytest.mark.parametrize("budget", [0, -3, 2.5, True])
def test_bad_budgets_are_refused(budget):
    with pytest.raises(ValueError, match="max_nodes"):
        list(enumerate_batch(np.zeros((1, 81), np.uint8), 5, max_nodes=budget))


def test_pencilmarks_passed_as_grids_are_refused_not_read_as_nothing():
    """Candidate bit sets handed over without `candidates=True` would be cast to digits and
    yield no solution at all: an error that says what to pass instead."""
    marks = grid_candidates(blanked(5, 2, 30))
    with pytest.raises(ValueError, match="candidates=True"):
        next(enumerate_batch(marks, limit=3))
    with pytest.raises(ValueError, match="candidates=True"):
        next(enumerate_batch(marks.astype(np.int64), limit=3))  # marks in a wider type
    rows = np.concatenate([c.rows for c in enumerate_batch(marks, limit=3, candidates=True)])
    assert set(rows) == {0, 1}


def test_digits_above_nine_in_a_grid_are_refused():
    grids = blanked(6, 1, 30)
    grids[0, 0] = 12
    with pytest.raises(ValueError, match="0 to 9"):
        next(enumerate_batch(grids, limit=3))
    # a skipped row is not read: what it holds does not matter
    assert list(enumerate_batch(grids, limit=3, skip=np.array([True]))) == []
