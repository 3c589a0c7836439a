"""The board's 27 units as numbers, shared by the kernels that keep one bitmask per unit.

A *unit* is a row, a column or a box, numbered 0..8 (rows), 9..17 (columns) and 18..26 (boxes,
row-major). `CELL_UNITS[cell]` holds the three units of a cell (0..80, row-major) in that order:
its row, its column, its box. numba freezes this global into the compiled kernels.
"""

import numpy as np

ROW, COLUMN, BOX = 0, 1, 2  # positions in a row of CELL_UNITS
CELL_UNITS = np.array(
    [(cell // 9, 9 + cell % 9, 18 + cell // 27 * 3 + cell % 9 // 3) for cell in range(81)],
    dtype=np.int64,
)
ALL_DIGITS = 0x1FF  # digits 1..9 as bits 0..8
