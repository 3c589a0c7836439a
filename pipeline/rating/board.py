"""The board the logic techniques work on: a candidate mask per cell, and the tables they share.

A board is two `(81,)` arrays, row-major cells as everywhere in the project:

* `values` (`uint8`): the digit placed in each cell (a given or a deduction), 0 for a blank cell;
* `candidates` (`int32`): for each blank cell the digits still possible there, bit `d - 1` for
  digit `d` (a 9-bit mask); 0 for a cell that holds a digit.

Placing a digit removes it from the candidates of the cell's 20 peers at once, so a candidate
bit always means "no peer holds this digit". That elimination is the bookkeeping of the
placement, not a technique of its own, and is not counted as a step.

A technique is a function `(values, candidates) -> int`: the number of placements or
eliminations it made in one sweep over the board (0 = no progress), or `CONTRADICTION` (-1)
when the board shows that the puzzle has no solution (a blank cell without candidates, a digit
with no place left in a unit, two placements that clash). Every technique is sound: it only
removes candidates that no solution of the puzzle uses, so it never needs uniqueness.
"""

import numpy as np

from pipeline.compiled import kernel
from pipeline.kernels.units import ALL_DIGITS, IS_PEER, PEERS

CONTRADICTION = -1
POPCOUNT = np.array([bin(m).count("1") for m in range(512)], dtype=np.int64)  # 9-bit masks
LOWEST_DIGIT = np.array([(m & -m).bit_length() for m in range(512)], dtype=np.int64)  # 0 for 0


@kernel
def place(values: np.ndarray, candidates: np.ndarray, cell: int, digit: int) -> bool:
    """Put `digit` in `cell` and remove it from the peers' candidates; False (and no change)
    when the digit is not a candidate there any more (the deductions clash)."""
    bit = 1 << (digit - 1)
    if candidates[cell] & bit == 0:
        return False
    values[cell] = digit
    candidates[cell] = 0
    for peer in PEERS[cell]:
        candidates[peer] &= ~bit
    return True


@kernel
def eliminate(candidates: np.ndarray, cell: int, digits: int) -> int:
    """Remove the `digits` mask from a cell's candidates; the number of candidates removed."""
    removed = candidates[cell] & digits
    candidates[cell] &= ~digits
    return POPCOUNT[removed]


@kernel
def eliminate_from_common_peers(candidates: np.ndarray, a: int, b: int, digits: int) -> int:
    """Remove the `digits` mask from every cell other than `a` and `b` that sees both (the
    cells that lose a digit one of two cells must hold); the number of candidates removed."""
    removed = 0
    for cell in PEERS[a]:
        if cell != b and IS_PEER[b, cell]:
            removed += eliminate(candidates, cell, digits)
    return removed


@kernel
def start_board(grid: np.ndarray, values: np.ndarray, candidates: np.ndarray) -> bool:
    """Fill `values` and `candidates` from a grid's givens; False when two givens clash."""
    for cell in range(81):
        values[cell] = 0
        candidates[cell] = ALL_DIGITS
    for cell in range(81):
        if grid[cell] != 0 and not place(values, candidates, cell, grid[cell]):
            return False
    return True


@kernel
def start_board_from_candidates(
    pencilmarks: np.ndarray, values: np.ndarray, candidates: np.ndarray
) -> bool:
    """Fill `values` and `candidates` from a pencilmark puzzle (`(81,)` bit sets, see
    `pipeline.kernels.candidates`): each cell with one candidate is placed like a given, the
    other cells keep only their own candidates. False when placed cells clash or a value has
    bits above the ninth (a cell with no candidate is left to the ladder: a contradiction)."""
    for cell in range(81):
        values[cell] = 0
        candidates[cell] = ALL_DIGITS
    for cell in range(81):
        c = np.int64(pencilmarks[cell])
        if c > ALL_DIGITS:
            return False
        if c != 0 and c & (c - 1) == 0 and not place(values, candidates, cell, LOWEST_DIGIT[c]):
            return False
    for cell in range(81):
        if values[cell] == 0:
            candidates[cell] &= pencilmarks[cell]
    return True


@kernel
def blank_cells(values: np.ndarray) -> int:
    """Number of cells still without a digit."""
    count = 0
    for cell in range(81):
        if values[cell] == 0:
            count += 1
    return count


@kernel
def agrees_with(values: np.ndarray, candidates: np.ndarray, solution: np.ndarray) -> bool:
    """Every placed digit is the solution's and every blank cell keeps the solution's digit."""
    for cell in range(81):
        if values[cell] != 0:
            if values[cell] != solution[cell]:
                return False
        elif candidates[cell] & (1 << (solution[cell] - 1)) == 0:
            return False
    return True


@kernel
def small_sets(sets: np.ndarray, size: int, items: np.ndarray, chosen: np.ndarray) -> int:
    """How many of the nine 9-bit `sets` have 2..size members: their indices into `items`, in
    order (the lines of a fish, the digits of a hidden subset); `chosen[:size]` set to the
    first combination of them (`next_combination` goes on from it)."""
    count = 0
    for item in range(9):
        if 2 <= POPCOUNT[sets[item]] <= size:
            items[count] = item
            count += 1
    for i in range(size):
        chosen[i] = i
    return count


@kernel
def union_of_chosen(
    sets: np.ndarray, items: np.ndarray, chosen: np.ndarray, size: int
) -> tuple[int, int]:
    """`(the union of the sets of the chosen items, the chosen items as a 9-bit set)`: the
    items are `items[chosen[:size]]` (`small_sets`, `next_combination`)."""
    union = 0
    members = 0
    for i in range(size):
        item = items[chosen[i]]
        union |= sets[item]
        members |= 1 << item
    return union, members


@kernel
def next_combination(chosen: np.ndarray, k: int, m: int) -> bool:
    """Advance `chosen[:k]`, ascending indices into range(m), to the next k-combination in
    lexicographic order; False after the last one. Start from `chosen[:k] = 0, 1, ..., k - 1`."""
    i = k - 1
    while i >= 0 and chosen[i] == m - k + i:
        i -= 1
    if i < 0:
        return False
    chosen[i] += 1
    for j in range(i + 1, k):
        chosen[j] = chosen[j - 1] + 1
    return True
