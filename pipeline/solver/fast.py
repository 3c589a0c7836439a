"""The `fast` strategy: constraint propagation on a band-wise bitboard, then bivalue branching.

The board is held as 27 integers, one per (digit, band): bit `9 * r + c` of `candidates[3 * d + b]`
says that digit `d + 1` may still stand in row `3 * b + r`, column `c`. Because a band is three
whole rows, bit position `p` of band `b` is simply cell `27 * b + p`. Three more integers hold the
unsolved cells of each band. (The layout follows the scalar bitboard solvers JCZSolve and fsss2;
the code is our own.)

Propagation, repeated until nothing changes:

* **Band update** of one (digit, band): the digit stands once in each of the band's three rows and
  once in each of its three boxes, so its row-box *triads* (three cells where a row meets a box)
  must form a permutation. Triads that take part in no permutation are removed (this is locked
  candidates, pointing and claiming, along rows). A row left with one cell places the digit there
  (hidden single in a row; a box left with one cell ends up the same way): the cell leaves the
  other digits, and its column leaves the digit's other two bands.
* **Naked singles**: unsolved cells with one candidate left.
* **Column view** of the digits whose masks changed: along each stack, the (band, column)
  triads must form a permutation too (locked candidates along columns), and a digit with one
  cell left in a column is placed there.

When propagation is stuck, the search branches on a cell with two candidates, the one with the
most unsolved peers (a cell with the fewest candidates when none has two), trying each
candidate in ascending order on a copy of the board kept on an explicit stack. Counting follows
`pipeline.solver`'s definition: the root is one node; each candidate tried at a branching cell
is one node and one guess.
"""

import numpy as np
from numba import njit

from pipeline.solver.bits import lowest_bit_index, now_ns, popcount
from pipeline.solver.codes import LIMIT, MULTIPLE, SOLVED, UNSOLVABLE

ALL_CELLS = 0x7FFFFFF  # 27 bits: the cells of one band
ROW_MASK = 0x1FF  # one row of a band
COLUMNS_TO_BAND = 0x40201  # multiply a 9-bit column set to cover the band's three rows
UNSOLVED = 27  # slots 27..29 of the board hold each band's unsolved cells
BOARD_SLOTS = 30
MAX_DEPTH = 82  # one frame per branching cell at most


def _tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lookup tables for the band update (built once at import, frozen into the kernels)."""
    row_triads = np.zeros(512, dtype=np.int64)  # 9-bit row -> 3-bit set of boxes it touches
    for row in range(512):
        row_triads[row] = sum(1 << box for box in range(3) if (row >> (3 * box)) & 7)
    perms = [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]
    triads_kept = np.zeros(512, dtype=np.int64)  # triad pattern -> triads in some permutation
    for pattern in range(512):
        kept = 0
        for perm in perms:
            bits = [1 << (3 * r + perm[r]) for r in range(3)]
            if all(pattern & bit for bit in bits):
                kept |= sum(bits)
        triads_kept[pattern] = kept
    triad_cells = np.zeros(512, dtype=np.int64)  # set of triads -> 27-bit set of their cells
    for triads in range(512):
        triad_cells[triads] = sum(
            7 << (9 * (t // 3) + 3 * (t % 3)) for t in range(9) if triads >> t & 1
        )
    return row_triads, triads_kept, triad_cells


def _peer_tables() -> tuple[np.ndarray, np.ndarray]:
    """For each position of a band: its row and box cells in the band, and its column."""
    peers = np.zeros(27, dtype=np.int64)
    column = np.zeros(27, dtype=np.int64)
    for p in range(27):
        r, c = divmod(p, 9)
        for q in range(27):
            if q // 9 == r or (q % 9) // 3 == c // 3:
                peers[p] |= 1 << q
        column[p] = (1 << c) * COLUMNS_TO_BAND
    return peers, column


ROW_TRIADS, TRIADS_KEPT, TRIAD_CELLS = _tables()
PEER_CELLS, COLUMN_CELLS = _peer_tables()


@njit(nogil=True, cache=True)
def _row_of(bit: int) -> int:
    """The 27-bit mask of the band row holding `bit`."""
    if bit & ROW_MASK:
        return ROW_MASK
    if bit & (ROW_MASK << 9):
        return ROW_MASK << 9
    return ROW_MASK << 18


@njit(nogil=True, cache=True)
def _place(board: np.ndarray, digit: int, band: int, bit: int) -> int:
    """Place `digit` (0-based) at `bit` of `band`; returns the (digit, band) slots to update."""
    slot = 3 * digit + band
    board[slot] &= ~_row_of(bit) | bit
    dirty = 1 << slot
    for other in range(9):
        if other != digit:
            s = 3 * other + band
            if board[s] & bit:
                board[s] &= ~bit
                dirty |= 1 << s
    return dirty


@njit(nogil=True, cache=True)
def _update_bands(board: np.ndarray, dirty: int) -> int:
    """Band updates until no (digit, band) is dirty; returns the slots updated, -1 on a
    contradiction."""
    updated = 0
    while dirty:
        slot = lowest_bit_index(dirty)
        dirty &= dirty - 1
        updated |= 1 << slot
        cells = board[slot]
        kept = TRIADS_KEPT[_triad_pattern(cells)]
        if kept == 0:
            return -1
        cells &= TRIAD_CELLS[kept]
        board[slot] = cells
        singles = 0
        row = cells & ROW_MASK
        if row & (row - 1) == 0:
            singles |= row
        row = cells & (ROW_MASK << 9)
        if row & (row - 1) == 0:
            singles |= row
        row = cells & (ROW_MASK << 18)
        if row & (row - 1) == 0:
            singles |= row
        band = slot % 3
        placed = singles & board[UNSOLVED + band]
        if placed == 0:
            continue
        board[UNSOLVED + band] &= ~placed
        digit = slot // 3
        for other in range(9):
            if other != digit:
                s = 3 * other + band
                if board[s] & placed:
                    board[s] &= ~placed
                    dirty |= 1 << s
        columns = (placed | (placed >> 9) | (placed >> 18)) & ROW_MASK
        column_cells = columns * COLUMNS_TO_BAND
        for other_band in range(3):
            if other_band != band:
                s = 3 * digit + other_band
                if board[s] & column_cells:
                    board[s] &= ~column_cells
                    dirty |= 1 << s
    return updated


@njit(nogil=True, cache=True)
def _naked_singles(board: np.ndarray) -> int:
    """Place every naked single; returns dirty slots, -1 on a cell without candidates."""
    dirty = 0
    for band in range(3):
        unsolved = board[UNSOLVED + band]
        if unsolved == 0:
            continue
        once = 0
        twice = 0
        for digit in range(9):
            cells = board[3 * digit + band]
            twice |= once & cells
            once |= cells
        if unsolved & ~once:
            return -1
        singles = unsolved & once & ~twice
        while singles:
            bit = singles & -singles
            singles ^= bit
            for digit in range(9):
                slot = 3 * digit + band
                if board[slot] & bit:
                    board[slot] &= ~_row_of(bit) | bit
                    dirty |= 1 << slot
                    break
    return dirty


@njit(nogil=True, cache=True)
def _columns_and_stacks(board: np.ndarray, changed: int) -> int:
    """Per digit, the column view: locked candidates along columns and hidden singles in columns.

    In each stack, the digit's (band, column) triads must form a permutation, as the row-box
    triads must in a band; triads in no permutation leave. Then a digit with one cell left in a
    column is placed. Returns dirty slots, -1 on a contradiction."""
    dirty = 0
    for digit in range(9):
        slot = 3 * digit
        if (changed >> slot) & 7 == 0:
            continue
        top = board[slot]
        middle = board[slot + 1]
        bottom = board[slot + 2]
        columns_top = (top | (top >> 9) | (top >> 18)) & ROW_MASK
        columns_middle = (middle | (middle >> 9) | (middle >> 18)) & ROW_MASK
        columns_bottom = (bottom | (bottom >> 9) | (bottom >> 18)) & ROW_MASK
        allow_top = 0
        allow_middle = 0
        allow_bottom = 0
        for shift in (0, 3, 6):
            kept = TRIADS_KEPT[
                ((columns_top >> shift) & 7)
                | (((columns_middle >> shift) & 7) << 3)
                | (((columns_bottom >> shift) & 7) << 6)
            ]
            if kept == 0:
                return -1
            allow_top |= (kept & 7) << shift
            allow_middle |= ((kept >> 3) & 7) << shift
            allow_bottom |= ((kept >> 6) & 7) << shift
        top &= allow_top * COLUMNS_TO_BAND
        middle &= allow_middle * COLUMNS_TO_BAND
        bottom &= allow_bottom * COLUMNS_TO_BAND
        once = 0
        twice = 0
        for cells in (top, middle, bottom):
            for shift in (0, 9, 18):
                row = (cells >> shift) & ROW_MASK
                twice |= once & row
                once |= row
        lone = (once & ~twice) * COLUMNS_TO_BAND
        for band, cells in ((0, top), (1, middle), (2, bottom)):
            hits = cells & lone & board[UNSOLVED + band]
            while hits:
                bit = hits & -hits
                hits ^= bit
                cells &= ~_row_of(bit) | bit
            if cells != board[slot + band]:
                board[slot + band] = cells
                dirty |= 1 << (slot + band)
    return dirty


@njit(nogil=True, cache=True)
def _triad_pattern(cells: int) -> int:
    """The 9-bit set of row-box triads of a band that hold at least one of `cells`."""
    return (
        ROW_TRIADS[cells & ROW_MASK]
        | (ROW_TRIADS[(cells >> 9) & ROW_MASK] << 3)
        | (ROW_TRIADS[cells >> 18] << 6)
    )


CONTRADICTION = 0
COMPLETE = 1
STUCK = 2


@njit(nogil=True, cache=True)
def _propagate(board: np.ndarray, dirty: int) -> int:
    """Propagate to a fixed point: CONTRADICTION, COMPLETE (every cell placed) or STUCK."""
    changed = 0  # slots changed since the column view last looked
    while True:
        updated = _update_bands(board, dirty)
        if updated < 0:
            return CONTRADICTION
        changed |= updated
        if board[UNSOLVED] | board[UNSOLVED + 1] | board[UNSOLVED + 2] == 0:
            return COMPLETE
        dirty = _naked_singles(board)
        if dirty < 0:
            return CONTRADICTION
        if dirty:
            continue
        dirty = _columns_and_stacks(board, changed)
        changed = 0
        if dirty < 0:
            return CONTRADICTION
        if dirty == 0:
            return STUCK


@njit(nogil=True, cache=True)
def _choose_cell(board: np.ndarray) -> tuple[int, int, int]:
    """Branching cell: among the cells with two candidates, the one with the most unsolved
    peers (its guess settles most); a cell with the fewest candidates when none has two.

    Returns (band, bit, candidate digits as a 9-bit mask)."""
    best_band = -1
    best_bit = 0
    best_count = 10
    best_score = -1
    for band in range(3):
        unsolved = board[UNSOLVED + band]
        if unsolved == 0:
            continue
        once = 0
        twice = 0
        thrice = 0
        for digit in range(9):
            cells = board[3 * digit + band]
            thrice |= twice & cells
            twice |= once & cells
            once |= cells
        pairs = twice & ~thrice & unsolved
        while pairs:
            position = lowest_bit_index(pairs)
            pairs &= pairs - 1
            column = COLUMN_CELLS[position]
            score = (
                popcount(unsolved & PEER_CELLS[position])
                + popcount(board[UNSOLVED] & column)
                + popcount(board[UNSOLVED + 1] & column)
                + popcount(board[UNSOLVED + 2] & column)
            )
            if best_count > 2 or score > best_score:
                best_band, best_bit, best_count, best_score = band, 1 << position, 2, score
        if best_count > 3:
            rest = unsolved
            while rest:
                bit = rest & -rest
                rest ^= bit
                count = 0
                for digit in range(9):
                    if board[3 * digit + band] & bit:
                        count += 1
                if count < best_count:
                    best_band, best_bit, best_count = band, bit, count
    candidates = 0
    for digit in range(9):
        if board[3 * digit + best_band] & best_bit:
            candidates |= 1 << digit
    return best_band, best_bit, candidates


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
def _load_givens(givens: np.ndarray, board: np.ndarray) -> None:
    """The board of a puzzle: each given fills its cell (the cell leaves the other digits) and
    is its digit's only place in its row; every other cell holds every digit. The band
    updates of the first propagation take it from there."""
    for slot in range(27):
        board[slot] = 0
    for band in range(3):
        taken = 0
        base = 27 * band
        for position in range(27):
            digit = givens[base + position]
            if digit:
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


@njit(nogil=True, cache=True)
def _solve_one(
    givens: np.ndarray,
    max_solutions: int,
    max_nodes: int,
    board: np.ndarray,
    frames: np.ndarray,
    frame_info: np.ndarray,
    solution: np.ndarray,
    second: np.ndarray,
) -> tuple[int, int, int, int]:
    """Search one puzzle; returns (verdict, nodes, guesses, branch points), fills `solution` with the first
    solution found and `second` with the second one, when found."""
    _load_givens(givens, board)
    state = _propagate(board, (1 << 27) - 1)
    nodes = 1
    guesses = 0
    branches = 0
    found = 0
    depth = 0
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
            band, bit, candidates = _choose_cell(board)
            frames[depth, :] = board
            frame_info[depth, 0] = band
            frame_info[depth, 1] = bit
            frame_info[depth, 2] = candidates
            depth += 1
            branches += 1
        if depth == 0:
            break
        if max_nodes > 0 and nodes >= max_nodes:
            return LIMIT, nodes, guesses, branches
        top = depth - 1
        candidates = frame_info[top, 2]
        digit = lowest_bit_index(candidates)
        candidates &= candidates - 1
        board[:] = frames[top, :]
        band = frame_info[top, 0]
        bit = frame_info[top, 1]
        if candidates == 0:
            depth -= 1
        else:
            frame_info[top, 2] = candidates
        nodes += 1
        guesses += 1
        state = _propagate(board, _place(board, digit, band, bit))
    if found == 0:
        return UNSOLVABLE, nodes, guesses, branches
    if found == 1:
        return SOLVED, nodes, guesses, branches
    return MULTIPLE, nodes, guesses, branches


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
    """Solve every row of `grids` not marked in `skip` (see `pipeline.solver` for the contract)."""
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
    frames = np.zeros((MAX_DEPTH, BOARD_SLOTS), dtype=np.int64)
    frame_info = np.zeros((MAX_DEPTH, 3), dtype=np.int64)
    clock = np.zeros(2, dtype=np.int64)
    for i in range(grids.shape[0]):
        if skip[i]:
            continue
        second = seconds[i * keep_seconds]
        start = now_ns(clock)
        verdict, n, g, b = _solve_one(
            grids[i], max_solutions, max_nodes, board, frames, frame_info, solutions[i], second
        )
        solve_ns[i] = now_ns(clock) - start
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
    """`(n,) int64`: the cells each puzzle's search branched on (tdoku counts a guess per
    branch point; our `guesses` count every candidate tried there). For benchmarks."""
    grids = np.ascontiguousarray(grids, dtype=np.uint8).reshape(-1, 81)
    out = np.zeros(grids.shape[0], dtype=np.int64)
    _branch_points_kernel(grids, max_solutions, out)
    return out
