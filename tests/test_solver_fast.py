"""The `fast` strategy against the seed strategies, a tiny reference counter, and public sets."""

import numpy as np
import pytest
from conftest import shared_puzzles
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.grid import parse_puzzles
from pipeline.jobs.generate import generate, random_full_grids
from pipeline.solver import codes, find_two_solutions, solve_grids
from pipeline.solver.checks import verify_solutions
from pipeline.symmetry import random_symmetries

EMPTY = np.zeros((1, 81), dtype=np.uint8)


def count_completions(grid: list[int], limit: int = 2) -> int:
    """Reference counter for the tests: plain recursion over the first blank cell, up to
    `limit` completions. Independent of every kernel (no bitmasks, no propagation)."""
    try:
        cell = grid.index(0)
    except ValueError:
        return 1
    r, c = divmod(cell, 9)
    br, bc = r - r % 3, c - c % 3
    used = {grid[r * 9 + k] for k in range(9)} | {grid[k * 9 + c] for k in range(9)}
    used |= {grid[(br + i) * 9 + bc + j] for i in range(3) for j in range(3)}
    total = 0
    for digit in range(1, 10):
        if digit not in used:
            grid[cell] = digit
            total += count_completions(grid, limit - total)
            grid[cell] = 0
            if total >= limit:
                break
    return total


@pytest.fixture(scope="module")
def unique_puzzles() -> tuple[np.ndarray, np.ndarray]:
    sample = generate(60, seed=11)
    return parse_puzzles(sample["puzzle"]).grids, parse_puzzles(sample["solution"]).grids


@pytest.mark.parametrize("strategy", ["fast", "mrv", "backtrack"])
def test_every_strategy_solves_generated_puzzles(strategy, unique_puzzles):
    puzzles, solutions = unique_puzzles
    found = solve_grids(puzzles, strategy=strategy)
    assert (found.verdicts == codes.SOLVED).all()
    assert (found.solutions == solutions).all()
    assert (found.nodes >= 1).all() and (found.guesses <= found.nodes - 1).all()


def test_fast_and_seed_strategies_agree_on_a_hard_set():
    puzzles = shared_puzzles("puzzles3_magictour_top1465.txt", limit=40)
    fast = solve_grids(puzzles, strategy="fast")
    mrv = solve_grids(puzzles, strategy="mrv")
    assert (fast.verdicts == codes.SOLVED).all()
    assert (fast.verdicts == mrv.verdicts).all()
    assert (fast.solutions == mrv.solutions).all()
    assert verify_solutions(puzzles, fast.solutions).all()


@pytest.mark.parametrize(
    "name, verdict",
    [
        ("puzzles2_17_clue.txt", codes.SOLVED),
        ("puzzles6_forum_hardest_1106.txt", codes.SOLVED),
        ("puzzles7_serg_benchmark.txt", codes.MULTIPLE),
    ],
)
def test_fast_on_public_sets(name, verdict):
    puzzles = shared_puzzles(name, limit=300)
    found = solve_grids(puzzles, strategy="fast")
    assert (found.verdicts == verdict).all()
    assert verify_solutions(puzzles, found.solutions).all()


def test_empty_board_has_many_solutions():
    found = solve_grids(EMPTY, strategy="fast")
    assert found.verdicts[0] == codes.MULTIPLE
    assert verify_solutions(EMPTY, found.solutions)[0]


def test_removing_a_given_can_break_uniqueness(unique_puzzles):
    puzzles, _ = unique_puzzles
    # Generated puzzles are minimal: removing any given leaves several solutions.
    puzzle = puzzles[0].copy()
    puzzle[np.flatnonzero(puzzle)[0]] = 0
    assert count_completions(puzzle.tolist()) == 2
    assert solve_grids(puzzle[None], strategy="fast").verdicts[0] == codes.MULTIPLE


def test_consistent_givens_without_a_solution():
    puzzle = parse_puzzles(["12345678." + "........9" + "." * 63]).grids
    found = solve_grids(puzzle, strategy="fast")
    assert found.verdicts[0] == codes.UNSOLVABLE
    assert not found.solutions.any()


def test_solutions_1_stops_at_the_first():
    found = solve_grids(EMPTY, strategy="fast", solutions=1)
    assert found.verdicts[0] == codes.FOUND  # a solution; uniqueness not checked
    assert verify_solutions(EMPTY, found.solutions)[0]


def test_node_budget_gives_limit():
    puzzles = shared_puzzles("puzzles6_forum_hardest_1106.txt", limit=5)
    found = solve_grids(puzzles, strategy="fast", max_nodes=3)
    assert (found.verdicts == codes.LIMIT).all()
    assert (found.nodes <= 3).all()


def test_node_budget_after_the_first_solution_keeps_it():
    found = solve_grids(EMPTY, strategy="fast", max_nodes=40)
    assert found.verdicts[0] in (codes.LIMIT, codes.MULTIPLE)
    if found.verdicts[0] == codes.LIMIT and found.solutions[0].any():
        assert verify_solutions(EMPTY, found.solutions)[0]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), blanks=st.integers(0, 81))
def test_property_blanked_full_grid(seed, blanks):
    """Blank random cells of a random full grid: the solution found keeps the givens and is
    valid, and `solutions=2` tells uniqueness as the reference counter does."""
    rng = np.random.default_rng(seed)
    full = random_symmetries(random_full_grids(1, rng), rng)[0]
    puzzle = full.copy()
    puzzle[rng.permutation(81)[:blanks]] = 0
    found = solve_grids(puzzle[None], strategy="fast", solutions=2)
    assert verify_solutions(puzzle[None], found.solutions)[0]
    expected = codes.SOLVED if count_completions(puzzle.tolist()) == 1 else codes.MULTIPLE
    assert found.verdicts[0] == expected


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_property_strategies_count_the_same_solutions(seed):
    """On sparse random puzzles (often several solutions) all strategies agree on the verdict."""
    rng = np.random.default_rng(seed)
    full = random_full_grids(1, rng)[0]
    puzzle = full.copy()
    puzzle[rng.permutation(81)[: rng.integers(45, 60)]] = 0
    verdicts = {
        s: solve_grids(puzzle[None], strategy=s, max_nodes=200_000).verdicts[0]
        for s in ("fast", "mrv", "backtrack")
    }
    decided = {v for v in verdicts.values() if v != codes.LIMIT}
    assert len(decided) == 1, verdicts


def test_two_solutions_as_evidence(unique_puzzles):
    puzzles, solutions = unique_puzzles
    several = puzzles[:5].copy()
    several[:, :] = np.where(np.arange(81) < 40, 0, several)  # blank the top: many solutions
    batch = np.concatenate([several, puzzles[5:8], EMPTY])
    found, seconds = find_two_solutions(batch)
    multiple = found.verdicts == codes.MULTIPLE
    assert multiple[:5].all() and multiple[-1] and not multiple[5:8].any()
    assert verify_solutions(batch[multiple], seconds[multiple]).all()
    assert (seconds[multiple] != found.solutions[multiple]).any(axis=1).all()
    assert not seconds[~multiple].any()
    assert (found.solutions[5:8] == solutions[5:8]).all()
