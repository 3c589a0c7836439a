"""Propagation of the `fast` strategy on its band-wise bitboard (see `pipeline.solver.fast`).

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
4. **Triads**, across digits, when 1-3 are stuck: the three cells of a minirow hold exactly
   three digits. A minirow (or, in a stack, a minicolumn) that only three digits can still
   reach gets those three: each of them leaves the configurations without it. A minirow that
   three digits must reach (in all their configurations) is closed to the others. This is
   tdoku's reasoning on triads as variables of their own; it costs a pass over all 54
   (digit, band or stack) triad patterns, and cuts the search tree by a third on the hardest
   sets (branch points on forum_hardest_1905_11+: 93 without it, 67 with it).

When nothing changes, the same pass has the triad patterns at hand to choose the branch: tdoku's
rule, the band or stack with the fewest configurations over all digits (among those not all
fixed), then its digit with two configurations (else three, else the fewest).

The rules are inlined into `propagate` (numba passes an array to a function it calls as seven
arguments, and checks a status after every call): +2% (17-clue) to +9% (serg, the hardest
sets) against calls, for 1.8 s more of compiling. `propagate` itself stays a call (inlined
into the search loop as well, every set was 2-3% slower).
"""

import numpy as np

from pipeline.compiled import inline_part, kernel_part
from pipeline.solver.bits import clear_eight, lowest_bit_index
from pipeline.solver.fast_tables import (
    ALL_CELLS,
    COLUMNS_TO_BAND,
    ROW_MASK,
    build,
)

_T = build()
ROW_TRIADS = _T["ROW_TRIADS"]
TRIAD_CELLS = _T["TRIAD_CELLS"]
TRIADS_KEPT = _T["TRIADS_KEPT"]
KEPT_CELLS = _T["KEPT_CELLS"]
CONFIGURATIONS = _T["CONFIGURATIONS"]
CONFIGURATION_COUNT = _T["CONFIGURATION_COUNT"]
CONFIGURATION_TRIADS = _T["CONFIGURATION_TRIADS"]
CONFIGURATIONS_UNION = _T["CONFIGURATIONS_UNION"]
COMPATIBLE = _T["COMPATIBLE"]
ROW_CELLS = _T["ROW_CELLS"]
BOX_CELLS = _T["BOX_CELLS"]

UNSOLVED = 27  # slots 27..29 of the board hold each band's unsolved cells
DIGIT_SLOTS = 1 | (1 << 9) | (1 << 18)  # the slots of digit 0 (shift left by the digit)
FIELD = 30  # slots 30..38: each digit's triad patterns (see `_triads_and_choice`), kept current
BOARD_SLOTS = 39
CONTRADICTION = 0
COMPLETE = 1
STUCK = 2

# A band or stack whose nine digits have one configuration each (total 9) is fixed: nothing
# to branch on there; `_choose` takes the least total above it.
ALL_FIXED = 9
FIELDS = 0x3FFFFFFFFFFFFF  # 54 bits: six 9-bit triad patterns of a digit (3 bands, 3 stacks)
GROUP_LOW = 0x9249249249249  # bit 0 of every 3-bit group (a row of a band's triads)
GROUP_MID = GROUP_LOW << 1
GROUP_HIGH = GROUP_LOW << 2


@kernel_part
def _triad_pattern(cells: int) -> int:
    """The 9-bit set of row-box triads of a band that hold at least one of `cells`."""
    return (
        ROW_TRIADS[cells & ROW_MASK]
        | (ROW_TRIADS[(cells >> 9) & ROW_MASK] << 3)
        | (ROW_TRIADS[(cells >> 18) & ROW_MASK] << 6)
    ) & 511  # (the masks spare numba's checks for negative indices)


@kernel_part
def _columns(cells: int) -> int:
    """The 9-bit set of columns holding at least one of the band `cells`."""
    return (cells | (cells >> 9) | (cells >> 18)) & ROW_MASK


@inline_part
def _update_bands(board: np.ndarray, dirty: int) -> int:
    """Band updates until no (digit, band) is dirty; returns the slots updated, -1 on a
    contradiction."""
    updated = 0
    while dirty:
        slot = lowest_bit_index(dirty)
        dirty &= dirty - 1
        updated |= 1 << slot
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
        placed = singles & board[UNSOLVED + band]
        if placed == 0:
            board[slot] = cells
            continue
        board[UNSOLVED + band] &= ~placed
        # The band's nine digits are nine neighbouring slots: one vector operation for eight,
        # then the ninth. (A loop with `if board[s] & placed:`, a coin toss for the branch
        # predictor, made the hard sets 20% slower; the same loop without branches, 2-4% slower
        # than the vector on the hard sets, 10% on Kaggle rows.)
        first = 9 * band
        lost = clear_eight(board, first, placed)
        c = board[first + 8]
        n = c & ~placed
        board[first + 8] = n
        lost |= int(c != n) << 8
        dirty |= lost << first
        board[slot] = cells
        dirty &= ~(1 << slot)
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
def _spread_columns(columns: int) -> int:
    """A 9-bit column set with each stack's three columns moved to bits 9 * stack."""
    return (columns & 7) | ((columns & 0x38) << 6) | ((columns & 0x1C0) << 12)


@kernel_part
def _gather_columns(fields: int, band: int) -> int:
    """Inverse of `_spread_columns` for one band of the three stack patterns in `fields`."""
    x = fields >> (3 * band)
    return (x & 7) | ((x >> 6) & 0x38) | ((x >> 12) & 0x1C0)


@kernel_part
def _keep(fields: int, allowed: int, which: int) -> int:
    """The 9-bit patterns of `fields` that `which` touches restricted to `allowed` (same
    layout), then to the triads of their remaining configurations; 0 if one has none left."""
    while which:
        shift = 9 * (lowest_bit_index(which) // 9)
        which &= ~(511 << shift)
        pattern = TRIADS_KEPT[(fields >> shift) & (allowed >> shift) & 511] & 511
        if pattern == 0:
            return 0
        fields = (fields & ~(511 << shift)) | (pattern << shift)
    return fields


@kernel_part
def _forced(fields: int) -> int:
    """Triads alone in their group of three (a band's row, a stack's band): in a configuration-
    consistent pattern, the triads every configuration holds."""
    others = (
        (((fields >> 1) | (fields >> 2)) & GROUP_LOW)
        | (((fields << 1) | (fields >> 1)) & GROUP_MID)
        | (((fields << 1) | (fields << 2)) & GROUP_HIGH)
    )
    return fields & ~others


@inline_part
def _triads_and_choice(board: np.ndarray, fields: np.ndarray, choice: np.ndarray) -> int:
    """Rule 4 on every band and stack; returns the dirty slots, -1 on a contradiction, or 0
    when nothing changed, with the branch written to `choice`: digit, then the three band
    masks of the branch taken first, then those of the other branch."""
    # How many digits can reach each triad, counted bit-sliced over all 54 triads at once and
    # saturating at four: bit t of `reach_n` says that at least n digits can reach triad t.
    reach_1 = 0
    reach_2 = 0
    reach_3 = 0
    reach_4 = 0
    for digit in range(9):
        x = board[FIELD + digit]
        fields[digit] = x
        reach_4 |= reach_3 & x
        reach_3 |= reach_2 & x
        reach_2 |= reach_1 & x
        reach_1 |= x
    if reach_3 != FIELDS:
        return -1  # a minirow or minicolumn that fewer than three digits can reach
    changed = 0
    exact = reach_3 & ~reach_4  # triads exactly three digits can reach: those three fill them
    if exact:
        for digit in range(9):
            x = fields[digit]
            reach = x & exact & ~_forced(x)  # a forced triad is in every configuration already
            if reach:
                allowed = 0
                which = reach
                while which:
                    shift = 9 * (lowest_bit_index(which) // 9)
                    which &= ~(511 << shift)
                    allowed |= COMPATIBLE[(reach >> shift) & 511] << shift
                y = _keep(x, allowed, reach)
                if y == 0:
                    return -1
                if y != x:
                    fields[digit] = y
                    changed |= 1 << digit
    # The same bit-sliced count of the digits that must stand in each triad (forced in every
    # configuration left): a triad three digits must fill is closed to the others.
    forced_1 = 0
    forced_2 = 0
    forced_3 = 0
    for digit in range(9):
        x = _forced(fields[digit])
        if forced_3 & x:
            return -1  # four digits that must all stand in one minirow
        forced_3 |= forced_2 & x
        forced_2 |= forced_1 & x
        forced_1 |= x
    if forced_3:
        for digit in range(9):
            x = fields[digit]
            drop = forced_3 & x & ~_forced(x)
            if drop:
                y = _keep(x, ~drop, drop)
                if y == 0:
                    return -1
                fields[digit] = y
                changed |= 1 << digit
    if changed:
        dirty = 0
        while changed:
            digit = lowest_bit_index(changed)
            changed &= changed - 1
            x = fields[digit]
            for band in range(3):
                slot = 9 * band + digit
                allowed = TRIAD_CELLS[(x >> (9 * band)) & 511]
                allowed &= _gather_columns(x >> 27, band) * COLUMNS_TO_BAND
                cells = board[slot] & allowed
                if cells != board[slot]:
                    board[slot] = cells
                    dirty |= 1 << slot
        if dirty:
            return dirty
    _choose(fields, choice)
    return 0


@inline_part
def _choose(fields: np.ndarray, choice: np.ndarray) -> None:
    """tdoku's branching rule on the digits' triad patterns (see the module docstring)."""
    best_total = 1 << 30
    best = 0
    for f in range(6):
        total = 0
        for digit in range(9):
            total += CONFIGURATION_COUNT[(fields[digit] >> (9 * f)) & 511]
        if ALL_FIXED < total < best_total:
            best_total = total
            best = f
    best_digit = 0
    best_count = 1 << 30
    for digit in range(9):
        count = CONFIGURATION_COUNT[(fields[digit] >> (9 * best)) & 511]
        if 2 <= count < best_count:
            best_count = count
            best_digit = digit
            if count == 2:
                break
    # The branch: the digit in one triad of its first configuration, or not. With two or three
    # configurations the first has a triad the others lack, and the split is tdoku's (this
    # configuration, or the others); with more, triad masks cannot say "not this
    # configuration" (three others can cover its triads), and the split is on the triad.
    configurations = CONFIGURATIONS[(fields[best_digit] >> (9 * best)) & 511]
    first = configurations & -configurations
    triads = CONFIGURATION_TRIADS[lowest_bit_index(first)]
    alone = triads & ~CONFIGURATIONS_UNION[configurations ^ first]
    if alone:
        triads = alone
    triad = triads & -triads
    taken = COMPATIBLE[triad]
    other = 511 & ~triad
    choice[0] = best_digit
    if best < 3:
        for band in range(3):
            choice[1 + band] = ALL_CELLS
            choice[4 + band] = ALL_CELLS
        choice[1 + best] = TRIAD_CELLS[taken]
        choice[4 + best] = TRIAD_CELLS[other]
    else:
        shift = 9 * (best - 3)
        outside = ALL_CELLS & ~(_gather_columns(511 << shift, 0) * COLUMNS_TO_BAND)
        for band in range(3):
            choice[1 + band] = outside | (_gather_columns(taken << shift, band) * COLUMNS_TO_BAND)
            choice[4 + band] = outside | (_gather_columns(other << shift, band) * COLUMNS_TO_BAND)


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
