"""Counting solutions up to any N (`solve_grids(..., solutions=N)`, `KernelResults.counts`),
checked against a small pure-Python counter and, when its library is built, against tdoku."""

import ctypes

import numpy as np
import pytest
from conftest import TDOKU_SKIP, shared_puzzles
from hypothesis import example, given, settings
from hypothesis import strategies as st
from numba import njit

from benchmarks.common import tdoku_library
from pipeline.jobs.generate.puzzles import random_full_grids
from pipeline.kernels import STRATEGIES, codes, find_two_solutions, solve_grids
from pipeline.kernels.candidates import ALL_CANDIDATES, grid_candidates
from pipeline.kernels.checks import (
    NOT_A_DIGIT,
    candidates_valid,
    clash_messages,
    first_candidates_clash,
    verify_solutions,
)
from pipeline.kernels.fast import _solve_all
from pipeline.kernels.fast_entries import search_entries
from pipeline.kernels.fast_light import LIGHT_OPEN, search_light
from pipeline.kernels.fast_load import _load_givens
from pipeline.kernels.fast_propagate import BOARD_SLOTS, propagate

ALL = 511
PEERS = [
    sorted(
        (
            {9 * (c // 9) + k for k in range(9)}
            | {9 * k + c % 9 for k in range(9)}
            | {9 * (3 * (c // 27) + i // 3) + 3 * ((c % 9) // 3) + i % 3 for i in range(9)}
        )
        - {c}
    )
    for c in range(81)
]
UNITS = [
    *([9 * r + k for k in range(9)] for r in range(9)),
    *([9 * k + c for k in range(9)] for c in range(9)),
    *([9 * (3 * (b // 3) + i // 3) + 3 * (b % 3) + i % 3 for i in range(9)] for b in range(9)),
]


def count_reference(candidates: list[int], limit: int) -> int:
    """Pure-Python counter, independent of every kernel: the grids that give each cell one of
    its candidates (bit d-1 for digit d) and repeat no digit in a unit, up to `limit`. Search:
    the unassigned cell with the fewest digits left; a branch ends where a cell has no digit
    left or a unit has no place for a digit it lacks (without that second check, some puzzles
    with dozens of open cells took the counter hours: seed 8613 below)."""
    values = [0] * 81

    def search(limit: int) -> int:
        best, best_options = -1, 0
        options_of = [0] * 81
        for cell in range(81):
            if values[cell]:
                options_of[cell] = 1 << (values[cell] - 1)
                continue
            options = candidates[cell]
            for peer in PEERS[cell]:
                if values[peer]:
                    options &= ~(1 << (values[peer] - 1))
            options_of[cell] = options
            if best < 0 or bin(options).count("1") < bin(best_options).count("1"):
                best, best_options = cell, options
                if options == 0:
                    return 0
        if best < 0:
            return 1
        for unit in UNITS:
            covered = 0
            for cell in unit:
                covered |= options_of[cell]
            if covered != ALL:
                return 0
        total = 0
        for digit in range(1, 10):
            if best_options >> (digit - 1) & 1:
                values[best] = digit
                total += search(limit - total)
                values[best] = 0
                if total >= limit:
                    break
        return total

    return search(limit)


def plain_candidates(grid: np.ndarray) -> list[int]:
    """A grid as candidates for the reference counter: givens alone, blanks all digits."""
    return [1 << (int(v) - 1) if v else ALL for v in grid]


def blanked(seed: int, n: int, blanks: int) -> np.ndarray:
    """Random complete grids with `blanks` random cells emptied: counts from 1 to thousands."""
    rng = np.random.default_rng(seed)
    grids = random_full_grids(n, rng)
    for row in grids:
        row[rng.choice(81, size=blanks, replace=False)] = 0
    return grids


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_counts_match_the_reference_counter(strategy):
    grids = blanked(1, 12, 54)
    limit = 40
    found = solve_grids(grids, strategy=strategy, solutions=limit)
    expected = [count_reference(plain_candidates(g), limit) for g in grids]
    assert found.counts.tolist() == expected
    assert len(set(expected)) > 3  # the sample does count: not all 1s or all at the limit
    verdicts = [codes.SOLVED if c == 1 else codes.MULTIPLE for c in expected]
    assert found.verdicts.tolist() == verdicts


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), blanks=st.integers(0, 60), limit=st.integers(1, 30))
def test_fast_counts_any_limit(seed, blanks, limit):
    grid = blanked(seed, 1, blanks)
    found = solve_grids(grid, solutions=limit)
    expected = count_reference(plain_candidates(grid[0]), limit)
    assert found.counts[0] == expected
    if expected:  # the solution reported is one of them
        assert (found.solutions[0][grid[0] > 0] == grid[0][grid[0] > 0]).all()


def test_counts_for_every_limit_and_verdict():
    grids = np.zeros((4, 81), dtype=np.uint8)
    grids[1, [0, 1]] = 5  # clash: invalid, count 0
    grids[2] = blanked(3, 1, 30)[0]
    grids[3, :9] = [1, 2, 3, 4, 5, 6, 7, 8, 0]
    grids[3, 17] = 9  # the row's blank allows no digit: no solution
    for limit in (1, 2, 3, 1000):
        found = solve_grids(grids, solutions=limit, skip=np.array([0, 0, 0, 0], bool))
        assert found.counts.tolist() == [limit, 0, 1, 0]
        assert found.verdicts[1] == codes.INVALID and found.verdicts[3] == codes.UNSOLVABLE
    skipped = solve_grids(grids, solutions=5, skip=np.array([1, 0, 0, 0], bool))
    assert skipped.counts[0] == 0 and skipped.verdicts[0] == codes.MALFORMED


def test_counting_stops_at_the_node_budget():
    empty = np.zeros((1, 81), dtype=np.uint8)
    found = solve_grids(empty, solutions=10**9, max_nodes=500)
    assert found.verdicts[0] == codes.LIMIT and 0 < found.counts[0] < 10**9


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "3", None])
def test_bad_limits_are_refused(bad):
    with pytest.raises(ValueError, match="solutions must be"):
        solve_grids(np.zeros((1, 81), np.uint8), solutions=bad)


def tdoku_counts(library: ctypes.CDLL, grids: np.ndarray, limit: int) -> list[int]:
    out = ctypes.create_string_buffer(82)
    guesses = ctypes.c_size_t()
    counts = []
    for grid in grids:
        line = "".join(str(v) if v else "." for v in grid).encode()
        counts.append(library.TdokuSolverDpllTriadSimd(line, limit, 0, out, guesses))
    return counts


def test_counts_agree_with_tdoku():
    library = tdoku_library()
    if library is None:
        pytest.skip(TDOKU_SKIP)
    grids = shared_puzzles("puzzles7_serg_benchmark.txt", 300)
    limit = 5000
    found = solve_grids(grids, solutions=limit)
    assert found.counts.tolist() == tdoku_counts(library, grids, limit)
    more = blanked(7, 40, 58)
    assert solve_grids(more, solutions=300).counts.tolist() == tdoku_counts(library, more, 300)


# Pencilmark puzzles: `(n, 81) uint16` candidates in place of the grids.


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_grids_own_candidates_give_the_grids_answers(strategy):
    grids = np.concatenate([blanked(11, 20, 50), blanked(12, 5, 62)])
    grids[3, :2] = 4  # clashing givens stay a clash: INVALID
    grids[4] = 0
    grids[4, :9] = [1, 2, 3, 4, 5, 6, 7, 8, 0]
    grids[4, 17] = 9  # no digit left for a blank: UNSOLVABLE
    for limit in (1, 2, 50):
        by_grid = solve_grids(grids, strategy, solutions=limit)
        by_candidates = solve_grids(None, strategy, limit, candidates=grid_candidates(grids))
        for name in ("verdicts", "solutions", "counts"):
            assert (getattr(by_grid, name) == getattr(by_candidates, name)).all(), name
    assert by_grid.verdicts[3] == codes.INVALID and by_grid.verdicts[4] == codes.UNSOLVABLE


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), blanks=st.integers(20, 70), limit=st.integers(1, 20),
       removed=st.integers(0, 120))  # fmt: skip
@example(seed=8613, blanks=69, limit=16, removed=80)  # the reference once took hours on it
def test_pencilmark_counts_match_the_reference_counter(seed, blanks, limit, removed):
    """Candidates of random blanked grids with random extra eliminations: the kernel counts
    what the reference counts; a cell left with one candidate is placed, and when two placed
    cells clash the verdict is INVALID with count 0 (the reference finds none either)."""
    rng = np.random.default_rng(seed)
    candidates = grid_candidates(blanked(seed, 1, blanks))
    cells = rng.integers(0, 81, size=removed)
    bits = rng.integers(0, 9, size=removed)
    np.bitwise_and.at(candidates[0], cells, ~(1 << bits).astype(np.uint16))
    found = solve_grids(None, solutions=limit, candidates=candidates)
    expected = count_reference([int(c) for c in candidates[0]], limit)
    assert found.counts[0] == expected
    if not candidates_valid(candidates)[0]:
        assert found.verdicts[0] == codes.INVALID
    elif expected:
        solution = found.solutions[0].astype(np.int64)
        assert (candidates[0] >> (solution - 1) & 1).all()  # every digit one of its candidates


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_reference_strategies_count_pencilmarks_alike(strategy):
    rng = np.random.default_rng(9)
    candidates = grid_candidates(blanked(9, 30, 48))
    for row in candidates:
        cells = rng.integers(0, 81, size=60)
        np.bitwise_and.at(row, cells, ~(1 << rng.integers(0, 9, size=60)).astype(np.uint16))
    found = solve_grids(None, strategy, 25, candidates=candidates)
    expected = [count_reference([int(c) for c in row], 25) for row in candidates]
    assert found.counts.tolist() == expected
    assert (found.verdicts[~candidates_valid(candidates)] == codes.INVALID).all()


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_candidates_beyond_nine_digits_and_empty_cells(strategy):
    candidates = np.full((3, 81), ALL_CANDIDATES, np.uint16)
    candidates[0, 5] = 1 << 9  # no digit: invalid
    candidates[1, 5] = 0  # no candidate: no solution
    found = solve_grids(None, strategy, candidates=candidates, solutions=3)
    assert found.verdicts.tolist() == [codes.INVALID, codes.UNSOLVABLE, codes.MULTIPLE]
    assert found.counts.tolist() == [0, 0, 3]
    clash = first_candidates_clash(candidates)
    assert clash.kind[0] == NOT_A_DIGIT and clash.digit[0] == 512 and clash.cell_a[0] == 5
    assert candidates_valid(candidates).tolist() == [False, True, True]


def test_placed_cells_that_clash_are_named():
    candidates = np.full((1, 81), ALL_CANDIDATES, np.uint16)
    candidates[0, [10, 12]] = 1 << 6  # two 7s in row 2
    assert clash_messages(first_candidates_clash(candidates)) == [
        "row 2 repeats 7 at columns 2 and 4"
    ]
    assert solve_grids(None, candidates=candidates).verdicts[0] == codes.INVALID


@pytest.mark.parametrize("bad", [-1, 65536 + 5, 2.0])
def test_candidates_that_are_no_bit_sets_are_refused(bad):
    marks = np.full((1, 81), 511, dtype=np.asarray(bad).dtype)
    marks[0, 3] = bad
    with pytest.raises(ValueError, match="candidates must be"):
        solve_grids(None, candidates=marks)


def test_candidates_of_another_shape_are_refused():
    with pytest.raises(ValueError, match="shape"):
        solve_grids(None, candidates=np.full((1, 80), 511, np.uint16))


def pencilmark_line(candidates: np.ndarray) -> bytes:
    """tdoku's 729-character form: for each cell, digit d at position d-1 or `.`."""
    return bytes(
        ord(str(d)) if c >> (d - 1) & 1 else ord(".") for c in candidates for d in range(1, 10)
    )


def test_pencilmark_counts_agree_with_tdoku():
    library = tdoku_library()
    if library is None:
        pytest.skip(TDOKU_SKIP)
    rng = np.random.default_rng(5)
    candidates = grid_candidates(blanked(5, 60, 56))
    for row in candidates:
        cells = rng.integers(0, 81, size=40)
        np.bitwise_and.at(row, cells, ~(1 << rng.integers(0, 9, size=40)).astype(np.uint16))
    candidates = candidates[candidates_valid(candidates)]  # tdoku does not check placed cells
    limit = 100
    out = ctypes.create_string_buffer(82)
    guesses = ctypes.c_size_t()
    theirs = [
        library.TdokuSolverDpllTriadSimd(pencilmark_line(row), limit, 0, out, guesses)
        for row in candidates
    ]
    found = solve_grids(None, candidates=candidates, solutions=limit)
    assert found.counts.tolist() == theirs
    assert len(set(theirs)) > 3


def rectangles(grid: np.ndarray) -> list[tuple[int, int, int, int]]:
    """The deadly rectangles of a full grid: cells (r1c1, r1c2, r2c1, r2c2) in two boxes whose
    two digits can swap."""
    found = []
    for r1 in range(9):
        for r2 in range(r1 + 1, 9):
            for c1 in range(9):
                for c2 in range(c1 + 1, 9):
                    boxes = {(r // 3, c // 3) for r in (r1, r2) for c in (c1, c2)}
                    a, b = grid[9 * r1 + c1], grid[9 * r1 + c2]
                    if len(boxes) == 2 and grid[9 * r2 + c1] == b and grid[9 * r2 + c2] == a:
                        found.append((9 * r1 + c1, 9 * r1 + c2, 9 * r2 + c1, 9 * r2 + c2))
    return found


def test_deadly_rectangles_are_counted_without_a_search():
    """Two disjoint deadly rectangles blanked: 4 solutions. The search branches on the first
    (2 solutions written), and the second, met with two found already, is counted at once:
    5 nodes, not 7 (and enumeration, which writes them all, finds the same 4)."""
    for grid in random_full_grids(300, np.random.default_rng(3)):
        found = rectangles(grid)
        pairs = [(a, b) for a in found for b in found if not set(a) & set(b)]
        if pairs:
            break
    puzzle = grid.copy()
    puzzle[list(pairs[0][0] + pairs[0][1])] = 0
    counted = solve_grids(puzzle[None], solutions=10)
    assert counted.counts[0] == 4 and counted.verdicts[0] == codes.MULTIPLE
    assert counted.nodes[0] == 5
    assert solve_grids(puzzle[None], solutions=2).nodes[0] == 4  # to 2: no shortcut taken
    assert count_reference(plain_candidates(puzzle), 10) == 4


def test_two_solutions_of_pencilmarks_are_the_grids():
    grids = blanked(13, 30, 52)
    by_grid, seconds = find_two_solutions(grids)
    by_marks, marks_seconds = find_two_solutions(None, candidates=grid_candidates(grids))
    assert (by_grid.verdicts == by_marks.verdicts).all() and (seconds == marks_seconds).all()
    assert (by_grid.solutions == by_marks.solutions).all()
    assert (by_grid.verdicts == codes.MULTIPLE).sum() > 3


@njit(cache=True)
def searched_light(grids: np.ndarray) -> np.ndarray:
    """Per puzzle, whether `fast` searches it light (`fast_light`): the root propagated in
    full, then the same test the kernel makes."""
    out = np.zeros(len(grids), dtype=np.bool_)
    board = np.zeros(BOARD_SLOTS + 4, dtype=np.int64)
    scratch = np.zeros(BOARD_SLOTS + 4, dtype=np.int64)
    fields = np.zeros(9, dtype=np.int64)
    choice = np.zeros(7, dtype=np.int64)
    for i in range(len(grids)):
        if _load_givens(grids[i], board, scratch):
            state = propagate(board, np.int64((1 << 27) - 1), fields, choice)
            out[i] = search_light(board, state, choice) == 1
    return out


def test_puzzles_left_nearly_solved_are_searched_light_and_count_the_same():
    """Blanked grids stuck at the root with at most LIGHT_OPEN open cells take the light
    search (bivalue cells); its counts, first solutions and verdicts are those of the
    reference counter, and no grid with more open cells goes light."""
    grids = np.concatenate([blanked(21, 40, 40), blanked(22, 40, 47), blanked(23, 20, 60)])
    light = searched_light(grids)
    assert 20 <= light.sum() and not light[(grids == 0).sum(1) > LIGHT_OPEN].any()
    limit = 25
    found = solve_grids(grids[light], solutions=limit)
    expected = [count_reference(plain_candidates(g), limit) for g in grids[light]]
    assert found.counts.tolist() == expected and max(expected) > 1
    assert verify_solutions(grids[light], found.solutions).all()
    assert ((found.guesses == found.nodes - 1) & (found.nodes > 1)).all()


@njit(cache=True)
def count_fast(
    grids: np.ndarray, limit: int, switch_open: int, entries: np.ndarray
) -> tuple[np.ndarray, ...]:
    """`fast`'s counts, first solutions and nodes, a board stuck in the full search going light
    at `switch_open` open cells or fewer once a solution is found (0: never)."""
    n = len(grids)
    outs = (np.zeros(n, np.int8), np.zeros((n, 81), np.uint8), np.zeros(n, np.int64),
            np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64))  # fmt: skip
    puzzles = (grids, np.zeros((1, 81), np.uint16), 0)
    seconds = np.zeros((1, 81), np.uint8)
    _solve_all(puzzles, np.zeros(n, np.bool_), limit, 0, switch_open, outs, seconds, 0,
               np.zeros(1, np.int64), 0, entries)  # fmt: skip
    return outs[5], outs[1], outs[2]


def test_counting_goes_light_below_the_first_solution_and_counts_the_same():
    """Counting beyond 2, a puzzle searched in full goes light where few cells are left open,
    once it has a solution: the counts are the reference counter's, the first solution is the
    one the search to 2 finds, and the search is not the one that never switches."""
    grids = blanked(31, 12, 56)
    full = ~searched_light(grids)  # the others are light from the root
    assert full.sum() >= 6
    limit = 1000
    counts, firsts, nodes = count_fast(grids, limit, LIGHT_OPEN, search_entries())
    found = solve_grids(grids, solutions=limit)
    assert (found.counts == counts).all() and (found.nodes == nodes).all()  # what solve does
    expected = [count_reference(plain_candidates(g), limit) for g in grids]
    assert counts.tolist() == expected and len(set(expected)) > 3
    assert (firsts == solve_grids(grids, solutions=2).solutions).all()
    never_counts, never_firsts, never_nodes = count_fast(grids, limit, 0, search_entries())
    assert (never_counts == counts).all() and (never_firsts == firsts).all()
    assert (never_nodes[full] != nodes[full]).sum() >= 3 and (
        never_nodes[~full] == nodes[~full]
    ).all()
