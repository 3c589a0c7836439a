"""The `fast` strategy: constraint propagation on a band-wise bitboard, then binary branching on
a digit's configuration in a band or stack, as tdoku branches; puzzles that propagation leaves
nearly solved are searched light instead (`fast_light`: lighter rules, branching on a bivalue
cell). (The layout follows the scalar bitboard solvers JCZSolve and fsss2; the reasoning on
triads and the branching follow tdoku; the light search follows JCZSolve and fastdoku's hybrid;
the code is our own.)

The board: one row of `boards`, 43 int64 slots (a *band* is three whole rows, so bit `p` of a
band's 27-bit mask is cell `27 * band + p`, row `p // 9` of the band, column `p % 9`):

  slots    name                what each slot holds
  0..26    9 * band + digit    the band's cells where digit `digit + 1` may still stand (27 bits)
  27..29   UNSOLVED + band     the band's cells not placed yet (27 bits)
  30..38   FIELD + digit       the digit's triad patterns (54 bits; kept current by propagation,
                               the branch is chosen on them; not kept by the light search):
                                 bit 9 * band + 3 * row + box (0..26): the digit may still stand
                                 in that row of the band within that box (a row-box triad);
                                 bit 27 + 9 * stack + 3 * band + column (27..53): the same for a
                                 (band, column) triad of the stack
  39..42   BOARD_SLOTS + k     the other way of the branch taken at this depth, tried when the
                               search backs up: the digit, then three band masks (27 bits each)
                               its cells must stay within

`boards` has `MAX_DEPTH + 1` rows: the root and one row per branch point below it. Scratch
beside it: `fields` (9 int64, the triad patterns while rule 4 works on them) and `choice`
(`CHOICE` = 7 int64: the branch chosen at a fixed point, the digit, the three band masks of
the way taken first, the three of the other way).

Propagation (`fast_propagate.propagate`): band updates, naked singles, the column view, and at
each fixed point the triads rule across digits, which also picks the branch. The search calls
it, and the light one, at their addresses (`entries`, from `fast_entries.search_entries`;
`fast_calls.py` says why: each kernel compiles in about half the time). A root left stuck
with at most `fast_light.LIGHT_OPEN` (47) open cells has the search below it light
(`fast_light.light_propagate`), which picks a bivalue cell instead: its first candidate there,
or not. Counting beyond 2, once a solution is found, a board stuck in the full search with at
most as many open cells goes light the same way, for the branches below it (`_switch`).

Branching: a digit's triads in a band (or stack) form one of six configurations; the search tries
the digit's first remaining configuration there, then (after backing up) all the others at once,
on a copy of the board kept on an explicit stack (light: a digit in a cell, then the cell
without it). Counting follows `pipeline.kernels`'s contract with a branch as the choice: the
root is one node; each of the two branches taken at a branch point is one node and one guess
(the choice is between at least two ways, like a cell with two or more candidates), so
`guesses == nodes - 1` and `branch_points` (for comparisons with tdoku, which counts a guess per
branch point) is about half of it.

Givens that clash (two equal digits in a row, column or box) and values above 9 are found while
loading the givens (`fast_load._load_givens`, a few bit operations per digit): verdict
`INVALID`, nodes 0, guesses 0, no solution. Pencilmark puzzles load through
`fast_load._load_candidates`; counting beyond 2 counts deadly rectangles at once
(`fast_count.py`); `enumeration.py` runs the same search resumably, a chunk at a time.
Ideas measured here and not kept are listed in docs/BENCHMARKS.md
("Ideas measured").
"""

import numpy as np

from pipeline.compiled import kernel, kernel_part
from pipeline.kernels.bits import now_ns, unowned, write_digits
from pipeline.kernels.codes import INVALID, LIMIT, MULTIPLE, SOLVED, UNSOLVABLE
from pipeline.kernels.fast_board import CHOICE, FIELD
from pipeline.kernels.fast_calls import call_propagate
from pipeline.kernels.fast_count import count_rectangle
from pipeline.kernels.fast_light import LIGHT_OPEN, choose_light, open_cells, search_light, step
from pipeline.kernels.fast_load import _load_candidates, _load_givens
from pipeline.kernels.fast_propagate import BOARD_SLOTS, COMPLETE, STUCK

# boards below the root: each branch's first way fixes one of 54 (digit, band)s, or (light
# search) places a digit in one of at most 47 open cells
MAX_DEPTH = 64
SWITCH_OPEN = LIGHT_OPEN  # see `_switch`
NEVER = MAX_DEPTH + 1  # `light_depth` of a search that is not light


@kernel_part
def _switch(max_solutions: int) -> int:
    """Open cells at or below which a board stuck in the full search, once a solution is found,
    goes light for the branches below it (0: never).

    Counting beyond 2 only: counting 17-clue puzzles with two clues removed (10,000 solutions
    each) 1.26x as fast at 20 open cells, 1.44x at 30, 1.51-1.54x at 40-64, same nodes or
    fewer; proving a first solution unique (to 2) the hard sets lose (0.83-0.88x at 47, within
    5% either way at 15-35). After the first solution only, so that it stays the one the search
    to 2 finds."""
    return SWITCH_OPEN if max_solutions > 2 else 0


@kernel_part
def _restrict(board: np.ndarray, digit: int, m0: int, m1: int, m2: int) -> int:
    """Keep digit's cells within the three band masks; returns the slots changed."""
    dirty = 0
    for band, mask in ((0, m0), (1, m1), (2, m2)):
        slot = 9 * band + digit
        cells = board[slot] & mask
        if cells != board[slot]:
            board[slot] = cells
            dirty |= 1 << slot
    return dirty


@kernel_part
def _write_solution(board: np.ndarray, out: np.ndarray) -> None:
    write_digits(board, out)


@kernel_part
def _solve_one(
    givens: np.ndarray,
    candidates: np.ndarray,
    from_candidates: int,
    max_solutions: int,
    max_nodes: int,
    switch_open: int,
    boards: np.ndarray,
    fields: np.ndarray,
    choice: np.ndarray,
    solution: np.ndarray,
    second: np.ndarray,
    placed: np.ndarray,
    entries: np.ndarray,
) -> tuple[int, int, int, int, int]:
    """Search one puzzle; returns (verdict, nodes, guesses, branch points, solutions found:
    up to `max_solutions`), fills `solution` with the first solution found and `second` with
    the second one, when found.

    `boards[depth]` is the board at each depth, followed by the other way of the branch taken
    there (digit and three band masks), still to try. Branching copies the board one level
    down and narrows the copy; backing up narrows the board left above with the other way:
    one copy per branch point. The puzzle is `givens`, or `candidates` when `from_candidates`
    (`placed`: scratch for them). `switch_open`: see `_switch`.

    Counting beyond 2, once two solutions are written, a board stuck on a deadly rectangle
    has its two solutions counted at once (`fast_count.count_rectangle`) and the search backs
    up: those solutions are found, not visited (no nodes)."""
    board = boards[0]
    if from_candidates:
        loaded = _load_candidates(candidates, board, boards[1], placed)
    else:
        loaded = _load_givens(givens, board, boards[1])
    if not loaded:
        return INVALID, 0, 0, 0, 0
    # Every (digit, band) dirty, as an int64 variable: a literal here would have numba compile
    # `propagate` and `_update_bands` a second time for it (0.6 s more on the first run).
    state = call_propagate(entries[0], board, np.int64((1 << 27) - 1), fields, choice)
    # the search is light at depths from `light_depth` on (the root's, or where it switched)
    light_depth = 0 if search_light(board, state, choice) else NEVER
    nodes = 1
    guesses = 0
    branches = 0
    found = 0
    depth = 0
    verdict = UNSOLVABLE
    while True:
        back_up = True
        if state == COMPLETE:
            found += 1
            if found == 1:
                _write_solution(board, solution)
            elif found == 2:
                _write_solution(board, second)
            if found >= max_solutions:
                break
        elif state == STUCK:
            counted = count_rectangle(board) if found >= 2 and max_solutions > 2 else -1
            if counted >= 0:
                found = min(found + counted, max_solutions)
                if found >= max_solutions:
                    break
            else:
                if max_nodes > 0 and nodes >= max_nodes:
                    verdict = LIMIT
                    break
                if found and depth < light_depth and switch_open > 0:
                    still_open = open_cells(board)
                    if still_open <= switch_open and depth + still_open <= MAX_DEPTH:
                        if choose_light(board, choice):
                            light_depth = depth
                board[BOARD_SLOTS] = choice[0]  # the other way, for when we back up
                for k in range(1, 4):
                    board[BOARD_SLOTS + k] = choice[3 + k]
                # a light search keeps no triad patterns (FIELD slots): not copied
                slots = FIELD if depth >= light_depth else BOARD_SLOTS
                depth += 1
                child = boards[depth]
                for k in range(slots):
                    child[k] = board[k]
                board = child
                branches += 1
                nodes += 1
                guesses += 1
                dirty = _restrict(board, choice[0], choice[1], choice[2], choice[3])
                back_up = False
        if back_up:
            if depth == 0:
                break
            if max_nodes > 0 and nodes >= max_nodes:
                verdict = LIMIT
                break
            depth -= 1
            if depth < light_depth:
                light_depth = NEVER
            board = boards[depth]
            nodes += 1
            guesses += 1
            dirty = _restrict(board, board[BOARD_SLOTS], board[BOARD_SLOTS + 1],
                              board[BOARD_SLOTS + 2], board[BOARD_SLOTS + 3])  # fmt: skip
        # One call site below the root: `step` is inlined here once.
        state = step(board, dirty, depth >= light_depth, fields, choice, entries)
    if verdict != LIMIT:
        verdict = UNSOLVABLE if found == 0 else SOLVED if found == 1 else MULTIPLE
    if found < 2:  # zeros where no solution was found, whatever the caller left there
        for k in range(81):
            second[k] = 0
            if found == 0:
                solution[k] = 0
    return verdict, nodes, guesses, branches, found


@kernel
def solve_kernel(
    grids: np.ndarray,
    skip: np.ndarray,
    entries: np.ndarray,
    max_solutions: int,
    max_nodes: int,
    verdicts: np.ndarray,
    solutions: np.ndarray,
    nodes: np.ndarray,
    guesses: np.ndarray,
    solve_ns: np.ndarray,
    counts: np.ndarray,
) -> None:
    """Solve every row of `grids` not marked in `skip` (see `pipeline.kernels` for the contract;
    this kernel also answers `INVALID` for clashing givens and values above 9 by itself)."""
    seconds = np.zeros((1, 81), dtype=np.uint8)  # scratch: the second solution is dropped
    branches = np.zeros(1, dtype=np.int64)  # scratch: branch points are dropped
    results = (verdicts, solutions, nodes, guesses, solve_ns, counts)
    puzzles = (grids, np.zeros((1, 81), dtype=np.uint16), 0)
    switch = _switch(max_solutions)
    _solve_all(
        puzzles, skip, max_solutions, max_nodes, switch, results, seconds, 0, branches, 0, entries
    )


@kernel
def solve_candidates_kernel(
    candidates: np.ndarray,
    skip: np.ndarray,
    entries: np.ndarray,
    max_solutions: int,
    max_nodes: int,
    verdicts: np.ndarray,
    solutions: np.ndarray,
    nodes: np.ndarray,
    guesses: np.ndarray,
    solve_ns: np.ndarray,
    counts: np.ndarray,
) -> None:
    """`solve_kernel` for pencilmark puzzles: `(n, 81) uint16` candidates (bit d-1: digit d
    allowed) in place of the grids (see `_load_candidates`)."""
    seconds = np.zeros((1, 81), dtype=np.uint8)
    branches = np.zeros(1, dtype=np.int64)
    results = (verdicts, solutions, nodes, guesses, solve_ns, counts)
    puzzles = (np.zeros((1, 81), dtype=np.uint8), candidates, 1)
    switch = _switch(max_solutions)
    _solve_all(
        puzzles, skip, max_solutions, max_nodes, switch, results, seconds, 0, branches, 0, entries
    )


@kernel
def two_solutions_kernel(
    grids: np.ndarray,
    skip: np.ndarray,
    entries: np.ndarray,
    max_nodes: int,
    verdicts: np.ndarray,
    solutions: np.ndarray,
    seconds: np.ndarray,
    nodes: np.ndarray,
    guesses: np.ndarray,
    solve_ns: np.ndarray,
    counts: np.ndarray,
) -> None:
    """Like `solve_kernel` with `max_solutions=2`, and keeps the second solution in `seconds`
    for puzzles with several (the evidence that validation shows)."""
    branches = np.zeros(1, dtype=np.int64)  # scratch: branch points are dropped
    results = (verdicts, solutions, nodes, guesses, solve_ns, counts)
    puzzles = (grids, np.zeros((1, 81), dtype=np.uint16), 0)
    _solve_all(puzzles, skip, 2, max_nodes, _switch(2), results, seconds, 1, branches, 0, entries)


@kernel
def two_solutions_candidates_kernel(
    candidates: np.ndarray,
    skip: np.ndarray,
    entries: np.ndarray,
    max_nodes: int,
    verdicts: np.ndarray,
    solutions: np.ndarray,
    seconds: np.ndarray,
    nodes: np.ndarray,
    guesses: np.ndarray,
    solve_ns: np.ndarray,
    counts: np.ndarray,
) -> None:
    """`two_solutions_kernel` for pencilmark puzzles (`(n, 81) uint16` candidates)."""
    branches = np.zeros(1, dtype=np.int64)
    results = (verdicts, solutions, nodes, guesses, solve_ns, counts)
    puzzles = (np.zeros((1, 81), dtype=np.uint8), candidates, 1)
    _solve_all(puzzles, skip, 2, max_nodes, _switch(2), results, seconds, 1, branches, 0, entries)


@kernel_part
def _solve_all(
    puzzles: tuple[np.ndarray, np.ndarray, int],
    skip: np.ndarray,
    max_solutions: int,
    max_nodes: int,
    switch_open: int,
    results: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    seconds: np.ndarray,
    keep_seconds: int,
    branches: np.ndarray,
    keep_branches: int,
    entries: np.ndarray,
) -> None:
    """The search over a batch: `puzzles` are (grids, candidates, from_candidates), the
    puzzles being the candidates when `from_candidates` is 1 (the other array: one row of
    scratch); `results` are the contract's outputs (verdicts, solutions, nodes, guesses,
    solve_ns, counts), one tuple for every kernel; `seconds` and `branches` are written at
    row `i * keep_seconds` and `i * keep_branches` (0: one scratch row)."""
    verdicts, solutions, nodes, guesses, solve_ns, counts = results
    grids_owner, candidates_owner, from_candidates = puzzles
    # Every array the search touches is `unowned` (see bits.py): no atomic reference counts
    # per call or per view. The owners below stay alive until the loop is over.
    boards_owner = np.zeros((MAX_DEPTH + 1, BOARD_SLOTS + 4), dtype=np.int64)
    fields_owner = np.zeros(9, dtype=np.int64)
    choice_owner = np.zeros(CHOICE, dtype=np.int64)
    boards = unowned(boards_owner)
    fields = unowned(fields_owner)
    choice = unowned(choice_owner)
    grids = unowned(grids_owner)
    candidates = unowned(candidates_owner)
    placed_owner = np.zeros(81, dtype=np.uint8)
    placed = unowned(placed_owner)
    grid_row = 1 - from_candidates  # the row of the array not searched stays 0
    firsts = unowned(solutions)
    others = unowned(seconds)
    clock_owner = np.zeros(2, dtype=np.int64)
    clock = unowned(clock_owner)
    # One clock read a puzzle: a puzzle's time runs from the previous read (21 ns a read, 2.7%
    # of a 0.8 us Kaggle row; two reads were 5.5%). Skipped rows between cost nothing to speak of.
    start = now_ns(clock)
    for i in range(skip.shape[0]):
        if skip[i]:
            continue
        second = others[i * keep_seconds]
        verdict, n, g, b, found = _solve_one(
            grids[i * grid_row], candidates[i * from_candidates], from_candidates,
            max_solutions, max_nodes, switch_open, boards, fields, choice, firsts[i], second,
            placed, entries,
        )  # fmt: skip
        end = now_ns(clock)
        solve_ns[i] = end - start
        start = end
        if verdict == INVALID:
            solve_ns[i] = 0  # no search ran
            for k in range(81):
                firsts[i, k] = 0
                second[k] = 0
        verdicts[i] = verdict
        nodes[i] = n
        guesses[i] = g
        counts[i] = found
        branches[i * keep_branches] = b
    # Do not remove: the `unowned` views above do not keep their buffers alive, and without a
    # use of each owner here numba may free them while the loop still reads through the views.
    boards_owner[0, 0] = fields_owner[0] + choice_owner[0] + clock_owner[0] + placed_owner[0]


@kernel
def _branch_points_kernel(
    grids: np.ndarray, entries: np.ndarray, max_solutions: int, branches: np.ndarray
) -> None:
    n = grids.shape[0]
    skip = np.zeros(n, dtype=np.bool_)
    verdicts = np.zeros(n, dtype=np.int8)
    solutions = np.zeros((n, 81), dtype=np.uint8)
    seconds = np.zeros((1, 81), dtype=np.uint8)
    counts = np.zeros(n, dtype=np.int64)
    results = (verdicts, solutions, counts, counts, counts, counts)
    puzzles = (grids, np.zeros((1, 81), dtype=np.uint16), 0)
    _solve_all(
        puzzles, skip, max_solutions, 0, _switch(max_solutions), results, seconds, 0, branches,
        1, entries,
    )  # fmt: skip


def branch_points(grids: np.ndarray, max_solutions: int = 2) -> np.ndarray:
    """`(n,) int64`: the branch points of each puzzle's search (tdoku counts a guess per branch
    point; our `guesses` count both ways taken at each). For benchmarks."""
    grids = np.ascontiguousarray(grids, dtype=np.uint8).reshape(-1, 81)
    out = np.zeros(grids.shape[0], dtype=np.int64)
    from pipeline.kernels.fast_entries import search_entries

    _branch_points_kernel(grids, search_entries(), max_solutions, out)
    return out
