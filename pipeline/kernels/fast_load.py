"""Loading a puzzle onto the `fast` strategy's board (see `pipeline.kernels.fast` for the board):
givens all at once, with their clash check, or pencilmark candidates."""

import numpy as np

from pipeline.compiled import kernel_part
from pipeline.kernels.bits import lowest_bit_index, popcount, value_masks
from pipeline.kernels.fast_board import (
    BOX_CELLS,
    ROW_CELLS,
    ROW_TRIADS,
    UNSOLVED,
    _columns,
)
from pipeline.kernels.fast_tables import ALL_CELLS, COLUMNS_TO_BAND, ROW_MASK


@kernel_part
def _load_givens(givens: np.ndarray, board: np.ndarray, given: np.ndarray) -> bool:
    """The board of a puzzle, all at once: each given's cell holds its digit alone and is no
    longer unsolved; its row, column and box leave that digit. Propagation takes it from there
    (placing givens one by one through it cost a band update each: Kaggle rows, 35 givens,
    ran 20% slower). False when the givens clash or a value is above 9.

    A digit's givens clash exactly when they fill fewer distinct rows, or boxes, or columns
    than there are of them; the check counts these over all digits at once. `given`: scratch,
    30 int64 (one (value, band) mask each, value 0 for blanks), filled by vector compares
    (`bits.value_masks`: a cell at a time, a load and a store on one word, was 6% slower on
    Kaggle rows)."""
    if value_masks(givens, given):
        return False
    unsolved0 = given[0]
    unsolved1 = given[1]
    unsolved2 = given[2]
    board[UNSOLVED] = unsolved0
    board[UNSOLVED + 1] = unsolved1
    board[UNSOLVED + 2] = unsolved2
    distinct = 0  # rows + boxes + columns filled by each digit's givens, over all digits
    for digit in range(9):
        g0 = given[3 * digit + 3]
        g1 = given[3 * digit + 4]
        g2 = given[3 * digit + 5]
        c0 = _columns(g0)
        c1 = _columns(g1)
        c2 = _columns(g2)
        columns = c0 | c1 | c2
        out = ALL_CELLS & ~(columns * COLUMNS_TO_BAND)
        rows = _rows(g0) | (_rows(g1) << 3) | (_rows(g2) << 6)
        boxes = ROW_TRIADS[c0] | (ROW_TRIADS[c1] << 3) | (ROW_TRIADS[c2] << 6)
        distinct += popcount(rows) + popcount(boxes) + popcount(columns)
        board[digit] = g0 | (unsolved0 & out & ~ROW_CELLS[rows & 7] & ~BOX_CELLS[boxes & 7])
        board[9 + digit] = g1 | (
            unsolved1 & out & ~ROW_CELLS[(rows >> 3) & 7] & ~BOX_CELLS[(boxes >> 3) & 7]
        )
        board[18 + digit] = g2 | (unsolved2 & out & ~ROW_CELLS[rows >> 6] & ~BOX_CELLS[boxes >> 6])
    givens_count = 81 - popcount(unsolved0) - popcount(unsolved1) - popcount(unsolved2)
    return distinct == 3 * givens_count


@kernel_part
def _load_candidates(
    candidates: np.ndarray, board: np.ndarray, given: np.ndarray, placed: np.ndarray
) -> bool:
    """The board of a pencilmark puzzle (bit d-1 of `candidates[cell]`: digit d may stand
    there): a cell with one candidate is placed, as a given would be (and clashes like one);
    then each digit keeps only the cells that allow it (a cell with none leaves propagation a
    contradiction). False when placed cells clash or a value has bits above the ninth.
    `placed`: scratch, 81 uint8."""
    for cell in range(81):
        c = np.int64(candidates[cell])
        if c > 511:
            return False
        placed[cell] = lowest_bit_index(c) + 1 if c != 0 and c & (c - 1) == 0 else 0
    if not _load_givens(placed, board, given):
        return False
    for slot in range(27):
        given[slot] = 0
    for band in range(3):
        base = 27 * band
        for position in range(27):
            c = np.int64(candidates[base + position])
            while c:
                given[9 * band + lowest_bit_index(c)] |= 1 << position
                c &= c - 1
    for slot in range(27):
        board[slot] &= given[slot]
    return True


@kernel_part
def _rows(cells: int) -> int:
    """The 3-bit set of a band's rows holding at least one of `cells`."""
    return (
        (1 if cells & ROW_MASK else 0)
        | (2 if cells & (ROW_MASK << 9) else 0)
        | (4 if cells & (ROW_MASK << 18) else 0)
    )
