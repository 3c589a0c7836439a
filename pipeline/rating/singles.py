"""The first rungs of the ladder: hidden singles, naked singles and locked candidates.

Each technique sweeps the whole board once and applies every instance it finds on the way (each
one is a sound deduction on the board as it stands, so applying them in turn stays sound); it
returns the number of placements or eliminations made, or `CONTRADICTION`.
"""

import numpy as np

from pipeline.compiled import kernel
from pipeline.kernels.units import ALL_DIGITS, UNIT_CELLS
from pipeline.rating.board import CONTRADICTION, LOWEST_DIGIT, POPCOUNT, eliminate, place


@kernel
def hidden_single(values: np.ndarray, candidates: np.ndarray) -> int:
    """Hidden single: a digit that has only one possible cell left in a row, column or box
    goes in that cell.

    Also finds the contradiction of a unit where some digit is neither placed nor possible.
    """
    placed = 0
    for unit in range(27):
        once = 0  # digits possible in at least one cell of the unit
        twice = 0  # ... in at least two
        present = 0  # digits placed in the unit
        for j in range(9):
            cell = UNIT_CELLS[unit, j]
            mask = candidates[cell]
            twice |= once & mask
            once |= mask
            if values[cell] != 0:
                present |= 1 << (values[cell] - 1)
        if once | present != ALL_DIGITS:
            return CONTRADICTION
        only = once & ~twice
        while only != 0:
            bit = only & -only
            only ^= bit
            found = False
            for j in range(9):
                cell = UNIT_CELLS[unit, j]
                if candidates[cell] & bit != 0:
                    place(values, candidates, cell, LOWEST_DIGIT[bit])
                    placed += 1
                    found = True
                    break
            if not found:  # its one cell took another digit that had only that cell too
                return CONTRADICTION
    return placed


@kernel
def naked_single(values: np.ndarray, candidates: np.ndarray) -> int:
    """Naked single: a cell with only one candidate left takes that digit.

    Also finds the contradiction of a blank cell without candidates.
    """
    placed = 0
    for cell in range(81):
        if values[cell] == 0:
            mask = candidates[cell]
            if mask == 0:
                return CONTRADICTION
            if POPCOUNT[mask] == 1:
                place(values, candidates, cell, LOWEST_DIGIT[mask])
                placed += 1
    return placed


def _intersection_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The 54 places where a box meets a row or a column (three cells each), with the six other
    cells of that line and the six other cells of that box."""
    meet = np.zeros((54, 3), dtype=np.int64)
    line_rest = np.zeros((54, 6), dtype=np.int64)
    box_rest = np.zeros((54, 6), dtype=np.int64)
    t = 0
    for line in range(18):  # rows 0-8, then columns 9-17
        line_cells = set(UNIT_CELLS[line].tolist())
        for box in range(18, 27):
            box_cells = set(UNIT_CELLS[box].tolist())
            common = line_cells & box_cells
            if common:
                meet[t] = sorted(common)
                line_rest[t] = sorted(line_cells - common)
                box_rest[t] = sorted(box_cells - common)
                t += 1
    return meet, line_rest, box_rest


MEET_CELLS, LINE_REST, BOX_REST = _intersection_tables()


@kernel
def locked_candidates(values: np.ndarray, candidates: np.ndarray) -> int:
    """Locked candidates, where a box meets a row or column (three cells):

    * pointing: when a digit's possible cells in a box all lie in one row (column), the digit
      must go in that part of the row (column), so it leaves the rest of the row (column);
    * claiming: when a digit's possible cells in a row (column) all lie in one box, it leaves
      the rest of the box.
    """
    removed = 0
    for t in range(54):
        meet = 0
        for cell in MEET_CELLS[t]:
            meet |= candidates[cell]
        if POPCOUNT[meet] == 0:
            continue
        in_line_rest = 0
        in_box_rest = 0
        for j in range(6):
            in_line_rest |= candidates[LINE_REST[t, j]]
            in_box_rest |= candidates[BOX_REST[t, j]]
        pointing = meet & ~in_box_rest & in_line_rest
        if pointing != 0:
            for cell in LINE_REST[t]:
                removed += eliminate(candidates, cell, pointing)
        claiming = meet & ~in_line_rest & in_box_rest
        if claiming != 0:
            for cell in BOX_REST[t]:
                removed += eliminate(candidates, cell, claiming)
    return removed
