"""The reference strategies (`backtrack`, `mrv`) and the checks, against the seeds' examples.

Every example of seeds 000, 002 and 003 appears here with its expected answer; hypothesis then
compares the kernels with a tiny pure-Python solution counter on random puzzles.
"""

from pathlib import Path

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from pipeline.kernels import checks, codes, get_strategy, solve_grids
from pipeline.kernels.checks import first_clash, givens_valid, verify_solutions

DATA = Path(__file__).parents[1] / ".." / "shared" / "data"
REFERENCE = ("backtrack", "mrv")
EMPTY_ROW = "........."

SEED000 = ["53..7....", "6..195...", ".98....6.", "8...6...3", "4..8.3..1",
           "7...2...6", ".6....28.", "...419..5", "....8..79"]  # fmt: skip
SEED000_SOLUTION = ["534678912", "672195348", "198342567", "859761423", "426853791",
                    "713924856", "961537284", "287419635", "345286179"]  # fmt: skip
SEED002 = ["2645.8197", ".38197264", "1972645.8", "9.2...381", "381....45",
           "645...97.", "45.819726", "81972.453", "726.53819"]  # fmt: skip
SEED002_SOLUTION = ["264538197", "538197264", "197264538", "972645381", "381972645",
                    "645381972", "453819726", "819726453", "726453819"]  # fmt: skip
# the first line of puzzles2_17_clue.txt: unique and minimal (every given is needed)
CLUE17 = ".................1.....2.3......3.2...1.4......5....6..3......4.7..8...962...7..."


def grid(*rows: str) -> np.ndarray:
    """One (81,) uint8 grid from row strings ('.' or '0' blank), padded with empty rows."""
    text = "".join(rows).ljust(81, ".").replace(".", "0")
    assert len(text) == 81
    return np.frombuffer(text.encode(), dtype=np.uint8) - 48


def text(g: np.ndarray) -> list[str]:
    return ["".join(map(str, g[r * 9 : r * 9 + 9])) for r in range(9)]


def solve(strategy: str, *grids: np.ndarray, **kwargs):
    return solve_grids(np.stack(grids), strategy=strategy, **kwargs)


def reference_count(g: np.ndarray, limit: int = 2) -> int:
    """Completions of a grid, counted up to `limit`: plain Python sets, fewest candidates first."""
    cells = [int(d) for d in g]
    units = [(r, 9 + c, 18 + r // 3 * 3 + c // 3) for r in range(9) for c in range(9)]
    seen = [set() for _ in range(27)]
    for cell, d in enumerate(cells):
        if d:
            if any(d in seen[u] for u in units[cell]):
                return 0
            for u in units[cell]:
                seen[u].add(d)

    def count() -> int:
        best = None
        for cell, d in enumerate(cells):
            if not d:
                options = set(range(1, 10)).difference(*(seen[u] for u in units[cell]))
                if best is None or len(options) < len(best[1]):
                    best = (cell, options)
        if best is None:
            return 1
        total = 0
        cell, options = best
        for d in sorted(options):
            cells[cell] = d
            for u in units[cell]:
                seen[u].add(d)
            total += count()
            cells[cell] = 0
            for u in units[cell]:
                seen[u].discard(d)
            if total >= limit:
                break
        return total

    return min(count(), limit)


def load(name: str, count: int) -> np.ndarray:
    path = DATA / name
    if not path.exists():
        pytest.skip(f"{path} is absent")
    lines = [line.strip() for line in path.read_text().splitlines()]
    return np.stack([grid(line) for line in lines if line and not line.startswith("#")][:count])


@pytest.mark.parametrize("strategy", REFERENCE)
def test_seed000_fills_the_grid(strategy):
    r = solve(strategy, grid(*SEED000))
    assert r.verdicts[0] == codes.SOLVED
    assert text(r.solutions[0]) == SEED000_SOLUTION
    assert r.solve_ns[0] > 0


@pytest.mark.parametrize("strategy", REFERENCE)
def test_seed000_clashing_givens_are_invalid_without_search(strategy):
    g = grid("11.......")
    assert not givens_valid(g)[0]
    r = solve(strategy, g)
    assert r.verdicts[0] == codes.INVALID
    assert r.nodes[0] == 0 and not r.solutions.any()


@pytest.mark.parametrize("strategy", REFERENCE)
def test_seed002_examples(strategy):
    bottom_right_blank = grid(*SEED002_SOLUTION[:8], SEED002_SOLUTION[8][:8] + ".")
    r = solve(strategy, grid(*SEED002), bottom_right_blank)
    assert list(r.verdicts) == [codes.SOLVED, codes.SOLVED]
    assert text(r.solutions[0]) == text(r.solutions[1]) == SEED002_SOLUTION
    assert (r.nodes[1], r.guesses[1]) == (2, 0)  # the root and the forced 9


def test_mrv_places_forced_cells_as_nodes_not_guesses():
    for rows in (SEED000, SEED002):
        g = grid(*rows)
        r = solve("mrv", g)
        assert (r.nodes[0], r.guesses[0]) == (1 + (g == 0).sum(), 0)


SEED003 = {
    "board one": (SEED000, True),
    "board two": (["535.7....", *SEED000[1:]], False),
    "board three": (["5........", ".5......."], False),
    "empty board": ([], True),
    "one digit": (["5........"], True),
    "column repeat": (["5........", EMPTY_ROW, EMPTY_ROW, "5........"], False),
    "box repeat": (["5........", ".5......."], False),
    "same digit far apart": (["5........", *[EMPTY_ROW] * 7, "........5"], True),
}


@pytest.mark.parametrize("name", SEED003)
def test_seed003_boards(name):
    rows, valid = SEED003[name]
    assert givens_valid(grid(*rows)).tolist() == [valid]


def test_first_clash_names_unit_digit_and_cells():
    boards = [SEED003[name][0] for name in ("board one", "board two", "board three")]
    boards.append(SEED003["column repeat"][0])
    grids = np.stack([grid(*rows) for rows in boards] + [grid("..3" + chr(48 + 12))])
    found = np.stack(first_clash(grids), axis=1).tolist()
    assert found == [
        [-1, -1, -1, -1, -1],
        [checks.ROW, 0, 5, 0, 2],
        [checks.BOX, 0, 5, 0, 10],
        [checks.COLUMN, 0, 5, 0, 27],
        [checks.NOT_A_DIGIT, -1, 12, 3, -1],
    ]
    assert givens_valid(grids).tolist() == [True, False, False, False, False]


@pytest.mark.parametrize("strategy", REFERENCE)
def test_empty_board_has_multiple_solutions(strategy):
    empty = grid()
    r = solve(strategy, empty)
    assert r.verdicts[0] == codes.MULTIPLE
    assert verify_solutions(empty[None], r.solutions).all()
    assert solve(strategy, empty, solutions=1).verdicts[0] == codes.FOUND


@pytest.mark.parametrize("strategy", REFERENCE)
def test_removing_a_needed_given_makes_multiple(strategy):
    # cells (3,5)=1 (3,8)=3 (4,5)=3 (4,8)=1 of seed 000's solution can swap their digits
    g = grid(*SEED000_SOLUTION)
    g[[3 * 9 + 5, 3 * 9 + 8, 4 * 9 + 5]] = 0
    blanker = g.copy()
    blanker[4 * 9 + 8] = 0
    r = solve(strategy, g, blanker)
    assert list(r.verdicts) == [codes.SOLVED, codes.MULTIPLE]
    assert [reference_count(g), reference_count(blanker)] == [1, 2]


def test_minimal_17_clue_puzzle_loses_uniqueness_with_any_given():
    g = grid(CLUE17)
    fewer = g.copy()
    fewer[np.flatnonzero(g)[0]] = 0
    r = solve("mrv", g, fewer)
    assert list(r.verdicts) == [codes.SOLVED, codes.MULTIPLE]


@pytest.mark.parametrize("strategy", REFERENCE)
def test_consistent_givens_without_a_filling_are_unsolvable(strategy):
    no_candidate = grid("12345678.", *[EMPTY_ROW] * 3, "........9")  # (0,8) allows no digit
    # a unique puzzle plus a given that clashes with no other given but differs from the solution
    cell = int(np.flatnonzero(grid(*SEED000) == 0)[0])
    for d in range(1, 10):
        wrong_given = grid(*SEED000)
        wrong_given[cell] = d
        if d != grid(*SEED000_SOLUTION)[cell] and givens_valid(wrong_given)[0]:
            break
    assert givens_valid(np.stack([no_candidate, wrong_given])).all()
    r = solve(strategy, no_candidate, wrong_given)
    assert list(r.verdicts) == [codes.UNSOLVABLE, codes.UNSOLVABLE]
    assert not r.solutions.any()
    assert reference_count(wrong_given) == 0


@pytest.mark.parametrize("strategy", REFERENCE)
def test_node_budget(strategy):
    g = grid(*SEED000)
    r = solve(strategy, g, max_nodes=5)
    assert (r.verdicts[0], r.nodes[0]) == (codes.LIMIT, 5)
    full = solve(strategy, g).nodes[0]  # a unique puzzle: the whole tree is searched
    assert solve(strategy, g, max_nodes=full).verdicts[0] == codes.SOLVED
    assert solve(strategy, g, max_nodes=full - 1).verdicts[0] == codes.LIMIT
    # the first solution is kept when the budget runs out before a second one is found
    empty = grid()
    two = solve(strategy, empty).nodes[0]
    r = solve(strategy, empty, max_nodes=two - 1)
    assert r.verdicts[0] == codes.LIMIT
    assert (r.solutions[0] == solve(strategy, empty, solutions=1).solutions[0]).all()


@pytest.mark.parametrize("strategy", REFERENCE)
def test_kernel_leaves_skipped_rows_untouched(strategy):
    grids = np.stack([grid(*SEED000), grid(*SEED002), grid("11.......")])
    skip = np.array([False, True, True])
    outs = [np.full(3, 7, np.int8), np.full((3, 81), 7, np.uint8)]
    outs += [np.full(3, 7, np.int64) for _ in range(4)]  # nodes, guesses, solve_ns, counts
    chosen = get_strategy(strategy)
    chosen.load()(grids, skip, *chosen.leading(), 2, 0, *outs)
    assert outs[0].tolist() == [codes.SOLVED, 7, 7]
    assert text(outs[1][0]) == SEED000_SOLUTION and (outs[1][1:] == 7).all()
    assert all(out[1:].tolist() == [7, 7] for out in outs[2:])


def test_reference_strategies_agree_on_magictour():
    grids = load("puzzles3_magictour_top1465.txt", 20)
    b, m = (solve_grids(grids, strategy=s) for s in REFERENCE)
    assert (b.verdicts == codes.SOLVED).all() and (m.verdicts == codes.SOLVED).all()
    assert (b.solutions == m.solutions).all()
    assert verify_solutions(grids, m.solutions).all()


def test_backtrack_finishes_17_clue_puzzles_within_budget():
    grids = load("puzzles2_17_clue.txt", 8)
    r = solve_grids(grids, strategy="backtrack", max_nodes=200_000)
    assert np.isin(r.verdicts, [codes.SOLVED, codes.LIMIT]).all()
    assert (r.nodes <= 200_000).all()
    solved = r.verdicts == codes.SOLVED
    assert verify_solutions(grids[solved], r.solutions[solved]).all()


def test_verify_solutions_rejects_broken_solutions():
    puzzle, solution = grid(*SEED000), grid(*SEED000_SOLUTION)
    wrong_digit, blank = solution.copy(), solution.copy()
    wrong_digit[2] = 9 if solution[2] != 9 else 1
    blank[2] = 0
    changed_given = (10 - solution).astype(np.uint8)  # relabelled: a valid grid, other givens
    sols = np.stack([solution, wrong_digit, blank, changed_given])
    assert verify_solutions(np.stack([puzzle] * 4), sols).tolist() == [True, False, False, False]
    assert verify_solutions(np.zeros((1, 81), np.uint8), changed_given[None]).tolist() == [True]


@st.composite
def full_grids(draw: st.DrawFn) -> np.ndarray:
    """A valid full grid: seed 000's solution with digits, bands, rows, stacks, columns shuffled."""
    base = grid(*SEED000_SOLUTION).reshape(9, 9)
    digits = np.array([0, *draw(st.permutations(range(1, 10)))], dtype=np.uint8)

    def lines() -> list[int]:
        return [3 * b + i for b in draw(st.permutations(range(3)))
                for i in draw(st.permutations(range(3)))]  # fmt: skip

    g = digits[base][lines()][:, lines()]
    return (g.T if draw(st.booleans()) else g).reshape(81).copy()


@pytest.mark.parametrize("strategy", REFERENCE)
@settings(max_examples=100, deadline=None)
@given(full=full_grids(), blanks=st.permutations(range(81)), count=st.integers(0, 58))
def test_random_puzzles_match_the_reference_counter(strategy, full, blanks, count):
    puzzle = full.copy()
    puzzle[list(blanks[:count])] = 0
    r = solve(strategy, puzzle, solutions=2)
    expected = {1: codes.SOLVED, 2: codes.MULTIPLE}[reference_count(puzzle)]
    event(codes.VERDICT_NAMES[expected])
    assert r.verdicts[0] == expected
    assert verify_solutions(puzzle[None], r.solutions).all()
    assert r.nodes[0] >= 1 and 0 <= r.guesses[0] <= r.nodes[0] - 1
    if expected == codes.SOLVED:
        assert (r.solutions[0] == full).all()
    one = solve(strategy, puzzle, solutions=1)
    assert one.verdicts[0] == codes.FOUND and (one.solutions == r.solutions).all()
    assert one.nodes[0] <= r.nodes[0]
