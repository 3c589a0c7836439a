"""Basic fish: X-wing (size 2), swordfish (3), jellyfish (4), one digit at a time.

For one digit, "base" lines are rows (or columns) in which the digit has 2..size possible
cells; when `size` base lines have all their possible cells inside only `size` "cover" lines
of the other direction, each cover line's copy of the digit must be one of the base lines'
copies, so the digit leaves every other cell of the cover lines.
"""

import numpy as np

from pipeline.compiled import kernel
from pipeline.rating.board import POPCOUNT, eliminate, next_combination, small_sets, union_of_chosen


@kernel
def _fish_on_lines(
    candidates: np.ndarray,
    spots: np.ndarray,
    bit: int,
    size: int,
    rows_are_base: bool,
    lines: np.ndarray,
    chosen: np.ndarray,
) -> int:
    """Fish of one digit with rows as base lines (`rows_are_base`) or columns; `spots[line]` is
    the 9-bit set of positions along the line where the digit is possible. `lines` (9,) and
    `chosen` (4,) are scratch space."""
    removed = 0
    count = small_sets(spots, size, lines, chosen)
    if count < size:
        return 0
    while True:
        cover, base = union_of_chosen(spots, lines, chosen, size)
        if POPCOUNT[cover] == size:
            for across in range(9):
                if cover >> across & 1:
                    for along in range(9):
                        if base >> along & 1 == 0:
                            cell = 9 * along + across if rows_are_base else 9 * across + along
                            removed += eliminate(candidates, cell, bit)
        if not next_combination(chosen, size, count):
            break
    return removed


@kernel
def fish(values: np.ndarray, candidates: np.ndarray, size: int) -> int:
    """X-wing (2) / swordfish (3) / jellyfish (4): when a digit's possible cells in `size` rows
    all lie in the same `size` columns, the digit leaves the rest of those columns; the same
    with rows and columns swapped."""
    removed = 0
    in_rows = np.empty(9, dtype=np.int64)
    in_columns = np.empty(9, dtype=np.int64)
    # scratch for _fish_on_lines, made once here rather than 18 times in it: a swordfish sweep
    # on a stalled forum-hardest board 2.75 -> 2.2 us (measured, one core, best of 7)
    lines = np.empty(9, dtype=np.int64)
    chosen = np.empty(4, dtype=np.int64)
    for d in range(9):
        bit = 1 << d
        for line in range(9):
            in_rows[line] = 0
            in_columns[line] = 0
        for cell in range(81):
            if candidates[cell] & bit:
                row, column = cell // 9, cell % 9
                in_rows[row] |= 1 << column
                in_columns[column] |= 1 << row
        # the column spots read here may be stale after the row pass: only ever too many
        removed += _fish_on_lines(candidates, in_rows, bit, size, True, lines, chosen)
        removed += _fish_on_lines(candidates, in_columns, bit, size, False, lines, chosen)
    return removed
