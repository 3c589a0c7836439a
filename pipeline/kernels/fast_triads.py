"""Rule 4 of the `fast` strategy's propagation (see `fast_propagate`), and the branch it
chooses: both work on the digits' triad patterns (`FIELD` slots of the board).

**Triads**, across digits, when rules 1-3 are stuck: the three cells of a minirow hold exactly
three digits. A minirow (or, in a stack, a minicolumn) that only three digits can still reach
gets those three: each of them leaves the configurations without it. A minirow that three
digits must reach (in all their configurations) is closed to the others. This is tdoku's
reasoning on triads as variables of their own; it costs a pass over all 54 (digit, band or
stack) triad patterns, and cuts the search tree by a third on the hardest sets (branch points
on forum_hardest_1905_11+: 93 without it, 67 with it).

When nothing changes, the same pass has the triad patterns at hand to choose the branch: tdoku's
rule, the band or stack with the fewest configurations over all digits (among those not all
fixed), then its digit with two configurations (else three, else the fewest).
"""

import numpy as np

from pipeline.compiled import inline_part, kernel_part
from pipeline.kernels.bits import lowest_bit_index
from pipeline.kernels.fast_board import (
    COMPATIBLE,
    CONFIGURATION_COUNT,
    CONFIGURATION_TRIADS,
    CONFIGURATIONS,
    CONFIGURATIONS_UNION,
    FIELD,
    TRIAD_CELLS,
    TRIADS_KEPT,
    _gather_columns,
)
from pipeline.kernels.fast_tables import ALL_CELLS, COLUMNS_TO_BAND

# A band or stack whose nine digits have one configuration each (total 9) is fixed: nothing
# to branch on there; `_choose` takes the least total above it.
ALL_FIXED = 9
FIELDS = 0x3FFFFFFFFFFFFF  # 54 bits: six 9-bit triad patterns of a digit (3 bands, 3 stacks)
GROUP_LOW = 0x9249249249249  # bit 0 of every 3-bit group (a row of a band's triads)
GROUP_MID = GROUP_LOW << 1
GROUP_HIGH = GROUP_LOW << 2


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
