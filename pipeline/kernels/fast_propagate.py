"""Propagation of the `fast` strategy on its band-wise bitboard (see `pipeline.kernels.fast`).

`propagate` applies the rules below, cheapest first, until none changes the board:

1. **Band update** of each (digit, band) that changed: its row-box triads must form a
   configuration (a permutation); triads in none leave (locked candidates along rows, pointing
   and claiming). A row left with one cell places the digit there (hidden single in a row, and
   in a box, which leaves one triad): the cell leaves the other digits, its column leaves the
   digit's other bands.
2. **Naked singles**: cells with one candidate left.
3. **Column view** of the digits that changed: per stack, the (band, column) triads must form a
   configuration too (locked candidates along columns); a digit with one cell left in a column
   is placed there (hidden single in a column).
4. **Triads**, across digits, when 1-3 are stuck (`fast_triads`), which also choose the
   branch when nothing changes.

The rules are inlined into `propagate` (numba passes an array to a function it calls as seven
arguments, and checks a status after every call): +2% (17-clue) to +9% (serg, the hardest
sets) against calls, for 1.8 s more of compiling. `propagate` itself stays a call (inlined
into the search loop as well, every set was 2-3% slower).
"""

import numpy as np

from pipeline.compiled import inline_part, kernel_part
from pipeline.kernels.bits import clear_eight, lowest_bit_index
from pipeline.kernels.fast_board import (
    BOARD_SLOTS,
    COMPLETE,
    CONTRADICTION,
    DIGIT_SLOTS,
    FIELD,
    KEPT_CELLS,
    STUCK,
    TRIADS_KEPT,
    UNSOLVED,
    _columns,
    _gather_columns,
    _spread_columns,
    _triad_pattern,
)
from pipeline.kernels.fast_tables import ALL_CELLS, COLUMNS_TO_BAND, ROW_MASK
from pipeline.kernels.fast_triads import _triads_and_choice

__all__ = ["BOARD_SLOTS", "COMPLETE", "CONTRADICTION", "STUCK", "UNSOLVED", "propagate"]


@inline_part
def _update_bands(board: np.ndarray, dirty: int) -> int:
    """Band updates until no (digit, band) is dirty; returns the slots updated, -1 on a
    contradiction.

    The dirty slots are taken a batch at a time: the loop walks a copy captured before the
    batch starts, so which slot comes next never waits for the update before it (its loads,
    the `pext`, the table); slots an update marks again go to the next batch, or are done
    within this one if still ahead in it. The fixed point is the same, and so are the nodes.
    Both updates (this and `fast_light`'s) so, against one slot at a time (ours against
    tdoku in the same run, two runs each, Zen 4): Kaggle rows +4%, 17-clue +3%, top1465 +4%,
    forum_hardest_1905_11+ +6%, forum_hardest_1106 +8%, serg +9% (docs/BENCHMARKS.md). As
    fastdoku's jcz engine does ("processed in captured batches")."""
    updated = 0
    while dirty:
        batch = dirty  # captured: the loop's next slot never waits for this one's update
        dirty = 0
        while batch:
            slot = lowest_bit_index(batch)
            batch &= batch - 1
            bit = 1 << slot
            dirty &= ~bit  # (an update earlier in the batch may have marked it again)
            updated |= bit
            cells = board[slot]
            kept_cells = KEPT_CELLS[_triad_pattern(cells)]
            if kept_cells == 0:
                return -1
            cells &= kept_cells  # (the kept triads sit above the band's 27 bits)
            kept = kept_cells >> 32
            band = slot // 9
            digit = slot - 9 * band
            shift = 9 * band
            board[FIELD + digit] = (board[FIELD + digit] & ~(511 << shift)) | (kept << shift)
            singles = 0  # (a copy in `fast_light._light_update`: why, there)
            row = cells & ROW_MASK
            if row & (row - 1) == 0:
                singles |= row
            row = cells & (ROW_MASK << 9)
            if row & (row - 1) == 0:
                singles |= row
            row = cells & (ROW_MASK << 18)
            if row & (row - 1) == 0:
                singles |= row
            placed = singles & board[UNSOLVED + band]
            if placed == 0:
                board[slot] = cells
                continue
            board[UNSOLVED + band] &= ~placed
            # The band's nine digits are nine neighbouring slots: one vector operation for
            # eight, then the ninth. (A loop with `if board[s] & placed:`, a coin toss for the
            # branch predictor, made the hard sets 20% slower; the same loop without branches,
            # 2-4% slower than the vector on the hard sets, 10% on Kaggle rows.)
            first = 9 * band
            lost = clear_eight(board, first, placed)
            c = board[first + 8]
            n = c & ~placed
            board[first + 8] = n
            lost |= int(c != n) << 8
            dirty |= lost << first
            board[slot] = cells
            dirty &= ~bit
            column_cells = _columns(placed) * COLUMNS_TO_BAND
            for other_band in range(3):
                if other_band != band:
                    s = 9 * other_band + digit
                    c = board[s]
                    n = c & ~column_cells
                    board[s] = n
                    dirty |= int(c != n) << s
    return updated


@inline_part
def _naked_singles(board: np.ndarray, updated: int) -> int:
    """Place every naked single of the bands with a slot in `updated` (a cell's candidates
    are its band's slots: the other bands' cells did not change); returns dirty slots, -1 on
    a cell without candidates."""
    dirty = 0
    for band in range(3):
        unsolved = board[UNSOLVED + band]
        if unsolved == 0 or (updated >> (9 * band)) & 511 == 0:
            continue
        once = 0
        twice = 0
        bit0 = 0  # bits of the digit holding each cell (read only where one digit does)
        bit1 = 0
        bit2 = 0
        bit3 = 0
        for digit in range(9):
            cells = board[9 * band + digit]
            twice |= once & cells
            once |= cells
            bit0 |= cells if digit & 1 else 0
            bit1 |= cells if digit & 2 else 0
            bit2 |= cells if digit & 4 else 0
            bit3 |= cells if digit & 8 else 0
        if unsolved & ~once:
            return -1
        singles = unsolved & once & ~twice
        while singles:
            position = lowest_bit_index(singles)
            singles &= singles - 1
            digit = (
                ((bit0 >> position) & 1)
                | (((bit1 >> position) & 1) << 1)
                | (((bit2 >> position) & 1) << 2)
                | (((bit3 >> position) & 1) << 3)
            )
            slot = 9 * band + digit
            board[slot] &= ~(ROW_MASK << (9 * (position // 9))) | (1 << position)
            dirty |= 1 << slot
    return dirty


@inline_part
def _columns_and_stacks(board: np.ndarray, changed: int) -> int:
    """Per digit that changed, the column view: locked candidates along columns and hidden
    singles in columns. Returns dirty slots, -1 on a contradiction."""
    dirty = 0
    for digit in range(9):
        if changed & (DIGIT_SLOTS << digit) == 0:
            continue
        top = board[digit]
        middle = board[9 + digit]
        bottom = board[18 + digit]
        stacks = (
            _spread_columns(_columns(top))
            | (_spread_columns(_columns(middle)) << 3)
            | (_spread_columns(_columns(bottom)) << 6)
        )
        kept0 = TRIADS_KEPT[stacks & 511] & 511
        kept1 = TRIADS_KEPT[(stacks >> 9) & 511] & 511
        kept2 = TRIADS_KEPT[(stacks >> 18) & 511] & 511
        if kept0 == 0 or kept1 == 0 or kept2 == 0:
            return -1
        kept = kept0 | (kept1 << 9) | (kept2 << 18)
        board[FIELD + digit] = (board[FIELD + digit] & ALL_CELLS) | (kept << 27)
        if kept != stacks:
            top &= _gather_columns(kept, 0) * COLUMNS_TO_BAND
            middle &= _gather_columns(kept, 1) * COLUMNS_TO_BAND
            bottom &= _gather_columns(kept, 2) * COLUMNS_TO_BAND
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
                position = lowest_bit_index(hits)
                hits &= hits - 1
                cells &= ~(ROW_MASK << (9 * (position // 9))) | (1 << position)
            slot = 9 * band + digit
            dirty |= int(cells != board[slot]) << slot
            board[slot] = cells
    return dirty


@kernel_part
def propagate(board: np.ndarray, dirty: int, fields: np.ndarray, choice: np.ndarray) -> int:
    """Propagate to a fixed point: CONTRADICTION, COMPLETE (every cell placed) or STUCK (then
    `choice` holds the branch, see `_triads_and_choice`). `dirty`: the slots changed since the
    board was last at a fixed point; `fields`: scratch, 9 int64."""
    changed = 0  # slots changed since the column view last looked
    while True:
        updated = _update_bands(board, dirty)
        if updated < 0:
            return CONTRADICTION
        changed |= updated
        if board[UNSOLVED] | board[UNSOLVED + 1] | board[UNSOLVED + 2] == 0:
            return COMPLETE
        dirty = _naked_singles(board, updated)
        if dirty < 0:
            return CONTRADICTION
        if dirty:
            continue
        dirty = _columns_and_stacks(board, changed)
        changed = 0
        if dirty < 0:
            return CONTRADICTION
        if dirty:
            continue
        dirty = _triads_and_choice(board, fields, choice)
        if dirty < 0:
            return CONTRADICTION
        if dirty == 0:
            return STUCK
