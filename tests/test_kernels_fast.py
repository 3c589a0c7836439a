"""The `fast` strategy against the seed strategies, two independent reference counters, and the
public sets moved by random symmetries and mutated."""

import numpy as np
import pytest
from conftest import shared_puzzles
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from pipeline.grid import parse_puzzles
from pipeline.jobs.generate.puzzles import generate, random_full_grids
from pipeline.kernels import codes, find_two_solutions, solve_grids
from pipeline.kernels.checks import givens_valid, verify_solutions
from pipeline.kernels.fast import branch_points, solve_kernel, two_solutions_kernel
from pipeline.kernels.fast_entries import search_entries
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


_UNIT_CELLS = np.array(
    [[9 * r + c for c in range(9)] for r in range(9)]
    + [[9 * r + c for r in range(9)] for c in range(9)]
    + [[9 * (3 * (b // 3) + i // 3) + 3 * (b % 3) + i % 3 for i in range(9)] for b in range(9)],
    dtype=np.int64,
)
_CELL_UNITS = np.array(
    [[c // 9, 9 + c % 9, 18 + 3 * (c // 27) + (c % 9) // 3] for c in range(81)], dtype=np.int64
)


@njit(cache=True)
def _reference_candidates(values: np.ndarray, cell: int) -> int:
    used = 0
    for u in range(3):
        for other in _UNIT_CELLS[_CELL_UNITS[cell, u]]:
            if values[other]:
                used |= 1 << (values[other] - 1)
    return 0x1FF & ~used


@njit(cache=True)
def _reference_propagate(values: np.ndarray) -> int:
    """Naked and hidden singles, cell by cell, until none is left: -1 on a contradiction, 81
    when every cell is filled, else the empty cell with the fewest candidates."""
    while True:
        progress = False
        best, best_count = 81, 10
        for cell in range(81):
            if values[cell] == 0:
                allowed = _reference_candidates(values, cell)
                count = 0
                for d in range(9):
                    count += (allowed >> d) & 1
                if count == 0:
                    return -1
                if count == 1:
                    for d in range(9):
                        if allowed >> d & 1:
                            values[cell] = d + 1
                    progress = True
                    break
                if count < best_count:
                    best, best_count = cell, count
        if progress:
            continue
        for unit in range(27):
            for d in range(1, 10):
                spots, spot, present = 0, -1, False
                for cell in _UNIT_CELLS[unit]:
                    if values[cell] == d:
                        present = True
                    elif values[cell] == 0 and _reference_candidates(values, cell) >> (d - 1) & 1:
                        spots += 1
                        spot = cell
                if not present and spots == 0:
                    return -1
                if not present and spots == 1:
                    values[spot] = d
                    progress = True
        if not progress:
            return best


@njit(cache=True)
def reference_count(puzzle: np.ndarray, first: np.ndarray) -> int:
    """Solutions of a puzzle whose givens do not clash, up to 2, by a plain cell-by-cell
    depth-first search (no bitboards, no triads, nothing shared with `fast`); the first one
    found goes to `first`."""
    states = np.zeros((82, 81), dtype=np.uint8)
    cells = np.zeros(82, dtype=np.int64)
    todo = np.zeros(82, dtype=np.int64)
    states[0, :] = puzzle
    level, depth, found = 0, -1, 0
    outcome = _reference_propagate(states[0])
    while True:
        if outcome == 81:
            found += 1
            if found == 1:
                first[:] = states[level]
            if found == 2:
                return 2
        elif outcome >= 0:
            depth = level
            cells[depth] = outcome
            todo[depth] = _reference_candidates(states[depth], outcome)
        while depth >= 0 and todo[depth] == 0:
            depth -= 1
        if depth < 0:
            return found
        digit = 0
        while not todo[depth] >> digit & 1:
            digit += 1
        todo[depth] &= todo[depth] - 1
        level = depth + 1
        states[level, :] = states[depth]
        states[level, cells[depth]] = digit + 1
        outcome = _reference_propagate(states[level])


def reference_verdicts(puzzles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(verdicts, first solutions) by `checks.givens_valid` and `reference_count`."""
    valid = givens_valid(puzzles)
    verdicts = np.full(len(puzzles), codes.INVALID, dtype=np.int8)
    firsts = np.zeros_like(puzzles)
    for i in np.flatnonzero(valid):
        count = reference_count(puzzles[i], firsts[i])
        verdicts[i] = (codes.UNSOLVABLE, codes.SOLVED, codes.MULTIPLE)[count]
    return verdicts, firsts


def run_kernel(puzzles: np.ndarray, skip: np.ndarray | None = None, max_nodes: int = 0):
    """`fast.solve_kernel` called directly (no `givens_valid` before it), counting up to 2,
    outputs prefilled with markers that a row left untouched keeps."""
    n = len(puzzles)
    skip = np.zeros(n, dtype=np.bool_) if skip is None else skip
    out = (np.full(n, -7, np.int8), np.full((n, 81), 7, np.uint8), np.full(n, -7, np.int64),
           np.full(n, -7, np.int64), np.full(n, -7, np.int64))  # fmt: skip
    counts = np.full(n, -7, np.int64)
    solve_kernel(np.ascontiguousarray(puzzles), skip, search_entries(), 2, max_nodes, *out, counts)
    return out


def mutations(puzzles: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Each puzzle three ways: a given removed (often several solutions), a given changed to
    another digit (often no solution, or clashing givens), a blank filled with a random digit."""
    out = []
    for puzzle in puzzles:
        givens = np.flatnonzero(puzzle)
        removed = puzzle.copy()
        removed[rng.choice(givens)] = 0
        changed = puzzle.copy()
        cell = rng.choice(givens)
        changed[cell] = (changed[cell] + rng.integers(1, 9) - 1) % 9 + 1
        filled = puzzle.copy()
        filled[rng.choice(np.flatnonzero(puzzle == 0))] = rng.integers(1, 10)
        out += [removed, changed, filled]
    return np.array(out, dtype=np.uint8)


def assert_agrees_with_reference(puzzles: np.ndarray) -> None:
    expected, firsts = reference_verdicts(puzzles)
    verdicts, solutions, nodes, guesses, _ = run_kernel(puzzles)
    assert (verdicts == expected).all(), np.flatnonzero(verdicts != expected)[:5]
    solved = verdicts == codes.SOLVED
    assert (solutions[solved] == firsts[solved]).all()
    several = verdicts == codes.MULTIPLE
    assert verify_solutions(puzzles[several], solutions[several]).all()
    assert not solutions[~(solved | several)].any()
    searched = verdicts != codes.INVALID
    assert (guesses[searched] == nodes[searched] - 1).all()


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


@settings(max_examples=30, deadline=None)  # the reference counter is Python: 60 took 36 s
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


def test_clashing_givens_are_invalid_from_the_kernel_itself():
    base = "." * 81

    def puzzle(**cells: int) -> np.ndarray:
        grid = np.zeros(81, dtype=np.uint8)
        for name, value in cells.items():
            grid[int(name[1:])] = value
        return grid

    rows = np.array(
        [
            puzzle(c0=1, c5=1),  # a row
            puzzle(c4=5, c58=5),  # a column, rows 0 and 6
            puzzle(c0=7, c20=7),  # a box
            puzzle(c40=12),  # no digit
            puzzle(c80=255, c0=3),
            parse_puzzles([base]).grids[0],  # valid: many solutions
            puzzle(c0=1, c1=1),  # a clash, but skipped
        ]
    )
    skip = np.array([False] * 6 + [True])
    verdicts, solutions, nodes, guesses, solve_ns = run_kernel(rows, skip)
    assert list(verdicts[:5]) == [codes.INVALID] * 5
    assert not solutions[:5].any() and not nodes[:5].any() and not guesses[:5].any()
    assert (solve_ns[:5] >= 0).all()  # measured (the marker was -7)
    assert verdicts[5] == codes.MULTIPLE
    assert verdicts[6] == -7 and (solutions[6] == 7).all() and solve_ns[6] == -7  # untouched


def test_invalid_from_the_two_solutions_kernel_leaves_no_second():
    rows = np.zeros((2, 81), dtype=np.uint8)
    rows[0, [0, 80]] = 9
    rows[0, [3, 75]] = 4  # same column
    n = len(rows)
    out = [np.full(n, -7, np.int8), np.full((n, 81), 7, np.uint8), np.full((n, 81), 7, np.uint8)]
    out += [np.full(n, -7, np.int64) for _ in range(4)]  # nodes, guesses, solve_ns, counts
    two_solutions_kernel(rows, np.zeros(n, np.bool_), search_entries(), 0, *out)
    assert out[0][0] == codes.INVALID and not out[1][0].any() and not out[2][0].any()
    assert out[0][1] == codes.MULTIPLE
    assert verify_solutions(rows[1:], out[2][1:]).all() and (out[1][1] != out[2][1]).any()


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), givens=st.integers(0, 40), wild=st.booleans())
def test_property_invalid_exactly_when_checks_say_so(seed, givens, wild):
    """Random values in random cells (a value above 9 now and then): the kernel answers INVALID
    exactly for the rows `checks.givens_valid` rejects, and never crashes."""
    rng = np.random.default_rng(seed)
    grids = np.zeros((8, 81), dtype=np.uint8)
    for grid in grids:
        grid[rng.permutation(81)[:givens]] = rng.integers(1, 10, givens)
        if wild and rng.random() < 0.3:
            grid[rng.integers(81)] = rng.integers(10, 256)
    verdicts, *_ = run_kernel(grids, max_nodes=20_000)
    assert ((verdicts == codes.INVALID) == ~givens_valid(grids)).all()


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_property_generated_puzzles_and_mutations_agree_with_the_reference(seed):
    rng = np.random.default_rng(seed)
    full = random_full_grids(4, rng)
    puzzles = full.copy()
    for puzzle in puzzles:
        puzzle[rng.permutation(81)[: rng.integers(40, 62)]] = 0
    assert_agrees_with_reference(np.concatenate([puzzles, mutations(puzzles, rng)]))


@pytest.mark.parametrize(
    "name",
    ["puzzles2_17_clue.txt", "puzzles3_magictour_top1465.txt",
     "puzzles5_forum_hardest_1905_11+.txt", "puzzles6_forum_hardest_1106.txt",
     "puzzles7_serg_benchmark.txt", "kaggle1m_first9999.csv"],
)  # fmt: skip
def test_public_sample_by_symmetries_and_mutations_agrees_with_the_reference(name):
    rng = np.random.default_rng(sum(map(ord, name)))
    puzzles = shared_puzzles(name)
    sample = random_symmetries(puzzles[rng.choice(len(puzzles), 40, replace=False)], rng)
    assert_agrees_with_reference(np.concatenate([sample, mutations(sample, rng)]))


def test_branch_points_are_tdokus_guesses():
    """Each branch point is tried one or two ways: guesses / 2 <= branch points <= guesses."""
    puzzles = shared_puzzles("puzzles6_forum_hardest_1106.txt", limit=30)
    _, _, _, guesses, _ = run_kernel(puzzles)
    points = branch_points(puzzles)
    assert (points <= guesses).all() and (2 * points >= guesses).all() and points.sum() > 0
