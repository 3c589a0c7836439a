"""The `fast` strategy's light search, for puzzles that propagation leaves nearly solved: cheaper
propagation on the same board, and branching on a bivalue cell (as JCZSolve and fastdoku's jcz
engine do; the code is our own).

Light propagation, until nothing changes:

1. **Band update** of each (digit, band) that changed, as in `fast_propagate` (its rule 1),
   plus *pointing to the neighbour bands*: a box whose cells for the digit lie in one column
   puts the digit in that column, so the other two bands lose that column (one table load,
   two masks, no loop).
2. **Naked singles**, as in `fast_propagate` (its rule 2).

No column view, no triads rule: the triad patterns (`FIELD` slots) are not kept, and a board
searched light never goes back to the full rules.

Branching: the first bivalue cell (in board order), its first candidate or not (the other
candidate); a board without one branches the same way on the cell with the fewest candidates
among each band's first open cell.

Which puzzles: after the full propagation at the root (`fast_propagate.propagate`, which
solves most easy puzzles without a guess), a puzzle stuck with at most `LIGHT_OPEN` open cells
is searched light; counting beyond 2, so is the part of a full search below a board stuck
with at most `LIGHT_OPEN` open cells once a solution is found (`fast._switch`). Measured per
puzzle on the public sets (best of 5, one core, AMD EPYC, time to count 2 solutions, grouped
by the open cells at the root): light is 0.66-0.87x the full
search's time on serg_benchmark at every count from 30 to 47 (its puzzles all have several
solutions; both searches need the same nodes, light's are cheaper), and 1.01-1.09x on 17-clue
puzzles up to 47 (more nodes: 4.8 against 3.7 at 27-29 open cells); from 48 open cells up
(top1465 and the hardest sets) light loses everywhere (1.1-1.6x: full's tree is smaller by
far). Branching on bivalue cells with the full rules instead gave 26.2 nodes against 18.7 on
top1465 and twice the nodes on the hardest sets: tdoku's branch choice matters there more than
the rules.
"""

import numpy as np

from pipeline.compiled import inline_part, kernel_part
from pipeline.kernels.bits import clear_eight, lowest_bit_index, popcount
from pipeline.kernels.fast_board import (
    COMPLETE,
    CONTRADICTION,
    KEPT_CELLS,
    NEIGHBOURS_KEEP,
    STUCK,
    UNSOLVED,
    _columns,
    _triad_pattern,
)
from pipeline.kernels.fast_calls import call_light, call_propagate
from pipeline.kernels.fast_propagate import _naked_singles
from pipeline.kernels.fast_tables import ALL_CELLS, ROW_MASK

LIGHT_OPEN = 47  # at most this many open cells when the root is stuck: search light


@inline_part
def _light_update(board: np.ndarray, dirty: int) -> int:
    """Band updates with pointing to the neighbour bands until nothing is dirty; returns the
    slots updated, -1 on a contradiction."""
    updated = 0
    while dirty:
        batch = dirty  # captured: the next slot never waits for this one (see fast_propagate)
        dirty = 0
        while batch:
            slot = lowest_bit_index(batch)
            batch &= batch - 1
            bit = 1 << slot
            dirty &= ~bit
            updated |= bit
            cells = board[slot]
            kept_cells = KEPT_CELLS[_triad_pattern(cells)]
            if kept_cells == 0:
                return -1
            cells &= kept_cells  # (the kept triads sit above the band's 27 bits)
            keep = NEIGHBOURS_KEEP[_columns(cells)]
            other = slot + 9 if slot < 18 else slot - 18  # the digit's slots in the other bands
            c = board[other]
            board[other] = c & keep
            dirty |= int(c & keep != c) << other
            other = slot + 18 if slot < 9 else slot - 9
            c = board[other]
            board[other] = c & keep
            dirty |= int(c & keep != c) << other
            # The rows' singles as `fast_propagate._update_bands` finds them, copied: one
            # kernel part for both, called here and there, ran slower (ours / tdoku, two runs
            # each, 2026-12-07: forum_hardest_1106 1.10-1.22 -> 0.99-1.04, serg 1.32 ->
            # 1.08-1.29, Kaggle rows 1.87-1.88 -> 1.59-1.84).
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
            band = slot // 9
            placed = singles & board[UNSOLVED + band]
            if placed == 0:
                board[slot] = cells
                continue
            board[UNSOLVED + band] &= ~placed
            first = 9 * band  # the band's other digits lose the placed cells (see fast_propagate)
            lost = clear_eight(board, first, placed)
            c = board[first + 8]
            board[first + 8] = c & ~placed
            lost |= int(c & placed != 0) << 8
            dirty |= lost << first
            board[slot] = cells  # stored after the vector load of the band, never before it
            dirty &= ~bit
    return updated


@inline_part
def _light_choose(board: np.ndarray, choice: np.ndarray) -> bool:
    """The branch of a stuck board (see the module) in `choice`, as `fast_triads._choose`
    writes it: the digit, the three band masks of the way tried first (the digit in the cell:
    the rest of its row leaves), then those of the other (the digit leaves the cell). False
    when the cell found has no candidate (a contradiction)."""
    best_bit = 0
    best_band = 0
    best_count = 10
    for band in range(3):
        unsolved = board[UNSOLVED + band]
        if unsolved == 0:
            continue
        once = 0
        twice = 0
        thrice = 0
        for digit in range(9):
            cells = board[9 * band + digit]
            thrice |= twice & cells
            twice |= once & cells
            once |= cells
        pairs = twice & ~thrice & unsolved
        if pairs:
            best_bit = pairs & -pairs
            best_band = band
            break
        bit = unsolved & -unsolved
        count = 0
        for digit in range(9):
            count += (board[9 * band + digit] & bit) != 0
        if count < best_count:
            best_count = count
            best_bit = bit
            best_band = band
    digit = 0
    while board[9 * best_band + digit] & best_bit == 0:
        digit += 1
        if digit == 9:
            return False
    position = lowest_bit_index(best_bit)
    choice[0] = digit
    for band in range(3):
        choice[1 + band] = ALL_CELLS
        choice[4 + band] = ALL_CELLS
    choice[1 + best_band] = ALL_CELLS & (~(ROW_MASK << (9 * (position // 9))) | best_bit)
    choice[4 + best_band] = ALL_CELLS & ~best_bit
    return True


@kernel_part
def light_propagate(board: np.ndarray, dirty: int, choice: np.ndarray) -> int:
    """Light propagation to a fixed point: CONTRADICTION, COMPLETE or STUCK (then `choice`
    holds the branch). `dirty`: the slots changed since the board was last at a fixed point."""
    while True:
        updated = _light_update(board, dirty)
        if updated < 0:
            return CONTRADICTION
        if board[UNSOLVED] | board[UNSOLVED + 1] | board[UNSOLVED + 2] == 0:
            return COMPLETE
        dirty = _naked_singles(board, updated)
        if dirty < 0:
            return CONTRADICTION
        if dirty == 0:
            return STUCK if _light_choose(board, choice) else CONTRADICTION


@kernel_part
def choose_light(board: np.ndarray, choice: np.ndarray) -> bool:
    """The light branch of a board stuck in full propagation, in `choice` (see `_light_choose`)."""
    return _light_choose(board, choice)


@inline_part
def open_cells(board: np.ndarray) -> int:
    """The board's cells not placed yet."""
    return popcount(board[UNSOLVED]) + popcount(board[UNSOLVED + 1]) + popcount(board[UNSOLVED + 2])


@inline_part
def search_light(board: np.ndarray, state: int, choice: np.ndarray) -> int:
    """1 when the puzzle whose root board (propagated in full) is `board` in `state` is to be
    searched light (its branch then written to `choice` anew), else 0."""
    if state != STUCK:
        return 0
    if open_cells(board) > LIGHT_OPEN:
        return 0
    return 1 if choose_light(board, choice) else 0


@inline_part
def step(
    board: np.ndarray,
    dirty: int,
    light: int,
    fields: np.ndarray,
    choice: np.ndarray,
    entries: np.ndarray,
) -> int:
    """Propagate a board below the root: light or full (`fast_propagate.propagate`), each
    called at its address in `entries` (`fast_calls.py`)."""
    if light:
        return call_light(entries[1], board, dirty, choice)
    return call_propagate(entries[0], board, dirty, fields, choice)
