"""The `fast` strategy: constraint propagation on a band-wise bitboard, then binary branching on
a digit's configuration in a band or stack, as tdoku branches.

The board is held as 27 integers, one per (digit, band): bit `9 * r + c` of `board[3 * d + b]`
says that digit `d + 1` may still stand in row `3 * b + r`, column `c`. Because a band is three
whole rows, bit position `p` of band `b` is simply cell `27 * b + p`. Three more integers hold the
unsolved cells of each band. (The layout follows the scalar bitboard solvers JCZSolve and fsss2;
the reasoning on triads and the branching follow tdoku; the code is our own.)

Propagation (`fast_propagate.propagate`): band updates, naked singles, the column view, and at
each fixed point the triads rule across digits, which also picks the branch.

Branching: a digit's triads in a band (or stack) form one of six configurations; the search tries
the digit's first remaining configuration there, then (after backing up) all the others at once,
on a copy of the board kept on an explicit stack. Counting follows `pipeline.solver`'s contract
with a branch as the choice: the root is one node; each of the two branches taken at a branch
point is one node and one guess (the choice is between at least two ways, like a cell with two or
more candidates), so `guesses == nodes - 1` and `branch_points` (for comparisons with tdoku, which
counts a guess per branch point) is about half of it.

Givens that clash (two equal digits in a row, column or box) leave the root without a solution;
only then does the kernel look at the givens (`_givens_clash`) and answer `INVALID` instead of
`UNSOLVABLE`, with nodes 0, guesses 0 and no solution: valid puzzles pay nothing for the check.
A value above 9 is `INVALID` too (found while loading).

What did not pay (measured on this machine, one core, `benchmarks.versus_tdoku` sets):

* tdoku's branching without the triads rule: the median tree is the same as with the earlier
  bivalue-cell branching but the tail explodes (16 of the 375 forum_hardest_1106 puzzles past
  20,000 nodes); it needs the triads rule, then it beats every cell rule we tried.
* Branching on a bivalue cell with the most unsolved peers (the rule before this one): 93 branch
  points a puzzle on forum_hardest_1905_11+ against 67 now (tdoku: 65).
"""

import numpy as np
from numba import njit

from pipeline.solver.bits import lowest_bit_index, now_ns
from pipeline.solver.codes import INVALID, LIMIT, MULTIPLE, SOLVED, UNSOLVABLE
from pipeline.solver.fast_propagate import (
    COMPLETE,
    STUCK,
    UNSOLVED,
    propagate,
)
from pipeline.solver.fast_tables import ALL_CELLS, ROW_MASK

BOARD_SLOTS = 30
MAX_DEPTH = 64  # frames: each holds a branch whose first way fixed one of 54 (digit, band)s
CHOICE = 7  # digit, three band masks of the first way, three of the other


@njit(nogil=True, cache=True)
def _restrict(board: np.ndarray, digit: int, m0: int, m1: int, m2: int) -> int:
    """Keep digit's cells within the three band masks; returns the slots changed."""
    dirty = 0
    slot = 3 * digit
    for band, mask in ((0, m0), (1, m1), (2, m2)):
        cells = board[slot + band] & mask
        if cells != board[slot + band]:
            board[slot + band] = cells
            dirty |= 1 << (slot + band)
    return dirty


@njit(nogil=True, cache=True)
def _write_solution(board: np.ndarray, out: np.ndarray) -> None:
    for slot in range(27):
        cells = board[slot]
        digit = slot // 3 + 1
        base = 27 * (slot % 3)
        while cells:
            out[base + lowest_bit_index(cells)] = digit
            cells &= cells - 1


@njit(nogil=True, cache=True)
def _load_givens(givens: np.ndarray, board: np.ndarray) -> bool:
    """The board of a puzzle: each given fills its cell (the cell leaves the other digits) and
    is its digit's only place in its row; every other cell holds every digit. The band
    updates of the first propagation take it from there. False for a value above 9."""
    for slot in range(27):
        board[slot] = 0
    for band in range(3):
        taken = 0
        base = 27 * band
        for position in range(27):
            digit = givens[base + position]
            if digit:
                if digit > 9:
                    return False
                bit = 1 << position
                board[3 * (digit - 1) + band] |= bit
                taken |= bit
        board[UNSOLVED + band] = ALL_CELLS
        free = ALL_CELLS & ~taken
        for digit in range(9):
            slot = 3 * digit + band
            placed = board[slot]
            cells = free | placed
            for row in (ROW_MASK, ROW_MASK << 9, ROW_MASK << 18):
                if placed & row:
                    cells &= ~row | placed
            board[slot] = cells
    return True


@njit(nogil=True, cache=True)
def _givens_clash(givens: np.ndarray) -> bool:
    """Two equal givens in a row, column or box (only asked when the search found nothing)."""
    seen = np.zeros(27, dtype=np.int64)  # digits seen per unit: rows, columns, boxes
    for cell in range(81):
        digit = givens[cell]
        if digit == 0:
            continue
        bit = 1 << (digit - 1)
        r = cell // 9
        c = cell % 9
        b = 18 + (r // 3) * 3 + c // 3
        if (seen[r] | seen[9 + c] | seen[b]) & bit:
            return True
        seen[r] |= bit
        seen[9 + c] |= bit
        seen[b] |= bit
    return False


@njit(nogil=True, cache=True)
def _solve_one(
    givens: np.ndarray,
    max_solutions: int,
    max_nodes: int,
    board: np.ndarray,
    frames: np.ndarray,
    fields: np.ndarray,
    choice: np.ndarray,
    solution: np.ndarray,
    second: np.ndarray,
) -> tuple[int, int, int, int]:
    """Search one puzzle; returns (verdict, nodes, guesses, branch points), fills `solution`
    with the first solution found and `second` with the second one, when found."""
    if not _load_givens(givens, board):
        return INVALID, 0, 0, 0
    state = propagate(board, (1 << 27) - 1, fields, choice)
    nodes = 1
    guesses = 0
    branches = 0
    found = 0
    depth = 0
    verdict = UNSOLVABLE
    while True:
        if state == COMPLETE:
            found += 1
            if found == 1:
                _write_solution(board, solution)
            elif found == 2:
                _write_solution(board, second)
            if found >= max_solutions:
                break
        elif state == STUCK:
            if max_nodes > 0 and nodes >= max_nodes:
                verdict = LIMIT
                break
            frame = frames[depth]
            frame[:BOARD_SLOTS] = board
            frame[BOARD_SLOTS] = choice[0]
            frame[BOARD_SLOTS + 1] = choice[4]
            frame[BOARD_SLOTS + 2] = choice[5]
            frame[BOARD_SLOTS + 3] = choice[6]
            depth += 1
            branches += 1
            nodes += 1
            guesses += 1
            dirty = _restrict(board, choice[0], choice[1], choice[2], choice[3])
            state = propagate(board, dirty, fields, choice)
            continue
        if depth == 0:
            break
        if max_nodes > 0 and nodes >= max_nodes:
            verdict = LIMIT
            break
        depth -= 1
        frame = frames[depth]
        board[:] = frame[:BOARD_SLOTS]
        nodes += 1
        guesses += 1
        dirty = _restrict(board, frame[BOARD_SLOTS], frame[BOARD_SLOTS + 1],
                          frame[BOARD_SLOTS + 2], frame[BOARD_SLOTS + 3])  # fmt: skip
        state = propagate(board, dirty, fields, choice)
    if verdict != LIMIT:
        verdict = UNSOLVABLE if found == 0 else SOLVED if found == 1 else MULTIPLE
    if verdict != SOLVED and verdict != MULTIPLE and found == 0 and _givens_clash(givens):
        return INVALID, 0, 0, 0
    return verdict, nodes, guesses, branches


@njit(nogil=True, cache=True)
def solve_kernel(
    grids: np.ndarray,
    skip: np.ndarray,
    max_solutions: int,
    max_nodes: int,
    verdicts: np.ndarray,
    solutions: np.ndarray,
    nodes: np.ndarray,
    guesses: np.ndarray,
    solve_ns: np.ndarray,
) -> None:
    """Solve every row of `grids` not marked in `skip` (see `pipeline.solver` for the contract;
    this kernel also answers `INVALID` for clashing givens and values above 9 by itself)."""
    seconds = np.zeros((1, 81), dtype=np.uint8)  # scratch: the second solution is dropped
    branches = np.zeros(1, dtype=np.int64)  # scratch: branch points are dropped
    _solve_all(grids, skip, max_solutions, max_nodes, verdicts, solutions, seconds, 0, nodes,
               guesses, solve_ns, branches, 0)  # fmt: skip


@njit(nogil=True, cache=True)
def two_solutions_kernel(
    grids: np.ndarray,
    skip: np.ndarray,
    max_nodes: int,
    verdicts: np.ndarray,
    solutions: np.ndarray,
    seconds: np.ndarray,
    nodes: np.ndarray,
    guesses: np.ndarray,
    solve_ns: np.ndarray,
) -> None:
    """Like `solve_kernel` with `max_solutions=2`, and keeps the second solution in `seconds`
    for puzzles with several (the evidence that validation shows)."""
    branches = np.zeros(1, dtype=np.int64)  # scratch: branch points are dropped
    _solve_all(grids, skip, 2, max_nodes, verdicts, solutions, seconds, 1, nodes, guesses,
               solve_ns, branches, 0)  # fmt: skip


@njit(nogil=True, cache=True)
def _solve_all(
    grids: np.ndarray,
    skip: np.ndarray,
    max_solutions: int,
    max_nodes: int,
    verdicts: np.ndarray,
    solutions: np.ndarray,
    seconds: np.ndarray,
    keep_seconds: int,
    nodes: np.ndarray,
    guesses: np.ndarray,
    solve_ns: np.ndarray,
    branches: np.ndarray,
    keep_branches: int,
) -> None:
    board = np.zeros(BOARD_SLOTS, dtype=np.int64)
    frames = np.zeros((MAX_DEPTH, BOARD_SLOTS + 4), dtype=np.int64)
    fields = np.zeros(9, dtype=np.int64)
    choice = np.zeros(CHOICE, dtype=np.int64)
    clock = np.zeros(2, dtype=np.int64)
    for i in range(grids.shape[0]):
        if skip[i]:
            continue
        second = seconds[i * keep_seconds]
        start = now_ns(clock)
        verdict, n, g, b = _solve_one(grids[i], max_solutions, max_nodes, board, frames, fields,
                                      choice, solutions[i], second)  # fmt: skip
        solve_ns[i] = now_ns(clock) - start
        if verdict == INVALID:
            solutions[i, :] = 0
            second[:] = 0
        verdicts[i] = verdict
        nodes[i] = n
        guesses[i] = g
        branches[i * keep_branches] = b


@njit(nogil=True, cache=True)
def _branch_points_kernel(grids: np.ndarray, max_solutions: int, branches: np.ndarray) -> None:
    n = grids.shape[0]
    skip = np.zeros(n, dtype=np.bool_)
    verdicts = np.zeros(n, dtype=np.int8)
    solutions = np.zeros((n, 81), dtype=np.uint8)
    seconds = np.zeros((1, 81), dtype=np.uint8)
    counts = np.zeros(n, dtype=np.int64)
    _solve_all(grids, skip, max_solutions, 0, verdicts, solutions, seconds, 0, counts, counts,
               counts, branches, 1)  # fmt: skip


def branch_points(grids: np.ndarray, max_solutions: int = 2) -> np.ndarray:
    """`(n,) int64`: the branch points of each puzzle's search (tdoku counts a guess per branch
    point; our `guesses` count both ways taken at each). For benchmarks."""
    grids = np.ascontiguousarray(grids, dtype=np.uint8).reshape(-1, 81)
    out = np.zeros(grids.shape[0], dtype=np.int64)
    _branch_points_kernel(grids, max_solutions, out)
    return out
